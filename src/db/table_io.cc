#include "db/table_io.h"

#include <cmath>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "db/external_table.h"
#include "db/tensorrt_conv.h"

namespace latte {
namespace {

// FNV-1a over the file's bytes: the import's identity follows the content, not the path.
Expected<std::string> ContentDigest(const std::string& path, std::uint64_t& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  std::uint64_t hash = 1469598103934665603ull;
  bytes = 0;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    }
    bytes += static_cast<std::uint64_t>(in.gcount());
  }
  if (in.bad()) return IoError(path + ": read error");
  return fmt::format("{:016x}", hash);
}

std::string CsvNumber(double value) { return std::isnan(value) ? std::string() : fmt::format("{}", value); }

nlohmann::json JsonNumber(double value) { return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value); }

}  // namespace

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
  LATTE_ASSIGN_OR_RETURN(std::string digest, ContentDigest(path, bytes));
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

}  // namespace latte
