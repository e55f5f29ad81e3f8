#pragma once
// The runs of `latte validate` and `latte compare` kept in the store when they are given --db
// (schema version 6's runs, run_validations and run_comparisons): a lab's history of accuracy and
// speed per device. A run is stored in one transaction with its device and its rows, timed by the
// database's clock (a server's, on PostgreSQL), and read back by device and command.

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "db/store.h"

namespace latte {

/// The first store schema that keeps runs (its migration 5 -> 6 made their tables).
inline constexpr int kRunsSchemaVersion = 6;

inline constexpr double kNoFigure = std::numeric_limits<double>::quiet_NaN();  // stored as NULL

/// What a run was: the command and what it ran with. The command line never holds a password
/// (the caller masks --db).
struct RunInfo {
  std::string command;    // "validate" | "compare"
  std::string arguments;  // the command line, for people to read
  /// validate: the pack file as given, FNV-1a of its bytes (its identity: the same pack under
  /// another name has the same hash) and the device key it was made on; "" for compare.
  std::string pack, pack_hash, pack_device;
  /// validate: the pack's configuration, which every model ran with; compare: "" and 0 (each row
  /// names its own).
  std::string backend;
  int threads = 0;
  std::string precision;
  double drift_ratio = kNoFigure;  // validate: the drift reference now / when the pack was made
};

/// One model of a validate run, the figures `latte validate --format json` prints.
struct ValidationRecord {
  std::string model;
  double predicted_ms = kNoFigure, measured_ms = kNoFigure;
  double interval_lo_ms = kNoFigure, interval_hi_ms = kNoFigure;
  double error_pct = kNoFigure;
  std::int64_t covered_nodes = 0, total_nodes = 0;
  double uncovered_measured_ms = kNoFigure;
};

/// One configuration (model × backend × threads × precision) of a compare run, the figures
/// `latte compare --format json` prints; a configuration that could not run has `why` and no figures.
struct ComparisonRecord {
  std::string model, backend, backend_version;
  int threads = 0;
  std::string precision;
  bool ok = false;
  std::string why;
  double p50_us = kNoFigure, mean_us = kNoFigure, throughput_per_s = kNoFigure;
  std::optional<std::int64_t> timed_runs;
  std::int64_t model_bytes = 0;
  std::optional<std::int64_t> peak_rss_kb;
  double energy_mj = kNoFigure;          // per inference, where RAPL is readable
  double host_other_cores = kNoFigure;   // what other processes used while it ran
  std::optional<bool> contended;
  double drift_max_abs_diff = kNoFigure, drift_cosine = kNoFigure;  // where drift was measured
};

/// A stored run with its rows (those of its command).
struct StoredRun {
  std::int64_t id = 0;
  std::string time;  // ISO 8601 UTC with milliseconds, by the database's clock
  DeviceInfo device;
  RunInfo info;
  std::vector<ValidationRecord> validations;
  std::vector<ComparisonRecord> comparisons;
};

/// Which runs to read; an empty field matches every run.
struct RunFilter {
  std::optional<std::string> device = std::nullopt;   // DeviceInfo::key
  std::optional<std::string> command = std::nullopt;  // "validate" | "compare"
};

class RunHistory {
 public:
  /// Stores a run in ONE transaction: its device (inserted when new), the run, its rows. Returns
  /// the run's id. Fails on a store opened read-only or older than schema version 6.
  static Expected<std::int64_t> Record(Store& store, const DeviceInfo& device, const RunInfo& run,
                                       std::span<const ValidationRecord> validations,
                                       std::span<const ComparisonRecord> comparisons);
  /// The runs matching `filter`, oldest first, each with its rows in the order they were given.
  /// Empty on a store older than schema version 6 (read as it is).
  static Expected<std::vector<StoredRun>> Read(const Store& store, const RunFilter& filter = {});
};

}  // namespace latte
