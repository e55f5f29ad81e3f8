// Accuracy on the V100 TensorRT conv library (../shared/data/v100-tensorrt): a random 90/10
// split (seed 0) of the valid lines, each Latte predictor fitted on the 90% per kernel kind and
// scored on the 10% (RMSPE, share within ±5% / ±10%), next to the library's original method
// (linear interpolation over (Out_C, H) per group of the other parameters, nearest neighbour
// otherwise) as re-implemented here, and the figures its authors published.
// Besides RMSPE, prints where the error lives: the median and 99th percentile of |error| and the
// share of the squared error carried by the worst 1% of test kernels.
// Usage: predict_v100 [DATA_DIR] [--predictors interp,gbdt,...] [--rounds N] [--depth D] [--eta E]
//                     [--only FP32|FP16] [--dump PREFIX (writes PREFIX.FP32/.FP16: predictor key predicted measured)]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "db/tensorrt_conv.h"
#include "ir/kernel_params.h"
#include "predict/pack.h"
#include "predict/predictor.h"

using namespace latte;

namespace {

struct Split {
  std::vector<TrainingSample> train, test;
};

Split RandomSplit(const TensorrtConvFile& file) {
  std::vector<std::size_t> order(file.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(0);
  std::shuffle(order.begin(), order.end(), rng);
  std::size_t test_count = order.size() / 10;
  Split split;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const TensorrtConvRow& row = file.rows[order[i]];
    TrainingSample sample{row.kernel, 1, row.latency_ms, 0};
    (i < test_count ? split.test : split.train).push_back(std::move(sample));
  }
  return split;
}

// The original method: per group of (type, batch, in_c, kernel, stride, fused), interpolate
// linearly over Out_C at the same H between the nearest measured neighbours, else over H at the
// same Out_C, else take the nearest neighbour of the group in (Out_C, H).
class OriginalMethod {
 public:
  explicit OriginalMethod(const std::vector<TrainingSample>& train) {
    for (const TrainingSample& s : train) {
      const ConvKernelParams p = ReadParams<ConvKernelParams>(s.kernel);
      groups_[GroupKey(s.kernel)][{p.oc, p.ih}] = s.p50_ms;
    }
  }
  double Predict(const Kernel& k) const {
    auto g = groups_.find(GroupKey(k));
    if (g == groups_.end()) return std::numeric_limits<double>::quiet_NaN();
    const auto& points = g->second;
    const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    const std::int64_t oc = p.oc, h = p.ih;
    auto exact = points.find({oc, h});
    if (exact != points.end()) return exact->second;
    double v = 0;
    if (Along(points, oc, h, true, v) || Along(points, oc, h, false, v)) return v;
    double best = std::numeric_limits<double>::max();
    for (const auto& [key, ms] : points) {
      double d = std::abs(std::log(double(key.first) / oc)) + std::abs(std::log(double(key.second) / h));
      if (d < best) {
        best = d;
        v = ms;
      }
    }
    return v;
  }

 private:
  using Points = std::map<std::pair<std::int64_t, std::int64_t>, double>;
  static std::string GroupKey(const Kernel& k) {
    const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    return k.Kind() + "|" + std::to_string(p.n) + "|" + std::to_string(p.ic) + "|" + std::to_string(p.kh) + "|" +
           std::to_string(p.sh) + "|" + std::to_string(p.elmt_fused.value_or(0));
  }
  // Linear interpolation along Out_C (by_oc) or H between the nearest measured neighbours.
  static bool Along(const Points& points, std::int64_t oc, std::int64_t h, bool by_oc, double& out) {
    std::int64_t q = by_oc ? oc : h;
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    double lo_ms = 0, hi_ms = 0;
    for (const auto& [key, ms] : points) {
      if ((by_oc ? key.second : key.first) != (by_oc ? h : oc)) continue;
      std::int64_t x = by_oc ? key.first : key.second;
      if (x < q && x > lo) lo = x, lo_ms = ms;
      if (x > q && x < hi) hi = x, hi_ms = ms;
    }
    if (lo == std::numeric_limits<std::int64_t>::min() || hi == std::numeric_limits<std::int64_t>::max()) return false;
    double t = double(q - lo) / double(hi - lo);
    out = (1 - t) * lo_ms + t * hi_ms;
    return true;
  }
  std::map<std::string, Points> groups_;
};

void Print(const char* name, const std::vector<double>& predicted, const std::vector<double>& measured,
           std::size_t failed) {
  AccuracyMetrics m = ComputeAccuracy(predicted, measured);
  std::printf("  %-26s n=%6zu  RMSPE %6.2f%%  within5 %5.1f%%  within10 %5.1f%%", name, m.n, m.rmspe_pct,
              m.within5_pct, m.within10_pct);
  std::vector<double> errors;
  for (std::size_t i = 0; i < predicted.size(); ++i) errors.push_back(std::abs(predicted[i] / measured[i] - 1));
  std::sort(errors.begin(), errors.end());
  if (!errors.empty()) {
    double total = 0, worst = 0;
    const std::size_t top = errors.size() - errors.size() / 100;
    for (std::size_t i = 0; i < errors.size(); ++i) (i >= top ? worst : total) += errors[i] * errors[i];
    std::printf("  |error| median %.1f%% p99 %.1f%%, worst 1%% carry %.0f%% of squared error", 100 * errors[errors.size() / 2],
                100 * errors[errors.size() * 99 / 100], 100 * worst / (total + worst));
  }
  if (failed) std::printf("  (%zu without a prediction)", failed);
  std::printf("\n");
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::string(LATTE_SOURCE_DIR) + "/../shared/data/v100-tensorrt";
  std::vector<std::string> predictors = {"interp", "gbdt", "forest", "roofline"};
  PredictorOptions options;
  std::string only, dump;
  // Tuned on this data (FP32 RMSPE 7.2% with latte fit's defaults of 600 rounds, depth 8).
  options.gbdt.trees = 1500;
  options.gbdt.max_depth = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (arg == "--predictors") predictors = SplitList(next());
    else if (arg == "--rounds") options.gbdt.trees = std::atoi(next().c_str());
    else if (arg == "--depth") options.gbdt.max_depth = std::atoi(next().c_str());
    else if (arg == "--eta") options.gbdt.eta = std::atof(next().c_str());
    else if (arg == "--trees") options.forest.trees = std::atoi(next().c_str());
    else if (arg == "--only") only = next();
    else if (arg == "--dump") dump = next();
    else dir = arg;
  }
  if (!std::filesystem::exists(dir)) {
    std::printf("skipped: ../shared not found (%s)\n", dir.c_str());
    return 0;
  }
  struct Precision {
    const char* name;
    const char* file;
    DataType dtype;
    double published_rmspe, published_within10;
  };
  for (const Precision& precision : {Precision{"FP32", "conv_data.out", DataType::kFloat32, 18.2, 63.5},
                                     Precision{"FP16", "conv_data.out.fp16", DataType::kFloat16, 48.7, 57.9}}) {
    if (!only.empty() && only != precision.name) continue;
    Expected<TensorrtConvFile> file = ReadTensorrtConvFile(dir + "/" + precision.file, precision.dtype);
    if (!file.ok()) {
      std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
      return 2;
    }
    Split split = RandomSplit(*file);
    std::printf("%s: %zu valid lines (%zu failed lines dropped), train %zu, test %zu\n", precision.name,
                file->rows.size(), file->failed_lines, split.train.size(), split.test.size());
    std::vector<double> measured;
    for (const TrainingSample& s : split.test) measured.push_back(s.p50_ms);

    OriginalMethod original(split.train);
    std::vector<double> got, got_measured;
    std::size_t failed = 0;
    for (const TrainingSample& s : split.test) {
      double v = original.Predict(s.kernel);
      if (std::isnan(v)) {
        ++failed;
        continue;
      }
      got.push_back(v);
      got_measured.push_back(s.p50_ms);
    }
    Print("original method (ours)", got, got_measured, failed);
    std::printf("  %-26s           RMSPE %6.1f%%                   within10 %5.1f%%\n", "original method (published)",
                precision.published_rmspe, precision.published_within10);

    FILE* dump_file = dump.empty() ? nullptr : std::fopen((dump + "." + precision.name).c_str(), "w");
    std::map<std::string, std::vector<TrainingSample>> train_by_kind;
    for (const TrainingSample& s : split.train) train_by_kind[s.kernel.Kind()].push_back(s);
    for (const std::string& name : predictors) {
      std::map<std::string, std::unique_ptr<KernelPredictor>> fitted;
      bool ok = true;
      for (auto& [kind, samples] : train_by_kind) {
        Expected<std::unique_ptr<KernelPredictor>> p = MakePredictor(name, options);
        if (!p.ok()) {
          std::fprintf(stderr, "error: %s\n", p.status().message().c_str());
          return 2;
        }
        Status status = (*p)->Fit(samples);
        if (!status.ok()) {
          std::printf("  %-26s cannot fit %s: %s\n", name.c_str(), kind.c_str(), status.message().c_str());
          ok = false;
          break;
        }
        fitted[kind] = std::move(*p);
      }
      if (!ok) continue;
      got.clear();
      got_measured.clear();
      failed = 0;
      for (const TrainingSample& s : split.test) {
        auto it = fitted.find(s.kernel.Kind());
        Expected<Prediction> p = it == fitted.end() ? Expected<Prediction>(NotFound("kind")) : it->second->Predict(s.kernel, 1);
        if (!p.ok()) {
          ++failed;
          continue;
        }
        got.push_back(p->ms);
        got_measured.push_back(s.p50_ms);
        if (dump_file) std::fprintf(dump_file, "%s %s %g %g\n", name.c_str(), s.kernel.Key().c_str(), p->ms, s.p50_ms);
      }
      Print(("latte " + name).c_str(), got, got_measured, failed);
    }
  }
  return 0;
}
