#include "core/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace latte {
namespace {

Expected<int> Half(int v) {
  if (v % 2 != 0) return InvalidInput("odd value " + std::to_string(v));
  return v / 2;
}

Expected<int> Quarter(int v) {
  LATTE_ASSIGN_OR_RETURN(int half, Half(v));
  LATTE_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckQuarter(int v) {
  LATTE_RETURN_IF_ERROR(Quarter(v));
  return Status::Ok();
}

TEST(Status, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = Unsupported("no kernel");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.WithContext("node 3").message(), "node 3: no kernel");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(Status, MacrosPropagateTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  auto bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "odd value 3");
  EXPECT_TRUE(CheckQuarter(4).ok());
  EXPECT_EQ(CheckQuarter(2).message(), "odd value 1");
}

TEST(Expected, HoldsMoveOnlyValues) {
  Expected<std::unique_ptr<int>> e = std::make_unique<int>(5);
  ASSERT_TRUE(e.ok());
  std::unique_ptr<int> p = std::move(e).value();
  EXPECT_EQ(*p, 5);
}

}  // namespace
}  // namespace latte
