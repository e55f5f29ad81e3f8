// The CLI's own helpers, called directly (the other CLI tests run the binary).
#include "cli/cli_common.h"

#include <gtest/gtest.h>

namespace latte::cli {
namespace {

TEST(Duration, ParsesUnits) {
  EXPECT_DOUBLE_EQ(*ParseDuration("30s"), 30);
  EXPECT_DOUBLE_EQ(*ParseDuration("10m"), 600);
  EXPECT_DOUBLE_EQ(*ParseDuration("2h"), 7200);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("90"), 90);
  for (const char* bad : {"", "10x", "m", "-5m", "0s", "1h30", "1..5m"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

// One name per precision, read back by one parser: every command spells them alike.
TEST(Precision, NamesParseBack) {
  for (Precision p : kAllPrecisions) EXPECT_EQ(*ParsePrecision(PrecisionName(p)), p);
  EXPECT_EQ(PrecisionName(Precision::kBf16), "bf16");
  Expected<Precision> bad = ParsePrecision("fp16");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown precision 'fp16' (fp32, bf16, int8)");
}

TEST(Precision, FlagCheckNamesWhatTheCommandRuns) {
  CLI::Validator check = PrecisionIn({Precision::kFp32, Precision::kInt8}, "submit");
  std::string ok = "int8", unknown = "fp64", not_here = "bf16";
  EXPECT_EQ(check(ok), "");
  EXPECT_EQ(check(unknown), "fp64 is not a precision (fp32, bf16, int8)");
  EXPECT_EQ(check(not_here), "bf16 is not one submit runs (fp32, int8)");
}

}  // namespace
}  // namespace latte::cli
