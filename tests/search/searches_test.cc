#include "search/searches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace latte {
namespace {

// A synthetic model: per op and backend a time and a weight size, plus a conversion (time and a
// buffer) wherever two consecutive ops run on different backends. Fast and small pull apart.
struct Synthetic {
  std::size_t ops, backends;
  std::vector<std::vector<double>> time, memory;
  Synthetic(std::size_t k, std::size_t b, unsigned seed) : ops(k), backends(b) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(1.0, 10.0);
    time.assign(k, std::vector<double>(b));
    memory.assign(k, std::vector<double>(b));
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < b; ++j) {
        time[i][j] = u(rng);
        memory[i][j] = 12.0 - time[i][j] + u(rng) * 0.3;  // faster tends to cost memory
      }
    }
  }
  Objective objective(int* calls = nullptr) const {
    return [this, calls](std::uint64_t id, const std::vector<int>& d) -> Expected<Solution> {
      if (calls != nullptr) ++*calls;
      Solution s{id, 0, 0};
      for (std::size_t i = 0; i < ops; ++i) {
        s.time_ms += time[i][d[i]];
        s.memory_kb += memory[i][d[i]];
        if (i > 0 && d[i] != d[i - 1]) {
          s.time_ms += 0.8;
          s.memory_kb += 0.5;
        }
      }
      return s;
    };
  }
};

double ReferenceVolume(const std::vector<Solution>& all, const std::vector<Solution>& front) {
  double max_time = 0, max_memory = 0;
  for (const Solution& s : all) {
    max_time = std::max(max_time, s.time_ms);
    max_memory = std::max(max_memory, s.memory_kb);
  }
  return Hypervolume2D(front, max_time * 1.01, max_memory * 1.01);
}

TEST(Searches, BruteForceEvaluatesEveryAssignmentOnce) {
  Synthetic model(8, 3, 1);
  auto codec = AssignmentCodec::Create(3, 8);
  ASSERT_TRUE(codec.ok());
  int calls = 0;
  SearchOptions options;
  options.method = "brute";
  auto result = SearchAssignments(*codec, model.objective(&calls), options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->evaluated.size(), 6561u);
  EXPECT_EQ(calls, 6561);
  EXPECT_EQ(result->front.size(), ParetoFront(result->evaluated).size());
  for (const Solution& a : result->front)
    for (const Solution& b : result->evaluated) EXPECT_FALSE(Dominates(b, a));
}

TEST(Searches, Nsga2ReachesNinetyNinePercentOfTheBruteForceHypervolume) {
  for (unsigned seed : {1u, 2u, 3u}) {
    Synthetic model(8, 3, seed);
    auto codec = AssignmentCodec::Create(3, 8);
    SearchOptions brute;
    brute.method = "brute";
    auto all = SearchAssignments(*codec, model.objective(), brute);
    ASSERT_TRUE(all.ok());
    SearchOptions nsga;
    nsga.method = "nsga2";
    nsga.seed = seed;
    auto found = SearchAssignments(*codec, model.objective(), nsga);
    ASSERT_TRUE(found.ok()) << found.status().message();
    EXPECT_LT(found->evaluated.size(), all->evaluated.size() / 2) << "NSGA-II should not need the whole space";
    const double best = ReferenceVolume(all->evaluated, all->front);
    const double got = ReferenceVolume(all->evaluated, found->front);
    EXPECT_GE(got, 0.99 * best) << "seed " << seed << ": " << got / best;
    for (const std::string method : {"local", "random"}) {
      SearchOptions other;
      other.method = method;
      other.seed = seed;
      other.evaluations = 1500;
      auto result = SearchAssignments(*codec, model.objective(), other);
      ASSERT_TRUE(result.ok()) << method;
      EXPECT_LE(result->evaluated.size(), 1500u) << method;
      EXPECT_GT(ReferenceVolume(all->evaluated, result->front), 0.8 * best) << method;
    }
  }
}

TEST(Searches, DeterministicUnderTheSeed) {
  Synthetic model(10, 2, 4);
  auto codec = AssignmentCodec::Create(2, 10);
  for (const std::string method : {"random", "local", "nsga2"}) {
    SearchOptions options;
    options.method = method;
    options.seed = 7;
    options.evaluations = 300;
    auto a = SearchAssignments(*codec, model.objective(), options);
    auto b = SearchAssignments(*codec, model.objective(), options);
    ASSERT_TRUE(a.ok() && b.ok()) << method;
    ASSERT_EQ(a->evaluated.size(), b->evaluated.size()) << method;
    // The same assignments in the same order (ids are serial numbers; the digits say which).
    EXPECT_EQ(a->digits, b->digits) << method;
    for (std::size_t i = 0; i < a->evaluated.size(); ++i) EXPECT_EQ(a->evaluated[i].id, i) << method;
    options.seed = 8;
    auto c = SearchAssignments(*codec, model.objective(), options);
    ASSERT_TRUE(c.ok());
    EXPECT_NE(a->digits, c->digits) << method << ": another seed should search differently";
  }
}

TEST(Searches, AutoBruteLimitAndErrors) {
  Synthetic model(20, 2, 5);
  auto codec = AssignmentCodec::Create(2, 20);  // 1,048,576 assignments
  SearchOptions options;
  auto automatic = SearchAssignments(*codec, model.objective(), options);
  ASSERT_TRUE(automatic.ok()) << automatic.status().message();
  EXPECT_EQ(automatic->method, "nsga2");
  options.method = "brute";
  auto too_big = SearchAssignments(*codec, model.objective(), options);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("1048576 assignments (2^20)"), std::string::npos)
      << too_big.status().message();
  options.method = "annealing";
  EXPECT_FALSE(SearchAssignments(*codec, model.objective(), options).ok());
  Synthetic small_model(4, 2, 6);
  auto small = AssignmentCodec::Create(2, 4);
  options.method = "auto";
  auto brute = SearchAssignments(*small, small_model.objective(), options);
  ASSERT_TRUE(brute.ok());
  EXPECT_EQ(brute->method, "brute");
  EXPECT_EQ(brute->evaluated.size(), 16u);
  // A failing objective stops the search with its error.
  Objective failing = [](std::uint64_t id, const std::vector<int>&) -> Expected<Solution> {
    if (id == 5) return Unsupported("backend cannot run op 2");
    return Solution{id, 1, 1};
  };
  options.method = "brute";
  auto failed = SearchAssignments(*small, failing, options);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("op 2"), std::string::npos);
}

}  // namespace
}  // namespace latte
