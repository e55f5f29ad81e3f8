#include "search/pareto_front.h"

#include <algorithm>
#include <tuple>

namespace latte {

bool Dominates(const Solution& a, const Solution& b) {
  return a.time_ms <= b.time_ms && a.memory_kb <= b.memory_kb &&
         (a.time_ms < b.time_ms || a.memory_kb < b.memory_kb);
}

std::vector<Solution> ParetoFront(std::span<const Solution> solutions) {
  std::vector<Solution> sorted(solutions.begin(), solutions.end());
  std::sort(sorted.begin(), sorted.end(), [](const Solution& a, const Solution& b) {
    return std::tie(a.time_ms, a.memory_kb, a.id) < std::tie(b.time_ms, b.memory_kb, b.id);
  });
  // Sweep by increasing time: a point is on the front when its memory is below every memory
  // seen so far (a faster or equally fast point with less or equal memory dominates it).
  std::vector<Solution> front;
  for (const Solution& s : sorted) {
    if (front.empty() || s.memory_kb < front.back().memory_kb) front.push_back(s);
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
