#include "import/onnx/onnx_importer.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "import/onnx/onnx_attributes.h"
#include "import/onnx/onnx_folding.h"
#include "import/onnx/onnx_if.h"
#include "import/onnx/onnx_import_state.h"
#include "import/onnx/onnx_node_mapper.h"
#include "import/onnx/onnx_shape_inference.h"
#include "import/onnx/onnx_tensor.h"
#include "ir/shape_inference.h"

namespace latte {
namespace {

using namespace onnx_import;  // NOLINT: this file is the importer's driver

// --- checks on the raw model, before anything trusts it ----------------------------------

Status CheckInline(const onnx::TensorProto& tensor, const std::string& name) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL || tensor.external_data_size() > 0)
    return Unsupported("tensor '" + name + "' stores its data in an external file, which Latte does not read");
  return Status::Ok();
}

// Refuses external data anywhere (initializers, attributes, subgraphs): Latte never opens a
// path a model names.
Status CheckInlineData(const onnx::GraphProto& graph) {
  for (const auto& t : graph.initializer()) LATTE_RETURN_IF_ERROR(CheckInline(t, t.name()));
  for (const auto& s : graph.sparse_initializer()) {
    LATTE_RETURN_IF_ERROR(CheckInline(s.values(), s.values().name()));
    LATTE_RETURN_IF_ERROR(CheckInline(s.indices(), s.values().name()));
  }
  for (const auto& node : graph.node()) {
    const std::string fallback = NodeName(node);
    for (const auto& attr : node.attribute()) {
      if (attr.has_t()) LATTE_RETURN_IF_ERROR(CheckInline(attr.t(), attr.t().name().empty() ? fallback : attr.t().name()));
      for (const auto& t : attr.tensors()) LATTE_RETURN_IF_ERROR(CheckInline(t, t.name().empty() ? fallback : t.name()));
      if (attr.has_sparse_tensor()) LATTE_RETURN_IF_ERROR(CheckInline(attr.sparse_tensor().values(), fallback));
      if (attr.has_g()) LATTE_RETURN_IF_ERROR(CheckInlineData(attr.g()));
      for (const auto& g : attr.graphs()) LATTE_RETURN_IF_ERROR(CheckInlineData(g));
    }
  }
  return Status::Ok();
}

// Names: present, each value defined once, every node input and graph output defined.
Status CheckStructure(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, std::string> defined;  // value → what defines it
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const std::string& name = graph.initializer(i).name();
    if (name.empty()) return InvalidInput("initializer " + std::to_string(i) + " has no name");
    if (!defined.emplace(name, "an initializer").second) return InvalidInput("initializer '" + name + "' is defined twice");
  }
  if (graph.sparse_initializer_size() > 0)
    return Unsupported("sparse initializer '" + graph.sparse_initializer(0).values().name() + "' is not supported by Latte");
  std::unordered_set<std::string> inputs;
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    if (name.empty()) return InvalidInput("graph input " + std::to_string(i) + " has no name");
    if (!inputs.insert(name).second) return InvalidInput("graph input '" + name + "' is listed twice");
    defined.emplace(name, "a graph input");  // an initializer of the same name is its default
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (node.op_type().empty()) return InvalidInput("node " + std::to_string(i) + " '" + node.name() + "' has no op_type");
    bool any_output = false;
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      any_output = true;
      auto [it, fresh] = defined.emplace(out, "node " + std::to_string(i));
      if (!fresh)
        return InvalidInput(DescribeOnnxNode(node, i) + ": output '" + out + "' is already defined by " + it->second);
    }
    if (!any_output) return InvalidInput(DescribeOnnxNode(node, i) + " has no outputs");
  }
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& in : graph.node(i).input())
      if (!in.empty() && !defined.count(in))
        return InvalidInput(DescribeOnnxNode(graph.node(i), i) + ": input '" + in +
                            "' is not produced by any node, initializer or graph input");
  for (int i = 0; i < graph.output_size(); ++i) {
    const std::string& name = graph.output(i).name();
    if (name.empty()) return InvalidInput("graph output " + std::to_string(i) + " has no name");
    if (!defined.count(name))
      return InvalidInput("graph output '" + name + "' is not produced by any node, initializer or graph input");
  }
  return Status::Ok();
}

Expected<std::int64_t> DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& import : model.opset_import())
    if (IsDefaultDomain(import.domain())) {
      if (import.version() < 1) return InvalidInput("model imports version " + std::to_string(import.version()) + " of the ONNX operator set");
      return import.version();
    }
  if (model.opset_import_size() == 0 && model.ir_version() >= 3)
    return InvalidInput("model has no opset_import (truncated or corrupted file?)");
  for (const auto& node : model.graph().node())
    if (IsDefaultDomain(node.domain()) && model.opset_import_size() > 0)
      return InvalidInput("model uses ONNX ops but imports no version of the ONNX operator set");
  return 1;  // IR version < 3 files predate opset_import: opset 1
}

// --- input shapes and ONNX's shape inference ---------------------------------------------

// Writes the caller's input shapes (or batch 1 for an unknown leading dim) into the model so
// that ONNX's inference starts from them. Returns true when a fixed dim the file declared
// changed: the file's other declared shapes are stale then.
bool ApplyInputShapes(onnx::GraphProto& graph, const ImportOptions& options) {
  std::unordered_set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  bool changed = false;
  for (auto& input : *graph.mutable_input()) {
    if (initializers.count(input.name())) continue;
    auto it = options.input_shapes.find(input.name());
    if (it == options.input_shapes.end()) {
      if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
      auto* dims = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (dims->dim_size() > 0 && (!dims->dim(0).has_dim_value() || dims->dim(0).dim_value() < 0))
        dims->mutable_dim(0)->set_dim_value(1);
      continue;
    }
    if (input.type().has_tensor_type() || !input.has_type()) {
      auto* tensor_type = input.mutable_type()->mutable_tensor_type();
      if (tensor_type->has_shape()) {
        const auto& old = tensor_type->shape();
        if (old.dim_size() != static_cast<int>(it->second.size())) changed = true;
        for (int d = 0; d < old.dim_size() && !changed; ++d)
          if (old.dim(d).has_dim_value() && old.dim(d).dim_value() != it->second[static_cast<size_t>(d)]) changed = true;
      }
      auto* dims = tensor_type->mutable_shape();
      dims->clear_dim();
      for (std::int64_t d : it->second) {
        auto* dim = dims->add_dim();
        if (d >= 0) dim->set_dim_value(d);
      }
    }
  }
  return changed;
}

void ForgetDeclaredShapes(onnx::GraphProto& graph) {
  for (auto& v : *graph.mutable_value_info())
    if (v.type().has_tensor_type()) v.mutable_type()->mutable_tensor_type()->clear_shape();
  for (auto& v : *graph.mutable_output())
    if (v.type().has_tensor_type()) v.mutable_type()->mutable_tensor_type()->clear_shape();
}

// One --input-value text as a value of `type`, appended to `t`'s typed data.
Status AppendValue(onnx::TensorProto& t, DataType type, const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& what) { return InvalidInput(flag + ": '" + text + "' is not " + what); };
  if (type == DataType::kBool) {
    if (text != "true" && text != "false" && text != "1" && text != "0") return bad("a bool (true, false, 1 or 0)");
    t.add_int32_data(text == "true" || text == "1" ? 1 : 0);
    return Status::Ok();
  }
  if (type == DataType::kFloat32 || type == DataType::kFloat64) {
    const std::string what = std::string("a finite ") + (type == DataType::kFloat32 ? "float32" : "float64");
    char* end = nullptr;
    const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return bad(what);
    if (type == DataType::kFloat64) {
      t.add_double_data(v);
    } else {
      if (std::fabs(v) > std::numeric_limits<float>::max()) return bad(what);
      t.add_float_data(static_cast<float>(v));
    }
    return Status::Ok();
  }
  std::int64_t v = 0, lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  switch (type) {
    case DataType::kInt8: lo = -128, hi = 127; break;
    case DataType::kUInt8: lo = 0, hi = 255; break;
    case DataType::kInt16: lo = -32768, hi = 32767; break;
    case DataType::kInt32: lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(); break;
    case DataType::kInt64: break;
    default: return Unsupported(flag + ": the input is " + std::string(DataTypeName(type)) +
                                "; --input-value takes integer, bool, float32 and float64 inputs");
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    return bad((type == DataType::kUInt8 ? "a " : "an ") + std::string(DataTypeName(type)));
  if (type == DataType::kInt64) t.add_int64_data(v);
  else t.add_int32_data(static_cast<std::int32_t>(v));
  return Status::Ok();
}

// Turns each input given with --input-value into an initializer holding that value (after
// ApplyInputShapes: the value must fill the input's shape as the import sees it).
Status ApplyInputValues(onnx::GraphProto& graph, const ImportOptions& options) {
  std::unordered_set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& [name, texts] : options.input_values) {
    const std::string flag = "--input-value " + name;
    int found = -1;
    std::string inputs;
    for (int i = 0; i < graph.input_size(); ++i) {
      if (initializers.count(graph.input(i).name())) continue;
      if (graph.input(i).name() == name) found = i;
      inputs += (inputs.empty() ? "" : ", ") + graph.input(i).name();
    }
    if (found < 0) return InvalidInput("--input-value names '" + name + "', but the model's inputs are: " + inputs);
    const onnx::TypeProto& type = graph.input(found).type();
    std::optional<Shape> shape = type.has_tensor_type() ? ShapeFromType(type) : std::nullopt;
    if (!shape) return InvalidInput(flag + ": input '" + name + "' has unknown rank; give it with --input-shape " + name + "=...");
    for (std::int64_t d : *shape)
      if (d < 0)
        return InvalidInput(flag + ": input '" + name + "' has shape " + ShapeToString(*shape) +
                            " with unknown dims; give it with --input-shape " + name + "=...");
    const std::int64_t n = ShapeElements(*shape).value_or(-1);
    if (n != static_cast<std::int64_t>(texts.size()))
      return InvalidInput(flag + ": " + std::to_string(texts.size()) + (texts.size() == 1 ? " value" : " values") +
                          " given, but input '" + name + "' of shape " + ShapeToString(*shape) + " holds " + std::to_string(n));
    onnx::TensorProto value;
    value.set_name(name);
    value.set_data_type(type.tensor_type().elem_type());
    for (std::int64_t d : *shape) value.add_dims(d);
    const DataType dtype = DataTypeFromOnnx(type.tensor_type().elem_type());
    for (const std::string& text : texts) LATTE_RETURN_IF_ERROR(AppendValue(value, dtype, text, flag));
    *graph.add_initializer() = std::move(value);
    graph.mutable_input()->DeleteSubrange(found, 1);
  }
  return Status::Ok();
}

// --- building the graph ------------------------------------------------------------------

// Node indices with producers before consumers (file order where it is valid already);
// nodes on a cycle come last, in file order, for Graph::SortTopologically to report.
std::vector<int> NodeOrder(const onnx::GraphProto& graph) {
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& out : graph.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    for (const auto& in : graph.node(i).input()) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end()) continue;
      ++pending[static_cast<size_t>(i)];
      users[static_cast<size_t>(it->second)].push_back(i);
    }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  std::vector<bool> placed(static_cast<size_t>(n), false);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    placed[static_cast<size_t>(i)] = true;
    for (int u : users[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
  }
  for (int i = 0; i < n; ++i)
    if (!placed[static_cast<size_t>(i)]) order.push_back(i);
  return order;
}

Tensor ValueTensor(const std::string& name, const onnx::TypeProto* type) {
  Tensor t;
  t.name = name;
  t.dtype = DataType::kUnknown;
  if (type) {
    t.dtype = DataTypeFromType(*type);
    if (auto shape = ShapeFromType(*type)) {
      t.shape = *shape;
      t.shape_known = true;
    }
  }
  return t;
}

// A Constant node's value becomes its output's constant data.
Status SetConstant(ImportState& state, const onnx::NodeProto& node, int index) {
  if (node.output_size() != 1 || node.output(0).empty())
    return InvalidInput(DescribeOnnxNode(node, index) + ": a Constant must have exactly one output");
  const std::string& name = node.output(0);
  NodeAttributes attrs(node);
  Tensor value;
  value.name = name;
  value.shape_known = true;
  auto set = [&](DataType type, Shape shape, auto values) {
    value.dtype = type;
    value.shape = std::move(shape);
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(values.size() * sizeof(values[0]));
    if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
    value.data = std::move(bytes);
  };
  if (attrs.Has("value")) {
    auto t = attrs.Tensor("value");
    if (!t.ok()) return t.status().WithContext(DescribeOnnxNode(node, index));
    auto decoded = TensorFromProto(**t, name);
    if (!decoded.ok()) return decoded.status().WithContext(DescribeOnnxNode(node, index));
    value = std::move(*decoded);
  } else if (attrs.Has("value_float")) {
    auto v = attrs.Float("value_float", 0);
    if (!v.ok()) return v.status().WithContext(DescribeOnnxNode(node, index));
    set(DataType::kFloat32, {}, std::vector<float>{static_cast<float>(*v)});
  } else if (attrs.Has("value_floats")) {
    auto v = attrs.Floats("value_floats");
    if (!v.ok()) return v.status().WithContext(DescribeOnnxNode(node, index));
    std::vector<float> floats((*v)->begin(), (*v)->end());
    set(DataType::kFloat32, {static_cast<std::int64_t>(floats.size())}, floats);
  } else if (attrs.Has("value_int")) {
    auto v = attrs.Int("value_int", 0);
    if (!v.ok()) return v.status().WithContext(DescribeOnnxNode(node, index));
    set(DataType::kInt64, {}, std::vector<std::int64_t>{*v});
  } else if (attrs.Has("value_ints")) {
    auto v = attrs.Ints("value_ints");
    if (!v.ok()) return v.status().WithContext(DescribeOnnxNode(node, index));
    set(DataType::kInt64, {static_cast<std::int64_t>((*v)->size())}, **v);
  } else if (attrs.Has("value_string")) {
    set(DataType::kString, {}, std::vector<std::uint8_t>{});
  } else if (const auto* s = attrs.Find("value_strings")) {
    set(DataType::kString, {s->strings_size()}, std::vector<std::uint8_t>{});
  } else if (attrs.Has("sparse_value")) {
    Node opaque;
    opaque.kind = OpKind::kOpaque;
    opaque.name = NodeName(node);
    opaque.source_op = SourceOpName(node);
    opaque.unsupported_reason = "Constant with a sparse_value";
    opaque.outputs = {state.values.at(name)};
    state.graph.AddNode(std::move(opaque));
    return Status::Ok();
  } else {
    return InvalidInput(DescribeOnnxNode(node, index) + ": Constant has no value");
  }
  Tensor& out = state.graph.mutable_tensor(state.values.at(name));
  out.dtype = value.dtype;
  out.shape = std::move(value.shape);
  out.shape_known = true;
  out.data = std::move(value.data);
  return Status::Ok();
}

// Keeps the tensors something still uses (dropping the constants that became attributes or
// were folded) and the nodes not folded away; renumbers ids.
Graph Compact(Graph& graph, const std::vector<bool>& removed) {
  std::vector<bool> used(graph.num_tensors(), false);
  auto mark = [&](TensorId t) {
    if (t != kNoTensor) used[static_cast<size_t>(t)] = true;
  };
  for (TensorId t : graph.inputs) mark(t);
  for (TensorId t : graph.outputs) mark(t);
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    if (n < removed.size() && removed[n]) continue;
    for (TensorId t : graph.node(static_cast<NodeId>(n)).inputs) mark(t);
    for (TensorId t : graph.node(static_cast<NodeId>(n)).outputs) mark(t);
  }
  Graph out;
  out.name = graph.name;
  out.source_format = graph.source_format;
  std::vector<TensorId> remap(graph.num_tensors(), kNoTensor);
  for (size_t t = 0; t < graph.num_tensors(); ++t)
    if (used[t]) remap[t] = out.AddTensor(std::move(graph.mutable_tensor(static_cast<TensorId>(t))));
  auto map = [&](TensorId t) { return t == kNoTensor ? kNoTensor : remap[static_cast<size_t>(t)]; };
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    if (n < removed.size() && removed[n]) continue;
    Node node = std::move(graph.mutable_node(static_cast<NodeId>(n)));
    for (TensorId& t : node.inputs) t = map(t);
    for (TensorId& t : node.outputs) t = map(t);
    out.AddNode(std::move(node));
  }
  for (TensorId t : graph.inputs) out.inputs.push_back(map(t));
  for (TensorId t : graph.outputs) out.outputs.push_back(map(t));
  return out;
}

// A node whose value the import computed (FoldConstantNode), to write back into the model.
struct FoldedNode {
  int index;
  Tensor value;
};

// Turns a folded node into a Constant holding its value, so that ONNX's inference (whose
// data propagation does not cover every opset) sees it on the next round.
void ReplaceWithConstant(onnx::NodeProto& node, const Tensor& value) {
  node.clear_input();
  node.clear_attribute();
  node.clear_domain();
  node.set_op_type("Constant");
  auto* attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = attr->mutable_t();
  t->set_name(node.output(0));
  for (std::int64_t d : value.shape) t->add_dims(d);
  t->set_data_type(OnnxTypeOf(value.dtype).value());  // folded values have ONNX types
  t->set_raw_data(value.data->data(), value.data->size());
}

// ONNX's shape inference stops at a Reshape whose shape is computed (its data propagation does
// not reach through every op), so what follows it has no shape in this round's types. Latte's own
// inference fills in the output shapes of the nodes added from `first` on that ONNX left unknown,
// from this round's shapes and constants (a shape subgraph folded just before), so that a Shape
// reading them folds in this round instead of the next: an exported transformer's layers then
// fold in a few rounds, not two a layer. What Latte cannot infer yet stays unknown here; the
// import's inference after the last round says so.
void InferWhatOnnxLeft(Graph& graph, size_t first) {
  for (size_t n = first; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (node.kind == OpKind::kOpaque) continue;
    auto unknown = [&](TensorId t) { return t != kNoTensor && !graph.tensor(t).fully_known(); };
    if (std::none_of(node.outputs.begin(), node.outputs.end(), unknown) ||
        std::any_of(node.inputs.begin(), node.inputs.end(), unknown))
      continue;
    auto shapes = InferNodeShapes(graph, static_cast<NodeId>(n));
    if (!shapes.ok() || shapes->size() != node.outputs.size()) continue;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      Tensor& out = graph.mutable_tensor(node.outputs[o]);
      const Shape& inferred = (*shapes)[o];
      if (out.fully_known() || std::any_of(inferred.begin(), inferred.end(), [](std::int64_t d) { return d < 0; })) continue;
      out.shape = inferred;
      out.shape_known = true;
    }
  }
}

Expected<Graph> BuildGraph(const onnx::ModelProto& model, std::int64_t opset, std::vector<FoldedNode>& folds,
                           std::vector<IfChoice>& ifs) {
  const onnx::GraphProto& g = model.graph();
  ImportState state;
  state.opset = opset;
  state.graph.name = g.name();
  state.graph.source_format = "onnx";

  // Types ONNX knows (declared or inferred); one with a shape beats one without.
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  auto consider = [&](const onnx::ValueInfoProto& v) {
    auto [it, fresh] = types.emplace(v.name(), &v.type());
    if (!fresh && !ShapeFromType(*it->second) && ShapeFromType(v.type())) it->second = &v.type();
  };
  for (const auto& v : g.input()) consider(v);
  for (const auto& v : g.value_info()) consider(v);
  for (const auto& v : g.output()) consider(v);
  auto type_of = [&](const std::string& name) -> const onnx::TypeProto* {
    auto it = types.find(name);
    return it == types.end() ? nullptr : it->second;
  };

  for (const auto& init : g.initializer()) {
    LATTE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(init, init.name()));
    state.values[init.name()] = state.graph.AddTensor(std::move(t));
  }
  for (const auto& input : g.input()) {
    if (state.values.count(input.name())) continue;  // an initializer: a constant, not an input
    const TensorId id = state.graph.AddTensor(ValueTensor(input.name(), type_of(input.name())));
    state.values[input.name()] = id;
    state.graph.inputs.push_back(id);
  }
  for (const auto& node : g.node())
    for (const auto& out : node.output())
      if (!out.empty()) state.values[out] = state.graph.AddTensor(ValueTensor(out, type_of(out)));

  for (int index : NodeOrder(g)) {
    const onnx::NodeProto& node = g.node(index);
    if (IsDefaultDomain(node.domain()) && node.op_type() == "Constant") {
      LATTE_RETURN_IF_ERROR(SetConstant(state, node, index));
      continue;
    }
    std::string not_folded;
    if (FoldConstantNode(state, node, &not_folded)) {
      folds.push_back({index, state.graph.tensor(state.values.at(node.output(0)))});
      continue;
    }
    if (IsDefaultDomain(node.domain()) && node.op_type() == "If") {
      if (std::optional<bool> then_branch = ConstantIfCondition(state, node)) {
        ifs.push_back({index, *then_branch});
        not_folded = "If on a constant condition, to be inlined";  // stays only past the last round
      } else {
        not_folded = WhyIfStays(g, node);
      }
    } else if (!not_folded.empty()) {
      not_folded = node.op_type() + " not folded: " + not_folded;
    }
    const size_t added_from = state.graph.num_nodes();
    LATTE_RETURN_IF_ERROR(AddOnnxNode(state, node, index, not_folded));
    InferWhatOnnxLeft(state.graph, added_from);
  }
  for (const auto& output : g.output()) state.graph.outputs.push_back(state.values.at(output.name()));

  std::vector<bool> removed;
  FoldBatchNorms(state.graph, removed);
  return Compact(state.graph, removed);
}

}  // namespace

namespace {

// In a QDQ model, ops that only move quantized values (a layout Transpose, a Reshape, a Pad of
// the zero point...) sit between a QuantizeLinear and the DequantizeLinear that reads their
// output: their output's scale and zero point are their input's, which ONNX leaves implied and
// Latte keeps on the tensor. Nodes in order, so a chain of such ops passes them along.
void PropagateQuantParams(Graph& graph) {
  auto moves_values = [](OpKind kind) {
    switch (kind) {
      case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
      case OpKind::kIdentity: case OpKind::kTranspose: case OpKind::kPad: case OpKind::kSlice: case OpKind::kGather:
      case OpKind::kMaxPool2D: case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth: case OpKind::kResize:
        return true;
      default:
        return false;
    }
  };
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& node = graph.node(n);
    if (!moves_values(node.kind) || node.inputs.empty() || node.inputs[0] == kNoTensor || node.outputs.size() != 1) continue;
    const Tensor& in = graph.tensor(node.inputs[0]);
    Tensor& out = graph.mutable_tensor(node.outputs[0]);
    const bool quantized = in.dtype == DataType::kInt8 || in.dtype == DataType::kUInt8;
    if (quantized && !in.quant.empty() && out.quant.empty() && out.dtype == in.dtype && in.quant.scale.size() == 1)
      out.quant = in.quant;
  }
}

Expected<Graph> Import(std::span<const std::uint8_t> bytes, const ImportOptions& options) {
  if (bytes.empty()) return InvalidInput("empty file: not an ONNX model");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return InvalidInput("file of " + std::to_string(bytes.size()) + " bytes is larger than an ONNX protobuf can be (2 GiB)");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return InvalidInput("not a valid ONNX model: the protobuf does not parse (truncated or corrupted file?)");
  if (!model.has_graph()) return InvalidInput("ONNX model has no graph (truncated or corrupted file?)");
  LATTE_ASSIGN_OR_RETURN(std::int64_t opset, DefaultOpset(model));
  LATTE_RETURN_IF_ERROR(CheckInlineData(model.graph()));
  LATTE_RETURN_IF_ERROR(CheckStructure(model.graph()));

  onnx::GraphProto& graph = *model.mutable_graph();
  if (ApplyInputShapes(graph, options)) ForgetDeclaredShapes(graph);
  LATTE_RETURN_IF_ERROR(ApplyInputValues(graph, options));
  // Folding can make more shapes known to ONNX's inference (and an inlined If brings new
  // nodes), which can make more foldable: repeat until nothing new folds. Within a round, Latte
  // infers what ONNX's inference left unknown (InferWhatOnnxLeft), so an exported transformer's
  // layers, each computing its heads' shapes from the layer before's, fold in a few rounds however
  // deep it is. Each round folds at least one node; the cap bounds a hostile file's time, and
  // what is still unfolded at the cap stays in the graph, named.
  constexpr int kMaxRounds = 16;
  for (int round = 1;; ++round) {
    InferOnnxShapes(model);  // a help, not a requirement: the import goes on without it
    std::vector<FoldedNode> folds;
    std::vector<IfChoice> ifs;
    LATTE_ASSIGN_OR_RETURN(Graph built, BuildGraph(model, opset, folds, ifs));
    if ((folds.empty() && ifs.empty()) || round == kMaxRounds) {
      PropagateQuantParams(built);
      return built;
    }
    for (const FoldedNode& f : folds) ReplaceWithConstant(*graph.mutable_node(f.index), f.value);
    if (!ifs.empty()) {
      LATTE_RETURN_IF_ERROR(InlineIfs(graph, std::move(ifs)));
      LATTE_RETURN_IF_ERROR(CheckStructure(graph));  // what the branches read must exist
    }
  }
}

}  // namespace

Expected<Graph> ImportOnnx(std::span<const std::uint8_t> bytes, const ImportOptions& options) {
  Expected<Graph> graph = Import(bytes, options);
  if (!graph.ok()) {
    // One printable line of bounded length, whatever names the file holds.
    std::string message = Printable(graph.status().message());
    if (message.size() > 1000) message = message.substr(0, 1000) + "…";
    return Status(graph.status().code(), std::move(message));
  }
  graph->name = Printable(std::move(graph->name));
  for (size_t t = 0; t < graph->num_tensors(); ++t) {
    std::string& name = graph->mutable_tensor(static_cast<TensorId>(t)).name;
    name = Printable(std::move(name));
  }
  for (size_t n = 0; n < graph->num_nodes(); ++n) {
    Node& node = graph->mutable_node(static_cast<NodeId>(n));
    node.name = Printable(std::move(node.name));
    node.source_op = Printable(std::move(node.source_op));
  }
  return graph;
}

}  // namespace latte
