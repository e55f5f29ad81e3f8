#pragma once
// The oneDNN backend: runs single fp32 NHWC nodes with oneDNN primitives (created once in
// Prepare, weights reordered once to the primitive's preferred layout; activations stay plain
// NHWC so nodes of different backends can share buffers). Threads: Debian's oneDNN uses OpenMP.
// At --precision bf16 it runs the graph the executor lowered (LowerPlanToBf16): bfloat16
// activations, weights packed as bfloat16, biases and norm parameters float32; a kind oneDNN has
// no bf16 kernel for here is refused "<kind> unsupported at bf16, because ...". At --precision
// int8 it runs the nodes the executor lowered to int8 (run/int8_plan) on oneDNN's s8 primitives
// (convolutions, fully-connected as matmul, add/sub/mul, pooling, means, clamps, activations,
// conversions, data movement), the quantization as oneDNN's scales, zero points and post-ops, never
// on oneDNN 2.6's AMX int8 kernels (they write past their output); another int8 kind is refused,
// and the executor keeps it fp32.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "run/backend.h"
#include "run/backend_registry.h"

namespace latte {

class OnednnBackend : public Backend {
 public:
  /// Sets the OpenMP thread count to `options.num_threads` and makes a CPU engine and stream.
  /// bf16 needs OnednnBf16Support(); else kUnsupported saying why.
  static Expected<std::unique_ptr<Backend>> Create(const RunOptions& options);
  ~OnednnBackend() override;

  /// "onednn".
  std::string_view Name() const override { return "onednn"; }
  /// "oneDNN <major.minor.patch> (OpenMP, N threads)".
  std::string Version() const override;
  /// Yes only for NHWC nodes this backend runs correctly at its precision; else the precise reason.
  Support Supports(const Graph& graph, NodeId node) const override;
  /// fp32, bf16 (per node, on a CPU with AVX-512 BF16) and int8 (per node).
  Support RunsPrecision(Precision precision) const override;
  /// Creates the primitives of `node` (weights reordered here); kUnsupported when Supports() says no.
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override;

  struct Impl;  // engine and stream: keeps dnnl.hpp out of this header

 private:
  explicit OnednnBackend(const RunOptions& options);
  RunOptions options_;
  std::unique_ptr<Impl> impl_;
};

/// Yes when oneDNN's effective CPU ISA has AVX-512 BF16 (dnnl_get_effective_cpu_isa), so bf16
/// primitives run on bf16 instructions; else no, naming the ISA it found lacking.
Support OnednnBf16Support();

/// The oneDNN implementation of each primitive a node this backend prepared runs, in order (empty
/// for another backend's node): which kernels oneDNN chose, for tests and probes.
std::vector<std::string> OnednnImplementations(const PreparedNode& node);

/// Adds "onednn" to `registry` (asserts the name is free).
void RegisterOnednnBackend(BackendRegistry& registry);

}  // namespace latte
