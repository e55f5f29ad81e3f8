#include "search/pareto_front.h"

#include <algorithm>
#include <tuple>

namespace latte {

bool Dominates(const Solution& a, const Solution& b) {
  return a.time_ms <= b.time_ms && a.memory_kb <= b.memory_kb && a.drift <= b.drift &&
         (a.time_ms < b.time_ms || a.memory_kb < b.memory_kb || a.drift < b.drift);
}

std::vector<Solution> ParetoFront(std::span<const Solution> solutions) {
  std::vector<Solution> sorted(solutions.begin(), solutions.end());
  std::sort(sorted.begin(), sorted.end(), [](const Solution& a, const Solution& b) {
    return std::tie(a.time_ms, a.memory_kb, a.drift, a.id) < std::tie(b.time_ms, b.memory_kb, b.drift, b.id);
  });
  // In that order only a point already kept can dominate a later one, or equal it (then the
  // earlier, lower id stays).
  std::vector<Solution> front;
  for (const Solution& s : sorted) {
    const bool covered = std::any_of(front.begin(), front.end(), [&s](const Solution& f) {
      return f.time_ms <= s.time_ms && f.memory_kb <= s.memory_kb && f.drift <= s.drift;
    });
    if (!covered) front.push_back(s);
  }
  return front;
}

double Hypervolume2D(std::span<const Solution> front, double ref_time_ms, double ref_memory_kb) {
  std::vector<Solution> points = ParetoFront(front);
  double area = 0;
  double memory_ceiling = ref_memory_kb;
  for (const Solution& p : points) {  // by increasing time, decreasing memory
    if (p.time_ms >= ref_time_ms || p.memory_kb >= memory_ceiling) continue;
    area += (ref_time_ms - p.time_ms) * (memory_ceiling - p.memory_kb);
    memory_ceiling = p.memory_kb;
  }
  return area;
}

}  // namespace latte
