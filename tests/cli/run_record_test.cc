// `latte validate --db` and `latte compare --db` as a user runs them, into a SQLite file and into a
// throwaway PostgreSQL server: the store keeps exactly the figures the JSON output prints (read
// back through the store and through `latte export --runs`), under the device the run names; a
// store that cannot be reached or is damaged stops the command before it measures, one line and
// exit 2; a URL's password appears in no output and no stored row; a store of the previous schema
// is migrated. Also `fit --device` and `export --device` on a store of two devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../db/postgres_server.h"
#include "cli/run_latte.h"
#include "core/device.h"
#include "db/run_history.h"
#include "db/store.h"
#include "db/table_io.h"
#include "test_paths.h"

namespace latte::testing {
namespace {

constexpr const char* kPassword = "pw-S3cret";
const char* const kQuick[] = {"--warmup-runs", "1", "--num-runs", "3", "--min-secs", "0"};

std::vector<std::string> Quick(std::vector<std::string> args) {
  args.insert(args.end(), std::begin(kQuick), std::end(kQuick));
  return args;
}

std::string ShippedPack() { return SourceDir() + "/data/packs/xnnpack-1thread-fp32.json.gz"; }

// A SQLite file in `dir`, and a new server database whose URL carries a password (the test server
// logs in by trust, never asking), when the server runs.
std::vector<std::string> Stores(const TempDir& dir, const std::string& file = "runs.db") {
  std::vector<std::string> stores = {(dir.path() / file).string()};
  if (SharedPostgresServer().running()) {
    std::string url = SharedPostgresServer().CreateDatabase();
    url.replace(0, 13, "postgresql://latte:" + std::string(kPassword) + "@");
    stores.push_back(url);
  }
  return stores;
}

std::string Masked(std::string db) {
  if (const auto at = db.find(kPassword); at != std::string::npos) db.replace(at, std::string(kPassword).size(), "***");
  return db;
}

// The runs of `db` as the store reads them back.
std::vector<StoredRun> Runs(const std::string& db, const RunFilter& filter = {}) {
  auto store = Store::OpenReadOnly(db);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return {};
  auto runs = RunHistory::Read(*store, filter);
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  return runs.ok() ? *runs : std::vector<StoredRun>{};
}

// A figure the JSON printed (null: none) against the one stored (NaN: none), bit for bit.
void ExpectFigure(const nlohmann::json& printed, double stored, const std::string& what) {
  if (printed.is_null()) {
    EXPECT_TRUE(std::isnan(stored)) << what << " " << stored;
  } else {
    EXPECT_EQ(printed.get<double>(), stored) << what << std::setprecision(17) << ": " << printed << " printed, " << stored
                                             << " stored";
  }
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// No row of any table of the server's database holds the password.
void ExpectNoPasswordStored(const std::string& url) {
  const std::string tables =
      PostgresServer::Query(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1");
  ASSERT_NE(tables.find("run_comparisons"), std::string::npos) << tables;
  std::istringstream in(tables);
  for (std::string table; std::getline(in, table);) {
    EXPECT_EQ(PostgresServer::Query(url, "SELECT count(*) FROM " + table + " t WHERE t::text LIKE '%" +
                                             std::string(kPassword) + "%'"),
              "0\n")
        << table;
  }
}

TEST(RunRecord, ValidateStoresTheFiguresItPrints) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  TempDir dir;
  for (const std::string& db : Stores(dir)) {
    RunResult r = RunLatte(Quick({"validate", model, "--pack", ShippedPack(), "--format", "json", "--db", db,
                                  "--device-name", "board-1"}),
                           dir.path(), 240);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "recorded as run 1 in " + Masked(db) + "\n");
    EXPECT_EQ(r.out.find(kPassword), std::string::npos);
    const nlohmann::json printed = nlohmann::json::parse(r.out);
    std::vector<StoredRun> runs = Runs(db);
    ASSERT_EQ(runs.size(), 1u) << db;
    const StoredRun& run = runs[0];
    EXPECT_EQ(run.device.key, "board-1");
    EXPECT_NE(run.device.fingerprint_json.find("\"hardware_key\":\"" + DeviceInfoFrom(ReadDeviceFingerprint()).key),
              std::string::npos)
        << run.device.fingerprint_json;
    EXPECT_EQ(run.info.command, "validate");
    EXPECT_EQ(run.info.pack, ShippedPack());
    EXPECT_EQ(run.info.pack_hash, *FileDigest(ShippedPack()));
    EXPECT_EQ(run.info.pack_device, printed["pack"]["device"]["key"].get<std::string>());
    EXPECT_EQ(run.info.backend, "xnnpack");
    EXPECT_EQ(run.info.threads, 1);
    EXPECT_EQ(run.info.precision, "fp32");
    ExpectFigure(printed["drift"].contains("ratio") ? printed["drift"]["ratio"] : nlohmann::json(), run.info.drift_ratio,
                 "drift ratio");
    EXPECT_EQ(run.info.arguments, "latte validate " + model + " --pack " + ShippedPack() +
                                      " --num-threads 1 --warmup-runs 1 --num-runs 3 --min-secs 0 --device-name board-1 "
                                      "--db " + Masked(db));
    ASSERT_EQ(run.validations.size(), 1u);
    const ValidationRecord& v = run.validations[0];
    const nlohmann::json& m = printed["models"][0];
    EXPECT_EQ(v.model, m["model"].get<std::string>());
    ExpectFigure(m["predicted_ms"], v.predicted_ms, "predicted_ms");
    ExpectFigure(m["measured_ms"], v.measured_ms, "measured_ms");
    ExpectFigure(m["interval_ms"][0], v.interval_lo_ms, "interval lo");
    ExpectFigure(m["interval_ms"][1], v.interval_hi_ms, "interval hi");
    ExpectFigure(m["error_pct"], v.error_pct, "error_pct");
    ExpectFigure(m["uncovered_measured_ms"], v.uncovered_measured_ms, "uncovered_measured_ms");
    EXPECT_EQ(v.covered_nodes, m["covered_nodes"].get<std::int64_t>());
    EXPECT_EQ(v.total_nodes, m["total_nodes"].get<std::int64_t>());
    EXPECT_GT(v.measured_ms, 0);

    // Read back by a user: the same figures, and --device filters.
    RunResult exported = RunLatte({"export", "--runs", "validate", "--format", "jsonl", "--db", db}, dir.path());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    std::vector<nlohmann::json> lines = JsonLines(exported.out);
    ASSERT_EQ(lines.size(), 1u) << exported.out;
    EXPECT_EQ(lines[0]["device"], "board-1");
    EXPECT_EQ(lines[0]["run"], 1);
    EXPECT_EQ(lines[0]["time"], run.time);
    EXPECT_EQ(lines[0]["pack_hash"], run.info.pack_hash);
    for (const char* figure : {"predicted_ms", "measured_ms", "error_pct"}) EXPECT_EQ(lines[0][figure], m[figure]) << figure;
    EXPECT_EQ(lines[0]["interval_ms"], m["interval_ms"]);
    RunResult csv = RunLatte({"export", "--runs", "validate", "--db", db, "--device", "board-1"}, dir.path());
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2) << csv.out;  // header + the model
    EXPECT_EQ(csv.out.rfind("run,time,device,pack,pack_hash,", 0), 0u) << csv.out;
    RunResult other = RunLatte({"export", "--runs", "validate", "--db", db, "--device", "board-2"}, dir.path());
    ASSERT_EQ(other.exit_code, 0) << other.err;
    EXPECT_EQ(std::count(other.out.begin(), other.out.end(), '\n'), 1) << other.out;  // the header alone
    for (const RunResult* each : {&exported, &csv, &other}) EXPECT_EQ(each->out.find(kPassword), std::string::npos);
    if (db != Masked(db)) ExpectNoPasswordStored(db);
  }
}

TEST(RunRecord, CompareStoresEveryRowItPrintsAndWhyARowCannotRun) {
  LATTE_REQUIRE_MODEL("hand_landmark_lite.tflite");
  const std::string model = ModelPath("hand_landmark_lite.tflite");
  TempDir dir;
  for (const std::string& db : Stores(dir)) {
    // XNNPACK has no bf16: that row is the refusal.
    RunResult r = RunLatte(Quick({"compare", model, "--backends", "xnnpack", "--precision", "int8,bf16", "--format",
                                  "json", "--db", db}),
                           dir.path(), 240);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "recorded as run 1 in " + Masked(db) + "\n");
    const nlohmann::json printed = nlohmann::json::parse(r.out);
    std::vector<StoredRun> runs = Runs(db, {.command = "compare"});
    ASSERT_EQ(runs.size(), 1u);
    const StoredRun& run = runs[0];
    EXPECT_EQ(run.device.key, DeviceInfoFrom(ReadDeviceFingerprint()).key);  // no --device-name: this machine
    EXPECT_EQ(run.info.pack, "");
    EXPECT_EQ(run.info.arguments, "latte compare " + model +
                                      " --backends xnnpack --num-threads 1 --precision int8,bf16 --warmup-runs 1 "
                                      "--num-runs 3 --min-secs 0 --db " + Masked(db));
    ASSERT_EQ(run.comparisons.size(), printed["rows"].size());
    ASSERT_EQ(run.comparisons.size(), 2u);
    bool saw_ok = false, saw_refusal = false;
    for (std::size_t i = 0; i < run.comparisons.size(); ++i) {
      const ComparisonRecord& c = run.comparisons[i];
      const nlohmann::json& row = printed["rows"][i];
      EXPECT_EQ(c.model, row["model"].get<std::string>());
      EXPECT_EQ(c.backend, row["backend"].get<std::string>());
      EXPECT_EQ(c.threads, row["threads"].get<int>());
      EXPECT_EQ(c.precision, row["precision"].get<std::string>());
      EXPECT_EQ(c.ok, row["ok"].get<bool>());
      EXPECT_EQ(c.model_bytes, row["model_bytes"].get<std::int64_t>());
      if (!c.ok) {
        saw_refusal = true;
        EXPECT_EQ(c.why, row["why"].get<std::string>());
        EXPECT_FALSE(c.why.empty());
        EXPECT_TRUE(std::isnan(c.p50_us) && std::isnan(c.throughput_per_s));
        EXPECT_FALSE(c.peak_rss_kb.has_value());
        continue;
      }
      saw_ok = true;
      EXPECT_EQ(c.backend_version, row["backend_version"].get<std::string>());
      ExpectFigure(row["p50_us"], c.p50_us, "p50_us");
      ExpectFigure(row["mean_us"], c.mean_us, "mean_us");
      ExpectFigure(row["throughput_per_s"], c.throughput_per_s, "throughput_per_s");
      ExpectFigure(row["energy_mj_per_inference"], c.energy_mj, "energy");
      ExpectFigure(row["host_other_cores"], c.host_other_cores, "host_other_cores");
      EXPECT_EQ(c.timed_runs, row["runs"].get<std::int64_t>());
      EXPECT_EQ(c.peak_rss_kb, row["peak_rss_kb"].get<std::int64_t>());
      EXPECT_EQ(c.contended, row["contended"].get<bool>());
      ASSERT_TRUE(row["drift"].contains("max_abs_diff")) << row["drift"].dump();  // int8 against fp32
      ExpectFigure(row["drift"]["max_abs_diff"], c.drift_max_abs_diff, "drift max_abs_diff");
      ExpectFigure(row["drift"]["cosine"], c.drift_cosine, "drift cosine");
      EXPECT_GT(c.p50_us, 0);
    }
    EXPECT_TRUE(saw_ok && saw_refusal) << r.out;

    RunResult exported = RunLatte({"export", "--runs", "compare", "--format", "jsonl", "--db", db}, dir.path());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    std::vector<nlohmann::json> lines = JsonLines(exported.out);
    ASSERT_EQ(lines.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const nlohmann::json& row = printed["rows"][i];
      EXPECT_EQ(lines[i]["ok"], row["ok"]);
      if (row["ok"].get<bool>()) {
        for (const char* figure : {"p50_us", "mean_us", "throughput_per_s", "peak_rss_kb"})
          EXPECT_EQ(lines[i][figure], row[figure]) << figure;
      } else {
        EXPECT_EQ(lines[i]["why"], row["why"]);
        EXPECT_TRUE(lines[i]["p50_us"].is_null());
      }
    }
    if (db != Masked(db)) ExpectNoPasswordStored(db);
  }
}

TEST(RunRecord, AnUnreachableOrDamagedStoreStopsTheCommandBeforeItMeasures) {
  const std::string model = ModelPath("face_detection_short_range.tflite");
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> stores;  // --db, the error's words after "error: "
  const std::string gone = "postgresql://latte:" + std::string(kPassword) + "@/lab?host=" + dir.path().string();
  stores.push_back({gone, Masked(gone) + ": cannot connect ("});
  const std::string garbage = dir.Write("garbage.db", std::string(4096, 'x'));
  stores.push_back({garbage, garbage + ": not a Latte database"});
  if (SharedPostgresServer().running()) {
    std::vector<std::string> servers = {Stores(dir)[1], Stores(dir)[1]};
    // Made a store by a command that records no run: an import.
    for (const std::string& url : servers) {
      ASSERT_EQ(RunLatte({"import", "--format", "tensorrt-conv", dir.Write("t.out", "{Regular,1,3,8,8,8,3,1,0} 1.5\n"),
                          "--device", "v100", "--backend", "tensorrt", "--db", url},
                         dir.path())
                    .exit_code,
                0);
    }
    ASSERT_TRUE(PostgresServer::RunSql(servers[0], "UPDATE latte_schema SET version = 99"));
    stores.push_back({servers[0], Masked(servers[0]) + ": schema version 99 is newer than this latte understands ("});
    ASSERT_TRUE(PostgresServer::RunSql(servers[1], "DROP TABLE run_comparisons"));
    stores.push_back({servers[1], Masked(servers[1]) + ": damaged Latte database (no table run_comparisons)"});
  }
  for (const auto& [db, words] : stores) {
    for (const std::vector<std::string>& args :
         {Quick({"validate", model, "--pack", ShippedPack(), "--db", db}),
          Quick({"compare", model, "--backends", "xnnpack", "--db", db})}) {
      RunResult r = RunLatte(args, dir.path(), 120);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << db << ": " << r.err;
      EXPECT_EQ(r.err.rfind("error: " + words, 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;  // nothing measured, nothing printed
      EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
    }
  }
  RunResult alone = RunLatte({"compare", model, "--device-name", "x"}, dir.path());
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err, "error: --device-name: only with --db (the store that records the run)\n");
  RunResult mixed = RunLatte({"export", "--runs", "validate", "--kind", "conv2d", "--db", garbage}, dir.path());
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(mixed.err, "error: --kind: filters measurements, not --runs (which --device filters)\n");
}

TEST(RunRecord, AStoreOfThePreviousSchemaIsMigratedByTheFirstRecordedRun) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  TempDir dir;
  for (const std::string& db : Stores(dir, "v5.db")) {
    {
      auto old = Store::Open(db, {.schema_version = kRunsSchemaVersion - 1});
      ASSERT_TRUE(old.ok()) << old.status().message();
      auto device = old->UpsertDevice({"v100", "v100", "{}"});
      ASSERT_TRUE(device.ok());
    }
    RunResult r = RunLatte(Quick({"validate", model, "--pack", ShippedPack(), "--db", db}), dir.path(), 240);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto store = Store::OpenReadOnly(db);
    ASSERT_TRUE(store.ok());
    EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
    auto devices = store->ListDevices();
    ASSERT_TRUE(devices.ok());
    ASSERT_EQ(devices->size(), 2u);
    EXPECT_EQ((*devices)[0].key, "v100");  // kept
    EXPECT_EQ(Runs(db).size(), 1u);
  }
}

// Issue 24's "fit --device KEY makes one device's pack; export filters by device", on a store of
// two devices (the same table imported for each, one twice as slow).
TEST(RunRecord, FitAndExportChooseOneDeviceOfTwo) {
  TempDir dir;
  std::string fast, slow;
  for (int h : {7, 14, 28})
    for (int oc : {16, 32, 64}) {
      const std::string key = "{Regular,1,32," + std::to_string(h) + "," + std::to_string(h) + "," + std::to_string(oc) + ",3,1,0} ";
      fast += key + std::to_string(0.001 * h * h * oc / 64.0 + 0.01) + "\n";
      slow += key + std::to_string(2 * (0.001 * h * h * oc / 64.0 + 0.01)) + "\n";
    }
  const std::string fast_table = dir.Write("fast.out", fast), slow_table = dir.Write("slow.out", slow);
  for (const std::string& db : Stores(dir, "two.db")) {
    for (const auto& [table, device] : {std::pair{fast_table, "v100"}, std::pair{slow_table, "t4"}}) {
      RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--device", device, "--backend", "tensorrt",
                              "--db", db},
                             dir.path());
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const std::string pack = (dir.path() / "t4.json").string();
    RunResult mixed = RunLatte({"fit", "--backend", "tensorrt", "--folds", "3", "--db", db, "-o", pack}, dir.path(), 120);
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_NE(mixed.err.find("measurements from 2 devices; choose one with --device (t4; v100)"), std::string::npos)
        << mixed.err;
    RunResult fit = RunLatte({"fit", "--backend", "tensorrt", "--device", "t4", "--folds", "3", "--db", db, "-o", pack},
                             dir.path(), 300);
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
    const nlohmann::json t4 = nlohmann::json::parse(ReadAll(pack));
    EXPECT_EQ(t4["device"]["key"], "t4") << t4["device"].dump();
    EXPECT_NE(t4["provenance"]["command"].get<std::string>().find(" --device t4 "), std::string::npos);
    RunResult none = RunLatte({"fit", "--backend", "tensorrt", "--device", "a100", "-o", pack, "--db", db}, dir.path());
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("no measurements of backend 'tensorrt' match"), std::string::npos) << none.err;

    RunResult exported = RunLatte({"export", "--format", "jsonl", "--device", "t4", "--db", db}, dir.path());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    std::vector<nlohmann::json> lines = JsonLines(exported.out);
    ASSERT_EQ(lines.size(), 9u);
    for (const nlohmann::json& line : lines) EXPECT_EQ(line["device"], "t4");
    RunResult both = RunLatte({"export", "--format", "jsonl", "--db", db}, dir.path());
    ASSERT_EQ(both.exit_code, 0) << both.err;
    EXPECT_EQ(JsonLines(both.out).size(), 18u);
    // t4's times are twice v100's, kernel for kernel.
    std::map<std::string, double> v100;
    RunResult other = RunLatte({"export", "--format", "jsonl", "--device", "v100", "--db", db}, dir.path());
    for (const nlohmann::json& line : JsonLines(other.out)) v100[line["kernel"]["key"]] = line["stats"]["p50_us"];
    ASSERT_EQ(v100.size(), 9u);
    for (const nlohmann::json& line : lines) {
      EXPECT_NEAR(line["stats"]["p50_us"].get<double>(), 2 * v100[line["kernel"]["key"]], 1e-6) << line.dump();
    }
  }
}

}  // namespace
}  // namespace latte::testing
