#include "predict/context_model.h"

#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibrate/fit_store.h"
#include "db/store.h"
#include "profile/space.h"

namespace latte {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

// A network of chained layers (each reading the one before, every third also the one three back)
// with tensors of 0.25–12 MiB, times alone drawn at random and times in the graph from `truth`.
std::vector<StoredGraphLayer> SyntheticNetwork(const std::string& name, SplitMix64& rng, const ContextModel& truth) {
  std::vector<LayerTraffic> traffic;
  std::vector<double> alone;
  std::vector<OpKind> ops;
  const int layers = 8 + static_cast<int>(rng.Below(8));
  for (int i = 0; i < layers; ++i) {
    LayerTraffic t;
    const double weights = rng.Uniform() * 2 * kMiB;
    t.weight_bytes = i % 4 == 3 ? 0 : static_cast<std::int64_t>(weights);  // every fourth an elementwise op
    // Layers of each class of kernel: convs and dense products (with weights), adds and transposes.
    ops.push_back(i % 4 == 3 ? (rng.Below(2) == 0 ? OpKind::kAdd : OpKind::kTranspose)
                             : (rng.Below(2) == 0 ? OpKind::kConv2D : OpKind::kFullyConnected));
    t.output_bytes = kMiB / 4 + static_cast<std::int64_t>(rng.Uniform() * 12 * kMiB);
    t.inputs.push_back({i - 1, i == 0 ? kMiB : traffic.back().output_bytes});
    if (truth.layout_block > 0 && i % 3 == 1) t.layout_bytes = t.output_bytes;  // ORT's reorders around some layers
    // Every other one of them on channel planes of whole 4 KiB pages, when the truth prices those apart.
    if (truth.layout_paged_ms_per_mib > 0 && i % 6 == 1) t.layout_paged_bytes = t.layout_bytes;
    if (i >= 3 && i % 3 == 0) t.inputs.push_back({i - 3, traffic[static_cast<std::size_t>(i - 3)].output_bytes});
    traffic.push_back(t);
    alone.push_back(0.05 + 2 * rng.Uniform());
  }
  const std::vector<double> extra = truth.ExtraMs(traffic, alone, ops);
  double layout_bytes = 0, paged_bytes = 0;
  for (const LayerTraffic& t : traffic) {
    layout_bytes += static_cast<double>(t.layout_bytes);
    paged_bytes += static_cast<double>(t.layout_paged_bytes);
  }
  std::vector<StoredGraphLayer> rows;
  for (int i = 0; i < layers; ++i) {
    StoredGraphLayer row;
    row.campaign = 1;
    row.record.graph = name;
    row.record.layer = i;
    row.record.kernel.op = ops[static_cast<std::size_t>(i)];
    row.record.traffic = traffic[static_cast<std::size_t>(i)];
    row.record.alone_us = 1000 * alone[static_cast<std::size_t>(i)];
    row.record.in_graph_us = 1000 * (alone[static_cast<std::size_t>(i)] + extra[static_cast<std::size_t>(i)]);
    // The network's reorders as its profile timed them, when the truth says they were recorded.
    if (truth.layout_measured)
      row.record.graph_layout_us =
          1000 * (truth.layout_ms_per_mib * layout_bytes + truth.layout_paged_ms_per_mib * paged_bytes) / kMiB;
    rows.push_back(std::move(row));
  }
  return rows;
}

ContextModel Truth() {
  ContextModel truth;
  truth.share = 0.03;
  truth.l2_ms_per_mib = 0.002;
  truth.l3_ms_per_mib = 0.009;
  truth.weightless_l2_ms_per_mib = 0.004;
  truth.weightless_l3_ms_per_mib = 0.02;
  truth.l2_bytes = kMiB;
  truth.l3_bytes = 16 * kMiB;  // half of the 32 MiB L3 below: other tenants take the rest
  truth.memory = TensorMemory::kOwnBuffers;
  return truth;
}

std::vector<StoredGraphLayer> Networks(int count, const ContextModel& truth = Truth()) {
  SplitMix64 rng(3);
  std::vector<StoredGraphLayer> all;
  for (int g = 0; g < count; ++g) {
    auto network = SyntheticNetwork("net " + std::to_string(g), rng, truth);
    all.insert(all.end(), network.begin(), network.end());
  }
  return all;
}

TEST(ContextModel, RecoversTheCoefficientsAndTheL3ShareOfExactData) {
  const std::vector<StoredGraphLayer> layers = Networks(12);
  auto model = FitContextModel(GroupNetworks(layers), {kMiB, 32 * kMiB}, {TensorMemory::kArena, TensorMemory::kOwnBuffers});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->l2_bytes, kMiB);
  EXPECT_EQ(model->l3_bytes, 16 * kMiB);
  EXPECT_EQ(model->memory, TensorMemory::kOwnBuffers);
  EXPECT_NEAR(model->share, 0.03, 1e-9);
  EXPECT_NEAR(model->l2_ms_per_mib, 0.002, 1e-9);
  EXPECT_NEAR(model->l3_ms_per_mib, 0.009, 1e-9);
  EXPECT_NEAR(model->weightless_l2_ms_per_mib, 0.004, 1e-9);
  EXPECT_NEAR(model->weightless_l3_ms_per_mib, 0.02, 1e-9);
  EXPECT_EQ(model->graphs, 12u);
  EXPECT_EQ(model->layers, layers.size());
  EXPECT_EQ(model->folds, 12);  // each network held out in turn
  EXPECT_LT(model->cv_rmspe_pct, 0.01);
  EXPECT_GT(model->cv_alone_rmspe_pct, 1);  // the networks do run slower than their layers alone
}

// Every layer pays 20 µs in a graph whatever its size (its code and descriptors cold; the layers
// take 0.05–2 ms alone): the fit finds that beside the share, the pack keeps it, and a pack from
// before the term has none.
TEST(ContextModel, RecoversWhatEveryLayerCostsInAGraphWhateverItsSize) {
  ContextModel truth = Truth();
  truth.layer_ms = 0.02;
  const std::vector<StoredGraphLayer> layers = Networks(12, truth);
  auto model = FitContextModel(GroupNetworks(layers), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_NEAR(model->layer_ms, 0.02, 1e-9);
  EXPECT_NEAR(model->share, 0.03, 1e-9);
  EXPECT_NEAR(model->l3_ms_per_mib, 0.009, 1e-9);
  EXPECT_LT(model->cv_rmspe_pct, 0.1);
  // Layers alone 1 µs and 1 ms each take the 20 µs more (beside their share and cache terms); a
  // node no kernel covers is not a layer the pack prices.
  const std::vector<LayerTraffic> traffic(3);
  const std::vector<double> alone = {0.001, 1.0, 0.0};
  const std::vector<OpKind> ops = {OpKind::kAdd, OpKind::kConv2D, OpKind::kOpaque};
  ContextModel without = *model;
  without.layer_ms = 0;
  const std::vector<double> with_term = model->ExtraMs(traffic, alone, ops), without_term = without.ExtraMs(traffic, alone, ops);
  EXPECT_NEAR(with_term[0] - without_term[0], model->layer_ms, 1e-12);
  EXPECT_NEAR(with_term[1] - without_term[1], model->layer_ms, 1e-12);
  EXPECT_EQ(with_term[2], 0.0);
  auto back = ContextModel::FromJson(nlohmann::json::parse(model->ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, *model);
  nlohmann::json older = model->ToJson();
  older.erase("layer_ms");
  auto old = ContextModel::FromJson(older);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->layer_ms, 0.0);
  older["layer_ms"] = -1;
  EXPECT_FALSE(ContextModel::FromJson(older).ok());
}

// ONNX Runtime reorders some layers' outputs between layouts in the graph, at 0.05 ms per MiB: the
// fit finds the coefficient, and the pack keeps it with the block it was counted with.
TEST(ContextModel, RecoversTheCostOfLayoutChangesWhereTheNetworksHaveThem) {
  ContextModel truth = Truth();
  truth.layout_block = 16;
  truth.layout_ms_per_mib = 0.05;
  auto model = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers}, 16);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->layout_block, 16);
  EXPECT_NEAR(model->layout_ms_per_mib, 0.05, 1e-9);
  EXPECT_NEAR(model->share, 0.03, 1e-9);
  EXPECT_LT(model->cv_rmspe_pct, 0.01);
  const nlohmann::json json = model->ToJson();
  EXPECT_EQ(json.at("layout").at("nchwc_block"), 16);
  auto back = ContextModel::FromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->layout_block, 16);
  EXPECT_DOUBLE_EQ(back->layout_ms_per_mib, model->layout_ms_per_mib);
  // A layer with 2 MiB reordered around it takes 0.1 ms more; none without.
  ContextModel layout_only;
  layout_only.layout_block = 16;
  layout_only.layout_ms_per_mib = 0.05;
  layout_only.l2_bytes = kMiB;
  layout_only.l3_bytes = 16 * kMiB;
  LayerTraffic reordered;
  reordered.layout_bytes = 2 * kMiB;
  EXPECT_EQ(layout_only.ExtraMs({reordered, LayerTraffic{}}, {1.0, 1.0}, {OpKind::kConv2D, OpKind::kConv2D}),
            (std::vector<double>{0.1, 0.0}));
  // Without networks that have layout changes the coefficient stays zero; JSON without "layout"
  // is a pack from before it.
  auto plain = FitContextModel(GroupNetworks(Networks(12)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->layout_block, 0);
  EXPECT_EQ(plain->layout_ms_per_mib, 0);
  EXPECT_FALSE(plain->ToJson().contains("layout"));
  nlohmann::json bad = json;
  bad["layout"]["nchwc_block"] = 12;
  EXPECT_FALSE(ContextModel::FromJson(bad).ok());
  bad = json;
  bad["layout"]["ms_per_mib"] = -1;
  EXPECT_FALSE(ContextModel::FromJson(bad).ok());
}

// Reorders of channel planes in whole 4 KiB pages cost more per MiB (ORT's reorders of 128×128
// maps against 120×120 ones): the fit finds both coefficients, and the pack keeps them.
TEST(ContextModel, RecoversTheExtraCostOfReordersOfWholePagePlanes) {
  ContextModel truth = Truth();
  truth.layout_block = 16;
  truth.layout_ms_per_mib = 0.05;
  truth.layout_paged_ms_per_mib = 0.12;
  auto model = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers}, 16);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_NEAR(model->layout_ms_per_mib, 0.05, 1e-9);
  EXPECT_NEAR(model->layout_paged_ms_per_mib, 0.12, 1e-9);
  EXPECT_LT(model->cv_rmspe_pct, 0.01);
  auto back = ContextModel::FromJson(nlohmann::json::parse(model->ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->layout_paged_ms_per_mib, model->layout_paged_ms_per_mib);
  // A pack from before the split has no paged cost; a negative one is refused.
  nlohmann::json old = model->ToJson();
  old["layout"].erase("paged_ms_per_mib");
  auto before = ContextModel::FromJson(old);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(before->layout_paged_ms_per_mib, 0);
  nlohmann::json bad = model->ToJson();
  bad["layout"]["paged_ms_per_mib"] = -0.1;
  EXPECT_FALSE(ContextModel::FromJson(bad).ok());

  // 2 MiB reordered around a layer, 1 MiB of it on whole-page planes: 2 × 0.05 + 1 × 0.12 ms.
  ContextModel layout_only;
  layout_only.layout_block = 16;
  layout_only.layout_ms_per_mib = 0.05;
  layout_only.layout_paged_ms_per_mib = 0.12;
  layout_only.l2_bytes = kMiB;
  layout_only.l3_bytes = 16 * kMiB;
  // SetLayoutBytes from the reorders: 16 channels of 128×128 (1 MiB, whole pages) and of 120×120
  // (900 KiB, not) in the first layer; 8 channels of 64×64 held as 16 (0.25 MiB, whole pages but
  // only 8 planes) and 32 of 32×32 (128 KiB, whole pages) in the second; none in the third.
  std::vector<LayerTraffic> traffic(3);
  SetLayoutBytes({{NchwcReorder{false, 16, 128, 128, kMiB}, NchwcReorder{true, 16, 120, 120, 16 * 120 * 120 * 4}},
                  {NchwcReorder{false, 8, 64, 64, kMiB / 4}, NchwcReorder{true, 32, 32, 32, kMiB / 8}}},
                 traffic);
  EXPECT_EQ(traffic[0].layout_bytes, kMiB + 16 * 120 * 120 * 4);
  EXPECT_EQ(traffic[0].layout_paged_bytes, kMiB);
  EXPECT_EQ(traffic[1].layout_bytes, kMiB / 4 + kMiB / 8);
  EXPECT_EQ(traffic[1].layout_paged_bytes, kMiB / 8);
  EXPECT_EQ(traffic[2].layout_bytes, 0);
  LayerTraffic reordered;
  reordered.layout_bytes = 2 * kMiB;
  reordered.layout_paged_bytes = kMiB;
  const std::vector<double> extra = layout_only.ExtraMs({reordered}, {1.0}, {OpKind::kConv2D});
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_NEAR(extra[0], 2 * 0.05 + 0.12, 1e-12);
}

// The networks recorded their reorders' time: the cost per MiB is that time over their bytes (kept
// where the held-out networks cannot tell it from a fitted one), and the rest is fitted to what it
// leaves.
TEST(ContextModel, TakesTheLayoutCostTheNetworksMeasured) {
  ContextModel truth = Truth();
  truth.class_shares = std::array<double, kContextClasses>{0.2, 0.0, 0.5, 0.05};
  truth.layout_block = 16;
  truth.layout_ms_per_mib = 0.08;
  truth.layout_measured = true;
  auto model = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers}, 16);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->layout_measured);
  EXPECT_NEAR(model->layout_ms_per_mib, 0.08, 1e-12);
  ASSERT_TRUE(model->class_shares.has_value());
  for (std::size_t i = 0; i < kContextClasses; ++i) EXPECT_NEAR((*model->class_shares)[i], (*truth.class_shares)[i], 1e-9) << i;
  EXPECT_LT(model->cv_rmspe_pct, 0.01);
  EXPECT_EQ(model->ToJson().at("layout").at("measured"), true);
  auto back = ContextModel::FromJson(nlohmann::json::parse(model->ToJson().dump()));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->layout_measured);

  // Reorders of whole-page planes at 0.12 ms per MiB more, as the profiles timed them: both rates
  // measured, neither one rate for all (which would overprice the others and underprice those).
  ContextModel paged = truth;
  paged.layout_paged_ms_per_mib = 0.12;
  auto both = FitContextModel(GroupNetworks(Networks(12, paged)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers}, 16);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_TRUE(both->layout_measured);
  EXPECT_NEAR(both->layout_ms_per_mib, 0.08, 1e-9);
  EXPECT_NEAR(both->layout_paged_ms_per_mib, 0.12, 1e-9);
  EXPECT_LT(both->cv_rmspe_pct, 0.01);

  // The same networks saying their reorders took twice the time their layers lost: that rate would
  // leave the held-out networks' sums off, so the fitted one is chosen.
  std::vector<StoredGraphLayer> doubled = Networks(12, truth);
  for (StoredGraphLayer& row : doubled) row.record.graph_layout_us *= 2;
  auto twice = FitContextModel(GroupNetworks(doubled), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers}, 16);
  ASSERT_TRUE(twice.ok());
  EXPECT_FALSE(twice->layout_measured);
  EXPECT_NEAR(twice->layout_ms_per_mib, 0.08, 1e-9);
}

// One share for every layer fits these networks exactly: shares per class would fit them no
// better, and are not chosen.
TEST(ContextModel, KeepsOneShareWhenEveryClassTakesTheSame) {
  auto model = FitContextModel(GroupNetworks(Networks(12)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_FALSE(model->class_shares.has_value());
  EXPECT_EQ(model->ShareText(), "3.0% of the time alone");
}

// Convs take 20% longer in the graph, dense products nothing, data movement half again, the rest
// 5%: one share cannot fit both a network heavy in convs and one heavy in dense products, the
// shares per class can, and the held-out networks choose them.
TEST(ContextModel, FitsASharePerClassOfKernelWhenTheClassesDiffer) {
  ContextModel truth = Truth();
  truth.class_shares = std::array<double, kContextClasses>{0.2, 0.0, 0.5, 0.05};
  auto model = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_TRUE(model->class_shares.has_value());
  for (std::size_t i = 0; i < kContextClasses; ++i) EXPECT_NEAR((*model->class_shares)[i], (*truth.class_shares)[i], 1e-9) << i;
  EXPECT_NEAR(model->l3_ms_per_mib, 0.009, 1e-9);
  EXPECT_LT(model->cv_rmspe_pct, 0.01);
  EXPECT_EQ(model->ShareText(), "conv 20.0%, dense 0.0%, data_movement 50.0%, other 5.0% of the time alone");
  // Each layer takes its class's share: a transpose half its time, a matmul none.
  ContextModel shares = *model;
  shares.l2_ms_per_mib = shares.l3_ms_per_mib = shares.weightless_l2_ms_per_mib = shares.weightless_l3_ms_per_mib = 0;
  const std::vector<double> extra =
      shares.ExtraMs({LayerTraffic{}, LayerTraffic{}, LayerTraffic{}}, {1.0, 2.0, 3.0},
                     {OpKind::kTranspose, OpKind::kMatMul, OpKind::kDepthwiseConv2D});
  EXPECT_NEAR(extra[0], 0.5, 1e-12);
  EXPECT_NEAR(extra[1], 0.0, 1e-12);
  EXPECT_NEAR(extra[2], 0.6, 1e-12);
  // The pack keeps the shares and no single one: a reader that knows only one share refuses it.
  const nlohmann::json json = model->ToJson();
  EXPECT_FALSE(json.contains("share"));
  auto back = ContextModel::FromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, *model);
  nlohmann::json bad = json;
  bad["class_shares"].erase("dense");
  auto missing = ContextModel::FromJson(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("context: class_shares"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("dense"), std::string::npos) << missing.status().message();
}

// Networks with one share, but in `odd` of them the transposes took 80% longer in the graph:
// shares per class fit those better when held out, and lower the held-out RMSPE by more than
// kClassSharesMinGainPct. A gain that a few networks make is noise, not a class: with two such
// networks of twelve one share stays; when every network shows it, the class gets its share.
std::vector<StoredGraphLayer> SlowTransposesIn(int odd) {
  std::vector<StoredGraphLayer> layers = Networks(12);
  for (StoredGraphLayer& row : layers)
    if (row.record.kernel.op == OpKind::kTranspose && std::stoi(row.record.graph.substr(4)) < odd)
      row.record.in_graph_us += 0.8 * row.record.alone_us;
  return layers;
}

TEST(ContextModel, ASharePerClassMustBeBetterOnMoreThanAFewNetworks) {
  auto few = FitContextModel(GroupNetworks(SlowTransposesIn(2)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(few.ok()) << few.status().message();
  EXPECT_LT(few->cv_class_shares_rmspe_pct, few->cv_one_share_rmspe_pct - kClassSharesMinGainPct);
  EXPECT_FALSE(few->class_shares.has_value()) << few->ShareText();
  EXPECT_EQ(few->cv_rmspe_pct, few->cv_one_share_rmspe_pct);

  auto every = FitContextModel(GroupNetworks(SlowTransposesIn(12)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(every.ok()) << every.status().message();
  ASSERT_TRUE(every->class_shares.has_value()) << every->cv_one_share_rmspe_pct << " " << every->cv_class_shares_rmspe_pct;
  EXPECT_GT((*every->class_shares)[static_cast<std::size_t>(ContextClass::kDataMovement)], 0.3) << every->ShareText();
  EXPECT_EQ(every->cv_rmspe_pct, every->cv_class_shares_rmspe_pct);
  // The pack keeps both errors, which decided.
  auto back = ContextModel::FromJson(nlohmann::json::parse(every->ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, *every);
}

TEST(ContextModel, RecoversTheArenaWhenTheNetworksRanInOne) {
  ContextModel truth = Truth();
  truth.memory = TensorMemory::kArena;
  auto model = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->memory, TensorMemory::kArena);
  EXPECT_EQ(model->l3_bytes, 16 * kMiB);
  // Not exactly: in the arena an input its producer just wrote is often found in L3, and some
  // small layers reach the floor of half their time alone, which no linear fit reproduces (the
  // per-layer term takes a little of it, under a sixth of the smallest layer).
  EXPECT_NEAR(model->l3_ms_per_mib, 0.009, 0.0006);
  EXPECT_LT(model->layer_ms, 0.05 / 6);
  EXPECT_LT(model->cv_rmspe_pct, 1.0);
  // Told to simulate only each tensor in its own memory, it fits worse.
  auto own = FitContextModel(GroupNetworks(Networks(12, truth)), {kMiB, 32 * kMiB}, {TensorMemory::kOwnBuffers});
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->memory, TensorMemory::kOwnBuffers);
  EXPECT_GT(own->cv_rmspe_pct, model->cv_rmspe_pct + 0.1);
}

// Unless told to choose, the fit simulates the arena every executor Latte runs has, even on
// networks that ran with each tensor in memory of its own.
TEST(ContextModel, SimulatesTheArenaUnlessToldToChoose) {
  auto model = FitContextModel(GroupNetworks(Networks(12)), {kMiB, 32 * kMiB});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->memory, TensorMemory::kArena);
}

// Small layers (10–30 µs) take 60% longer in the graph, large ones (1–3 ms) 5% longer: each
// network's sum is about 5.6% over its layers alone. Minimising each layer's relative error gives
// the small layers' share to the large ones (about a third, every network 25% too slow);
// minimising each network's fits the sums, and the held-out networks choose it.
TEST(ContextModel, FitsTheNetworksSumsWhereTheLayersDisagree) {
  SplitMix64 rng(5);
  std::vector<StoredGraphLayer> layers;
  for (int g = 0; g < 12; ++g) {
    for (int i = 0; i < 12; ++i) {
      const bool small = i % 2 == 1;
      const double alone = small ? 0.01 + 0.02 * rng.Uniform() : 1 + 2 * rng.Uniform();
      StoredGraphLayer row;
      row.campaign = 1;
      row.record.graph = "net " + std::to_string(g);
      row.record.layer = i;
      row.record.traffic = {small ? 0 : 1024, 4096, {{i - 1, 4096}}};  // far below the caches: no cache term
      row.record.alone_us = 1000 * alone;
      row.record.in_graph_us = 1000 * alone * (small ? 1.6 : 1.05);
      layers.push_back(std::move(row));
    }
  }
  auto model = FitContextModel(GroupNetworks(layers), {kMiB, 32 * kMiB});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->objective, ContextObjective::kNetworks);
  EXPECT_GT(model->share, 0.05);
  EXPECT_LT(model->share, 0.06);
  EXPECT_LT(model->cv_rmspe_pct, 0.2);
  EXPECT_GT(model->cv_alone_rmspe_pct, 5);
}

TEST(ContextModel, KeepsCoefficientsNonNegative) {
  // Layers that run faster in the graph than alone, by a share of their time: nothing negative
  // is fitted; the model predicts no extra time instead.
  std::vector<StoredGraphLayer> layers = Networks(6);
  for (StoredGraphLayer& row : layers) row.record.in_graph_us = 0.9 * row.record.alone_us;
  auto model = FitContextModel(GroupNetworks(layers), {kMiB, 32 * kMiB});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_GE(model->share, 0);
  EXPECT_GE(model->l2_ms_per_mib, 0);
  EXPECT_GE(model->l3_ms_per_mib, 0);
}

TEST(ContextModel, RefusesTooFewNetworksAndUnknownCaches) {
  auto few = FitContextModel(GroupNetworks(Networks(3)), {kMiB, 32 * kMiB});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("3 networks measured in context; at least 4"), std::string::npos)
      << few.status().message();
  auto caches = FitContextModel(GroupNetworks(Networks(6)), {0, 0});
  ASSERT_FALSE(caches.ok());
  EXPECT_NE(caches.status().message().find("L2 and L3 sizes"), std::string::npos);
}

TEST(ContextModel, NeverTakesALayerBelowHalfItsTimeAlone) {
  ContextModel model = Truth();
  model.l2_ms_per_mib = 100;  // a layer whose producer left its input in L2 "gains" a lot
  LayerTraffic first{0, 512 * 1024, {{-1, 1024}}};
  LayerTraffic second{0, 1024, {{0, 512 * 1024}}};
  const std::vector<double> extra = model.ExtraMs({first, second}, {1.0, 1.0}, {OpKind::kConv2D, OpKind::kAdd});
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_GE(extra[1], -0.5);
}

TEST(ContextModel, JsonRoundTripsExactlyAndNamesBadFields) {
  ContextModel model = Truth();
  model.share = 0.1 / 3;
  model.graphs = 40;
  model.layers = 1234;
  model.folds = 5;
  model.cv_alone_rmspe_pct = 10.0 / 3;
  model.cv_rmspe_pct = 7.0 / 3;
  auto back = ContextModel::FromJson(nlohmann::json::parse(model.ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, model);
  nlohmann::json bad = model.ToJson();
  bad["share"] = -0.5;
  auto negative = ContextModel::FromJson(bad);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("share"), std::string::npos);
  bad = model.ToJson();
  bad.erase("l3_bytes");
  EXPECT_FALSE(ContextModel::FromJson(bad).ok());
  bad = model.ToJson();
  bad["l2_bytes"] = 0;
  EXPECT_FALSE(ContextModel::FromJson(bad).ok());
  bad = model.ToJson();
  bad["graphs"] = -3;
  auto wrapped = ContextModel::FromJson(bad);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_EQ(wrapped.status().message(), "context: field 'graphs' is not a count (a whole number ≥ 0)");
}

TEST(ContextModel, LayersWithoutWeightsHaveTheirOwnCacheCoefficientsAndOlderPacksSharedThem) {
  ContextModel model = Truth();
  // A layer with 2 MiB of weights and one reading a 2 MiB graph input, on a 3 MiB L3: each finds
  // its bytes alone, and loses half of them in the graph (the other's came in between).
  model.share = 0;
  model.l3_bytes = 3 * kMiB;
  LayerTraffic conv{2 * kMiB, 0, {}};
  LayerTraffic add{0, 0, {{-1, 2 * kMiB}}};
  const std::vector<double> lost2 = ExtraMissBytes({conv, add}, model.l2_bytes, model.memory);
  const std::vector<double> lost3 = ExtraMissBytes({conv, add}, model.l3_bytes, model.memory);
  ASSERT_DOUBLE_EQ(lost3[0], kMiB);
  ASSERT_DOUBLE_EQ(lost3[1], kMiB);
  const std::vector<double> extra = model.ExtraMs({conv, add}, {1.0, 1.0}, {OpKind::kConv2D, OpKind::kAdd});
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_NEAR(extra[0], (0.002 * lost2[0] + 0.009 * lost3[0]) / kMiB, 1e-12);
  EXPECT_NEAR(extra[1], (0.004 * lost2[1] + 0.02 * lost3[1]) / kMiB, 1e-12);
  auto back = ContextModel::FromJson(nlohmann::json::parse(model.ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, model);
  nlohmann::json older = model.ToJson();
  older.erase("weightless");  // a pack from before the split
  auto read = ContextModel::FromJson(older);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->weightless_l2_ms_per_mib, model.l2_ms_per_mib);
  EXPECT_EQ(read->weightless_l3_ms_per_mib, model.l3_ms_per_mib);
  nlohmann::json bad = model.ToJson();
  bad["weightless"]["l3_ms_per_mib"] = -1;
  auto negative = ContextModel::FromJson(bad);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("context: weightless"), std::string::npos) << negative.status().message();
  EXPECT_NE(negative.status().message().find("l3_ms_per_mib"), std::string::npos) << negative.status().message();
}

TEST(ContextModel, JsonSaysWhereTheActivationsLiveAndOlderPacksMeantTheirOwnMemory) {
  ContextModel model = Truth();
  for (TensorMemory memory : {TensorMemory::kArena, TensorMemory::kOwnBuffers}) {
    model.memory = memory;
    auto back = ContextModel::FromJson(nlohmann::json::parse(model.ToJson().dump()));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, model);
  }
  EXPECT_EQ(model.ToJson()["memory"], "own-buffers");
  model.memory = TensorMemory::kArena;
  nlohmann::json older = model.ToJson();
  older.erase("memory");  // a pack from before the arena simulation
  auto read = ContextModel::FromJson(older);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->memory, TensorMemory::kOwnBuffers);
  nlohmann::json bad = model.ToJson();
  bad["memory"] = "heap";
  auto unknown = ContextModel::FromJson(bad);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "context: memory is \"heap\", not \"arena\" or \"own-buffers\"");
}

TEST(ContextModel, JsonSaysWhatWasMinimisedAndOlderPacksMinimisedEachLayer) {
  ContextModel model = Truth();
  model.objective = ContextObjective::kNetworks;
  EXPECT_EQ(model.ToJson()["objective"], "networks");
  auto back = ContextModel::FromJson(nlohmann::json::parse(model.ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, model);
  nlohmann::json older = model.ToJson();
  older.erase("objective");  // a pack from before the choice
  auto read = ContextModel::FromJson(older);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->objective, ContextObjective::kLayers);
  nlohmann::json bad = model.ToJson();
  bad["objective"] = "kernels";
  auto unknown = ContextModel::FromJson(bad);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "context: objective is \"kernels\", not \"layers\" or \"networks\"");
}

}  // namespace
}  // namespace latte

#include "../cli/run_latte.h"
#include "../test_campaigns.h"

namespace latte {
namespace {

// A store with conv measurements and, optionally, networks measured in context on 1 MiB L2 and
// 32 MiB L3; returns its path.
std::string StoreWithNetworks(const testing::TempDir& dir, int networks) {
  const std::string path = (dir.path() / "ctx.db").string();
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().message();
  const std::int64_t device = *store->UpsertDevice({"test-device", "a test device", "{}"});
  const std::int64_t backend = *store->UpsertBackend({"xnnpack", "1.0", 1, "fp32"});
  std::vector<MeasurementRecord> measurements;
  for (std::int64_t c = 8; c <= 64; c += 8) {
    MeasurementRecord record;
    record.kernel = ConvKernel(OpKind::kConv2D, 16, 16, c, c, 3, 1);
    record.stats.n = 10;
    record.stats.p50 = 10.0 * static_cast<double>(c);
    record.stats.p10 = record.stats.p90 = record.stats.p50;
    measurements.push_back(record);
  }
  EXPECT_TRUE(store->InsertMeasurements(device, backend, measurements).ok());
  if (networks > 0) {
    auto campaign = store->FindOrCreateCampaign(TestCampaignKey("graph-context", R"({"l2_bytes":1048576,"l3_bytes":33554432})"));
    EXPECT_TRUE(campaign.ok());
    std::vector<GraphLayerRecord> records;
    ContextModel truth = Truth();
    truth.memory = TensorMemory::kArena;  // as the executors run them
    for (const StoredGraphLayer& row : Networks(networks, truth)) {
      records.push_back(row.record);
      records.back().kernel = ConvKernel(OpKind::kConv2D, 16, 16, 8, 8, 3, 1);
    }
    EXPECT_TRUE(store->InsertGraphLayers(device, backend, campaign->id, records).ok());
  }
  return path;
}

StoreFitRequest Request(const std::string& db) {
  StoreFitRequest request;
  request.db = db;
  request.filter.backend = "xnnpack";
  request.options.folds = 2;
  return request;
}

TEST(ContextModel, StoreFitFitsItFromTheLayersMeasuredInContext) {
  testing::TempDir dir;
  auto fit = FitFromStore(Request(StoreWithNetworks(dir, 8)));
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_TRUE(fit->fit.pack.context.has_value());
  EXPECT_EQ(fit->fit.pack.context->graphs, 8u);
  EXPECT_EQ(fit->fit.pack.context->l3_bytes, 16 * kMiB);
  EXPECT_EQ(fit->context_note.rfind("in-graph context: ", 0), 0u) << fit->context_note;
  EXPECT_NE(fit->context_note.find("(16 MiB simulated; activations' memory: arena)"), std::string::npos) << fit->context_note;
  // The arena's reuse is not exactly linear in the bytes (RecoversTheArenaWhenTheNetworksRanInOne).
  EXPECT_NEAR(fit->fit.pack.context->share, 0.03, 0.02);
}

// One conv 72→72 measured (p10, p50, p90 in µs) at `time` in a "profile" campaign of the store at
// `path`; returns the campaign (0 on failure, which the expectations report).
std::int64_t AddProfileMeasurement(const std::string& path, const std::string& time, double p10, double p50,
                                   double p90) {
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return 0;
  auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", "{}"));
  EXPECT_TRUE(campaign.ok());
  if (!campaign.ok()) return 0;
  MeasurementRecord record;
  record.kernel = ConvKernel(OpKind::kConv2D, 16, 16, 72, 72, 3, 1);
  record.stats.n = 10;
  record.stats.p10 = p10, record.stats.p50 = p50, record.stats.p90 = p90;
  record.campaign = campaign->id;
  record.time = time;
  const std::int64_t device = *store->UpsertDevice({"test-device", "a test device", "{}"});
  const std::int64_t backend = *store->UpsertBackend({"xnnpack", "1.0", 1, "fp32"});
  EXPECT_TRUE(store->InsertMeasurements(device, backend, {&record, 1}).ok());
  return campaign->id;
}

// The pack keeps what the campaigns read of the drift reference (the lower median of the readings
// and how much they moved) and each measurement's spread: parts of every prediction's interval.
TEST(StoreFit, KeepsTheReferenceReadingsAndEachMeasurementsSpread) {
  testing::TempDir dir;
  const std::string path = StoreWithNetworks(dir, 0);
  {
    // Taken when the reference read its median: not scaled.
    const std::int64_t campaign = AddProfileMeasurement(path, "2026-11-23T10:05:00Z", 700, 720, 700 + 2.563 * 20);
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    for (int i = 0; i <= 10; ++i) {  // 90, 92, ..., 110 µs a minute apart: p10 92, p90 108
      const std::string time = fmt::format("2026-11-23T10:{:02d}:00Z", i);
      ASSERT_TRUE(store->RecordReference({campaign, time, 90.0 + 2 * i, "conv2d|ref|float32"}).ok());
    }
  }
  auto fit = FitFromStore(Request(path));
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const PackInfo& info = fit->fit.pack.info;
  EXPECT_EQ(info.reference_kernel, "conv2d|ref|float32");
  EXPECT_EQ(info.reference_readings, 11u);
  EXPECT_EQ(info.reference_p50_us, 100);
  EXPECT_NEAR(info.reference_spread, std::log(108.0 / 92.0) / 2.563, 1e-12);
  // A table hit's spread is one standard deviation of its measurement, from its p10–p90 range.
  auto hit = fit->fit.pack.Predict(ConvKernel(OpKind::kConv2D, 16, 16, 72, 72, 3, 1));
  ASSERT_TRUE(hit.ok()) << hit.status().message();
  EXPECT_EQ(hit->source, PredictionSource::kTableHit);
  EXPECT_DOUBLE_EQ(hit->ms, 0.72);
  EXPECT_NEAR(hit->spread_ms, 0.020, 1e-12);
}

// Two campaigns hours apart read the reference at 80 and 125 µs (the pack's level, the lower
// median of the readings, is 100): what each measured is scaled to that one machine speed, and the
// fit says so; asked not to, the fit keeps the measurements as stored.
TEST(StoreFit, ScalesEachMeasurementToTheReferencesLevel) {
  testing::TempDir dir;
  const std::string path = StoreWithNetworks(dir, 0);  // its measurements have no campaign
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    const std::int64_t device = *store->UpsertDevice({"test-device", "a test device", "{}"});
    const std::int64_t backend = *store->UpsertBackend({"xnnpack", "1.0", 1, "fp32"});
    const struct {
      const char* space;
      const char* time;
      double reference_us;
      int channels;
    } campaigns[] = {{"fast", "2026-11-23T10:00:00Z", 80, 72}, {"slow", "2026-11-23T18:00:00Z", 125, 80},
                     {"middle", "2026-11-23T14:00:00Z", 100, 88}};
    for (const auto& c : campaigns) {
      auto campaign = store->FindOrCreateCampaign(TestCampaignKey("profile", c.space));
      ASSERT_TRUE(campaign.ok());
      MeasurementRecord record;
      record.kernel = ConvKernel(OpKind::kConv2D, 16, 16, c.channels, c.channels, 3, 1);
      record.stats.n = 10;
      record.stats.p10 = record.stats.p50 = record.stats.p90 = 1000;
      record.campaign = campaign->id;
      record.time = c.time;
      ASSERT_TRUE(store->InsertMeasurements(device, backend, {&record, 1}).ok());
      ASSERT_TRUE(store->RecordReference({campaign->id, c.time, c.reference_us, "conv2d|ref|float32"}).ok());
    }
  }
  auto predict_ms = [](const Pack& pack, std::int64_t channels) {
    auto hit = pack.Predict(ConvKernel(OpKind::kConv2D, 16, 16, channels, channels, 3, 1));
    EXPECT_TRUE(hit.ok() && hit->source == PredictionSource::kTableHit);
    return hit.ok() ? hit->ms : 0;
  };
  auto fit = FitFromStore(Request(path));
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->fit.pack.info.reference_p50_us, 100);
  EXPECT_EQ(fit->fit.pack.info.reference_corrected, 3u);
  EXPECT_DOUBLE_EQ(predict_ms(fit->fit.pack, 72), 1.25);  // measured on a faster machine: scaled up
  EXPECT_DOUBLE_EQ(predict_ms(fit->fit.pack, 80), 0.8);
  EXPECT_DOUBLE_EQ(predict_ms(fit->fit.pack, 88), 1.0);
  EXPECT_DOUBLE_EQ(predict_ms(fit->fit.pack, 8), 0.08);  // no campaign: as measured
  EXPECT_EQ(fit->drift.corrected, 3u);
  EXPECT_EQ(fit->drift.uncorrected, 8u);
  EXPECT_NE(fit->drift.Describe().find("drift-corrected 3 of 11 measurements to the reference's 100.00 µs "
                                       "(factors 0.800–1.250, median 1.000); 8 left as measured"),
            std::string::npos)
      << fit->drift.Describe();

  StoreFitRequest as_stored = Request(path);
  as_stored.correct_drift = false;
  auto raw = FitFromStore(as_stored);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_EQ(raw->fit.pack.info.reference_corrected, 0u);
  EXPECT_DOUBLE_EQ(predict_ms(raw->fit.pack, 72), 1.0);
  EXPECT_DOUBLE_EQ(predict_ms(raw->fit.pack, 80), 1.0);
  EXPECT_EQ(raw->drift.Describe(), "not drift-corrected: fitted on the measurements as stored");
}

// `calibrate --from`: samples from elsewhere join the fit only where the store measured nothing of
// the same kernel (what was measured here wins, and the fit counts both), and never as table hits:
// they are predictions, not measurements of this machine.
TEST(StoreFit, PriorSamplesFillOnlyWhatTheStoreDidNotMeasure) {
  testing::TempDir dir;
  StoreFitRequest request = Request(StoreWithNetworks(dir, 0));  // conv c→c, c = 8..64, at 10·c µs
  const Kernel measured = ConvKernel(OpKind::kConv2D, 16, 16, 16, 16, 3, 1);
  const Kernel unmeasured = ConvKernel(OpKind::kConv2D, 16, 16, 12, 12, 3, 1);
  request.prior = {{measured, 1, 5.0, 0}, {unmeasured, 1, 0.5, 0.01}};
  request.prior_source = "old.json";
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->prior_used, 1u);
  EXPECT_EQ(fit->prior_replaced, 1u);
  EXPECT_EQ(fit->prior_source, "old.json");
  auto here = fit->fit.pack.Predict(measured);
  ASSERT_TRUE(here.ok());
  EXPECT_EQ(here->source, PredictionSource::kTableHit);
  EXPECT_DOUBLE_EQ(here->ms, 0.16);  // the store's, not the prior's 5 ms
  auto prior = fit->fit.pack.Predict(unmeasured);
  ASSERT_TRUE(prior.ok());
  EXPECT_NE(prior->source, PredictionSource::kTableHit);
  EXPECT_EQ(fit->fit.pack.kinds.at("conv2d").samples, 9u);  // the store's 8 and the prior's one

  // 300 more of a kind the store measured 8 of: 200 of them fitted, spread over sizes, none a table hit.
  request.prior.clear();
  for (std::int64_t in = 1; in <= 20; ++in)
    for (std::int64_t out = 1; out <= 15; ++out)
      request.prior.push_back({ConvKernel(OpKind::kConv2D, 20, 20, in, out, 3, 1), 1, 0.001 * double(in * out), 0});
  auto many = FitFromStore(request);
  ASSERT_TRUE(many.ok()) << many.status().message();
  EXPECT_EQ(many->prior_used, 300u);
  EXPECT_EQ(many->prior_fitted, 200u);
  EXPECT_EQ(many->fit.pack.kinds.at("conv2d").samples, 8u + 200u);
  for (const TrainingSample& s : request.prior) {
    auto predicted = many->fit.pack.Predict(s.kernel);
    ASSERT_TRUE(predicted.ok());
    EXPECT_NE(predicted->source, PredictionSource::kTableHit) << s.kernel.Key();
  }
}

// A prior made when the reference read 80 µs joins a fit whose reference level is 100 µs scaled
// by 100 / 80, as a measurement taken then would be.
TEST(StoreFit, APriorIsScaledToTheReferencesLevel) {
  testing::TempDir dir;
  const std::string path = StoreWithNetworks(dir, 0);
  {
    const std::int64_t campaign = AddProfileMeasurement(path, "2026-11-25T10:00:00Z", 720, 720, 720);
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_TRUE(store->RecordReference({campaign, "2026-11-25T10:00:00Z", 100, "ref"}).ok());
  }
  // A kind only the prior has, one kernel of it: interpolation answers exactly that point.
  StoreFitRequest request = Request(path);
  Kernel add;
  add.op = OpKind::kAdd;
  add.params = {{"a0", 1}, {"a1", 8}, {"a2", 8}, {"a3", 16}, {"b0", 1}, {"b1", 8}, {"b2", 8}, {"b3", 16}};
  request.prior = {{add, 1, 0.5, 0.01}};
  request.prior_reference_us = 80;
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_DOUBLE_EQ(fit->prior_scale, 1.25);
  auto scaled = fit->fit.pack.Predict(add);
  ASSERT_TRUE(scaled.ok()) << scaled.status().message();
  EXPECT_EQ(scaled->source, PredictionSource::kInterpolation);
  EXPECT_DOUBLE_EQ(scaled->ms, 0.625);
  request.correct_drift = false;  // as given
  EXPECT_DOUBLE_EQ(FitFromStore(request)->fit.pack.Predict(add)->ms, 0.5);
}

TEST(ContextModel, StoreFitSaysWhyAPackHasNone) {
  testing::TempDir none_dir, few_dir;
  auto none = FitFromStore(Request(StoreWithNetworks(none_dir, 0)));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->fit.pack.context.has_value());
  EXPECT_NE(none->context_note.find("no layers measured in context"), std::string::npos) << none->context_note;
  auto few = FitFromStore(Request(StoreWithNetworks(few_dir, 2)));
  ASSERT_TRUE(few.ok()) << few.status().message();
  EXPECT_FALSE(few->fit.pack.context.has_value());
  EXPECT_NE(few->context_note.find("2 networks measured in context; at least 4"), std::string::npos) << few->context_note;
}

}  // namespace
}  // namespace latte
