#pragma once
// A plain-text table with aligned columns, for terminal reports.

#include <initializer_list>
#include <string>
#include <vector>

namespace latte {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  static constexpr Align kRight = Align::kRight;  // numbers usually align right
  struct Column {
    std::string header;
    Align align = Align::kLeft;
  };
  TextTable() = default;
  /// A table with these columns, in order.
  TextTable(std::initializer_list<Column> columns);
  /// Adds a column.
  void AddColumn(std::string header, Align align = Align::kLeft);
  /// Adds a row; it must have one cell per column.
  void AddRow(std::vector<std::string> cells);
  /// Adds a horizontal rule before the next row (for totals).
  void AddRule();
  /// Renders with two spaces between columns and a rule under the header.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

/// Keeps the last `max` characters of a long name ("…" + tail): names differ most at the end.
std::string KeepTail(const std::string& text, std::size_t max);
/// 1234567 → "1,234,567"; negative numbers keep their sign.
std::string WithThousands(long long value);

}  // namespace latte
