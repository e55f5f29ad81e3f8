// The time of exact kernels, by key, as a campaign measures them (MeasureKernel, the kernels'
// protocol), three rounds each: for questions one kernel's variants answer (a bias or none, a
// layout, a precision) without a campaign and a store. A key in a dtype other than float32 is
// measured at the precision that runs it (int8 or bf16, as `calibrate --precision` would).
// Usage: kernel_probe BACKEND KEY [KEY ...]   e.g. kernel_probe onednn 'transpose_conv2d|...|bfloat16'
#include <cstdio>
#include <string>

#include "ir/kernel.h"
#include "profile/campaign.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

using namespace latte;

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: kernel_probe BACKEND KEY [KEY ...]\n"), 2;
  const std::string backend = argv[1];
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RegisterOrtBackend(registry);
  for (int i = 2; i < argc; ++i) {
    Expected<Kernel> kernel = ParseKernelKey(argv[i]);
    if (!kernel.ok()) return std::fprintf(stderr, "error: %s\n", kernel.status().message().c_str()), 2;
    RunOptions run;
    run.num_threads = 1;
    if (kernel->dtype == DataType::kBFloat16) run.precision = Precision::kBf16;
    if (kernel->dtype == DataType::kInt8) run.precision = Precision::kInt8;
    std::printf("%s:", argv[i]);
    for (int round = 0; round < 3; ++round) {
      Expected<Measurement> m = MeasureKernel(*kernel, backend, registry, run, KernelMeasureOptions());
      if (!m.ok()) {
        std::printf(" %s", m.status().message().c_str());
        break;
      }
      std::printf(" %.1f", m->stats.p50);
    }
    std::printf(" us (p50 of each round)\n");
  }
  return 0;
}
