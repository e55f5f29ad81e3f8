#pragma once
// How a backend's kernels are made of a graph's ops: the fusion rules (which kinds run as one unit)
// and what every part of kernel grouping and building agrees on about followers and fused
// activations.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel.h"

namespace latte {

/// The kernel kinds ("conv2d+relu", "conv2d+add+relu") a backend runs as one unit. A node's own
/// "activation" attribute is always fused whatever the rules say (the backend runs it fused);
/// the rules decide only whether separate follower nodes are absorbed.
///
/// A rule may hold only where the graph allows it: "conv2d+add@nchwc16" is fused where ONNX
/// Runtime's NCHWc pass with a block of 16 fuses it (ir/nchwc_layout), and run apart elsewhere.
class FusionRules {
 public:
  FusionRules() = default;
  /// What XNNPACK and oneDNN fuse: conv/depthwise/fc + relu or relu6, conv + residual add (+ relu or
  /// relu6), add + relu or relu6.
  static FusionRules Default();
  /// Rules from kinds; fails naming the first kind ParseKernelKind rejects or that fuses nothing.
  static Expected<FusionRules> FromKinds(const std::vector<std::string>& kinds);
  /// Inverse of ToJson(): an array of kind strings. Fails naming the bad element.
  static Expected<FusionRules> FromJson(const nlohmann::json& json);
  /// Rules(): the unconditional kinds sorted, then the conditional ones.
  nlohmann::json ToJson() const;

  /// True when a kernel of this kind (Kernel::Kind()) is one unit under these rules, wherever it is.
  bool Allows(const std::string& kind) const { return kinds_.count(kind) != 0; }
  /// True when this kind is one unit only where the NCHWc pass fuses it (NchwcBlock() says the block).
  bool AllowsWhereNchwcFuses(const std::string& kind) const { return nchwc_kinds_.count(kind) != 0; }
  /// The NCHWc block of the conditional rules; 0 when there are none.
  int NchwcBlock() const { return nchwc_block_; }
  /// The unconditional kinds.
  const std::set<std::string>& kinds() const { return kinds_; }
  /// Every rule as written: the unconditional kinds and "kind@nchwcN".
  std::vector<std::string> Rules() const;
  bool operator==(const FusionRules& other) const = default;

 private:
  std::set<std::string> kinds_;
  std::set<std::string> nchwc_kinds_;
  int nchwc_block_ = 0;
};

/// The kind a rule fuses, without its condition: "conv2d+add" for "conv2d+add@nchwc16".
std::string FusionRuleKind(const std::string& rule);
/// The rule for `kind` where ORT's NCHWc pass with `block` fuses it: "conv2d+add@nchwc16".
std::string NchwcRule(const std::string& kind, int block);

/// A conv2d with a residual add fused into it, and a relu or relu6 after the add: "conv2d+add",
/// "conv2d+add+relu", "conv2d+add+relu6" (the kinds ORT's NCHWc pass fuses, ir/nchwc_layout).
const std::vector<std::string>& ResidualFusionKinds();
bool IsResidualFusion(const Kernel& kernel);

/// Ops that may follow a main op inside one kernel: one-input activations and binary elementwise ops
/// (not the comparisons or logic, whose outputs are bool).
bool IsFusableFollower(OpKind kind);

/// kUnsupported: `kind` has no kernel family (kernel.h documents none), so it is never a kernel.
Status NoKernelFamily(OpKind kind);

/// A node's "activation" attribute as an op kind; nullopt for "none"; kUnsupported for one with no
/// op kind.
Expected<std::optional<OpKind>> AttrActivation(const Node& node);

/// The activations a node may carry as its "activation" attribute: relu, relu6, relu_n1_to_1, tanh.
bool IsAttrActivation(OpKind kind);

/// Main ops whose built node carries a fused activation as its attribute (as TFLite files do).
bool CanCarryActivation(OpKind kind);

}  // namespace latte
