#include "search/encoding.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

namespace latte {

Expected<OpListMode> ParseOpListMode(std::string_view text) {
  if (text == "name") return OpListMode::kName;
  if (text == "index") return OpListMode::kIndex;
  return InvalidInput("unknown op list mode '" + std::string(text) + "' (name, index)");
}

OpList BuildOpList(const Graph& graph, OpListMode mode) {
  OpList ops;
  ops.mode = mode;
  std::map<std::string, std::size_t> index;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    std::string key = NodeOpName(node);
    if (mode == OpListMode::kIndex) {
      // The data size the on-device profilers key on: the bytes of the node's first input.
      std::optional<std::int64_t> bytes;
      if (node.input(0) != kNoTensor) bytes = graph.tensor(node.input(0)).num_bytes();
      key += '@';
      key += bytes ? std::to_string(*bytes) : std::string("?");
    }
    auto [it, added] = index.emplace(key, ops.keys.size());
    if (added) ops.keys.push_back(key);
    ops.key_of_node.push_back(it->second);
  }
  return ops;
}

Expected<AssignmentCodec> AssignmentCodec::Create(std::size_t num_backends, std::size_t num_digits) {
  if (num_backends < 1) return InvalidInput("an assignment needs at least one backend");
  if (num_digits < 1) return InvalidInput("an assignment needs at least one op");
  AssignmentCodec codec;
  codec.base_ = num_backends;
  codec.digits_ = num_digits;
  constexpr std::uint64_t kMax = std::uint64_t{1} << 63;
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < num_digits; ++i) {
    if (count > kMax / num_backends) {
      codec.fits_ = false;
      count = std::numeric_limits<std::uint64_t>::max();
      break;
    }
    count *= num_backends;
  }
  codec.count_ = count;
  return codec;
}

std::string AssignmentCodec::CountText() const {
  if (fits_) return std::to_string(count_);
  return std::to_string(base_) + "^" + std::to_string(digits_);
}

std::string AssignmentCodec::IdText(std::span<const int> digits) const {
  // Most significant digit first: value = value * B + digit, in base-10^9 limbs (least significant first).
  std::vector<std::uint64_t> limbs{0};
  constexpr std::uint64_t kLimb = 1000000000;
  for (std::size_t i = digits.size(); i-- > 0;) {
    std::uint64_t carry = digits[i] < 0 ? 0 : static_cast<std::uint64_t>(digits[i]);
    for (std::uint64_t& limb : limbs) {
      const std::uint64_t v = limb * base_ + carry;
      limb = v % kLimb;
      carry = v / kLimb;
    }
    while (carry > 0) {
      limbs.push_back(carry % kLimb);
      carry /= kLimb;
    }
  }
  std::string text = std::to_string(limbs.back());
  for (std::size_t i = limbs.size() - 1; i-- > 0;) {
    const std::string part = std::to_string(limbs[i]);
    text.append(9 - std::min<std::size_t>(9, part.size()), '0');
    text += part;
  }
  return text;
}

Expected<std::uint64_t> AssignmentCodec::Encode(std::span<const int> digits) const {
  if (!fits_) return InvalidInput(CountText() + " assignments do not fit in 63 bits: no integer id below 2^63");
  if (digits.size() != digits_) {
    return InvalidInput("an assignment has " + std::to_string(digits.size()) + " digits, expected " +
                        std::to_string(digits_));
  }
  std::uint64_t id = 0;
  for (std::size_t i = digits.size(); i-- > 0;) {  // least significant digit first
    if (digits[i] < 0 || static_cast<std::size_t>(digits[i]) >= base_) {
      return InvalidInput("digit " + std::to_string(i) + " is " + std::to_string(digits[i]) + ", outside [0, " +
                          std::to_string(base_) + ")");
    }
    id = id * base_ + static_cast<std::uint64_t>(digits[i]);
  }
  return id;
}

Expected<std::vector<int>> AssignmentCodec::Decode(std::uint64_t id) const {
  if (id >= count_) {
    return InvalidInput("assignment " + std::to_string(id) + " is outside [0, " + std::to_string(count_) + ")");
  }
  std::vector<int> digits(digits_);
  for (std::size_t i = 0; i < digits_; ++i) {
    digits[i] = static_cast<int>(id % base_);
    id /= base_;
  }
  return digits;
}

std::string AssignmentText(const OpList& ops, std::span<const int> digits, std::span<const std::string> backends) {
  std::string text;
  for (std::size_t i = 0; i < ops.keys.size() && i < digits.size(); ++i) {
    const int d = digits[i];
    text += (text.empty() ? "" : " ") + ops.keys[i] + ":" +
            (d >= 0 && static_cast<std::size_t>(d) < backends.size() ? backends[d] : "?");
  }
  return text;
}

Placement PlacementFor(const Graph& graph, const OpList& ops, std::span<const int> digits,
                       std::span<const std::string> backends) {
  Placement placement;
  if (!backends.empty()) placement.default_backend = backends.front();
  for (NodeId id = 0; static_cast<std::size_t>(id) < graph.num_nodes() && static_cast<std::size_t>(id) < ops.key_of_node.size(); ++id) {
    const std::size_t key = ops.key_of_node[id];
    if (key < digits.size() && digits[key] >= 0 && static_cast<std::size_t>(digits[key]) < backends.size()) {
      placement.by_node[id] = backends[digits[key]];
    }
  }
  return placement;
}

}  // namespace latte
