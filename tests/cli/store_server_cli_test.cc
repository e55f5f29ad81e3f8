// `--db postgresql://...` as a user runs it, against a throwaway PostgreSQL server: the same
// measurements give the same export and the same pack as from a SQLite file, a profile campaign
// resumes on the server, a server that cannot be reached is one line and exit 2, and a password
// in the URL appears in no output and no pack.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../db/postgres_server.h"
#include "cli/run_latte.h"
#include "db/store.h"

namespace latte::testing {
namespace {

class ServerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
  }
  // A new database's URL with a password in it (the test server logs in by trust, never asking).
  static std::string UrlWithPassword() {
    std::string url = SharedPostgresServer().CreateDatabase();
    url.replace(0, 13, "postgresql://latte:" + std::string(kPassword) + "@");
    return url;
  }
  static std::string Masked(std::string url) {
    url.replace(url.find(kPassword), std::string(kPassword).size(), "***");
    return url;
  }
  static constexpr const char* kPassword = "pw-S3cret";
};

// CSV without its `time` column (when each row was stored, which differs from store to store).
std::string WithoutTimes(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) {
    // time is the 18th column (and the comma before it); the quoted kernel key holds commas, so
    // fields are counted outside quotes.
    int field = 0;
    bool quoted = false;
    std::string kept;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++field;
      if (field != 17) kept += c;
    }
    out += kept + "\n";
  }
  return out;
}

nlohmann::json PackWithoutProvenance(const std::string& path) {
  nlohmann::json pack = nlohmann::json::parse(ReadAll(path));
  pack.erase("provenance");
  return pack;
}

TEST_F(ServerCli, ImportExportAndFitGiveTheSameOnAServerAsInAFile) {
  TempDir dir;
  std::string lines;
  for (int h : {7, 14, 28, 56})
    for (int oc : {16, 32, 64, 128})
      lines += "{Regular,1,32," + std::to_string(h) + "," + std::to_string(h) + "," + std::to_string(oc) + ",3,1,0} " +
               std::to_string(0.001 * h * h * oc / 64.0 + 0.01) + "\n";
  lines += "{Regular,1,32,9,9,16,3,1,0} -1\n";
  const std::string table = dir.Write("t.out", lines);
  const std::string file = (dir.path() / "s.db").string(), url = UrlWithPassword();
  std::vector<std::string> exports, packs;
  for (const std::string& db : {file, url}) {
    RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--precision", "fp16", "--device", "v100",
                            "--backend", "tensorrt", "--db", db},
                           dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, table + ": imported 16 rows, 0 already stored, skipped 1 lines (failed in TensorRT (latency -1): 1)"
                               " into " + (db == url ? Masked(url) : file) + "\n");
    r = RunLatte({"import", "--format", "tensorrt-conv", table, "--precision", "fp16", "--device", "v100", "--backend",
                  "tensorrt", "--db", db},
                 dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("imported 0 rows, 16 already stored"), std::string::npos) << r.out;  // a retry adds nothing
    r = RunLatte({"export", "--format", "csv", "--db", db}, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    exports.push_back(r.out);
    const std::string pack = (dir.path() / (db == url ? "server.json" : "file.json")).string();
    r = RunLatte({"fit", "--backend", "tensorrt", "--precision", "fp16", "--folds", "3", "--db", db, "-o", pack},
                 dir.path(), 300);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find(kPassword), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
    packs.push_back(pack);
  }
  EXPECT_EQ(std::count(exports[0].begin(), exports[0].end(), '\n'), 17);
  EXPECT_EQ(WithoutTimes(exports[1]), WithoutTimes(exports[0]));
  EXPECT_EQ(PackWithoutProvenance(packs[1]), PackWithoutProvenance(packs[0]));
  const std::string server_pack = ReadAll(packs[1]);
  EXPECT_EQ(server_pack.find(kPassword), std::string::npos);
  EXPECT_NE(server_pack.find("latte fit --db " + Masked(url) + " --backend tensorrt"), std::string::npos);
}

TEST_F(ServerCli, AProfileCampaignOnAServerResumesWithoutMeasuringTwice) {
  TempDir dir;
  const std::string url = UrlWithPassword();
  const std::vector<std::string> args = {"profile", "--kernels", "relu,add", "--max-kernels", "4", "--num-runs", "3",
                                         "--warmup-runs", "1", "--min-secs", "0", "--db", url};
  RunResult first = RunLatte(args, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("measured 4, unsupported 0, remaining 0"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("stored 4 measurements in " + Masked(url)), std::string::npos) << first.out;
  RunResult second = RunLatte(args, dir.path());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("4 done in earlier runs"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("measured 0"), std::string::npos) << second.out;
  for (const RunResult* r : {&first, &second}) {
    EXPECT_EQ(r->out.find(kPassword), std::string::npos) << r->out;
    EXPECT_EQ(r->err.find(kPassword), std::string::npos) << r->err;
  }
  RunResult exported = RunLatte({"export", "--format", "csv", "--db", url}, dir.path());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(std::count(exported.out.begin(), exported.out.end(), '\n'), 5) << exported.out;  // header + 4 rows
  // Stored provenance: campaigns keep no URL.
  EXPECT_EQ(PostgresServer::Query(url, "SELECT count(*) FROM campaigns WHERE command || space || settings LIKE '%" +
                                           std::string(kPassword) + "%'"),
            "0\n");
}

TEST_F(ServerCli, AnUnreachableServerIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string url = "postgresql://latte:" + std::string(kPassword) + "@/lab?host=" + dir.path().string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", "--db", url},
        std::vector<std::string>{"import", "--format", "tensorrt-conv", dir.Write("t.out", "{Regular,1,3,8,8,8,3,1,0} 1.5\n"),
                                 "--device", "v100", "--backend", "tensorrt", "--db", url},
        std::vector<std::string>{"fit", "--backend", "xnnpack", "-o", (dir.path() / "f.json").string(), "--db", url}}) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err.rfind("error: " + Masked(url) + ": cannot connect (", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
  }
}

TEST_F(ServerCli, ADamagedOrNewerServerStoreIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string url = UrlWithPassword();
  const std::string table = dir.Write("t.out", "{Regular,1,3,8,8,8,3,1,0} 1.5\n");
  const std::vector<std::string> import = {"import", "--format", "tensorrt-conv", table, "--device", "v100",
                                           "--backend", "tensorrt", "--db", url};
  ASSERT_EQ(RunLatte(import, dir.path()).exit_code, 0);
  const std::pair<std::string, std::string> damages[] = {
      {"UPDATE latte_schema SET version = 99",
       "schema version 99 is newer than this latte understands (" + std::to_string(kStoreSchemaVersion) +
           "): use a newer latte"},
      {"UPDATE latte_schema SET version = 4; DROP TABLE graph_layers", "damaged Latte database (no table graph_layers)"}};
  for (const auto& [sql, why] : damages) {
    ASSERT_TRUE(PostgresServer::RunSql(url, sql));
    for (const std::vector<std::string>& args :
         {import, std::vector<std::string>{"export", "--db", url},
          std::vector<std::string>{"fit", "--backend", "tensorrt", "-o", (dir.path() / "f.json").string(), "--db", url}}) {
      RunResult r = RunLatte(args, dir.path());
      EXPECT_EQ(r.exit_code, 2) << args[0];
      EXPECT_EQ(r.err, "error: " + Masked(url) + ": " + why + "\n") << args[0];
    }
  }
  EXPECT_EQ(PostgresServer::Query(url, "SELECT count(*) FROM measurements"), "1\n");  // nothing lost
}

}  // namespace
}  // namespace latte::testing
