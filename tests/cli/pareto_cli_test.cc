// `latte pareto` end to end on a real model with the shipped xnnpack and oneDNN packs (re-keyed to
// this machine so that --verify may run here), and its bad-input errors: exit 2, one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "predict/pack.h"
#include "run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using testing::ReadAll;
using testing::RunLatte;
using testing::RunResult;
using testing::TempDir;

const std::string kModel = "face_detection_short_range.tflite";
std::string Shipped(const std::string& backend) {
  return std::string(LATTE_SOURCE_DIR) + "/data/packs/" + backend + "-1thread-fp32.json.gz";
}

// The shipped pack, saved as a pack of the machine `key` (this one's by default).
std::string Rekeyed(const TempDir& dir, const std::string& backend, const std::string& key = "") {
  auto pack = Pack::Load(Shipped(backend));
  EXPECT_TRUE(pack.ok()) << pack.status().message();
  const DeviceFingerprint here = ReadDeviceFingerprint();
  pack->info.device = {{"key", key.empty() ? here.Key() : key}, {"description", key.empty() ? here.Describe() : key}};
  const std::string path = (dir.path() / (backend + (key.empty() ? "" : "-" + key) + ".json.gz")).string();
  EXPECT_TRUE(pack->Save(path).ok());
  return path;
}

class ParetoCli : public ::testing::Test {
 protected:
  void SetUp() override {
    LATTE_REQUIRE_MODEL(kModel);
    model_ = ::latte::testing::ModelPath(kModel);
  }
  std::string model_;
};

TEST_F(ParetoCli, FindsAFrontAndVerifiesItBesideTheAllOnOneBackendRuns) {
  TempDir dir;
  const std::string xnn = Rekeyed(dir, "xnnpack"), dnn = Rekeyed(dir, "onednn");
  const std::string plot = (dir.path() / "front.svg").string();
  RunResult r = RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn + "," + dnn, "--search",
                          "brute", "--verify", "2", "--warmup-runs", "1", "--num-runs", "3", "--min-secs", "0",
                          "--format", "json", "--plot", plot},
                         dir.path(), 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  ASSERT_TRUE(json["oplist"].is_array());
  const std::size_t k = json["oplist"].size();
  ASSERT_GE(k, 3u);
  // Brute force evaluates all 2^k assignments; those it left out are counted.
  EXPECT_EQ(json["solutions"].size() + json["left_out"]["assignments"].get<std::size_t>(), std::size_t{1} << k);
  std::map<std::uint64_t, std::pair<double, double>> by_id;
  for (const auto& s : json["solutions"]) {
    by_id[s["id"].get<std::uint64_t>()] = {s["time"].get<double>(), s["memory"].get<double>()};
    EXPECT_GT(s["time"].get<double>(), 0);
    EXPECT_GT(s["memory"].get<double>(), 0);
  }
  // The front: known ids, with a config each, and no solution dominates any of them.
  ASSERT_GE(json["front"].size(), 1u);
  for (const auto& id : json["front"]) {
    ASSERT_TRUE(by_id.count(id.get<std::uint64_t>()));
    EXPECT_TRUE(json["configs"].contains(std::to_string(id.get<std::uint64_t>())));
    const auto [t, m] = by_id[id.get<std::uint64_t>()];
    for (const auto& [other, tm] : by_id)
      EXPECT_FALSE(tm.first <= t && tm.second <= m && (tm.first < t || tm.second < m)) << other << " dominates " << id;
  }
  EXPECT_TRUE(json["references"].contains("all-xnnpack"));
  EXPECT_TRUE(json["references"].contains("all-onednn"));
  // Two front points (or the one there is) and the two references ran for real.
  std::set<std::string> roles;
  for (const auto& v : json["verify"]) {
    roles.insert(v["role"].get<std::string>());
    ASSERT_TRUE(v["ok"].get<bool>()) << v.dump();
    EXPECT_GT(v["measured_time"].get<double>(), 0);
    EXPECT_GT(v["measured_memory"].get<double>(), 0);
    EXPECT_GT(v["predicted_time"].get<double>(), 0);
  }
  EXPECT_EQ(roles, (std::set<std::string>{"front", "all-xnnpack", "all-onednn"}));
  EXPECT_NE(ReadAll(plot).find("<svg"), std::string::npos);

  // As text. (Memory is measured, so a near-tie on the front may fall either way from one run
  // to the next: the search itself is deterministic, tests/search/searches_test.cc.)
  RunResult text = RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn + "," + dnn}, dir.path(), 300);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("predicted front: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("search: brute, 256 assignments evaluated"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("all-onednn (reference)"), std::string::npos) << text.out;
}

void ExpectBadInput(const RunResult& r, const std::string& says) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

// xnnpack listed at fp32 (the shipped pack) and at int8 (a short int8 calibration of this machine):
// each op chooses a precision too, the front is over time, memory and drift, each op's drift run
// int8 alone is measured, and a verified assignment with int8 nodes has its real drift measured.
TEST_F(ParetoCli, ChoosesAPrecisionPerOpWhenABackendIsListedAtFp32AndInt8) {
  TempDir dir;
  const std::string int8_pack = (dir.path() / "int8.json").string();
  RunResult calibrated = RunLatte({"calibrate", "--precision", "int8", "--budget", "30s", "--no-detect-fusion", "--models",
                                   model_, "--db", (dir.path() / "c.db").string(), "-o", int8_pack},
                                  dir.path(), 240);
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  const std::string fp32_pack = Rekeyed(dir, "xnnpack");
  RunResult r = RunLatte({"pareto", model_, "--backends", "xnnpack,xnnpack@int8", "--packs", fp32_pack + "," + int8_pack,
                          "--search", "brute", "--verify", "1", "--warmup-runs", "1", "--num-runs", "3", "--min-secs",
                          "0", "--format", "json"},
                         dir.path(), 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["backends"], (nlohmann::json{"xnnpack", "xnnpack@int8"}));
  const std::size_t k = json["oplist"].size();
  EXPECT_EQ(json["solutions"].size() + json["left_out"]["assignments"].get<std::size_t>(), std::size_t{1} << k);
  // Each op's drift: none at fp32, some op's above 0 at int8.
  ASSERT_EQ(json["drift_per_op"].size(), k);
  double most = 0;
  for (const auto& entry : json["drift_per_op"]) {
    EXPECT_EQ(entry[0].get<double>(), 0.0);
    most = std::max(most, entry[1].get<double>());
  }
  EXPECT_GT(most, 0.0);
  // All fp32: no drift; all int8: the sum of every op's drift, and the time `latte predict` gives
  // the model's kernels with the int8 pack (lowered the same way; pareto compares assignments by
  // their kernels, without the in-graph context predict adds on top).
  const auto& fp32 = json["references"]["all-xnnpack"];
  const auto& int8 = json["references"]["all-xnnpack@int8"];
  EXPECT_EQ(fp32["drift"].get<double>(), 0.0);
  EXPECT_GT(int8["drift"].get<double>(), 0.0);
  RunResult predicted = RunLatte({"predict", model_, "--pack", int8_pack, "--format", "json"}, dir.path());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  const nlohmann::json prediction = nlohmann::json::parse(predicted.out);
  EXPECT_NEAR(int8["time"].get<double>(), prediction["total_ms"].get<double>() - prediction["context_ms"].get<double>(), 1e-9);
  // The front is non-dominated in three objectives, and holds the all-fp32 assignment's time or
  // better at no drift.
  std::map<std::uint64_t, std::array<double, 4>> by_id;  // time, memory, drift, int8 nodes
  for (const auto& sol : json["solutions"])
    by_id[sol["id"].get<std::uint64_t>()] = {sol["time"].get<double>(), sol["memory"].get<double>(),
                                             sol["drift"].get<double>(), sol["int8_nodes"].get<double>()};
  for (const auto& [id, o] : by_id) EXPECT_EQ(o[2] == 0.0, o[3] == 0.0) << id << ": drift iff int8 nodes";
  bool zero_drift_on_front = false;
  for (const auto& id : json["front"]) {
    const auto& p = by_id.at(id.get<std::uint64_t>());
    zero_drift_on_front = zero_drift_on_front || p[2] == 0.0;
    for (const auto& [other, q] : by_id)
      EXPECT_FALSE(q[0] <= p[0] && q[1] <= p[1] && q[2] <= p[2] && (q[0] < p[0] || q[1] < p[1] || q[2] < p[2]))
          << other << " dominates " << id;
  }
  EXPECT_TRUE(zero_drift_on_front);
  // The verified runs: an int8 one has its drift measured, close to fp32's but not equal.
  bool int8_verified = false;
  for (const auto& v : json["verify"]) {
    ASSERT_TRUE(v["ok"].get<bool>()) << v.dump();
    if (v["int8_nodes"].get<int>() == 0) {
      EXPECT_EQ(v["measured_drift"].get<double>(), 0.0);
      continue;
    }
    int8_verified = true;
    EXPECT_GT(v["measured_drift"].get<double>(), 0.0) << v.dump();
    EXPECT_LT(v["measured_drift"].get<double>(), 0.1) << v.dump();
  }
  EXPECT_TRUE(int8_verified);

  // A precision the pack is not: one line, exit 2.
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,xnnpack@int8", "--packs", fp32_pack + "," + fp32_pack},
                          dir.path()),
                 "the pack given for xnnpack@int8 is a fp32 pack");
}


TEST_F(ParetoCli, BadInputIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string xnn = Shipped("xnnpack"), dnn = Shipped("onednn");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,tpu", "--packs", xnn + "," + dnn}, dir.path()),
                 "tpu");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn}, dir.path()),
                 "--packs gives 1 pack(s) for 2 backend(s)");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn + "," + xnn}, dir.path()),
                 "the pack given for onednn is a pack for xnnpack");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn + "," + dnn, "--mode",
                           "index", "--search", "brute"},
                          dir.path()),
                 "assignments is more than the limit of 65536");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", xnn + ",missing.json"}, dir.path()),
                 "missing.json");
  // Packs of two machines, and --verify with packs of another machine than this one.
  const std::string other = Rekeyed(dir, "onednn", "some-other-cpu");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", Rekeyed(dir, "xnnpack") + "," + other},
                          dir.path()),
                 "is for another machine (some-other-cpu)");
  const std::string other_xnn = Rekeyed(dir, "xnnpack", "some-other-cpu");
  ExpectBadInput(RunLatte({"pareto", model_, "--backends", "xnnpack,onednn", "--packs", other_xnn + "," + other,
                           "--verify", "1"},
                          dir.path()),
                 "--verify runs assignments on this one");
}

}  // namespace
}  // namespace latte
