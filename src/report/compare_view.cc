#include "report/compare_view.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/text.h"
#include "report/inspect_view.h"
#include "run/process.h"
#include "report/text_table.h"

namespace latte {
namespace {

nlohmann::json RowToJson(const CompareRow& r) {
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
  return j;
}

CompareRow RowFromJson(const nlohmann::json& j) {
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
  return r;
}

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
  row.energy_mj = MeasureEnergy(*graph, bench, registry);
  return row;
}


std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
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
            return RowToJson(RunConfiguration(model, backend, threads, precision, options, registry));
          });
          CompareRow row;
          if (json.ok()) {
            row = RowFromJson(*json);
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

std::string CompareView::Text() const {
  TextTable table;
  using A = TextTable::Align;
  table.AddColumn("model");
  table.AddColumn("backend");
  table.AddColumn("threads", A::kRight);
  table.AddColumn("precision");
  table.AddColumn("p50 ms", A::kRight);
  table.AddColumn("inf/s", A::kRight);
  table.AddColumn("size MB", A::kRight);
  table.AddColumn("peak RSS MB", A::kRight);
  table.AddColumn("mJ/inf", A::kRight);
  std::string notes, busy;
  for (const CompareRow& r : result_.rows) {
    const std::string model = KeepTail(std::filesystem::path(r.model).filename().string(), 40);
    const std::string size = Fixed(r.model_bytes / 1e6, 2);
    if (!r.ok) {
      // Why instead of a number: in the table short, in full below it.
      table.AddRow({model, r.backend, std::to_string(r.threads), r.precision, "cannot run (see below)", "", size, "", ""});
      notes += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s), " + r.precision +
               ": " + r.why + "\n";
      continue;
    }
    if (r.contended)
      busy += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s): other processes used " +
              Fixed(r.host_other_cores, 2) + " cores\n";
    table.AddRow({model, r.backend, std::to_string(r.threads), r.precision, Fixed(r.p50_us / 1000.0, 3) + (r.contended ? "*" : ""),
                  Fixed(r.mean_us > 0 ? 1e6 / r.mean_us : 0.0, 1), size, Fixed(r.peak_rss_kb / 1024.0, 1),
                  r.energy_mj ? Fixed(*r.energy_mj, 3) : "n/a"});
  }
  std::string out = "Device: " + result_.device.Describe() + "\n\n" + table.Render();
  out += "\nPeak RSS: of a child process per configuration (import + benchmark); a child that does nothing peaks at " +
         Fixed(result_.baseline_rss_kb / 1024.0, 1) + " MB.\n";
  out += "Throughput: 1 / mean latency (one inference at a time). Size: the model file.\n";
  out += result_.energy_readable
             ? "Energy: RAPL package counters over a second timed pass, per inference (includes other load).\n"
             : "Energy: n/a (no readable RAPL counters under /sys/class/powercap).\n";
  if (!busy.empty())
    out += "\n* The host was busy while these ran, even after re-measuring (their times are likely slower than this "
           "machine's):\n" + busy;
  if (!notes.empty()) out += "\nCannot run:\n" + notes;
  return out;
}

nlohmann::json CompareView::Json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& r : result_.rows) rows.push_back(RowToJson(r));
  return {{"device", result_.device.Describe()},
          {"baseline_rss_kb", result_.baseline_rss_kb},
          {"energy_readable", result_.energy_readable},
          {"rows", rows}};
}

std::string CompareView::Csv() const {
  std::string out =
      "model,backend,threads,precision,ok,p50_us,mean_us,throughput_per_s,model_bytes,peak_rss_kb,energy_mj_per_inference,"
      "host_other_cores,contended,backend_version,runs,why\n";
  for (const CompareRow& r : result_.rows) {
    out += CsvField(r.model) + "," + CsvField(r.backend) + "," + std::to_string(r.threads) + "," + r.precision + "," +
           (r.ok ? "1" : "0") + ",";
    if (r.ok) {
      out += Fixed(r.p50_us, 3) + "," + Fixed(r.mean_us, 3) + "," + Fixed(r.mean_us > 0 ? 1e6 / r.mean_us : 0.0, 3) + "," +
             std::to_string(r.model_bytes) + "," + std::to_string(r.peak_rss_kb) + "," +
             (r.energy_mj ? Fixed(*r.energy_mj, 6) : "") + "," +
             (r.host_other_cores >= 0 ? Fixed(r.host_other_cores, 3) : "") + "," + (r.contended ? "1" : "0") + "," +
             CsvField(r.backend_version) + "," + std::to_string(r.runs) + ",\n";
    } else {
      out += ",,," + std::to_string(r.model_bytes) + ",,,,,,," + CsvField(r.why) + "\n";
    }
  }
  return out;
}

}  // namespace latte
