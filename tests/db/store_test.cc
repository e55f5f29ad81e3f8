#include "db/store.h"

#include <sqlite3.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "../test_campaigns.h"
#include "postgres_server.h"

namespace latte {
namespace {

using latte::testing::PostgresServer;
using latte::testing::SharedPostgresServer;
using latte::testing::TempDir;

Kernel Conv(std::int64_t oc, std::int64_t k = 3) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  kernel.fused = {OpKind::kRelu};
  kernel.params = {{"n", 1}, {"ih", 32}, {"iw", 32}, {"ic", 16}, {"oc", oc}, {"kh", k}, {"kw", k},
                   {"sh", 1}, {"sw", 1}, {"dh", 1},  {"dw", 1},  {"g", 1},   {"pt", 1},  {"pl", 1},
                   {"pb", 1}, {"pr", 1}, {"bias", 1}};
  return kernel;
}

Stats SomeStats(double base) {
  Stats s;
  s.n = 50;
  s.p0 = base;
  s.p10 = base + 1;
  s.p50 = base + 2;
  s.p90 = base + 3;
  s.p99 = base + 3.5;
  s.p100 = base + 4;
  s.mean = base + 2.1;
  s.std = 0.25;
  return s;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Ids {
  std::int64_t device, backend;
};

Ids AddDeviceAndBackend(Store& store) {
  auto device = store.UpsertDevice({"test-device", "a test device", "{}"});
  auto backend = store.UpsertBackend({"xnnpack", "1.0", 1, "fp32"});
  EXPECT_TRUE(device.ok()) << device.status().message();
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return {device.ok() ? *device : 0, backend.ok() ? *backend : 0};
}

// Runs `sql` on the file at `path` as another program would (plain SQLite, no Latte); false, with
// the failure reported, when it could not.
bool RunSqlAsAnotherProgram(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  const bool opened = sqlite3_open(path.c_str(), &db) == SQLITE_OK;
  EXPECT_TRUE(opened) << path;
  const bool ran = opened && sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  EXPECT_TRUE(ran) << sqlite3_errmsg(db);
  sqlite3_close(db);
  return ran;
}

// Writes a store at `path` holding `count` conv measurements (Conv(16 + i), SomeStats(5 + i)) and
// closes it; false, with the failure reported, when it could not.
bool WriteStoreWithMeasurements(const std::string& path, int count) {
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return false;
  Ids ids = AddDeviceAndBackend(*store);
  std::vector<MeasurementRecord> batch;
  for (int i = 0; i < count; ++i) batch.push_back({Conv(16 + i), SomeStats(5 + i), "measured", std::nullopt, ""});
  auto inserted = store->InsertMeasurements(ids.device, ids.backend, batch);
  EXPECT_TRUE(inserted.ok()) << inserted.status().message();
  return inserted.ok();
}

enum class Engine { kSqlite, kPostgres };

// The same store tests on each engine: a SQLite file in a temporary folder, or a fresh database on
// a throwaway PostgreSQL server (skipped, saying why, on a machine without the server binaries).
class StoreTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (!sqlite() && !SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
  }
  bool sqlite() const { return GetParam() == Engine::kSqlite; }
  // A new store: `file` in the temporary folder, or a new database on the server.
  std::string NewStore(const std::string& file = "latte.db") {
    return sqlite() ? (dir_.path() / file).string() : SharedPostgresServer().CreateDatabase();
  }
  // Runs `sqlite_sql` on a file, `postgres_sql` on a server's database, as another program would.
  bool RunSql(const std::string& target, const std::string& sqlite_sql, const std::string& postgres_sql) {
    return sqlite() ? RunSqlAsAnotherProgram(target, sqlite_sql.c_str()) : PostgresServer::RunSql(target, postgres_sql);
  }
  // All a store holds as another program sees it: the file's bytes, or each table's columns and a
  // hash of its rows.
  std::string Snapshot(const std::string& target) {
    if (sqlite()) return ReadBytes(target);
    std::string snapshot = PostgresServer::Query(
        target, "SELECT table_name || '.' || column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() ORDER BY 1");
    const std::string tables =
        PostgresServer::Query(target, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1");
    for (std::size_t start = 0, end; (end = tables.find('\n', start)) != std::string::npos; start = end + 1) {
      const std::string table = tables.substr(start, end - start);
      snapshot += table + ": " + PostgresServer::Query(target, "SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM " + table + " t");
    }
    return snapshot;
  }
  // Opened for writing and read-only, the store at `target` fails with exactly `message`, untouched.
  void ExpectRefusedUntouched(const std::string& target, const std::string& message) {
    const std::string before = Snapshot(target);
    for (bool read_only : {false, true}) {
      auto store = read_only ? Store::OpenReadOnly(target) : Store::Open(target);
      ASSERT_FALSE(store.ok()) << "read_only " << read_only;
      EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput) << "read_only " << read_only;
      EXPECT_EQ(store.status().message(), message) << "read_only " << read_only;
      EXPECT_EQ(Snapshot(target), before) << "read_only " << read_only;
    }
  }
  // A store with a measurement in it, then edited by another program.
  std::string StoreEditedWith(const std::string& sqlite_sql, const std::string& postgres_sql,
                              const std::string& file = "edited.db") {
    const std::string target = NewStore(file);
    if (WriteStoreWithMeasurements(target, 1)) RunSql(target, sqlite_sql, postgres_sql);
    return target;
  }

  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Engines, StoreTest, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::kSqlite ? "SQLite" : "PostgreSQL";
                         });

TEST_P(StoreTest, CreatesSchemaParentFoldersAndReopens) {
  const std::string path = NewStore("a/b/latte.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto version = store->SchemaVersion();
    ASSERT_TRUE(version.ok());
    EXPECT_EQ(*version, kStoreSchemaVersion);
    Ids ids = AddDeviceAndBackend(*store);
    EXPECT_GT(ids.device, 0);
  }
  if (sqlite()) {
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto devices = store->ListDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].key, "test-device");
  // Upserting again finds the same row.
  auto again = store->UpsertDevice({"test-device", "other text", "{}"});
  ASSERT_TRUE(again.ok());
  auto devices2 = store->ListDevices();
  EXPECT_EQ(devices2->size(), 1u);
}

TEST(Store, DefaultPathIsUnderTheCacheFolder) {
  std::string path = DefaultStorePath();
  EXPECT_NE(path.find("latte/latte.db"), std::string::npos) << path;
}

TEST_P(StoreTest, RoundTripsKernelsAndStats) {
  auto store = Store::Open(NewStore());
  ASSERT_TRUE(store.ok()) << store.status().message();
  Ids ids = AddDeviceAndBackend(*store);
  std::vector<MeasurementRecord> records;
  for (int i = 0; i < 5; ++i) records.push_back({Conv(16 << i), SomeStats(10.0 * i), "measured", std::nullopt, ""});
  // A record whose source gave only a median.
  MeasurementRecord partial{Conv(8, 5), {}, "import:x", std::nullopt, "2026-01-02T03:04:05.000Z"};
  partial.stats.p0 = partial.stats.p10 = partial.stats.p90 = partial.stats.p99 = partial.stats.p100 =
      partial.stats.mean = partial.stats.std = std::nan("");
  partial.stats.p50 = 123.5;
  records.push_back(partial);
  auto inserted = store->InsertMeasurements(ids.device, ids.backend, records);
  ASSERT_TRUE(inserted.ok()) << inserted.status().message();
  EXPECT_EQ(*inserted, 6u);

  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 6u);
  for (int i = 0; i < 5; ++i) {
    const StoredMeasurement& m = (*rows)[i];
    EXPECT_EQ(m.kernel, records[i].kernel);
    EXPECT_EQ(m.kernel.Key(), records[i].kernel.Key());
    EXPECT_EQ(m.stats.n, 50u);
    EXPECT_DOUBLE_EQ(m.stats.p0, 10.0 * i);
    EXPECT_DOUBLE_EQ(m.stats.p50, 10.0 * i + 2);
    EXPECT_DOUBLE_EQ(m.stats.p99, 10.0 * i + 3.5);
    EXPECT_DOUBLE_EQ(m.stats.p100, 10.0 * i + 4);
    EXPECT_DOUBLE_EQ(m.stats.mean, 10.0 * i + 2.1);
    EXPECT_DOUBLE_EQ(m.stats.std, 0.25);
    EXPECT_EQ(m.device.key, "test-device");
    EXPECT_EQ(m.backend.name, "xnnpack");
    EXPECT_EQ(m.backend.threads, 1);
    EXPECT_EQ(m.source, "measured");
    EXPECT_FALSE(m.campaign.has_value());
    EXPECT_FALSE(m.time.empty());
  }
  const StoredMeasurement& last = (*rows)[5];
  EXPECT_EQ(last.kernel, partial.kernel);
  EXPECT_DOUBLE_EQ(last.stats.p50, 123.5);
  EXPECT_TRUE(std::isnan(last.stats.p0));
  EXPECT_TRUE(std::isnan(last.stats.mean));
  EXPECT_EQ(last.stats.n, 0u);
  EXPECT_EQ(last.time, "2026-01-02T03:04:05.000Z");
  EXPECT_EQ(last.source, "import:x");
}

TEST_P(StoreTest, FiltersByBackendThreadsPrecisionDeviceAndKind) {
  auto store = Store::Open(NewStore());
  ASSERT_TRUE(store.ok());
  auto d1 = store->UpsertDevice({"d1", "d1", "{}"});
  auto d2 = store->UpsertDevice({"d2", "d2", "{}"});
  auto b1 = store->UpsertBackend({"xnnpack", "1", 1, "fp32"});
  auto b2 = store->UpsertBackend({"xnnpack", "1", 2, "fp32"});
  auto b3 = store->UpsertBackend({"onednn", "3", 1, "fp16"});
  ASSERT_TRUE(d1.ok() && d2.ok() && b1.ok() && b2.ok() && b3.ok());
  Kernel pool;
  pool.op = OpKind::kMaxPool2D;
  pool.params = {{"n", 1}, {"ih", 8}, {"iw", 8}, {"c", 4}, {"kh", 2}, {"kw", 2}, {"sh", 2}, {"sw", 2},
                 {"pt", 0}, {"pl", 0}, {"pb", 0}, {"pr", 0}};
  std::vector<MeasurementRecord> conv = {{Conv(16), SomeStats(1), "measured", std::nullopt, ""}};
  std::vector<MeasurementRecord> both = {{Conv(16), SomeStats(1), "measured", std::nullopt, ""},
                                         {pool, SomeStats(2), "measured", std::nullopt, ""}};
  ASSERT_TRUE(store->InsertMeasurements(*d1, *b1, both).ok());
  ASSERT_TRUE(store->InsertMeasurements(*d1, *b2, conv).ok());
  ASSERT_TRUE(store->InsertMeasurements(*d2, *b3, conv).ok());

  auto count = [&](MeasurementFilter filter) {
    auto rows = store->QueryMeasurements(filter);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? rows->size() : 0;
  };
  EXPECT_EQ(count({}), 4u);
  EXPECT_EQ(count({.backend = "xnnpack"}), 3u);
  EXPECT_EQ(count({.backend = "xnnpack", .threads = 2}), 1u);
  EXPECT_EQ(count({.precision = "fp16"}), 1u);
  EXPECT_EQ(count({.device = "d1"}), 3u);
  EXPECT_EQ(count({.device = "d1", .kind = "max_pool2d"}), 1u);
  EXPECT_EQ(count({.kind = "conv2d+relu"}), 3u);
  EXPECT_EQ(count({.backend = "none"}), 0u);
  auto backends = store->ListBackends();
  ASSERT_TRUE(backends.ok());
  EXPECT_EQ(backends->size(), 3u);
  EXPECT_EQ((*backends)[2].precision, "fp16");
}

TEST_P(StoreTest, CampaignInsertsAreIdempotentAndResumable) {
  auto store = Store::Open(NewStore());
  ASSERT_TRUE(store.ok());
  Ids ids = AddDeviceAndBackend(*store);
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", R"({"grid":1})"), 10);
  ASSERT_TRUE(campaign.ok()) << campaign.status().message();
  EXPECT_EQ(campaign->status, "running");
  EXPECT_EQ(campaign->planned, 10);
  auto same = store->FindOrCreateCampaign(TestCampaignKey("profile", R"({"grid":1})"), 10);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->id, campaign->id);
  auto other = store->FindOrCreateCampaign(TestCampaignKey("profile", R"({"grid":2})"), 10);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->id, campaign->id);

  std::vector<MeasurementRecord> batch = {{Conv(16), SomeStats(1), "measured", campaign->id, ""},
                                          {Conv(32), SomeStats(2), "measured", campaign->id, ""}};
  auto first = store->InsertMeasurements(ids.device, ids.backend, batch);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 2u);
  // The retried batch after a crash: nothing new, nothing duplicated.
  batch.push_back({Conv(64), SomeStats(3), "measured", campaign->id, ""});
  auto retry = store->InsertMeasurements(ids.device, ids.backend, batch);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(*retry, 1u);
  ASSERT_TRUE(store->RecordUnsupported(ids.device, ids.backend, Conv(128), "too big", campaign->id).ok());
  ASSERT_TRUE(store->RecordUnsupported(ids.device, ids.backend, Conv(128), "too big", campaign->id).ok());

  auto done = store->CampaignDoneKeys(campaign->id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, (std::set<std::string>{Conv(16).Key(), Conv(32).Key(), Conv(64).Key(), Conv(128).Key()}));
  auto other_done = store->CampaignDoneKeys(other->id);
  ASSERT_TRUE(other_done.ok());
  EXPECT_TRUE(other_done->empty());
  auto rows = store->QueryMeasurements({.campaign = campaign->id});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 3u);
  auto unsupported = store->QueryUnsupported();
  ASSERT_TRUE(unsupported.ok());
  ASSERT_EQ(unsupported->size(), 1u);
  EXPECT_EQ((*unsupported)[0].first, Conv(128));
  EXPECT_EQ((*unsupported)[0].second, "too big");

  ASSERT_TRUE(store->UpdateCampaign(campaign->id, 4, "done").ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 2u);
  EXPECT_EQ((*campaigns)[0].done, 4);
  EXPECT_EQ((*campaigns)[0].status, "done");
  EXPECT_FALSE(store->UpdateCampaign(9999, 1, "done").ok());

  ASSERT_TRUE(store->RecordReference({campaign->id, "", 12.5, Conv(16).Key()}).ok());
  ASSERT_TRUE(store->RecordReference({campaign->id, "", 13.0, Conv(16).Key()}).ok());
  auto refs = store->ListReferences(campaign->id);
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), 2u);
  EXPECT_DOUBLE_EQ((*refs)[1].p50_us, 13.0);
}

TEST_P(StoreTest, FailedBatchStoresNothing) {
  auto store = Store::Open(NewStore());
  ASSERT_TRUE(store.ok());
  Ids ids = AddDeviceAndBackend(*store);
  Kernel opaque;  // not a real op kind: refused
  std::vector<MeasurementRecord> batch = {{Conv(16), SomeStats(1), "measured", std::nullopt, ""},
                                          {opaque, SomeStats(1), "measured", std::nullopt, ""}};
  auto result = store->InsertMeasurements(ids.device, ids.backend, batch);
  EXPECT_FALSE(result.ok());
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  // A foreign key to no device is refused too.
  std::vector<MeasurementRecord> one = {{Conv(16), SomeStats(1), "measured", std::nullopt, ""}};
  EXPECT_FALSE(store->InsertMeasurements(999, ids.backend, one).ok());
  EXPECT_TRUE(store->QueryMeasurements()->empty());
}

// Builds a version-1 file with a measurement in it, then opens it with this binary's schema.
TEST_P(StoreTest, MigratesAnOlderSchemaKeepingItsRows) {
  const std::string path = NewStore("old.db");
  {
    auto old = Store::Open(path, {.schema_version = 1});
    ASSERT_TRUE(old.ok()) << old.status().message();
    EXPECT_EQ(*old->SchemaVersion(), 1);
    Ids ids = AddDeviceAndBackend(*old);
    std::vector<MeasurementRecord> batch = {{Conv(16), SomeStats(5), "measured", std::nullopt, ""}};
    ASSERT_TRUE(old->InsertMeasurements(ids.device, ids.backend, batch).ok());
    EXPECT_FALSE(old->RecordReference({1, "", 1.0, "x"}).ok());  // no such table yet
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].kernel, Conv(16));
  EXPECT_DOUBLE_EQ((*rows)[0].stats.p50, 7);
  EXPECT_TRUE(std::isnan((*rows)[0].stats.p99));  // the old schema had no p99
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("c", "{}"));
  ASSERT_TRUE(campaign.ok());
  EXPECT_TRUE(store->RecordReference({campaign->id, "", 1.0, Conv(16).Key()}).ok());
}

// Filled field by field: GCC 12 warns (-Wmaybe-uninitialized) on nested braced initializers here.
GraphLayerRecord GraphLayer(int layer, Kernel kernel, double in_graph_us, double alone_us) {
  GraphLayerRecord r;
  r.graph = "random-net 0";
  r.layer = layer;
  r.kernel = std::move(kernel);
  r.in_graph_us = in_graph_us;
  r.alone_us = alone_us;
  r.traffic.weight_bytes = 1000 * (layer + 1);
  r.traffic.output_bytes = 65536;
  r.traffic.inputs.push_back({layer - 1, 12288});
  return r;
}

std::vector<GraphLayerRecord> TwoGraphLayers() { return {GraphLayer(0, Conv(16), 120.5, 110.25), GraphLayer(1, Conv(32, 1), 80, 79.5)}; }

TEST_P(StoreTest, GraphLayersRoundTripOncePerCampaignGraphAndLayer) {
  auto store = Store::Open(NewStore("g.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  Ids ids = AddDeviceAndBackend(*store);
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("graph-context", "{}"));
  ASSERT_TRUE(campaign.ok());
  const std::vector<GraphLayerRecord> layers = TwoGraphLayers();
  auto inserted = store->InsertGraphLayers(ids.device, ids.backend, campaign->id, layers);
  ASSERT_TRUE(inserted.ok()) << inserted.status().message();
  EXPECT_EQ(*inserted, 2u);
  EXPECT_EQ(*store->InsertGraphLayers(ids.device, ids.backend, campaign->id, layers), 0u);  // a retry adds nothing
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const GraphLayerRecord& r = (*rows)[i].record;
    EXPECT_EQ(r.graph, layers[i].graph);
    EXPECT_EQ(r.layer, layers[i].layer);
    EXPECT_EQ(r.kernel, layers[i].kernel);
    EXPECT_DOUBLE_EQ(r.in_graph_us, layers[i].in_graph_us);
    EXPECT_DOUBLE_EQ(r.alone_us, layers[i].alone_us);
    EXPECT_EQ(r.traffic, layers[i].traffic);
    EXPECT_FALSE(r.time.empty());
    EXPECT_EQ((*rows)[i].campaign, campaign->id);
    EXPECT_EQ((*rows)[i].backend.name, "xnnpack");
    EXPECT_EQ((*rows)[i].device.key, "test-device");
  }
  EXPECT_EQ(*store->CampaignGraphs(campaign->id), std::set<std::string>{"random-net 0"});
  EXPECT_TRUE(store->QueryGraphLayers({.backend = "onednn"})->empty());
  // A layer whose time alone is not a time is refused, and the batch with it stores nothing; 0
  // (a kernel below a whole-graph backend's resolution alone) is a time.
  std::vector<GraphLayerRecord> bad = TwoGraphLayers();
  for (GraphLayerRecord& r : bad) r.graph = "random-net 1";
  bad[1].alone_us = std::nan("");
  auto refused = store->InsertGraphLayers(ids.device, ids.backend, campaign->id, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("graph random-net 1 layer 1"), std::string::npos);
  EXPECT_EQ(store->QueryGraphLayers()->size(), 2u);
  bad[1].alone_us = -1;
  EXPECT_FALSE(store->InsertGraphLayers(ids.device, ids.backend, campaign->id, bad).ok());
  bad[1].alone_us = 0;
  ASSERT_TRUE(store->InsertGraphLayers(ids.device, ids.backend, campaign->id, bad).ok());
  EXPECT_EQ(store->QueryGraphLayers()->size(), 4u);
}

// A graph's own layout changes (ONNX Runtime's reorders) ride on each of its layers; a layer of a
// file from before them reads as not recorded (NaN), and a negative time is refused.
TEST_P(StoreTest, GraphLayersKeepTheirGraphsLayoutTimeAndOlderFilesReadItAsNotRecorded) {
  const std::string path = NewStore("v5.db");
  Ids ids;
  std::int64_t campaign_id = 0;
  {
    auto old = Store::Open(path, {.schema_version = 5});
    ASSERT_TRUE(old.ok()) << old.status().message();
    ids = AddDeviceAndBackend(*old);
    auto campaign = old->FindOrCreateCampaign(TestCampaignKey("graph-context", "{}"));
    ASSERT_TRUE(campaign.ok());
    campaign_id = campaign->id;
    ASSERT_EQ(*old->InsertGraphLayers(ids.device, ids.backend, campaign_id, TwoGraphLayers()), 2u);
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
  std::vector<GraphLayerRecord> layers = TwoGraphLayers();
  for (GraphLayerRecord& r : layers) {
    r.graph = "random-net 1";
    r.graph_layout_us = 312.5;
  }
  ASSERT_EQ(*store->InsertGraphLayers(ids.device, ids.backend, campaign_id, layers), 2u);
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_TRUE(std::isnan((*rows)[0].record.graph_layout_us));  // stored before the column
  EXPECT_TRUE(std::isnan((*rows)[1].record.graph_layout_us));
  EXPECT_EQ((*rows)[2].record.graph_layout_us, 312.5);
  EXPECT_EQ((*rows)[3].record.graph_layout_us, 312.5);
  layers[0].graph = layers[1].graph = "random-net 2";
  layers[1].graph_layout_us = -1;
  auto refused = store->InsertGraphLayers(ids.device, ids.backend, campaign_id, layers);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("graph random-net 2 layer 1: the graph's layout changes took -1 us"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(store->QueryGraphLayers()->size(), 4u);
}

TEST_P(StoreTest, AVersionTwoFileGainsGraphLayers) {
  const std::string path = NewStore("v2.db");
  {
    auto old = Store::Open(path, {.schema_version = 2});
    ASSERT_TRUE(old.ok()) << old.status().message();
    Ids ids = AddDeviceAndBackend(*old);
    auto campaign = old->FindOrCreateCampaign(TestCampaignKey("c", "{}"));
    ASSERT_TRUE(campaign.ok());
    EXPECT_TRUE(old->QueryGraphLayers()->empty());
    EXPECT_FALSE(old->InsertGraphLayers(ids.device, ids.backend, campaign->id, TwoGraphLayers()).ok());
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("c", "{}"));
  ASSERT_TRUE(campaign.ok());
  EXPECT_EQ(*store->InsertGraphLayers(1, 1, campaign->id, TwoGraphLayers()), 2u);
}

// Campaigns of a version-3 file were identified by their command text: migrated, each has its key
// as columns, and the same key finds (resumes) it instead of starting a new campaign.
TEST_P(StoreTest, AVersionThreeFileGainsCampaignKeysAndResumesItsCampaigns) {
  const std::string path = NewStore("v3.db");
  const CampaignKey profile{"profile", "ort", 2, "fp32", MeasureSettings(1, 50, 0.05),
                            R"({"seed":7,"strategy":"random"})"};
  const CampaignKey networks{"graph-context", "xnnpack", 1, "fp32", MeasureSettings(1, 50, 1.0),
                             R"({"graphs":"random-network","seed":3})"};
  const CampaignKey import{"import", "tensorrt", 0, "fp16",
                           R"({"backend_version":"8.6 ga","device":"my v100","format":"tensorrt-conv"})",
                           R"({"bytes":10,"fnv1a64":"ab"})"};
  std::vector<std::int64_t> ids;
  {
    auto old = Store::Open(path, {.schema_version = 3});
    ASSERT_TRUE(old.ok()) << old.status().message();
    for (const CampaignKey& key : {profile, networks, import}) ids.push_back(old->FindOrCreateCampaign(key)->id);
    auto listed = old->ListCampaigns();  // a version-3 file reads its keys from the text
    ASSERT_EQ(listed->size(), 3u);
    EXPECT_EQ((*listed)[0].command,
              "latte profile --backend ort --num_threads 2 --precision fp32 --warmup_runs 1 --num_runs 50 --min_secs 0.05");
    EXPECT_EQ((*listed)[2].key, import);
  }
  {
    auto read_only = Store::OpenReadOnly(path);  // read as it is, not migrated
    ASSERT_TRUE(read_only.ok());
    EXPECT_EQ(*read_only->SchemaVersion(), 3);
    EXPECT_EQ((*read_only->ListCampaigns())[1].key, networks);
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);
  auto listed = store->ListCampaigns();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].key, profile);
  EXPECT_EQ((*listed)[1].key, networks);
  EXPECT_EQ((*listed)[2].key, import);
  EXPECT_EQ((*listed)[1].command,
            "latte profile --backend xnnpack --num_threads 1 --precision fp32 --warmup_runs 1 --num_runs 50 --min_secs 1 "
            "--graph-context");
  EXPECT_EQ(store->FindOrCreateCampaign(profile)->id, ids[0]);
  EXPECT_EQ(store->FindOrCreateCampaign(networks)->id, ids[1]);
  EXPECT_EQ(store->FindOrCreateCampaign(import)->id, ids[2]);
  CampaignKey other_seed = profile;
  other_seed.space = R"({"seed":8,"strategy":"random"})";
  EXPECT_NE(store->FindOrCreateCampaign(other_seed)->id, ids[0]);
  EXPECT_EQ(store->ListCampaigns()->size(), 4u);
}

// The files in `dir`, sorted: what a read-only open must leave as it found.
std::vector<std::string> Listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Store, ReadOnlyOpenOfAMissingFileCreatesNothing) {
  TempDir dir;
  const std::string path = (dir.path() / "sub" / "none.db").string();
  auto store = Store::OpenReadOnly(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.status().message(), path + ": no such database");
  EXPECT_TRUE(Listing(dir.path()).empty());  // not even the parent folder
}

TEST(Store, ReadOnlyOpenRefusesAnEmptyFileAndLeavesItEmpty) {
  TempDir dir;
  const auto path = dir.path() / "empty.db";
  { std::ofstream touch(path); }
  auto store = Store::OpenReadOnly(path.string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message(), path.string() + ": not a Latte database (empty file)");
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  EXPECT_EQ(Listing(dir.path()), std::vector<std::string>{"empty.db"});
}

TEST_P(StoreTest, ReadOnlyOpenReadsAndWritesNothing) {
  const std::string path = NewStore();
  ASSERT_TRUE(WriteStoreWithMeasurements(path, 1));
  const std::string before = Snapshot(path);
  const std::vector<std::string> files = Listing(dir_.path());
  {
    auto store = Store::OpenReadOnly(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto rows = store->QueryMeasurements();
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_DOUBLE_EQ((*rows)[0].stats.p50, 7);
    auto write = store->UpsertDevice({"other", "other", "{}"});  // a Latte bug if a reader tried
    ASSERT_FALSE(write.ok());
    EXPECT_EQ(write.status().code(), StatusCode::kInternal);
  }
  EXPECT_EQ(Snapshot(path), before);
  EXPECT_EQ(Listing(dir_.path()), files);  // no -wal or -shm left behind
}

TEST_P(StoreTest, ReadOnlyOpenReadsAnOlderSchemaWithoutMigratingIt) {
  const std::string path = NewStore("old.db");
  {
    auto old = Store::Open(path, {.schema_version = 1});
    ASSERT_TRUE(old.ok()) << old.status().message();
    Ids ids = AddDeviceAndBackend(*old);
    std::vector<MeasurementRecord> batch = {{Conv(16), SomeStats(5), "measured", std::nullopt, ""}};
    ASSERT_TRUE(old->InsertMeasurements(ids.device, ids.backend, batch).ok());
  }
  const std::string before = Snapshot(path);
  {
    auto store = Store::OpenReadOnly(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ(*store->SchemaVersion(), 1);
    auto rows = store->QueryMeasurements();
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_TRUE(std::isnan((*rows)[0].stats.p99));
    auto layers = store->QueryGraphLayers();
    ASSERT_TRUE(layers.ok()) << layers.status().message();
    EXPECT_TRUE(layers->empty());
  }
  EXPECT_EQ(Snapshot(path), before);
}

TEST_P(StoreTest, RefusesANewerSchema) {
  const std::string path = NewStore("new.db");
  { ASSERT_TRUE(Store::Open(path).ok()); }
  ASSERT_TRUE(RunSql(path, "PRAGMA user_version = 99", "UPDATE latte_schema SET version = 99"));
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(path + ": schema version 99 is newer"), std::string::npos)
      << store.status().message();
}

TEST_P(StoreTest, AnImpossibleSchemaVersionIsNotALatteDatabase) {
  std::string path = StoreEditedWith("PRAGMA user_version = -1", "UPDATE latte_schema SET version = -1");
  ExpectRefusedUntouched(path, path + ": not a Latte database (schema version -1)");
  path = StoreEditedWith("PRAGMA user_version = 0", "DELETE FROM latte_schema", "edited0.db");  // tables, no version
  ExpectRefusedUntouched(path, path + ": not a Latte database (schema version 0)");
}

TEST_P(StoreTest, AMissingTableOrColumnIsADamagedDatabase) {
  std::string path = StoreEditedWith("DROP TABLE graph_layers", "DROP TABLE graph_layers");
  ExpectRefusedUntouched(path, path + ": damaged Latte database (no table graph_layers)");
  const std::string drop = "ALTER TABLE measurements DROP COLUMN p99";
  path = StoreEditedWith(drop, drop, "edited2.db");
  ExpectRefusedUntouched(path, path + ": damaged Latte database (no column measurements.p99)");
}

TEST_P(StoreTest, AMigrationTheFileContradictsIsADamagedDatabase) {
  const std::string path = NewStore("v2.db");
  { ASSERT_TRUE(Store::Open(path, {.schema_version = 2}).ok()); }
  const std::string create = "CREATE TABLE graph_layers(x INTEGER)";
  ASSERT_TRUE(RunSql(path, create, create));
  const std::string before = Snapshot(path);
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message(),
            path + ": damaged Latte database (migrating it to schema version 3: " +
                (sqlite() ? "table graph_layers already exists" : "relation \"graph_layers\" already exists") + ")");
  EXPECT_EQ(Snapshot(path), before);
  auto read = Store::OpenReadOnly(path);  // version 2 has all it needs: read as it is
  EXPECT_TRUE(read.ok()) << read.status().message();
}

// Text in a number's column only a file can hold (SQLite keeps text it cannot read as a number);
// on a server, a negative p50 and sample count take their rows.
TEST_P(StoreTest, DamagedFiguresFailNamingTheRowOrAreListed) {
  const std::string path = NewStore();
  ASSERT_TRUE(WriteStoreWithMeasurements(path, 6));
  ASSERT_TRUE(RunSql(path,
                     "UPDATE measurements SET p50 = 'abc' WHERE id = 2; UPDATE measurements SET p90 = -5 WHERE id = 3; "
                     "UPDATE measurements SET p50 = NULL WHERE id = 4; UPDATE measurements SET p0 = 1e999 WHERE id = 5; "
                     "UPDATE measurements SET n = 'many' WHERE id = 6",
                     "UPDATE measurements SET p50 = -1 WHERE id = 2; UPDATE measurements SET p90 = -5 WHERE id = 3; "
                     "UPDATE measurements SET p50 = NULL WHERE id = 4; UPDATE measurements SET p0 = 'Infinity' WHERE id = 5; "
                     "UPDATE measurements SET n = -1 WHERE id = 6"));
  const std::string first = sqlite() ? "p50 is not a number ('abc')" : "p50 is -1, a negative time";
  auto store = Store::OpenReadOnly(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto strict = store->QueryMeasurements();
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(strict.status().message(), path + ": measurement 2: " + first);

  std::vector<DamagedMeasurement> damaged;
  auto rows = store->QueryMeasurements({}, &damaged);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, 1);
  EXPECT_DOUBLE_EQ((*rows)[0].stats.p50, 7);
  ASSERT_EQ(damaged.size(), 5u);
  EXPECT_EQ(damaged[0].id, 2);
  EXPECT_EQ(damaged[0].why, first);
  EXPECT_EQ(damaged[1].why, "p90 is -5, a negative time");
  EXPECT_EQ(damaged[2].why, "p50 is missing");
  EXPECT_EQ(damaged[3].why, "p0 is inf, not a finite number");
  EXPECT_EQ(damaged[4].why, sqlite() ? "n is not a sample count ('many')" : "n is not a sample count ('-1')");
}

// Reference readings and graph layers are figures too: a damaged one is named, never read as 0.
TEST(Store, DamagedReferenceReadingsAndGraphLayersFailNamingTheRow) {
  TempDir dir;
  const std::string path = (dir.path() / "latte.db").string();
  std::int64_t campaign_id = 0;
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    Ids ids = AddDeviceAndBackend(*store);
    auto campaign = store->FindOrCreateCampaign(TestCampaignKey("graph-context", "{}"));
    ASSERT_TRUE(campaign.ok());
    campaign_id = campaign->id;
    ASSERT_TRUE(store->RecordReference({campaign_id, "", 12.5, Conv(16).Key()}).ok());
    ASSERT_TRUE(store->RecordReference({campaign_id, "", 13.0, Conv(16).Key()}).ok());
    ASSERT_TRUE(store->InsertGraphLayers(ids.device, ids.backend, campaign_id, TwoGraphLayers()).ok());
    ASSERT_TRUE(store->ListReferences(campaign_id).ok());
    ASSERT_TRUE(store->QueryGraphLayers().ok());
  }
  ASSERT_TRUE(RunSqlAsAnotherProgram(path,
                                     "UPDATE reference_measurements SET p50 = 'fast' WHERE id = 2; "
                                     "UPDATE graph_layers SET alone_us = -3 WHERE id = 2"));
  auto store = Store::OpenReadOnly(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto references = store->ListReferences(campaign_id);
  ASSERT_FALSE(references.ok());
  EXPECT_EQ(references.status().message(), path + ": reference reading 2: p50 is not a number ('fast')");
  auto layers = store->QueryGraphLayers();
  ASSERT_FALSE(layers.ok());
  EXPECT_EQ(layers.status().message(), path + ": graph layer 2: alone_us is -3, a negative time");
}

TEST(Store, RandomBytesAreNotADatabaseAndStayUntouched) {
  TempDir dir;
  const auto path = dir.path() / "random.db";
  std::string bytes(8192, '\0');
  std::mt19937 rng(7);
  for (char& c : bytes) c = static_cast<char>(rng());
  { std::ofstream(path, std::ios::binary) << bytes; }
  auto store = Store::Open(path.string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message().rfind(path.string() + ": not a Latte database (", 0), 0u) << store.status().message();
  EXPECT_EQ(ReadBytes(path), bytes);
}

TEST(Store, TruncatedDatabaseIsDamagedAndStaysUntouched) {
  TempDir dir;
  const auto path = dir.path() / "latte.db";
  ASSERT_TRUE(WriteStoreWithMeasurements(path.string(), 3000));
  ASSERT_FALSE(std::filesystem::exists(dir.path() / "latte.db-wal"));  // checkpointed on close
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 100000u);
  std::filesystem::resize_file(path, size / 2);
  const std::string before = ReadBytes(path);
  auto store = Store::Open(path.string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().message().rfind(path.string() + ": not a Latte database (", 0), 0u) << store.status().message();
  EXPECT_EQ(ReadBytes(path), before);
}

TEST_P(StoreTest, AnotherProgramsDatabaseIsRefused) {
  const std::string path = NewStore("other.db");
  const std::string sql = "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES(1)";
  ASSERT_TRUE(RunSql(path, sql, sql));
  ExpectRefusedUntouched(path, path + ": not a Latte database (" +
                                   (sqlite() ? "a SQLite file of another program" : "tables of another program") + ")");
}

TEST(Store, ADirectoryIsNotADatabase) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("not a Latte database"), std::string::npos);
}

// Another program holding the store's write lock (SQLite's exclusive transaction; on a server, a
// transaction holding the measurements table) until Release().
class LockHolder {
 public:
  LockHolder(const LockHolder&) = delete;
  LockHolder& operator=(const LockHolder&) = delete;
  explicit LockHolder(const std::string& target) {
    if (IsServerUrl(target)) {
      server_ = PQconnectdb(target.c_str());
      locked_ = Server("BEGIN") && Server("LOCK TABLE measurements IN ACCESS EXCLUSIVE MODE");
    } else {
      locked_ = sqlite3_open(target.c_str(), &file_) == SQLITE_OK &&
                sqlite3_exec(file_, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK;
    }
  }
  ~LockHolder() { Release(); }
  bool locked() const { return locked_; }
  void Release() {
    if (file_ != nullptr) {
      EXPECT_EQ(sqlite3_exec(file_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(file_);
    }
    if (server_ != nullptr) {
      EXPECT_TRUE(Server("COMMIT"));
      PQfinish(server_);
    }
    file_ = nullptr;
    server_ = nullptr;
  }

 private:
  bool Server(const char* sql) {
    PGresult* result = PQexec(server_, sql);
    const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    PQclear(result);
    return ok;
  }
  sqlite3* file_ = nullptr;
  PGconn* server_ = nullptr;
  bool locked_ = false;
};

TEST_P(StoreTest, LockedDatabaseGivesAClearErrorAndLosesNothing) {
  const std::string path = NewStore();
  auto store = Store::Open(path, {.busy_timeout_ms = 200});
  ASSERT_TRUE(store.ok());
  Ids ids = AddDeviceAndBackend(*store);
  std::vector<MeasurementRecord> first = {{Conv(16), SomeStats(1), "measured", std::nullopt, ""}};
  ASSERT_TRUE(store->InsertMeasurements(ids.device, ids.backend, first).ok());

  LockHolder other(path);
  ASSERT_TRUE(other.locked());
  std::vector<MeasurementRecord> second = {{Conv(32), SomeStats(2), "measured", std::nullopt, ""}};
  auto result = store->InsertMeasurements(ids.device, ids.backend, second);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), path + ": database is locked by another process");
  EXPECT_NE(result.status().code(), StatusCode::kInternal);
  other.Release();

  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);
  EXPECT_TRUE(store->InsertMeasurements(ids.device, ids.backend, second).ok());  // free again
  EXPECT_EQ(store->QueryMeasurements()->size(), 2u);
}

TEST_P(StoreTest, TwoProcessesInsertConcurrently) {
  const std::string path = NewStore();  // its schema created by whichever child is first
  constexpr int kBatches = 40, kPerBatch = 25;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      {
        auto store = Store::Open(path, {.busy_timeout_ms = 30000});
        if (!store.ok()) {
          std::fprintf(stderr, "child %d: %s\n", c, store.status().message().c_str());
          _exit(10);
        }
        auto device = store->UpsertDevice({"shared", "shared", "{}"});
        auto backend = store->UpsertBackend({"xnnpack", "1", c + 1, "fp32"});
        if (!device.ok() || !backend.ok()) _exit(11);
        auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", std::to_string(c)));
        if (!campaign.ok()) _exit(12);
        for (int b = 0; b < kBatches && code == 0; ++b) {
          std::vector<MeasurementRecord> batch;
          for (int i = 0; i < kPerBatch; ++i) {
            batch.push_back({Conv(1 + b * kPerBatch + i), SomeStats(i), "measured", campaign->id, ""});
          }
          auto inserted = store->InsertMeasurements(*device, *backend, batch);
          if (!inserted.ok() || *inserted != kPerBatch) code = 13;
        }
      }
      _exit(code);
    }
    children[c] = pid;
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto store = Store::Open(path);  // quick_check runs on open
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u * kBatches * kPerBatch);
  EXPECT_EQ(store->QueryMeasurements({.threads = 1})->size(), 1u * kBatches * kPerBatch);
  EXPECT_EQ(store->ListDevices()->size(), 1u);
}

// kill -9 in the middle of a stream of batches: every batch is whole or absent, the file is sound,
// and rerunning the campaign stores exactly what was missing.
TEST_P(StoreTest, SigkillMidCampaignLosesAndDuplicatesNothing) {
  const std::string path = NewStore();
  constexpr int kBatch = 50, kTotal = 200000;
  auto batch_of = [](int first, std::int64_t campaign) {
    std::vector<MeasurementRecord> batch;
    for (int i = first; i < first + kBatch; ++i) batch.push_back({Conv(1 + i), SomeStats(i), "measured", campaign, ""});
    return batch;
  };
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    auto store = Store::Open(path);
    if (!store.ok()) _exit(10);
    auto device = store->UpsertDevice({"d", "d", "{}"});
    auto backend = store->UpsertBackend({"xnnpack", "1", 1, "fp32"});
    auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", "{}"));
    if (!device.ok() || !backend.ok() || !campaign.ok()) _exit(11);
    for (int first = 0; first < kTotal; first += kBatch) {
      if (!store->InsertMeasurements(*device, *backend, batch_of(first, campaign->id)).ok()) _exit(12);
      if (first == 20 * kBatch) (void)!write(pipe_fds[1], "x", 1);  // some batches are in: kill me any time now
    }
    _exit(0);
  }
  close(pipe_fds[1]);
  char byte = 0;
  ASSERT_EQ(read(pipe_fds[0], &byte, 1), 1);
  close(pipe_fds[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = Store::Open(path);  // quick_check passes
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", "{}"));
  ASSERT_TRUE(campaign.ok());
  auto done = store->CampaignDoneKeys(campaign->id);
  ASSERT_TRUE(done.ok());
  ASSERT_GT(done->size(), 20u * kBatch);
  ASSERT_LT(done->size(), static_cast<std::size_t>(kTotal));
  EXPECT_EQ(done->size() % kBatch, 0u);  // whole batches only
  // Resume: the same batches again, as a rerun of the campaign would.
  auto device = store->UpsertDevice({"d", "d", "{}"});
  auto backend = store->UpsertBackend({"xnnpack", "1", 1, "fp32"});
  std::size_t inserted = 0;
  for (int first = 0; first < 40 * kBatch + static_cast<int>(done->size()); first += kBatch) {
    auto n = store->InsertMeasurements(*device, *backend, batch_of(first, campaign->id));
    ASSERT_TRUE(n.ok());
    inserted += *n;
  }
  EXPECT_EQ(inserted, 40u * kBatch);
  auto rows = store->QueryMeasurements({.campaign = campaign->id});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), done->size() + 40u * kBatch);
}


// Every figure the server gives back is the double that went in, to the last bit (a pack fitted
// from a server is the pack fitted from a file).
TEST_P(StoreTest, FiguresRoundTripExactly) {
  auto store = Store::Open(NewStore());
  ASSERT_TRUE(store.ok()) << store.status().message();
  Ids ids = AddDeviceAndBackend(*store);
  Stats s = SomeStats(0.1);
  s.p0 = 1.0 / 3.0;
  s.p10 = 1e-300;
  s.p50 = 123456.789012345678;
  s.p90 = std::nextafter(2.0, 3.0);
  s.std = 5e-324;  // the smallest subnormal
  std::vector<MeasurementRecord> one = {{Conv(16), s, "measured", std::nullopt, ""}};
  ASSERT_TRUE(store->InsertMeasurements(ids.device, ids.backend, one).ok());
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  const Stats& back = (*rows)[0].stats;
  for (auto [got, want] : {std::pair{back.p0, s.p0}, {back.p10, s.p10}, {back.p50, s.p50}, {back.p90, s.p90},
                           {back.p99, s.p99}, {back.p100, s.p100}, {back.mean, s.mean}, {back.std, s.std}}) {
    EXPECT_EQ(got, want);
  }
}

// On a server: a read-only open of an empty database creates nothing; an unreachable server, a
// database that is not there and a URL libpq cannot read are each one line naming the URL, its
// password masked.
class ServerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
  }
};

TEST_F(ServerStoreTest, ReadOnlyOpenOfAnEmptyDatabaseCreatesNothing) {
  const std::string url = SharedPostgresServer().CreateDatabase();
  auto store = Store::OpenReadOnly(url);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(store.status().message(), url + ": not a Latte database (an empty database)");
  EXPECT_EQ(PostgresServer::Query(url, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"), "0\n");
}

TEST_F(ServerStoreTest, UnreachableMissingAndUnreadableServersAreOneLineErrors) {
  TempDir empty;  // a socket folder no server listens in
  const std::string nowhere = "postgresql://latte:s3cret@/x?host=" + empty.path().string();
  auto store = Store::Open(nowhere);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  const std::string masked = "postgresql://latte:***@/x?host=" + empty.path().string();
  EXPECT_EQ(store.status().message().rfind(masked + ": cannot connect (", 0), 0u) << store.status().message();
  EXPECT_EQ(store.status().message().find('\n'), std::string::npos) << store.status().message();
  EXPECT_EQ(store.status().message().find("s3cret"), std::string::npos) << store.status().message();

  const std::string missing = SharedPostgresServer().Url("no_such_database");
  store = Store::OpenReadOnly(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find("database \"no_such_database\" does not exist"), std::string::npos)
      << store.status().message();

  for (const std::string bad : {"postgresql://latte:s3cret@[::1/x", "postgresql:///x?nosuchparameter=1&password=s3cret",
                                "host=/tmp password='s3cret"}) {
    store = Store::Open(bad);
    ASSERT_FALSE(store.ok()) << bad;
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidInput) << store.status().message();
    EXPECT_NE(store.status().message().find(": not a valid PostgreSQL URL ("), std::string::npos) << store.status().message();
    EXPECT_EQ(store.status().message().find("s3cret"), std::string::npos) << store.status().message();
  }
}

TEST_F(ServerStoreTest, APasswordInTheUrlIsNeverShown) {
  std::string url = SharedPostgresServer().CreateDatabase();
  url.replace(url.find("postgresql://"), 13, "postgresql://latte:p%40ss@");  // trust login: the password is not asked
  auto store = Store::Open(url);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(store->path().find("p%40ss"), std::string::npos) << store->path();
  EXPECT_NE(store->path().find("latte:***@"), std::string::npos) << store->path();
  auto write = store->UpdateCampaign(42, 1, "done");  // an error names the store
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.message(), store->path() + ": no campaign with id 42");
}

}  // namespace
}  // namespace latte
