// `latte pareto` end to end on a real model with the shipped xnnpack and oneDNN packs (re-keyed to
// this machine so that --verify may run here), and its bad-input errors: exit 2, one line.
#include <gtest/gtest.h>

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
