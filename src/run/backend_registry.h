#pragma once
// Backends by name: each registers a factory (TFLite's provider pattern), main() registers the
// built-in ones explicitly, and commands create what the user names.

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "run/backend.h"
#include "run/graph_prep.h"

namespace latte {

/// A backend as registered: its name, a line of help, and how to create it.
struct BackendFactory {
  std::string name;         // what users type: --backend xnnpack
  std::string description;  // one line for --help
  std::function<Expected<std::unique_ptr<Backend>>(const RunOptions&)> create;
  /// The activation layout its kernels take: true, NHWC (an NCHW graph's spatial ops placed on it
  /// are converted, transposes inserted where it meets a backend that keeps the file's layout);
  /// false, the graph's own layout as the file has it (a whole-model runtime such as ONNX Runtime).
  bool takes_nhwc = false;
  /// The ops after which it runs a fused relu, relu6 or relu_n1_to_1 as a pass of its own. Where
  /// the clamp runs inside the op (XNNPACK and oneDNN clamp in every op's output loop; ONNX
  /// Runtime's FusedConv and FusedGemm) a kernel costs about the same with or without it, and a
  /// pack fits each kind on its clamp siblings' samples too (FitOptions::clamps_run_apart). ONNX
  /// Runtime runs an add's or a mul's as a Clip node of its own: +66% on a 56×56×64 add.
  std::set<OpKind> clamps_run_apart = {};
  /// The channel block of ONNX Runtime's NCHWc layout pass on this CPU (ir/nchwc_layout), 0 for a
  /// backend without one. Such a backend runs a residual add inside the conv before it only where
  /// the pass holds both operands blocked: its residual kinds are conditional fusion rules, and
  /// are measured with a blocked residual operand.
  int nchwc_block = 0;
  /// Its convs and fully connected kernels compute output channels a SIMD vector at a time
  /// (XNNPACK's and oneDNN's NHWC microkernels, ONNX Runtime's NCHWc convs), so that 8 channels
  /// cost what 16 do with AVX-512: a pack counts their work in whole vectors of channels
  /// (PredictorOptions::channel_tile). False for a table measured elsewhere (a GPU's).
  bool channels_in_vectors = false;
  /// Of those ops, the ones it computes otherwise, whose work is counted as is: ONNX Runtime's
  /// ConvTranspose is a GEMM over the input's pixels, then col2im, with no NCHWc kernel (its
  /// stores' transposed convs to 1 output channel ran at the MACs per second of those to 33).
  std::set<OpKind> channels_not_in_vectors = {};
};

class BackendRegistry {
 public:
  /// Fails if the name is taken.
  Status Register(BackendFactory info);
  /// Registers a backend built into Latte: its name taken already is a programming error (asserted).
  void RegisterBuiltin(BackendFactory info);
  /// Creates `name` with `options`; an unknown name fails listing the known ones.
  Expected<std::unique_ptr<Backend>> Create(const std::string& name, const RunOptions& options) const;
  /// Ok when `name` is registered; else the error Create gives (listing the known ones), without
  /// creating anything.
  Status CheckKnown(const std::string& name) const;
  std::vector<std::string> Names() const;
  /// The registered backends that take NHWC (BackendFactory::takes_nhwc): what graph plans convert for.
  NhwcBackends NhwcBackendNames() const;
  const BackendFactory* Find(const std::string& name) const;

 private:
  std::vector<BackendFactory> backends_;
};

}  // namespace latte
