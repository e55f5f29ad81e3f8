#pragma once
// Tiny backends for testing the backend seam and the executor without a real kernel library.

#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "run/backend_registry.h"

namespace latte {

// A backend that runs relu only: enough to test the registry's contract.
class ReluOnlyBackend : public Backend {
 public:
  explicit ReluOnlyBackend(RunOptions options) : options_(options) {}
  std::string_view Name() const override { return "relu-only"; }
  std::string Version() const override { return "1.0 threads=" + std::to_string(options_.num_threads); }
  Support Supports(const Graph& graph, NodeId node) const override {
    if (graph.node(node).kind == OpKind::kRelu) return Support::Yes();
    return Support::No(std::string(OpName(graph.node(node).kind)) + " is not relu");
  }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override {
    if (!Supports(graph, node).ok()) return Unsupported(Supports(graph, node).why());
    class Prepared : public PreparedNode {
     public:
      Prepared(TensorId in, TensorId out, std::size_t n) : in_(in), out_(out), n_(n) {}
      Status Run(TensorBuffers& b) override {
        const float* x = b.as<float>(in_);
        float* y = b.mutable_as<float>(out_);
        for (std::size_t i = 0; i < n_; ++i) y[i] = x[i] > 0 ? x[i] : 0;
        return Status::Ok();
      }
     private:
      TensorId in_, out_;
      std::size_t n_;
    };
    const Node& n = graph.node(node);
    return std::unique_ptr<PreparedNode>(
        new Prepared(n.inputs[0], n.outputs[0], static_cast<std::size_t>(*graph.tensor(n.outputs[0]).num_elements())));
  }

 private:
  RunOptions options_;
};

// Runs sigmoid only (a second backend, for placement and fallback).
class SigmoidOnlyBackend : public Backend {
 public:
  std::string_view Name() const override { return "sigmoid-only"; }
  std::string Version() const override { return "1.0"; }
  Support Supports(const Graph& graph, NodeId node) const override {
    if (graph.node(node).kind == OpKind::kSigmoid) return Support::Yes();
    return Support::No(std::string(OpName(graph.node(node).kind)) + " is not sigmoid");
  }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override {
    if (!Supports(graph, node).ok()) return Unsupported(Supports(graph, node).why());
    class Prepared : public PreparedNode {
     public:
      Prepared(TensorId in, TensorId out, std::size_t n) : in_(in), out_(out), n_(n) {}
      Status Run(TensorBuffers& b) override {
        const float* x = b.as<float>(in_);
        float* y = b.mutable_as<float>(out_);
        for (std::size_t i = 0; i < n_; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
        return Status::Ok();
      }
     private:
      TensorId in_, out_;
      std::size_t n_;
    };
    const Node& n = graph.node(node);
    return std::unique_ptr<PreparedNode>(
        new Prepared(n.inputs[0], n.outputs[0], static_cast<std::size_t>(*graph.tensor(n.outputs[0]).num_elements())));
  }
};

/// Registers "relu-only" and, if asked, "sigmoid-only".
inline void RegisterToyBackends(BackendRegistry& registry, bool with_sigmoid) {
  EXPECT_TRUE(registry
                  .Register({"relu-only", "test backend",
                             [](const RunOptions& o) -> Expected<std::unique_ptr<Backend>> {
                               return std::unique_ptr<Backend>(new ReluOnlyBackend(o));
                             }})
                  .ok());
  if (with_sigmoid) {
    EXPECT_TRUE(registry
                    .Register({"sigmoid-only", "test backend",
                               [](const RunOptions&) -> Expected<std::unique_ptr<Backend>> {
                                 return std::unique_ptr<Backend>(new SigmoidOnlyBackend());
                               }})
                    .ok());
  }
}

}  // namespace latte
