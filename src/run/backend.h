#pragma once
// The backend seam (XNNPACK's create → setup → run lifecycle, TFLite's providers): a backend
// says whether it can run a node, prepares it once (weights packed), then runs it many times.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/fuse_activations.h"
#include "ir/graph.h"
#include "run/tensor_buffers.h"

namespace latte {

/// What a run computes in. kBf16: activations and weights in bfloat16 between nodes, the graph's
/// inputs and outputs float32 (converted at the edges); kInt8: quantized operators.
enum class Precision { kFp32, kBf16, kInt8 };
/// Every precision, in the order commands list them.
inline constexpr Precision kAllPrecisions[] = {Precision::kFp32, Precision::kBf16, Precision::kInt8};
/// "fp32", "bf16", "int8": how flags, stores, packs and reports spell a precision.
std::string_view PrecisionName(Precision precision);
/// The precision `name` spells (PrecisionName's inverse); else kInvalidInput listing the names.
Expected<Precision> ParsePrecision(std::string_view name);

/// Samples of a graph's float inputs for --precision int8's calibration runs (--calibration-data),
/// by input name: an array holding one tensor of the input's shape, or several along a first
/// axis (Executor::Create splits and checks them against the graph).
struct CalibrationInputs {
  struct Array {
    std::string source;  // where it came from, for messages ("x.npy")
    std::vector<std::int64_t> shape;
    std::vector<float> data;  // row-major
  };
  std::map<std::string, Array> arrays;
};

/// How a backend runs: what every measurement records beside the backend's name and version.
struct RunOptions {
  int num_threads = 1;
  Precision precision = Precision::kFp32;
  /// --precision int8: the inputs its calibration runs on; null: generated inputs.
  std::shared_ptr<const CalibrationInputs> calibration;
};

/// Yes, or no with the reason ("transpose_conv2d with groups > 1"). "No" is a normal answer
/// (the node is valid, this backend cannot run it), unlike an error (the node is invalid).
class Support {
 public:
  static Support Yes() { return Support(true, ""); }
  static Support No(std::string why) { return Support(false, std::move(why)); }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

 private:
  Support(bool ok, std::string why) : ok_(ok), why_(std::move(why)) {}
  bool ok_;
  std::string why_;
};

/// One node, ready to run: weights packed, buffers bound on each Run.
class PreparedNode {
 public:
  virtual ~PreparedNode() = default;
  /// Reads the node's inputs from `buffers` and writes its outputs there.
  virtual Status Run(TensorBuffers& buffers) = 0;
};

/// Of a profiled run's node times, what a whole-graph backend spent changing layouts, in microseconds.
struct LayoutUs {
  double reorders = 0;    // the backend's own reorders into and out of its blocked layout (ORT's NCHWc)
  double transposes = 0;  // the exporter's NHWC <-> NCHW Transposes (a model's neighbouring pairs cancel)
  double total() const { return reorders + transposes; }
};

/// A whole graph, ready to run on one backend (ONNX Runtime runs models, not single nodes).
/// Run reads the graph inputs from `buffers` and writes the graph outputs there; the buffers of
/// intermediate tensors are left untouched (the backend keeps them inside).
class PreparedGraph {
 public:
  virtual ~PreparedGraph() = default;
  virtual Status Run(TensorBuffers& buffers) = 0;
  /// Runs once and adds each node's time in microseconds to `node_us` (one entry per node),
  /// as the backend's own profiler attributes it, with the time of nodes the backend made itself
  /// given to the nodes they serve. Of that, what the backend spent changing layouts between its
  /// nodes is also added to `layout`.
  virtual Status RunProfiled(TensorBuffers& buffers, std::vector<double>& node_us, LayoutUs& layout) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// "xnnpack", "onednn", "ort".
  virtual std::string_view Name() const = 0;
  /// Library version, recorded with every measurement.
  virtual std::string Version() const = 0;
  /// Whether this backend runs `precision` at all: the executor asks before an int8 run, so that a
  /// backend without int8 kernels is one "unsupported, because …" and not every node kept at
  /// fp32. Which nodes run at that precision is still Supports' answer. Default: fp32 only.
  virtual Support RunsPrecision(Precision precision) const {
    if (precision == Precision::kFp32) return Support::Yes();
    return Support::No(std::string(PrecisionName(precision)) + " unsupported on " + std::string(Name()) +
                       ", because this backend has no " + std::string(PrecisionName(precision)) + " kernels");
  }
  /// Whether this backend can run `node` of `graph` (shapes must be known).
  virtual Support Supports(const Graph& graph, NodeId node) const = 0;
  /// Prepares `node` once. Fails with kUnsupported when Supports() says no.
  virtual Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) = 0;
  /// The kernel kinds ("conv2d+relu6") this backend runs as one kernel by construction: fusion
  /// detection takes them as fused without timing them, and calibration measures each. Default:
  /// the activations the executor folds into the op before them for every backend.
  virtual std::vector<std::string> FusedByConstruction() const { return FoldedActivationKinds(); }
  /// True when PrepareGraph works: the executor then runs a graph whose every node is placed
  /// on this backend (and supported by it) as one PreparedGraph.
  virtual bool RunsWholeGraphs() const { return false; }
  /// Prepares the whole graph at once (default: unsupported).
  virtual Expected<std::unique_ptr<PreparedGraph>> PrepareGraph(const Graph& graph) {
    return Unsupported(std::string(Name()) + " runs single nodes only");
  }
};

}  // namespace latte
