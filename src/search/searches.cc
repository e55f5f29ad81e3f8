#include "search/searches.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>

namespace latte {
namespace {

// Evaluates each assignment once, remembering the order of first evaluation: the n-th distinct
// assignment evaluated gets serial id n (B^k may not fit in an integer; the digits are the key).
class Evaluator {
 public:
  Evaluator(const AssignmentCodec& codec, const Objective& objective) : codec_(codec), objective_(objective) {}

  Expected<Solution> Evaluate(const std::vector<int>& digits) {
    if (auto it = cache_.find(digits); it != cache_.end()) return order_[it->second];
    if (digits.size() != codec_.num_digits()) return InvalidInput("an assignment with the wrong number of digits");
    const std::uint64_t id = order_.size();
    LATTE_ASSIGN_OR_RETURN(Solution solution, objective_(id, digits));
    solution.id = id;
    cache_.emplace(digits, static_cast<std::size_t>(id));
    order_.push_back(solution);
    digits_.push_back(digits);
    return solution;
  }
  bool Seen(const std::vector<int>& digits) const { return cache_.count(digits) != 0; }
  std::size_t size() const { return order_.size(); }
  const std::vector<Solution>& order() const { return order_; }
  const std::vector<int>& digits(std::uint64_t id) const { return digits_[static_cast<std::size_t>(id)]; }
  std::vector<std::vector<int>> TakeDigits() { return std::move(digits_); }

 private:
  const AssignmentCodec& codec_;
  const Objective& objective_;
  std::map<std::vector<int>, std::size_t> cache_;
  std::vector<Solution> order_;
  std::vector<std::vector<int>> digits_;
};

// Raw engine output only (no std:: distributions): the same draws on every standard library.
std::uint64_t Below(std::mt19937_64& rng, std::uint64_t n) { return n <= 1 ? 0 : rng() % n; }
double Unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// An assignment drawn uniformly: each digit uniformly (the same as a uniform id in [0, B^k)).
std::vector<int> RandomDigits(std::mt19937_64& rng, const AssignmentCodec& codec) {
  std::vector<int> digits(codec.num_digits());
  for (int& d : digits) d = static_cast<int>(Below(rng, codec.num_backends()));
  return digits;
}

Status BruteForce(const AssignmentCodec& codec, Evaluator& eval, const SearchOptions& options) {
  if (!codec.fits() || codec.Count() > options.brute_limit) {
    return InvalidInput("brute force would run " + codec.CountText() + " assignments (" +
                        std::to_string(codec.num_backends()) + "^" + std::to_string(codec.num_digits()) +
                        "), more than the limit of " + std::to_string(options.brute_limit) +
                        ": use --search random, local or nsga2");
  }
  for (std::uint64_t id = 0; id < codec.Count(); ++id) {
    LATTE_ASSIGN_OR_RETURN(std::vector<int> digits, codec.Decode(id));
    LATTE_RETURN_IF_ERROR(eval.Evaluate(digits));
  }
  return Status::Ok();
}

Status RandomSampling(const AssignmentCodec& codec, Evaluator& eval, const SearchOptions& options) {
  std::mt19937_64 rng(options.seed);
  const std::uint64_t want = std::min<std::uint64_t>(options.evaluations, codec.Count());
  for (std::uint64_t draws = 0; eval.size() < want && draws < 20 * want + 100; ++draws) {
    LATTE_RETURN_IF_ERROR(eval.Evaluate(RandomDigits(rng, codec)));
  }
  return Status::Ok();
}

// From a random start, evaluate every assignment one digit away from each point of the current
// front; when the front's neighbourhoods are exhausted, restart from a random unseen assignment.
Status LocalSearch(const AssignmentCodec& codec, Evaluator& eval, const SearchOptions& options) {
  std::mt19937_64 rng(options.seed);
  const std::uint64_t want = std::min<std::uint64_t>(options.evaluations, codec.Count());
  std::map<std::uint64_t, bool> expanded;
  LATTE_RETURN_IF_ERROR(eval.Evaluate(RandomDigits(rng, codec)));
  while (eval.size() < want) {
    std::vector<Solution> front = ParetoFront(eval.order());
    const Solution* next = nullptr;
    for (const Solution& s : front) {
      if (!expanded[s.id]) {
        next = &s;
        break;
      }
    }
    if (next == nullptr) {  // a local optimum: restart
      std::vector<int> start = RandomDigits(rng, codec);
      for (int tries = 0; eval.Seen(start) && tries < 1000; ++tries) start = RandomDigits(rng, codec);
      if (eval.Seen(start)) break;
      LATTE_RETURN_IF_ERROR(eval.Evaluate(start));
      continue;
    }
    expanded[next->id] = true;
    std::vector<int> digits = eval.digits(next->id);
    for (std::size_t i = 0; i < digits.size() && eval.size() < want; ++i) {
      const int original = digits[i];
      for (std::size_t b = 0; b < codec.num_backends() && eval.size() < want; ++b) {
        if (static_cast<int>(b) == original) continue;
        digits[i] = static_cast<int>(b);
        LATTE_RETURN_IF_ERROR(eval.Evaluate(digits));
      }
      digits[i] = original;
    }
  }
  return Status::Ok();
}

// NSGA-II: non-dominated sorting into ranks, crowding distance within a rank, binary tournament,
// uniform crossover, per-digit mutation; parents and offspring compete for the next population.
struct Member {
  std::vector<int> digits;
  Solution solution;
  int rank = 0;
  double crowding = 0;
};

void RankAndCrowd(std::vector<Member>& members) {
  const std::size_t n = members.size();
  std::vector<std::vector<std::size_t>> dominated(n);
  std::vector<int> dominators(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (Dominates(members[i].solution, members[j].solution)) dominated[i].push_back(j);
      else if (Dominates(members[j].solution, members[i].solution)) ++dominators[i];
    }
  }
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i)
    if (dominators[i] == 0) current.push_back(i);
  for (int rank = 0; !current.empty(); ++rank) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      members[i].rank = rank;
      members[i].crowding = 0;
      for (std::size_t j : dominated[i])
        if (--dominators[j] == 0) next.push_back(j);
    }
    for (int objective = 0; objective < 3; ++objective) {
      auto value = [&](std::size_t i) {
        const Solution& s = members[i].solution;
        return objective == 0 ? s.time_ms : objective == 1 ? s.memory_kb : s.drift;
      };
      std::vector<std::size_t> sorted = current;
      std::sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
        return value(a) != value(b) ? value(a) < value(b) : members[a].solution.id < members[b].solution.id;
      });
      const double span = value(sorted.back()) - value(sorted.front());
      if (objective == 2 && span <= 0) continue;  // no op may run int8: two objectives, as they were
      members[sorted.front()].crowding = members[sorted.back()].crowding = std::numeric_limits<double>::infinity();
      if (span <= 0) continue;
      for (std::size_t k = 1; k + 1 < sorted.size(); ++k)
        members[sorted[k]].crowding += (value(sorted[k + 1]) - value(sorted[k - 1])) / span;
    }
    current = std::move(next);
  }
}

bool Better(const Member& a, const Member& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  if (a.crowding != b.crowding) return a.crowding > b.crowding;
  return a.solution.id < b.solution.id;
}

Status Nsga2(const AssignmentCodec& codec, Evaluator& eval, const SearchOptions& options) {
  if (options.population < 4) return InvalidInput("NSGA-II needs a population of at least 4");
  std::mt19937_64 rng(options.seed);
  const std::size_t k = codec.num_digits();
  const double mutation = options.mutation > 0 ? options.mutation : 1.0 / static_cast<double>(k);
  auto make = [&](std::vector<int> digits) -> Expected<Member> {
    LATTE_ASSIGN_OR_RETURN(Solution s, eval.Evaluate(digits));
    return Member{std::move(digits), s};
  };
  std::vector<Member> population;
  for (std::size_t i = 0; i < options.population; ++i) {
    LATTE_ASSIGN_OR_RETURN(Member m, make(RandomDigits(rng, codec)));
    population.push_back(std::move(m));
  }
  RankAndCrowd(population);
  for (std::size_t generation = 0; generation < options.generations; ++generation) {
    auto tournament = [&]() -> const Member& {
      const Member& a = population[Below(rng, population.size())];
      const Member& b = population[Below(rng, population.size())];
      return Better(a, b) ? a : b;
    };
    std::vector<Member> combined = population;
    for (std::size_t i = 0; i < options.population; ++i) {
      const Member& mother = tournament();
      const Member& father = tournament();
      std::vector<int> child(k);
      for (std::size_t d = 0; d < k; ++d) {
        child[d] = (rng() & 1) ? mother.digits[d] : father.digits[d];
        if (Unit(rng) < mutation && codec.num_backends() > 1) {
          // Another backend than the current one, uniformly.
          int other = static_cast<int>(Below(rng, codec.num_backends() - 1));
          child[d] = other >= child[d] ? other + 1 : other;
        }
      }
      LATTE_ASSIGN_OR_RETURN(Member m, make(std::move(child)));
      combined.push_back(std::move(m));
    }
    RankAndCrowd(combined);
    std::sort(combined.begin(), combined.end(), Better);
    // Distinct assignments survive (duplicates would crowd out the front's spread).
    population.clear();
    std::map<std::uint64_t, bool> kept;
    for (Member& m : combined) {
      if (population.size() == options.population) break;
      if (kept[m.solution.id]) continue;
      kept[m.solution.id] = true;
      population.push_back(std::move(m));
    }
    RankAndCrowd(population);
  }
  return Status::Ok();
}

}  // namespace

Expected<SearchResult> SearchAssignments(const AssignmentCodec& codec, const Objective& objective,
                                         const SearchOptions& options) {
  SearchResult result;
  result.method = options.method;
  if (result.method == "auto") result.method = codec.fits() && codec.Count() <= options.brute_limit ? "brute" : "nsga2";
  Evaluator eval(codec, objective);
  Status status;
  if (result.method == "brute") status = BruteForce(codec, eval, options);
  else if (result.method == "random") status = RandomSampling(codec, eval, options);
  else if (result.method == "local") status = LocalSearch(codec, eval, options);
  else if (result.method == "nsga2") status = Nsga2(codec, eval, options);
  else return InvalidInput("unknown search '" + options.method + "' (auto, brute, random, local, nsga2)");
  LATTE_RETURN_IF_ERROR(status);
  result.evaluated = eval.order();
  result.digits = eval.TakeDigits();
  result.front = ParetoFront(result.evaluated);
  return result;
}

}  // namespace latte
