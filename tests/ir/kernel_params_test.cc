#include "ir/kernel_params.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

// Writes `params` into a fresh kernel of `op`, checks its key, and reads the struct back.
template <class T>
void ExpectKeyAndBack(OpKind op, const T& params, const std::string& key) {
  Kernel kernel;
  kernel.op = op;
  WriteParams(params, kernel);
  EXPECT_EQ(kernel.Key(), key);
  EXPECT_EQ(ReadParams<T>(kernel), params) << key;
  Expected<T> checked = ReadCheckedParams<T>(kernel);
  ASSERT_TRUE(checked.ok()) << key << ": " << checked.status().message();
  EXPECT_EQ(*checked, params) << key;
}

// A square conv's params as kernel grouping writes them, pads unset.
ConvKernelParams Conv(std::int64_t ih, std::int64_t iw, std::int64_t ic, std::int64_t oc, std::int64_t k,
                      std::int64_t stride, std::int64_t groups) {
  ConvKernelParams conv;
  conv.ih = ih, conv.iw = iw, conv.ic = ic, conv.oc = oc, conv.g = groups;
  conv.kh = conv.kw = k;
  conv.sh = conv.sw = stride;
  conv.dh = conv.dw = 1;
  conv.bias = 1;
  return conv;
}

Kernel FromKey(const std::string& key) {
  Expected<Kernel> kernel = ParseKernelKey(key);
  EXPECT_TRUE(kernel.ok()) << key;
  return kernel.ok() ? *kernel : Kernel{};
}

TEST(KernelParamsTest, ConvWritesTheKeysKernelGroupingWrites) {
  ConvKernelParams conv = Conv(112, 96, 32, 64, 3, 2, 1);
  conv.pt = conv.pl = 0;
  conv.pb = conv.pr = 1;
  ExpectKeyAndBack(OpKind::kConv2D, conv,
                   "conv2d|bias=1,dh=1,dw=1,g=1,ic=32,ih=112,iw=96,kh=3,kw=3,n=1,oc=64,pb=1,pl=0,pr=1,pt=0,sh=2,sw=2|"
                   "float32");
  ConvKernelParams depthwise = conv;
  depthwise.oc = depthwise.g = 32;
  depthwise.bias = 0;
  ExpectKeyAndBack(OpKind::kDepthwiseConv2D, depthwise,
                   "depthwise_conv2d|bias=0,dh=1,dw=1,g=32,ic=32,ih=112,iw=96,kh=3,kw=3,n=1,oc=32,pb=1,pl=0,pr=1,pt=0,"
                   "sh=2,sw=2|float32");
  ConvKernelParams transpose = Conv(4, 5, 3, 2, 3, 2, 1);
  transpose.pt = transpose.pl = transpose.pb = transpose.pr = 1;
  transpose.oh = 8;
  transpose.ow = 10;
  ExpectKeyAndBack(OpKind::kTransposeConv2D, transpose,
                   "transpose_conv2d|bias=1,dh=1,dw=1,g=1,ic=3,ih=4,iw=5,kh=3,kw=3,n=1,oc=2,oh=8,ow=10,pb=1,pl=1,pr=1,"
                   "pt=1,sh=2,sw=2|float32");
}

TEST(KernelParamsTest, ATensorrtLibraryConvHasNoDilationsPadsOrBias) {
  ConvKernelParams conv;
  conv.ih = conv.iw = 7;
  conv.ic = conv.oc = conv.g = 16;
  conv.kh = conv.kw = 3;
  conv.elmt_fused = 0;
  Kernel kernel;
  kernel.op = OpKind::kDepthwiseConv2D;
  WriteParams(conv, kernel);
  EXPECT_EQ(kernel.Key(), "depthwise_conv2d|elmt_fused=0,g=16,ic=16,ih=7,iw=7,kh=3,kw=3,n=1,oc=16,sh=1,sw=1|float32");
  EXPECT_EQ(ReadParams<ConvKernelParams>(kernel), conv);
  // Not a kernel Latte builds: elmt_fused is not a conv's, and the pads are missing.
  Expected<ConvKernelParams> checked = ReadCheckedParams<ConvKernelParams>(kernel);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().message(), "param 'dh' is missing");
}

TEST(KernelParamsTest, AbsentKeysReadAsTheirDefaults) {
  const ConvKernelParams conv = ReadParams<ConvKernelParams>(FromKey("conv2d|ic=8,ih=10,iw=12,oc=4|float32"));
  // n, kh, kw, sh, sw and g read as 1; the optional fields stay empty.
  using Six = std::array<std::int64_t, 6>;
  EXPECT_EQ((Six{conv.n, conv.kh, conv.kw, conv.sh, conv.sw, conv.g}), (Six{1, 1, 1, 1, 1, 1}));
  for (const std::optional<std::int64_t>& absent :
       {conv.dh, conv.dw, conv.pt, conv.pl, conv.pb, conv.pr, conv.bias, conv.oh, conv.ow, conv.elmt_fused})
    EXPECT_FALSE(absent.has_value());
  // A depthwise conv's groups default to its input channels.
  EXPECT_EQ(ReadParams<ConvKernelParams>(FromKey("depthwise_conv2d|ic=24,oc=48|float32")).g, 24);

  const auto fc = ReadParams<FullyConnectedKernelParams>(FromKey("fully_connected|k=3,n=5|float32"));
  EXPECT_EQ(fc.m, 1);
  EXPECT_EQ(fc.bias, 0);
  EXPECT_EQ(ReadParams<MatMulKernelParams>(FromKey("matmul|k=3,m=2,n=5|float32")).b, 1);
  const PoolKernelParams pool = ReadParams<PoolKernelParams>(FromKey("max_pool2d|c=8,ih=4,iw=4|float32"));
  EXPECT_EQ(pool.n, 1);
  EXPECT_EQ(pool.sh, 1);
  EXPECT_EQ(pool.pt, 0);
  EXPECT_EQ(ReadParams<NhwcParams>(FromKey("relu|c=3,h=2,w=2|float32")), (NhwcParams{1, 2, 2, 3}));
  // A binary op's absent dims broadcast.
  const BinaryKernelParams binary = ReadParams<BinaryKernelParams>(FromKey("add|a3=8,b3=8|float32"));
  EXPECT_EQ(binary.a, (std::array<std::int64_t, 4>{1, 1, 1, 8}));
  EXPECT_EQ(binary.b, (std::array<std::int64_t, 4>{1, 1, 1, 8}));
  EXPECT_TRUE(ReadParams<ConcatKernelParams>(FromKey("concat|c=8,h=2,n=1,w=2|float32")).d.empty());
}

TEST(KernelParamsTest, DenseAndPoolFamilies) {
  ExpectKeyAndBack(OpKind::kFullyConnected, FullyConnectedKernelParams{4, 64, 10, 1},
                   "fully_connected|bias=1,k=64,m=4,n=10|float32");
  ExpectKeyAndBack(OpKind::kMatMul, MatMulKernelParams{2, 3, 4, 5}, "matmul|b=2,k=4,m=3,n=5|float32");
  ExpectKeyAndBack(OpKind::kMaxPool2D, PoolKernelParams{1, 8, 9, 3, 3, 2, 2, 1, 0, 1, 1, 0},
                   "max_pool2d|c=3,ih=8,iw=9,kh=3,kw=2,n=1,pb=1,pl=1,pr=0,pt=0,sh=2,sw=1|float32");
  ExpectKeyAndBack(OpKind::kGlobalAvgPool, NhwcParams{1, 7, 7, 256}, "global_avg_pool|c=256,h=7,n=1,w=7|float32");
  ExpectKeyAndBack(OpKind::kResize, ResizeKernelParams{1, 4, 5, 6, 8, 10, 1},
                   "resize|c=6,ih=4,iw=5,mode=1,n=1,oh=8,ow=10|float32");
}

TEST(KernelParamsTest, FamiliesOfOneNhwcTensor) {
  ExpectKeyAndBack(OpKind::kHardSwish, NhwcParams{1, 14, 14, 96}, "hard_swish|c=96,h=14,n=1,w=14|float32");
  ExpectKeyAndBack(OpKind::kSoftmax, NhwcParams{1, 1, 1, 1000}, "softmax|c=1000,h=1,n=1,w=1|float32");
  ExpectKeyAndBack(OpKind::kReshape, NhwcParams{1, 1, 7, 64}, "reshape|c=64,h=1,n=1,w=7|float32");
  ExpectKeyAndBack(OpKind::kMean, ReduceKernelParams{{1, 7, 7, 32}, 6}, "mean|axes=6,c=32,h=7,n=1,w=7|float32");
  ExpectKeyAndBack(OpKind::kTranspose, TransposeKernelParams{{1, 2, 3, 4}, {0, 3, 1, 2}},
                   "transpose|c=4,h=2,n=1,perm0=0,perm1=3,perm2=1,perm3=2,w=3|float32");
  ExpectKeyAndBack(OpKind::kPad, PadKernelParams{{1, 4, 4, 8}, {0, 1, 1, 0, 0, 1, 1, 0}},
                   "pad|c=8,h=4,n=1,p0=0,p1=1,p2=1,p3=0,p4=0,p5=1,p6=1,p7=0,w=4|float32");
  ExpectKeyAndBack(OpKind::kDepthToSpace, DepthSpaceKernelParams{{1, 2, 2, 8}, 2},
                   "depth_to_space|block=2,c=8,h=2,n=1,w=2|float32");
  ExpectKeyAndBack(OpKind::kSlice, SliceKernelParams{{1, 1, 3, 192}, 1, 1, 1, 192},
                   "slice|c=192,h=1,n=1,oc=192,oh=1,on=1,ow=1,w=3|float32");
  ExpectKeyAndBack(OpKind::kConcat, ConcatKernelParams{{1, 2, 2, 9}, 3, {4, 5}},
                   "concat|axis=3,c=9,d0=4,d1=5,h=2,inputs=2,n=1,w=2|float32");
}

TEST(KernelParamsTest, BinaryShapes) {
  ExpectKeyAndBack(OpKind::kAdd, BinaryKernelParams{{1, 4, 4, 8}, {1, 1, 1, 8}},
                   "add|a0=1,a1=4,a2=4,a3=8,b0=1,b1=1,b2=1,b3=8|float32");
}

TEST(KernelParamsTest, WritingLeavesOtherKeysAndUnsetOptionalFields) {
  Kernel kernel = FromKey("conv2d|elmt_fused=1,ih=4|float32");
  ConvKernelParams conv = ReadParams<ConvKernelParams>(kernel);
  conv.ih = 6;
  conv.pt = 1;
  WriteParams(conv, kernel);
  EXPECT_EQ(kernel.Key(), "conv2d|elmt_fused=1,g=1,ic=0,ih=6,iw=0,kh=1,kw=1,n=1,oc=0,pt=1,sh=1,sw=1|float32");
  Kernel with_other = FromKey("relu|x=5|float32");
  WriteParams(NhwcParams{1, 2, 3, 4}, with_other);
  EXPECT_EQ(with_other.Key(), "relu|c=4,h=2,n=1,w=3,x=5|float32");
}

TEST(KernelParamsTest, CheckedReadsNameTheKey) {
  auto message = [](const std::string& key) {
    const Kernel kernel = FromKey(key);
    switch (KernelFamilyOf(kernel.op)) {
      case KernelFamily::kSlice: return ReadCheckedParams<SliceKernelParams>(kernel).status().message();
      case KernelFamily::kConcat: return ReadCheckedParams<ConcatKernelParams>(kernel).status().message();
      case KernelFamily::kFullyConnected:
        return ReadCheckedParams<FullyConnectedKernelParams>(kernel).status().message();
      default: return ReadCheckedParams<NhwcParams>(kernel).status().message();
    }
  };
  EXPECT_EQ(message("relu|c=4,h=2,w=3|float32"), "param 'n' is missing");
  EXPECT_EQ(message("relu|c=4,h=0,n=1,w=3|float32"), "param 'h' is 0, must be in [1, 2147483648]");
  EXPECT_EQ(message("relu|c=4,h=2,n=1,w=3,x=1|float32"), "param 'x' is not one of a relu kernel");
  EXPECT_EQ(message("fully_connected|bias=2,k=3,m=1,n=4|float32"), "param 'bias' is 2, must be in [0, 1]");
  EXPECT_EQ(message("slice|c=6,h=2,n=1,oc=6,oh=3,on=1,ow=2,w=2|float32"), "param 'oh' is 3, must be in [1, 2]");
  EXPECT_EQ(message("concat|axis=3,c=9,d0=4,h=2,inputs=2,n=1,w=2|float32"), "param 'd1' is missing");
  EXPECT_EQ(message("concat|axis=3,c=9,d0=4,d1=5,d2=1,h=2,inputs=2,n=1,w=2|float32"),
            "param 'd2' is not one of a concat kernel");
  // oh and ow are a transpose conv's alone.
  Kernel conv = FromKey("conv2d|bias=1,dh=1,dw=1,g=1,ic=3,ih=4,iw=5,kh=3,kw=3,n=1,oc=2,oh=8,pb=1,pl=1,pr=1,pt=1,"
                        "sh=2,sw=2|float32");
  EXPECT_EQ(ReadCheckedParams<ConvKernelParams>(conv).status().message(), "param 'oh' is not one of a conv2d kernel");
  conv.op = OpKind::kTransposeConv2D;
  EXPECT_EQ(ReadCheckedParams<ConvKernelParams>(conv).status().message(), "param 'ow' is missing");
}

TEST(KernelParamsTest, KeysOfFieldsAndWhichMayBeZero) {
  EXPECT_EQ(ParamKey(&ConvKernelParams::ih), "ih");
  EXPECT_EQ(ParamKey(&ConvKernelParams::pt), "pt");
  EXPECT_EQ(ParamKey(&ReduceKernelParams::axes), "axes");
  EXPECT_EQ(ParamKey(&ReduceKernelParams::h), "h");
  EXPECT_EQ(ParamKey(&SliceKernelParams::oc), "oc");
  EXPECT_EQ(ParamKey(&BinaryKernelParams::b, 2), "b2");
  EXPECT_EQ(ParamKey(&PadKernelParams::p, 7), "p7");
  EXPECT_EQ(ParamKey(&ConcatKernelParams::d, 11), "d11");
  for (const char* key : {"pt", "pl", "pb", "pr", "bias", "mode", "axis", "axes", "elmt_fused", "p0", "p7", "perm3"})
    EXPECT_TRUE(ParamMayBeZero(key)) << key;
  for (const char* key : {"n", "ih", "c", "g", "oh", "on", "block", "inputs", "d0", "a0", "b0", "b", "nope"})
    EXPECT_FALSE(ParamMayBeZero(key)) << key;
}

}  // namespace
}  // namespace latte
