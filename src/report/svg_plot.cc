#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/html_report.h"

namespace latte {
namespace {

constexpr double kWidth = 640, kHeight = 480, kLeft = 80, kRight = 20, kTop = 40, kBottom = 60;

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  double Map(double v) const { return log ? std::log10(v) : v; }
  double Fraction(double v) const { return (Map(v) - lo) / (hi - lo); }
  bool Placeable(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

// Round tick values: powers of ten on log axes, 1-2-5 steps otherwise.
std::vector<double> Ticks(const Axis& axis) {
  std::vector<double> ticks;
  if (axis.log) {
    for (double e = std::floor(axis.lo); e <= std::ceil(axis.hi); ++e)
      if (e >= axis.lo - 1e-9 && e <= axis.hi + 1e-9) ticks.push_back(std::pow(10.0, e));
    return ticks;
  }
  double span = axis.hi - axis.lo, step = std::pow(10.0, std::floor(std::log10(span / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * m) <= 6) {
      step *= m;
      break;
    }
  for (double v = std::ceil(axis.lo / step) * step; v <= axis.hi + 1e-9 * span; v += step) ticks.push_back(v);
  return ticks;
}

std::string TickLabel(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string ScatterPlot::Render() const {
  Axis ax{log_x}, ay{log_y};
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  std::size_t dropped = 0;
  for (const ScatterSeries& s : series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!ax.Placeable(s.x[i]) || !ay.Placeable(s.y[i])) {
        ++dropped;
        continue;
      }
      xmin = std::min(xmin, ax.Map(s.x[i])), xmax = std::max(xmax, ax.Map(s.x[i]));
      ymin = std::min(ymin, ay.Map(s.y[i])), ymax = std::max(ymax, ay.Map(s.y[i]));
    }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (identity_line) {  // same range on both axes so y = x is the diagonal
    xmin = ymin = std::min(xmin, ymin);
    xmax = ymax = std::max(xmax, ymax);
  }
  auto pad = [](double& lo, double& hi, bool log) {
    double span = hi - lo;
    if (span <= 0) span = log ? 1 : std::max(1.0, std::abs(lo));
    lo -= span * 0.05, hi += span * 0.05;
  };
  pad(xmin, xmax, log_x), pad(ymin, ymax, log_y);
  ax.lo = xmin, ax.hi = xmax, ay.lo = ymin, ay.hi = ymax;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + ax.Fraction(v) * pw; };
  auto py = [&](double v) { return kTop + (1 - ay.Fraction(v)) * ph; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n", kWidth / 2,
                     EscapeHtml(title));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft, kTop,
                     pw, ph);
  for (double t : Ticks(ax)) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       px(t), kTop, kTop + ph, kTop + ph + 16, TickLabel(t));
  }
  for (double t : Ticks(ay)) {
    svg += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{0:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{4}</text>\n",
                       py(t), kLeft, kLeft + pw, kLeft - 6, TickLabel(t));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + pw / 2, kHeight - 18,
                     EscapeHtml(x_label));
  svg += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">{1}</text>\n",
                     kTop + ph / 2, EscapeHtml(y_label));
  if (identity_line) {
    auto line = [&](double factor, const char* dash) {
      double a = log_x ? std::pow(10.0, ax.lo) : ax.lo, b = log_x ? std::pow(10.0, ax.hi) : ax.hi;
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\"{}/>\n", px(a),
                         py(a * factor), px(b), py(b * factor), dash);
    };
    line(1.0, "");
    if (band > 0) line(1 + band, " stroke-dasharray=\"4 4\""), line(1 - band, " stroke-dasharray=\"4 4\"");
  }
  svg += fmt::format("<clipPath id=\"plot\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\n", kLeft,
                     kTop, pw, ph);
  double legend_y = kTop + 14;
  for (const ScatterSeries& s : series) {
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!ax.Placeable(s.x[i]) || !ay.Placeable(s.y[i])) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.75\">", px(s.x[i]),
                         py(s.y[i]), EscapeHtml(s.color));
      if (i < s.titles.size()) svg += "<title>" + EscapeHtml(s.titles[i]) + "</title>";
      svg += "</circle>\n";
    }
    if (s.connect && !points.empty()) {
      svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" clip-path=\"url(#plot)\"/>\n", points,
                         EscapeHtml(s.color));
    }
    svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                       "dominant-baseline=\"middle\">{}</text>\n",
                       kLeft + 12, legend_y, EscapeHtml(s.color), kLeft + 22, legend_y, EscapeHtml(s.label));
    legend_y += 16;
  }
  if (dropped > 0) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#a00\">{} point(s) not drawn (not finite or "
                       "≤ 0 on a log axis)</text>\n",
                       kLeft + pw, kHeight - 4, dropped);
  }
  return svg + "</svg>\n";
}

}  // namespace latte
