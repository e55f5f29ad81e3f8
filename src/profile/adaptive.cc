#include "profile/adaptive.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

namespace latte {
namespace {

std::vector<double> Features(const Kernel& kernel, const std::vector<std::string>& names) {
  std::vector<double> f;
  for (const std::string& name : names) f.push_back(std::log1p(static_cast<double>(std::max<std::int64_t>(0, kernel.Param(name)))));
  return f;
}

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(d);
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

std::vector<double> LeaveOneOutErrors(const std::vector<MeasuredPoint>& points, std::size_t k) {
  std::set<std::string> name_set;
  for (const MeasuredPoint& p : points)
    for (const auto& [name, value] : p.kernel.params) name_set.insert(name);
  const std::vector<std::string> names(name_set.begin(), name_set.end());
  std::vector<std::vector<double>> features;
  for (const MeasuredPoint& p : points) features.push_back(Features(p.kernel, names));
  std::vector<double> errors(points.size(), 0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<std::pair<double, std::size_t>> by_distance;
    for (std::size_t j = 0; j < points.size(); ++j) {
      if (j != i && points[j].p50_us > 0) by_distance.push_back({Distance(features[i], features[j]), j});
    }
    if (by_distance.empty() || points[i].p50_us <= 0) continue;
    std::sort(by_distance.begin(), by_distance.end());
    double weight_sum = 0, log_sum = 0;
    for (std::size_t n = 0; n < std::min(k, by_distance.size()); ++n) {
      const double w = 1 / (by_distance[n].first + 1e-9);
      weight_sum += w;
      log_sum += w * std::log(points[by_distance[n].second].p50_us);
    }
    errors[i] = std::fabs(log_sum / weight_sum - std::log(points[i].p50_us));
  }
  return errors;
}

std::vector<Kernel> AdaptiveCandidates(const std::vector<MeasuredPoint>& points, const std::vector<double>& errors,
                                       const std::set<std::string>& exclude, std::size_t count) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (errors[a] != errors[b]) return errors[a] > errors[b];
    return points[a].kernel.Key() < points[b].kernel.Key();
  });
  std::vector<Kernel> out;
  std::set<std::string> taken = exclude;
  std::vector<Kernel> second_ring;
  auto take = [&](const Kernel& k) {
    if (out.size() < count && taken.insert(k.Key()).second) out.push_back(k);
  };
  for (std::size_t i : order) {
    for (const Kernel& n : NeighbourKernels(points[i].kernel)) {
      take(n);
      second_ring.push_back(n);
    }
  }
  for (const Kernel& n : second_ring) {
    if (out.size() >= count) break;
    for (const Kernel& nn : NeighbourKernels(n)) take(nn);
  }
  return out;
}

Expected<Sample> AdaptiveSample(const Store& store, const SamplerConfig& config, MeasurementFilter filter) {
  if (config.kinds.empty()) return InvalidInput("no kernel kinds to sample (--kernels)");
  if (config.max_kernels == 0) return InvalidInput("the adaptive strategy needs a count (--max-kernels)");
  Sample sample;
  std::set<std::string> seen;
  for (std::size_t index = 0; index < config.kinds.size(); ++index) {
    LATTE_ASSIGN_OR_RETURN(Kernel kind, ParseKindAlias(config.kinds[index]));
    filter.kind = kind.Kind();
    filter.campaign.reset();
    LATTE_ASSIGN_OR_RETURN(std::vector<StoredMeasurement> rows, store.QueryMeasurements(filter));
    LATTE_ASSIGN_OR_RETURN(auto unsupported, store.QueryUnsupported(filter));
    // The latest measurement of each kernel (several campaigns may hold one).
    std::map<std::string, MeasuredPoint> latest;
    for (const StoredMeasurement& row : rows) {
      if (std::isfinite(row.stats.p50) && row.stats.p50 > 0) latest[row.kernel.Key()] = {row.kernel, row.stats.p50};
    }
    if (latest.size() < 4 && config.skip_sparse_kinds) {
      sample.notes.push_back(fmt::format("{}: {} measurements, too few to fit (4 needed): skipped", kind.Kind(),
                                         latest.size()));
      continue;
    }
    if (latest.size() < 4) {
      return InvalidInput(fmt::format("the adaptive strategy needs at least 4 measurements of {} on this backend and "
                                      "device in the store (found {}): run a grid or random profile first",
                                      kind.Kind(), latest.size()));
    }
    std::vector<MeasuredPoint> points;
    std::set<std::string> exclude = seen;
    for (const auto& [key, point] : latest) {
      points.push_back(point);
      exclude.insert(key);
    }
    for (const auto& [kernel, why] : unsupported) exclude.insert(kernel.Key());
    const std::vector<double> errors = LeaveOneOutErrors(points);
    const std::size_t share = config.max_kernels / config.kinds.size() + (index < config.max_kernels % config.kinds.size());
    const std::vector<Kernel> picked = AdaptiveCandidates(points, errors, exclude, share);
    for (const Kernel& k : picked) {
      seen.insert(k.Key());
      sample.kernels.push_back(k);
    }
    std::vector<double> relative;
    for (double e : errors) relative.push_back(std::expm1(e) * 100);
    sample.notes.push_back(fmt::format("{}: {} measured, leave-one-out error median {:.1f}%, worst {:.1f}%; {} new kernels "
                                       "around the worst-fitted",
                                       kind.Kind(), points.size(), MedianOf(relative),
                                       *std::max_element(relative.begin(), relative.end()), picked.size()));
  }
  return sample;
}

}  // namespace latte
