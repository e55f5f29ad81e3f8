#include "run/compare.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "run/executor.h"
#include "run/process.h"

namespace latte {

nlohmann::json CompareRowToJson(const CompareRow& r) {
  nlohmann::json j = {{"model", r.model},     {"backend", r.backend}, {"threads", r.threads},
                      {"precision", r.precision}, {"ok", r.ok},       {"model_bytes", r.model_bytes}};
  if (!r.ok) {
    j["why"] = r.why;
    return j;
  }
  j["backend_version"] = r.backend_version;
  j["p50_us"] = r.p50_us;
  j["mean_us"] = r.mean_us;
  j["runs"] = r.runs;
  j["throughput_per_s"] = r.mean_us > 0 ? 1e6 / r.mean_us : 0.0;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["energy_mj_per_inference"] = r.energy_mj ? nlohmann::json(*r.energy_mj) : nlohmann::json(nullptr);
  j["host_other_cores"] = r.host_other_cores >= 0 ? nlohmann::json(r.host_other_cores) : nlohmann::json(nullptr);
  j["contended"] = r.contended;
  j["drift"] = RunDriftToJson(r.drift);
  if (r.int8_nodes >= 0) j["int8_nodes"] = r.int8_nodes, j["fp32_nodes"] = r.fp32_nodes;
  if (!r.int8_calibration.empty()) j["int8_calibration"] = r.int8_calibration;
  return j;
}

CompareRow CompareRowFromJson(const nlohmann::json& j) {
  CompareRow r;
  r.model = j.value("model", "");
  r.backend = j.value("backend", "");
  r.threads = j.value("threads", 1);
  r.precision = j.value("precision", "");
  r.ok = j.value("ok", false);
  r.why = j.value("why", "");
  r.model_bytes = j.value("model_bytes", 0LL);
  r.backend_version = j.value("backend_version", "");
  r.p50_us = j.value("p50_us", 0.0);
  r.mean_us = j.value("mean_us", 0.0);
  r.runs = j.value("runs", 0);
  r.peak_rss_kb = j.value("peak_rss_kb", 0L);
  if (j.contains("energy_mj_per_inference") && j["energy_mj_per_inference"].is_number())
    r.energy_mj = j["energy_mj_per_inference"].get<double>();
  if (j.contains("host_other_cores") && j["host_other_cores"].is_number()) r.host_other_cores = j["host_other_cores"].get<double>();
  r.contended = j.value("contended", false);
  if (j.contains("drift")) r.drift = RunDriftFromJson(j["drift"]);
  r.int8_nodes = j.value("int8_nodes", -1);
  r.fp32_nodes = j.value("fp32_nodes", -1);
  r.int8_calibration = j.value("int8_calibration", "");
  return r;
}

namespace {

// Energy per inference over a second timed pass (the benchmark's own runs cannot be bracketed
// from outside it): the package counters include whatever else the machine does meanwhile.
std::optional<double> MeasureEnergy(const Graph& graph, const BenchOptions& options, const BackendRegistry& registry) {
  if (!ReadRaplMicrojoules()) return std::nullopt;
  auto executor = Executor::Create(graph, options.placement, registry, options.run);
  if (!executor.ok()) return std::nullopt;
  FillRandomInputs(graph, (*executor)->buffers());
  if (!(*executor)->Run().ok()) return std::nullopt;
  const auto e0 = ReadRaplMicrojoules();
  const auto start = std::chrono::steady_clock::now();
  int runs = 0;
  double secs = 0;
  while (runs < options.measure.num_runs || secs < options.measure.min_secs) {
    if (!(*executor)->Run().ok()) return std::nullopt;
    ++runs;
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (secs > options.measure.max_secs) break;
  }
  const auto e1 = ReadRaplMicrojoules();
  if (!e0 || !e1 || *e1 < *e0 || runs == 0) return std::nullopt;  // a counter wrapped: no number
  return (*e1 - *e0) / 1000.0 / runs;
}

// What a child process does for one configuration.
CompareRow RunConfiguration(const CompareModel& model, const std::string& backend, int threads, Precision precision,
                            const CompareOptions& options, const BackendRegistry& registry) {
  CompareRow row;
  row.model = model.path;
  row.backend = backend;
  row.threads = threads;
  row.precision = std::string(PrecisionName(precision));
  row.model_bytes = model.file_bytes;
  auto graph = model.load();
  if (!graph.ok()) {
    row.why = graph.status().message();
    return row;
  }
  BenchOptions bench;
  bench.placement.default_backend = backend;
  bench.run.num_threads = threads;
  bench.run.precision = precision;
  bench.measure = options.measure;
  if (precision == Precision::kInt8 && options.calibration) {
    // The samples of this model's inputs: one list serves models whose inputs are named differently.
    auto mine = std::make_shared<CalibrationInputs>();
    for (TensorId id : graph->inputs)
      if (auto it = options.calibration->arrays.find(graph->tensor(id).name); it != options.calibration->arrays.end())
        mine->arrays.insert(*it);
    if (!mine->arrays.empty()) bench.run.calibration = std::move(mine);
  }
  auto result = BenchmarkGraph(*graph, bench, registry);
  if (!result.ok()) {
    row.why = result.status().message();
    return row;
  }
  row.ok = true;
  for (const std::string& v : result->backend_versions)
    if (v.rfind(backend + " ", 0) == 0) row.backend_version = v.substr(backend.size() + 1);
  row.p50_us = result->latency.stats.p50;
  row.mean_us = result->latency.stats.mean;
  row.runs = static_cast<int>(result->latency.stats.n);
  row.peak_rss_kb = result->peak_rss_kb;  // before the energy pass adds a second executor
  row.host_other_cores = result->latency.host.known() ? result->latency.host.other_cores : -1;
  row.contended = result->latency.contended;
  row.drift = result->drift;
  if (precision == Precision::kInt8) {
    const Int8Summary int8 = SummarizeInt8(*result);
    row.int8_nodes = int8.int8_nodes, row.fp32_nodes = int8.fp32_nodes;
    row.int8_calibration = result->int8_calibration.Describe();
  }
  row.energy_mj = MeasureEnergy(*graph, bench, registry);
  return row;
}

}  // namespace

std::optional<double> ReadRaplMicrojoules() {
  namespace fs = std::filesystem;
  std::error_code ec;
  double total = 0;
  bool any = false;
  for (const auto& entry : fs::directory_iterator("/sys/class/powercap", ec)) {
    const std::string name = entry.path().filename().string();
    // Packages only ("intel-rapl:0"); their subzones ("intel-rapl:0:0") are inside them.
    if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos) continue;
    std::ifstream in(entry.path() / "energy_uj");
    double uj = 0;
    if (!(in >> uj)) return std::nullopt;  // present but not readable (needs root): no number at all
    total += uj;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

Expected<CompareResult> CompareModels(const std::vector<CompareModel>& models, const CompareOptions& options,
                                      const BackendRegistry& registry) {
  CompareResult result;
  result.device = ReadDeviceFingerprint();
  result.energy_readable = ReadRaplMicrojoules().has_value();
  LATTE_ASSIGN_OR_RETURN(nlohmann::json baseline, RunInChild([] { return nlohmann::json{{"rss", PeakRssKb()}}; }));
  result.baseline_rss_kb = baseline.value("rss", 0L);
  for (const CompareModel& model : models)
    for (const std::string& backend : options.backends)
      for (int threads : options.threads)
        for (Precision precision : options.precisions) {
          auto json = RunInChild([&] {
            return CompareRowToJson(RunConfiguration(model, backend, threads, precision, options, registry));
          });
          CompareRow row;
          if (json.ok()) {
            row = CompareRowFromJson(*json);
          } else {
            row.model = model.path, row.backend = backend, row.threads = threads;
            row.precision = std::string(PrecisionName(precision));
            row.model_bytes = model.file_bytes;
            row.why = json.status().message();
          }
          result.rows.push_back(std::move(row));
        }
  return result;
}

}  // namespace latte
