#include "import/onnx/onnx_if.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "import/onnx/onnx_tensor.h"

namespace latte::onnx_import {
namespace {

using Renames = std::unordered_map<std::string, std::string>;

// Renames what a nested graph reads from its enclosing scopes (names it defines itself stay).
void RenameOuterReads(onnx::GraphProto& graph, const Renames& renames) {
  std::unordered_set<std::string> local;
  for (const auto& v : graph.input()) local.insert(v.name());
  for (const auto& t : graph.initializer()) local.insert(t.name());
  for (const auto& n : graph.node())
    for (const auto& out : n.output()) local.insert(out);
  auto rename = [&](std::string* name) {
    auto it = renames.find(*name);
    if (!name->empty() && !local.count(*name) && it != renames.end()) *name = it->second;
  };
  for (auto& n : *graph.mutable_node()) {
    for (auto& in : *n.mutable_input()) rename(&in);
    for (auto& attr : *n.mutable_attribute()) {
      if (attr.has_g()) RenameOuterReads(*attr.mutable_g(), renames);
      for (auto& g : *attr.mutable_graphs()) RenameOuterReads(g, renames);
    }
  }
  for (auto& out : *graph.mutable_output())
    if (!local.count(out.name())) rename(out.mutable_name());
}

const onnx::GraphProto* Branch(const onnx::NodeProto& proto, bool then_branch) {
  for (const auto& attr : proto.attribute())
    if (attr.name() == (then_branch ? "then_branch" : "else_branch") && attr.has_g()) return &attr.g();
  return nullptr;
}

// Every name the main graph defines or reads, and every name in its subgraphs.
void CollectNames(const onnx::GraphProto& graph, std::unordered_set<std::string>& names) {
  for (const auto& v : graph.input()) names.insert(v.name());
  for (const auto& t : graph.initializer()) names.insert(t.name());
  for (const auto& n : graph.node()) {
    names.insert(n.input().begin(), n.input().end());
    names.insert(n.output().begin(), n.output().end());
    for (const auto& attr : n.attribute()) {
      if (attr.has_g()) CollectNames(attr.g(), names);
      for (const auto& g : attr.graphs()) CollectNames(g, names);
    }
  }
}

// The nodes that replace If node `proto`; adds the branch's initializers to `graph`.
Expected<std::vector<onnx::NodeProto>> Inline(onnx::GraphProto& graph, const onnx::NodeProto& proto, bool then_branch,
                                              std::unordered_set<std::string>& names) {
  const std::string which = then_branch ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = Branch(proto, then_branch);
  if (!branch) return InvalidInput("If has no graph attribute '" + which + "'");
  if (branch->output_size() != proto.output_size())
    return InvalidInput("If's " + which + " has " + std::to_string(branch->output_size()) + " outputs, the If " +
                        std::to_string(proto.output_size()));
  if (branch->sparse_initializer_size() > 0)
    return Unsupported("If's " + which + " holds a sparse initializer, which Latte does not read");
  const std::string prefix = NodeName(proto) + "/" + which + "/";
  auto unique = [&](const std::string& name) {
    std::string fresh = prefix + name;
    for (int k = 1; names.count(fresh); ++k) fresh = prefix + name + "_" + std::to_string(k);
    names.insert(fresh);
    return fresh;
  };
  Renames renames;
  std::unordered_set<std::string> produced;  // by a branch node
  for (const auto& n : branch->node())
    for (const auto& out : n.output())
      if (!out.empty()) produced.insert(out);
  // A branch output a branch node writes is written straight to the If's output.
  std::vector<bool> needs_identity(static_cast<size_t>(proto.output_size()), false);
  for (int i = 0; i < proto.output_size(); ++i) {
    const std::string& from = branch->output(i).name();
    if (proto.output(i).empty()) continue;
    if (produced.count(from) && !renames.count(from)) renames[from] = proto.output(i);
    else needs_identity[static_cast<size_t>(i)] = true;
  }
  for (const auto& t : branch->initializer()) renames.emplace(t.name(), unique(t.name()));
  for (const std::string& name : produced) renames.emplace(name, unique(name));

  for (const auto& t : branch->initializer()) {
    onnx::TensorProto* copy = graph.add_initializer();
    *copy = t;
    copy->set_name(renames.at(t.name()));
  }
  std::vector<onnx::NodeProto> nodes;
  auto rename = [&](const std::string& name) {
    auto it = renames.find(name);
    return it == renames.end() ? name : it->second;  // an outer-scope name stays
  };
  for (const auto& n : branch->node()) {
    onnx::NodeProto copy = n;
    if (!copy.name().empty()) copy.set_name(unique(copy.name()));
    for (auto& in : *copy.mutable_input())
      if (!in.empty()) in = rename(in);
    for (auto& out : *copy.mutable_output())
      if (!out.empty()) out = rename(out);
    for (auto& attr : *copy.mutable_attribute()) {
      if (attr.has_g()) RenameOuterReads(*attr.mutable_g(), renames);
      for (auto& g : *attr.mutable_graphs()) RenameOuterReads(g, renames);
    }
    nodes.push_back(std::move(copy));
  }
  for (int i = 0; i < proto.output_size(); ++i) {
    if (!needs_identity[static_cast<size_t>(i)]) continue;
    onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.set_name(unique("output_" + std::to_string(i)));
    identity.add_input(rename(branch->output(i).name()));
    identity.add_output(proto.output(i));
    nodes.push_back(std::move(identity));
  }
  return nodes;
}

}  // namespace

std::optional<bool> ConstantIfCondition(const ImportState& state, const onnx::NodeProto& proto) {
  if (proto.input_size() < 1) return std::nullopt;
  auto it = state.values.find(proto.input(0));
  if (it == state.values.end()) return std::nullopt;
  const Tensor& cond = state.graph.tensor(it->second);
  if (!cond.is_constant()) return std::nullopt;
  auto values = ReadDoubles(cond);
  if (!values.ok() || values->size() != 1) return std::nullopt;
  return (*values)[0] != 0;
}

std::string WhyIfStays(const onnx::GraphProto& graph, const onnx::NodeProto& proto) {
  const std::string cond = proto.input_size() > 0 ? proto.input(0) : "";
  // The graph inputs the condition is computed from.
  std::unordered_map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : graph.node())
    for (const auto& out : n.output()) producer.emplace(out, &n);
  std::unordered_set<std::string> initializers, inputs, seen;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& v : graph.input())
    if (!initializers.count(v.name())) inputs.insert(v.name());
  std::vector<std::string> behind, todo = {cond};
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (name.empty() || !seen.insert(name).second) continue;
    if (inputs.count(name)) behind.push_back(name);
    if (auto it = producer.find(name); it != producer.end()) todo.insert(todo.end(), it->second->input().begin(), it->second->input().end());
  }
  std::sort(behind.begin(), behind.end());
  std::string why = "If not inlined: its condition '" + cond + "' is not a constant at import";
  if (behind.empty()) return why + " (it is computed at run time from no graph input)";
  std::string list;
  for (const std::string& name : behind) list += (list.empty() ? "'" : ", '") + name + "'";
  return why + " (it depends on input" + (behind.size() > 1 ? "s " : " ") + list + "); give " +
         (behind.size() > 1 ? "their values" : "its value") + " with --input-value " +
         (behind.size() > 1 ? "NAME" : behind[0]) + "=VALUE";
}

Status InlineIfs(onnx::GraphProto& graph, std::vector<IfChoice> choices) {
  std::sort(choices.begin(), choices.end(), [](const IfChoice& a, const IfChoice& b) { return a.index > b.index; });
  std::unordered_set<std::string> names;
  CollectNames(graph, names);
  for (const IfChoice& choice : choices) {
    const onnx::NodeProto proto = graph.node(choice.index);  // a copy: the node is replaced
    auto nodes = Inline(graph, proto, choice.then_branch, names);
    if (!nodes.ok()) return nodes.status().WithContext(DescribeOnnxNode(proto, choice.index));
    google::protobuf::RepeatedPtrField<onnx::NodeProto> rebuilt;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (i != choice.index) {
        *rebuilt.Add() = std::move(*graph.mutable_node(i));
        continue;
      }
      for (auto& n : *nodes) *rebuilt.Add() = std::move(n);
    }
    graph.mutable_node()->Swap(&rebuilt);
  }
  return Status::Ok();
}

}  // namespace latte::onnx_import
