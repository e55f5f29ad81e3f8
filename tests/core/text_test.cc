// Trimming and the one CSV quoting rule: what CsvField writes, SplitCsvLine reads back.
#include "core/text.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(Text, TrimsWhitespaceOnBothSides) {
  EXPECT_EQ(Trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(Trim("  "), "");
  EXPECT_EQ(Trim("x"), "x");
}

TEST(Csv, SplitsQuotedFields) {
  auto fields = SplitCsvLine(R"(a,"b,c",,"say ""hi""", d )");
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(*fields, (std::vector<std::string>{"a", "b,c", "", "say \"hi\"", " d "}));
  EXPECT_FALSE(SplitCsvLine("\"open").ok());
  EXPECT_FALSE(SplitCsvLine("\"closed\" then text").ok());
}

TEST(Csv, QuotesOnlyWhatNeedsItAndReadsItsOwnFieldsBack) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines\r"), "\"two lines \"");  // one record per line
  const std::vector<std::string> row = {"conv2d|ic=3,oc=8", "", "why: \"pow\" unsupported", "x\ny"};
  std::string line;
  for (const std::string& field : row) {
    if (!line.empty()) line += ',';
    line += CsvField(field);
  }
  auto back = SplitCsvLine(line);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, (std::vector<std::string>{"conv2d|ic=3,oc=8", "", "why: \"pow\" unsupported", "x y"}));
}

}  // namespace
}  // namespace latte
