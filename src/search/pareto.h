#pragma once
// `latte pareto` as a library call: a model's op list, every assignment's latency and memory
// predicted (assignment_cost.h) and, when some choice is int8, its drift from fp32 estimated from
// each op's measured alone (int8_drift.h), a search for the front, and optionally assignments
// spread over the front run for real (each in a child process: the bench protocol's p50, the peak
// resident set the run adds and the outputs' drift) beside the all-on-one-backend references.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"
#include "run/measure.h"
#include "search/assignment_cost.h"
#include "search/encoding.h"
#include "search/int8_drift.h"
#include "search/searches.h"

namespace latte {

struct ParetoOptions {
  OpListMode mode = OpListMode::kName;
  SearchOptions search;
  std::size_t verify = 0;  // how many front assignments to run for real (the references too when > 0)
  MeasureOptions measure;  // for --verify
  RunOptions run;          // threads: the packs' (each choice's precision is its pack's)
};

/// One assignment with its predicted cost.
struct ParetoPoint {
  std::string id;           // the assignment as an integer (base B, digit 0 least significant), in decimal
  std::vector<int> digits;  // per op list entry: index into the backends
  AssignmentCost cost;
  double drift = 0;         // estimated (Int8Drift::Estimate); 0 when no choice is int8
};

/// An assignment run for real.
struct VerifiedPoint {
  std::string id;
  std::string role;            // "front" or "all-<backend>"
  double predicted_time_ms = 0, predicted_memory_kb = 0;
  bool ok = false;
  std::string why;             // when !ok
  double measured_time_ms = 0;   // p50 of the bench protocol
  double measured_memory_kb = 0;  // peak resident set minus the child's resident set before the run
  long peak_rss_kb = 0;           // the child's peak resident set, as `latte bench` reports it
  bool noisy = false;
  double predicted_drift = 0;
  bool drift_measured = false;    // the run's outputs compared with an fp32 run's (a run with int8 nodes)
  double measured_drift = 0;      // DriftFigure of that comparison
  int int8_nodes = 0;             // the user's nodes that ran int8
};

struct ParetoResult {
  OpList ops;
  std::vector<BackendChoice> choices;  // what a digit chooses: a backend at a precision
  std::vector<std::string> backends;   // their labels ("xnnpack", "xnnpack@int8")
  std::string method;                  // the search that ran
  std::vector<ParetoPoint> evaluated;  // every complete assignment the search evaluated, in order
  std::vector<ParetoPoint> front;      // non-dominated (time, memory and drift), by increasing time
  std::vector<ParetoPoint> references; // all nodes on backends[b], one per backend (if complete)
  std::size_t incomplete = 0;          // assignments left out: some kernel only another pack predicts
  std::vector<std::string> incomplete_examples;  // the first few reasons
  std::map<std::string, std::string> never_predicted;  // left out of every time alike
  std::vector<VerifiedPoint> verify;
  Int8Drift drift;                     // per op and int8 choice (measured only when some choice is int8)
  double node_memory_secs = 0, drift_secs = 0, search_secs = 0;
  DeviceFingerprint device;
  std::string machine_note;  // "" when the packs are this machine's; else how it differs
};

/// Runs the whole search. `backends[0]` is the fallback for nodes another backend cannot run. The
/// same backend may be listed at two precisions (fp32 and int8): an assignment then chooses a
/// precision per op as well (see CostModel::Create).
/// Fails on an unknown backend, a pack that does not match its backend, packs of different
/// machines or thread counts, --verify with packs of another machine (assignments run here),
/// a node the fallback cannot run, or brute force over too many assignments. Packs of another
/// machine without --verify give a note: their latencies, this machine's memory.
Expected<ParetoResult> RunParetoSearch(const Graph& graph, const std::vector<SearchBackend>& backends,
                                       const ParetoOptions& options, const BackendRegistry& registry);

/// Which of `front_size` points (sorted) `k` verifications take: evenly spread, both ends
/// included, each at most once.
std::vector<std::size_t> SpreadOver(std::size_t front_size, std::size_t k);

}  // namespace latte
