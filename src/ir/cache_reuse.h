#pragma once
// Which bytes a layer finds in a cache inside its graph, against when it runs alone again and
// again (how kernels are measured). A layer's weights were last touched one inference ago, its
// input just now by the layer before it, or earlier by a skip connection, and its output buffer
// one inference ago; alone, everything it touches was touched by its own previous run. The
// difference, for a cache of a given size, is what makes a layer slower in a model than alone.
//
// The model is an LRU cache: a piece of memory is found again when the distinct bytes touched
// since its last use (by the layers in between, and alongside it) are under the cache size; for a
// piece larger than what is left of the cache the share of it beyond is missed. Graphs run
// inference after inference. The pieces are either whole tensors, each in memory of its own, or
// 64 KiB blocks of the arena the executor plans (ir/arena_plan): there a layer's output is often
// written over memory a tensor freed a few layers before, still in the cache.

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace latte {

/// What one layer (a kernel, or a node no kernel covers) touches, in execution order.
struct LayerTraffic {
  std::int64_t weight_bytes = 0;  // constant inputs
  std::int64_t output_bytes = 0;
  /// Activation inputs: (index of the producing layer, bytes); -1 for a graph input.
  std::vector<std::pair<int, std::int64_t>> inputs;
  /// Bytes a runtime's layout pass moves between layouts around the layer in its graph, which the
  /// layer alone does not (ONNX Runtime's NCHWc reorders: ir/nchwc_layout); 0 where none is known.
  std::int64_t layout_bytes = 0;
  /// Of those, the bytes of reorders whose channel planes are a whole number of 4 KiB pages, of
  /// more channels than an L1 set has ways (NchwcReorderAliases): a reorder writes or reads a
  /// block's planes at once, and such planes land in the same cache set.
  std::int64_t layout_paged_bytes = 0;
  bool operator==(const LayerTraffic& other) const = default;
};

/// The traffic of `layers` (each a list of nodes of `graph`, in execution order; tensors passed
/// between nodes of one layer stay inside it). A tensor whose size is unknown counts 0 bytes; an
/// input produced by a node in no listed layer counts as a graph input.
std::vector<LayerTraffic> LayerTrafficOf(const Graph& graph, const std::vector<std::vector<NodeId>>& layers);

/// Where a graph's activations live while it runs.
enum class TensorMemory {
  kOwnBuffers,  // each tensor in memory of its own, touched once an inference
  kArena,       // one arena planned by lifetime (ir/arena_plan), as the executor runs graphs
};

/// "arena", "own-buffers": as packs write it.
const char* TensorMemoryName(TensorMemory memory);

/// Per layer: the bytes missed in a cache of `cache_bytes` inside the graph minus those missed by
/// the layer run alone again and again (negative when the graph leaves more in the cache, as for
/// an input its producer just wrote that the layer alone would not keep). In the arena, a layer's
/// output lives from the layer to its last reader (to the end of the run when no layer reads it:
/// a graph output), graph inputs for the whole run; graph inputs of one size count as one tensor
/// (the traffic does not say which input a layer reads).
std::vector<double> ExtraMissBytes(const std::vector<LayerTraffic>& layers, std::int64_t cache_bytes,
                                   TensorMemory memory = TensorMemory::kOwnBuffers);

/// "3:4096,-1:1024": the inputs as text (stored with in-graph measurements), and back. Parse
/// fails naming the part that does not read.
std::string InputsToText(const LayerTraffic& layer);
Expected<std::vector<std::pair<int, std::int64_t>>> ParseInputsText(const std::string& text);

}  // namespace latte
