#include "import/onnx/onnx_one_to_one.h"

namespace latte {

std::span<const OnnxOneToOne> OnnxOneToOneOps() {
  using K = OpKind;
  static constexpr OnnxOneToOne kOps[] = {
      {"Add", K::kAdd},
      {"Sub", K::kSub},
      {"Mul", K::kMul},
      {"Div", K::kDiv},
      {"Pow", K::kPow},
      {"Max", K::kMaximum},
      {"Min", K::kMinimum},
      {"Equal", K::kEqual},
      {"Less", K::kLess},
      {"LessOrEqual", K::kLessEqual},
      {"Greater", K::kGreater},
      {"GreaterOrEqual", K::kGreaterEqual},
      {"And", K::kLogicalAnd},
      {"Or", K::kLogicalOr},
      {"Not", K::kLogicalNot},
      {"Where", K::kWhere},
      {"Relu", K::kRelu},
      {"Sigmoid", K::kSigmoid},
      {"Tanh", K::kTanh},
      {"HardSwish", K::kHardSwish},
      {"Softplus", K::kSoftplus},
      {"Exp", K::kExp},
      {"Log", K::kLog},
      {"Sqrt", K::kSqrt},
      {"Abs", K::kAbs},
      {"Neg", K::kNeg},
      {"Reciprocal", K::kReciprocal},
      {"Erf", K::kErf},
      {"Floor", K::kFloor},
      {"Ceil", K::kCeil},
      {"Round", K::kRound},
      {"Identity", K::kIdentity},
      {"GlobalAveragePool", K::kGlobalAvgPool},
      {"GlobalMaxPool", K::kGlobalMaxPool},
  };
  return kOps;
}

}  // namespace latte
