#include "ir/kernel.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(KernelTest, KindNamesMainOpThenFusedOps) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  EXPECT_EQ(kernel.Kind(), "conv2d");
  kernel.fused = {OpKind::kAdd, OpKind::kRelu};
  EXPECT_EQ(kernel.Kind(), "conv2d+add+relu");
}

TEST(KernelTest, PartsOfAFusedFullyConnectedAndWhatHasNoParts) {
  Kernel fc;
  fc.op = OpKind::kFullyConnected;
  fc.params = {{"m", 4}, {"k", 64}, {"n", 10}, {"bias", 1}};
  fc.fused = {OpKind::kRelu6};
  auto parts = KernelParts(fc);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].Key(), "fully_connected|bias=1,k=64,m=4,n=10|float32");
  EXPECT_EQ((*parts)[1].Key(), "relu6|c=10,h=1,n=1,w=4|float32");  // a [4, 10] output, viewed as NHWC

  fc.fused.clear();
  auto none = KernelParts(fc);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(none.status().message().find("fuses nothing"), std::string::npos);

  Kernel gather;  // no family: its output cannot be told
  gather.op = OpKind::kGather;
  gather.fused = {OpKind::kRelu};
  auto unknown = KernelParts(gather);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("gather"), std::string::npos) << unknown.status().message();

  Kernel conv;  // a conv without its sizes: says which
  conv.op = OpKind::kConv2D;
  conv.fused = {OpKind::kRelu};
  auto missing = KernelParts(conv);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'ih'"), std::string::npos) << missing.status().message();
}

TEST(KernelTest, KeyIsSortedAndRoundTrips) {
  Kernel kernel;
  kernel.op = OpKind::kDepthwiseConv2D;
  kernel.fused = {OpKind::kRelu6};
  kernel.params = {{"ih", 112}, {"ic", 32}, {"kh", 3}, {"pt", -0}, {"bias", 1}};
  EXPECT_EQ(kernel.Key(), "depthwise_conv2d+relu6|bias=1,ic=32,ih=112,kh=3,pt=0|float32");
  Expected<Kernel> parsed = ParseKernelKey(kernel.Key());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, kernel);
  EXPECT_EQ(parsed->Param("ih"), 112);
  EXPECT_EQ(parsed->Param("absent", -7), -7);
}

TEST(KernelTest, EmptyParamsAndInt8RoundTrip) {
  Kernel kernel;
  kernel.op = OpKind::kFullyConnected;
  kernel.dtype = DataType::kInt8;
  EXPECT_EQ(kernel.Key(), "fully_connected||int8");
  Expected<Kernel> parsed = ParseKernelKey(kernel.Key());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, kernel);
}

TEST(KernelTest, MalformedKeysSayWhatIsWrong) {
  EXPECT_NE(ParseKernelKey("conv2d|ih=1").status().message().find("KIND|PARAMS|DTYPE"), std::string::npos);
  EXPECT_NE(ParseKernelKey("conv9d|ih=1|float32").status().message().find("unknown op 'conv9d'"), std::string::npos);
  EXPECT_NE(ParseKernelKey("conv2d|ih=x|float32").status().message().find("bad parameter 'ih=x'"), std::string::npos);
  EXPECT_NE(ParseKernelKey("conv2d|=3|float32").status().message().find("bad parameter"), std::string::npos);
  EXPECT_NE(ParseKernelKey("conv2d|ih=3|float33").status().message().find("unknown dtype"), std::string::npos);
  EXPECT_FALSE(ParseKernelKey("opaque||float32").ok());
}

TEST(KernelTest, ImplausibleParamsAreNamed) {
  auto check = [](const std::string& key) {
    Expected<Kernel> kernel = ParseKernelKey(key);
    EXPECT_TRUE(kernel.ok()) << key;
    Status status = CheckKernelParams(*kernel);
    return status.ok() ? std::string("ok") : status.message();
  };
  const std::string conv = "bias=0,dh=1,dw=1,g=1,ic=3,ih=8,iw=8,kh=3,kw=3,n=1,oc=8,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1";
  EXPECT_EQ(check("conv2d|" + conv + "|float32"), "ok");  // pads and bias may be 0
  EXPECT_EQ(check("transpose|c=8,h=2,n=1,perm0=0,perm1=2,perm2=3,perm3=1,w=4|float32"), "ok");
  EXPECT_EQ(check("conv2d|elmt_fused=0,g=1,ic=3,ih=6,iw=6,kh=7,kw=7,n=1,oc=8,sh=1,sw=1|float16"), "ok");  // no pads given
  EXPECT_EQ(check("conv2d|bias=0,dh=1,dw=1,g=1,ic=-5,ih=8,iw=8,kh=3,kw=3,n=1,oc=8,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32"),
            "kernel conv2d: ic=-5 is not a plausible value");
  EXPECT_EQ(check("conv2d|bias=0,dh=1,dw=1,g=0,ic=3,ih=8,iw=8,kh=3,kw=3,n=1,oc=8,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32"),
            "kernel conv2d: g=0 is not a plausible value");
  EXPECT_EQ(check("add|a0=1,a1=2147483648,a2=1,a3=1,b0=1,b1=1,b2=1,b3=1|float32"),
            "kernel add: a1=2147483648 is not a plausible value");
  EXPECT_EQ(check("conv2d|bias=0,dh=2,dw=1,g=1,ic=3,ih=8,iw=8,kh=5,kw=3,n=1,oc=8,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32"),
            "kernel conv2d: a kh=5 window does not fit in ih=8 with its pads");  // dilated: reaches 9 rows
}

}  // namespace
}  // namespace latte
