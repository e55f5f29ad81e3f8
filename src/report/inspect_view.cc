#include "report/inspect_view.h"

#include <map>
#include <set>

#include "ir/cost.h"
#include "ir/op_params.h"
#include "report/html_report.h"
#include "report/text_table.h"

namespace latte {
namespace {

nlohmann::json ShapeJson(const Tensor& t) {
  if (!t.shape_known) return nullptr;
  nlohmann::json dims = nlohmann::json::array();
  for (auto d : t.shape) dims.push_back(d < 0 ? nlohmann::json(nullptr) : nlohmann::json(d));
  return dims;
}

nlohmann::json TensorJson(const Graph& g, TensorId id) {
  const Tensor& t = g.tensor(id);
  nlohmann::json j = {{"tensor", id}, {"name", t.name}, {"shape", ShapeJson(t)}, {"dtype", DataTypeName(t.dtype)}};
  if (t.is_constant()) j["constant"] = true;
  return j;
}

// Totals over the whole graph. Constants shared by several nodes count once.
struct Totals {
  std::int64_t nodes = 0, macs = 0, flops = 0, params = 0, weight_bytes = 0, activation_bytes = 0;
  std::int64_t bytes_moved = 0;  // the table's bytes column summed: weights and activations per use
  std::int64_t unsupported = 0, unknown_cost = 0;
  std::map<std::string, std::int64_t> by_op;
};

Totals ComputeTotals(const Graph& g, const std::vector<Expected<NodeCost>>& costs) {
  Totals totals;
  std::set<TensorId> constants;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& node = g.node(id);
    ++totals.nodes;
    ++totals.by_op[NodeOpName(node)];
    if (node.kind == OpKind::kOpaque) ++totals.unsupported;
    for (TensorId t : node.inputs)
      if (t != kNoTensor && g.tensor(t).is_constant()) constants.insert(t);
    const auto& cost = costs[id];
    if (!cost.ok()) {
      if (node.kind != OpKind::kOpaque) ++totals.unknown_cost;
      continue;
    }
    totals.macs += cost->macs;
    totals.flops += cost->flops;
    totals.activation_bytes += cost->output_bytes;
    totals.bytes_moved += cost->weight_bytes + cost->input_bytes + cost->output_bytes;
  }
  for (TensorId t : constants) {
    const Tensor& tensor = g.tensor(t);
    totals.params += tensor.num_elements().value_or(0);
    totals.weight_bytes += tensor.num_bytes().value_or(0);
  }
  return totals;
}

std::string ActivationShapes(const Graph& g, const std::vector<TensorId>& ids) {
  std::string out;
  for (TensorId t : ids) {
    if (t == kNoTensor || g.tensor(t).is_constant()) continue;
    if (!out.empty()) out += ",";
    out += ShapeToString(g.tensor(t).shape, g.tensor(t).shape_known);
  }
  return out;
}

}  // namespace

std::string DumpJson(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json AttrToJson(const AttrValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

std::string DescribeGeometry(const Graph& graph, const Node& node) {
  auto pads = [](const Padding2D& p) {
    std::string s = "(";
    for (std::int64_t v : {p.top, p.left, p.bottom, p.right}) s.append(std::to_string(v)).append(",");
    s.back() = ')';
    return s;
  };
  std::string act = node.attrs.GetString("activation", "none");
  std::string suffix = act == "none" ? "" : " " + act;
  switch (node.kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kTransposeConv2D: {
      auto p = GetConvParams(graph, node);
      if (!p.ok()) return "?";
      std::string s = "k" + std::to_string(p->kernel_h) + "x" + std::to_string(p->kernel_w) + " s" +
                      std::to_string(p->stride_h) + (p->stride_h != p->stride_w ? "x" + std::to_string(p->stride_w) : "");
      if (p->dilation_h != 1 || p->dilation_w != 1) s += " d" + std::to_string(p->dilation_h) + "x" + std::to_string(p->dilation_w);
      if (p->groups != 1) s += " g" + std::to_string(p->groups);
      s += " pad=" + node.attrs.GetString("padding", "valid") + pads(p->pads);
      return s + suffix;
    }
    case OpKind::kMaxPool2D: case OpKind::kAvgPool2D: {
      auto p = GetPoolParams(graph, node);
      if (!p.ok()) return "?";
      return "k" + std::to_string(p->kernel_h) + "x" + std::to_string(p->kernel_w) + " s" + std::to_string(p->stride_h) +
             " pad=" + node.attrs.GetString("padding", "valid") + pads(p->pads) + suffix;
    }
    default:
      return act == "none" ? "" : act;
  }
}

InspectView::InspectView(const Graph& graph, std::string model) : graph_(graph), model_(std::move(model)) {
  costs_.reserve(graph.num_nodes());
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) costs_.push_back(ComputeNodeCost(graph, id));
}

std::string InspectView::Text() const {
  TextTable table({{"#", TextTable::kRight}, {"op"}, {"name"}, {"input"}, {"output"}, {"geometry"},
                   {"MACs", TextTable::kRight}, {"params", TextTable::kRight}, {"bytes", TextTable::kRight}});
  for (NodeId id = 0; id < static_cast<NodeId>(graph_.num_nodes()); ++id) {
    const Node& node = graph_.node(id);
    const auto& cost = costs_[id];
    std::string op = NodeOpName(node) + (node.kind == OpKind::kOpaque ? " (unsupported)" : "");
    auto num = [&](std::int64_t v) { return cost.ok() ? WithThousands(v) : std::string("?"); };
    table.AddRow({std::to_string(id), op, KeepTail(node.name, 40), ActivationShapes(graph_, node.inputs),
                  ActivationShapes(graph_, node.outputs), DescribeGeometry(graph_, node), num(cost.ok() ? cost->macs : 0),
                  num(cost.ok() ? cost->params : 0),
                  num(cost.ok() ? cost->weight_bytes + cost->input_bytes + cost->output_bytes : 0)});
  }
  Totals totals = ComputeTotals(graph_, costs_);
  table.AddRule();
  table.AddRow({"", "total", std::to_string(totals.nodes) + " nodes", "", "", "", WithThousands(totals.macs),
                WithThousands(totals.params), WithThousands(totals.bytes_moved)});

  std::string out = "model: " + model_ + " (" + graph_.source_format + ")\n";
  for (TensorId t : graph_.inputs)
    out += "input:  " + graph_.tensor(t).name + " " + ShapeToString(graph_.tensor(t).shape, graph_.tensor(t).shape_known) +
           " " + std::string(DataTypeName(graph_.tensor(t).dtype)) + "\n";
  for (TensorId t : graph_.outputs)
    out += "output: " + graph_.tensor(t).name + " " + ShapeToString(graph_.tensor(t).shape, graph_.tensor(t).shape_known) +
           " " + std::string(DataTypeName(graph_.tensor(t).dtype)) + "\n";
  out += "\n" + table.Render() + "\n";
  out += "totals: " + std::to_string(totals.nodes) + " nodes, " + WithThousands(totals.macs) + " MACs, " +
         WithThousands(totals.flops) + " FLOPs, " + WithThousands(totals.params) + " params (" +
         WithThousands(totals.weight_bytes) + " bytes of weights), " + WithThousands(totals.activation_bytes) +
         " bytes of activations written\n";
  std::string ops;
  for (const auto& [op, n] : totals.by_op) ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(n);
  out += "ops: " + ops + "\n";
  if (totals.unsupported == 0 && totals.unknown_cost == 0) {
    out += "coverage: every node is a known op with known shapes\n";
  } else {
    out += "coverage: " + std::to_string(totals.unsupported) + " unsupported node(s), " +
           std::to_string(totals.unknown_cost) + " with unknown cost; MACs and bytes above leave them out\n";
    for (NodeId id = 0; id < static_cast<NodeId>(graph_.num_nodes()); ++id) {
      const auto& cost = costs_[id];
      if (!cost.ok()) out += "  unsupported: " + cost.status().message() + "\n";
    }
  }
  return out;
}

nlohmann::json InspectView::Json() const {
  nlohmann::json nodes = nlohmann::json::array();
  nlohmann::json uncovered = nlohmann::json::array();
  for (NodeId id = 0; id < static_cast<NodeId>(graph_.num_nodes()); ++id) {
    const Node& node = graph_.node(id);
    nlohmann::json j = {{"index", id}, {"op", NodeOpName(node)}, {"source_op", node.source_op}, {"name", node.name}};
    j["inputs"] = nlohmann::json::array();
    for (TensorId t : node.inputs)
      j["inputs"].push_back(t == kNoTensor ? nlohmann::json(nullptr) : TensorJson(graph_, t));
    j["outputs"] = nlohmann::json::array();
    for (TensorId t : node.outputs) j["outputs"].push_back(TensorJson(graph_, t));
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& [name, value] : node.attrs.values()) attrs[name] = AttrToJson(value);
    j["attributes"] = attrs;
    std::string geometry = DescribeGeometry(graph_, node);
    if (!geometry.empty()) j["geometry"] = geometry;
    const auto& cost = costs_[id];
    j["supported"] = cost.ok();
    if (cost.ok()) {
      j["macs"] = cost->macs;
      j["flops"] = cost->flops;
      j["params"] = cost->params;
      j["weight_bytes"] = cost->weight_bytes;
      j["input_bytes"] = cost->input_bytes;
      j["output_bytes"] = cost->output_bytes;
    } else {
      j["macs"] = nullptr;
      j["params"] = nullptr;
      j["why"] = cost.status().message();
      uncovered.push_back({{"node", id}, {"op", NodeOpName(node)}, {"why", cost.status().message()}});
    }
    nodes.push_back(std::move(j));
  }
  Totals totals = ComputeTotals(graph_, costs_);
  nlohmann::json io_in = nlohmann::json::array(), io_out = nlohmann::json::array();
  for (TensorId t : graph_.inputs) io_in.push_back(TensorJson(graph_, t));
  for (TensorId t : graph_.outputs) io_out.push_back(TensorJson(graph_, t));
  return {{"model", model_},
          {"format", graph_.source_format},
          {"inputs", io_in},
          {"outputs", io_out},
          {"nodes", nodes},
          {"totals",
           {{"nodes", totals.nodes},
            {"macs", totals.macs},
            {"flops", totals.flops},
            {"params", totals.params},
            {"weight_bytes", totals.weight_bytes},
            {"activation_bytes", totals.activation_bytes},
            {"bytes_moved", totals.bytes_moved},
            {"unsupported_nodes", totals.unsupported},
            {"unknown_cost_nodes", totals.unknown_cost},
            {"ops", totals.by_op}}},
          {"uncovered", uncovered}};
}

std::string InspectView::Html() const {
  return HtmlReport("inspect", "latte inspect: " + model_, Json(), nullptr);
}

}  // namespace latte
