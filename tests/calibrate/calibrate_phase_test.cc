#include <gtest/gtest.h>

#include "calibrate/calibrate.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

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

// Whether calibrate measures encoders (their kernels, networks, layer_norm and gelu): asked of
// attention's matmul as a model at the precision runs it. oneDNN runs it at fp32 and bf16 (asked
// of the float32 graph at bf16, it was refused, and bf16 packs had no layer_norm); Debian's
// XNNPACK has no batched matmul of two activations.
TEST(CalibrateKinds, EncodersWhereTheBackendRunsAttentionAtThePrecision) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RunOptions run;
  EXPECT_TRUE(BackendRunsAttention("onednn", registry, run));
  EXPECT_FALSE(BackendRunsAttention("xnnpack", registry, run));
  EXPECT_FALSE(BackendRunsAttention("no-such-backend", registry, run));
  run.precision = Precision::kBf16;
  if (Support bf16 = OnednnBf16Support(); !bf16.ok()) GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << bf16.why();
  EXPECT_TRUE(BackendRunsAttention("onednn", registry, run));
}

}  // namespace
}  // namespace latte
