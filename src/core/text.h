#pragma once
// Small text helpers every layer reads or writes files with: trimming, and CSV fields (one
// quoting rule for every CSV Latte writes, and the reader that takes it back).

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace latte {

/// `text` without leading and trailing whitespace (spaces, tabs, CR, LF).
std::string_view Trim(std::string_view text);

/// One CSV field: as it is, or quoted (quotes doubled) when it holds a comma, quote, CR or LF.
/// A line break inside becomes a space: Latte's CSV is one record per line, as SplitCsvLine
/// and line-based tools read it.
std::string CsvField(std::string_view text);

/// Splits one CSV line into fields (RFC 4180 quotes, no line breaks inside quotes). Fails on an
/// unterminated quote or text after a closing one.
Expected<std::vector<std::string>> SplitCsvLine(std::string_view line);

}  // namespace latte
