// A campaign's key: the command text it shows (the text campaigns were identified by before schema
// version 4, byte for byte), and that text read back into the key.
#include "db/campaign_key.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(CampaignKey, ShowsTheCommandTextCampaignsWereIdentifiedBy) {
  const CampaignKey profile{"profile", "xnnpack", 1, "fp32", MeasureSettings(1, 50, 1.0), "{}"};
  EXPECT_EQ(profile.CommandText(),
            "latte profile --backend xnnpack --num_threads 1 --precision fp32 --warmup_runs 1 --num_runs 50 --min_secs 1");
  const CampaignKey networks{"graph-context", "ort", 2, "fp32", MeasureSettings(2, 10, 0.05), "{}"};
  EXPECT_EQ(networks.CommandText(),
            "latte profile --backend ort --num_threads 2 --precision fp32 --warmup_runs 2 --num_runs 10 --min_secs 0.05 "
            "--graph-context");
  const CampaignKey import{"import", "tensorrt", 0, "fp16",
                           R"({"backend_version":"","device":"v100","format":"tensorrt-conv"})", "{}"};
  EXPECT_EQ(import.CommandText(),
            "import --format tensorrt-conv --device v100 --backend tensorrt --backend-version  --num_threads 0 "
            "--precision fp16");
}

TEST(CampaignKey, ReadsEveryFormBack) {
  for (const CampaignKey& key :
       {CampaignKey{"profile", "onednn", 2, "fp32", MeasureSettings(0, 3, 0.2), R"({"seed":1})"},
        CampaignKey{"graph-context", "xnnpack", 1, "fp32", MeasureSettings(1, 50, 0.05), "{}"},
        CampaignKey{"import", "tensorrt", 1, "fp32", R"({"backend_version":"8.6 GA","device":"v 100","format":"csv"})",
                    "{}"}}) {
    std::optional<CampaignKey> read = ParseCampaignCommand(key.CommandText(), key.space);
    ASSERT_TRUE(read.has_value()) << key.CommandText();
    EXPECT_EQ(*read, key) << key.CommandText();
  }
}

TEST(CampaignKey, ATextOfNoKnownFormIsNoKey) {
  for (const char* text : {"", "latte profile", "latte profile --backend x --num_threads one --precision fp32 "
                                                 "--warmup_runs 1 --num_runs 50 --min_secs 1",
                           "latte profile --num_threads 1 --backend x --precision fp32 --warmup_runs 1 --num_runs 50 "
                           "--min_secs 1",
                           "profile --backend xnnpack", "import --format csv"}) {
    EXPECT_FALSE(ParseCampaignCommand(text, "{}").has_value()) << text;
  }
}

TEST(CampaignKey, StrategyAndSeedComeFromTheSpace) {
  CampaignKey key{"profile", "xnnpack", 1, "fp32", MeasureSettings(1, 50, 1.0), R"({"strategy":"adaptive","seed":12})"};
  EXPECT_EQ(key.Strategy(), "adaptive");
  EXPECT_EQ(key.Seed(), 12);
  key.space = R"({"graphs":"random-network-hswish-se","seed":18446744073709551615})";
  EXPECT_EQ(key.Strategy(), "random-network-hswish-se");
  EXPECT_EQ(key.Seed(), -1);  // a uint64 seed as SQLite's int64, bit for bit
  key.space = "not json";
  EXPECT_EQ(key.Strategy(), "");
  EXPECT_FALSE(key.Seed().has_value());
}

}  // namespace
}  // namespace latte
