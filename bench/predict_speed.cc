// Kernel predictions per second on one core (library calls, pack loaded once): a pack fitted on
// synthetic conv measurements with the default options, or PACK.json given as argument, queried
// with random kernels (mostly not in the table: the fitted models answer) and with table hits.
// Usage: predict_speed [PACK.json]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "predict/features.h"
#include "predict/fit.h"
#include "predict/pack.h"

using namespace latte;

namespace {

Kernel RandomConv(std::mt19937& rng) {
  auto pick = [&](std::vector<std::int64_t> values) { return values[rng() % values.size()]; };
  Kernel k;
  k.op = OpKind::kConv2D;
  std::int64_t kernel = pick({1, 3, 5}), stride = pick({1, 2}), h = pick({7, 14, 28, 56, 112});
  k.params = {{"n", 1},      {"ih", h},      {"iw", h},      {"ic", pick({8, 16, 32, 64, 128})},
              {"oc", pick({16, 32, 64, 128, 256})}, {"kh", kernel}, {"kw", kernel}, {"sh", stride},
              {"sw", stride}, {"g", 1},       {"dh", 1},      {"dw", 1}};
  return k;
}

void Time(const char* what, const Pack& pack, const std::vector<Kernel>& kernels, const char* source_note) {
  std::map<std::string, std::size_t> sources;
  double checksum = 0;
  auto start = std::chrono::steady_clock::now();
  for (const Kernel& k : kernels) {
    Expected<Prediction> p = pack.Predict(k);
    if (p.ok()) {
      checksum += p->ms;
      ++sources[std::string(PredictionSourceName(p->source))];
    } else {
      ++sources["unsupported"];
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-28s %10.0f predictions/s (%zu kernels, %s; sources:", what, double(kernels.size()) / seconds,
              kernels.size(), source_note);
  for (const auto& [name, count] : sources) std::printf(" %s %zu", name.c_str(), count);
  std::printf("; checksum %.3g)\n", checksum);
}

}  // namespace

int main(int argc, char** argv) {
  std::mt19937 rng(0);
  Pack pack;
  std::vector<TrainingSample> samples;
  if (argc > 1) {
    Expected<Pack> loaded = Pack::Load(argv[1]);
    if (!loaded.ok()) {
      std::fprintf(stderr, "error: %s\n", loaded.status().message().c_str());
      return 2;
    }
    pack = std::move(*loaded);
  } else {
    for (int i = 0; i < 3000; ++i) {
      Kernel k = RandomConv(rng);
      samples.push_back({k, 1, 0.01 + 1e-6 * ComputeKernelCost(k).macs * (1 + 0.05 * std::sin(double(i))), 0});
    }
    PackInfo info;
    info.backend = "synthetic";
    FitOptions options;
    options.folds = 2;  // selection only; the models are refitted on everything
    Expected<FitResult> fit = FitPack(samples, info, options);
    if (!fit.ok()) {
      std::fprintf(stderr, "error: %s\n", fit.status().message().c_str());
      return 1;
    }
    pack = std::move(fit->pack);
  }
  std::vector<Kernel> queries;
  for (int i = 0; i < 200000; ++i) {
    Kernel k = RandomConv(rng);
    k.params["ih"] = k.params["iw"] = 5 + static_cast<std::int64_t>(rng() % 120);  // mostly off the measured grid
    queries.push_back(std::move(k));
  }
  Time("random kernels", pack, queries, "one core, best fitted model");
  if (!samples.empty()) {
    std::vector<Kernel> hits;
    for (int i = 0; i < 200000; ++i) hits.push_back(samples[i % samples.size()].kernel);
    Time("measured kernels", pack, hits, "one core, table hits");
  }
  return 0;
}
