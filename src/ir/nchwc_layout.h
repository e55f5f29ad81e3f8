#pragma once
// What ONNX Runtime's CPU provider makes of a float graph at its highest optimization level on
// x86: its NCHWc pass holds activations in blocks of channels and runs a residual add (and a relu
// after it) inside the conv that produced one operand. A kernel measured alone cannot show that
// fusion (its add's other operand is a graph input, never blocked), and the same add runs as a
// node of its own where an operand is not blocked (after a pad, say): whether ORT fuses depends on
// the graph around the add, so grouping asks this plan. The facts are those of ORT's
// nchwc_transformer (read, not copied): which ops it converts and when it fuses.

#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel.h"

namespace latte {

/// Per tensor and node of one graph, what the NCHWc pass does with a channel block of `block`.
struct NchwcPlan {
  int block = 0;
  std::vector<bool> blocked;       // per tensor: held in the blocked layout
  std::vector<bool> runs_blocked;  // per node: runs on blocked data (its output may be plain again after a clamp it carries)
  std::vector<NodeId> fused_into;  // per node: the conv that runs this add or activation inside it, or -1
  std::vector<bool> reads_plain;   // per node: a converted conv that reads its input in the plain layout (ConvReadsPlain)
  std::size_t fused_adds = 0;      // residual adds run inside a conv
};

/// The channel block ONNX Runtime's NCHWc pass uses on this CPU: 16 with AVX-512F, 8 on other
/// x86-64 CPUs, 0 where it has no such pass.
int HostNchwcBlock();

/// ORT 1.29's rule for a converted plain conv (its profiles: pose_landmark_lite's 8-channel
/// blocks): not grouped and with under a block of input channels, it reads its NCHW input as it
/// is; every other converted conv reads the blocked layout.
bool ConvReadsPlain(std::int64_t in_c, std::int64_t groups, std::int64_t block);

/// Walks `graph` (either layout: a graph in NHWC is read as ORT sees it once the exporter's
/// transposes around its spatial ops have cancelled) in topological order. A graph with a cycle
/// or a node whose shapes are unknown is walked as far as it can be read; an op it cannot read
/// holds nothing blocked. `block` must be 8 or 16.
Expected<NchwcPlan> PlanNchwc(const Graph& graph, int block);

/// True when ORT runs every follower of `chain` (its main node first) inside the main node,
/// a conv: the add that the pass fused into it, and a relu it fused after the add.
bool NchwcRunsAsOne(const NchwcPlan& plan, const std::vector<NodeId>& chain);

/// A layout change ONNX Runtime makes between the plain and the blocked layout: into the blocked
/// layout (ORT's ReorderInput) or out of it (ReorderOutput), of a rank-4 activation of `channels`
/// logical channels on a `height`×`width` map (0 for a tensor of another rank), `bytes` at whole
/// blocks of channels (what the blocked side holds).
struct NchwcReorder {
  bool into_blocked = false;
  std::int64_t channels = 0, height = 0, width = 0;
  std::int64_t bytes = 0;
  bool operator==(const NchwcReorder& other) const = default;
};

/// Per layer (each a list of `graph`'s nodes), the layout changes ONNX Runtime makes around it in
/// this graph, as `plan` places them: a ReorderInput into a converted conv or pool whose input is
/// plain (not into a conv that reads the plain layout as it is: NchwcPlan::reads_plain), counted
/// at the first layer that needs it; a ReorderOutput of a blocked tensor the layer writes that a
/// node running in the plain layout (or reading it as it is) reads, or that leaves the graph, once
/// per tensor. A kernel measured alone has its layout changes taken out (profile/campaign): these
/// are the ones a graph adds, which ORT's profile charges to the layer after (inputs) and before
/// (outputs).
std::vector<std::vector<NchwcReorder>> NchwcReorders(const Graph& graph, const NchwcPlan& plan,
                                                     const std::vector<std::vector<NodeId>>& layers);

/// True when a channel plane of the reorder's map (height × width floats) is a whole number of
/// 4 KiB pages and it moves more channels than an L1 set has ways (8): it then reads or writes
/// more planes at once than one set holds, every plane's row at the same set. ORT reordered 16
/// and 64 channels of 128×128 out at about 0.19 ms per MiB, against 0.03–0.07 at 120×120 and
/// 136×136; 8 channels of 128×128 or 256×256 at 0.04 (docs/notes/2026-11-29-session34.md).
bool NchwcReorderAliases(const NchwcReorder& reorder);

/// The one-kernel graph of a residual kind (IsResidualFusion; in "conv2d+add+relu6" ORT runs the
/// add inside the conv and the clamp as a node of its own) as ORT runs it in a model: BuildKernelGraph's, with the
/// add's other operand and the conv's input (of a block of channels or more) made by blocked ops
/// (1×1 convs from graph inputs of one channel) and the result read by a 1×1 conv (so the
/// exporter's layout transposes cancel around the kernel, as between a model's convs, and a relu
/// after the add stays inside the conv). `helpers` are those nodes, whose time is not the kernel's. kUnsupported when the pass would not convert
/// the kernel's conv (its channels not aligned to `block`: ORT runs conv and add apart, which
/// the plain kernels measure).
struct BlockedResidualGraph {
  Graph graph;
  std::vector<NodeId> helpers;
};
Expected<BlockedResidualGraph> BuildBlockedResidualGraph(const Kernel& kernel, int block, unsigned seed = 0);

}  // namespace latte
