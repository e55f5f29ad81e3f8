// Interpolation in log space. Samples of one kind usually come from a grid (a profile's config
// space) with some points missing (failed or held out), so the predictor works on the grid of
// distinct values of each varying parameter:
// - a query whose every corner cell was measured gets multilinear interpolation of log latency
//   over log parameters (exact on measured points);
// - a missing corner is estimated along one axis from the nearest measured cells below and above
//   it (other coordinates equal), weighting the axes by 1 / (normalized gap)^2;
// - when no corner can be had (or the query lies between grid values on more than 6 axes), the
//   4 nearest samples in normalized log coordinates, weighted by 1 / distance^2.
// Parameters that always equal another (iw = ih on square grids) are folded into that axis, and
// parameters that never varied are constants; a query differing from either is flagged outside.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "predict/predictors.h"

namespace latte {
namespace {

constexpr int kMaxWalk = 16;  // cells searched along an axis for a missing corner's neighbours
constexpr std::size_t kMaxBracketed = 6;  // beyond 2^6 corners (each maybe estimated), nearest neighbours
constexpr std::size_t kNeighbours = 4;

std::int64_t PseudoParam(const Kernel& kernel, int threads, const std::string& name) {
  if (name == "threads") return threads;
  if (name == "dtype") return static_cast<std::int64_t>(kernel.dtype);
  return kernel.Param(name, 0);
}

std::vector<std::string> ParamNames(std::span<const TrainingSample> samples) {
  std::set<std::string> names;
  for (const TrainingSample& s : samples)
    for (const auto& [name, value] : s.kernel.params) names.insert(name);
  names.insert("threads");
  names.insert("dtype");
  return {names.begin(), names.end()};
}

}  // namespace

std::size_t InterpPredictor::CellHash::operator()(const Cell& cell) const {
  std::size_t h = 1469598103934665603ull;
  for (std::int32_t v : cell) h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ull;
  return h;
}

std::int64_t InterpPredictor::AxisValue(const Axis& axis, const Kernel& kernel, int threads) const {
  return PseudoParam(kernel, threads, axis.name);
}

Status InterpPredictor::Fit(std::span<const TrainingSample> samples) {
  if (samples.empty()) return InvalidInput("interp: no samples to fit");
  for (const TrainingSample& s : samples)
    if (!(s.p50_ms > 0)) return InvalidInput("interp: sample " + s.kernel.Key() + " has latency <= 0");
  axes_.clear();
  aliases_.clear();
  constants_.clear();
  kind_ = ModelKind(samples.front().kernel);
  per_work_ = true;
  for (const TrainingSample& s : samples)
    if (ModelKind(s.kernel) != kind_) return InvalidInput("interp: samples of two kinds, " + kind_ + " and " + ModelKind(s.kernel));
  std::vector<std::string> names = ParamNames(samples);
  std::vector<std::vector<std::int64_t>> columns;  // per name, per sample
  for (const std::string& name : names) {
    std::vector<std::int64_t> column;
    column.reserve(samples.size());
    for (const TrainingSample& s : samples) column.push_back(PseudoParam(s.kernel, s.threads, name));
    columns.push_back(std::move(column));
  }
  std::vector<std::size_t> axis_columns;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::set<std::int64_t> distinct(columns[i].begin(), columns[i].end());
    if (distinct.size() == 1) {
      constants_[names[i]] = *distinct.begin();
      continue;
    }
    bool aliased = false;
    for (std::size_t a = 0; a < axis_columns.size() && !aliased; ++a) {
      if (columns[axis_columns[a]] == columns[i]) {
        aliases_[names[i]] = axes_[a].name;
        aliased = true;
      }
    }
    if (aliased) continue;
    Axis axis;
    axis.name = names[i];
    axis.values.assign(distinct.begin(), distinct.end());
    axis_columns.push_back(i);
    axes_.push_back(std::move(axis));
  }
  // One point per distinct cell: the geometric mean of repeated measurements.
  std::map<std::vector<std::int64_t>, std::pair<double, int>> cells;
  for (std::size_t s = 0; s < samples.size(); ++s) {
    std::vector<std::int64_t> values;
    for (std::size_t c : axis_columns) values.push_back(columns[c][s]);
    auto& [sum, count] = cells[values];
    sum += std::log(samples[s].p50_ms);
    ++count;
  }
  point_values_.clear();
  point_ms_.clear();
  for (const auto& [values, acc] : cells) {
    point_values_.push_back(values);
    point_ms_.push_back(std::exp(acc.first / acc.second));
  }
  Index();
  return Status::Ok();
}

Kernel InterpPredictor::PointKernel(const Kernel& kind, const std::vector<std::int64_t>& values) const {
  Kernel kernel = kind;
  auto set = [&](const std::string& name, std::int64_t v) {
    if (name == "dtype") kernel.dtype = static_cast<DataType>(v);
    else if (name != "threads") kernel.params[name] = v;
  };
  for (const auto& [name, v] : constants_) set(name, v);
  for (std::size_t a = 0; a < axes_.size(); ++a) set(axes_[a].name, values[a]);
  for (const auto& [name, target] : aliases_)
    for (std::size_t a = 0; a < axes_.size(); ++a)
      if (axes_[a].name == target) set(name, values[a]);
  return kernel;
}

void InterpPredictor::Index() {
  axis_scale_.clear();
  for (Axis& axis : axes_) {
    axis.log = axis.values.front() > 0;
    axis.coords.clear();
    for (std::int64_t v : axis.values) axis.coords.push_back(axis.log ? std::log(static_cast<double>(v)) : double(v));
    double range = axis.coords.back() - axis.coords.front();
    axis_scale_.push_back(range > 0 ? 1 / range : 1);
  }
  cells_.clear();
  point_coords_.clear();
  point_log_.clear();
  Expected<Kernel> parsed = ParseModelKind(kind_);  // checked by Fit and FromJson
  const Kernel kind = parsed.ok() ? *parsed : Kernel{};
  for (std::size_t p = 0; p < point_values_.size(); ++p) {
    point_log_.push_back(std::log(point_ms_[p]) -
                         (per_work_ ? std::log(WorkScaleMs(PointKernel(kind, point_values_[p]), channel_tile_)) : 0.0));
    Cell cell(axes_.size());
    std::vector<double> coords(axes_.size());
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      auto it = std::lower_bound(axis.values.begin(), axis.values.end(), point_values_[p][a]);
      cell[a] = static_cast<std::int32_t>(it - axis.values.begin());
      coords[a] = (axis.coords[cell[a]] - axis.coords.front()) * axis_scale_[a];
    }
    cells_[cell] = point_log_[p];
    point_coords_.push_back(std::move(coords));
  }
}

bool InterpPredictor::Lookup(const Cell& cell, double& log_ms) const {
  auto it = cells_.find(cell);
  if (it == cells_.end()) return false;
  log_ms = it->second;
  return true;
}

bool InterpPredictor::EstimateCell(const Cell& cell, double& log_ms) const {
  double weight_sum = 0, value_sum = 0;
  Cell probe = cell;
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const Axis& axis = axes_[a];
    int n = static_cast<int>(axis.values.size());
    double lo_value = 0, hi_value = 0;
    int lo = -1, hi = -1;
    for (int i = cell[a] - 1; i >= 0 && i >= cell[a] - kMaxWalk; --i) {
      probe[a] = i;
      if (Lookup(probe, lo_value)) {
        lo = i;
        break;
      }
    }
    for (int i = cell[a] + 1; lo >= 0 && i < n && i <= cell[a] + kMaxWalk; ++i) {
      probe[a] = i;
      if (Lookup(probe, hi_value)) {
        hi = i;
        break;
      }
    }
    probe[a] = cell[a];
    if (lo < 0 || hi < 0) continue;
    double gap = (axis.coords[hi] - axis.coords[lo]) * axis_scale_[a];
    double t = (axis.coords[cell[a]] - axis.coords[lo]) / (axis.coords[hi] - axis.coords[lo]);
    double w = 1 / (gap * gap);
    weight_sum += w;
    value_sum += w * ((1 - t) * lo_value + t * hi_value);
  }
  if (weight_sum <= 0) return false;
  log_ms = value_sum / weight_sum;
  return true;
}

double InterpPredictor::NearestNeighbours(const std::vector<double>& point) const {
  std::vector<std::pair<double, std::size_t>> best;  // (squared distance, point), ascending
  for (std::size_t p = 0; p < point_coords_.size(); ++p) {
    double d = 0;
    for (std::size_t a = 0; a < point.size(); ++a) {
      double diff = point[a] - point_coords_[p][a];
      d += diff * diff;
    }
    if (best.size() == kNeighbours && d >= best.back().first) continue;
    if (best.size() == kNeighbours) best.pop_back();
    best.insert(std::upper_bound(best.begin(), best.end(), std::make_pair(d, p)), {d, p});
  }
  if (best.front().first == 0) return point_log_[best.front().second];
  double weight_sum = 0, value_sum = 0;
  for (const auto& [d, p] : best) {
    weight_sum += 1 / d;
    value_sum += point_log_[p] / d;
  }
  return value_sum / weight_sum;
}

bool InterpPredictor::Covers(const Kernel& kernel, int threads) const {
  for (const auto& [name, value] : constants_)
    if (PseudoParam(kernel, threads, name) != value) return false;
  for (const auto& [name, target] : aliases_)
    if (PseudoParam(kernel, threads, name) != PseudoParam(kernel, threads, target)) return false;
  for (const Axis& axis : axes_) {
    const std::int64_t q = AxisValue(axis, kernel, threads);
    if (q < axis.values.front() || q > axis.values.back()) return false;
  }
  return true;
}

Expected<Prediction> InterpPredictor::Predict(const Kernel& kernel, int threads) const {
  if (point_ms_.empty()) return Internal("interp: predictor used before Fit");
  Prediction prediction;
  prediction.source = PredictionSource::kInterpolation;
  prediction.outside_training_range = !Covers(kernel, threads);

  Cell lo(axes_.size()), hi(axes_.size());
  std::vector<double> t(axes_.size(), 0);
  std::vector<std::size_t> bracketed;
  std::vector<double> point(axes_.size());
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const Axis& axis = axes_[a];
    std::int64_t q = AxisValue(axis, kernel, threads);
    auto it = std::lower_bound(axis.values.begin(), axis.values.end(), q);
    std::int32_t i = static_cast<std::int32_t>(it - axis.values.begin());
    if (it == axis.values.end()) {  // beyond the grid: clamped (Covers says no)
      lo[a] = hi[a] = i - 1;
    } else if (*it == q) {
      lo[a] = hi[a] = i;
    } else if (i == 0) {
      lo[a] = hi[a] = 0;
    } else {
      lo[a] = i - 1;
      hi[a] = i;
      double c = axis.log ? std::log(static_cast<double>(q)) : static_cast<double>(q);
      t[a] = (c - axis.coords[lo[a]]) / (axis.coords[hi[a]] - axis.coords[lo[a]]);
      bracketed.push_back(a);
    }
    double c = axis.coords[lo[a]] + t[a] * (axis.coords[hi[a]] - axis.coords[lo[a]]);
    point[a] = (c - axis.coords.front()) * axis_scale_[a];
  }

  double log_ms = 0;
  bool have = false;
  if (bracketed.size() <= kMaxBracketed) {
    double weight_sum = 0, value_sum = 0;
    Cell corner = lo;
    for (std::size_t mask = 0; mask < (std::size_t{1} << bracketed.size()); ++mask) {
      double w = 1;
      for (std::size_t b = 0; b < bracketed.size(); ++b) {
        std::size_t a = bracketed[b];
        bool upper = (mask >> b) & 1;
        corner[a] = upper ? hi[a] : lo[a];
        w *= upper ? t[a] : 1 - t[a];
      }
      if (w <= 0) continue;
      double value = 0;
      if (Lookup(corner, value) || EstimateCell(corner, value)) {
        weight_sum += w;
        value_sum += w * value;
      }
    }
    if (weight_sum > 0) {
      log_ms = value_sum / weight_sum;
      have = true;
    }
  }
  if (!have) log_ms = NearestNeighbours(point);
  if (per_work_) log_ms += std::log(WorkScaleMs(kernel, channel_tile_));
  prediction.ms = std::exp(log_ms);
  prediction.spread_ms = prediction.ms * relative_spread_;
  return prediction;
}

nlohmann::json InterpPredictor::ToJson() const {
  nlohmann::json axes = nlohmann::json::array();
  for (const Axis& axis : axes_) axes.push_back({{"name", axis.name}, {"values", axis.values}});
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t p = 0; p < point_ms_.size(); ++p) {
    nlohmann::json row = nlohmann::json::array();
    for (std::int64_t v : point_values_[p]) row.push_back(v);
    row.push_back(point_ms_[p]);
    points.push_back(std::move(row));
  }
  nlohmann::json out = {{"axes", axes},     {"aliases", aliases_},
                        {"constants", constants_}, {"points", points},
                        {"relative_spread", relative_spread_}, {"target", per_work_ ? "log_ms_per_work" : "log_ms"}};
  if (per_work_) out["kind"] = kind_;
  if (per_work_) out["channel_tile"] = channel_tile_;
  return out;
}

Status InterpPredictor::FromJson(const nlohmann::json& json) {
  constexpr std::int64_t kMinInt64 = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
  try {
    axes_.clear();
    for (const nlohmann::json& a : json.at("axes")) {
      Axis axis;
      axis.name = a.at("name").get<std::string>();
      LATTE_ASSIGN_OR_RETURN(axis.values, JsonIntegers(a.at("values"), "interp: axis '" + axis.name + "' values",
                                                       kMinInt64, kMaxInt64));
      if (axis.values.size() < 2 || !std::is_sorted(axis.values.begin(), axis.values.end()))
        return InvalidInput("interp: axis '" + axis.name + "' needs two or more sorted values");
      axes_.push_back(std::move(axis));
    }
    aliases_ = json.at("aliases").get<std::map<std::string, std::string>>();
    constants_.clear();
    for (const auto& [name, value] : json.at("constants").items()) {
      LATTE_ASSIGN_OR_RETURN(constants_[name], JsonInteger(value, "interp: constant '" + name + "'", kMinInt64, kMaxInt64));
    }
    Expected<double> spread = JsonNonNegative(json, "relative_spread");
    if (!spread.ok()) return spread.status().WithContext("interp");
    relative_spread_ = *spread;
    // Packs written before the target was recorded interpolate log(ms).
    const std::string target = json.value("target", std::string("log_ms"));
    if (target != "log_ms" && target != "log_ms_per_work")
      return InvalidInput("interp: unknown target '" + target + "' (log_ms or log_ms_per_work)");
    per_work_ = target == "log_ms_per_work";
    kind_.clear();
    Expected<int> tile = JsonChannelTile(json);
    if (!tile.ok()) return tile.status().WithContext("interp");
    channel_tile_ = *tile;
    if (per_work_) {
      kind_ = json.at("kind").get<std::string>();
      if (Expected<Kernel> k = ParseModelKind(kind_); !k.ok()) return InvalidInput("interp: kind: " + k.status().message());
    }
    point_values_.clear();
    point_ms_.clear();
    for (const nlohmann::json& row : json.at("points")) {
      if (!row.is_array() || row.size() != axes_.size() + 1) return InvalidInput("interp: a point has the wrong size");
      std::vector<std::int64_t> values;
      for (std::size_t a = 0; a < axes_.size(); ++a) {
        LATTE_ASSIGN_OR_RETURN(const std::int64_t value, JsonInteger(row[a], "interp: a point's '" + axes_[a].name + "'",
                                                                     kMinInt64, kMaxInt64));
        values.push_back(value);
        if (!std::binary_search(axes_[a].values.begin(), axes_[a].values.end(), values.back()))
          return InvalidInput("interp: a point's '" + axes_[a].name + "' is not one of the axis values");
      }
      double ms = row[axes_.size()].get<double>();
      if (!(ms > 0) || !std::isfinite(ms)) return InvalidInput("interp: a point's latency is not a number > 0");
      point_values_.push_back(std::move(values));
      point_ms_.push_back(ms);
    }
    if (point_ms_.empty()) return InvalidInput("interp: no points");
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput("interp: " + JsonErrorText(e));
  }
  Index();
  return Status::Ok();
}

}  // namespace latte
