#include <gtest/gtest.h>

#include "calibrate/calibrate.h"

namespace latte {
namespace {

TEST(CalibratePhaseBudget, AShareOfWhatIsLeft) {
  EXPECT_DOUBLE_EQ(*CalibratePhaseBudget(100, 0.5, 0), 50);
  EXPECT_DOUBLE_EQ(*CalibratePhaseBudget(100, 0.5, 12), 50);
  EXPECT_DOUBLE_EQ(*CalibratePhaseBudget(kMinCalibratePhaseSecs, 1.0, 3), kMinCalibratePhaseSecs);
}

TEST(CalibratePhaseBudget, TooLittleLeftSkipsThePhaseOnceKernelsAreMeasured) {
  EXPECT_FALSE(CalibratePhaseBudget(8, 0.5, 1).has_value());
  EXPECT_FALSE(CalibratePhaseBudget(-20, 1.0, 40).has_value());
}

TEST(CalibratePhaseBudget, WithNoKernelMeasuredAPhaseStillGetsTheMinimum) {
  // The phases before overran the budget: without this, the fit would find no kernel to fit.
  EXPECT_DOUBLE_EQ(*CalibratePhaseBudget(8, 0.5, 0), kMinCalibratePhaseSecs);
  EXPECT_DOUBLE_EQ(*CalibratePhaseBudget(-20, 1.0, 0), kMinCalibratePhaseSecs);
}

}  // namespace
}  // namespace latte
