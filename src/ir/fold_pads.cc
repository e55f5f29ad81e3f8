#include "ir/fold_pads.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ir/node_rewrite.h"
#include "ir/op_params.h"

namespace latte {
namespace {

// The pad's [top, left, bottom, right] when it pads only the spatial dims of a rank-4 tensor in
// `nhwc` (else NCHW) layout with zeros; nothing otherwise.
std::optional<Padding2D> SpatialZeroPads(const Graph& graph, const Node& pad, bool nhwc) {
  if (pad.inputs.size() != 1 || pad.outputs.size() != 1) return std::nullopt;
  if (pad.attrs.GetString("mode", "constant") != "constant" || pad.attrs.GetFloat("value", 0.0) != 0.0) return std::nullopt;
  const Tensor& x = graph.tensor(pad.inputs[0]);
  auto pads = pad.attrs.GetInts("pads");
  if (x.shape.size() != 4 || !x.fully_known() || !pads || pads->size() != 8) return std::nullopt;
  if (std::any_of(pads->begin(), pads->end(), [](std::int64_t v) { return v < 0; })) return std::nullopt;
  const size_t h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
  for (size_t d = 0; d < 4; ++d)
    if (d != h && d != w && ((*pads)[d] != 0 || (*pads)[d + 4] != 0)) return std::nullopt;
  return Padding2D{(*pads)[h], (*pads)[w], (*pads)[h + 4], (*pads)[w + 4]};
}

}  // namespace

Graph FoldPadsIntoConvs(const Graph& graph, std::vector<std::vector<NodeId>>* sources,
                        const std::function<bool(const Node& pad, const Node& conv)>& allow) {
  const auto n = static_cast<NodeId>(graph.num_nodes());
  NodeRewrite rewrite(graph);
  for (NodeId i = 0; i < n; ++i) {
    Node& conv = rewrite.nodes[static_cast<size_t>(i)];
    if (conv.kind != OpKind::kConv2D && conv.kind != OpKind::kDepthwiseConv2D) continue;
    if (conv.inputs.empty() || conv.inputs[0] == kNoTensor) continue;
    const TensorId t = conv.inputs[0];
    const NodeId p = graph.Producer(t);
    if (p < 0 || rewrite.removed[static_cast<size_t>(p)]) continue;
    const Node& pad = graph.node(p);
    if (pad.kind != OpKind::kPad || graph.Consumers(t).size() != 1) continue;
    if (std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end()) continue;
    const std::string layout = conv.attrs.GetString("layout", "NHWC");
    if (layout != "NHWC" && layout != "NCHW") continue;
    std::optional<Padding2D> added = SpatialZeroPads(graph, pad, layout == "NHWC");
    if (!added) continue;
    // The conv's own pads, "same" resolved against the padded input it reads now.
    Expected<ConvParams> params = GetConvParams(graph, graph.node(i));
    if (!params.ok()) continue;
    if (allow && !allow(pad, graph.node(i))) continue;
    const Padding2D& own = params->pads;
    conv.inputs[0] = pad.inputs[0];
    conv.attrs.Set("padding", std::string("explicit"));
    conv.attrs.Set("pads", std::vector<std::int64_t>{own.top + added->top, own.left + added->left,
                                                     own.bottom + added->bottom, own.right + added->right});
    rewrite.Merge(i, p);
  }
  return rewrite.Finish(graph, sources);
}

}  // namespace latte
