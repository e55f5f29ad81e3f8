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

}  // namespace
}  // namespace latte
