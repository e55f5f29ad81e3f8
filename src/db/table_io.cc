#include "db/table_io.h"

#include <cmath>
#include <optional>
#include <span>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "db/external_table.h"
#include "db/tensorrt_conv.h"

namespace latte {
namespace {

std::string CsvNumber(double value) { return std::isnan(value) ? std::string() : fmt::format("{}", value); }

nlohmann::json JsonNumber(double value) { return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value); }

}  // namespace

// FNV-1a over the file's bytes: an identity that follows the content, not the path.
Expected<std::string> FileDigest(const std::string& path, std::uint64_t* size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  std::uint64_t hash = 1469598103934665603ull, bytes = 0;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    }
    bytes += static_cast<std::uint64_t>(in.gcount());
  }
  if (in.bad()) return IoError(path + ": read error");
  if (size != nullptr) *size = bytes;
  return fmt::format("{:016x}", hash);
}

std::size_t ImportReport::SkippedLines() const {
  std::size_t n = 0;
  for (const auto& [why, count] : skipped) n += count;
  return n;
}

std::string ImportReport::Describe() const {
  std::size_t skipped_lines = 0;
  std::string reasons;
  for (const auto& [why, n] : skipped) {
    skipped_lines += n;
    reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", why, n);
  }
  std::string text = fmt::format("imported {} rows, {} already stored, skipped {} lines", imported, already_stored,
                                 skipped_lines);
  if (!reasons.empty()) text += " (" + reasons + ")";
  return text;
}

Expected<ImportReport> ImportTable(Store& store, const std::string& path, const TableImportOptions& options) {
  if (options.backend.empty()) return InvalidInput("import needs a backend name (--backend)");
  LATTE_RETURN_IF_ERROR(DataTypeFromPrecision(options.precision));
  ParsedTable table;
  if (options.format == "tensorrt-conv") {
    LATTE_ASSIGN_OR_RETURN(table, ReadTensorrtConvTable(path, options.precision));
  } else if (options.format == "op-lut") {
    LATTE_ASSIGN_OR_RETURN(table, ReadOpLutTable(path));
  } else if (options.format == "csv") {
    LATTE_ASSIGN_OR_RETURN(table, ReadCsvTable(path, options.latency_unit, options.precision));
  } else {
    return InvalidInput("unknown import format '" + options.format + "' (tensorrt-conv, op-lut or csv)");
  }
  if (options.device.empty() && options.format != "op-lut") {
    return InvalidInput("importing " + options.format + " needs a device name (--device)");
  }
  // Rows grouped by the device they are stored under.
  std::map<std::string, std::vector<MeasurementRecord>> by_device;
  for (TableRow& row : table.rows) {
    std::string device = options.device.empty() ? row.device : options.device;
    if (device.empty()) {
      return InvalidInput(fmt::format("{}:{}: no device in the line and no --device given", path, row.line));
    }
    if (Status plausible = CheckKernelParams(row.kernel); !plausible.ok())
      return InvalidInput(fmt::format("{}:{}: {}", path, row.line, plausible.message()));
    // A latency must be a positive number and its percentiles in order.
    const Stats& s = row.stats;
    const double order[] = {s.p0, s.p10, s.p50, s.p90, s.p99, s.p100};
    double previous = 0;
    for (double p : order) {
      if (std::isnan(p)) continue;  // not given
      if (!(p > 0) || !std::isfinite(p) || p < previous)
        return InvalidInput(fmt::format("{}:{}: latency percentiles must be positive and in order (p0 ≤ p10 ≤ p50 ≤ "
                                        "p90 ≤ p99 ≤ p100)", path, row.line));
      previous = p;
    }
    if (!(s.p50 > 0)) return InvalidInput(fmt::format("{}:{}: no median latency", path, row.line));
    MeasurementRecord record;
    record.kernel = std::move(row.kernel);
    record.stats = row.stats;
    record.source = "import:" + options.format;
    by_device[device].push_back(std::move(record));
  }

  std::uint64_t bytes = 0;
  LATTE_ASSIGN_OR_RETURN(std::string digest, FileDigest(path, &bytes));
  // The import campaign's identity: the table's origin and backend configuration, and the file's digest.
  const CampaignKey key{std::string(kImportCampaign),
                        options.backend,
                        options.threads,
                        options.precision,
                        nlohmann::json{{"format", options.format},
                                       {"device", options.device},
                                       {"backend_version", options.backend_version}}
                            .dump(),
                        nlohmann::json{{"bytes", bytes}, {"fnv1a64", digest}}.dump()};

  ImportReport report;
  report.data_lines = table.data_lines;
  report.skipped = table.skipped;
  LATTE_RETURN_IF_ERROR(store.Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(std::int64_t backend_id, store.UpsertBackend({options.backend, options.backend_version,
                                                                         options.threads, options.precision}));
    LATTE_ASSIGN_OR_RETURN(CampaignInfo campaign,
                           store.FindOrCreateCampaign(key, static_cast<std::int64_t>(table.rows.size())));
    report.campaign = campaign.id;
    for (auto& [device, records] : by_device) {
      LATTE_ASSIGN_OR_RETURN(std::int64_t device_id, store.UpsertDevice({device, device, "{}"}));
      for (MeasurementRecord& record : records) record.campaign = campaign.id;
      LATTE_ASSIGN_OR_RETURN(std::size_t inserted, store.InsertMeasurements(device_id, backend_id, records));
      report.imported += inserted;
      report.already_stored += records.size() - inserted;
    }
    return store.UpdateCampaign(campaign.id, static_cast<std::int64_t>(report.imported + report.already_stored),
                                "done");
  }));
  return report;
}

Expected<std::size_t> ExportMeasurements(const Store& store, const MeasurementFilter& filter, std::string_view format,
                                         std::ostream& out) {
  if (format != "csv" && format != "jsonl") {
    return InvalidInput("unknown export format '" + std::string(format) + "' (csv or jsonl)");
  }
  LATTE_ASSIGN_OR_RETURN(std::vector<StoredMeasurement> rows, store.QueryMeasurements(filter));
  if (format == "csv") {
    bool first = true;
    for (const char* column : kExportCsvColumns) {
      out << (first ? "" : ",") << column;
      first = false;
    }
    out << "\n";
  }
  for (const StoredMeasurement& m : rows) {
    const Stats& s = m.stats;
    if (format == "csv") {
      out << CsvField(m.device.key) << ',' << CsvField(m.backend.name) << ',' << CsvField(m.backend.version) << ','
          << m.backend.threads << ',' << CsvField(m.backend.precision) << ',' << CsvField(m.kernel.Kind()) << ','
          << CsvField(m.kernel.Key()) << ',' << DataTypeName(m.kernel.dtype) << ',' << s.n << ',' << CsvNumber(s.p0)
          << ',' << CsvNumber(s.p10) << ',' << CsvNumber(s.p50) << ',' << CsvNumber(s.p90) << ',' << CsvNumber(s.p99)
          << ',' << CsvNumber(s.p100) << ',' << CsvNumber(s.mean) << ',' << CsvNumber(s.std) << ','
          << CsvField(m.time) << ',' << CsvField(m.source) << ',' << (m.campaign ? std::to_string(*m.campaign) : "")
          << "\n";
    } else {
      nlohmann::json params = nlohmann::json::object();
      for (const auto& [name, value] : m.kernel.params) params[name] = value;
      nlohmann::json line = {
          {"device", m.device.key},
          {"backend", {{"name", m.backend.name}, {"version", m.backend.version}, {"threads", m.backend.threads},
                       {"precision", m.backend.precision}}},
          {"kernel", {{"key", m.kernel.Key()}, {"kind", m.kernel.Kind()}, {"dtype", DataTypeName(m.kernel.dtype)},
                      {"params", params}}},
          {"stats", {{"n", s.n}, {"p0_us", JsonNumber(s.p0)}, {"p10_us", JsonNumber(s.p10)},
                     {"p50_us", JsonNumber(s.p50)}, {"p90_us", JsonNumber(s.p90)}, {"p99_us", JsonNumber(s.p99)},
                     {"p100_us", JsonNumber(s.p100)}, {"mean_us", JsonNumber(s.mean)}, {"std_us", JsonNumber(s.std)}}},
          {"time", m.time},
          {"source", m.source},
          {"campaign", m.campaign ? nlohmann::json(*m.campaign) : nlohmann::json(nullptr)}};
      out << line.dump() << "\n";
    }
  }
  out.flush();
  if (!out) return IoError("writing the export failed");
  return rows.size();
}

namespace {

// An integer a run may not have: empty when it has none, as CsvNumber's NaN.
std::string CsvInteger(const std::optional<std::int64_t>& value) { return value ? std::to_string(*value) : ""; }

}  // namespace

Expected<std::size_t> ExportRuns(const Store& store, const RunFilter& filter, std::string_view format, std::ostream& out) {
  if (format != "csv" && format != "jsonl") {
    return InvalidInput("unknown export format '" + std::string(format) + "' (csv or jsonl)");
  }
  const std::string command = filter.command.value_or("");
  if (command != "validate" && command != "compare") {
    return InvalidInput("runs of '" + command + "': validate or compare");
  }
  const bool validate = command == "validate";
  LATTE_ASSIGN_OR_RETURN(std::vector<StoredRun> runs, RunHistory::Read(store, filter));
  if (format == "csv") {
    bool first = true;
    for (const char* column : validate ? std::span<const char* const>(kValidateRunColumns)
                                       : std::span<const char* const>(kCompareRunColumns)) {
      out << (first ? "" : ",") << column;
      first = false;
    }
    out << "\n";
  }
  std::size_t rows = 0;
  for (const StoredRun& run : runs) {
    const RunInfo& info = run.info;
    for (const ValidationRecord& v : run.validations) {
      ++rows;
      if (format == "csv") {
        out << run.id << ',' << CsvField(run.time) << ',' << CsvField(run.device.key) << ',' << CsvField(info.pack) << ','
            << CsvField(info.pack_hash) << ',' << CsvField(info.pack_device) << ',' << CsvField(info.backend) << ','
            << (info.threads > 0 ? std::to_string(info.threads) : "") << ',' << CsvField(info.precision) << ','
            << CsvNumber(info.drift_ratio) << ',' << CsvField(v.model) << ',' << CsvNumber(v.predicted_ms) << ','
            << CsvNumber(v.measured_ms) << ',' << CsvNumber(v.interval_lo_ms) << ',' << CsvNumber(v.interval_hi_ms)
            << ',' << CsvNumber(v.error_pct) << ',' << v.covered_nodes << ',' << v.total_nodes << ','
            << CsvNumber(v.uncovered_measured_ms) << ',' << CsvField(info.arguments) << "\n";
      } else {
        nlohmann::json line = {{"run", run.id},
                               {"time", run.time},
                               {"device", run.device.key},
                               {"command", info.command},
                               {"pack", info.pack},
                               {"pack_hash", info.pack_hash},
                               {"pack_device", info.pack_device},
                               {"backend", info.backend},
                               {"threads", info.threads},
                               {"precision", info.precision},
                               {"drift_ratio", JsonNumber(info.drift_ratio)},
                               {"model", v.model},
                               {"predicted_ms", JsonNumber(v.predicted_ms)},
                               {"measured_ms", JsonNumber(v.measured_ms)},
                               {"interval_ms", {JsonNumber(v.interval_lo_ms), JsonNumber(v.interval_hi_ms)}},
                               {"error_pct", JsonNumber(v.error_pct)},
                               {"covered_nodes", v.covered_nodes},
                               {"total_nodes", v.total_nodes},
                               {"uncovered_measured_ms", JsonNumber(v.uncovered_measured_ms)},
                               {"arguments", info.arguments}};
        out << line.dump() << "\n";
      }
    }
    for (const ComparisonRecord& c : run.comparisons) {
      ++rows;
      const std::optional<std::int64_t> contended =
          c.contended ? std::optional<std::int64_t>(*c.contended ? 1 : 0) : std::nullopt;
      if (format == "csv") {
        out << run.id << ',' << CsvField(run.time) << ',' << CsvField(run.device.key) << ',' << CsvField(c.model) << ','
            << CsvField(c.backend) << ',' << CsvField(c.backend_version) << ',' << c.threads << ','
            << CsvField(c.precision) << ',' << (c.ok ? 1 : 0) << ',' << CsvNumber(c.p50_us) << ','
            << CsvNumber(c.mean_us) << ',' << CsvNumber(c.throughput_per_s) << ',' << CsvInteger(c.timed_runs) << ','
            << c.model_bytes << ',' << CsvInteger(c.peak_rss_kb) << ',' << CsvNumber(c.energy_mj) << ','
            << CsvNumber(c.host_other_cores) << ',' << CsvInteger(contended) << ',' << CsvNumber(c.drift_max_abs_diff)
            << ',' << CsvNumber(c.drift_cosine) << ',' << CsvField(c.why) << ',' << CsvField(info.arguments) << "\n";
      } else {
        auto integer = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
        nlohmann::json line = {{"run", run.id},
                               {"time", run.time},
                               {"device", run.device.key},
                               {"command", info.command},
                               {"model", c.model},
                               {"backend", c.backend},
                               {"backend_version", c.backend_version},
                               {"threads", c.threads},
                               {"precision", c.precision},
                               {"ok", c.ok},
                               {"p50_us", JsonNumber(c.p50_us)},
                               {"mean_us", JsonNumber(c.mean_us)},
                               {"throughput_per_s", JsonNumber(c.throughput_per_s)},
                               {"timed_runs", integer(c.timed_runs)},
                               {"model_bytes", c.model_bytes},
                               {"peak_rss_kb", integer(c.peak_rss_kb)},
                               {"energy_mj_per_inference", JsonNumber(c.energy_mj)},
                               {"host_other_cores", JsonNumber(c.host_other_cores)},
                               {"contended", c.contended ? nlohmann::json(*c.contended) : nlohmann::json(nullptr)},
                               {"drift_max_abs_diff", JsonNumber(c.drift_max_abs_diff)},
                               {"drift_cosine", JsonNumber(c.drift_cosine)},
                               {"why", c.why},
                               {"arguments", info.arguments}};
        out << line.dump() << "\n";
      }
    }
  }
  out.flush();
  if (!out) return IoError("writing the export failed");
  return rows;
}

}  // namespace latte
