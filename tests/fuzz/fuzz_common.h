#pragma once
// What both fuzz targets do with an input: what `latte inspect FILE` does with a hostile file.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "import/import.h"
#include "ir/cost.h"
#include "report/inspect_view.h"

namespace latte::fuzz {

[[noreturn]] inline void Bug(const std::string& what) {
  std::fprintf(stderr, "latte fuzz: %s\n", what.c_str());
  std::abort();  // libFuzzer saves the input as crash-*
}

/// An expected failure must say what went wrong, and never as kInternal (that means a bug).
inline void CheckError(const Status& status, const std::string& what) {
  if (status.message().empty()) Bug(what + " failed with an empty message");
  if (status.code() == StatusCode::kInternal) Bug(what + " failed with kInternal: " + status.message());
}

/// Imports the bytes as `format` (import, validation, shape inference). Failing with a Status
/// is the expected outcome for most inputs, but the Status must say what went wrong and must
/// not be kInternal (that means a bug). When the import succeeds, reads everything later layers
/// read: each node's tensors, its description and cost, and the inspect report as text and JSON.
/// A crash, sanitizer report, failed assert, uncaught exception or leak is a bug.
inline int ImportAndWalk(const std::uint8_t* data, std::size_t size, ModelFormat format) {
  Expected<Graph> graph = ImportModelBytes(std::span<const std::uint8_t>(data, size), format);
  if (!graph.ok()) {
    CheckError(graph.status(), "import");
    return 0;
  }
  const Graph& g = *graph;
  std::size_t sink = 0;  // keeps the reads from being optimized away
  auto touch = [&](TensorId id) {
    if (id == kNoTensor) return;
    const Tensor& t = g.tensor(id);  // .at(): an id out of range throws, which is a bug
    sink += t.name.size() + t.shape.size() + ShapeToString(t.shape, t.shape_known).size();
    if (auto bytes = t.num_bytes()) sink += static_cast<std::size_t>(*bytes);
    if (t.is_constant()) sink += t.data->size();
  };
  for (TensorId id : g.inputs) touch(id);
  for (TensorId id : g.outputs) touch(id);
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& node = g.node(id);
    for (TensorId t : node.inputs) touch(t);
    for (TensorId t : node.outputs) touch(t);
    sink += DescribeNode(g, id).size() + DescribeGeometry(g, node).size();
    Expected<NodeCost> cost = ComputeNodeCost(g, id);
    if (cost.ok()) sink += static_cast<std::size_t>(cost->macs);
    else if (cost.status().code() == StatusCode::kInternal) Bug("cost failed with kInternal: " + cost.status().message());
  }
  InspectView view(g, "fuzz-input");
  sink += view.Text().size() + latte::DumpJson(view.Json()).size();
  asm volatile("" : : "r"(sink));
  return 0;
}

}  // namespace latte::fuzz
