#include "report/html_report.h"

#include "report/html_assets.h"
#include "report/inspect_view.h"

namespace latte {

std::string JsonForScript(const nlohmann::json& json) {
  const std::string text = DumpJson(json, -1);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // Outside strings JSON has none of these characters, so escaping them keeps the value.
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      // U+2028 and U+2029: line terminators to older JavaScript parsers.
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

nlohmann::json ReportGraphJson(const Graph& user, const std::string& model, const GraphPlan* plan,
                               const ModelPrediction* prediction) {
  nlohmann::json graph = InspectView(user, model).Json();
  if (plan == nullptr || prediction == nullptr) return graph;
  nlohmann::json layer_of(user.num_nodes(), nullptr), uncovered_of(user.num_nodes(), nullptr);
  // A planned node runs the user's nodes in plan->sources (none for one the plan inserted).
  auto mark = [&](const std::vector<NodeId>& nodes, std::size_t index, nlohmann::json& of) {
    for (NodeId id : nodes) {
      for (NodeId source : plan->sources.at(static_cast<std::size_t>(id))) {
        const auto at = static_cast<std::size_t>(source);
        if (source >= 0 && at < user.num_nodes()) of[at] = index;
      }
    }
  };
  for (std::size_t i = 0; i < prediction->layers.size(); ++i) mark(prediction->layers[i].nodes, i, layer_of);
  for (std::size_t i = 0; i < prediction->uncovered.size(); ++i) mark(prediction->uncovered[i].nodes, i, uncovered_of);
  graph["layer_of_node"] = std::move(layer_of);
  graph["uncovered_of_node"] = std::move(uncovered_of);
  return graph;
}

std::string HtmlReport(std::string_view kind, std::string_view title, const nlohmann::json& data,
                       const nlohmann::json& graphs) {
  std::string page;
  page.reserve(kReportStyle.size() + kReportScript.size() + 4096);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: inline styles and scripts only, no connections at all.
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">\n";
  page += "<title>" + EscapeHtml(title) + "</title>\n<style>\n";
  page += kReportStyle;
  page += "</style>\n</head>\n<body data-kind=\"" + EscapeHtml(kind) + "\">\n";
  page += "<header><h1>" + EscapeHtml(title) + "</h1><p id=\"subtitle\"></p></header>\n";
  page += "<noscript><p class=\"problem\">This report draws itself with JavaScript: enable it, or read the "
          "data in the page source (the same JSON as --format json).</p></noscript>\n";
  page += "<main id=\"report\"></main>\n";
  page += "<script type=\"application/json\" id=\"latte-data\">" + JsonForScript(data) + "</script>\n";
  page += "<script type=\"application/json\" id=\"latte-graphs\">" + JsonForScript(graphs) + "</script>\n";
  page += "<script>\n";
  page += kReportScript;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace latte
