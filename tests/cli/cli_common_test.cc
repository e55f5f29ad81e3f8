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

}  // namespace
}  // namespace latte::cli
