#include "report/text_table.h"

#include <algorithm>
#include <cassert>

namespace latte {

TextTable::TextTable(std::initializer_list<Column> columns) {
  for (const Column& column : columns) AddColumn(column.header, column.align);
}

void TextTable::AddColumn(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  assert(cells.size() == headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::AddRule() { rows_.emplace_back(); }

std::string TextTable::Render() const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  size_t total = 0;
  for (size_t w : width) total += w;
  total += headers_.empty() ? 0 : 2 * (headers_.size() - 1);

  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      if (c > 0) line += "  ";
      line += aligns_[c] == Align::kRight ? pad + cells[c] : cells[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = render_row(headers_);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += row.empty() ? std::string(total, '-') + "\n" : render_row(row);
  return out;
}

std::string KeepTail(const std::string& text, std::size_t max) {
  if (text.size() <= max || max < 2) return text;
  return "…" + text.substr(text.size() - (max - 1));
}

std::string WithThousands(long long value) {
  std::string digits = std::to_string(value < 0 ? -static_cast<unsigned long long>(value) : static_cast<unsigned long long>(value));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace latte
