// Commands that only read the store (`export`, `fit`) as a user runs them on missing, empty and
// damaged stores: one line naming the file, exit code 2, and the file left as it was.
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_latte.h"

namespace latte::testing {
namespace {

// One line of the TensorRT conv library's table: a 3x3 conv of 8 input channels on H x H.
std::string TensorRtLine(int oc, int h) {
  return "{Regular,1,8," + std::to_string(h) + "," + std::to_string(h) + "," + std::to_string(oc) + ",3,1,0} " +
         std::to_string(0.01 * oc * h * h / 64) + "\n";
}

TEST(ReadOnlyCommands, AMissingStoreIsNotCreated) {
  TempDir dir;
  const std::string db = (dir.path() / "x" / "none.db").string();
  const std::string pack = (dir.path() / "f.json").string();
  RunResult r = RunLatte({"fit", "--backend", "xnnpack", "-o", pack, "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + db + ": no such database\n");
  r = RunLatte({"export", "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + db + ": no such database\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x"));
  EXPECT_FALSE(std::filesystem::exists(pack));
}

TEST(ReadOnlyCommands, AnEmptyFileIsNotADatabaseAndStaysEmpty) {
  TempDir dir;
  const std::string db = dir.Write("empty.db", "");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", "--db", db},
        std::vector<std::string>{"fit", "--backend", "xnnpack", "-o", (dir.path() / "f.json").string(), "--db", db}}) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err, "error: " + db + ": not a Latte database (empty file)\n") << args[0];
    EXPECT_EQ(std::filesystem::file_size(db), 0u) << args[0];
  }
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

// A store made by `latte import` of TensorRT `lines` (by default three conv kernels), then `sql`
// run on it by another program.
std::string ImportedStoreEditedWith(const TempDir& dir, const std::string& sql,
                                    const std::string& lines = "{Regular,1,3,8,8,8,3,1,0} 1.5\n"
                                                               "{Regular,1,3,8,8,16,3,1,0} 2.5\n"
                                                               "{Regular,1,3,8,8,32,3,1,0} 4.5\n") {
  const std::string table = dir.Write("conv.out", lines);
  const std::string db = (dir.path() / "w.db").string();
  RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--device", "v100", "--backend", "tensorrt",
                          "--db", db},
                         dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  sqlite3* handle = nullptr;
  EXPECT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
  return db;
}

TEST(ReadOnlyCommands, ADamagedStoreIsOneLineExitTwoAndStaysAsItWas) {
  const std::pair<std::string, std::string> cases[] = {
      {"PRAGMA user_version = -1", "not a Latte database (schema version -1)"},
      {"DROP TABLE graph_layers", "damaged Latte database (no table graph_layers)"},
  };
  for (const auto& [sql, what] : cases) {
    TempDir dir;
    const std::string db = ImportedStoreEditedWith(dir, sql);
    const std::string before = ReadAll(db);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"export", "--db", db},
          std::vector<std::string>{"fit", "--backend", "tensorrt", "-o", (dir.path() / "f.json").string(), "--db", db}}) {
      RunResult r = RunLatte(args, dir.path());
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << sql;
      EXPECT_EQ(r.err, "error: " + db + ": " + what + "\n") << args[0];
      EXPECT_EQ(ReadAll(db), before) << args[0] << " " << sql;
    }
  }
}

TEST(ReadOnlyCommands, ExportRefusesAFigureThatIsNoTimeNamingTheRow) {
  for (const auto& [sql, what] : {std::pair<std::string, std::string>{"UPDATE measurements SET p50 = 'abc' WHERE id = 2",
                                                                      "measurement 2: p50 is not a number ('abc')"},
                                  std::pair<std::string, std::string>{"UPDATE measurements SET p50 = -5 WHERE id = 3",
                                                                      "measurement 3: p50 is -5, a negative time"}}) {
    TempDir dir;
    const std::string db = ImportedStoreEditedWith(dir, sql);
    const std::string out = (dir.path() / "m.csv").string();
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"export", "--db", db}, std::vector<std::string>{"export", "--db", db, "-o", out}}) {
      RunResult r = RunLatte(args, dir.path());
      EXPECT_EQ(r.exit_code, 2) << sql;
      EXPECT_EQ(r.err, "error: " + db + ": " + what + "\n");
      EXPECT_EQ(r.out, "");
    }
    EXPECT_FALSE(std::filesystem::exists(out));  // a failed export writes nothing
  }
}

TEST(ReadOnlyCommands, FitLeavesOutAndCountsMeasurementsWhoseFiguresAreNoTimes) {
  TempDir dir;
  std::string lines;
  for (int oc : {8, 12, 16, 24, 32, 48, 64, 96, 128}) lines += TensorRtLine(oc, 8);
  for (int oc : {8, 16, 32, 64, 128, 256}) lines += TensorRtLine(oc, 16);
  const std::string db = ImportedStoreEditedWith(
      dir, "UPDATE measurements SET p50 = 'abc' WHERE id = 2; UPDATE measurements SET p50 = -5 WHERE id = 4", lines);
  const std::string before = ReadAll(db);
  const std::string pack = (dir.path() / "f.json").string();
  RunResult r = RunLatte({"fit", "--backend", "tensorrt", "-o", pack, "--db", db}, dir.path(), 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cross-validation on 13 measurements"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out 2 of 15 matching measurements, whose figures are not times in the store: "
                       "measurement 2: p50 is not a number ('abc'); measurement 4: p50 is -5, a negative time\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("conv2d  13 "), std::string::npos) << r.out;  // the kind's n: what was fitted
  EXPECT_TRUE(std::filesystem::exists(pack));
  EXPECT_EQ(ReadAll(db), before);
}

}  // namespace
}  // namespace latte::testing
