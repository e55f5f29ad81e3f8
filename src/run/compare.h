#pragma once
// `latte compare`'s runner: one configuration (model × backend × threads × precision) per child
// process (fork), so that its peak resident set is its own and not the maximum of everything
// measured before it in one process; the p50 latency, and the package energy where RAPL is
// readable. report/compare_view turns the result into a table, JSON or CSV.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"
#include "run/benchmark.h"

namespace latte {


struct CompareModel {
  std::string path;
  long long file_bytes = 0;
  /// Imports the model; called in each child process, so no graph lives in the parent.
  std::function<Expected<Graph>()> load;
};

struct CompareOptions {
  std::vector<std::string> backends;
  std::vector<int> threads;
  std::vector<Precision> precisions;
  MeasureOptions measure;
  /// --calibration-data for the int8 rows: samples by input name; each model calibrates on those
  /// of its own inputs (none: generated inputs).
  std::shared_ptr<const CalibrationInputs> calibration;
};

/// One configuration's outcome: numbers, or why there are none.
struct CompareRow {
  std::string model, backend, precision;
  int threads = 1;
  bool ok = false;
  std::string why;  // when !ok: the backend's or the run's own message
  std::string backend_version;
  double p50_us = 0, mean_us = 0;
  int runs = 0;
  long long model_bytes = 0;
  long peak_rss_kb = 0;                       // the child process's peak resident set
  std::optional<double> energy_mj;            // per inference (RAPL package energy), when readable
  double host_other_cores = -1;               // what other processes used while it ran (-1: unknown)
  bool contended = false;                     // ... more than the cores it left free: likely slow
  RunDrift drift;                             // the outputs against the same backend at fp32, same inputs
  int int8_nodes = -1, fp32_nodes = -1;        // at int8: the user's nodes that ran int8 / stayed fp32 (-1: other precisions)
  std::string int8_calibration;               // at int8: what the scales were calibrated on (Int8Calibration::Describe)
};

struct CompareResult {
  std::vector<CompareRow> rows;
  long baseline_rss_kb = 0;  // a child that only forks and reports: what every peak includes
  bool energy_readable = false;
  DeviceFingerprint device;
};

/// Runs every configuration (model-major order), each in a fresh child process: import, then
/// BenchmarkGraph under `options.measure`, then (when RAPL is readable) a second timed pass
/// with the package energy counters read around it. Fails only when it cannot fork or read
/// a child's report; a configuration that cannot run is a row saying why.
Expected<CompareResult> CompareModels(const std::vector<CompareModel>& models, const CompareOptions& options,
                                      const BackendRegistry& registry);

/// Package energy in microjoules summed over /sys/class/powercap/intel-rapl:N, or nullopt when
/// not readable (no RAPL, or not permitted).
std::optional<double> ReadRaplMicrojoules();

/// A row as JSON (how a child reports it, and the rows of `latte compare --format json`), and back.
nlohmann::json CompareRowToJson(const CompareRow& row);
CompareRow CompareRowFromJson(const nlohmann::json& json);

}  // namespace latte
