// Kernel predictions per second on one core (library calls, pack loaded once): a pack fitted on
// synthetic conv measurements with the default options, or PACK.json given as argument, queried
// with random kernels (mostly not in the table: the fitted models answer) and with table hits.
// Then whole-model predictions per second: 10,000 random 100-node NHWC graphs (blocks of 1x1 conv
// + relu, 3x3 depthwise + relu6, 1x1 conv, residual add), each grouped into kernels by the pack's
// fusion rules and predicted with PredictModel; building a graph is not timed.
// Usage: predict_speed [PACK.json]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "ir/graph_builder.h"
#include "ir/kernel_params.h"
#include "predict/features.h"
#include "predict/fit.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"

using namespace latte;

namespace {

Kernel RandomConv(std::mt19937& rng) {
  auto pick = [&](std::vector<std::int64_t> values) { return values[rng() % values.size()]; };
  Kernel k;
  k.op = OpKind::kConv2D;
  std::int64_t kernel = pick({1, 3, 5}), stride = pick({1, 2}), h = pick({7, 14, 28, 56, 112});
  ConvKernelParams p;  // no pads, no bias
  p.ih = p.iw = h;
  p.ic = pick({8, 16, 32, 64, 128});
  p.oc = pick({16, 32, 64, 128, 256});
  p.kh = p.kw = kernel;
  p.sh = p.sw = stride;
  p.dh = p.dw = 1;
  WriteParams(p, k);
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

// One random graph of 25 inverted-residual blocks (100 nodes), channels and size drawn per graph.
Expected<Graph> RandomModel(std::mt19937& rng) {
  auto pick = [&](std::vector<std::int64_t> values) { return values[rng() % values.size()]; };
  const std::int64_t h = pick({7, 14, 28, 56}), c = pick({8, 16, 24, 32}), e = c * pick({2, 4, 6});
  GraphBuilder b;
  auto attrs = [](const char* filter_layout, const char* activation) {
    Attributes a;
    a.Set("layout", "NHWC");
    a.Set("filter_layout", filter_layout);
    a.Set("padding", "same");
    a.Set("activation", activation);
    return a;
  };
  TensorId x = b.Input("x", {1, h, h, c});
  for (int block = 0; block < 25; ++block) {
    const std::string n = std::to_string(block);
    TensorId up = b.Op1(OpKind::kConv2D, "expand" + n, {x, b.Constant("we" + n, {e, 1, 1, c}), b.Constant("be" + n, {e})},
                        attrs("OHWI", "relu"));
    Attributes dw = attrs("1HWO", "relu6");
    dw.Set("groups", e);
    dw.Set("depth_multiplier", std::int64_t{1});
    TensorId mid = b.Op1(OpKind::kDepthwiseConv2D, "dw" + n,
                         {up, b.Constant("wd" + n, {1, 3, 3, e}), b.Constant("bd" + n, {e})}, dw);
    TensorId down = b.Op1(OpKind::kConv2D, "project" + n,
                          {mid, b.Constant("wp" + n, {c, 1, 1, e}), b.Constant("bp" + n, {c})}, attrs("OHWI", "none"));
    x = b.Op1(OpKind::kAdd, "add" + n, {down, x});
  }
  return b.Finish({x});
}

void TimeModels(const Pack& pack, std::mt19937& rng, int count) {
  double seconds = 0, checksum = 0;
  std::size_t nodes = 0, covered = 0, kernels = 0;
  for (int i = 0; i < count; ++i) {
    Expected<Graph> graph = RandomModel(rng);
    if (!graph.ok()) {
      std::fprintf(stderr, "error: building a graph: %s\n", graph.status().message().c_str());
      return;
    }
    auto start = std::chrono::steady_clock::now();
    Expected<ModelPrediction> predicted = PredictModel(*graph, pack);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!predicted.ok()) {
      std::fprintf(stderr, "error: %s\n", predicted.status().message().c_str());
      return;
    }
    checksum += predicted->total_ms;
    nodes += predicted->total_nodes;
    covered += predicted->covered_nodes;
    kernels += predicted->layers.size();
  }
  std::printf("%-28s %10.0f models/s (%d graphs of %zu nodes, %.1f kernels each, %.1f%% of nodes covered; "
              "checksum %.3g)\n",
              "random 100-node models", double(count) / seconds, count, nodes / std::size_t(count),
              double(kernels) / count, 100.0 * double(covered) / double(nodes), checksum);
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
    ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    p.ih = p.iw = 5 + static_cast<std::int64_t>(rng() % 120);  // mostly off the measured grid
    WriteParams(p, k);
    queries.push_back(std::move(k));
  }
  Time("random kernels", pack, queries, "one core, best fitted model");
  if (!samples.empty()) {
    std::vector<Kernel> hits;
    for (int i = 0; i < 200000; ++i) hits.push_back(samples[i % samples.size()].kernel);
    Time("measured kernels", pack, hits, "one core, table hits");
  }
  TimeModels(pack, rng, 10000);
  return 0;
}
