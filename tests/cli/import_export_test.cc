// `latte import` and `latte export` as a user runs them: exit codes, messages, and that a failed
// import leaves the store as it was.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "cli/run_latte.h"

namespace latte::testing {
namespace {

std::size_t Lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

const char kTable[] =
    "{Regular,1,3,8,8,8,3,1,0} 1.5\n"
    "{Regular,1,3,8,8,16,3,1,0} -1\n"
    "{Depthwise,1,8,8,8,8,3,2,1} 0.25\n";

// The TensorRT path end to end, at FP16: a table measured elsewhere (no thread count) imported,
// fitted into a pack, and that pack predicting a kernel list in the same line format.
TEST(ImportExportCommand, AnImportedFp16TableFitsAPackThatPredictsKernelLines) {
  TempDir dir;
  const std::string db = (dir.path() / "s.db").string(), pack = (dir.path() / "p.json").string();
  std::string lines;
  for (int h : {7, 14, 28, 56})
    for (int oc : {16, 32, 64, 128})
      lines += "{Regular,1,32," + std::to_string(h) + "," + std::to_string(h) + "," + std::to_string(oc) + ",3,1,0} " +
               std::to_string(0.001 * h * h * oc / 64.0 + 0.01) + "\n";
  RunResult r = RunLatte({"import", "--format", "tensorrt-conv", dir.Write("t.out", lines), "--precision", "fp16",
                          "--device", "v100", "--backend", "tensorrt", "--db", db},
                         dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunLatte({"fit", "--backend", "tensorrt", "--precision", "fp16", "--folds", "3", "--db", db, "-o", pack},
               dir.path(), 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // An imported table has no drift reference readings: fitted as stored, and said.
  EXPECT_NE(r.out.find("not drift-corrected: no reading of the drift reference was taken with these measurements"),
            std::string::npos)
      << r.out;
  const std::string kernels = dir.Write("k.out", "{Regular,1,32,20,20,48,3,1,0} -1\n{Regular,1,32,28,28,64,3,1,0} 1.0\n");
  r = RunLatte({"predict", "--kernels", kernels, "--format", "tensorrt-conv", "--pack", pack}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 2u) << r.out;
  EXPECT_EQ(r.out.rfind("{Regular,1,32,20,20,48,3,1,0} ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n{Regular,1,32,28,28,64,3,1,0} 0.794"), std::string::npos) << r.out;  // a table hit
  EXPECT_NE(r.err.find("2 kernels predicted, 0 not predicted"), std::string::npos) << r.err;
}

// A store holding one table at each of two precisions: every precision a store can hold (bf16
// too, which calibrate --precision bf16 stores) is a filter export and fit take.
TEST(ImportExportCommand, ExportAndFitChooseABf16TableBesideAnFp32One) {
  TempDir dir;
  const std::string db = (dir.path() / "s.db").string(), pack = (dir.path() / "p.json").string();
  std::string lines;
  for (int h : {7, 14, 28})
    for (int oc : {16, 32, 64})
      lines += "{Regular,1,32," + std::to_string(h) + "," + std::to_string(h) + "," + std::to_string(oc) + ",3,1,0} " +
               std::to_string(0.001 * h * h * oc / 64.0 + 0.01) + "\n";
  const std::string table = dir.Write("t.out", lines);
  for (const char* precision : {"fp32", "bf16"}) {
    RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--precision", precision, "--device", "v100",
                            "--backend", "tensorrt", "--db", db},
                           dir.path());
    ASSERT_EQ(r.exit_code, 0) << precision << ": " << r.err;
    EXPECT_NE(r.out.find("imported 9 rows, 0 already stored"), std::string::npos) << precision << ": " << r.out;
  }
  RunResult r = RunLatte({"export", "--format", "csv", "--precision", "bf16", "--db", db}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 10u) << r.out;  // the header and the bf16 table's 9 rows
  EXPECT_EQ(r.out.find(",fp32,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("v100,tensorrt,,0,bf16,conv2d,"), std::string::npos) << r.out;
  r = RunLatte({"fit", "--backend", "tensorrt", "--precision", "bf16", "--folds", "3", "--db", db, "-o", pack},
               dir.path(), 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string written = ReadAll(pack);
  EXPECT_NE(written.find("\"precision\":\"bf16\""), std::string::npos);
  EXPECT_NE(written.find("\"conv2d|bf16\""), std::string::npos);
  EXPECT_EQ(written.find("\"conv2d\":"), std::string::npos);  // nothing of the fp32 table
  // A name that is no precision is still refused with the ones there are.
  r = RunLatte({"fit", "--backend", "tensorrt", "--precision", "fp8", "--db", db, "-o", pack}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fp8 not in {"), std::string::npos) << r.err;
}

TEST(ImportExportCommand, ImportsThenExportsCsvAndJsonl) {
  TempDir dir;
  const std::string db = (dir.path() / "store" / "latte.db").string();
  const std::string table = dir.Write("conv.out", kTable);
  RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--device", "v100", "--backend", "tensorrt",
                          "--db", db},
                         dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 2 rows, 0 already stored, skipped 1 lines"), std::string::npos) << r.out;

  r = RunLatte({"export", "--format", "csv", "--db", db}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 3u);
  EXPECT_EQ(r.out.rfind("device,backend,", 0), 0u);
  EXPECT_NE(r.out.find("v100,tensorrt,,0,fp32,conv2d,\"conv2d|elmt_fused=0,g=1"), std::string::npos) << r.out;

  const std::string out = (dir.path() / "m.jsonl").string();
  r = RunLatte({"export", "--format", "jsonl", "--db", db, "-o", out, "--kind", "depthwise_conv2d"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(ReadAll(out)), 1u);

  // Importing the same file again stores nothing twice.
  r = RunLatte({"import", "--format", "tensorrt-conv", table, "--device", "v100", "--backend", "tensorrt", "--db", db},
               dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 0 rows, 2 already stored"), std::string::npos) << r.out;
}

TEST(ImportExportCommand, MalformedLineFailsWithItsNumberAndStoresNothing) {
  TempDir dir;
  const std::string db = (dir.path() / "latte.db").string();
  const std::vector<std::string> common = {"--device", "v100", "--backend", "tensorrt", "--db", db};
  auto import = [&](const std::string& file) {
    std::vector<std::string> args = {"import", "--format", "tensorrt-conv", file};
    args.insert(args.end(), common.begin(), common.end());
    return RunLatte(args, dir.path());
  };
  ASSERT_EQ(import(dir.Write("good.out", kTable)).exit_code, 0);
  const std::string bad = dir.Write("bad.out", "{Regular,1,3,8,8,32,3,1,0} 2.0\n{Regular,1,3,8,8,32,3,1,0} soon\n");
  RunResult r = import(bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + bad + ":2: latency 'soon' is not a number\n");
  r = RunLatte({"export", "--db", db}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 3u);  // header + the two rows of the good import
}

TEST(ImportExportCommand, DamagedOrLockedDatabaseExitsTwoAndIsNotModified) {
  TempDir dir;
  const std::string table = dir.Write("conv.out", kTable);
  std::string bytes(4096, '\0');
  std::mt19937 rng(3);
  for (char& c : bytes) c = static_cast<char>(rng());
  const std::string junk = dir.Write("junk.db", bytes);
  RunResult r = RunLatte({"import", "--format", "tensorrt-conv", table, "--device", "v100", "--backend", "tensorrt",
                          "--db", junk},
                         dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: " + junk + ": not a Latte database (", 0), 0u) << r.err;
  EXPECT_EQ(ReadAll(junk), bytes);
  r = RunLatte({"export", "--db", junk}, dir.path());
  EXPECT_EQ(r.exit_code, 2);

  const std::string db = (dir.path() / "latte.db").string();
  ASSERT_EQ(RunLatte({"import", "--format", "tensorrt-conv", table, "--device", "v100", "--backend", "tensorrt",
                      "--db", db},
                     dir.path())
                .exit_code,
            0);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const std::string more = dir.Write("more.out", "{Regular,1,3,8,8,64,3,1,0} 3\n");
  r = RunLatte({"import", "--format", "tensorrt-conv", more, "--device", "v100", "--backend", "tensorrt", "--db", db},
               dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + db + ": database is locked by another process\n");
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  r = RunLatte({"export", "--db", db}, dir.path());
  EXPECT_EQ(Lines(r.out), 3u);
}

TEST(ImportExportCommand, BadFlagsAndMissingFilesExitTwo) {
  TempDir dir;
  const std::string db = (dir.path() / "latte.db").string();
  RunResult r = RunLatte({"import", "--format", "xls", "t.out", "--device", "d", "--backend", "b", "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  r = RunLatte({"import", "--format", "csv", "t.csv", "--device", "d", "--db", db}, dir.path());  // no --backend
  EXPECT_EQ(r.exit_code, 2);
  r = RunLatte({"import", "--format", "csv", (dir.path() / "none.csv").string(), "--device", "d", "--backend", "b",
                "--db", db},
               dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.csv: no such file"), std::string::npos) << r.err;
  r = RunLatte({"export", "--db", (dir.path() / "missing.db").string()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.db: no such database"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing.db"));
  r = RunLatte({"export", "--format", "xml", "--db", db}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace latte::testing
