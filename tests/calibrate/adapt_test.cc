// `latte adapt` on a machine made artificially slower: a backend whose nodes spin for a time set
// by their output size (a machine whose speed is known), wrapped so that each run is repeated N
// times. A pack fitted on the spinning backend's exact times and adapted on the wrapped one must
// move its predictions by N, per class and in total.
#include "calibrate/adapt.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

#include "ir/kernel_graph.h"
#include "predict/fit.h"
#include "profile/space.h"
#include "run/backend_registry.h"

namespace latte {
namespace {

// Microseconds a node spins: 40 µs plus 4 ns per output element.
double SpinUs(const Graph& graph, NodeId node) {
  const auto elements = graph.tensor(graph.node(node).outputs[0]).num_elements().value_or(0);
  return 40.0 + 0.004 * static_cast<double>(elements);
}

class SpinBackend : public Backend {
 public:
  std::string_view Name() const override { return "spin"; }
  std::string Version() const override { return "spin 1"; }
  Support Supports(const Graph&, NodeId) const override { return Support::Yes(); }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override {
    class Spinning : public PreparedNode {
     public:
      explicit Spinning(double us) : us_(us) {}
      Status Run(TensorBuffers&) override {
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us_);
        while (std::chrono::steady_clock::now() < until) {
        }
        return Status::Ok();
      }

     private:
      double us_;
    };
    return std::unique_ptr<PreparedNode>(new Spinning(SpinUs(graph, node)));
  }
};

// Any backend, each run of each node repeated `times` times: the same machine, `times` slower.
class RepeatingBackend : public Backend {
 public:
  RepeatingBackend(std::unique_ptr<Backend> inner, int times) : inner_(std::move(inner)), times_(times) {}
  std::string_view Name() const override { return inner_->Name(); }
  std::string Version() const override { return inner_->Version(); }
  Support Supports(const Graph& graph, NodeId node) const override { return inner_->Supports(graph, node); }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override {
    class Repeating : public PreparedNode {
     public:
      Repeating(std::unique_ptr<PreparedNode> inner, int times) : inner_(std::move(inner)), times_(times) {}
      Status Run(TensorBuffers& buffers) override {
        for (int i = 0; i < times_; ++i) LATTE_RETURN_IF_ERROR(inner_->Run(buffers));
        return Status::Ok();
      }

     private:
      std::unique_ptr<PreparedNode> inner_;
      int times_;
    };
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<PreparedNode> prepared, inner_->Prepare(graph, node));
    return std::unique_ptr<PreparedNode>(new Repeating(std::move(prepared), times_));
  }

 private:
  std::unique_ptr<Backend> inner_;
  int times_;
};

BackendRegistry SpinRegistry(int times) {
  BackendRegistry registry;
  EXPECT_TRUE(registry
                  .Register({"spin", "spins", [times](const RunOptions&) -> Expected<std::unique_ptr<Backend>> {
                               return std::unique_ptr<Backend>(
                                   new RepeatingBackend(std::make_unique<SpinBackend>(), times));
                             }})
                  .ok());
  return registry;
}

// The spinning machine's exact time for a one-node kernel graph, in ms.
double SpinMs(const Kernel& kernel) {
  Expected<Graph> graph = BuildKernelGraph(kernel);
  EXPECT_TRUE(graph.ok()) << kernel.Key();
  return SpinUs(*graph, 0) / 1000;
}

// A pack of the spinning machine: exact times of convs, depthwise convs and adds of many sizes.
Pack SpinPack() {
  std::vector<TrainingSample> samples;
  for (std::int64_t h : {7, 14, 28, 56})
    for (std::int64_t c : {16, 32, 64, 128}) {
      for (Kernel k : {ConvKernel(OpKind::kConv2D, h, h, c, c, 3, 1), ConvKernel(OpKind::kDepthwiseConv2D, h, h, c, c, 3, 1),
                       BinaryKernel(OpKind::kAdd, h, h, c)})
        samples.push_back({k, 1, SpinMs(k), 0.0});
    }
  PackInfo info;
  info.backend = "spin";
  info.threads = 1;
  info.device = {{"key", "elsewhere"}, {"description", "another machine"}};
  info.reference_kernel = ConvKernel(OpKind::kConv2D, 28, 28, 32, 32, 3, 1).Key();
  info.reference_p50_us = SpinMs(ParseKernelKey(info.reference_kernel).value()) * 1000;
  FitOptions options;
  options.folds = 3;
  options.predictor.gbdt.trees = 30;
  options.predictor.forest.trees = 10;
  Expected<FitResult> fit = FitPack(samples, info, options);
  EXPECT_TRUE(fit.ok()) << fit.status().message();
  return std::move(fit->pack);
}

TEST(AdaptTest, AMachineThreeTimesSlowerMovesThePredictionsByThree) {
  Pack original = SpinPack();
  ASSERT_EQ(original.kinds.size(), 3u);
  const BackendRegistry slower = SpinRegistry(3);
  AdaptOptions options;
  options.budget_secs = 12;
  options.command = "latte adapt --pack spin.json --budget 12s -o mine.json";
  std::ostringstream log;
  Expected<AdaptResult> adapted = RunAdapt(SpinPack(), options, slower, log);
  ASSERT_TRUE(adapted.ok()) << adapted.status().message();
  ASSERT_FALSE(adapted->interrupted);
  const Pack& pack = adapted->pack;
  ASSERT_TRUE(pack.adaptation.has_value());
  // The spinning pack has no model of a random network's other kinds (relu6, resize, ...): no
  // network could set the level, and the result says why.
  EXPECT_EQ(adapted->network_factor, 1.0);
  EXPECT_NE(adapted->network_note.find("the kernels' factors stand alone"), std::string::npos) << adapted->network_note;
  // The three classes the pack has, and "all", each measured and each about 3.
  for (const char* name : {"conv", "depthwise", "memory", "all"}) {
    ASSERT_TRUE(pack.adaptation->classes.count(name)) << name << "\n" << log.str();
    const ClassAdaptation& c = pack.adaptation->classes.at(name);
    EXPECT_GE(c.kernels, 2u) << name;
    for (double ms : {c.lo_ms, std::sqrt(c.lo_ms * c.hi_ms), c.hi_ms})
      EXPECT_NEAR(c.Factor(ms), 3.0, 0.3) << name << " at " << ms << " ms\n" << log.str();
  }
  // Kernels measured or not, tables hits and fitted predictions alike move by their class's factor.
  for (const Kernel& k : {ConvKernel(OpKind::kConv2D, 28, 28, 32, 32, 3, 1), ConvKernel(OpKind::kConv2D, 20, 20, 40, 24, 3, 1),
                          ConvKernel(OpKind::kDepthwiseConv2D, 30, 30, 48, 48, 3, 1), BinaryKernel(OpKind::kAdd, 9, 9, 100)}) {
    Expected<Prediction> before = original.Predict(k), after = pack.Predict(k);
    ASSERT_TRUE(before.ok() && after.ok()) << k.Key();
    EXPECT_EQ(after->source, before->source);
    EXPECT_DOUBLE_EQ(after->ms, before->ms * pack.adaptation->Factor(k, before->ms)) << k.Key();
    EXPECT_NEAR(after->ms / before->ms, 3.0, 0.3) << k.Key();
  }
  // The pack now speaks of this machine, says how, and its reference reading is today's.
  EXPECT_NE(pack.info.device.value("key", ""), "elsewhere");
  EXPECT_EQ(pack.adaptation->from_device.value("key", ""), "elsewhere");
  EXPECT_EQ(pack.adaptation->command, options.command);
  EXPECT_NEAR(pack.info.reference_p50_us / original.info.reference_p50_us, 3.0, 0.3);
  EXPECT_DOUBLE_EQ(pack.adaptation->from_reference_p50_us, original.info.reference_p50_us);

  // Saved and read back, it predicts the same.
  Expected<Pack> reread = Pack::FromJson(nlohmann::json::parse(pack.Dump()));
  ASSERT_TRUE(reread.ok()) << reread.status().message();
  const Kernel k = ConvKernel(OpKind::kConv2D, 20, 20, 40, 24, 3, 1);
  EXPECT_DOUBLE_EQ(reread->Predict(k)->ms, pack.Predict(k)->ms);
  EXPECT_EQ(reread->Dump(), pack.Dump());
}

TEST(AdaptTest, TheSameMachineLeavesThePackAlone) {
  const BackendRegistry same = SpinRegistry(1);
  AdaptOptions options;
  options.budget_secs = 10;
  std::ostringstream log;
  Expected<AdaptResult> adapted = RunAdapt(SpinPack(), options, same, log);
  ASSERT_TRUE(adapted.ok()) << adapted.status().message();
  for (const auto& [name, c] : adapted->pack.adaptation->classes)
    EXPECT_NEAR(c.Factor(std::sqrt(c.lo_ms * c.hi_ms)), 1.0, 0.1) << name << "\n" << log.str();
}

TEST(AdaptTest, BadBudgetsAndPacksWithoutTablesAreRefused) {
  const BackendRegistry same = SpinRegistry(1);
  std::ostringstream log;
  AdaptOptions short_budget;
  short_budget.budget_secs = 5;
  Expected<AdaptResult> too_short = RunAdapt(SpinPack(), short_budget, same, log);
  ASSERT_FALSE(too_short.ok());
  EXPECT_NE(too_short.status().message().find("--budget must be at least 10s"), std::string::npos);

  Pack no_tables = SpinPack();
  for (auto& [kind, model] : no_tables.kinds) model.table.reset();
  Expected<AdaptResult> nothing = RunAdapt(std::move(no_tables), AdaptOptions{}, same, log);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("keeps no measured kernels"), std::string::npos)
      << nothing.status().message();

  Pack unknown = SpinPack();
  unknown.info.backend = "no-such-backend";
  EXPECT_FALSE(RunAdapt(std::move(unknown), AdaptOptions{}, same, log).ok());
}

TEST(PackAdaptationTest, FitsAFactorThatGrowsWithSizeAndRefusesImpossibleValues) {
  // This machine is 2x slower on small kernels and 4x on large ones: the slope says so.
  std::vector<AdaptationPoint> points;
  for (double ms : {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0})
    points.push_back({ms, ms * 2 * std::pow(ms / 0.01, std::log(2.0) / std::log(100.0))});
  Expected<ClassAdaptation> fit = FitClassAdaptation(points);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->Factor(0.01), 2.0, 1e-9);
  EXPECT_NEAR(fit->Factor(1.0), 4.0, 1e-9);
  EXPECT_NEAR(fit->Factor(100.0), 4.0, 1e-9);  // flat beyond what was measured
  EXPECT_NEAR(fit->spread, 0.0, 1e-12);
  // Too few points for a slope: the median ratio.
  Expected<ClassAdaptation> flat = FitClassAdaptation(std::vector<AdaptationPoint>{{1, 2}, {2, 3}, {4, 10}});
  ASSERT_TRUE(flat.ok());
  EXPECT_DOUBLE_EQ(flat->slope, 0);
  EXPECT_NEAR(flat->Factor(1), 2.0, 1e-12);
  EXPECT_FALSE(FitClassAdaptation({}).ok());
  EXPECT_FALSE(FitClassAdaptation(std::vector<AdaptationPoint>{{1, 0}}).ok());

  PackAdaptation a;
  a.classes["conv"] = *fit;
  a.command = "latte adapt";
  Expected<PackAdaptation> back = PackAdaptation::FromJson(a.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->classes.at("conv"), *fit);
  nlohmann::json bad = a.ToJson();
  bad["classes"]["conv"]["log_scale"] = 1e9;
  EXPECT_NE(PackAdaptation::FromJson(bad).status().message().find("out of range"), std::string::npos);
  bad = a.ToJson();
  bad["classes"]["gpu"] = bad["classes"]["conv"];
  EXPECT_NE(PackAdaptation::FromJson(bad).status().message().find("'gpu' is not a kernel class"), std::string::npos);
  bad = a.ToJson();
  bad["classes"]["conv"]["ms_range"] = {1.0, 0.5};
  EXPECT_FALSE(PackAdaptation::FromJson(bad).ok());
}

// The largest factor a pack may hold, on the largest time a table may hold: a damaged pack
// answers an error, never an infinite time.
TEST(PackAdaptationTest, AFactorThatOverflowsIsADamagedPackNotInfinity) {
  Pack pack;
  pack.info.threads = 1;
  const Kernel k = ConvKernel(OpKind::kConv2D, 8, 8, 8, 8, 3, 1);
  KindModel& model = pack.kinds[k.Kind()];
  model.kind = k.Kind();
  model.table = std::move(MakePredictor("table", {})).value();
  TrainingSample huge{k, 1, 1e300, 0};
  ASSERT_TRUE(model.table->Fit({&huge, 1}).ok());
  pack.adaptation.emplace();
  pack.adaptation->classes["conv"] = {10.0, 0.3, 1.0, 3e38, 40, 0.0};
  Expected<Prediction> p = pack.Predict(k);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("the pack is damaged"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace latte
