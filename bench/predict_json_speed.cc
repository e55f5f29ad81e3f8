// Whole-model predictions per second on one core through the path `latte predict --format json`
// and Python's Pack.predict take: plan the graph for the pack's backend, predict it, name the
// user's nodes and build PredictView's JSON (the pack loaded and the models imported once, neither
// timed). The C++ side of bench/python_speed.py, which times the same models through Python.
// Prints medians of R rounds (default 5) of N predictions per model (default 200); asserts nothing.
// Usage: predict_json_speed PACK MODEL... [--rounds R] [--count N]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/device.h"
#include "import/import.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"
#include "report/predict_view.h"

using namespace latte;

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  int rounds = 5, count = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--rounds" || arg == "--count") && i + 1 < argc) (arg == "--rounds" ? rounds : count) = std::max(1, std::atoi(argv[++i]));
    else paths.push_back(arg);
  }
  if (paths.size() < 2) {
    std::fprintf(stderr, "usage: predict_json_speed PACK MODEL... [--rounds R] [--count N]\n");
    return 2;
  }
  Expected<Pack> pack = Pack::Load(paths[0]);
  if (!pack.ok()) {
    std::fprintf(stderr, "error: %s\n", pack.status().message().c_str());
    return 2;
  }
  const std::string note = CompareMachine(*pack, ReadDeviceFingerprint());
  for (std::size_t m = 1; m < paths.size(); ++m) {
    Expected<Graph> graph = ImportModel(paths[m]);
    if (!graph.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", paths[m].c_str(), graph.status().message().c_str());
      return 2;
    }
    std::vector<double> rates;
    // Seconds spent in each stage over every round: plan, predict, name, JSON.
    std::array<double, 4> stage{};
    std::size_t kernels = 0;
    double checksum = 0;
    for (int r = 0; r < rounds; ++r) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        const auto lap = [&](std::size_t s) {
          const auto t1 = std::chrono::steady_clock::now();
          stage[s] += std::chrono::duration<double>(t1 - t0).count();
          t0 = t1;
        };
        Expected<GraphPlan> plan = PlanGraphForPrediction(*graph, *pack);
        if (!plan.ok()) return 2;
        lap(0);
        Expected<ModelPrediction> prediction = PredictModel(plan->graph, *pack);
        if (!prediction.ok()) return 2;
        lap(1);
        NameUserNodes(*plan, *graph, *prediction);
        lap(2);
        const nlohmann::json json = PredictView(plan->graph, *prediction, *pack, paths[m], note).Json();
        lap(3);
        checksum += json.at("total_ms").get<double>();
        kernels = prediction->layers.size();
      }
      rates.push_back(count / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%-50s %4zu kernels  %8.0f predictions/s (median of %d rounds of %d; %.0f-%.0f; checksum %.6g)\n",
                paths[m].c_str(), kernels, rates[rates.size() / 2], rounds, count, rates.front(), rates.back(), checksum);
    const double all = stage[0] + stage[1] + stage[2] + stage[3];
    std::printf("%-50s shares of the time: plan %.0f%%, predict %.0f%%, name nodes %.0f%%, JSON view %.0f%%\n", "",
                100 * stage[0] / all, 100 * stage[1] / all, 100 * stage[2] / all, 100 * stage[3] / all);
  }
  return 0;
}
