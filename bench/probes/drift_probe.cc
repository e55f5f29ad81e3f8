// Does a model's slow-down on this shared host follow a compute-bound kernel or a memory-bound
// one? Measures, round after round, the drift reference (conv2d 3x3 28x28x32, in L2), two
// kernels whose data is out of L2 (an add of two 1x128x128x32 tensors, a 3x3 depthwise on
// 112x112x32) and whole models, all on xnnpack at 1 thread; prints each round's p50s and, per
// model, how well each kernel's ratio to its first round explains the model's (correlation of
// log ratios). Run it while nothing else runs; run it long enough for the host to drift.
// Usage: drift_probe [ROUNDS=20] MODEL...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "import/import.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/benchmark.h"
#include "run/xnnpack/xnnpack_backend.h"

using namespace latte;

namespace {

double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i == 1 && std::atoi(arg.c_str()) > 0) rounds = std::atoi(arg.c_str());
    else models.push_back(arg);
  }
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RunOptions run;
  run.num_threads = 1;
  const std::vector<std::pair<std::string, Kernel>> kernels = {
      {"conv ref (L2)", ReferenceKernel()},
      {"add 128x128x32", BinaryKernel(OpKind::kAdd, 128, 128, 32)},
      {"dwconv 112x112x32", ConvKernel(OpKind::kDepthwiseConv2D, 112, 112, 32, 32, 3, 1)}};
  std::vector<Graph> graphs;
  for (const std::string& m : models) {
    Expected<Graph> g = ImportModel(m, ImportOptions{});
    if (!g.ok()) {
      std::fprintf(stderr, "error: %s\n", g.status().message().c_str());
      return 2;
    }
    graphs.push_back(std::move(*g));
  }
  MeasureOptions kernel_measure = KernelMeasureOptions();
  kernel_measure.min_secs = 0.3;
  BenchOptions bench;
  bench.placement.default_backend = "xnnpack";
  bench.run = run;
  bench.measure.num_runs = 50;
  bench.measure.min_secs = 0.5;
  std::vector<std::vector<double>> series(kernels.size() + graphs.size());
  for (int r = 0; r < rounds; ++r) {
    std::printf("round %2d:", r);
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      auto m = MeasureKernel(kernels[k].second, "xnnpack", registry, run, kernel_measure);
      if (!m.ok()) {
        std::fprintf(stderr, "error: %s\n", m.status().message().c_str());
        return 2;
      }
      series[k].push_back(m->stats.p50);
      std::printf("  %s %.1f us", kernels[k].first.c_str(), m->stats.p50);
    }
    for (std::size_t g = 0; g < graphs.size(); ++g) {
      auto b = BenchmarkGraph(graphs[g], bench, registry);
      if (!b.ok()) {
        std::fprintf(stderr, "error: %s\n", b.status().message().c_str());
        return 2;
      }
      series[kernels.size() + g].push_back(b->latency.stats.p50);
      std::printf("  model%zu %.1f us", g, b->latency.stats.p50);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  auto log_ratio = [](const std::vector<double>& s) {
    std::vector<double> out;
    for (double v : s) out.push_back(std::log(v / s.front()));
    return out;
  };
  for (std::size_t g = 0; g < graphs.size(); ++g) {
    const auto model = log_ratio(series[kernels.size() + g]);
    double lo = 1e9, hi = 0;
    for (double v : series[kernels.size() + g]) lo = std::min(lo, v), hi = std::max(hi, v);
    std::printf("%s: p50 %.1f..%.1f us over %d rounds;", models[g].c_str(), lo, hi, rounds);
    for (std::size_t k = 0; k < kernels.size(); ++k)
      std::printf("  corr with %s %.2f", kernels[k].first.c_str(), Correlation(log_ratio(series[k]), model));
    std::printf("\n");
  }
  return 0;
}
