// `latte calibrate` as users run it: one short calibration into a temporary store writes a pack
// that `latte predict` reads; bad budgets and backends are one-line errors with exit 2.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "run_latte.h"

namespace latte {
namespace {

using testing::ReadAll;
using testing::RunLatte;
using testing::RunResult;
using testing::TempDir;

const std::string kModel = std::string(LATTE_SOURCE_DIR) + "/models/face_detection_short_range.tflite";

TEST(CalibrateCli, ShortCalibrationWritesAPackThatPredictsTheModel) {
  TempDir dir;
  const std::string db = (dir.path() / "c.db").string();
  const std::string pack = (dir.path() / "p.json").string();
  // Fusion detection has tests of its own (profile/fusion_test) and needs 2m of budget: not here.
  RunResult run = RunLatte({"calibrate", "--budget", "30s", "--no-detect-fusion", "--models", kModel, "--db", db, "-o",
                            pack},
                           dir.path(), /*timeout_secs=*/240);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("fusion rules:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("phase the models' kernels and their neighbours: campaign"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("-fold cross-validation on"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("wrote " + pack), std::string::npos) << run.out;

  // The pack says how it was made, and carries the fusion rules calibrate printed.
  nlohmann::json json = nlohmann::json::parse(ReadAll(pack));
  EXPECT_EQ(json["provenance"]["command"].get<std::string>().rfind("latte calibrate --backend xnnpack", 0), 0u);
  EXPECT_EQ(json["backend"]["name"], "xnnpack");
  const std::string rules_line = run.out.substr(run.out.find("fusion rules:"));
  for (const auto& rule : json["fusion_rules"]) {
    EXPECT_NE(rules_line.find(std::string(" ").append(rule.get<std::string>())), std::string::npos) << rule;
  }
  ASSERT_TRUE(json["kinds"].contains("depthwise_conv2d")) << json["kinds"].dump().substr(0, 400);

  // Every measurement went to the store, under campaigns a rerun would resume.
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  EXPECT_GT(rows->size(), 50u);

  // The model's kernels came first, so the pack predicts the model; anything it cannot is named.
  RunResult predicted = RunLatte({"predict", kModel, "--pack", pack, "--format", "json"}, dir.path());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json result = nlohmann::json::parse(predicted.out);
  EXPECT_GT(result["total_ms"].get<double>(), 0);
  EXPECT_GT(result["coverage"]["covered_nodes"].get<int>(), 0);
  for (const auto& node : result["coverage"]["uncovered"]) EXPECT_FALSE(node["why"].get<std::string>().empty());

  // The pack keeps the campaigns' drift reference reading, and validate measures it again.
  ASSERT_TRUE(json.contains("reference")) << json.dump().substr(0, 400);
  EXPECT_EQ(json["reference"]["kernel"].get<std::string>().rfind("conv2d|", 0), 0u);
  EXPECT_GT(json["reference"]["p50_us"].get<double>(), 0);
  EXPECT_GE(json["reference"]["readings"].get<int>(), 2);
  // Every measurement was taken in a campaign that read the reference: all are drift-corrected.
  EXPECT_EQ(json["reference"]["corrected"].get<std::size_t>(), rows->size());
  EXPECT_NE(run.out.find("drift-corrected " + std::to_string(rows->size()) + " of " + std::to_string(rows->size()) +
                         " measurements to the reference's"),
            std::string::npos)
      << run.out;
  // Asked not to, fit keeps the measurements as stored, says so, and the pack says how it was made.
  const std::string raw_pack = (dir.path() / "raw.json").string();
  RunResult raw = RunLatte({"fit", "--backend", "xnnpack", "--folds", "2", "--no-drift-correction", "--db", db, "-o",
                            raw_pack},
                           dir.path(), 240);
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.out.find("not drift-corrected: fitted on the measurements as stored"), std::string::npos) << raw.out;
  nlohmann::json raw_json = nlohmann::json::parse(ReadAll(raw_pack));
  EXPECT_EQ(raw_json["reference"]["corrected"], 0);
  EXPECT_NE(raw_json["provenance"]["command"].get<std::string>().find(" --no-drift-correction"), std::string::npos);
  RunResult validated = RunLatte({"validate", kModel, "--pack", pack, "--num-runs", "3", "--min-secs", "0",
                                  "--warmup-runs", "1", "--format", "json"},
                                 dir.path(), 120);
  ASSERT_EQ(validated.exit_code, 0) << validated.err;
  nlohmann::json v = nlohmann::json::parse(validated.out);
  ASSERT_TRUE(v["drift"].contains("ratio")) << v["drift"].dump();
  EXPECT_GT(v["drift"]["now_p50_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(v["drift"]["pack_p50_us"].get<double>(), json["reference"]["p50_us"].get<double>());
  EXPECT_TRUE(v["drift"]["drift_adjusted"].contains("rmspe_pct"));
  // The pack says how much its reference moved (0 with too few readings to say), and validate
  // says whether the measured time fell inside the predicted interval.
  EXPECT_GE(json["reference"]["spread"].get<double>(), 0);
  ASSERT_EQ(v["models"].size(), 1u);
  const nlohmann::json& model = v["models"][0];
  const double measured = model["measured_ms"].get<double>();
  const bool inside = measured >= model["interval_ms"][0].get<double>() && measured <= model["interval_ms"][1].get<double>();
  EXPECT_EQ(model["inside_interval"].get<bool>(), inside);
  EXPECT_EQ(v["inside_interval_pct"].get<double>(), inside ? 100 : 0);
  EXPECT_DOUBLE_EQ(v["interval_level"].get<double>(), 0.9);
  RunResult text = RunLatte({"validate", kModel, "--pack", pack, "--num-runs", "3", "--min-secs", "0", "--warmup-runs", "1"},
                            dir.path(), 120);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("drift: the reference kernel (conv2d)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("models measured inside their predicted 90% interval: "), std::string::npos) << text.out;

  // Starting from that pack: its fusion rules, its kernels adapted here and fitted with the new
  // store's measurements, and the provenance says so. A pack of another thread count is refused
  // before anything is measured.
  const std::string from_db = (dir.path() / "from.db").string();
  const std::string from_pack = (dir.path() / "from.json").string();
  RunResult from = RunLatte({"calibrate", "--budget", "30s", "--from", pack, "--db", from_db, "-o", from_pack},
                            dir.path(), 240);
  ASSERT_EQ(from.exit_code, 0) << from.out << from.err;
  EXPECT_NE(from.out.find("started from " + pack + ": "), std::string::npos) << from.out;
  EXPECT_NE(from.out.find("(the pack's, and what the backend fuses by construction)"), std::string::npos) << from.out;
  EXPECT_NE(from.out.find("kernels of " + pack + " as adapted to this machine"), std::string::npos) << from.out;
  nlohmann::json from_json = nlohmann::json::parse(ReadAll(from_pack));
  for (const auto& rule : json["fusion_rules"]) {
    EXPECT_NE(std::find(from_json["fusion_rules"].begin(), from_json["fusion_rules"].end(), rule),
              from_json["fusion_rules"].end())
        << rule;
  }
  EXPECT_NE(from_json["provenance"]["command"].get<std::string>().find(" --from " + pack), std::string::npos);
  RunResult threads = RunLatte({"calibrate", "--budget", "30s", "--num-threads", "2", "--from", pack, "--db", from_db,
                                "-o", from_pack},
                               dir.path());
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_NE(threads.err.find(pack + ": a pack for xnnpack with 1 thread(s), not xnnpack with 2"), std::string::npos)
      << threads.err;
  RunResult missing = RunLatte({"calibrate", "--budget", "30s", "--from", "nope.json", "--db", from_db, "-o",
                                from_pack},
                               dir.path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
}

TEST(CalibrateCli, BadBudgetAndBackendAreErrors) {
  TempDir dir;
  const std::string db = (dir.path() / "c.db").string();
  RunResult too_short = RunLatte({"calibrate", "--budget", "10s", "--db", db, "-o", "p.json"}, dir.path());
  EXPECT_EQ(too_short.exit_code, 2);
  EXPECT_NE(too_short.err.find("--budget must be at least 30s"), std::string::npos) << too_short.err;
  RunResult no_time_for_fusion = RunLatte({"calibrate", "--budget", "1m", "--db", db, "-o", "p.json"}, dir.path());
  EXPECT_EQ(no_time_for_fusion.exit_code, 2);
  EXPECT_NE(no_time_for_fusion.err.find("--no-detect-fusion"), std::string::npos) << no_time_for_fusion.err;
  RunResult bad_duration = RunLatte({"calibrate", "--budget", "ten minutes", "--db", db, "-o", "p.json"}, dir.path());
  EXPECT_EQ(bad_duration.exit_code, 2);
  EXPECT_NE(bad_duration.err.find("--budget"), std::string::npos) << bad_duration.err;
  RunResult backend = RunLatte({"calibrate", "--backend", "nope", "--db", db, "-o", "p.json"}, dir.path());
  EXPECT_EQ(backend.exit_code, 2);
  EXPECT_NE(backend.err.find("nope"), std::string::npos) << backend.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "p.json"));
}

// --precision int8: the kernels an int8 model is made of, stored under the int8 configuration in
// their keys' dtypes, fitted into a pack of precision int8 that predicts a model as it would run
// quantized, each layer saying its precision.
TEST(CalibrateCli, Int8CalibrationWritesAnInt8PackThatPredictsTheModelQuantized) {
  TempDir dir;
  const std::string db = (dir.path() / "q.db").string();
  const std::string pack = (dir.path() / "q.json").string();
  RunResult run = RunLatte({"calibrate", "--precision", "int8", "--budget", "30s", "--no-detect-fusion", "--db", db, "-o", pack},
                           dir.path(), /*timeout_secs=*/240);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Random networks measured in context at int8 too, and the pack's context fitted on them.
  EXPECT_NE(run.err.find("calibrate: random networks in context"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("in-graph context: "), std::string::npos) << run.out;
  nlohmann::json json = nlohmann::json::parse(ReadAll(pack));
  EXPECT_EQ(json["precision"], "int8");
  EXPECT_NE(json["provenance"]["command"].get<std::string>().find(" --precision int8"), std::string::npos);
  EXPECT_TRUE(json["kinds"].contains("quantize")) << json["kinds"].size();
  EXPECT_TRUE(json["kinds"].contains("dequantize|int8"));
  EXPECT_TRUE(json["kinds"].contains("conv2d|int8") || json["kinds"].contains("conv2d+relu|int8") ||
              json["kinds"].contains("conv2d+relu6|int8"));
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  ASSERT_FALSE(rows->empty());
  std::size_t int8_rows = 0;
  for (const StoredMeasurement& row : *rows) {
    EXPECT_EQ(row.backend.precision, "int8");
    int8_rows += row.kernel.dtype == DataType::kInt8;
  }
  EXPECT_GT(int8_rows, 0u);
  auto layers = store->QueryGraphLayers();
  ASSERT_TRUE(layers.ok());
  ASSERT_FALSE(layers->empty());
  std::size_t int8_layers_stored = 0;
  for (const StoredGraphLayer& layer : *layers) {
    EXPECT_EQ(layer.backend.precision, "int8");
    int8_layers_stored += layer.record.kernel.dtype == DataType::kInt8;
  }
  EXPECT_GT(int8_layers_stored, 0u);
  EXPECT_TRUE(json.contains("context")) << "no in-graph context in the int8 pack";

  RunResult predicted = RunLatte({"predict", kModel, "--pack", pack, "--format", "json"}, dir.path());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json p = nlohmann::json::parse(predicted.out);
  EXPECT_EQ(p["pack"]["precision"], "int8");
  std::size_t int8_layers = 0, conversions = 0;
  for (const nlohmann::json& layer : p["layers"]) {
    int8_layers += layer["precision"] == "int8";
    conversions += layer["kernel"] == "quantize" || layer["kernel"] == "dequantize";
  }
  EXPECT_GT(int8_layers, 0u) << predicted.out;
  EXPECT_GT(conversions, 0u) << predicted.out;  // the input quantized, the output dequantized at least
  RunResult text = RunLatte({"predict", kModel, "--pack", pack}, dir.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("xnnpack 1 thread int8"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("precision"), std::string::npos) << text.out;
}

TEST(CalibrateCli, BadPrecisionsAreOneLineErrors) {
  TempDir dir;
  const std::string db = (dir.path() / "c.db").string();
  RunResult fp16 = RunLatte({"calibrate", "--precision", "fp16", "--budget", "30s", "--no-detect-fusion", "--db", db, "-o", "p.json"},
                            dir.path());
  EXPECT_EQ(fp16.exit_code, 2);
  EXPECT_NE(fp16.err.find("fp16 is not a precision (fp32, bf16, int8)"), std::string::npos) << fp16.err;
  // XNNPACK (the default backend) has no bf16 operators.
  RunResult bf16 = RunLatte({"calibrate", "--precision", "bf16", "--budget", "30s", "--no-detect-fusion", "--db", db, "-o", "p.json"},
                            dir.path());
  EXPECT_EQ(bf16.exit_code, 2);
  EXPECT_NE(bf16.err.find("bf16 unsupported on xnnpack"), std::string::npos) << bf16.err;
  RunResult from = RunLatte({"calibrate", "--precision", "int8", "--from", "p0.json", "--budget", "30s", "--db", db, "-o", "p.json"},
                            dir.path());
  EXPECT_EQ(from.exit_code, 2);
  EXPECT_NE(from.err.find("calibrate --precision int8 starts from nothing"), std::string::npos) << from.err;
  RunResult bf16_from = RunLatte({"calibrate", "--precision", "bf16", "--backend", "onednn", "--from", "p0.json", "--budget",
                                  "30s", "--db", db, "-o", "p.json"},
                                 dir.path());
  EXPECT_EQ(bf16_from.exit_code, 2);
  EXPECT_NE(bf16_from.err.find("calibrate --precision bf16 starts from nothing"), std::string::npos) << bf16_from.err;
  for (const RunResult* r : {&fp16, &bf16, &from, &bf16_from})
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "p.json"));
}

// --precision bf16 on oneDNN: the kernels a bf16 model is made of (bf16 kernels, the casts at its
// float32 edges), stored under the bf16 configuration, fitted into a pack of precision bf16 that
// predicts a model as it would run in bfloat16.
TEST(CalibrateCli, Bf16CalibrationWritesABf16PackThatPredictsTheModelInBf16) {
  RunResult cpu = RunLatte({"bench", kModel, "--backend", "onednn", "--precision", "bf16", "--warmup-runs", "0",
                            "--num-runs", "1", "--min-secs", "0"},
                           std::filesystem::temp_directory_path());
  if (cpu.exit_code != 0 && cpu.err.find("avx512_core_bf16") != std::string::npos)
    GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << cpu.err;
  TempDir dir;
  const std::string db = (dir.path() / "b.db").string();
  const std::string pack = (dir.path() / "b.json").string();
  RunResult run = RunLatte({"calibrate", "--backend", "onednn", "--precision", "bf16", "--budget", "30s",
                            "--no-detect-fusion", "--db", db, "-o", pack},
                           dir.path(), /*timeout_secs=*/240);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  nlohmann::json json = nlohmann::json::parse(ReadAll(pack));
  EXPECT_EQ(json["precision"], "bf16");
  EXPECT_NE(json["provenance"]["command"].get<std::string>().find(" --precision bf16"), std::string::npos);
  EXPECT_TRUE(json["kinds"].contains("cast")) << json["kinds"].size();       // float32 → bfloat16 at an input
  EXPECT_TRUE(json["kinds"].contains("cast|bf16")) << json["kinds"].size();  // and back at an output
  EXPECT_TRUE(json["kinds"].contains("conv2d|bf16") || json["kinds"].contains("conv2d+relu|bf16") ||
              json["kinds"].contains("conv2d+relu6|bf16"));
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  ASSERT_FALSE(rows->empty());
  std::size_t bf16_rows = 0;
  for (const StoredMeasurement& row : *rows) {
    EXPECT_EQ(row.backend.precision, "bf16");
    bf16_rows += row.kernel.dtype == DataType::kBFloat16;
  }
  EXPECT_GT(bf16_rows, 0u);

  RunResult predicted = RunLatte({"predict", kModel, "--pack", pack, "--format", "json"}, dir.path());
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json p = nlohmann::json::parse(predicted.out);
  EXPECT_EQ(p["pack"]["precision"], "bf16");
  std::size_t casts = 0;
  for (const nlohmann::json& layer : p["layers"]) casts += layer["kernel"] == "cast";
  EXPECT_GE(casts, 3u) << predicted.out;  // the input cast to bfloat16, the two outputs back
}

}  // namespace
}  // namespace latte
