#include "db/run_history.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "db/sql_connection.h"

namespace latte {
namespace {

using sql::Statement;

// A run's columns and its device's, in the order Read takes them.
constexpr const char* kRunColumns =
    "r.id, r.time, r.command, r.arguments, r.pack, r.pack_hash, r.pack_device, r.backend, r.threads, r.precision, "
    "r.drift_ratio, d.key, d.description, d.fingerprint";

// The WHERE clause of a RunFilter over runs r and devices d, and its values in order (?1, ?2).
std::pair<std::string, std::vector<std::string>> RunWhere(const RunFilter& filter) {
  std::string where;
  std::vector<std::string> values;
  auto add = [&](const char* column, const std::string& value) {
    values.push_back(value);
    where += fmt::format("{}{} = ?{}", where.empty() ? " WHERE " : " AND ", column, values.size());
  };
  if (filter.device) add("d.key", *filter.device);
  if (filter.command) add("r.command", *filter.command);
  return {where, values};
}

// A nullable column as an optional integer.
std::optional<std::int64_t> OptionalInt(const Statement& s, int col) {
  if (s.IsNull(col)) return std::nullopt;
  return s.Int(col);
}

}  // namespace

Expected<std::int64_t> RunHistory::Record(Store& store, const DeviceInfo& device, const RunInfo& run,
                                          std::span<const ValidationRecord> validations,
                                          std::span<const ComparisonRecord> comparisons) {
  if (store.version_ < kRunsSchemaVersion) {
    return InvalidInput(fmt::format("{}: schema version {} keeps no runs", store.path_, store.version_));
  }
  if (run.command != "validate" && run.command != "compare") return Internal("a run of unknown command " + run.command);
  if (run.command == "validate" ? !comparisons.empty() : !validations.empty()) {
    return Internal(fmt::format("a {} run with {} validation and {} comparison rows", run.command, validations.size(),
                                comparisons.size()));
  }
  sql::Connection& db = *store.db_;
  std::int64_t id = 0;
  LATTE_RETURN_IF_ERROR(store.Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(std::int64_t device_id, store.UpsertDevice(device));
    Statement insert(db);
    LATTE_RETURN_IF_ERROR(insert.Prepare(fmt::format(
        "INSERT INTO runs(command, device_id, time, arguments, pack, pack_hash, pack_device, backend, threads, "
        "precision, drift_ratio) VALUES(?1, ?2, {}, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
        db.NowSql())));
    insert.Bind(1, run.command);
    insert.Bind(2, device_id);
    insert.Bind(3, run.arguments);
    auto bind_text = [&](int i, const std::string& text) {
      if (text.empty()) insert.Bind(i, std::optional<std::int64_t>());  // NULL
      else insert.Bind(i, text);
    };
    bind_text(4, run.pack);
    bind_text(5, run.pack_hash);
    bind_text(6, run.pack_device);
    bind_text(7, run.backend);
    insert.Bind(8, run.threads > 0 ? std::optional<std::int64_t>(run.threads) : std::nullopt);
    bind_text(9, run.precision);
    insert.Bind(10, run.drift_ratio);
    LATTE_ASSIGN_OR_RETURN(bool row, insert.Step());
    if (!row) return Internal(store.path_ + ": a stored run has no id");
    id = insert.Int(0);

    Statement model(db);
    LATTE_RETURN_IF_ERROR(model.Prepare(
        "INSERT INTO run_validations(run_id, seq, model, predicted_ms, measured_ms, interval_lo_ms, interval_hi_ms, "
        "error_pct, covered_nodes, total_nodes, uncovered_measured_ms) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    for (std::size_t i = 0; i < validations.size(); ++i) {
      const ValidationRecord& v = validations[i];
      model.Reset();
      model.Bind(1, id);
      model.Bind(2, i);
      model.Bind(3, v.model);
      model.Bind(4, v.predicted_ms);
      model.Bind(5, v.measured_ms);
      model.Bind(6, v.interval_lo_ms);
      model.Bind(7, v.interval_hi_ms);
      model.Bind(8, v.error_pct);
      model.Bind(9, v.covered_nodes);
      model.Bind(10, v.total_nodes);
      model.Bind(11, v.uncovered_measured_ms);
      LATTE_RETURN_IF_ERROR(model.Run());
    }

    Statement config(db);
    LATTE_RETURN_IF_ERROR(config.Prepare(
        "INSERT INTO run_comparisons(run_id, seq, model, backend, backend_version, threads, precision, ok, why, p50_us, "
        "mean_us, throughput_per_s, timed_runs, model_bytes, peak_rss_kb, energy_mj, host_other_cores, contended, "
        "drift_max_abs_diff, drift_cosine) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"));
    for (std::size_t i = 0; i < comparisons.size(); ++i) {
      const ComparisonRecord& c = comparisons[i];
      config.Reset();
      config.Bind(1, id);
      config.Bind(2, i);
      config.Bind(3, c.model);
      config.Bind(4, c.backend);
      config.Bind(5, c.backend_version);
      config.Bind(6, c.threads);
      config.Bind(7, c.precision);
      config.Bind(8, c.ok ? 1 : 0);
      config.Bind(9, c.why);
      config.Bind(10, c.p50_us);
      config.Bind(11, c.mean_us);
      config.Bind(12, c.throughput_per_s);
      config.Bind(13, c.timed_runs);
      config.Bind(14, c.model_bytes);
      config.Bind(15, c.peak_rss_kb);
      config.Bind(16, c.energy_mj);
      config.Bind(17, c.host_other_cores);
      config.Bind(18, c.contended ? std::optional<std::int64_t>(*c.contended ? 1 : 0) : std::nullopt);
      config.Bind(19, c.drift_max_abs_diff);
      config.Bind(20, c.drift_cosine);
      LATTE_RETURN_IF_ERROR(config.Run());
    }
    return Status::Ok();
  }));
  return id;
}

Expected<std::vector<StoredRun>> RunHistory::Read(const Store& store, const RunFilter& filter) {
  std::vector<StoredRun> runs;
  if (store.version_ < kRunsSchemaVersion) return runs;  // read as it is: an older store kept no runs
  sql::Connection& db = *store.db_;
  const auto [where, values] = RunWhere(filter);
  auto bind = [&](Statement& s) {
    for (std::size_t i = 0; i < values.size(); ++i) s.Bind(static_cast<int>(i + 1), values[i]);
  };
  std::map<std::int64_t, std::size_t> index;  // run id -> position in `runs`
  {
    Statement select(db);
    LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
        "SELECT {} FROM runs r JOIN devices d ON d.id = r.device_id{} ORDER BY r.id", kRunColumns, where)));
    bind(select);
    LATTE_RETURN_IF_ERROR(select.ForEachRow([&] {
      StoredRun& run = runs.emplace_back();
      run.id = select.Int(0);
      run.time = select.Text(1);
      run.info.command = select.Text(2);
      run.info.arguments = select.Text(3);
      run.info.pack = select.Text(4);
      run.info.pack_hash = select.Text(5);
      run.info.pack_device = select.Text(6);
      run.info.backend = select.Text(7);
      run.info.threads = select.IsNull(8) ? 0 : static_cast<int>(select.Int(8));
      run.info.precision = select.Text(9);
      run.info.drift_ratio = select.Real(10);
      run.device = {select.Text(11), select.Text(12), select.Text(13)};
      index[run.id] = runs.size() - 1;
    }));
  }
  if (runs.empty()) return runs;
  auto run_of = [&](std::int64_t id) -> StoredRun* {
    auto it = index.find(id);
    return it == index.end() ? nullptr : &runs[it->second];
  };
  {
    Statement select(db);
    LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
        "SELECT v.run_id, v.model, v.predicted_ms, v.measured_ms, v.interval_lo_ms, v.interval_hi_ms, v.error_pct, "
        "v.covered_nodes, v.total_nodes, v.uncovered_measured_ms FROM run_validations v JOIN runs r ON r.id = v.run_id "
        "JOIN devices d ON d.id = r.device_id{} ORDER BY v.run_id, v.seq",
        where)));
    bind(select);
    LATTE_RETURN_IF_ERROR(select.ForEachRow([&] {
      StoredRun* run = run_of(select.Int(0));
      if (run == nullptr) return;
      run->validations.push_back({select.Text(1), select.Real(2), select.Real(3), select.Real(4), select.Real(5),
                                  select.Real(6), select.Int(7), select.Int(8), select.Real(9)});
    }));
  }
  {
    Statement select(db);
    LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
        "SELECT c.run_id, c.model, c.backend, c.backend_version, c.threads, c.precision, c.ok, c.why, c.p50_us, "
        "c.mean_us, c.throughput_per_s, c.timed_runs, c.model_bytes, c.peak_rss_kb, c.energy_mj, c.host_other_cores, "
        "c.contended, c.drift_max_abs_diff, c.drift_cosine FROM run_comparisons c JOIN runs r ON r.id = c.run_id "
        "JOIN devices d ON d.id = r.device_id{} ORDER BY c.run_id, c.seq",
        where)));
    bind(select);
    LATTE_RETURN_IF_ERROR(select.ForEachRow([&] {
      StoredRun* run = run_of(select.Int(0));
      if (run == nullptr) return;
      ComparisonRecord& c = run->comparisons.emplace_back();
      c.model = select.Text(1);
      c.backend = select.Text(2);
      c.backend_version = select.Text(3);
      c.threads = static_cast<int>(select.Int(4));
      c.precision = select.Text(5);
      c.ok = select.Int(6) != 0;
      c.why = select.Text(7);
      c.p50_us = select.Real(8);
      c.mean_us = select.Real(9);
      c.throughput_per_s = select.Real(10);
      c.timed_runs = OptionalInt(select, 11);
      c.model_bytes = select.Int(12);
      c.peak_rss_kb = OptionalInt(select, 13);
      c.energy_mj = select.Real(14);
      c.host_other_cores = select.Real(15);
      if (!select.IsNull(16)) c.contended = select.Int(16) != 0;
      c.drift_max_abs_diff = select.Real(17);
      c.drift_cosine = select.Real(18);
    }));
  }
  return runs;
}

}  // namespace latte
