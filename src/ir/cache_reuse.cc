#include "ir/cache_reuse.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <system_error>

#include "ir/arena_plan.h"

namespace latte {
namespace {

// Sums over positions, with point updates (a Fenwick tree).
class PositionSums {
 public:
  explicit PositionSums(std::size_t n) : tree_(n + 1, 0) {}
  void Add(std::size_t pos, double value) {
    for (std::size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += value;
  }
  double Prefix(std::size_t end) const {  // positions [0, end)
    double sum = 0;
    for (std::size_t i = end; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::vector<double> tree_;
};

// The share of a tensor of `bytes` missed when `distance` bytes (itself included) were touched
// since its last use.
double MissedShare(double distance, double bytes, double cache) {
  if (bytes <= 0) return 0;
  return std::clamp((distance - cache) / bytes, 0.0, 1.0);
}

// Per layer, the pieces of memory it touches as (id, bytes); ids are dense from 0.
struct Touches {
  std::vector<std::vector<std::pair<std::size_t, double>>> by_layer;
  std::size_t num_ids = 0;
};

// Whole tensors, each its own: ids 3k weights of layer k, 3k+1 its output, 3k+2 a graph input it
// reads.
Touches OwnBufferTouches(const std::vector<LayerTraffic>& layers) {
  Touches touches;
  touches.num_ids = 3 * layers.size();
  for (std::size_t k = 0; k < layers.size(); ++k) {
    auto& touched = touches.by_layer.emplace_back();
    const LayerTraffic& layer = layers[k];
    if (layer.weight_bytes > 0) touched.push_back({3 * k, static_cast<double>(layer.weight_bytes)});
    for (const auto& [from, bytes] : layer.inputs) {
      const bool produced = from >= 0 && static_cast<std::size_t>(from) < k;
      const std::size_t id = produced ? 3 * static_cast<std::size_t>(from) + 1 : 3 * k + 2;
      if (std::none_of(touched.begin(), touched.end(), [&](const auto& t) { return t.first == id; }))
        touched.push_back({id, static_cast<double>(bytes)});
    }
    touched.push_back({3 * k + 1, static_cast<double>(layer.output_bytes)});
  }
  return touches;
}

// Blocks of the arena the activations are planned in: ids k for the weights of layer k (not in the
// arena), n + b for the arena's block b. A block is a 256th of the cache simulated (within 4 KiB to
// 64 KiB): small against it, so tensors sharing a block seldom blur each other's last use, and few
// enough that a large model's traffic simulates in milliseconds.
std::size_t BlockBytes(double cache) {
  return std::clamp(static_cast<std::size_t>(cache / 256), std::size_t{4} << 10, std::size_t{64} << 10);
}

Touches ArenaTouches(const std::vector<LayerTraffic>& layers, std::size_t block_bytes) {
  const std::size_t n = layers.size();
  // Lifetimes in steps: graph inputs from step 0, layer k at step k + 1, the run's end n + 1.
  std::vector<ArenaBuffer> buffers;
  std::vector<std::size_t> output_buffer(n, 0);
  std::map<std::int64_t, std::size_t> input_buffer;  // graph inputs by size
  for (std::size_t k = 0; k < n; ++k) {
    output_buffer[k] = buffers.size();
    buffers.push_back({static_cast<std::size_t>(layers[k].output_bytes), k + 1, n + 1});
  }
  std::vector<bool> read(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    for (const auto& [from, bytes] : layers[k].inputs) {
      if (from >= 0 && static_cast<std::size_t>(from) < k) {
        ArenaBuffer& produced = buffers[output_buffer[static_cast<std::size_t>(from)]];
        produced.last = read[static_cast<std::size_t>(from)] ? std::max(produced.last, k + 1) : k + 1;
        read[static_cast<std::size_t>(from)] = true;
      } else if (input_buffer.emplace(bytes, buffers.size()).second) {
        buffers.push_back({static_cast<std::size_t>(bytes), 0, n + 1});
      }
    }
  }
  const ArenaLayout layout = PlaceInArena(buffers);
  Touches touches;
  touches.num_ids = n + (layout.arena_bytes + block_bytes - 1) / block_bytes;
  std::vector<std::pair<std::size_t, double>> blocks;
  auto touch = [&](std::size_t offset, std::size_t bytes) {
    for (std::size_t at = offset; at < offset + bytes;) {
      const std::size_t block = at / block_bytes;
      const std::size_t end = std::min(offset + bytes, (block + 1) * block_bytes);
      blocks.push_back({n + block, static_cast<double>(end - at)});
      at = end;
    }
  };
  for (std::size_t k = 0; k < n; ++k) {
    auto& touched = touches.by_layer.emplace_back();
    if (layers[k].weight_bytes > 0) touched.push_back({k, static_cast<double>(layers[k].weight_bytes)});
    blocks.clear();
    for (const auto& [from, bytes] : layers[k].inputs) {
      const bool produced = from >= 0 && static_cast<std::size_t>(from) < k;
      touch(layout.offset[produced ? output_buffer[static_cast<std::size_t>(from)] : input_buffer.at(bytes)],
            static_cast<std::size_t>(bytes));
    }
    touch(layout.offset[output_buffer[k]], static_cast<std::size_t>(layers[k].output_bytes));
    // A block touched twice in a layer (an input read twice, small tensors sharing it) is one piece.
    std::sort(blocks.begin(), blocks.end());
    for (const auto& [id, bytes] : blocks) {
      if (touched.size() > 0 && touched.back().first == id)
        touched.back().second = std::min(touched.back().second + bytes, static_cast<double>(block_bytes));
      else
        touched.push_back({id, bytes});
    }
  }
  return touches;
}

}  // namespace

std::vector<LayerTraffic> LayerTrafficOf(const Graph& graph, const std::vector<std::vector<NodeId>>& layers) {
  std::map<NodeId, int> layer_of;
  for (std::size_t i = 0; i < layers.size(); ++i)
    for (NodeId n : layers[i]) layer_of[n] = static_cast<int>(i);
  auto bytes = [&](TensorId t) { return graph.tensor(t).num_bytes().value_or(0); };
  std::vector<LayerTraffic> traffic(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerTraffic& layer = traffic[i];
    for (NodeId n : layers[i]) {
      const Node& node = graph.node(n);
      for (std::size_t input = 0; input < node.inputs.size(); ++input) {
        const TensorId t = node.inputs[input];
        if (t == kNoTensor) continue;
        if (graph.tensor(t).is_constant()) {
          // A gather from a constant table (an embedding) reads the rows it gathers, its output's
          // bytes, not the table: BERT's 31 MB of word embeddings counted whole flushed the L3 of
          // every layer after it, and predicted its in-graph cost 10 points high.
          const bool table = node.kind == OpKind::kGather && input == 0 && !node.outputs.empty();
          layer.weight_bytes += table ? std::min(bytes(t), bytes(node.outputs.front())) : bytes(t);
          continue;
        }
        const NodeId producer = graph.Producer(t);
        auto it = producer < 0 ? layer_of.end() : layer_of.find(producer);
        const int from = it == layer_of.end() ? -1 : it->second;
        if (from == static_cast<int>(i)) continue;  // passed between the layer's own nodes
        layer.inputs.push_back({from, bytes(t)});
      }
    }
    if (!layers[i].empty())
      for (TensorId t : graph.node(layers[i].back()).outputs) layer.output_bytes += bytes(t);
  }
  return traffic;
}

const char* TensorMemoryName(TensorMemory memory) {
  return memory == TensorMemory::kArena ? "arena" : "own-buffers";
}

std::vector<double> ExtraMissBytes(const std::vector<LayerTraffic>& layers, std::int64_t cache_bytes,
                                   TensorMemory memory) {
  const std::size_t n = layers.size();
  const double cache = static_cast<double>(cache_bytes);
  std::vector<double> extra(n, 0.0);
  if (n == 0) return extra;
  const Touches touches = memory == TensorMemory::kArena ? ArenaTouches(layers, BlockBytes(cache)) : OwnBufferTouches(layers);
  // Two inferences: the first leaves the state the second (the one scored) starts from.
  PositionSums sums(2 * n);
  std::vector<std::ptrdiff_t> last(touches.num_ids, -1);  // position of each piece's latest use
  std::vector<double> size(touches.num_ids, 0.0);
  for (std::size_t pos = 0; pos < 2 * n; ++pos) {
    const std::size_t k = pos % n;
    const auto& touched = touches.by_layer[k];
    if (pos >= n) {
      double own = 0;
      for (const auto& t : touched) own += t.second;
      for (const auto& [id, bytes] : touched) {
        // Distinct bytes whose latest use is at or after this piece's: what came in since.
        const double distance = last[id] < 0 ? cache + bytes : sums.Prefix(pos) - sums.Prefix(last[id]);
        extra[k] += bytes * (MissedShare(distance, bytes, cache) - MissedShare(own, bytes, cache));
      }
    }
    for (const auto& [id, bytes] : touched) {
      if (last[id] >= 0) sums.Add(static_cast<std::size_t>(last[id]), -size[id]);
      sums.Add(pos, bytes);
      last[id] = static_cast<std::ptrdiff_t>(pos);
      size[id] = bytes;
    }
  }
  return extra;
}

std::string InputsToText(const LayerTraffic& layer) {
  std::string text;
  for (const auto& [from, bytes] : layer.inputs) {
    if (!text.empty()) text += ',';
    text += std::to_string(from);
    text += ':';
    text += std::to_string(bytes);
  }
  return text;
}

Expected<std::vector<std::pair<int, std::int64_t>>> ParseInputsText(const std::string& text) {
  std::vector<std::pair<int, std::int64_t>> inputs;
  if (text.empty()) return inputs;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(',', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::size_t colon = part.find(':');
    int from = 0;
    std::int64_t bytes = 0;
    const char* p = part.data();
    const char* e = p + part.size();
    auto whole = [](const char* first, const char* last, auto& value) {
      const auto [ptr, ec] = std::from_chars(first, last, value);
      return ec == std::errc() && ptr == last;
    };
    if (colon == std::string::npos || !whole(p, p + colon, from) || !whole(p + colon + 1, e, bytes) || from < -1 ||
        bytes < 0) {
      return InvalidInput("layer inputs: '" + part + "' is not LAYER:BYTES");
    }
    inputs.push_back({from, bytes});
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return inputs;
}

}  // namespace latte
