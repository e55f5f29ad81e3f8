// peak_flops: this CPU's fp32 peak, measured with a tight fused-multiply-add loop per thread
// (AVX-512 and AVX2+FMA variants picked at run time). The yardstick for the GFLOP/s that
// Latte's kernels achieve (BENCHMARKS.md). Prints figures; asserts nothing.
//
// Usage: peak_flops [SECONDS_PER_RUN=1] [MAX_THREADS=hardware]
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int kAccumulators = 12;  // enough independent chains to hide FMA latency on 2 ports

// Each iteration: kAccumulators FMAs of `Lanes` floats = 2 * Lanes * kAccumulators FLOPs.
__attribute__((target("avx512f"))) double Avx512Loop(long iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16  // keep the accumulators in registers: a loop over the array would spill them
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  alignas(64) float lanes[16];
  float sum = 0;
  for (int i = 0; i < kAccumulators; ++i) {
    _mm512_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;  // used, so the loop is not optimized away
}

__attribute__((target("avx2,fma"))) double Avx2Loop(long iterations) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  alignas(32) float lanes[8];
  float sum = 0;
  for (int i = 0; i < kAccumulators; ++i) {
    _mm256_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

struct Variant {
  const char* name;
  int lanes;
  double (*loop)(long);
  bool available;
};

// GFLOP/s of `threads` threads each running `loop` for about `seconds`; the median of 5 runs.
double Measure(const Variant& v, int threads, double seconds) {
  long iterations = 1 << 20;  // calibrate to ~seconds on one thread
  for (;;) {
    auto start = std::chrono::steady_clock::now();
    volatile double sink = v.loop(iterations);
    (void)sink;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > 0.05) {
      iterations = static_cast<long>(iterations * seconds / s);
      break;
    }
    iterations *= 4;
  }
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    std::vector<std::thread> pool;
    std::atomic<int> ready{0};
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        ready.fetch_add(1);
        volatile double sink = v.loop(iterations);
        (void)sink;
      });
    for (auto& th : pool) th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runs.push_back(2.0 * v.lanes * kAccumulators * static_cast<double>(iterations) * threads / s / 1e9);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  const int max_threads = argc > 2 ? std::atoi(argv[2]) : static_cast<int>(std::thread::hardware_concurrency());
  __builtin_cpu_init();
  const Variant variants[] = {
      {"avx512f", 16, Avx512Loop, __builtin_cpu_supports("avx512f") != 0},
      {"avx2+fma", 8, Avx2Loop, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
  };
  std::printf("| ISA | threads | fp32 GFLOP/s (median of 5) |\n| --- | ---: | ---: |\n");
  for (const Variant& v : variants) {
    if (!v.available) {
      std::printf("| %s | - | not supported by this CPU |\n", v.name);
      continue;
    }
    for (int t = 1; t <= std::max(1, max_threads); ++t) std::printf("| %s | %d | %.1f |\n", v.name, t, Measure(v, t, seconds));
  }
  return 0;
}
