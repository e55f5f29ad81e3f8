#include "db/table_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using latte::testing::TempDir;

// The V100 TensorRT library's device and backend, a table read as `format`.
TableImportOptions TensorrtOptions(const std::string& format = "tensorrt-conv") {
  TableImportOptions options;
  options.format = format;
  options.device = "v100";
  options.backend = "tensorrt";
  return options;
}

const char kSmallTable[] =
    "{Regular,1,3,8,8,8,3,1,0} 1.5\n"
    "{Regular,1,3,8,8,16,3,1,0} -1\n"
    "{Depthwise,1,8,8,8,8,3,2,1} 0.25\n";

TEST(ImportTable, StoresValidRowsSkipsFailedAndIsIdempotent) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "latte.db").string());
  ASSERT_TRUE(store.ok());
  const std::string path = dir.Write("conv.out", kSmallTable);
  auto report = ImportTable(*store, path, TensorrtOptions());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->data_lines, 3u);
  EXPECT_EQ(report->imported, 2u);
  EXPECT_EQ(report->already_stored, 0u);
  EXPECT_EQ(report->skipped.at("failed in TensorRT (latency -1)"), 1u);
  EXPECT_EQ(report->Describe(), "imported 2 rows, 0 already stored, skipped 1 lines (failed in TensorRT (latency -1): 1)");

  auto rows = store->QueryMeasurements({.backend = "tensorrt", .device = "v100"});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_DOUBLE_EQ((*rows)[0].stats.p50, 1500.0);
  EXPECT_EQ((*rows)[0].source, "import:tensorrt-conv");
  EXPECT_EQ((*rows)[1].kernel.Kind(), "depthwise_conv2d");
  EXPECT_EQ((*rows)[1].backend.precision, "fp32");

  auto again = ImportTable(*store, path, TensorrtOptions());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->imported, 0u);
  EXPECT_EQ(again->already_stored, 2u);
  EXPECT_EQ(again->campaign, report->campaign);
  EXPECT_EQ(store->QueryMeasurements()->size(), 2u);
  // The same table at fp16 is another set of kernels and backend.
  TableImportOptions fp16 = TensorrtOptions();
  fp16.precision = "fp16";
  auto half = ImportTable(*store, path, fp16);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->imported, 2u);
  EXPECT_EQ(store->QueryMeasurements({.precision = "fp16"})->size(), 2u);
}

TEST(ImportTable, MalformedLineStoresNothingAndKeepsWhatWasThere) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "latte.db").string());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(ImportTable(*store, dir.Write("good.out", kSmallTable), TensorrtOptions()).ok());
  const std::string bad = dir.Write("bad.out", "{Regular,1,3,8,8,32,3,1,0} 2.0\n{Regular,1,3,8,8} 1\n");
  auto report = ImportTable(*store, bad, TensorrtOptions());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message().rfind(bad + ":2: expected 9 fields", 0), 0u) << report.status().message();
  EXPECT_EQ(store->QueryMeasurements()->size(), 2u);
  EXPECT_EQ(store->ListCampaigns()->size(), 1u);
}

TEST(ImportTable, RefusesMissingDeviceUnknownFormatAndMissingFile) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "latte.db").string());
  ASSERT_TRUE(store.ok());
  const std::string path = dir.Write("conv.out", kSmallTable);
  TableImportOptions no_device = TensorrtOptions();
  no_device.device.clear();
  EXPECT_NE(ImportTable(*store, path, no_device).status().message().find("--device"), std::string::npos);
  TableImportOptions format = TensorrtOptions();
  format.format = "xls";
  EXPECT_FALSE(ImportTable(*store, path, format).ok());
  auto missing = ImportTable(*store, path + ".none", TensorrtOptions());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store->QueryMeasurements()->empty());
}

TEST(ImportTable, OpLutUsesEachLinesDeviceAndCountsUnmapped) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "latte.db").string());
  ASSERT_TRUE(store.ok());
  const std::string path = dir.Write(
      "lut.jsonl",
      R"({"op_type": "Int8Conv", "op_args": ["name: \"stride\"\ni: 1\n"], "input_shapes": [[1, 8, 8, 16], [16, 1, 1, 16], [16]], "input_dtypes": [1, 1, 2], "runtime_us_p0": 10, "runtime_us_p10": 11, "runtime_us_p50": 12, "runtime_us_p90": 13, "runtime_us_p100": 20, "device": "phone-a"}
{"op_type": "Int8Relu", "op_args": [], "input_shapes": [[1, 8, 8, 16]], "input_dtypes": [1], "runtime_us_p50": 2, "device": "phone-b"}
{"op_type": "Int8ChannelShuffle", "op_args": [], "input_shapes": [[1, 8, 8, 16]], "input_dtypes": [1], "runtime_us_p50": 2, "device": "phone-b"}
)");
  TableImportOptions options;
  options.format = "op-lut";
  options.backend = "caffe2";
  options.precision = "int8";
  auto report = ImportTable(*store, path, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->imported, 2u);
  EXPECT_EQ(report->skipped.size(), 1u);
  EXPECT_EQ(store->ListDevices()->size(), 2u);
  auto a = store->QueryMeasurements({.device = "phone-a"});
  ASSERT_EQ(a->size(), 1u);
  EXPECT_DOUBLE_EQ((*a)[0].stats.p100, 20);
  EXPECT_EQ((*a)[0].kernel.dtype, DataType::kUInt8);
}

TEST(ExportMeasurements, CsvRoundTripsThroughTheCsvImporter) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "a.db").string());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(ImportTable(*store, dir.Write("conv.out", kSmallTable), TensorrtOptions()).ok());
  std::ostringstream csv;
  auto written = ExportMeasurements(*store, {}, "csv", csv);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(*written, 2u);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "device,backend,backend_version,threads,precision,kind,kernel_key,dtype,n,p0_us,p10_us,p50_us,p90_us,"
            "p99_us,p100_us,mean_us,std_us,time,source,campaign");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);

  auto copy = Store::Open((dir.path() / "b.db").string());
  ASSERT_TRUE(copy.ok());
  const TableImportOptions options = TensorrtOptions("csv");
  auto report = ImportTable(*copy, dir.Write("export.csv", text), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->imported, 2u);
  auto original = store->QueryMeasurements();
  auto round = copy->QueryMeasurements();
  ASSERT_EQ(round->size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ((*round)[i].kernel, (*original)[i].kernel);
    EXPECT_DOUBLE_EQ((*round)[i].stats.p50, (*original)[i].stats.p50);
    EXPECT_TRUE(std::isnan((*round)[i].stats.p90));
  }
}

TEST(ExportMeasurements, JsonLinesHaveNullForMissingFigures) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "a.db").string());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(ImportTable(*store, dir.Write("conv.out", kSmallTable), TensorrtOptions()).ok());
  std::ostringstream out;
  ASSERT_TRUE(ExportMeasurements(*store, {.kind = "depthwise_conv2d"}, "jsonl", out).ok());
  auto line = nlohmann::json::parse(out.str());
  EXPECT_EQ(line["kernel"]["kind"], "depthwise_conv2d");
  EXPECT_EQ(line["kernel"]["params"]["elmt_fused"], 1);
  EXPECT_DOUBLE_EQ(line["stats"]["p50_us"].get<double>(), 250.0);
  EXPECT_TRUE(line["stats"]["p90_us"].is_null());
  EXPECT_EQ(line["backend"]["name"], "tensorrt");
  std::ostringstream bad;
  EXPECT_FALSE(ExportMeasurements(*store, {}, "xml", bad).ok());
}

// A table measured elsewhere is refused at the first impossible line, naming it: nothing stored.
TEST(ImportTable, ImpossibleKernelsAndLatenciesAreRefusedByLine) {
  TempDir dir;
  auto store = Store::Open((dir.path() / "a.db").string());
  ASSERT_TRUE(store.ok());
  const TableImportOptions options = TensorrtOptions("csv");
  const std::string good = "\"add|a0=1,a1=8,a2=8,a3=16,b0=1,b1=8,b2=8,b3=16|float32\"";
  auto refused = [&](const std::string& rows) {
    auto report = ImportTable(*store, dir.Write("t.csv", "kernel_key,p10_us,p50_us,p90_us\n" + good + ",1,2,3\n" + rows),
                              options);
    return report.ok() ? std::string("accepted") : report.status().message();
  };
  EXPECT_NE(refused("\"add|a0=1,a1=-5,a2=8,a3=16,b0=1,b1=8,b2=8,b3=16|float32\",1,2,3\n").find(
                "t.csv:3: kernel add: a1=-5 is not a plausible value"),
            std::string::npos);
  EXPECT_NE(refused("\"max_pool2d|c=8,ih=4,iw=4,kh=9,kw=9,n=1,pb=0,pl=0,pr=0,pt=0,sh=0,sw=1|float32\",1,2,3\n")
                .find("t.csv:3: kernel max_pool2d: sh=0 is not a plausible value"),
            std::string::npos);
  EXPECT_NE(refused("\"max_pool2d|c=8,ih=4,iw=4,kh=9,kw=9,n=1,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32\",1,2,3\n")
                .find("t.csv:3: kernel max_pool2d: a kh=9 window does not fit in ih=4"),
            std::string::npos);
  EXPECT_NE(refused(good + ",5,2,3\n").find("t.csv:3: latency percentiles must be positive and in order"),
            std::string::npos);
  EXPECT_NE(refused(good + ",1,-2,3\n").find("t.csv:3: column p50_us: negative latency"), std::string::npos);
  EXPECT_EQ(store->QueryMeasurements()->size(), 0u);
  EXPECT_EQ(refused(""), "accepted");
  EXPECT_EQ(store->QueryMeasurements()->size(), 1u);
}

TEST(ImportTable, TheRealV100LibraryImportsEveryValidLine) {
  const std::string path = latte::testing::SourceDir() + "/../shared/data/v100-tensorrt/conv_data.out";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (../shared is absent)";
  std::size_t lines = 0, failed = 0;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      ++lines;
      if (line.size() >= 3 && line.compare(line.size() - 3, 3, " -1") == 0) ++failed;
    }
  }
  TempDir dir;
  auto store = Store::Open((dir.path() / "latte.db").string());
  ASSERT_TRUE(store.ok());
  auto report = ImportTable(*store, path, TensorrtOptions());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->imported, lines - failed);
  EXPECT_EQ(report->SkippedLines(), failed);
  EXPECT_EQ(store->QueryMeasurements({.backend = "tensorrt"})->size(), lines - failed);
}

}  // namespace
}  // namespace latte
