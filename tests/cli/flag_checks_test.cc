// Flag values every command checks before any work starts: a wrong one is exit 2 with one line
// naming the flag and the problem, never a silent default, a run without end or a late failure.
// Nothing here measures: each case fails on parse or before the first measurement.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using ::latte::testing::ModelPath;
using ::latte::testing::RunLatte;
using ::latte::testing::RunResult;
using ::latte::testing::TempDir;

const std::string kModel = "face_detection_short_range.tflite";

std::string ShippedPack() { return std::string(LATTE_SOURCE_DIR) + "/data/packs/xnnpack-1thread-fp32.json.gz"; }

// Exit 2, nothing on stdout, exactly one "error: ..." line on stderr that contains `says`.
void ExpectRefused(const std::vector<std::string>& args, const std::string& says, const TempDir& dir) {
  std::string command;
  for (const std::string& a : args) command += " " + a;
  SCOPED_TRACE("latte" + command);
  RunResult r = RunLatte(args, dir.path(), 30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

// Every command with the protocol flags, as far as its required arguments.
std::vector<std::vector<std::string>> ProtocolCommands(const TempDir& dir) {
  const std::string model = ModelPath(kModel), pack = ShippedPack();
  return {{"bench", model},
          {"compare", model, "--backends", "xnnpack"},
          {"validate", model, "--pack", pack},
          {"pareto", model, "--backends", "xnnpack", "--packs", pack, "--verify", "1"},
          {"profile", "--kernels", "relu", "--db", (dir.path() / "p.db").string()}};
}

TEST(FlagChecks, ProtocolFlagsAreFiniteAndBoundedInEveryCommand) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--min-secs", "inf"}, "--min-secs: inf is not a number in 0.."},
      {{"--min-secs", "nan"}, "--min-secs: nan is not a number in 0.."},
      {{"--min-secs", "1e12"}, "--min-secs: 1e12 is not a number in 0.."},
      {{"--min-secs", "-1"}, "--min-secs: -1 is not a number in 0.."},
      {{"--min-secs", "soon"}, "--min-secs: 'soon' is not a number"},
      {{"--num-runs", "0"}, "--num-runs: 0 is not in 1..1000000"},
      {{"--num-runs", "2000000000"}, "--num-runs: 2000000000 is not in 1..1000000"},
      {{"--warmup-runs", "-1"}, "--warmup-runs: -1 is not in 0..1000000"},
  };
  for (const std::vector<std::string>& command : ProtocolCommands(dir)) {
    for (const auto& [flag, says] : bad) {
      std::vector<std::string> args = command;
      args.insert(args.end(), flag.begin(), flag.end());
      ExpectRefused(args, says, dir);
    }
  }
  // The bound is the protocol's hard stop of a timed pass: 150 s for models, 10 s for kernels.
  ExpectRefused({"bench", ModelPath(kModel), "--min-secs", "151"}, "--min-secs: 151 is not a number in 0..150", dir);
  ExpectRefused({"profile", "--kernels", "relu", "--min-secs", "11", "--db", (dir.path() / "p.db").string()},
                "--min-secs: 11 is not a number in 0..10", dir);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "p.db"));
}

TEST(FlagChecks, ThreadCountsAreReadableRangesInEveryCommand) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string model = ModelPath(kModel), db = (dir.path() / "t.db").string();
  ExpectRefused({"compare", model, "--num-threads", "0"}, "--num-threads: 0 is not in 1..1024", dir);
  ExpectRefused({"compare", model, "--num-threads", "1,x"}, "--num-threads: 'x' is not an integer", dir);
  // compare refuses what bench refuses, before any configuration runs.
  ExpectRefused({"compare", model, "--backends", "xnnpack", "--num-threads", "5000"},
                "--num-threads: 5000 is not in 1..1024", dir);
  ExpectRefused({"bench", model, "--num-threads", "5000"}, "--num-threads: 5000 is not in 1..1024", dir);
  ExpectRefused({"validate", model, "--pack", ShippedPack(), "--num-threads", "-2"}, "--num-threads: -2 is not in 1..1024",
                dir);
  ExpectRefused({"profile", "--kernels", "relu", "--db", db, "--num-threads", "0"}, "--num-threads: 0 is not in 1..1024",
                dir);
  ExpectRefused({"calibrate", "-o", "p.json", "--db", db, "--num-threads", "2000"},
                "--num-threads: 2000 is not in 1..1024", dir);
  ExpectRefused({"fit", "--backend", "xnnpack", "-o", "p.json", "--db", db, "--num-threads", "0"},
                "--num-threads: 0 is not in 1..1024", dir);
  // 0 is "unknown" (import) or not a filter value to refuse (export); negatives are refused.
  ExpectRefused({"export", "--db", db, "--num-threads", "-1"}, "--num-threads: -1 is not in 0..1024", dir);
  ExpectRefused({"import", "--format", "csv", "t.csv", "--backend", "b", "--db", db, "--num-threads", "-1"},
                "--num-threads: -1 is not in 0..1024", dir);
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(FlagChecks, FitRooflineRatesAreFiniteAndNotNegative) {
  TempDir dir;
  const std::string db = (dir.path() / "f.db").string(), out = (dir.path() / "p.json").string();
  for (const char* flag : {"--peak-gflops", "--bandwidth-gbs"}) {
    for (const char* value : {"nan", "inf", "-5", "1e300"}) {
      ExpectRefused({"fit", "--backend", "xnnpack", "--db", db, "-o", out, flag, value},
                    std::string(flag) + ": " + value + " is not a number in 0..1e+09", dir);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(FlagChecks, ProfileMaxKernelsAndBudgetAreRefusedWhenMeaningless) {
  TempDir dir;
  const std::string db = (dir.path() / "p.db").string();
  ExpectRefused({"profile", "--kernels", "relu", "--db", db, "--max-kernels", "-3"}, "--max-kernels: -3 is not in 1..100000",
                dir);
  ExpectRefused({"profile", "--kernels", "relu", "--db", db, "--max-kernels", "0"}, "--max-kernels: 0 is not in 1..100000",
                dir);
  ExpectRefused({"profile", "--kernels", "relu", "--db", db, "--max-kernels", "100001"},
                "--max-kernels: 100001 is not in 1..100000", dir);
  ExpectRefused({"profile", "--kernels", "relu", "--db", db, "--budget", ""}, "--budget: empty duration", dir);
  ExpectRefused({"calibrate", "-o", "p.json", "--db", db, "--budget", ""}, "--budget: empty duration", dir);
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(FlagChecks, CalibrateAndFitCheckTheirFilesBeforeMeasuringOrFitting) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string db = (dir.path() / "c.db").string(), out = (dir.path() / "p.json").string();
  const std::string text_db = dir.Write("text.db", "not a database\n");
  const std::string model = ::latte::testing::ReadAll(ModelPath(kModel));
  const std::string truncated = dir.Write("half.tflite", model.substr(0, model.size() / 2));
  const std::string missing_folder = (dir.path() / "no-such-folder" / "p.json").string();
  // Before the fix each of these ran fusion detection (30 s and more) before failing.
  ExpectRefused({"calibrate", "--db", text_db, "-o", out}, "text.db", dir);
  EXPECT_EQ(::latte::testing::ReadAll(text_db), "not a database\n");
  ExpectRefused({"calibrate", "--db", db, "-o", out, "--models", truncated}, "error: " + truncated + ": ", dir);
  ExpectRefused({"calibrate", "--db", db, "-o", missing_folder}, missing_folder + ": no such folder", dir);
  ExpectRefused({"calibrate", "--db", db, "-o", dir.path().string()}, ": is a directory", dir);
  ExpectRefused({"fit", "--backend", "xnnpack", "--db", db, "-o", missing_folder}, missing_folder + ": no such folder", dir);
  ExpectRefused({"fit", "--backend", "xnnpack", "--db", db, "-o", dir.path().string()}, ": is a directory", dir);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// Files a command writes after measuring (a trace, a plot, fusion rules) are checked before it.
TEST(FlagChecks, OutputFilesAreCheckedBeforeMeasuring) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string model = ModelPath(kModel), pack = ShippedPack();
  const std::string missing = (dir.path() / "no-such-folder" / "out").string(), folder = dir.path().string();
  ExpectRefused({"bench", model, "--trace", missing}, missing + ": no such folder", dir);
  ExpectRefused({"validate", model, "--pack", pack, "--plot", folder}, folder + ": is a directory", dir);
  ExpectRefused({"profile", "--detect-fusion", "--fusion-out", missing, "--db", (dir.path() / "p.db").string()},
                missing + ": no such folder", dir);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "p.db"));
  ExpectRefused({"pareto", model, "--backends", "xnnpack", "--packs", pack, "--plot", missing},
                missing + ": no such folder", dir);
}

TEST(FlagChecks, PredictRefusesADirectoryAsKernelList) {
  TempDir dir;
  ExpectRefused({"predict", "--kernels", dir.path().string(), "--format", "tensorrt-conv", "--pack", ShippedPack()},
                "error: " + dir.path().string() + ": is a directory", dir);
}

TEST(FlagChecks, BenchRefusesAnUnknownFallbackBackend) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  ExpectRefused({"bench", ModelPath(kModel), "--fallback", "foo"},
                "error: --fallback: unknown backend 'foo' (known: xnnpack, onednn, ort)", dir);
}

TEST(FlagChecks, AnUnknownFlagIsNamedBeforeAMissingArgument) {
  TempDir dir;
  ExpectRefused({"--bogus", "inspect"}, "unknown flag '--bogus'", dir);
  ExpectRefused({"inspect", "--bogus"}, "unknown flag '--bogus'", dir);
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

// adapt refuses what it cannot do before measuring anything, and writes no pack.
TEST(FlagChecks, AdaptRefusesBadBudgetsAndPacksInOneLine) {
  TempDir dir;
  const std::string out = (dir.path() / "mine.json").string();
  ExpectRefused({"adapt", "--pack", ShippedPack(), "--budget", "5s", "-o", out}, "--budget must be at least 10s", dir);
  ExpectRefused({"adapt", "--pack", ShippedPack(), "--budget", "soon", "-o", out}, "--budget", dir);
  ExpectRefused({"adapt", "--pack", (dir.path() / "none.json").string(), "-o", out}, "none.json", dir);
  ExpectRefused({"adapt", "--pack", ShippedPack(), "-o", dir.path().string()}, "is a directory", dir);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// --format html writes a page: it needs -o, and an -o that cannot be written is refused before
// anything is loaded or measured.
TEST(FlagChecks, HtmlReportsNeedAWritableOutputFile) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string model = ModelPath(kModel), pack = ShippedPack();
  const std::vector<std::vector<std::string>> commands = {{"inspect", model},
                                                          {"predict", model, "--pack", pack},
                                                          {"validate", model, "--pack", pack},
                                                          {"compare", model, "--backends", "xnnpack"},
                                                          {"pareto", model, "--backends", "xnnpack", "--packs", pack}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--format", "html"}, "--format html writes a page: give -o FILE.html"},
      {{"--format", "html", "-o", "/nonexistent-latte-dir/r.html"}, "no such folder /nonexistent-latte-dir"},
      {{"--format", "html", "-o", dir.path().string()}, "is a directory"},
  };
  for (const auto& command : commands) {
    for (const auto& [flags, says] : bad) {
      std::vector<std::string> args = command;
      args.insert(args.end(), flags.begin(), flags.end());
      ExpectRefused(args, says, dir);
    }
  }
}

}  // namespace
}  // namespace latte
