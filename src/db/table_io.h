#pragma once
// `latte import` and `latte export` as library calls: an external table goes into the store in
// ONE transaction (a malformed line leaves the store exactly as it was), and stored measurements
// come out as CSV or JSON lines.

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "core/status.h"
#include "db/run_history.h"
#include "db/store.h"

namespace latte {

/// The formats ImportTable reads and ExportMeasurements writes.
inline constexpr const char* kImportFormats[] = {"tensorrt-conv", "op-lut", "csv"};
inline constexpr const char* kExportFormats[] = {"csv", "jsonl"};

struct TableImportOptions {
  std::string format;           // tensorrt-conv | op-lut | csv
  std::string device;           // device key to store under; op-lut: empty = each line's `device`
  std::string backend;          // backend name, required ("tensorrt", "caffe2-int8", ...)
  std::string backend_version;  // "" when unknown
  int threads = 0;              // 0 = unknown
  std::string precision = "fp32";  // fp32 | fp16 | int8: the backend's precision and the kernels' dtype
  std::string latency_unit;     // csv with a latency_time column: "ms" or "us"
};

struct ImportReport {
  std::size_t data_lines = 0;       // records read (header and blank lines excluded)
  std::size_t imported = 0;         // rows newly stored
  std::size_t already_stored = 0;   // rows this same import stored before (re-import), or repeated in the file
  std::map<std::string, std::size_t> skipped;  // why → lines (failed runs, unmappable ops)
  std::int64_t campaign = 0;        // the import's campaign id (identity: options + file content)
  /// Sum of `skipped`.
  std::size_t SkippedLines() const;
  /// "imported 95256 rows, 0 already stored, skipped 5984 lines (failed in TensorRT (latency -1): 5984)".
  std::string Describe() const;
};

/// Reads PATH in `options.format` and stores every row in one transaction, as a campaign whose
/// identity is the options and the file's content, so importing the same file twice stores
/// nothing twice. A malformed line fails with "PATH:LINE: what" and nothing is stored.
Expected<ImportReport> ImportTable(Store& store, const std::string& path, const TableImportOptions& options);

/// Writes the measurements matching `filter` as "csv" (one header line, then one row per
/// measurement; a figure the source did not give is an empty cell) or "jsonl" (one object per
/// line; null for such a figure). Returns how many measurements were written.
Expected<std::size_t> ExportMeasurements(const Store& store, const MeasurementFilter& filter, std::string_view format,
                                         std::ostream& out);

/// FNV-1a (64 bits) of a file's bytes in hex: an identity that follows the content, not the path
/// (an import's, a validated pack's). `size`, when given, gets the file's size in bytes.
Expected<std::string> FileDigest(const std::string& path, std::uint64_t* size = nullptr);

/// Writes the stored runs of `command` ("validate" or "compare", db/run_history.h) matching
/// `filter` as "csv" or "jsonl", one row per model (validate) or per configuration (compare) with
/// its run's columns (kValidateRunColumns, kCompareRunColumns); a figure the run did not have is an
/// empty cell or null. Returns how many rows were written.
Expected<std::size_t> ExportRuns(const Store& store, const RunFilter& filter, std::string_view format, std::ostream& out);

/// The CSV columns ExportRuns writes for validate and for compare runs.
inline constexpr const char* kValidateRunColumns[] = {
    "run",        "time",           "device",         "pack",        "pack_hash",     "pack_device",
    "backend",    "threads",        "precision",      "drift_ratio", "model",         "predicted_ms",
    "measured_ms", "interval_lo_ms", "interval_hi_ms", "error_pct",  "covered_nodes", "total_nodes",
    "uncovered_measured_ms", "arguments"};
inline constexpr const char* kCompareRunColumns[] = {
    "run",        "time",     "device",  "model",         "backend",     "backend_version", "threads",
    "precision",  "ok",       "p50_us",  "mean_us",       "throughput_per_s", "timed_runs", "model_bytes",
    "peak_rss_kb", "energy_mj_per_inference", "host_other_cores", "contended", "drift_max_abs_diff",
    "drift_cosine", "why",    "arguments"};

/// The CSV columns ExportMeasurements writes (ReadCsvTable reads the file back by kernel_key).
inline constexpr const char* kExportCsvColumns[] = {
    "device",  "backend", "backend_version", "threads", "precision", "kind",   "kernel_key", "dtype",
    "n",       "p0_us",   "p10_us",          "p50_us",  "p90_us",    "p99_us", "p100_us",    "mean_us",
    "std_us",  "time",    "source",          "campaign"};

}  // namespace latte
