#pragma once
// The ONNX Runtime backend ("ort"): CPU execution provider. A whole graph (every node placed on
// ort) runs as one exported ONNX model, as ORT is meant to be used; a single node (kernel
// measurements, mixed placements) runs as a one-node model. libonnxruntime.so is loaded at run
// time, so a build without it still works and `--backend ort` says how to get it.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "run/backend.h"
#include "run/backend_registry.h"

namespace latte {

/// Where the ort backend loads libonnxruntime.so from: $LATTE_ORT_LIBRARY if set, else the
/// library CMake found (ORT_ROOT or .deps/onnxruntime); "" when the build found none.
std::string OrtLibraryPath();

/// Loads ONNX Runtime from `path` (once per path) and returns its version ("1.29.0"). Fails
/// with kNotFound saying how to get it when the file is missing or not a usable ONNX Runtime.
Expected<std::string> LoadOnnxRuntime(const std::string& path);

class OrtBackend : public Backend {
 public:
  /// Loads ONNX Runtime (see OrtLibraryPath) and keeps `options` for its sessions: intra-op
  /// threads = num_threads, inter-op 1, sequential execution, every graph optimization.
  static Expected<std::unique_ptr<Backend>> Create(const RunOptions& options);

  /// "ort".
  std::string_view Name() const override { return "ort"; }
  /// "ONNX Runtime 1.29.0 (CPU, N threads)".
  std::string Version() const override;
  /// Yes for fp32 nodes with an ONNX form (see ExportOnnx); else why not.
  Support Supports(const Graph& graph, NodeId node) const override;
  /// fp32 only: Latte hands ONNX Runtime fp32 models.
  Support RunsPrecision(Precision precision) const override;
  /// A session over the node exported alone.
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override;
  /// The activations folded into the op before them (ORT's level-2 Conv+activation fusion), and
  /// the residual kinds where its NCHWc pass fuses them ("conv2d+add@nchwc16", ir/nchwc_layout).
  std::vector<std::string> FusedByConstruction() const override;
  bool RunsWholeGraphs() const override { return true; }
  /// A session over the whole graph exported. Per-node times come from ORT's own profiler
  /// (run-level profiling), mapped back to Latte's nodes by the exported node names.
  Expected<std::unique_ptr<PreparedGraph>> PrepareGraph(const Graph& graph) override;

 private:
  OrtBackend(const RunOptions& options, std::string version) : options_(options), version_(std::move(version)) {}
  RunOptions options_;
  std::string version_;
};

/// One node event of ORT's profile of a run: the Latte node it came from (-1: a node ORT made
/// itself), its ONNX op type ("Conv", "ReorderOutput") and its duration.
struct OrtProfileEvent {
  NodeId owner = -1;
  std::string op;
  double us = 0;
  bool layout_transpose = false;  // an exporter's NHWC<->NCHW Transpose (IsOnnxLayoutTranspose)
};

/// Gives each event of one run (in run order) to a Latte node: node_us[owner] += us. ORT's own
/// nodes are given too, so that a run's node times add up to its kernels' time: a reorder into
/// its blocked layout (ReorderInput) to the node after it, a reorder out of it (ReorderOutput) to
/// the node before it, and a node ORT split a Latte node into (HardSwish runs as HardSigmoid and
/// Mul) to the first Latte node with no event of its own between the events' owned neighbours.
/// Reorders are also added to `layout.reorders` and the exporter's layout Transposes (given to
/// their own node) to `layout.transposes`: time a kernel alone spends that mostly vanishes inside
/// a model, where the blocked layout runs from kernel to kernel and neighbouring Transposes cancel.
void AttributeOrtEvents(const std::vector<OrtProfileEvent>& events, std::vector<double>& node_us, LayoutUs& layout);

/// Adds "ort" to `registry` (asserts the name is free).
void RegisterOrtBackend(BackendRegistry& registry);

}  // namespace latte
