// libFuzzer target: arbitrary bytes as a predictor pack, what `latte predict MODEL --pack FILE`
// does with a hostile or damaged pack. Loading must fail with a message (never kInternal) or give
// a pack that saves and loads back to the same bytes and predicts: each of its kinds at the low
// and high ends of its training ranges, and two small random networks as whole models (fusion
// rules, context model, intervals). A prediction is a finite time ≥ 0 or an error that says why.
// Run it with scripts/fuzz pack SECONDS.
#include <cmath>

#include "fuzz_common.h"
#include "ir/kernel_graph.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"
#include "profile/space.h"

namespace {

using latte::fuzz::Bug;
using latte::fuzz::CheckError;

void CheckTime(double ms, const char* what) {
  if (!std::isfinite(ms) || ms < 0) Bug(std::string(what) + " gave " + std::to_string(ms) + " ms");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace latte;
  Expected<Pack> pack = Pack::FromBytes(std::span<const std::uint8_t>(data, size));
  if (!pack.ok()) {
    CheckError(pack.status(), "loading");
    return 0;
  }
  // Saving a loaded pack gives bytes that load back to the same pack.
  const std::string text = pack->Dump();
  Expected<Pack> again = Pack::FromBytes(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  if (!again.ok()) Bug("a saved pack does not load back: " + again.status().message());
  if (again->Dump() != text) Bug("a saved pack loads back to other bytes");

  for (const auto& [kind, model] : pack->kinds) {
    Expected<Kernel> base = ParseKernelKind(kind);
    if (!base.ok()) Bug("a loaded pack holds kind '" + kind + "' that does not parse");
    for (bool high : {false, true}) {
      Kernel kernel = *base;
      for (const auto& [name, range] : model.ranges.params)
        if (name != "threads") kernel.params[name] = high ? range.second : range.first;
      Expected<Prediction> predicted = pack->Predict(kernel);
      if (predicted.ok()) {
        CheckTime(predicted->ms, "a kernel prediction");
        CheckTime(predicted->spread_ms, "a kernel prediction's spread");
      } else {
        CheckError(predicted.status(), "a kernel prediction");
      }
    }
  }
  SplitMix64 rng(size);
  for (int i = 0; i < 2; ++i) {
    Expected<Graph> graph = JoinKernels(RandomNetwork(rng));
    if (!graph.ok()) Bug("a random network does not build: " + graph.status().message());
    Expected<GraphPlan> plan = PlanGraphForPrediction(*graph, *pack);
    if (!plan.ok()) {
      CheckError(plan.status(), "planning a model");
      continue;
    }
    Expected<ModelPrediction> predicted = PredictModel(plan->graph, *pack);
    if (!predicted.ok()) {
      CheckError(predicted.status(), "a model prediction");
      continue;
    }
    CheckTime(predicted->total_ms, "a model prediction");
    for (const LayerPrediction& layer : predicted->layers) CheckTime(layer.ms(), "a layer prediction");
  }
  return 0;
}
