// The runs of validate and compare in the store (db/run_history.h), on a SQLite file and on a
// throwaway PostgreSQL server: figures read back bit for bit (NULL where a run had none), filtered
// by device and command, one transaction per run, and an older store migrated to keep them.
#include "db/run_history.h"

#include <sqlite3.h>

#include <cmath>
#include <regex>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "postgres_server.h"

namespace latte {
namespace {

using latte::testing::PostgresServer;
using latte::testing::SharedPostgresServer;
using latte::testing::TempDir;

enum class Engine { kSqlite, kPostgres };

// Figures whose shortest decimal form is long, so a text round trip that rounds shows.
ValidationRecord Validation(const std::string& model, double base) {
  return {model, base / 3, base * 0.1 + 0.2, base / 7, base / 2.9, 100 * (base / 3 - base * 0.1 - 0.2) / (base * 0.1 + 0.2),
          41, 43, base / 1e9};
}

ComparisonRecord Ran(const std::string& backend, int threads) {
  ComparisonRecord c;
  c.model = "m.tflite", c.backend = backend, c.backend_version = "v 1.2", c.threads = threads, c.precision = "fp32";
  c.ok = true;
  c.p50_us = 1234.5678901234567, c.mean_us = 1250.0000000000002, c.throughput_per_s = 1e6 / 1250.0000000000002;
  c.timed_runs = 57, c.model_bytes = 229032, c.peak_rss_kb = 51234, c.host_other_cores = 0.123456789;
  c.contended = false, c.drift_max_abs_diff = 0, c.drift_cosine = 1;
  return c;
}

ComparisonRecord CannotRun() {
  ComparisonRecord c;
  c.model = "m.tflite", c.backend = "ort", c.threads = 1, c.precision = "int8", c.ok = false;
  c.why = "int8 unsupported on ort, because 'it is' so";
  c.model_bytes = 229032;
  return c;
}

void ExpectSameFigure(double stored, double given, const std::string& what) {
  if (std::isnan(given)) {
    EXPECT_TRUE(std::isnan(stored)) << what << ": " << stored;
  } else {
    EXPECT_EQ(stored, given) << what;  // bit for bit, not nearly
  }
}

void ExpectSame(const ValidationRecord& a, const ValidationRecord& b) {
  EXPECT_EQ(a.model, b.model);
  ExpectSameFigure(a.predicted_ms, b.predicted_ms, "predicted_ms");
  ExpectSameFigure(a.measured_ms, b.measured_ms, "measured_ms");
  ExpectSameFigure(a.interval_lo_ms, b.interval_lo_ms, "interval_lo_ms");
  ExpectSameFigure(a.interval_hi_ms, b.interval_hi_ms, "interval_hi_ms");
  ExpectSameFigure(a.error_pct, b.error_pct, "error_pct");
  EXPECT_EQ(a.covered_nodes, b.covered_nodes);
  EXPECT_EQ(a.total_nodes, b.total_nodes);
  ExpectSameFigure(a.uncovered_measured_ms, b.uncovered_measured_ms, "uncovered_measured_ms");
}

void ExpectSame(const ComparisonRecord& a, const ComparisonRecord& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.backend_version, b.backend_version);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.why, b.why);
  ExpectSameFigure(a.p50_us, b.p50_us, "p50_us");
  ExpectSameFigure(a.mean_us, b.mean_us, "mean_us");
  ExpectSameFigure(a.throughput_per_s, b.throughput_per_s, "throughput_per_s");
  EXPECT_EQ(a.timed_runs, b.timed_runs);
  EXPECT_EQ(a.model_bytes, b.model_bytes);
  EXPECT_EQ(a.peak_rss_kb, b.peak_rss_kb);
  ExpectSameFigure(a.energy_mj, b.energy_mj, "energy_mj");
  ExpectSameFigure(a.host_other_cores, b.host_other_cores, "host_other_cores");
  EXPECT_EQ(a.contended, b.contended);
  ExpectSameFigure(a.drift_max_abs_diff, b.drift_max_abs_diff, "drift_max_abs_diff");
  ExpectSameFigure(a.drift_cosine, b.drift_cosine, "drift_cosine");
}

RunInfo ValidateRun() {
  RunInfo run;
  run.command = "validate";
  run.arguments = "latte validate a.tflite b.onnx --pack p.json --db x.db";
  run.pack = "p.json", run.pack_hash = "0123456789abcdef", run.pack_device = "epyc-2";
  run.backend = "xnnpack", run.threads = 2, run.precision = "fp32";
  run.drift_ratio = 1.0 / 3;
  return run;
}

RunInfo CompareRun() {
  RunInfo run;
  run.command = "compare";
  run.arguments = "latte compare m.tflite --backends xnnpack,ort";
  return run;
}

class RunHistoryTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (!sqlite() && !SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
  }
  bool sqlite() const { return GetParam() == Engine::kSqlite; }
  std::string NewStore(const std::string& file = "runs.db") {
    return sqlite() ? (dir_.path() / file).string() : SharedPostgresServer().CreateDatabase();
  }
  // The first column of the first row of `sql`, as another program reads the store.
  std::string Query(const std::string& target, const std::string& sql) {
    if (!sqlite()) {
      std::string text = PostgresServer::Query(target, sql);
      return text.empty() ? text : text.substr(0, text.find('\n'));
    }
    sqlite3* db = nullptr;
    std::string text;
    if (sqlite3_open(target.c_str(), &db) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
        const unsigned char* value = sqlite3_column_text(stmt, 0);
        text = value ? reinterpret_cast<const char*>(value) : "";
      } else {
        ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return text;
  }
  void Exec(const std::string& target, const std::string& sql) {
    if (!sqlite()) {
      PostgresServer::RunSql(target, sql);
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(target.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Engines, RunHistoryTest, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::kSqlite ? "SQLite" : "PostgreSQL";
                         });

TEST_P(RunHistoryTest, RunsReadBackBitForBitByDeviceAndCommand) {
  const std::string target = NewStore();
  auto store = Store::Open(target);
  ASSERT_TRUE(store.ok()) << store.status().message();
  const DeviceInfo board{"board-1", "board-1: a board", R"({"name":"board-1"})"};
  const DeviceInfo phone{"phone-a", "phone-a: a phone", "{}"};
  ValidationRecord no_interval = Validation("b.onnx", 17);
  no_interval.interval_lo_ms = no_interval.interval_hi_ms = kNoFigure;  // stored as NULL, read as NaN
  const std::vector<ValidationRecord> validations = {Validation("a.tflite", 5), no_interval};
  ComparisonRecord busy = Ran("onednn", 2);
  busy.energy_mj = 0.0123456789012345, busy.contended = true, busy.host_other_cores = 1.75;
  const std::vector<ComparisonRecord> comparisons = {Ran("xnnpack", 1), busy, CannotRun()};

  auto first = RunHistory::Record(*store, board, ValidateRun(), validations, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = RunHistory::Record(*store, phone, CompareRun(), {}, comparisons);
  ASSERT_TRUE(second.ok()) << second.status().message();
  RunInfo again = ValidateRun();
  again.drift_ratio = kNoFigure;
  auto third = RunHistory::Record(*store, board, again, std::vector<ValidationRecord>{validations[0]}, {});
  ASSERT_TRUE(third.ok()) << third.status().message();

  auto all = RunHistory::Read(*store);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  const StoredRun& v = (*all)[0];
  EXPECT_EQ(v.id, *first);
  EXPECT_EQ(v.device.key, "board-1");
  EXPECT_EQ(v.device.fingerprint_json, R"({"name":"board-1"})");
  EXPECT_TRUE(std::regex_match(v.time, std::regex(R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\d\dZ)"))) << v.time;
  const RunInfo want = ValidateRun();
  EXPECT_EQ(v.info.command, "validate");
  EXPECT_EQ(v.info.arguments, want.arguments);
  EXPECT_EQ(v.info.pack, want.pack);
  EXPECT_EQ(v.info.pack_hash, want.pack_hash);
  EXPECT_EQ(v.info.pack_device, want.pack_device);
  EXPECT_EQ(v.info.backend, "xnnpack");
  EXPECT_EQ(v.info.threads, 2);
  EXPECT_EQ(v.info.precision, "fp32");
  EXPECT_EQ(v.info.drift_ratio, 1.0 / 3);
  ASSERT_EQ(v.validations.size(), 2u);
  EXPECT_TRUE(v.comparisons.empty());
  for (std::size_t i = 0; i < 2; ++i) ExpectSame(v.validations[i], validations[i]);

  const StoredRun& c = (*all)[1];
  EXPECT_EQ(c.device.key, "phone-a");
  EXPECT_EQ(c.info.command, "compare");
  EXPECT_EQ(c.info.pack, "");
  EXPECT_EQ(c.info.backend, "");
  EXPECT_EQ(c.info.threads, 0);
  EXPECT_TRUE(std::isnan(c.info.drift_ratio));
  ASSERT_EQ(c.comparisons.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) ExpectSame(c.comparisons[i], comparisons[i]);
  EXPECT_TRUE(std::isnan((*all)[2].info.drift_ratio));
  EXPECT_LE(v.time, (*all)[2].time);

  auto boards = RunHistory::Read(*store, {.device = "board-1"});
  ASSERT_TRUE(boards.ok());
  ASSERT_EQ(boards->size(), 2u);
  EXPECT_EQ((*boards)[1].id, *third);
  ASSERT_EQ((*boards)[1].validations.size(), 1u);
  auto compares = RunHistory::Read(*store, {.command = "compare"});
  ASSERT_TRUE(compares.ok());
  ASSERT_EQ(compares->size(), 1u);
  EXPECT_EQ((*compares)[0].id, *second);
  auto none = RunHistory::Read(*store, {.device = "phone-a", .command = "validate"});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // Read-only, as export reads it: the same.
  auto reader = Store::OpenReadOnly(target);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto read = RunHistory::Read(*reader, {.device = "phone-a"});
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].comparisons.size(), 3u);
  EXPECT_FALSE(RunHistory::Record(*reader, board, ValidateRun(), validations, {}).ok());  // never writes
}

TEST_P(RunHistoryTest, ARunIsOneTransaction) {
  const std::string target = NewStore();
  auto store = Store::Open(target);
  ASSERT_TRUE(store.ok()) << store.status().message();
  // Another program removes the table the run's rows go to: the run's own row goes too.
  Exec(target, "DROP TABLE run_comparisons");
  auto failed = RunHistory::Record(*store, {"d", "d", "{}"}, CompareRun(), {}, std::vector<ComparisonRecord>{CannotRun()});
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(Query(target, "SELECT count(*) FROM runs"), "0");
  EXPECT_EQ(Query(target, "SELECT count(*) FROM devices"), "0");
  // Rows of the other command, or an unknown command, are a caller's bug: nothing stored.
  EXPECT_EQ(RunHistory::Record(*store, {"d", "d", "{}"}, ValidateRun(), {}, std::vector<ComparisonRecord>{CannotRun()})
                .status()
                .code(),
            StatusCode::kInternal);
  EXPECT_EQ(Query(target, "SELECT count(*) FROM runs"), "0");
}

TEST_P(RunHistoryTest, AStoreOfThePreviousSchemaMigratesKeepingItsRows) {
  const std::string target = NewStore("v5.db");
  {
    auto old = Store::Open(target, {.schema_version = kRunsSchemaVersion - 1});
    ASSERT_TRUE(old.ok()) << old.status().message();
    auto device = old->UpsertDevice({"old-device", "old", "{}"});
    auto backend = old->UpsertBackend({"xnnpack", "1", 1, "fp32"});
    ASSERT_TRUE(device.ok() && backend.ok());
    Kernel relu;
    relu.op = OpKind::kRelu;
    relu.params = {{"n", 1}, {"h", 4}, {"w", 4}, {"c", 8}};
    Stats stats;
    stats.n = 5, stats.p50 = 2.5;
    const std::vector<MeasurementRecord> records = {{relu, stats, "measured", std::nullopt, ""}};
    ASSERT_TRUE(old->InsertMeasurements(*device, *backend, records).ok());
    // The older schema keeps no runs: refused, not half-written.
    EXPECT_EQ(RunHistory::Record(*old, {"d", "d", "{}"}, CompareRun(), {}, std::vector<ComparisonRecord>{CannotRun()})
                  .status()
                  .message(),
              old->path() + ": schema version " + std::to_string(kRunsSchemaVersion - 1) + " keeps no runs");
  }
  {  // Read as it is: no runs, nothing migrated.
    auto reader = Store::OpenReadOnly(target);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    EXPECT_EQ(*reader->SchemaVersion(), kRunsSchemaVersion - 1);
    auto runs = RunHistory::Read(*reader);
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    EXPECT_TRUE(runs->empty());
  }
  auto store = Store::Open(target);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
  auto id = RunHistory::Record(*store, {"old-device", "old", "{}"}, ValidateRun(),
                               std::vector<ValidationRecord>{Validation("a.tflite", 3)}, {});
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto runs = RunHistory::Read(*store, {.device = "old-device"});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  ExpectSame((*runs)[0].validations.at(0), Validation("a.tflite", 3));
  auto measurements = store->QueryMeasurements();
  ASSERT_TRUE(measurements.ok());
  ASSERT_EQ(measurements->size(), 1u);
  EXPECT_EQ((*measurements)[0].stats.p50, 2.5);
  EXPECT_EQ((*measurements)[0].device.key, "old-device");
}

}  // namespace
}  // namespace latte
