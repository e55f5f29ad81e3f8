#pragma once
// The styles and script every HTML report inlines (html_assets.cc): written for Latte, no library.

#include <string_view>

namespace latte {

extern const std::string_view kReportStyle;
extern const std::string_view kReportScript;

}  // namespace latte
