#pragma once
// Layout conversion: rewrites an NCHW (ONNX) graph into an equivalent NHWC graph, the only
// layout some backends (XNNPACK) run.

#include <functional>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// How ConvertToNhwc treats the graph beyond its defaults.
struct LayoutOptions {
  /// Nodes to leave in NCHW even when they have an NHWC form (a node run by a backend that wants
  /// NCHW): transposes are inserted at the boundary, as for any op without an NHWC form.
  std::function<bool(const Node&)> keep_nchw;
  /// Keeps every tensor of the source at its id (unused ones stay in the graph, unread) so that
  /// buffers filled by the source's tensor ids feed the converted graph unchanged.
  bool keep_tensor_ids = false;
};

/// Returns a copy of `graph` computing exactly the same outputs with every NCHW spatial op
/// (conv, pools, batch_norm, resize, depth/space) in NHWC: their rank-4 activations are
/// NHWC, conv weights are permuted to OHWI / 1HWO, per-channel constants of elementwise ops
/// are reshaped to broadcast over NHWC, and concat axes are remapped. Graph inputs and
/// outputs keep their NCHW shapes: explicit transpose nodes (named "...:nhwc" / "...:nchw")
/// convert at the boundary and wherever a tensor reaches an op that is not converted.
/// Fails with kUnsupported naming the node when an op cannot be converted (non-constant
/// conv weights, grouped transpose conv, unknown filter layout).
Expected<Graph> ConvertToNhwc(const Graph& graph, const LayoutOptions& options = {});

}  // namespace latte
