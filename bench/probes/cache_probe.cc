// Does a kernel run as fast alone (how campaigns measure it: run after run on the same buffers)
// as inside a model (its input just written by the op before it, everything else it touches last
// used one inference ago, with the model's other layers, and this host's other tenants sharing
// the L3, running in between)? For each kernel of MODEL, xnnpack, 1 thread:
//   model    its time in the model's per-layer profile (latte validate's, same run)
//   alone    the kernel alone under the campaigns' protocol (what a pack's tables hold)
//   L2-cold  alone, 4 MB of other data written before every timed run (its data out of L2)
//   paused   alone, 5 ms of sleep before every timed run (nothing else of ours runs meanwhile)
//   cold     alone, 64 MB written, then its inputs' cache lines written, before every run (all
//            its data out of the caches but the input, which a producer leaves in cache)
// The untimed preparation comes before each timed run, so the last three are medians of single
// runs (≥ 20 runs and ≥ 0.1 s). Prints per kind the sums and their ratios to the in-model times,
// then the kernels with the largest in-model gaps. Run it while nothing else runs.
// Usage: cache_probe PACK MODEL [INPUT=SHAPE]   (INPUT=SHAPE as latte's --input-shape, e.g. x=1x3x48x192)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "import/import.h"
#include "probe_args.h"
#include "ir/kernel_graph.h"
#include "calibrate/validation.h"
#include "profile/campaign.h"
#include "run/executor.h"
#include "run/xnnpack/xnnpack_backend.h"

using namespace latte;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kStates = 5;
const char* const kStateNames[kStates] = {"model", "alone", "L2-cold", "paused", "cold"};

// Writes one byte per cache line with ordinary stores (glibc's memset of a large block uses
// non-temporal stores, which bypass the caches and evict nothing).
void Touch(std::vector<char>& scratch, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 64) scratch[i] = static_cast<char>(scratch[i] + 1);
}

// Writes one byte in each cache line of the graph's inputs, values unchanged.
void TouchInputs(const Graph& graph, TensorBuffers& buffers) {
  for (TensorId id : graph.inputs) {
    volatile std::uint8_t* data = buffers.mutable_data(id);
    if (data == nullptr) continue;
    for (std::size_t i = 0; i < buffers.bytes(id); i += 64) data[i] = data[i];
  }
}

struct Preparation {
  std::size_t evict_bytes = 0;
  double pause_secs = 0;
  bool touch_inputs = false;
};

// Median of single timed runs, each after `prep`.
Expected<double> SingleRunMedianMs(Executor& executor, const Graph& graph, std::vector<char>& scratch,
                                   const Preparation& prep) {
  if (scratch.size() < prep.evict_bytes) scratch.resize(prep.evict_bytes);
  std::vector<double> samples;
  for (int i = 0; i < 3; ++i) LATTE_RETURN_IF_ERROR(executor.Run());
  const auto start = Clock::now();
  while (samples.size() < 20 || std::chrono::duration<double>(Clock::now() - start).count() < 0.1) {
    Touch(scratch, prep.evict_bytes);
    if (prep.pause_secs > 0) std::this_thread::sleep_for(std::chrono::duration<double>(prep.pause_secs));
    if (prep.touch_inputs) TouchInputs(graph, executor.buffers());
    const auto t0 = Clock::now();
    LATTE_RETURN_IF_ERROR(executor.Run());
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

// The kernel's times in the four states measured alone (ms): alone, L2-cold, paused, cold.
Expected<std::vector<double>> MeasureAlone(const Kernel& kernel, const BackendRegistry& registry,
                                           const RunOptions& run, std::vector<char>& scratch) {
  LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(kernel));
  Placement placement;
  placement.default_backend = "xnnpack";
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, Executor::Create(graph, placement, registry, run));
  FillRandomInputs(graph, executor->buffers());
  LATTE_ASSIGN_OR_RETURN(Measurement alone, Measure([&] { return executor->Run(); }, KernelMeasureOptions()));
  std::vector<double> ms = {alone.stats.p50 / 1000};
  for (const Preparation& prep : {Preparation{4u << 20, 0, false}, Preparation{0, 0.005, false}, Preparation{64u << 20, 0, true}}) {
    LATTE_ASSIGN_OR_RETURN(double t, SingleRunMedianMs(*executor, graph, scratch, prep));
    ms.push_back(t);
  }
  return ms;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: cache_probe PACK MODEL [INPUT=SHAPE]\n");
    return 2;
  }
  ImportOptions import;
  if (argc == 4)
    if (Status added = AddInputShapeArg(argv[3], import); !added.ok()) return Fail(added);
  Expected<Pack> pack = Pack::Load(argv[1]);
  if (!pack.ok()) return Fail(pack.status());
  Expected<Graph> graph = ImportModel(argv[2], import);
  if (!graph.ok()) return Fail(graph.status());
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  const BenchOptions bench = ProbeBenchOptions();
  Expected<ModelValidation> validation = ValidateModel(*graph, argv[2], *pack, bench, registry);
  if (!validation.ok()) return Fail(validation.status());

  std::vector<char> scratch;
  std::map<std::string, std::vector<double>> alone_by_key;
  std::map<std::string, std::vector<double>> sums_by_kind;  // kStates sums, then the count
  std::vector<std::tuple<double, std::string, std::vector<double>>> gaps;
  for (const LayerComparison& layer : validation->layers) {
    const Kernel& kernel = validation->prediction.layers[layer.layer].kernel;
    const std::string key = kernel.Key();
    if (!alone_by_key.count(key)) {
      Expected<std::vector<double>> ms = MeasureAlone(kernel, registry, bench.run, scratch);
      if (!ms.ok()) return Fail(ms.status());
      alone_by_key[key] = *ms;
    }
    std::vector<double> row = {layer.measured_ms};
    row.insert(row.end(), alone_by_key[key].begin(), alone_by_key[key].end());
    for (const std::string& kind : {kernel.Kind(), std::string("(all)")}) {
      std::vector<double>& sums = sums_by_kind[kind];
      sums.resize(kStates + 1);
      for (int s = 0; s < kStates; ++s) sums[s] += row[s];
      sums[kStates] += 1;
    }
    gaps.emplace_back(row[0] - row[1], key, row);
  }
  std::printf("%s: whole model p50 %.3f ms; per-layer sums in ms, and / model\n", argv[2], validation->measured_ms);
  std::printf("%-26s %4s", "kind", "n");
  for (const char* name : kStateNames) std::printf(" %8s", name);
  for (int s = 1; s < kStates; ++s) std::printf(" %8s", kStateNames[s]);
  std::printf("\n");
  for (const auto& [kind, sums] : sums_by_kind) {
    std::printf("%-26s %4.0f", kind.c_str(), sums[kStates]);
    for (int s = 0; s < kStates; ++s) std::printf(" %8.3f", sums[s]);
    for (int s = 1; s < kStates; ++s) std::printf(" %8.3f", sums[s] / sums[0]);
    std::printf("\n");
  }
  std::sort(gaps.begin(), gaps.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::printf("largest in-model gaps (ms: model alone L2-cold paused cold):\n");
  for (std::size_t i = 0; i < gaps.size() && i < 8; ++i) {
    const auto& [gap, key, row] = gaps[i];
    for (double v : row) std::printf("%.3f ", v);
    std::printf(" %s\n", key.c_str());
  }
  return 0;
}
