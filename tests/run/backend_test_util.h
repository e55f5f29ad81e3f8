#pragma once
// What the per-backend op tests share: random data, attribute lists, and running a graph node by
// node on one backend.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "run/backend.h"
#include "run/reference_ops.h"

namespace latte::testing {

using reference::Floats;

/// `n` uniform values in [lo, hi) from a fixed seed.
inline Floats Random(std::int64_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

/// An attribute list written inline: Attrs({{"strides", Ints{2, 2}}, {"padding", "same"}}).
inline Attributes Attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.Set(name, value);
  return a;
}

/// Runs every node of `graph` on `backend`, each twice (buffers must be rebound on every run),
/// with `inputs` for the graph inputs in order; returns the first graph output. Records a test
/// failure (and returns {}) when a node is unsupported or fails.
inline Floats RunOnBackend(Backend& backend, const Graph& graph, const std::vector<Floats>& inputs) {
  auto buffers = TensorBuffers::Allocate(graph);
  if (!buffers.ok()) {
    ADD_FAILURE() << buffers.status().message();
    return {};
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorId id = graph.inputs[i];
    EXPECT_EQ(buffers->bytes(id), inputs[i].size() * sizeof(float)) << "input " << i;
    std::copy(inputs[i].begin(), inputs[i].end(), buffers->mutable_as<float>(id));
  }
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    Support support = backend.Supports(graph, n);
    if (!support.ok()) {
      ADD_FAILURE() << DescribeNode(graph, n) << " not supported: " << support.why();
      return {};
    }
    auto prepared = backend.Prepare(graph, n);
    if (!prepared.ok()) {
      ADD_FAILURE() << DescribeNode(graph, n) << ": " << prepared.status().message();
      return {};
    }
    for (int run = 0; run < 2; ++run) {
      Status status = (*prepared)->Run(*buffers);
      if (!status.ok()) {
        ADD_FAILURE() << DescribeNode(graph, n) << ": " << status.message();
        return {};
      }
    }
  }
  const TensorId out = graph.outputs[0];
  const float* data = buffers->as<float>(out);
  return Floats(data, data + buffers->bytes(out) / sizeof(float));
}

/// Max abs error ≤ 1e-4 of the output's scale (its largest magnitude, at least 1).
inline void ExpectClose(const Floats& got, const Floats& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 1.0f, worst = 0.0f;
  size_t at = 0;
  for (float v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    const float err = std::abs(got[i] - want[i]);
    if (!(err <= worst)) worst = err, at = i;
  }
  EXPECT_LE(worst, 1e-4f * scale) << what << ": element " << at << " is " << got[at] << ", expected " << want[at];
}

}  // namespace latte::testing
