#pragma once
// Whole-model benchmark, like TFLite's benchmark_model: init time, first inference, warmup,
// timed runs under the measurement protocol, optional per-node profile, peak memory.

#include <string>
#include <vector>

#include "core/device.h"
#include "run/executor.h"
#include "run/measure.h"
#include "run/output_drift.h"
#include "run/process.h"

namespace latte {

struct BenchOptions {
  Placement placement;
  RunOptions run;
  MeasureOptions measure;
  bool op_profiling = false;  // after the timed runs, num_runs profiled runs give per-node times
  /// After the timed runs, a run at a precision other than fp32 is compared with the same placement
  /// at fp32 on the same inputs (RunDrift); an fp32 run is its own reference (drift 0, cosine 1).
  bool output_drift = true;
};

struct BenchResult {
  double init_us = 0;                      // backend creation, weight packing, buffers
  Measurement latency;                     // whole-graph runs, microseconds
  /// Per entry of `entries`, when op_profiling. A whole-graph backend's profiler slows the runs
  /// it profiles (ONNX Runtime's by microseconds an event, as much as the small ops themselves):
  /// there its times are scaled to add up to the unprofiled runs' median (latency.stats.p50).
  std::vector<double> node_avg_us;
  /// Of that, a whole-graph backend's reorders into and out of its own blocked layout (ORT's
  /// NCHWc; not the exporter's NHWC <-> NCHW Transposes, which are the model's nodes' time).
  double layout_avg_us = 0;
  std::vector<ProfileEntry> entries;       // the prepared graph's nodes, named by the user's nodes
  std::vector<NodeAssignment> assignments;
  std::vector<std::string> backend_versions;
  Int8Calibration int8_calibration;        // at int8: what the activation ranges were found on
  long peak_rss_kb = 0;                    // the process's peak resident set, after the runs
  RunDrift drift;                          // the outputs against fp32 (options.output_drift), after peak_rss_kb
  DeviceFingerprint device;
};

/// What ran at int8 in a --precision int8 run (nodes counted in the user's graph).
struct Int8Summary {
  int int8_nodes = 0, fp32_nodes = 0;  // the user's nodes by the precision they ran at
  int quantize = 0, dequantize = 0;    // conversions the executor inserted
  std::vector<std::pair<std::string, int>> int8_kinds;  // ("conv2d+relu", how many run int8), most first
};
Int8Summary SummarizeInt8(const BenchResult& result);

/// Runs `graph` (inputs random, fixed seed) under the protocol. A drift that cannot be measured
/// (the placement cannot run at fp32) is a RunDrift saying why, not an error.
Expected<BenchResult> BenchmarkGraph(const Graph& graph, const BenchOptions& options, const BackendRegistry& registry);

}  // namespace latte
