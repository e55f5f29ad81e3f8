// `latte profile` as users run it: small campaigns into a temporary store, resume after
// SIGKILL, unsupported kernels recorded once, bad flags exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "ir/nchwc_layout.h"
#include "run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using testing::RunLatte;
using testing::SpawnLatte;
using testing::RunResult;
using testing::TempDir;

// Fast kernels and short runs: these tests check logic, not times.
std::vector<std::string> Quick(std::vector<std::string> args, const std::string& db, const std::string& min_secs = "0") {
  for (const char* a : {"--num-runs", "3", "--warmup-runs", "1", "--min-secs"}) args.push_back(a);
  args.push_back(min_secs);
  args.push_back("--db");
  args.push_back(db);
  return args;
}

std::map<std::string, double> StoredP50(const std::string& db) {
  std::map<std::string, double> out;
  auto store = Store::Open(db);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return out;
  auto rows = store->QueryMeasurements();
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  if (!rows.ok()) return out;
  for (const StoredMeasurement& row : *rows) {
    EXPECT_TRUE(out.emplace(row.kernel.Key(), row.stats.p50).second) << "duplicate row for " << row.kernel.Key();
  }
  return out;
}

// Polls the store until it holds `want` measurements (or 60 s pass, or the process exits, which
// sets `exited` and `status`). Returns the rows seen last.
std::size_t WaitForStoredRows(const std::string& db, pid_t pid, std::size_t want, int& status, bool& exited) {
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (std::filesystem::exists(db)) {
      auto store = Store::Open(db);
      if (store.ok()) {
        auto rows = store->QueryMeasurements();
        if (rows.ok()) seen = rows->size();
      }
      if (seen >= want) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return seen;
}

TEST(ProfileCli, JsonSummarySaysWhatWasMeasuredAndWhere) {
  TempDir dir;
  const std::string db = (dir.path() / "j.db").string();
  RunResult r = RunLatte(Quick({"profile", "--kernels", "relu", "--strategy", "random", "--max-kernels", "3", "--format",
                                "json"},
                               db),
                         dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["planned"], 3);
  EXPECT_EQ(json["measured"], 3);
  EXPECT_EQ(json["stored"], 3);
  EXPECT_EQ(json["remaining"], 0);
  EXPECT_EQ(json["db"], db);
  EXPECT_EQ(StoredP50(db).size(), 3u);
}

TEST(ProfileCli, SmallCampaignFillsTheStoreAndARerunSkipsIt) {
  TempDir dir;
  const std::string db = (dir.path() / "p.db").string();
  auto args = Quick({"profile", "--kernels", "relu,add", "--max-kernels", "6"}, db);
  RunResult first = RunLatte(args, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("measured 6, unsupported 0, remaining 0"), std::string::npos) << first.out;
  EXPECT_NE(first.err.find("profile 6/6"), std::string::npos) << first.err;  // plain progress lines (not a tty)
  EXPECT_EQ(first.err.find('\r'), std::string::npos);
  const auto rows = StoredP50(db);
  EXPECT_EQ(rows.size(), 6u);
  std::set<std::string> kinds;
  for (const auto& [key, p50] : rows) {
    kinds.insert(key.substr(0, key.find('|')));
    EXPECT_GT(p50, 0);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"relu", "add"}));

  RunResult second = RunLatte(args, dir.path());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("6 done in earlier runs"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("measured 0"), std::string::npos) << second.out;
  EXPECT_EQ(StoredP50(db), rows);  // nothing re-measured, nothing added

  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 1u);  // same command + space: the same campaign
  EXPECT_EQ((*campaigns)[0].status, "done");
  auto refs = store->ListReferences((*campaigns)[0].id);
  ASSERT_TRUE(refs.ok());
  EXPECT_GE(refs->size(), 2u);  // at the start and at the end
}

TEST(ProfileCli, UnsupportedKernelIsRecordedOnceWithItsReason) {
  TempDir dir;
  const std::string db = (dir.path() / "u.db").string();
  // XNNPACK has no exp operator.
  auto args = Quick({"profile", "--kernels", "exp", "--max-kernels", "2"}, db);
  RunResult first = RunLatte(args, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("measured 0, unsupported 2"), std::string::npos) << first.out;
  RunResult second = RunLatte(args, dir.path());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("measured 0, unsupported 0, remaining 0"), std::string::npos) << second.out;
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto unsupported = store->QueryUnsupported();
  ASSERT_TRUE(unsupported.ok());
  ASSERT_EQ(unsupported->size(), 2u);
  EXPECT_EQ((*unsupported)[0].first.Kind(), "exp");
  EXPECT_NE((*unsupported)[0].second.find("exp"), std::string::npos) << (*unsupported)[0].second;
  EXPECT_TRUE(store->QueryMeasurements()->empty());
}

TEST(ProfileCli, TransformerKernelsRunOnOnednnAndXnnpackSaysWhyNot) {
  TempDir dir;
  const std::string db = (dir.path() / "t.db").string();
  RunResult onednn = RunLatte(Quick({"profile", "--strategy", "transformers", "--kernels", "matmul,softmax,gelu",
                                     "--max-kernels", "6", "--backend", "onednn"},
                                    db),
                              dir.path());
  ASSERT_EQ(onednn.exit_code, 0) << onednn.err;
  EXPECT_NE(onednn.out.find("measured 6, unsupported 0"), std::string::npos) << onednn.out;
  std::set<std::string> kinds;
  for (const auto& [key, p50] : StoredP50(db)) {
    kinds.insert(key.substr(0, key.find('|')));
    EXPECT_GT(p50, 0) << key;
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"gelu", "matmul", "softmax"}));

  // Debian's XNNPACK has neither a batched matmul nor gelu: recorded as such, with the reason.
  const std::string xdb = (dir.path() / "x.db").string();
  RunResult xnnpack = RunLatte(
      Quick({"profile", "--strategy", "transformers", "--kernels", "matmul,gelu", "--max-kernels", "4"}, xdb), dir.path());
  ASSERT_EQ(xnnpack.exit_code, 0) << xnnpack.err;
  EXPECT_NE(xnnpack.out.find("measured 0, unsupported 4"), std::string::npos) << xnnpack.out;
  auto store = Store::Open(xdb);
  ASSERT_TRUE(store.ok());
  auto unsupported = store->QueryUnsupported();
  ASSERT_TRUE(unsupported.ok());
  ASSERT_EQ(unsupported->size(), 4u);
  for (const auto& [kernel, why] : *unsupported)
    EXPECT_NE(why.find(kernel.Kind() + " is unsupported on xnnpack, because this XNNPACK"), std::string::npos)
        << kernel.Key() << ": " << why;
}

// At int8 a campaign measures what an int8 model is made of: a conv as its int8 form with the
// quantize and dequantize at its edges, a hard_swish (this XNNPACK has no int8 operator for it) at
// fp32, as it runs in an int8 model; all stored under the int8 configuration, each in its key's dtype.
TEST(ProfileCli, Int8MeasuresTheKernelsAnInt8ModelIsMadeOf) {
  TempDir dir;
  const std::string db = (dir.path() / "q.db").string();
  auto args = Quick({"profile", "--kernels", "conv2d,hard_swish", "--strategy", "random", "--max-kernels", "4", "--precision", "int8"}, db);
  RunResult r = RunLatte(args, dir.path(), 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  EXPECT_NE(r.out.find("measured " + std::to_string(rows->size()) + ", unsupported 0"), std::string::npos) << r.out;
  std::map<std::string, int> by_kind;  // ModelKind-like: "conv2d|int8", "hard_swish|float32", ...
  for (const StoredMeasurement& row : *rows) {
    EXPECT_EQ(row.backend.precision, "int8");
    EXPECT_GT(row.stats.p50, 0);
    ++by_kind[row.kernel.Kind() + "|" + std::string(DataTypeName(row.kernel.dtype))];
  }
  EXPECT_EQ(by_kind["conv2d|int8"], 2) << r.out;
  EXPECT_EQ(by_kind["hard_swish|float32"], 2) << r.out;
  EXPECT_GE(by_kind["quantize|float32"], 1);
  EXPECT_GE(by_kind["dequantize|int8"], 1);
  EXPECT_EQ(by_kind.size(), 4u);
  EXPECT_TRUE(store->QueryUnsupported()->empty());

  // The same kernels in fp32 are another campaign, stored beside them.
  auto fp32 = Quick({"profile", "--kernels", "conv2d,hard_swish", "--strategy", "random", "--max-kernels", "4"}, db);
  RunResult f = RunLatte(fp32, dir.path(), 120);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("measured 4, unsupported 0"), std::string::npos) << f.out;
  EXPECT_EQ(store->QueryMeasurements()->size(), rows->size() + 4);
}

// A model's kernels profiled for ONNX Runtime are those it runs: face_detection_full_range's
// residual adds after a pad run apart from their convs (ORT's NCHWc pass does not block a pad's
// output), each with its relu: the add+relu kernels of 48×48×48 are measured, which grouping by
// the default rules (the add inside the conv) never forms.
TEST(ProfileCli, FromModelsMeasuresTheKernelsAsTheBackendRunsThem) {
  LATTE_REQUIRE_MODEL("face_detection_full_range.tflite");
  if (HostNchwcBlock() == 0) GTEST_SKIP() << "this CPU gives ONNX Runtime no NCHWc pass";
  TempDir dir;
  const std::string db = (dir.path() / "ort.db").string();
  auto args = Quick({"profile", "--backend", "ort", "--strategy", "from-models", "--models",
                     testing::ModelPath("face_detection_full_range.tflite"), "--no-neighbours", "--kernels", "add+relu"},
                    db);
  RunResult r = RunLatte(args, dir.path(), 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, double> stored = StoredP50(db);
  EXPECT_TRUE(stored.count("add+relu|a0=1,a1=48,a2=48,a3=48,b0=1,b1=48,b2=48,b3=48|float32")) << r.out;
  for (const auto& [key, p50] : stored) {
    EXPECT_EQ(key.rfind("add+relu|", 0), 0u) << key;
    EXPECT_GT(p50, 0) << key;
  }
  // XNNPACK runs no residual add inside a conv: its convs are profiled without one.
  const std::string xnn_db = (dir.path() / "xnnpack.db").string();
  RunResult x = RunLatte(Quick({"profile", "--backend", "xnnpack", "--strategy", "from-models", "--models",
                                testing::ModelPath("face_detection_full_range.tflite"), "--no-neighbours", "--kernels", "conv2d"},
                               xnn_db),
                         dir.path(), 120);
  ASSERT_EQ(x.exit_code, 0) << x.err;
  const std::map<std::string, double> convs = StoredP50(xnn_db);
  EXPECT_TRUE(convs.count("conv2d" + std::string("|bias=1,dh=1,dw=1,g=1,ic=12,ih=48,iw=48,kh=1,kw=1,n=1,oc=48,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32")))
      << x.out;
  for (const auto& [key, p50] : convs) EXPECT_EQ(key.find("+add"), std::string::npos) << key;

  // A pack whose rules run the add inside the conv (timing decided it on another backend) is
  // profiled as it groups when its rules are given: the 12→48 convs with their add and relu.
  const std::string rules_db = (dir.path() / "rules.db").string();
  RunResult g = RunLatte(Quick({"profile", "--backend", "xnnpack", "--strategy", "from-models", "--models",
                                testing::ModelPath("face_detection_full_range.tflite"), "--no-neighbours",
                                "--fusion-rules", "conv2d+relu,conv2d+add+relu", "--kernels", "conv2d+add+relu"},
                               rules_db),
                         dir.path(), 120);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::map<std::string, double> fused = StoredP50(rules_db);
  EXPECT_FALSE(fused.empty()) << g.out;
  bool twelve_to_48 = false;
  for (const auto& [key, p50] : fused) {
    EXPECT_EQ(key.rfind("conv2d+add+relu|", 0), 0u) << key;
    twelve_to_48 = twelve_to_48 || (key.find(",ic=12,") != std::string::npos && key.find(",oc=48,") != std::string::npos);
  }
  EXPECT_TRUE(twelve_to_48) << g.out;
}

TEST(ProfileCli, BudgetStopsCleanlyAndMarksTheCampaignStopped) {
  TempDir dir;
  const std::string db = (dir.path() / "b.db").string();
  // 30 kernels at ≥ 50 ms of timed runs each need more than the 1 s budget.
  auto args = Quick({"profile", "--kernels", "relu", "--budget", "1s"}, db, "0.05");
  RunResult first = RunLatte(args, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("budget spent"), std::string::npos) << first.out;
  const auto after_first = StoredP50(db);
  EXPECT_GT(after_first.size(), 0u);
  EXPECT_LT(after_first.size(), 30u);
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store->ListCampaigns())[0].status, "stopped");
}

// The resume test of issue 4: kill -9 mid-run, rerun, nothing completed lost or duplicated.
TEST(ProfileCli, SigintStopsAfterTheCurrentKernelKeepsEverythingAndExits130) {
  TempDir dir;
  const std::string db = (dir.path() / "i.db").string();
  const pid_t pid = SpawnLatte(Quick({"profile", "--kernels", "relu,add", "--batch", "1"}, db, "0.03"));
  ASSERT_GT(pid, 0);
  int status = 0;
  bool exited = false;
  const std::size_t seen = WaitForStoredRows(db, pid, 3, status, exited);
  ASSERT_FALSE(exited) << "the profile finished before it could be interrupted";
  ASSERT_GE(seen, 3u);
  ::kill(pid, SIGINT);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "SIGINT must stop the profile cleanly, not kill it";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto kept = StoredP50(db);
  EXPECT_GE(kept.size(), seen);
  EXPECT_LT(kept.size(), 60u);
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 1u);
  EXPECT_EQ(campaigns->front().status, "stopped");
}

TEST(ProfileCli, ASecondSigintEndsAtOnceKeepingWhatWasCommitted) {
  // Each kernel runs for at least 2 s: the first SIGINT would wait for the current one to end.
  TempDir dir;
  const std::string db = (dir.path() / "j.db").string();
  const pid_t pid = SpawnLatte(Quick({"profile", "--kernels", "relu", "--batch", "1"}, db, "2"));
  ASSERT_GT(pid, 0);
  int status = 0;
  bool exited = false;
  const std::size_t seen = WaitForStoredRows(db, pid, 1, status, exited);
  ASSERT_FALSE(exited) << "the profile finished before it could be interrupted";
  ASSERT_GE(seen, 1u) << "no measurement appeared within 60 s";
  ::kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // two pending SIGINTs are one
  ::kill(pid, SIGINT);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "a second SIGINT must end the profile at once";
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_GE(StoredP50(db).size(), seen);
}

TEST(ProfileCli, ResumesAfterSigkillWithNothingLostOrDuplicated) {
  TempDir dir;
  const std::string db = (dir.path() / "r.db").string();
  // 60 kernels, each ≥ 30 ms of timed runs; a transaction per measurement (--batch 1).
  auto args = Quick({"profile", "--kernels", "relu,add", "--batch", "1"}, db, "0.03");
  const pid_t pid = SpawnLatte(args);
  ASSERT_GT(pid, 0);
  // Kill it once a few measurements are stored (and before it can finish).
  int status = 0;
  bool exited = false;
  const std::size_t seen = WaitForStoredRows(db, pid, 5, status, exited);
  ASSERT_FALSE(exited) << "the profile finished before it could be killed";
  ASSERT_GE(seen, 5u) << "no measurements appeared within 60 s";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  const auto before = StoredP50(db);  // everything committed before the kill
  EXPECT_GE(before.size(), seen);
  EXPECT_LT(before.size(), 60u);

  RunResult rerun = RunLatte(args, dir.path());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_NE(rerun.out.find("remaining 0"), std::string::npos) << rerun.out;
  const auto after = StoredP50(db);  // StoredP50 also fails on any duplicate row
  EXPECT_EQ(after.size(), 60u);
  for (const auto& [key, p50] : before) {
    auto it = after.find(key);
    ASSERT_NE(it, after.end()) << "lost: " << key;
    EXPECT_EQ(it->second, p50) << "re-measured: " << key;
  }
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 1u);
  EXPECT_EQ((*campaigns)[0].status, "done");
  EXPECT_EQ((*campaigns)[0].done, 60);
}

TEST(ProfileCli, AdaptiveRoundPicksNewKernelsAroundTheMeasuredOnes) {
  TempDir dir;
  const std::string db = (dir.path() / "a.db").string();
  RunResult grid = RunLatte(Quick({"profile", "--kernels", "relu", "--max-kernels", "8"}, db), dir.path());
  ASSERT_EQ(grid.exit_code, 0) << grid.err;
  const auto before = StoredP50(db);
  ASSERT_EQ(before.size(), 8u);
  auto args = Quick({"profile", "--kernels", "relu", "--strategy", "adaptive", "--max-kernels", "3"}, db);
  RunResult round = RunLatte(args, dir.path());
  ASSERT_EQ(round.exit_code, 0) << round.err;
  EXPECT_NE(round.out.find("relu: 8 measured, leave-one-out error"), std::string::npos) << round.out;
  EXPECT_NE(round.out.find("measured 3, unsupported 0, remaining 0"), std::string::npos) << round.out;
  const auto after = StoredP50(db);
  EXPECT_EQ(after.size(), 11u);  // three new kernels, none measured twice
  // A second round picks yet other kernels.
  RunResult again = RunLatte(args, dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(StoredP50(db).size(), 14u);
}

TEST(ProfileCli, BadFlagsAndBadStoresExit2) {
  TempDir dir;
  const std::string db = (dir.path() / "x.db").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"profile", "--kernels", "frobnicate", "--db", db}, "frobnicate"},
      {{"profile", "--kernels", "relu", "--strategy", "sideways", "--db", db}, "sideways"},
      {{"profile", "--kernels", "relu", "--budget", "10x", "--db", db}, "10x"},
      {{"profile", "--kernels", "relu", "--backend", "nope", "--db", db}, "nope"},
      {{"profile", "--db", db}, "--kernels"},
      {{"profile", "--kernels", "relu", "--strategy", "random", "--db", db}, "--max-kernels"},
      {{"profile", "--kernels", "add,relu", "--strategy", "random", "--max-kernels", "18446744073709551615", "--db", db},
       "--max-kernels: 18446744073709551615 is not in 1..100000"},
      {{"profile", "--kernels", "relu", "--strategy", "adaptive", "--max-kernels", "3", "--db", db},
       "at least 4 measurements"},
      {{"profile", "--strategy", "from-models", "--db", db}, "--models"},
      {{"profile", "--strategy", "from-models", "--models", "/nonexistent.tflite", "--db", db}, "/nonexistent.tflite"},
      {{"profile", "--kernels", "relu", "--precision", "fp16", "--db", db}, "fp16"},
      {{"profile", "--kernels", "relu", "--num-runs", "0", "--db", db}, "num-runs"},
      {{"profile", "--kernels", "relu", "--num-threads", "0", "--db", db}, "num-threads"},
      {{"profile", "--kernels", "relu", "--strategy", "random", "--max-kernels", "3", "--fusion-rules", "conv2d+relu",
        "--db", db},
       "--fusion-rules applies to --strategy from-models and transformers, not random"},
      {{"profile", "--strategy", "from-models", "--models", testing::ModelPath("selfie_segmentation.tflite"),
        "--fusion-rules", "conv2d+relu,conv2d+frob", "--db", db},
       "--fusion-rules"},
  };
  for (const auto& [args, needle] : cases) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << args[2] << " " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A file that is not a database: a clear error naming it, and the file left as it was.
  const std::string junk = (dir.path() / "junk.db").string();
  { std::ofstream(junk) << std::string(4096, 'x'); }
  RunResult r = RunLatte(Quick({"profile", "--kernels", "relu", "--max-kernels", "1"}, junk), dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("junk.db"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadAll(junk), std::string(4096, 'x'));
}

}  // namespace
}  // namespace latte
