#pragma once
// Folding a zero Pad of the spatial dims into the conv that reads it: the conv pads with zeros
// anyway, so a wider conv padding gives the same output without the padded copy. XNNPACK's
// subgraph and ONNX Runtime's graph optimizer both do this; the executor and prediction do it
// through the plan (run/graph_prep), so a predicted kernel is the conv that runs.

#include <functional>
#include <vector>

#include "ir/graph.h"

namespace latte {

/// Returns `graph` with each constant pad of value 0 whose pads touch only the height and width
/// of a rank-4 tensor, whose output is read by exactly one conv2d or depthwise_conv2d (as its
/// data input, in the same layout) and is not a graph output, folded into that conv: the conv
/// reads the pad's input with its own pads (after resolving "same") plus the pad's. Tensor ids
/// are unchanged. `sources`, when given, gets for each node of the result the ids of the nodes
/// of `graph` it stands for ({conv, pad} for a fold). `allow`, when given, must also say yes to
/// each (pad, conv) pair.
Graph FoldPadsIntoConvs(const Graph& graph, std::vector<std::vector<NodeId>>* sources = nullptr,
                        const std::function<bool(const Node& pad, const Node& conv)>& allow = {});

}  // namespace latte
