#pragma once
// Pareto fronts of (latency, memory, drift) points, all minimized, and the 2-D hypervolume that
// measures how good a (latency, memory) front is (the area it dominates up to a reference point).
// Drift is 0 unless some op may run int8 (see pareto.h): then the front is three-dimensional.

#include <cstdint>
#include <span>
#include <vector>

namespace latte {

/// One evaluated assignment.
struct Solution {
  std::uint64_t id = 0;  // the assignment (search/encoding.h)
  double time_ms = 0;
  double memory_kb = 0;
  double drift = 0;  // the outputs' estimated distance from fp32's (1 - cosine)
};

/// True when `a` is no worse than `b` in every objective and better in at least one.
bool Dominates(const Solution& a, const Solution& b);

/// The solutions no other one dominates, by increasing time (then memory, drift, id). Of points
/// with equal objectives the lowest id is kept.
std::vector<Solution> ParetoFront(std::span<const Solution> solutions);

/// Area dominated by `front` and bounded by the reference point (ref_time, ref_memory); points
/// beyond the reference contribute nothing. `front` need not be sorted or non-dominated; drift is
/// not looked at.
double Hypervolume2D(std::span<const Solution> front, double ref_time_ms, double ref_memory_kb);

}  // namespace latte
