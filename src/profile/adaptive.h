#pragma once
// The adaptive sampler: more samples where the current fit is worst. The fit is a k-nearest-
// neighbour interpolation of log latency over the log of a kernel's params (the profile layer does
// not depend on predict/); each measured kernel's leave-one-out error says how well its region is
// covered, and new kernels are drawn from the neighbourhoods (space.h) of the worst-covered ones.
// Each adaptive run is one round: it reads what the store holds for the backend and device, and
// never picks a kernel measured or found unsupported there before.

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "db/store.h"
#include "ir/kernel.h"
#include "profile/space.h"

namespace latte {

/// A measured kernel of one kind and its median.
struct MeasuredPoint {
  Kernel kernel;
  double p50_us = 0;
};

/// For each point, |ln(predicted) − ln(measured)| where predicted comes from the `k` nearest other
/// points (inverse-distance weights, distance over ln(1 + param) of every param).
std::vector<double> LeaveOneOutErrors(const std::vector<MeasuredPoint>& points, std::size_t k = 3);

/// Up to `count` new kernels: the neighbourhoods of the points in decreasing order of error,
/// then (if still short) the neighbours of those neighbours; keys in `exclude` and duplicates
/// skipped. Deterministic (ties broken by key).
std::vector<Kernel> AdaptiveCandidates(const std::vector<MeasuredPoint>& points, const std::vector<double>& errors,
                                       const std::set<std::string>& exclude, std::size_t count);

/// The adaptive sample for `config` (kinds, max_kernels split evenly across them) from what
/// `store` holds under `filter` (backend, threads, precision, device; the kind is set per kind).
/// Fails for a kind with fewer than 4 measurements there, saying to run a grid or random profile first.
Expected<Sample> AdaptiveSample(const Store& store, const SamplerConfig& config, MeasurementFilter filter);

}  // namespace latte
