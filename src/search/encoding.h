#pragma once
// Backend assignments as the on-device Pareto profilers encode them: a model's op list (one
// entry per unique op kind in "name" mode, per unique (op kind, input size) pair in "index"
// mode), and an assignment as an integer in base B (B backends), digit i = the backend of op
// list entry i, least significant digit first.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/executor.h"

namespace latte {

enum class OpListMode { kName, kIndex };

/// "name" or "index"; anything else fails naming the choices.
Expected<OpListMode> ParseOpListMode(std::string_view text);

/// The unique ops of a graph in order of first appearance, and which one each node is.
struct OpList {
  OpListMode mode = OpListMode::kName;
  std::vector<std::string> keys;        // "conv2d" (name), "conv2d@602112" (index: op @ first input's bytes)
  std::vector<std::size_t> key_of_node;  // per node: index into keys
};

OpList BuildOpList(const Graph& graph, OpListMode mode);

/// Integers in [0, B^k) and the k base-B digits they stand for. Index mode on a real model has
/// dozens of digits, so B^k may exceed 64 bits: the digits are the identity, IdText() the id in
/// decimal at any size, and the 64-bit Encode/Decode serve spaces that fit (brute force).
class AssignmentCodec {
 public:
  /// Fails when B < 1 or k < 1.
  static Expected<AssignmentCodec> Create(std::size_t num_backends, std::size_t num_digits);
  std::size_t num_backends() const { return base_; }
  std::size_t num_digits() const { return digits_; }
  /// True when B^k fits in 63 bits (then Count() is it).
  bool fits() const { return fits_; }
  /// B^k when fits(); else the largest uint64.
  std::uint64_t Count() const { return count_; }
  /// "2^70": the count as a power, for messages.
  std::string CountText() const;
  /// Digits (each in [0, B), least significant first) to the id; fails on a bad digit or length,
  /// or when the space does not fit in 63 bits.
  Expected<std::uint64_t> Encode(std::span<const int> digits) const;
  /// The id's digits; fails when id >= Count().
  Expected<std::vector<int>> Decode(std::uint64_t id) const;
  /// The id of `digits` in decimal, exact at any size ("1180591620717411303423").
  std::string IdText(std::span<const int> digits) const;

 private:
  std::size_t base_ = 1, digits_ = 1;
  std::uint64_t count_ = 1;
  bool fits_ = true;
};

/// "conv2d:xnnpack add:onednn ..." in op list order.
std::string AssignmentText(const OpList& ops, std::span<const int> digits, std::span<const std::string> backends);

/// The executor placement an assignment stands for: each node on its op list entry's backend.
Placement PlacementFor(const Graph& graph, const OpList& ops, std::span<const int> digits,
                       std::span<const std::string> backends);

}  // namespace latte
