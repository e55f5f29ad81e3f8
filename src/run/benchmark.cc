#include "run/benchmark.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace latte {

namespace {

// `executor`'s outputs (of the timed runs, on FillRandomInputs' inputs) against the same placement
// at fp32 on the same inputs; after the measurement, so its memory and time are not counted.
RunDrift MeasureDrift(const Graph& graph, const BenchOptions& options, const BackendRegistry& registry, Executor& executor) {
  RunDrift drift;
  if (options.run.precision == Precision::kFp32) {
    auto self = CompareOutputs(graph, executor.buffers(), executor.buffers(), "fp32 (this run)");
    if (!self.ok()) drift.why = self.status().message();
    return self.ok() ? *self : drift;
  }
  RunOptions fp32 = options.run;
  fp32.precision = Precision::kFp32;
  auto reference = Executor::Create(graph, options.placement, registry, fp32);
  if (!reference.ok()) {
    drift.why = "no fp32 reference: " + reference.status().message();
    return drift;
  }
  FillRandomInputs(graph, (*reference)->buffers());
  if (Status s = (*reference)->Run(); !s.ok()) {
    drift.why = "the fp32 reference run failed: " + s.message();
    return drift;
  }
  auto compared = CompareOutputs(graph, (*reference)->buffers(), executor.buffers(), "fp32");
  if (!compared.ok()) drift.why = compared.status().message();
  return compared.ok() ? *compared : drift;
}

}  // namespace

Expected<BenchResult> BenchmarkGraph(const Graph& graph, const BenchOptions& options, const BackendRegistry& registry) {
  BenchResult result;
  result.device = ReadDeviceFingerprint();
  const auto start = std::chrono::steady_clock::now();
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                         Executor::Create(graph, options.placement, registry, options.run));
  FillRandomInputs(graph, executor->buffers());
  result.init_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  result.assignments = executor->assignments();
  result.entries = executor->entries();
  result.backend_versions = executor->BackendVersions();
  result.int8_calibration = executor->int8_calibration();

  MeasureOptions measure = options.measure;
  measure.threads = options.run.num_threads;
  LATTE_ASSIGN_OR_RETURN(result.latency, Measure([&] { return executor->Run(); }, measure));
  if (options.op_profiling) {
    std::vector<double> totals;
    LayoutUs layout;
    for (int i = 0; i < options.measure.num_runs; ++i) LATTE_RETURN_IF_ERROR(executor->RunProfiled(totals, &layout));
    result.node_avg_us = totals;
    double scale = 1.0 / options.measure.num_runs;
    if (executor->RunsWholeGraph()) {
      double sum = 0;
      for (double v : totals) sum += v;
      if (sum > 0) scale = result.latency.stats.p50 / sum;
    }
    for (double& v : result.node_avg_us) v *= scale;
    result.layout_avg_us = layout.reorders * scale;
  }
  result.peak_rss_kb = PeakRssKb();
  if (options.output_drift) result.drift = MeasureDrift(graph, options, registry, *executor);
  return result;
}

Int8Summary SummarizeInt8(const BenchResult& result) {
  Int8Summary s;
  std::map<std::string, int> by_kind;
  for (const ProfileEntry& e : result.entries) {
    if (e.inserted) {
      s.quantize += e.op == "quantize";
      s.dequantize += e.op == "dequantize";
      continue;
    }
    if (e.precision == Precision::kInt8) {
      s.int8_nodes += static_cast<int>(e.sources.size());
      by_kind[e.op] += 1;
    }
  }
  for (const NodeAssignment& a : result.assignments) s.fp32_nodes += a.precision != Precision::kInt8;
  s.int8_kinds.assign(by_kind.begin(), by_kind.end());
  std::sort(s.int8_kinds.begin(), s.int8_kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

}  // namespace latte
