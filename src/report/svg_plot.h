#pragma once
// Small standalone SVG charts (no scripts, no external fonts): what --plot writes.

#include <string>
#include <vector>

namespace latte {

struct ScatterSeries {
  std::string label;
  std::string color;  // CSS colour
  std::vector<double> x, y;
  std::vector<std::string> titles;  // hover text per point (may be empty)
  bool connect = false;             // draw a line through the points in order (a front)
};

struct ScatterPlot {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  /// Draws y = x and a ±band (0.10 = ±10%) when > 0 — for predicted-vs-measured plots.
  bool identity_line = false;
  double band = 0;
  std::vector<ScatterSeries> series;
  /// The SVG document. Points that cannot be placed (non-finite, ≤ 0 on a log axis) are left out
  /// and counted in a note on the chart.
  std::string Render() const;
};

}  // namespace latte
