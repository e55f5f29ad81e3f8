#include "ir/graph_builder.h"

#include <cstring>

#include "ir/shape_inference.h"

namespace latte {

TensorId GraphBuilder::Input(const std::string& name, Shape shape, DataType dtype) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.shape_known = true;
  t.dtype = dtype;
  TensorId id = graph_.AddTensor(std::move(t));
  graph_.inputs.push_back(id);
  return id;
}

TensorId GraphBuilder::Constant(const std::string& name, Shape shape, std::vector<float> values) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.shape_known = true;
  t.dtype = DataType::kFloat32;
  auto n = static_cast<size_t>(ShapeElements(t.shape).value_or(0));
  if (values.empty()) values.assign(n, 0.0f);
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(values.size() * sizeof(float));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  t.data = std::move(bytes);
  return graph_.AddTensor(std::move(t));
}

TensorId GraphBuilder::ConstantInts(const std::string& name, std::vector<std::int64_t> values) {
  Tensor t;
  t.name = name;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.shape_known = true;
  t.dtype = DataType::kInt64;
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(values.size() * sizeof(std::int64_t));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  t.data = std::move(bytes);
  return graph_.AddTensor(std::move(t));
}

std::vector<TensorId> GraphBuilder::Op(OpKind kind, const std::string& name, std::vector<TensorId> inputs,
                                       Attributes attrs, int num_outputs) {
  Node node;
  node.kind = kind;
  node.name = name;
  node.source_op = std::string(OpName(kind));
  node.attrs = std::move(attrs);
  node.inputs = std::move(inputs);
  for (int i = 0; i < num_outputs; ++i) {
    Tensor t;
    t.name = num_outputs == 1 ? name : name + ":" + std::to_string(i);
    // The data input's dtype (where's: x, input 1) unless the kind fixes its own (comparisons).
    const size_t data = kind == OpKind::kWhere ? 1 : 0;
    t.dtype = FixedOutputType(kind);
    if (t.dtype == DataType::kUnknown)
      t.dtype = node.inputs.size() <= data || node.inputs[data] == kNoTensor ? DataType::kFloat32
                                                                              : graph_.tensor(node.inputs[data]).dtype;
    node.outputs.push_back(graph_.AddTensor(std::move(t)));
  }
  std::vector<TensorId> outputs = node.outputs;
  graph_.AddNode(std::move(node));
  return outputs;
}

Expected<Graph> GraphBuilder::Finish(std::vector<TensorId> outputs) {
  graph_.outputs = std::move(outputs);
  LATTE_RETURN_IF_ERROR(graph_.Validate());
  LATTE_RETURN_IF_ERROR(graph_.SortTopologically());
  LATTE_RETURN_IF_ERROR(InferShapes(graph_));
  return graph_;
}

}  // namespace latte
