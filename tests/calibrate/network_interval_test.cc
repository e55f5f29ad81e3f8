// The interval calibrated on networks measured in context: its quantiles, its JSON, and a store's
// networks corrected to the pack's machine speed before they are used, and the transformer
// encoders' networks calibrated apart.
#include "predict/network_interval.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "calibrate/fit_store.h"
#include "predict/pack.h"
#include "profile/space.h"
#include "../test_campaigns.h"

namespace latte {
namespace {

Kernel Conv(std::int64_t channels) { return ConvKernel(OpKind::kConv2D, 16, 16, channels, channels, 3, 1); }

// A pack whose table holds conv c→c at 10·c µs for c = 8, 16, 24.
Pack TablePack() {
  Pack pack;
  pack.info.backend = "xnnpack";
  pack.info.threads = 1;
  KindModel& model = pack.kinds["conv2d"];
  model.kind = "conv2d";
  model.samples = 3;
  model.table = std::move(MakePredictor("table", {})).value();
  std::vector<TrainingSample> samples;
  for (std::int64_t c : {8, 16, 24}) samples.push_back({Conv(c), 1, 0.01 * double(c), 0});
  EXPECT_TRUE(model.table->Fit(samples).ok());
  return pack;
}

// Network g (0..count-1) of three layers (c = 8, 16, 24) measured in the graph at 1 / (0.9 +
// 0.01·g) times their time alone, which is the table's: predicted / measured = 0.9 + 0.01·g.
std::vector<MeasuredNetwork> Networks(int count, std::int64_t missing_channels = 0) {
  std::vector<MeasuredNetwork> networks;
  for (int g = 0; g < count; ++g) {
    MeasuredNetwork& n = networks.emplace_back();
    for (std::int64_t c : {std::int64_t{8}, std::int64_t{16}, missing_channels ? missing_channels : 24}) {
      n.kernels.push_back(Conv(c));
      n.traffic.emplace_back();
      n.alone_ms.push_back(0.01 * double(c));
      n.in_graph_ms.push_back(0.01 * double(c) / (0.9 + 0.01 * g));
    }
  }
  return networks;
}

TEST(NetworkInterval, TheQuantilesOfPredictedOverMeasuredBoundNinetyPercent) {
  const Pack pack = TablePack();
  auto interval = CalibrateNetworkInterval(pack, nullptr, Networks(21));
  ASSERT_TRUE(interval.ok()) << interval.status().message();
  EXPECT_EQ(interval->networks, 21u);
  EXPECT_EQ(interval->skipped, 0u);
  // Ratios 0.90, 0.91, ..., 1.10: the 5% quantile of 21 is the second, the 95% the twentieth.
  EXPECT_NEAR(interval->predicted_lo, 0.91, 1e-12);
  EXPECT_NEAR(interval->predicted_hi, 1.09, 1e-12);
  EXPECT_NEAR(interval->measured_lo, 0.91, 1e-12);  // the table is the layers' time alone
  EXPECT_NEAR(interval->measured_hi, 1.09, 1e-12);
  // A measured time inside [total / hi, total / lo] is a ratio inside [lo, hi].
  const auto [lo, hi] = interval->Around(1.0, 0);
  EXPECT_NEAR(lo, 1 / 1.09, 1e-12);
  EXPECT_NEAR(hi, 1 / 0.91, 1e-12);
}

TEST(NetworkInterval, NetworksThePackCannotPredictAreLeftOutAndTooFewAreRefused) {
  const Pack pack = TablePack();
  std::vector<MeasuredNetwork> networks = Networks(20);
  const std::vector<MeasuredNetwork> unknown = Networks(3, 40);  // conv 40→40 is in no table
  networks.insert(networks.end(), unknown.begin(), unknown.end());
  auto interval = CalibrateNetworkInterval(pack, nullptr, networks);
  ASSERT_TRUE(interval.ok()) << interval.status().message();
  EXPECT_EQ(interval->networks, 20u);
  EXPECT_EQ(interval->skipped, 3u);

  auto few = CalibrateNetworkInterval(pack, nullptr, Networks(19));
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(few.status().message().find("19 networks"), std::string::npos) << few.status().message();
  EXPECT_NE(few.status().message().find("needs 20"), std::string::npos) << few.status().message();
}

TEST(NetworkInterval, JsonRoundTripsAndImpossibleRatiosAreRefused) {
  const NetworkInterval interval{85, 2, 0.99, 1.37, 0.95, 1.1};
  auto back = NetworkInterval::FromJson(interval.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, interval);
  auto refused = [&](const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json json = interval.ToJson();
    damage(json);
    auto read = NetworkInterval::FromJson(json);
    return read.ok() ? std::string("accepted") : read.status().message();
  };
  EXPECT_NE(refused([](auto& j) { j["predicted"]["lo"] = 1.5; }).find("lo ≤ hi"), std::string::npos);
  EXPECT_NE(refused([](auto& j) { j["measured"]["hi"] = 1e9; }).find("interval: measured"), std::string::npos);
  EXPECT_NE(refused([](auto& j) { j["measured"]["lo"] = -1; }).find("interval: measured"), std::string::npos);
  EXPECT_NE(refused([](auto& j) { j.erase("predicted"); }).find("interval: predicted"), std::string::npos);
  EXPECT_NE(refused([](auto& j) { j["networks"] = -3; }).find("interval"), std::string::npos);
}

// The table's three convs (8, 16 and 24 channels at 0.08, 0.16 and 0.24 ms) measured into
// `store` on `backend` in a profile campaign; returns that campaign's id.
std::int64_t InsertTableMeasurements(Store& store, std::int64_t device, std::int64_t backend) {
  auto profile = store.FindOrCreateCampaign(TestCampaignKey("profile", "{}"));
  EXPECT_TRUE(profile.ok());
  std::vector<MeasurementRecord> measurements;
  for (std::int64_t c : {8, 16, 24}) {
    MeasurementRecord& record = measurements.emplace_back();
    record.kernel = Conv(c);
    record.stats.n = 10;
    record.stats.p10 = record.stats.p50 = record.stats.p90 = 10.0 * double(c);
    record.campaign = profile->id;
    record.time = "2026-11-25T10:00:00Z";
  }
  EXPECT_TRUE(store.InsertMeasurements(device, backend, measurements).ok());
  return profile->id;
}

// An xnnpack store holding the table's measurements, three readings of the reference at 100 µs
// beside them, and a graph-context campaign for networks (no cache sizes in its space: no context
// model, the interval alone is calibrated).
struct TableStore {
  std::int64_t device = 0, backend = 0, networks = 0;
};
TableStore MakeTableStore(Store& store) {
  TableStore ids;
  ids.device = *store.UpsertDevice({"test-device", "a test device", "{}"});
  ids.backend = *store.UpsertBackend({"xnnpack", "1.0", 1, "fp32"});
  const std::int64_t profile = InsertTableMeasurements(store, ids.device, ids.backend);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(store.RecordReference({profile, fmt::format("2026-11-25T10:0{}:00Z", i), 100, "ref"}).ok());
  auto networks = store.FindOrCreateCampaign(TestCampaignKey("graph-context", "{}"));
  EXPECT_TRUE(networks.ok());
  if (networks.ok()) ids.networks = networks->id;
  return ids;
}

// A fit of MakeTableStore's store at `path` (two folds: the table is small).
StoreFitRequest TableStoreFit(const std::string& path) {
  StoreFitRequest request;
  request.db = path;
  request.filter.backend = "xnnpack";
  request.options.folds = 2;
  return request;
}

// Networks(21) as a campaign's layers measured in context: network g's layers alone at `scale` ×
// their time and in the graph at that divided by `ratio(g)`.
std::vector<GraphLayerRecord> NetworkLayers(double scale, const std::function<double(int)>& ratio) {
  std::vector<GraphLayerRecord> layers;
  int g = 0;
  for (const MeasuredNetwork& n : Networks(21)) {
    for (std::size_t i = 0; i < n.kernels.size(); ++i) {
      GraphLayerRecord& layer = layers.emplace_back();
      layer.graph = fmt::format("random-net {}", g);
      layer.layer = static_cast<int>(i);
      layer.kernel = n.kernels[i];
      layer.alone_us = 1000 * scale * n.alone_ms[i];
      layer.in_graph_us = layer.alone_us / ratio(g);
      layer.time = "2026-11-25T11:00:00Z";
    }
    ++g;
  }
  return layers;
}

// A store's networks measured while the machine ran 1.25× slower than the pack's reference level
// (readings of 125 µs in their campaign, 100 in the measurements') are scaled to that level
// before the interval is calibrated on them: the table's times then explain them as they are.
TEST(NetworkInterval, StoreFitCorrectsTheNetworksToThePacksMachineSpeed) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "interval.db").string();
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    const TableStore ids = MakeTableStore(*store);
    const std::vector<GraphLayerRecord> layers = NetworkLayers(1.25, [](int g) { return 0.9 + 0.01 * g; });
    ASSERT_TRUE(store->InsertGraphLayers(ids.device, ids.backend, ids.networks, layers).ok());
    for (const char* time : {"2026-11-25T10:59:00Z", "2026-11-25T11:01:00Z"})
      ASSERT_TRUE(store->RecordReference({ids.networks, time, 125, "ref"}).ok());
  }
  StoreFitRequest request = TableStoreFit(path);
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->fit.pack.info.reference_p50_us, 100);  // the lower median of 100, 100, 100, 125, 125
  EXPECT_EQ(fit->layers_drift.corrected, 63u);
  ASSERT_TRUE(fit->fit.pack.interval.has_value()) << fit->interval_note;
  EXPECT_NEAR(fit->fit.pack.interval->predicted_lo, 0.91, 1e-9);
  EXPECT_NEAR(fit->fit.pack.interval->predicted_hi, 1.09, 1e-9);
  EXPECT_NE(fit->interval_note.find("calibrated on 21 random networks"), std::string::npos) << fit->interval_note;

  request.correct_drift = false;  // as stored: the networks look 1.25× slower than the table
  auto raw = FitFromStore(request);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  ASSERT_TRUE(raw->fit.pack.interval.has_value());
  EXPECT_NEAR(raw->fit.pack.interval->predicted_lo, 0.91 / 1.25, 1e-9);
}

// Network g measured while the reference read 100·(1 + 0.02·(g − 10)) µs, its kernels alone at
// the square root of that change: the fit finds they followed half of the reference's changes (in
// log), corrects the networks by that much, and the pack records it for `latte validate`.
TEST(NetworkInterval, StoreFitCorrectsByTheShareOfTheReferencesChangesTheKernelsFollowed) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "follow.db").string();
  auto level = [](int g) { return 1 + 0.02 * (g - 10); };
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    const TableStore ids = MakeTableStore(*store);
    std::vector<GraphLayerRecord> layers =
        NetworkLayers(1, [](int g) { return 0.9 + 0.01 * g; });  // three layers a network, in order
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const int g = static_cast<int>(i / 3);
      layers[i].time = fmt::format("2026-11-25T11:{:02}:00Z", g);
      layers[i].alone_us *= std::sqrt(level(g));
      layers[i].in_graph_us *= std::sqrt(level(g));
    }
    ASSERT_TRUE(store->InsertGraphLayers(ids.device, ids.backend, ids.networks, layers).ok());
    for (int g = 0; g < 21; ++g)
      ASSERT_TRUE(store->RecordReference({ids.networks, fmt::format("2026-11-25T11:{:02}:00Z", g), 100 * level(g), "ref"}).ok());
  }
  StoreFitRequest request = TableStoreFit(path);
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->fit.pack.info.reference_p50_us, 100);  // 24 readings: 80, 82, …, 98, then four of 100
  ASSERT_TRUE(fit->layers_drift.follow.has_value());
  EXPECT_NEAR(fit->layers_drift.follow->slope, 0.5, 1e-9);
  EXPECT_EQ(fit->layers_drift.follow->measurements, 63u);  // three kernels in 21 networks
  EXPECT_NEAR(fit->fit.pack.info.reference_follow, 0.5, 1e-9);
  EXPECT_NEAR(fit->fit.pack.ToJson()["reference"]["follow"].get<double>(), 0.5, 1e-9);
  EXPECT_NE(fit->drift.Describe().find("by 0.50 of the reference's changes"), std::string::npos) << fit->drift.Describe();
  ASSERT_TRUE(fit->fit.pack.interval.has_value()) << fit->interval_note;
  EXPECT_NEAR(fit->fit.pack.interval->predicted_lo, 0.91, 1e-9);  // each network back at the table's speed
  EXPECT_NEAR(fit->fit.pack.interval->predicted_hi, 1.09, 1e-9);

  request.correct_drift = false;  // nothing corrected: nothing followed to record
  auto raw = FitFromStore(request);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_EQ(raw->fit.pack.info.reference_follow, 1);
  EXPECT_FALSE(raw->fit.pack.ToJson()["reference"].contains("follow"));
}

// A backend whose kernels compute channels a vector at a time gets predictors that count work in
// vectors of the measurements' device (its fingerprint's flags), not of the machine fitting.
TEST(NetworkInterval, StoreFitCountsWorkInTheDevicesChannelVectors) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "tiles.db").string();
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    const std::int64_t device =
        *store->UpsertDevice({"avx2-device", "an AVX2 machine", R"({"isa_flags": ["sse4_2", "avx", "avx2", "fma"]})"});
    InsertTableMeasurements(*store, device, *store->UpsertBackend({"xnnpack", "1.0", 1, "fp32"}));
  }
  StoreFitRequest request;
  request.db = path;
  request.filter.backend = "xnnpack";
  for (bool vectors : {true, false}) {
    request.channels_in_vectors = vectors;
    auto fit = FitFromStore(request);
    ASSERT_TRUE(fit.ok()) << fit.status().message();
    const KindModel& conv = fit->fit.pack.kinds.at("conv2d");
    ASSERT_TRUE(conv.fitted.count("interp"));
    EXPECT_EQ(conv.fitted.at("interp")->ToJson()["channel_tile"], vectors ? 8 : 1);
    EXPECT_EQ(conv.fitted.at("roofline")->ToJson()["channel_tile"], vectors ? 8 : 1);
  }
  // A main op the backend computes otherwise (ONNX Runtime's transposed convs) counts it as is.
  request.channels_in_vectors = true;
  request.options.channels_not_in_vectors = {OpKind::kConv2D};
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const KindModel& conv = fit->fit.pack.kinds.at("conv2d");
  EXPECT_EQ(conv.fitted.at("interp")->ToJson()["channel_tile"], 1);
  EXPECT_EQ(conv.fitted.at("roofline")->ToJson()["channel_tile"], 1);
}

// Networks of the transformer-encoder family (a campaign whose space says "random-encoder") get
// an interval of their own, calibrated on them alone: here they run 0.80–1.00 of the pack's
// prediction where the CNN networks run 0.90–1.10.
TEST(NetworkInterval, TransformerEncodersGetAnIntervalOfTheirOwn) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "interval.db").string();
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    const std::int64_t device = *store->UpsertDevice({"test-device", "a test device", "{}"});
    const std::int64_t backend = *store->UpsertBackend({"ort", "1.0", 1, "fp32"});
    InsertTableMeasurements(*store, device, backend);
    for (auto [space, low] : {std::pair{"{}", 0.9}, std::pair{R"({"graphs": "random-encoder"})", 0.8}}) {
      auto campaign = store->FindOrCreateCampaign(TestCampaignKey("graph-context", space));
      ASSERT_TRUE(campaign.ok());
      const std::vector<GraphLayerRecord> layers = NetworkLayers(1.0, [low = low](int g) { return low + 0.01 * g; });
      ASSERT_TRUE(store->InsertGraphLayers(device, backend, campaign->id, layers).ok());
    }
  }
  StoreFitRequest request;
  request.db = path;
  request.filter.backend = "ort";
  request.options.folds = 2;
  request.correct_drift = false;
  auto fit = FitFromStore(request);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const Pack& pack = fit->fit.pack;
  ASSERT_TRUE(pack.interval.has_value()) << fit->interval_note;
  EXPECT_NEAR(pack.interval->predicted_lo, 0.91, 1e-9);
  EXPECT_NEAR(pack.interval->predicted_hi, 1.09, 1e-9);
  ASSERT_TRUE(pack.transformer_interval.has_value()) << fit->interval_note;
  EXPECT_NEAR(pack.transformer_interval->predicted_lo, 0.81, 1e-9);
  EXPECT_NEAR(pack.transformer_interval->predicted_hi, 0.99, 1e-9);
  EXPECT_NE(fit->interval_note.find("for models with attention, from transformer encoders: 90% interval: calibrated on 21"),
            std::string::npos)
      << fit->interval_note;
  // Both survive the pack's JSON.
  auto back = Pack::FromJson(pack.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->transformer_interval, pack.transformer_interval);
  EXPECT_EQ(back->interval, pack.interval);
}

}  // namespace
}  // namespace latte
