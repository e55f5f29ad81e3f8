#pragma once
// The XNNPACK backend: runs single fp32 (or, lowered by the executor, int8) NHWC nodes with XNNPACK's operator API (create once,
// weights packed; setup + run on every call), threads from a pthreadpool.

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "run/backend.h"
#include "run/backend_registry.h"

struct pthreadpool;  // pthreadpool.h's opaque pool: kept out of this header

namespace latte {

class XnnpackBackend : public Backend {
 public:
  /// Initializes XNNPACK (once per process) and makes a pool of `options.num_threads`
  /// (none for 1 thread). Fails when XNNPACK cannot initialize on this machine.
  static Expected<std::unique_ptr<Backend>> Create(const RunOptions& options);

  /// "xnnpack".
  std::string_view Name() const override { return "xnnpack"; }
  /// "XNNPACK <Debian package version> (pthreadpool, N threads)".
  std::string Version() const override;
  /// fp32 and int8 (the nodes the executor lowered; see Supports); not bf16.
  Support RunsPrecision(Precision precision) const override;
  /// Yes only for fp32 NHWC nodes this backend runs correctly, and at --precision int8 for the
  /// int8 nodes of a lowered graph (run/int8_plan) of the kinds it has int8 operators for; else
  /// the precise reason ("xnnpack has no int8 softmax (qu8 only)").
  Support Supports(const Graph& graph, NodeId node) const override;
  /// Creates the XNNPACK operators for `node` (weights packed here); kUnsupported when
  /// Supports() says no.
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override;

 private:
  struct PoolDeleter {
    void operator()(pthreadpool* pool) const;
  };
  explicit XnnpackBackend(const RunOptions& options);

  RunOptions options_;
  std::unique_ptr<pthreadpool, PoolDeleter> pool_;  // null: run on the calling thread
};

/// Adds "xnnpack" to `registry` (asserts the name is free).
void RegisterXnnpackBackend(BackendRegistry& registry);

}  // namespace latte
