#include "run/measure.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(Measure, CountsRunsAndPropagatesErrors) {
  int calls = 0;
  MeasureOptions options;
  options.warmup_runs = 3;
  options.min_warmup_secs = 0;
  options.num_runs = 20;
  options.min_secs = 0;
  options.max_remeasures = 0;
  auto m = Measure([&] { ++calls; return Status::Ok(); }, options);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->warmup_count, 3);
  EXPECT_EQ(m->samples_us.size(), 20u);
  EXPECT_EQ(m->stats.n, 20u);
  EXPECT_EQ(calls, 1 + 3 + 20);  // first call, warmup, timed
  EXPECT_EQ(m->attempts, 1);

  int n = 0;
  auto failing = Measure([&] { return ++n == 5 ? InvalidInput("boom") : Status::Ok(); }, options);
  ASSERT_FALSE(failing.ok());
  EXPECT_EQ(failing.status().message(), "boom");
}

TEST(Measure, RejectsBadOptions) {
  MeasureOptions options;
  options.num_runs = 0;
  EXPECT_FALSE(Measure([] { return Status::Ok(); }, options).ok());
  options.num_runs = 1;
  options.warmup_runs = -1;
  EXPECT_FALSE(Measure([] { return Status::Ok(); }, options).ok());
}

}  // namespace
}  // namespace latte
