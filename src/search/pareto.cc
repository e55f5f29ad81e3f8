#include "search/pareto.h"

#include <chrono>

#include "run/benchmark.h"
#include "run/process.h"
#include "search/node_memory.h"

namespace latte {
namespace {

// Objectives of an assignment the search may not rank (a kernel only another pack predicts):
// far behind every real one, finite so that NSGA-II's crowding distances stay numbers.
constexpr double kNotComparable = 1e12;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string DeviceKey(const Pack& pack) {
  return pack.info.device.is_object() ? pack.info.device.value("key", "") : "";
}
std::string DeviceName(const Pack& pack) {
  const std::string key = DeviceKey(pack);
  return pack.info.device.is_object() ? pack.info.device.value("description", key.empty() ? "unknown" : key) : "unknown";
}

// Packs of one search describe one machine at one thread count; verifying needs it to be this one.
Expected<std::string> CheckPacks(const std::vector<SearchBackend>& backends, const ParetoOptions& options) {
  LATTE_RETURN_IF_ERROR(CheckSearchBackends(backends));
  for (const SearchBackend& b : backends) {
    const Pack& first = *backends[0].pack;
    if (DeviceKey(*b.pack) != DeviceKey(first))
      return InvalidInput("the " + b.Label() + " pack is for another machine (" + DeviceName(*b.pack) + ") than the " +
                          backends[0].Label() + " pack (" + DeviceName(first) + "): latencies of two machines do not add up");
    if (b.pack->info.threads != options.run.num_threads)
      return InvalidInput("the " + b.Label() + " pack is for " + std::to_string(b.pack->info.threads) +
                          " thread(s), the search for " + std::to_string(options.run.num_threads));
  }
  const DeviceFingerprint here = ReadDeviceFingerprint();
  if (DeviceKey(*backends[0].pack) == here.Key()) return std::string();
  if (options.verify > 0)
    return InvalidInput("the packs are for another machine (" + DeviceName(*backends[0].pack) +
                        "): --verify runs assignments on this one (" + here.Describe() +
                        "); calibrate here with `latte calibrate --backend B`");
  return "the packs are for another machine (" + DeviceName(*backends[0].pack) +
         "): latencies are that machine's; memory is measured on this one (" + here.Describe() + ")";
}

std::vector<int> NodeChoice(const OpList& ops, const std::vector<int>& digits) {
  std::vector<int> choice(ops.key_of_node.size());
  for (std::size_t i = 0; i < choice.size(); ++i) choice[i] = digits[ops.key_of_node[i]];
  return choice;
}

VerifiedPoint Verify(const Graph& graph, const ParetoResult& result, const ParetoPoint& point, const std::string& role,
                     const ParetoOptions& options, const BackendRegistry& registry) {
  VerifiedPoint v;
  v.id = point.id;
  v.role = role;
  v.predicted_time_ms = point.cost.time_ms;
  v.predicted_memory_kb = point.cost.memory_kb();
  v.predicted_drift = point.drift;
  BenchOptions bench;
  std::vector<std::string> names;
  for (const BackendChoice& c : result.choices) names.push_back(c.backend);
  bench.placement = PlacementFor(graph, result.ops, point.digits, names);
  bench.placement.fallback = names[0];
  bench.run = options.run;
  // bf16 choices come alone; when some op chose int8 the run is int8 with the others kept fp32.
  auto precision_of = [&](std::size_t node) {
    return result.choices[static_cast<std::size_t>(point.digits[result.ops.key_of_node[node]])].precision;
  };
  bench.run.precision = result.choices[0].precision == Precision::kBf16 ? Precision::kBf16 : Precision::kFp32;
  for (std::size_t i = 0; i < graph.num_nodes(); ++i)
    if (precision_of(i) == Precision::kInt8) bench.run.precision = Precision::kInt8;
  if (bench.run.precision == Precision::kInt8)
    for (std::size_t i = 0; i < graph.num_nodes(); ++i)
      if (precision_of(i) != Precision::kInt8) bench.placement.fp32_nodes.insert(static_cast<NodeId>(i));
  bench.measure = options.measure;
  auto report = RunInChild([&]() -> nlohmann::json {
    ResetMemoryHighWater();
    const long before = CurrentRssKb();
    auto bench_result = BenchmarkGraph(graph, bench, registry);
    if (!bench_result.ok()) return {{"error", bench_result.status().message()}};
    return {{"p50_us", bench_result->latency.stats.p50},
            {"noisy", bench_result->latency.noise.noisy},
            {"peak_rss_kb", bench_result->peak_rss_kb},
            {"before_kb", before},
            {"int8_nodes", SummarizeInt8(*bench_result).int8_nodes},
            {"drift_measured", bench.run.precision == Precision::kInt8 && bench_result->drift.measured},
            {"drift", DriftFigure(bench_result->drift)}};
  });
  if (!report.ok()) {
    v.why = report.status().message();
  } else if (report->contains("error")) {
    v.why = (*report)["error"].get<std::string>();
  } else {
    v.ok = true;
    v.measured_time_ms = (*report)["p50_us"].get<double>() / 1000.0;
    v.noisy = (*report)["noisy"].get<bool>();
    v.peak_rss_kb = (*report)["peak_rss_kb"].get<long>();
    v.measured_memory_kb = static_cast<double>(v.peak_rss_kb - (*report)["before_kb"].get<long>());
    v.int8_nodes = (*report)["int8_nodes"].get<int>();
    v.drift_measured = (*report)["drift_measured"].get<bool>();
    if (v.drift_measured) v.measured_drift = (*report)["drift"].get<double>();
  }
  return v;
}

}  // namespace

std::vector<std::size_t> SpreadOver(std::size_t front_size, std::size_t k) {
  std::vector<std::size_t> out;
  if (front_size == 0 || k == 0) return out;
  if (k >= front_size) {
    for (std::size_t i = 0; i < front_size; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t at = k == 1 ? 0 : (i * (front_size - 1) + (k - 1) / 2) / (k - 1);
    if (out.empty() || out.back() != at) out.push_back(at);
  }
  return out;
}

Expected<ParetoResult> RunParetoSearch(const Graph& graph, const std::vector<SearchBackend>& backends,
                                       const ParetoOptions& options, const BackendRegistry& registry) {
  // Names only: backends start in the child processes that measure, never in this one.
  for (const SearchBackend& b : backends) LATTE_RETURN_IF_ERROR(registry.CheckKnown(b.name));
  LATTE_ASSIGN_OR_RETURN(std::string machine_note, CheckPacks(backends, options));

  ParetoResult result;
  result.machine_note = std::move(machine_note);
  result.device = ReadDeviceFingerprint();
  for (const SearchBackend& b : backends) {
    result.choices.push_back(b.choice());
    result.backends.push_back(b.Label());
  }
  result.ops = BuildOpList(graph, options.mode);
  LATTE_ASSIGN_OR_RETURN(AssignmentCodec codec, AssignmentCodec::Create(backends.size(), result.ops.keys.size()));
  if (options.search.method == "brute" && (!codec.fits() || codec.Count() > options.search.brute_limit))
    return InvalidInput("brute force over " + std::to_string(backends.size()) + "^" +
                        std::to_string(result.ops.keys.size()) +
                        (codec.fits() ? " = " + codec.CountText() : std::string()) +
                        " assignments is more than the limit of " + std::to_string(options.search.brute_limit) +
                        ": use --search nsga2, local or random (or --mode name for fewer digits)");

  auto start = std::chrono::steady_clock::now();
  LATTE_ASSIGN_OR_RETURN(NodeMemory memory, MeasureNodeMemory(graph, result.choices, registry, options.run));
  result.node_memory_secs = Seconds(start);
  start = std::chrono::steady_clock::now();
  LATTE_ASSIGN_OR_RETURN(result.drift, MeasureInt8Drift(graph, result.ops, result.choices, memory, registry, options.run));
  result.drift_secs = Seconds(start);
  LATTE_ASSIGN_OR_RETURN(CostModel model, CostModel::Create(graph, backends, std::move(memory)));

  std::map<std::uint64_t, ParetoPoint> points;  // complete assignments evaluated, by the search's serial id
  Objective objective = [&](std::uint64_t id, const std::vector<int>& digits) -> Expected<Solution> {
    LATTE_ASSIGN_OR_RETURN(AssignmentCost cost, model.Evaluate(NodeChoice(result.ops, digits)));
    if (!cost.complete()) {
      ++result.incomplete;
      if (result.incomplete_examples.size() < 3) result.incomplete_examples.push_back(cost.unpredicted.front());
      return Solution{id, kNotComparable, kNotComparable, kNotComparable};
    }
    const double drift = result.drift.Estimate(digits);
    Solution s{id, cost.time_ms, cost.memory_kb(), drift};
    points.emplace(id, ParetoPoint{codec.IdText(digits), digits, std::move(cost), drift});
    return s;
  };
  start = std::chrono::steady_clock::now();
  LATTE_ASSIGN_OR_RETURN(SearchResult search, SearchAssignments(codec, objective, options.search));
  result.search_secs = Seconds(start);
  result.method = search.method;
  for (const Solution& s : search.evaluated)
    if (auto it = points.find(s.id); it != points.end()) result.evaluated.push_back(it->second);
  for (const Solution& s : search.front)
    if (auto it = points.find(s.id); it != points.end()) result.front.push_back(it->second);

  for (std::size_t b = 0; b < backends.size(); ++b) {
    std::vector<int> digits(result.ops.keys.size(), static_cast<int>(b));
    const std::string id = codec.IdText(digits);
    LATTE_ASSIGN_OR_RETURN(AssignmentCost cost, model.Evaluate(NodeChoice(result.ops, digits)));
    if (!cost.complete()) {
      result.incomplete_examples.push_back("all on " + backends[b].Label() + ": " + cost.unpredicted.front());
      continue;
    }
    result.references.push_back(ParetoPoint{id, digits, std::move(cost), result.drift.Estimate(digits)});
  }
  result.never_predicted = model.never_predicted();

  if (options.verify > 0) {
    for (std::size_t i : SpreadOver(result.front.size(), options.verify))
      result.verify.push_back(Verify(graph, result, result.front[i], "front", options, registry));
    for (const ParetoPoint& ref : result.references)
      result.verify.push_back(Verify(graph, result, ref, "all-" + result.backends[ref.digits.empty() ? 0 : static_cast<std::size_t>(ref.digits[0])],
                                     options, registry));
  }
  return result;
}

}  // namespace latte
