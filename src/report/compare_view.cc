#include "report/compare_view.h"

#include <iomanip>
#include <set>
#include <sstream>

#include "core/text.h"
#include "report/html_report.h"
#include "report/text_table.h"

namespace latte {
namespace {

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

// Nine significant digits, for files.
std::string Sci9(double value) {
  std::ostringstream out;
  out << std::setprecision(9) << value;
  return out.str();
}

// A difference that may be 0, 1e-7 or 3.2: three significant digits, "0" for none.
std::string Sci(double value) {
  if (value == 0) return "0";
  std::ostringstream out;
  out << std::setprecision(3) << value;
  return out.str();
}

}  // namespace

std::string CompareView::Text() const {
  TextTable table({{"model"}, {"backend"}, {"threads", TextTable::kRight}, {"precision"}, {"p50 ms", TextTable::kRight},
                   {"inf/s", TextTable::kRight}, {"size MB", TextTable::kRight}, {"peak RSS MB", TextTable::kRight},
                   {"mJ/inf", TextTable::kRight}, {"max |diff|", TextTable::kRight}, {"cosine", TextTable::kRight}});
  std::string undrifted;
  std::string notes, busy, int8;
  for (const CompareRow& r : result_.rows) {
    const std::string model = KeepTail(std::filesystem::path(r.model).filename().string(), 40);
    const std::string size = Fixed(r.model_bytes / 1e6, 2);
    if (!r.ok) {
      // Why instead of a number: in the table short, in full below it.
      table.AddRow({model, r.backend, std::to_string(r.threads), r.precision, "cannot run (see below)", "", size, "", "", "", ""});
      notes += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s), " + r.precision +
               ": " + r.why + "\n";
      continue;
    }
    if (r.contended)
      busy += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s): other processes used " +
              Fixed(r.host_other_cores, 2) + " cores\n";
    table.AddRow({model, r.backend, std::to_string(r.threads), r.precision, Fixed(r.p50_us / 1000.0, 3) + (r.contended ? "*" : ""),
                  Fixed(r.mean_us > 0 ? 1e6 / r.mean_us : 0.0, 1), size, Fixed(r.peak_rss_kb / 1024.0, 1),
                  r.energy_mj ? Fixed(*r.energy_mj, 3) : "n/a", r.drift.measured ? Sci(r.drift.max_abs_diff) : "n/a",
                  r.drift.measured ? Fixed(r.drift.cosine, 6) : "n/a"});
    if (r.int8_nodes >= 0)
      int8 += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s): " + std::to_string(r.int8_nodes) +
               " of " + std::to_string(r.int8_nodes + r.fp32_nodes) + " nodes int8, " + std::to_string(r.fp32_nodes) + " fp32" +
              (r.int8_calibration.empty() ? "" : "; scales from " + r.int8_calibration) + "\n";
    if (!r.drift.measured)
      undrifted += "  " + model + " on " + r.backend + ", " + std::to_string(r.threads) + " thread(s), " + r.precision + ": " +
                   r.drift.why + "\n";
  }
  std::string out = "Device: " + result_.device.Describe() + "\n\n" + table.Render();
  out += "\nPeak RSS: of a child process per configuration (import + benchmark); a child that does nothing peaks at " +
         Fixed(result_.baseline_rss_kb / 1024.0, 1) + " MB.\n";
  out += "Throughput: 1 / mean latency (one inference at a time). Size: the model file.\n";
  out += "Drift: the outputs against the same backend at fp32 on the same generated inputs, the largest absolute "
         "difference and the lowest cosine similarity over the outputs (each output in --format json); an fp32 row is "
         "its own reference.\n";
  out += result_.energy_readable
             ? "Energy: RAPL package counters over a second timed pass, per inference (includes other load).\n"
             : "Energy: n/a (no readable RAPL counters under /sys/class/powercap).\n";
  if (!int8.empty())
    out += "\nint8 rows (post-training quantized by Latte; `latte bench --precision int8` names each node kept at fp32 and why):\n" + int8;
  if (!busy.empty())
    out += "\n* The host was busy while these ran, even after re-measuring (their times are likely slower than this "
           "machine's):\n" + busy;
  if (!undrifted.empty()) out += "\nDrift not measured:\n" + undrifted;
  if (!notes.empty()) out += "\nCannot run:\n" + notes;
  return out;
}

nlohmann::json CompareView::Json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& r : result_.rows) rows.push_back(CompareRowToJson(r));
  return {{"device", result_.device.Describe()},
          {"baseline_rss_kb", result_.baseline_rss_kb},
          {"energy_readable", result_.energy_readable},
          {"rows", rows}};
}

std::vector<ComparisonRecord> CompareView::Records() const {
  std::vector<ComparisonRecord> records;
  for (const CompareRow& r : result_.rows) {
    ComparisonRecord& c = records.emplace_back();
    c.model = r.model, c.backend = r.backend, c.threads = r.threads, c.precision = r.precision, c.ok = r.ok;
    c.model_bytes = r.model_bytes;
    if (!r.ok) {
      c.why = r.why;
      continue;
    }
    c.backend_version = r.backend_version;
    c.p50_us = r.p50_us, c.mean_us = r.mean_us, c.timed_runs = r.runs;
    c.throughput_per_s = r.mean_us > 0 ? 1e6 / r.mean_us : 0.0;  // as CompareRowToJson
    c.peak_rss_kb = r.peak_rss_kb;
    if (r.energy_mj) c.energy_mj = *r.energy_mj;
    if (r.host_other_cores >= 0) c.host_other_cores = r.host_other_cores;
    c.contended = r.contended;
    if (r.drift.measured) c.drift_max_abs_diff = r.drift.max_abs_diff, c.drift_cosine = r.drift.cosine;
  }
  return records;
}

std::string CompareView::Csv() const {
  std::string out =
      "model,backend,threads,precision,ok,p50_us,mean_us,throughput_per_s,model_bytes,peak_rss_kb,energy_mj_per_inference,"
      "drift_max_abs_diff,drift_cosine,host_other_cores,contended,backend_version,runs,why\n";
  for (const CompareRow& r : result_.rows) {
    out += CsvField(r.model) + "," + CsvField(r.backend) + "," + std::to_string(r.threads) + "," + r.precision + "," +
           (r.ok ? "1" : "0") + ",";
    if (r.ok) {
      out += Fixed(r.p50_us, 3) + "," + Fixed(r.mean_us, 3) + "," + Fixed(r.mean_us > 0 ? 1e6 / r.mean_us : 0.0, 3) + "," +
             std::to_string(r.model_bytes) + "," + std::to_string(r.peak_rss_kb) + "," +
             (r.energy_mj ? Fixed(*r.energy_mj, 6) : "") + "," + (r.drift.measured ? Sci9(r.drift.max_abs_diff) : "") + "," +
             (r.drift.measured ? Fixed(r.drift.cosine, 9) : "") + "," +
             (r.host_other_cores >= 0 ? Fixed(r.host_other_cores, 3) : "") + "," + (r.contended ? "1" : "0") + "," +
             CsvField(r.backend_version) + "," + std::to_string(r.runs) + ",\n";
    } else {
      out += ",,," + std::to_string(r.model_bytes) + ",,,,,,,,," + CsvField(r.why) + "\n";
    }
  }
  return out;
}

std::string CompareView::Html() const {
  std::set<std::string> models;
  for (const CompareRow& row : result_.rows) models.insert(row.model);
  const std::string title =
      models.size() == 1 ? "latte compare: " + *models.begin() : "latte compare: " + std::to_string(models.size()) + " models";
  return HtmlReport("compare", title, Json(), nullptr);
}

}  // namespace latte
