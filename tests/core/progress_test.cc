#include "core/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace latte {
namespace {

// A clock the test moves by hand: no wall-clock time in any assertion.
struct FakeClock {
  double now = 100;
  SecondsClock Fn() {
    return [this] { return now; };
  }
};

TEST(Progress, PlainModePrintsEveryNItems) {
  std::ostringstream out;
  FakeClock clock;
  ProgressOptions options;
  options.label = "conv2d";
  options.every_items = 3;
  options.every_secs = 1000;
  Progress progress(out, 10, options, clock.Fn());
  for (int i = 0; i < 7; ++i) {
    clock.now += 0.5;
    progress.Advance();
  }
  // Lines after items 3 and 6, nothing after 7.
  EXPECT_EQ(out.str(), "conv2d 3/10 30% 2.0/s ETA 0:04\nconv2d 6/10 60% 2.0/s ETA 0:02\n");
  progress.Finish();
  EXPECT_EQ(out.str().substr(out.str().rfind("conv2d")), "conv2d 7/10 70% 2.0/s ETA 0:02\n");
}

TEST(Progress, PlainModePrintsAfterSeconds) {
  std::ostringstream out;
  FakeClock clock;
  ProgressOptions options;
  options.every_items = 1000;
  options.every_secs = 10;
  Progress progress(out, 0, options, clock.Fn());
  clock.now += 4;
  progress.Advance();
  EXPECT_EQ(out.str(), "");
  clock.now += 6;
  progress.Advance();
  EXPECT_EQ(out.str(), "progress 2 0.2/s\n");  // unknown total: no percent, no ETA
}

TEST(Progress, TtyModeRedrawsOneLine) {
  std::ostringstream out;
  FakeClock clock;
  ProgressOptions options;
  options.label = "p";
  options.tty = true;
  options.bar_width = 4;
  options.redraw_secs = 1;
  Progress progress(out, 4, options, clock.Fn());
  clock.now += 2;
  progress.Advance(2);
  progress.SetNote("1 unsupported");
  clock.now += 2;
  progress.Advance(2);
  progress.Finish();
  EXPECT_EQ(out.str(),
            "\rp [##..] 2/4 50% 1.0/s ETA 0:02"
            "\rp [####] 4/4 100% 1.0/s ETA 0:00 (1 unsupported)"
            "\rp [####] 4/4 100% 1.0/s ETA 0:00 (1 unsupported)\n");
  EXPECT_EQ(out.str().find('\n'), out.str().size() - 1);
}

TEST(Progress, ResumedItemsCountInTotalButNotInRate) {
  std::ostringstream out;
  FakeClock clock;
  Progress progress(out, 100, {}, clock.Fn());
  progress.AddPreviouslyDone(50);
  clock.now += 10;
  progress.Advance(5);
  EXPECT_EQ(progress.done(), 55u);
  EXPECT_DOUBLE_EQ(progress.Rate(), 0.5);
  EXPECT_DOUBLE_EQ(progress.EtaSeconds(), 90);
}

TEST(Progress, EtaUnknownBeforeTimePasses) {
  std::ostringstream out;
  FakeClock clock;
  Progress progress(out, 10, {}, clock.Fn());
  EXPECT_LT(progress.EtaSeconds(), 0);
  EXPECT_NE(progress.Line().find("ETA ?"), std::string::npos);
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(FormatDuration(0), "0:00");
  EXPECT_EQ(FormatDuration(65), "1:05");
  EXPECT_EQ(FormatDuration(3 * 3600 + 2 * 60 + 11), "3:02:11");
  EXPECT_EQ(FormatDuration(-1), "?");
}

}  // namespace
}  // namespace latte
