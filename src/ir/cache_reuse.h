#pragma once
// Which bytes a layer finds in a cache inside its graph, against when it runs alone again and
// again (how kernels are measured). A layer's weights were last touched one inference ago, its
// input just now by the layer before it, or earlier by a skip connection, and its output buffer
// one inference ago; alone, everything it touches was touched by its own previous run. The
// difference, for a cache of a given size, is what makes a layer slower in a model than alone.
//
// The model is an LRU cache at tensor granularity: a tensor is found again when the distinct
// bytes touched since its last use (the tensors of the layers in between, and those touched
// alongside it) are under the cache size; for a tensor larger than what is left of the cache
// the share of it beyond is missed. Graphs run inference after inference.

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
  bool operator==(const LayerTraffic& other) const = default;
};

/// The traffic of `layers` (each a list of nodes of `graph`, in execution order; tensors passed
/// between nodes of one layer stay inside it). A tensor whose size is unknown counts 0 bytes; an
/// input produced by a node in no listed layer counts as a graph input.
std::vector<LayerTraffic> LayerTrafficOf(const Graph& graph, const std::vector<std::vector<NodeId>>& layers);

/// Per layer: the bytes missed in a cache of `cache_bytes` inside the graph minus those missed by
/// the layer run alone again and again (negative when the graph leaves more in the cache, as for
/// an input its producer just wrote that the layer alone would not keep).
std::vector<double> ExtraMissBytes(const std::vector<LayerTraffic>& layers, std::int64_t cache_bytes);

/// "3:4096,-1:1024": the inputs as text (stored with in-graph measurements), and back. Parse
/// fails naming the part that does not read.
std::string InputsToText(const LayerTraffic& layer);
Expected<std::vector<std::pair<int, std::int64_t>>> ParseInputsText(const std::string& text);

}  // namespace latte
