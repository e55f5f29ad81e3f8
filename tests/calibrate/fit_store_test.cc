#include "calibrate/fit_store.h"

#include <gtest/gtest.h>

#include "run/backend_registry.h"

namespace latte {
namespace {

// A registration's traits reach the fit request (and its options) as registered; no registration
// (an imported table's backend) resets them to the plain defaults, whatever the request held.
TEST(SetBackendTraits, CopiesTheRegistrationAndResetsForABackendNotRun) {
  BackendFactory ort_like;
  ort_like.name = "ort-like";
  ort_like.takes_nhwc = false;
  ort_like.nchwc_block = 16;
  ort_like.channels_in_vectors = true;
  ort_like.clamps_run_apart = {OpKind::kAdd, OpKind::kMul};
  ort_like.channels_not_in_vectors = {OpKind::kTransposeConv2D};
  StoreFitRequest request;
  request.options.folds = 7;  // not a trait: left alone
  SetBackendTraits(&ort_like, request);
  ASSERT_TRUE(request.backend_takes_nhwc.has_value());
  EXPECT_FALSE(*request.backend_takes_nhwc);
  EXPECT_EQ(request.nchwc_block, 16);
  EXPECT_TRUE(request.channels_in_vectors);
  EXPECT_EQ(request.options.clamps_run_apart, (std::set<OpKind>{OpKind::kAdd, OpKind::kMul}));
  EXPECT_EQ(request.options.channels_not_in_vectors, std::set<OpKind>{OpKind::kTransposeConv2D});
  EXPECT_EQ(request.options.folds, 7);

  BackendFactory nhwc;
  nhwc.takes_nhwc = true;
  SetBackendTraits(&nhwc, request);
  EXPECT_TRUE(*request.backend_takes_nhwc);
  EXPECT_EQ(request.nchwc_block, 0);
  EXPECT_FALSE(request.channels_in_vectors);
  EXPECT_TRUE(request.options.clamps_run_apart.empty());

  SetBackendTraits(&ort_like, request);
  SetBackendTraits(nullptr, request);
  ASSERT_TRUE(request.backend_takes_nhwc.has_value());
  EXPECT_FALSE(*request.backend_takes_nhwc);
  EXPECT_EQ(request.nchwc_block, 0);
  EXPECT_FALSE(request.channels_in_vectors);
  EXPECT_TRUE(request.options.clamps_run_apart.empty());
  EXPECT_TRUE(request.options.channels_not_in_vectors.empty());
  EXPECT_EQ(request.options.folds, 7);
}

}  // namespace
}  // namespace latte
