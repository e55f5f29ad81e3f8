#pragma once
// Searches over backend assignments (ids of an AssignmentCodec) for the (latency, memory) Pareto
// front: brute force, random sampling, Hamming-neighbourhood local search and NSGA-II. Each
// takes the objective as a function, evaluates every assignment at most once (a cache keyed by
// its digits), is deterministic under its seed, and returns every solution it evaluated, numbered
// in evaluation order; ParetoFront() of those is its front.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "search/encoding.h"
#include "search/pareto_front.h"

namespace latte {

/// Time and memory of one assignment, given its digits. `id` is the search's serial number for
/// it (the n-th distinct assignment evaluated; the search fills it in the Solution).
using Objective = std::function<Expected<Solution>(std::uint64_t id, const std::vector<int>& digits)>;

struct SearchOptions {
  std::string method = "auto";       // auto | brute | random | local | nsga2
  std::uint64_t seed = 0;
  std::uint64_t brute_limit = 1 << 16;  // auto: brute force up to this many assignments
  std::size_t evaluations = 2000;     // random, local: at most this many distinct evaluations
  std::size_t population = 40;        // nsga2
  std::size_t generations = 50;       // nsga2
  double mutation = 0;                // nsga2: per-digit probability; 0 = 1 / digits
};

struct SearchResult {
  std::string method;                 // the one that ran (auto resolved)
  std::vector<Solution> evaluated;    // every distinct assignment evaluated; id = its index here
  std::vector<std::vector<int>> digits;  // per evaluated id: the assignment's digits
  std::vector<Solution> front;        // ParetoFront(evaluated)
};

/// "auto" is brute force when B^k <= brute_limit, NSGA-II otherwise. Brute force beyond the
/// limit is an error saying how many assignments there are. A failing objective stops the search.
Expected<SearchResult> SearchAssignments(const AssignmentCodec& codec, const Objective& objective,
                                         const SearchOptions& options);

}  // namespace latte
