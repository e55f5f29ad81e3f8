#pragma once
// The oneDNN backend: runs single fp32 NHWC nodes with oneDNN primitives (created once in
// Prepare, weights reordered once to the primitive's preferred layout; activations stay plain
// NHWC so nodes of different backends can share buffers). Threads: Debian's oneDNN uses OpenMP.

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "run/backend.h"
#include "run/backend_registry.h"

namespace latte {

class OnednnBackend : public Backend {
 public:
  /// Sets the OpenMP thread count to `options.num_threads` and makes a CPU engine and stream.
  static Expected<std::unique_ptr<Backend>> Create(const RunOptions& options);
  ~OnednnBackend() override;

  /// "onednn".
  std::string_view Name() const override { return "onednn"; }
  /// "oneDNN <major.minor.patch> (OpenMP, N threads)".
  std::string Version() const override;
  /// Yes only for fp32 NHWC nodes this backend runs correctly; else the precise reason.
  Support Supports(const Graph& graph, NodeId node) const override;
  /// Creates the primitives of `node` (weights reordered here); kUnsupported when Supports() says no.
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override;

  struct Impl;  // engine and stream: keeps dnnl.hpp out of this header

 private:
  explicit OnednnBackend(const RunOptions& options);
  RunOptions options_;
  std::unique_ptr<Impl> impl_;
};

/// Adds "onednn" to `registry` (asserts the name is free).
void RegisterOnednnBackend(BackendRegistry& registry);

}  // namespace latte
