#include "ir/fusion_rules.h"

#include <algorithm>

namespace latte {

bool IsFusableFollower(OpKind kind) {
  // Bool outputs, or another dtype: not an epilogue of a float op.
  if (IsComparisonOrLogic(kind) || kind == OpKind::kCast || kind == OpKind::kQuantize || kind == OpKind::kDequantize) return false;
  return (KernelFamilyOf(kind) == KernelFamily::kUnary && kind != OpKind::kPRelu && kind != OpKind::kBatchNorm) ||
         KernelFamilyOf(kind) == KernelFamily::kBinary;
}

Status NoKernelFamily(OpKind kind) {
  return Unsupported("no kernel family for '" + std::string(OpName(kind)) + "' (kernel.h documents none)");
}

Expected<std::optional<OpKind>> AttrActivation(const Node& node) {
  const std::string act = node.attrs.GetString("activation", "none");
  if (act == "none") return std::optional<OpKind>();
  if (act == "relu") return std::optional<OpKind>(OpKind::kRelu);
  if (act == "relu6") return std::optional<OpKind>(OpKind::kRelu6);
  if (act == "relu_n1_to_1") return std::optional<OpKind>(OpKind::kReluN1To1);
  if (act == "tanh") return std::optional<OpKind>(OpKind::kTanh);
  return Unsupported("fused activation '" + act + "' has no op kind");
}


bool IsAttrActivation(OpKind kind) {
  return kind == OpKind::kRelu || kind == OpKind::kRelu6 || kind == OpKind::kReluN1To1 || kind == OpKind::kTanh;
}

bool CanCarryActivation(OpKind kind) {
  using K = OpKind;
  return KernelFamilyOf(kind) == KernelFamily::kConv || KernelFamilyOf(kind) == KernelFamily::kPool || kind == K::kFullyConnected ||
         kind == K::kAdd || kind == K::kSub || kind == K::kMul || kind == K::kDiv;
}

FusionRules FusionRules::Default() {
  FusionRules rules;
  rules.kinds_ = {"conv2d+relu",           "conv2d+relu6",        "depthwise_conv2d+relu", "depthwise_conv2d+relu6",
                  "conv2d+add",            "conv2d+add+relu",     "conv2d+add+relu6",      "fully_connected+relu",
                  "fully_connected+relu6", "add+relu",            "add+relu6"};
  return rules;
}

std::string FusionRuleKind(const std::string& rule) { return rule.substr(0, rule.find('@')); }

std::string NchwcRule(const std::string& kind, int block) { return kind + "@nchwc" + std::to_string(block); }

const std::vector<std::string>& ResidualFusionKinds() {
  static const std::vector<std::string> kinds = {"conv2d+add", "conv2d+add+relu", "conv2d+add+relu6"};
  return kinds;
}

bool IsResidualFusion(const Kernel& kernel) {
  if (kernel.op != OpKind::kConv2D || kernel.fused.empty() || kernel.fused[0] != OpKind::kAdd) return false;
  const std::vector<std::string>& kinds = ResidualFusionKinds();
  return std::find(kinds.begin(), kinds.end(), kernel.Kind()) != kinds.end();
}

Expected<FusionRules> FusionRules::FromKinds(const std::vector<std::string>& kinds) {
  FusionRules rules;
  for (const std::string& rule : kinds) {
    const std::string kind = FusionRuleKind(rule);
    int block = 0;
    if (kind.size() != rule.size()) {
      const std::string condition = rule.substr(kind.size() + 1);
      if (condition == "nchwc8") block = 8;
      else if (condition == "nchwc16") block = 16;
      else return InvalidInput("fusion rule '" + rule + "': unknown condition '" + condition + "' (nchwc8 or nchwc16)");
      if (rules.nchwc_block_ != 0 && rules.nchwc_block_ != block)
        return InvalidInput("fusion rule '" + rule + "': a second NCHWc block (the rules have nchwc" +
                            std::to_string(rules.nchwc_block_) + ")");
    }
    LATTE_ASSIGN_OR_RETURN(Kernel k, ParseKernelKind(kind));
    if (k.fused.empty()) return InvalidInput("fusion rule '" + kind + "' fuses nothing (expected main+follower)");
    if (KernelFamilyOf(k.op) == KernelFamily::kNone) return InvalidInput("fusion rule '" + kind + "': " + NoKernelFamily(k.op).message());
    for (OpKind f : k.fused)
      if (!IsFusableFollower(f))
        return InvalidInput("fusion rule '" + kind + "': " + std::string(OpName(f)) +
                            " cannot follow inside a kernel (only one-input activations and binary elementwise ops)");
    if (block == 0) {
      rules.kinds_.insert(k.Kind());
    } else {
      rules.nchwc_kinds_.insert(k.Kind());
      rules.nchwc_block_ = block;
    }
  }
  return rules;
}

std::vector<std::string> FusionRules::Rules() const {
  std::vector<std::string> rules(kinds_.begin(), kinds_.end());
  for (const std::string& kind : nchwc_kinds_) rules.push_back(NchwcRule(kind, nchwc_block_));
  return rules;
}

Expected<FusionRules> FusionRules::FromJson(const nlohmann::json& json) {
  if (!json.is_array()) return InvalidInput("fusion rules must be a JSON array of kernel kinds, got " + std::string(json.type_name()));
  std::vector<std::string> kinds;
  for (size_t i = 0; i < json.size(); ++i) {
    if (!json[i].is_string()) return InvalidInput("fusion rule " + std::to_string(i) + " is not a string: " + json[i].dump());
    kinds.push_back(json[i].get<std::string>());
  }
  return FromKinds(kinds);
}

nlohmann::json FusionRules::ToJson() const { return Rules(); }

}  // namespace latte
