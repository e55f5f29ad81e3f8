#pragma once
// Kernels of a graph: the canonical Kernel of a group of nodes and a graph grouped into kernels by
// fusion rules (ir/fusion_rules.h; kernel_grouping.cc), and the inverse: a runnable graph holding
// a single Kernel, or kernels joined into one graph (what profiling measures; kernel_graph.cc).

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/fusion_rules.h"
#include "ir/graph.h"
#include "ir/kernel.h"

namespace latte {

/// The canonical Kernel of `nodes`: nodes[0] is the main op, the rest its fused followers in
/// order (each reads the previous one's output; unary activations, or binary elementwise ops whose
/// other operand has the output's shape; a follower clip with the bounds of relu, relu6 or relu_n1_to_1
/// is listed as that activation). Params are exactly those documented in kernel.h,
/// layout-free (NCHW graphs — any node with layout "NCHW" — are reported in NHWC terms; ranks
/// below 4 padded with leading 1s). kUnsupported, naming the node and why, for opaque nodes,
/// unknown shapes, ranks above 4 and kinds with no kernel family; kInvalidInput for a list that
/// is not a chain.
Expected<Kernel> KernelOfNodes(const Graph& graph, const std::vector<NodeId>& nodes);

/// One kernel of a graph and the nodes it covers (main node first).
struct KernelGroup {
  Kernel kernel;
  std::vector<NodeId> nodes;
};

/// A node in no kernel, and why.
struct UncoveredNode {
  NodeId node = -1;
  std::string op;   // NodeOpName(): "conv2d", or the file's name for an opaque op
  std::string why;  // the reason KernelOfNodes gave
};

/// A graph split into kernels: every node is in exactly one group or in `uncovered`.
struct KernelGrouping {
  std::vector<KernelGroup> kernels;  // in a topological order of the kernels
  std::vector<UncoveredNode> uncovered;
};

/// True when a node of `graph` says its layout is NCHW (an ONNX file's graph, or one laid out for
/// a backend that keeps it); false for NHWC graphs and graphs with no spatial node.
bool IsNchwGraph(const Graph& graph);

/// Walks the nodes in topological order; each node not yet taken becomes a main node and absorbs
/// its follower chain while the follower is the single consumer of the previous output, that output
/// is not a graph output, and the resulting kind is allowed by `rules` (a conditional rule where
/// ir/nchwc_layout's plan of this graph runs the chain as one). Fails only on a cycle.
Expected<KernelGrouping> GroupIntoKernels(const Graph& graph, const FusionRules& rules);

/// The same with the decision as a function: may `chain` (main node first) run as one kernel of
/// `kind`? (The Pareto search fuses only nodes placed on one backend, by that backend's rules.)
using FusionPredicate = std::function<bool(const std::vector<NodeId>& chain, const std::string& kind)>;
Expected<KernelGrouping> GroupIntoKernels(const Graph& graph, const FusionPredicate& may_fuse);

/// A runnable graph holding exactly `kernel`: NHWC float32 (logic kernels bool; a where's condition
/// a bool input, a gather's table a constant and its indices an int64 input), constant weights and bias with
/// deterministic random values from `seed`, activations (and a fused add's other operand) as graph
/// inputs, a fused activation as the main node's "activation" attribute when the main op can carry
/// it, shapes inferred, Validate() ok. KernelOfNodes(result, all nodes) == kernel.
/// kInvalidInput naming the param for missing, zero/negative or inconsistent params and for tensors
/// above 2^31 elements; kUnsupported for kernels of another dtype (float32; bool for logic) and kinds
/// with no family.
Expected<Graph> BuildKernelGraph(const Kernel& kernel, unsigned seed = 0);

/// The kernel whose graph holds `kernel`'s tensors as a runtime that keeps images NCHW holds them
/// (ONNX Runtime: an ONNX model's own layout, and a TFLite model's once its optimizer has pushed
/// the exporter's layout transposes through the elementwise ops and cancelled them). Key params
/// are NHWC; for a binary kernel and a reduction of an image (h and w above 1: a rank below 4,
/// padded with leading 1s, is not one) the dims are permuted to n c h w and the reduced axes with
/// them, because which dims are contiguous is what their time depends on: a squeeze-and-excite
/// multiply of a 72×128×16 map by its 16 channel weights is 9,216 rows of 16 in NHWC and 16 rows
/// of 9,216 in NCHW, 6× apart on ONNX Runtime. Other kernels are returned as they are.
Kernel WithNchwTensors(const Kernel& kernel);

/// A kernel of a joined graph and where its activation inputs come from: from[i] is, for the i-th
/// graph input of the kernel's own graph (BuildKernelGraph), the index of the earlier kernel
/// whose output it reads, or -1 for a graph input of the joined graph. Missing entries are -1.
struct JoinedKernel {
  Kernel kernel;
  std::vector<int> from;
};

/// The kernels' graphs joined as `from` says, in order (kernel i's weights seeded with i); the
/// last kernel's output is the output. kInvalidInput for a kernel reading itself or a later one,
/// or whose input does not match the shape of the output it reads (a commutative kernel's two
/// sources are taken swapped when only that order matches: a network may wire its smaller
/// operand first, its kernel is keyed larger first). `kernel_nodes`, when given,
/// receives each kernel's nodes in the joined graph.
Expected<Graph> JoinKernels(const std::vector<JoinedKernel>& kernels, std::vector<std::vector<NodeId>>* kernel_nodes = nullptr);

}  // namespace latte
