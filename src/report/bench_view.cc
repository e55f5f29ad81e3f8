#include "report/bench_view.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "report/text_table.h"

namespace latte {
namespace {

std::string Fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, v);
  return buffer;
}

double Throughput(const Stats& s) { return s.mean > 0 ? 1e6 / s.mean : 0; }

}  // namespace

BenchView::BenchView(const Graph& graph, const BenchResult& result, const BenchOptions& options, std::string model,
                     long long model_bytes)
    : graph_(graph), result_(result), options_(options), model_(std::move(model)), model_bytes_(model_bytes) {}

std::string BenchView::Text() const {
  const Stats& s = result_.latency.stats;
  std::string out;
  out += "Model: " + model_ + " (" + WithThousands(model_bytes_) + " bytes)\n";
  std::string backends;
  for (const auto& v : result_.backend_versions) backends += (backends.empty() ? "" : "; ") + v;
  out += "Backend: " + backends + ", threads " + std::to_string(options_.run.num_threads) + ", precision " +
         std::string(PrecisionName(options_.run.precision)) + "\n";
  out += "Device: " + result_.device.Describe() + "\n";
  out += "Initialized in " + Fixed(result_.init_us / 1000.0, 3) + " ms\n";
  out += "First inference: " + Fixed(result_.latency.first_us, 1) + " us\n";
  out += "Warmup: count=" + std::to_string(result_.latency.warmup_count) + " avg=" + Fixed(result_.latency.warmup_avg_us, 1) +
         " us\n";
  out += "Inference timings in us: count=" + std::to_string(s.n) + " min=" + Fixed(s.p0, 1) + " max=" + Fixed(s.p100, 1) +
         " avg=" + Fixed(s.mean, 1) + " std=" + Fixed(s.std, 1) + " p50=" + Fixed(s.p50, 1) + " p90=" + Fixed(s.p90, 1) +
         " p99=" + Fixed(s.p99, 1) + "\n";
  out += "Throughput: " + Fixed(Throughput(s), 1) + " inferences/s\n";
  out += "Peak RSS: " + WithThousands(result_.peak_rss_kb) + " KB\n";
  if (options_.run.precision == Precision::kBf16) {
    // Which nodes ran at which precision: every node of the graph at bf16, the casts at its edges.
    std::size_t casts = 0;
    for (const ProfileEntry& e : result_.entries) casts += e.inserted && e.op == "cast";
    out += "Precision: bf16 for all " + std::to_string(result_.entries.size() - casts) +
           " nodes the executor runs (weights and activations bfloat16, biases and norm parameters float32); " +
           std::to_string(casts) + " inserted cast node(s) convert the float32 inputs and outputs\n";
  }
  if (options_.run.precision == Precision::kInt8) out += Int8Text();
  if (options_.run.precision != Precision::kFp32) {
    const RunDrift& d = result_.drift;
    if (!d.measured) {
      out += "Output drift vs fp32: not measured (" + d.why + ")\n";
    } else {
      out += "Output drift vs fp32 (same backend, same inputs): max |diff| " + Fixed(d.max_abs_diff, 6) + ", cosine " +
             Fixed(d.cosine, 6) + (d.nonfinite_mismatches ? ", " + std::to_string(d.nonfinite_mismatches) + " non-finite mismatches" : "") +
             "\n";
      if (d.outputs.size() > 1)
        for (const OutputDrift& o : d.outputs)
          out += "  " + o.name + ": max |diff| " + Fixed(o.max_abs_diff, 6) + ", cosine " + Fixed(o.cosine, 6) + "\n";
    }
  }
  out += "Noise: " + result_.latency.noise.Describe() + (result_.latency.attempts > 1 ? ", " + std::to_string(result_.latency.attempts) + " attempts (kept the quietest)" : "") +
         (result_.latency.hit_time_limit ? ", stopped by the time limit before --num-runs" : "") + "\n";
  out += "Host: " + DescribeHostLoad(result_.latency.host, result_.latency.contended, options_.run.num_threads) + "\n";
  size_t fell_back = 0;
  for (const auto& a : result_.assignments) fell_back += a.fell_back;
  if (fell_back > 0) {
    out += std::to_string(fell_back) + " node(s) ran on the fallback backend:\n";
    for (size_t i = 0; i < result_.assignments.size(); ++i)
      if (result_.assignments[i].fell_back)
        out += "  " + DescribeNode(graph_, static_cast<NodeId>(i)) + " on " + result_.assignments[i].backend + ": " +
               result_.assignments[i].why + "\n";
  }
  if (result_.node_avg_us.empty()) return out;

  double total = 0;
  for (double v : result_.node_avg_us) total += v;
  TextTable order({{"#", TextTable::kRight}, {"node type"}, {"name"}, {"backend"}, {"avg ms", TextTable::kRight},
                   {"%", TextTable::kRight}, {"cdf %", TextTable::kRight}});
  double cdf = 0;
  for (size_t i = 0; i < result_.node_avg_us.size(); ++i) {
    const double us = result_.node_avg_us[i];
    cdf += us;
    const ProfileEntry& entry = result_.entries[i];
    order.AddRow({std::to_string(i), entry.op, KeepTail(entry.inserted ? entry.name + " (inserted)" : entry.name, 40),
                  entry.backend, Fixed(us / 1000.0, 4), Fixed(100.0 * us / total, 2),
                  Fixed(100.0 * cdf / total, 2)});
  }
  out += "\n============================== Run Order ==============================\n" + order.Render();

  struct TypeTotal {
    double us = 0;
    int count = 0;
  };
  std::map<std::string, TypeTotal> by_type;
  for (size_t i = 0; i < result_.node_avg_us.size(); ++i) {
    auto& t = by_type[result_.entries[i].op];
    t.us += result_.node_avg_us[i];
    ++t.count;
  }
  std::vector<std::pair<std::string, TypeTotal>> sorted(by_type.begin(), by_type.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.us > b.second.us; });
  TextTable summary({{"node type"}, {"count", TextTable::kRight}, {"avg ms", TextTable::kRight},
                     {"%", TextTable::kRight}, {"cdf %", TextTable::kRight}, {"times called", TextTable::kRight}});
  cdf = 0;
  for (const auto& [type, t] : sorted) {
    cdf += t.us;
    summary.AddRow({type, std::to_string(t.count), Fixed(t.us / 1000.0, 4), Fixed(100.0 * t.us / total, 2),
                    Fixed(100.0 * cdf / total, 2), std::to_string(t.count * options_.measure.num_runs)});
  }
  out += "\n========================= Summary by node type =========================\n" + summary.Render();
  out += "Sum of node times: " + Fixed(total / 1000.0, 4) + " ms (per-node timing adds overhead; the whole-run p50 above is the latency)\n";
  return out;
}

nlohmann::json BenchView::Json() const {
  const Stats& s = result_.latency.stats;
  nlohmann::json j = {
      {"model", model_},
      {"model_bytes", model_bytes_},
      {"backends", result_.backend_versions},
      {"num_threads", options_.run.num_threads},
      {"precision", PrecisionName(options_.run.precision)},
      {"device", {{"cpu", result_.device.cpu_model}, {"cores", result_.device.logical_cores},
                  {"isa", result_.device.isa_flags}, {"max_mhz", result_.device.max_mhz}, {"os", result_.device.os}}},
      {"init_us", result_.init_us},
      {"first_inference_us", result_.latency.first_us},
      {"warmup", {{"count", result_.latency.warmup_count}, {"avg_us", result_.latency.warmup_avg_us}}},
      {"latency_us", {{"count", s.n}, {"min", s.p0}, {"max", s.p100}, {"avg", s.mean}, {"std", s.std}, {"p10", s.p10},
                      {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}}},
      {"throughput_per_s", Throughput(s)},
      {"peak_rss_kb", result_.peak_rss_kb},
      {"noise", {{"batch_median_cv", result_.latency.noise.batch_median_cv}, {"spikes", result_.latency.noise.spikes},
                 {"noisy", result_.latency.noise.noisy}, {"attempts", result_.latency.attempts},
                 {"hit_time_limit", result_.latency.hit_time_limit}}},
      {"host", {{"other_cores", result_.latency.host.known() ? nlohmann::json(result_.latency.host.other_cores) : nlohmann::json()},
                {"window_s", result_.latency.host.window_s},
                {"contended", result_.latency.contended}}},
  };
  nlohmann::json fallbacks = nlohmann::json::array();
  for (size_t i = 0; i < result_.assignments.size(); ++i)
    if (result_.assignments[i].fell_back)
      fallbacks.push_back({{"node", i}, {"backend", result_.assignments[i].backend}, {"why", result_.assignments[i].why}});
  j["fallbacks"] = fallbacks;
  j["drift"] = RunDriftToJson(result_.drift);
  if (options_.run.precision == Precision::kInt8) j["int8"] = Int8Json();
  if (!result_.node_avg_us.empty()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (size_t i = 0; i < result_.node_avg_us.size(); ++i) {
      const ProfileEntry& entry = result_.entries[i];
      nodes.push_back({{"index", i}, {"op", entry.op}, {"name", entry.name}, {"nodes", entry.sources},
                       {"inserted", entry.inserted}, {"backend", entry.backend}, {"precision", PrecisionName(entry.precision)},
                       {"avg_us", result_.node_avg_us[i]}});
    }
    j["op_profile"] = nodes;
  }
  return j;
}

std::string BenchView::Int8Text() const {
  const Int8Summary s = SummarizeInt8(result_);
  std::string kinds;
  for (const auto& [kind, n] : s.int8_kinds) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  std::string out = "Precision: int8 for " + std::to_string(s.int8_nodes) + " of " + std::to_string(result_.assignments.size()) +
                    " nodes" + (kinds.empty() ? "" : " (" + kinds + ")") + ", fp32 for " + std::to_string(s.fp32_nodes) + "; " +
                    std::to_string(s.quantize) + " quantize and " + std::to_string(s.dequantize) +
                    " dequantize node(s) inserted where they meet. Activations per tensor (asymmetric, from " +
                    result_.int8_calibration.Describe() + "), weights per output channel (symmetric)\n";
  if (s.fp32_nodes == 0) return out;
  out += "Kept at fp32:\n";
  for (size_t i = 0; i < result_.assignments.size(); ++i) {
    const NodeAssignment& a = result_.assignments[i];
    if (a.precision != Precision::kInt8)
      out += "  " + DescribeNode(graph_, static_cast<NodeId>(i)) + ": " + (a.precision_why.empty() ? "fp32" : a.precision_why) + "\n";
  }
  return out;
}

nlohmann::json BenchView::Int8Json() const {
  const Int8Summary s = SummarizeInt8(result_);
  nlohmann::json kept = nlohmann::json::array();
  nlohmann::json per_node = nlohmann::json::array();
  for (size_t i = 0; i < result_.assignments.size(); ++i) {
    const NodeAssignment& a = result_.assignments[i];
    per_node.push_back(PrecisionName(a.precision));
    if (a.precision != Precision::kInt8)
      kept.push_back({{"node", i}, {"name", graph_.node(static_cast<NodeId>(i)).name},
                      {"op", NodeOpName(graph_.node(static_cast<NodeId>(i)))}, {"why", a.precision_why}});
  }
  return {{"int8_nodes", s.int8_nodes}, {"fp32_nodes", s.fp32_nodes}, {"quantize_nodes", s.quantize},
          {"dequantize_nodes", s.dequantize}, {"calibration_runs", result_.int8_calibration.runs}, {"calibration", result_.int8_calibration.Describe()},
          {"node_precisions", per_node},
          {"kept_fp32", kept}};
}

nlohmann::json BenchView::Trace() const {
  nlohmann::json events = nlohmann::json::array();
  double ts = 0;
  for (size_t i = 0; i < result_.node_avg_us.size(); ++i) {
    const ProfileEntry& entry = result_.entries[i];
    events.push_back({{"name", entry.name.empty() ? entry.op : entry.name},
                      {"cat", entry.op},
                      {"ph", "X"},
                      {"ts", ts},
                      {"dur", result_.node_avg_us[i]},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"index", i}, {"op", entry.op}, {"backend", entry.backend}}}});
    ts += result_.node_avg_us[i];
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace latte
