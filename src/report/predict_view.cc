#include "report/predict_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/text.h"
#include "ir/kernel_params.h"
#include "report/html_report.h"
#include "report/inspect_view.h"
#include "report/text_table.h"
#include "run/backend.h"

namespace latte {
namespace {

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }

bool IsConvLike(OpKind op) {
  return op == OpKind::kConv2D || op == OpKind::kDepthwiseConv2D || op == OpKind::kTransposeConv2D;
}

// A layer as the report names it: the main node's name, "+N" for the nodes fused with it.
std::string LayerName(const Graph& graph, const std::vector<NodeId>& nodes, const std::vector<std::string>& user_names) {
  const std::vector<std::string> names = NodeNames(graph, nodes, user_names);
  std::string name = names.front().empty() ? fmt::format("#{}", nodes.front()) : names.front();
  if (names.size() > 1) name += fmt::format(" (+{})", names.size() - 1);
  return name;
}

}  // namespace

std::vector<std::string> NodeNames(const Graph& graph, const std::vector<NodeId>& nodes,
                                   const std::vector<std::string>& user_names) {
  if (!user_names.empty()) return user_names;
  std::vector<std::string> names;
  for (NodeId id : nodes) names.push_back(graph.node(id).name);
  return names;
}

std::string DescribeKernel(const Kernel& k) {
  if (IsConvLike(k.op)) {
    const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    std::string text = fmt::format("{}x{} s{}", p.kh, p.kw, p.sh);
    if (p.sw != p.sh) text += fmt::format("x{}", p.sw);
    if (p.dh.value_or(0) > 1 || p.dw.value_or(0) > 1) text += fmt::format(" d{}", p.dh.value_or(0));
    if (k.op == OpKind::kConv2D && p.g > 1) text += fmt::format(" g{}", p.g);
    return text + fmt::format(" {}→{} @{}x{}", p.ic, p.oc, p.ih, p.iw);
  }
  switch (k.op) {
    case OpKind::kFullyConnected: {
      const FullyConnectedKernelParams p = ReadParams<FullyConnectedKernelParams>(k);
      return fmt::format("{}x{}→{}", p.m, p.k, p.n);
    }
    case OpKind::kMatMul: {
      const MatMulKernelParams p = ReadParams<MatMulKernelParams>(k);
      return fmt::format("{}x[{}x{}]·[{}x{}]", p.b, p.m, p.k, p.k, p.n);
    }
    case OpKind::kMaxPool2D:
    case OpKind::kAvgPool2D: {
      const PoolKernelParams p = ReadParams<PoolKernelParams>(k);
      return fmt::format("{}x{} s{} c{} @{}x{}", p.kh, p.kw, p.sh, p.c, p.ih, p.iw);
    }
    case OpKind::kResize: {
      const ResizeKernelParams p = ReadParams<ResizeKernelParams>(k);
      return fmt::format("{}x{}→{}x{} c{}", p.ih, p.iw, p.oh, p.ow, p.c);
    }
    default:
      break;
  }
  // The other kinds by the params they have: two operand shapes, or one NHWC tensor.
  if (k.params.count(ParamKey(&BinaryKernelParams::a, 0))) {
    const auto [a, b] = ReadParams<BinaryKernelParams>(k);
    return fmt::format("{}x{}x{}x{} ⊙ {}x{}x{}x{}", a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
  }
  for (std::int64_t NhwcParams::*dim : {&NhwcParams::n, &NhwcParams::h, &NhwcParams::w, &NhwcParams::c})
    if (!k.params.count(ParamKey(dim))) return "";
  const NhwcParams x = ReadParams<NhwcParams>(k);
  return fmt::format("{}x{}x{}x{}", x.n, x.h, x.w, x.c);
}

std::string DescribePack(const Pack& pack) {
  const PackInfo& info = pack.info;
  std::string device = info.device.is_object() ? info.device.value("description", info.device.value("key", "")) : "";
  return fmt::format("{} {} {} {}{}", info.backend, info.threads, info.threads == 1 ? "thread" : "threads",
                     info.precision, device.empty() ? "" : " on " + device);
}

std::string LayerPrecision(const LayerPrediction& layer, const Pack& pack) {
  if (pack.info.precision != PrecisionName(Precision::kInt8)) return pack.info.precision;
  return std::string(PrecisionName(layer.int8 ? Precision::kInt8 : Precision::kFp32));
}

PredictView::PredictView(const Graph& graph, const ModelPrediction& prediction, const Pack& pack, std::string model,
                         std::string machine_note)
    : graph_(graph), prediction_(prediction), pack_(pack), model_(std::move(model)), machine_note_(std::move(machine_note)) {}

std::string PredictView::Text() const {
  std::ostringstream out;
  out << "model: " << model_ << "\n";
  out << "pack:  " << DescribePack(pack_) << "\n";
  if (!machine_note_.empty()) out << "note:  " << machine_note_ << "\n";
  out << "\n";

  TextTable table({{"#", TextTable::kRight}, {"layer"}, {"kernel"}, {"geometry"}, {"ms", TextTable::kRight},
                   {"±ms", TextTable::kRight}});
  // An int8 pack's layers run int8 or stay fp32 (why: listed after the table).
  const bool int8 = pack_.info.precision == PrecisionName(Precision::kInt8);
  if (int8) table.AddColumn("precision");
  const bool context = prediction_.context_applied;
  if (context) table.AddColumn("of which in graph", TextTable::kRight);
  table.AddColumn("source");
  int index = 0;
  for (const LayerPrediction& layer : prediction_.layers) {
    const Prediction& p = layer.prediction;
    std::string source(PredictionSourceName(p.source));
    if (p.outside_training_range) source += " (outside training range)";
    std::vector<std::string> row = {std::to_string(index++), KeepTail(LayerName(graph_, layer.nodes, layer.names), 40),
                                    layer.kernel.Kind(),     DescribeKernel(layer.kernel),
                                    Ms(layer.ms()),          Ms(p.spread_ms)};
    if (int8) row.push_back(LayerPrecision(layer, pack_));
    if (context) row.push_back(fmt::format("{}{}", layer.context_ms < 0 ? "-" : "+", Ms(std::abs(layer.context_ms))));
    row.push_back(source);
    table.AddRow(row);
  }
  out << table.Render();
  if (int8) {
    // Why each kind stays fp32, once per reason (a model repeats a kind many times).
    std::map<std::string, std::vector<std::string>> kept;  // why -> kinds
    for (const LayerPrediction& layer : prediction_.layers) {
      if (layer.int8) continue;
      std::vector<std::string>& kinds = kept[layer.fp32_why];
      if (std::find(kinds.begin(), kinds.end(), layer.kernel.Kind()) == kinds.end()) kinds.push_back(layer.kernel.Kind());
    }
    for (const auto& [why, kinds] : kept) out << fmt::format("fp32 in the int8 model: {}: {}\n", fmt::join(kinds, ", "), why);
  }

  const ModelPrediction& m = prediction_;
  out << "\n"
      << fmt::format("total: {} ms ({:.0f}% interval {} – {} ms) over {} kernels\n", Ms(m.total_ms),
                     100 * kIntervalLevel, Ms(m.interval_lo_ms), Ms(m.interval_hi_ms), m.layers.size());
  const PredictionUncertainty& u = m.uncertainty;
  if (u.calibrated_networks > 0) {
    out << fmt::format("the interval bounds {:.0f}% of {} random networks this pack never measured, predicted as this "
                       "model is\n",
                       100 * kIntervalLevel, u.calibrated_networks);
  }
  out << fmt::format("{}uncertainty, one standard deviation each: kernels ±{} ms, in-graph context {}, this machine's "
                     "drift {}\n",
                     u.calibrated_networks > 0 ? "not in the interval, " : "", Ms(u.kernels_sd_ms), m.context_applied ? "±" + Ms(u.context_sd_ms) + " ms" : "none (no model)",
                     pack_.info.reference_spread > 0
                         ? fmt::format("±{} ms (the reference kernel moved ±{:.1f}% while the pack was measured)",
                                       Ms(u.machine_sd_ms), 100 * pack_.info.reference_spread)
                         : std::string("unknown (the pack keeps no spread of its reference readings)"));
  std::string sources;
  for (const auto& [source, ms] : m.ms_by_source) {
    sources += fmt::format("{}{} {} ms", sources.empty() ? "" : ", ", source, Ms(ms));
  }
  if (!sources.empty()) out << "by source: " << sources << "\n";
  if (m.context_applied) {
    const ContextModel& c = *m.context;
    out << fmt::format("in graph: {}{} ms beyond the kernels alone ({} + cache misses the model "
                       "adds at L2 {} KiB / L3 {} MiB, memory {}; fitted on {} {}, held-out error {:.1f}% → {:.1f}%)\n",
                       m.context_ms < 0 ? "-" : "+", Ms(std::abs(m.context_ms)), c.ShareText(), c.l2_bytes >> 10,
                       c.l3_bytes >> 20, TensorMemoryName(c.memory), c.graphs, m.context_family, c.cv_alone_rmspe_pct, c.cv_rmspe_pct);
  } else {
    out << "in graph: the pack has no context model: each layer is its kernel's time alone\n";
  }
  if (m.outside_range > 0) {
    out << fmt::format("{} kernel(s) lie outside the pack's training ranges: their predictions extrapolate\n",
                       m.outside_range);
  }
  out << fmt::format("coverage: {} of {} nodes predicted", m.covered_nodes, m.total_nodes);
  if (m.uncovered.empty()) {
    out << " (all)\n";
    return out.str();
  }
  out << fmt::format("; {} node(s) NOT predicted and NOT in the total:\n", m.uncovered_nodes);
  for (const UncoveredLayer& u : m.uncovered) {
    out << fmt::format("  {} ({}): {}\n", KeepTail(LayerName(graph_, u.nodes, u.names), 40), u.op, u.why);
  }
  return out.str();
}

nlohmann::json PredictView::Json() const {
  JsonDocument doc;
  return Build(doc);
}

std::string PredictView::Csv() const {
  // The TFLite estimator's columns first (conv geometry; blank for other kernels), then Latte's.
  std::string out =
      "name,kernel_size,filter_size,input_channel,input_h,input_w,stride,estimated latency,"
      "kernel,geometry,spread_ms,source,outside_training_range,nodes,context_ms\n";
  for (const LayerPrediction& layer : prediction_.layers) {
    const Kernel& k = layer.kernel;
    const std::vector<std::string> names = NodeNames(graph_, layer.nodes, layer.names);
    std::string conv_columns = ",,,,,";
    if (IsConvLike(k.op)) {
      const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
      conv_columns = fmt::format("{},{},{},{},{},{}", p.kh, p.oc, p.ic, p.ih, p.iw, p.sh);
    } else if (k.op == OpKind::kFullyConnected) {
      const FullyConnectedKernelParams p = ReadParams<FullyConnectedKernelParams>(k);
      conv_columns = fmt::format("1,{},{},1,1,1", p.n, p.k);
    }
    out += fmt::format("{},{},{:.6f},{},{},{:.6f},{},{},{},{:.6f}\n", CsvField(names.front()), conv_columns,
                       layer.ms(), k.Kind(), CsvField(DescribeKernel(k)), layer.prediction.spread_ms,
                       PredictionSourceName(layer.prediction.source), layer.prediction.outside_training_range ? 1 : 0,
                       names.size(), layer.context_ms);
  }
  // Uncovered layers keep a row with no latency: a reader summing the column sees the gap.
  for (const UncoveredLayer& u : prediction_.uncovered) {
    const std::vector<std::string> names = NodeNames(graph_, u.nodes, u.names);
    out += fmt::format("{},,,,,,,,{},,,{},,{},\n", CsvField(names.front()), CsvField(u.op),
                       CsvField("not predicted: " + u.why), names.size());
  }
  return out;
}

std::string PredictView::Html(const Graph& user, const GraphPlan& plan) const {
  return HtmlReport("predict", "latte predict: " + model_, Json(),
                    nlohmann::json::array({ReportGraphJson(user, model_, &plan, &prediction_)}));
}

}  // namespace latte
