// Is a chain of kernels as fast as the sum of the same kernels alone, or does each kernel of a
// graph pay a dispatch cost that one measured alone does not? Builds a chain of REPEATS × 6 small
// kernels on an H×H×C tensor (add, 3×3 depthwise, sigmoid, 1×1 conv, mul, hard-swish; each with
// its own weights, each reading the one before), measures it whole and each kernel alone with
// the campaigns' protocol, three rounds, and prints (chain − sum) / kernels. 1 thread, on BACKEND
// (xnnpack, onednn or ort: ONNX Runtime runs the chain as one session, each kernel alone as one).
// KINDS=convs chains only a 1×1 conv and a 3×3 depthwise (each C to C): on ONNX Runtime the whole
// chain stays in the NCHWc layout, reordered only at its two ends, where each kernel alone is
// reordered in and out (the campaigns take that share of its run away).
// Usage: chain_probe [H=8] [C=32] [REPEATS=16] [BACKEND=xnnpack] [KINDS=mixed|convs]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/kernel_graph.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

using namespace latte;

namespace {

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t h = argc > 1 ? std::atoi(argv[1]) : 8;
  const std::int64_t c = argc > 2 ? std::atoi(argv[2]) : 32;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 16;
  const std::string backend = argc > 4 ? argv[4] : "xnnpack";
  const std::string mix = argc > 5 ? argv[5] : "mixed";
  if (h < 1 || c < 1 || repeats < 1 || (mix != "mixed" && mix != "convs"))
    return std::fprintf(stderr, "usage: chain_probe [H] [C] [REPEATS] [BACKEND] [mixed|convs]\n"), 2;
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RegisterOrtBackend(registry);
  RunOptions run;
  run.num_threads = 1;
  const std::vector<Kernel> kinds =
      mix == "convs"
          ? std::vector<Kernel>{ConvKernel(OpKind::kConv2D, h, h, c, c, 1, 1),
                                ConvKernel(OpKind::kDepthwiseConv2D, h, h, c, c, 3, 1)}
          : std::vector<Kernel>{BinaryKernel(OpKind::kAdd, h, h, c),   ConvKernel(OpKind::kDepthwiseConv2D, h, h, c, c, 3, 1),
                                NhwcKernel(OpKind::kSigmoid, h, h, c), ConvKernel(OpKind::kConv2D, h, h, c, c, 1, 1),
                                BinaryKernel(OpKind::kMul, h, h, c),   NhwcKernel(OpKind::kHardSwish, h, h, c)};
  std::vector<JoinedKernel> kernels;  // each reads the one before
  for (int r = 0; r < repeats; ++r)
    for (const Kernel& k : kinds) kernels.push_back({k, {static_cast<int>(kernels.size()) - 1}});
  Expected<Graph> chain = JoinKernels(kernels);
  if (!chain.ok()) return Fail(chain.status());
  MeasureOptions measure = KernelMeasureOptions();
  measure.min_secs = 0.5;
  for (int round = 0; round < 3; ++round) {
    double sum_us = 0;
    for (const Kernel& k : kinds) {
      Expected<Measurement> m = MeasureKernel(k, backend, registry, run, measure);
      if (!m.ok()) return Fail(m.status());
      sum_us += m->stats.p50 * repeats;
    }
    Expected<Measurement> whole = MeasureGraph(*chain, backend, registry, run, measure);
    if (!whole.ok()) return Fail(whole.status());
    std::printf("%lldx%lldx%lld, %zu kernels: chain %.1f us, sum alone %.1f us, per kernel %+.2f us (%+.1f%%)\n",
                static_cast<long long>(h), static_cast<long long>(h), static_cast<long long>(c), kernels.size(),
                whole->stats.p50, sum_us, (whole->stats.p50 - sum_us) / kernels.size(),
                100 * (whole->stats.p50 - sum_us) / sum_us);
  }
  return 0;
}
