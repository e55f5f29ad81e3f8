#pragma once
// GraphBuilder: builds small graphs in code (one-kernel graphs for profiling, test graphs).

#include <string>
#include <vector>

#include "ir/graph.h"

namespace latte {

class GraphBuilder {
 public:
  /// An activation fed by the caller (added to graph inputs).
  TensorId Input(const std::string& name, Shape shape, DataType dtype = DataType::kFloat32);
  /// A float32 constant with the given values (or zeros when `values` is empty).
  TensorId Constant(const std::string& name, Shape shape, std::vector<float> values = {});
  /// An int64 constant (shapes, axes).
  TensorId ConstantInts(const std::string& name, std::vector<std::int64_t> values);
  /// Adds a node writing `num_outputs` new activations (shape left to inference); returns them.
  std::vector<TensorId> Op(OpKind kind, const std::string& name, std::vector<TensorId> inputs, Attributes attrs = {},
                           int num_outputs = 1);
  /// Adds a node writing one output and returns it.
  TensorId Op1(OpKind kind, const std::string& name, std::vector<TensorId> inputs, Attributes attrs = {}) {
    return Op(kind, name, std::move(inputs), std::move(attrs), 1)[0];
  }
  /// Marks graph outputs, sorts, validates and infers shapes.
  Expected<Graph> Finish(std::vector<TensorId> outputs);
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
};

}  // namespace latte
