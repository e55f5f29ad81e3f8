#include "report/text_table.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(TextTable, AlignsColumns) {
  TextTable t;
  t.AddColumn("op");
  t.AddColumn("MACs", TextTable::Align::kRight);
  t.AddRow({"conv2d", "1,000"});
  t.AddRow({"add", "0"});
  t.AddRule();
  t.AddRow({"total", "1,000"});
  EXPECT_EQ(t.Render(),
            "op       MACs\n"
            "-------------\n"
            "conv2d  1,000\n"
            "add         0\n"
            "-------------\n"
            "total   1,000\n");
}

TEST(TextTable, Thousands) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace latte
