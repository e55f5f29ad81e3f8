#pragma once
// Small ONNX models built in a test with libonnx's protobuf types, and the importer on them.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "import/import.h"
#include "import/onnx/onnx_importer.h"

namespace latte::testing {

using Ints = std::vector<std::int64_t>;

// Builds a ModelProto node by node.
class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

  // dims: -1 is a symbolic dim.
  void Input(const std::string& name, const Ints& dims, int type = onnx::TensorProto::FLOAT) {
    SetType(graph().add_input(), name, dims, type);
  }
  void Output(const std::string& name) { graph().add_output()->set_name(name); }
  onnx::TensorProto& Floats(const std::string& name, const Ints& dims, const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    for (auto d : dims) t->add_dims(d);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->set_raw_data(values.data(), values.size() * sizeof(float));
    return *t;
  }
  onnx::TensorProto& Int64s(const std::string& name, const Ints& dims, const Ints& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    for (auto d : dims) t->add_dims(d);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto v : values) t->add_int64_data(v);
    return *t;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  std::vector<std::uint8_t> Bytes() const {
    std::string s = model_.SerializeAsString();
    return {s.begin(), s.end()};
  }

  static void SetType(onnx::ValueInfoProto* v, const std::string& name, const Ints& dims, int type) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (auto d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param("N");
    }
  }

 private:
  onnx::ModelProto model_;
};

inline void SetInt(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetInts(onnx::NodeProto& n, const std::string& name, const Ints& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void SetFloat(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// A GRAPH attribute `name` of `node` (an If's "then_branch"), its body named `name`: a node of
/// its own graph, op `op`, reading `input` and writing `output` of shape `dims`, the body's output.
inline onnx::GraphProto& AddBody(onnx::NodeProto& node, const std::string& name, const std::string& op,
                                 const std::string& input, const std::string& output, const Ints& dims) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& body = *attr->mutable_g();
  body.set_name(name);
  auto* n = body.add_node();
  n->set_op_type(op);
  n->set_name(output + "_node");
  n->add_input(input);
  n->add_output(output);
  ModelBuilder::SetType(body.add_output(), output, dims, onnx::TensorProto::FLOAT);
  return body;
}

/// The ONNX importer alone (no Latte shape inference), and the whole import.
inline Expected<Graph> Import(const ModelBuilder& b, ImportOptions options = {}) { return ImportOnnx(b.Bytes(), options); }
inline Expected<Graph> ImportFull(const ModelBuilder& b, ImportOptions options = {}) {
  return ImportModelBytes(b.Bytes(), ModelFormat::kOnnx, options);
}

inline const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.name == name) return &n;
  return nullptr;
}

}  // namespace latte::testing
