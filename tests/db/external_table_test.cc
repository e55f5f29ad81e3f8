#include "db/external_table.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"

namespace latte {
namespace {

using latte::testing::TempDir;

nlohmann::json Record(const std::string& op_type, nlohmann::json args, nlohmann::json shapes) {
  return {{"op_type", op_type},         {"op_args", std::move(args)}, {"input_shapes", std::move(shapes)},
          {"input_dtypes", {1}},        {"runtime_us_p0", 1.0},       {"runtime_us_p10", 2.0},
          {"runtime_us_p50", 3.0},      {"runtime_us_p90", 4.0},      {"runtime_us_p100", 5.0},
          {"device", "SM-G930F-7.0-24"}};
}

TEST(OpLut, MapsANhwcInt8ConvWithProtobufTextArgs) {
  auto record = Record("Int8ConvRelu",
                       {"name: \"group\"\ni: 1\n", "name: \"kernel\"\ni: 3\n", "name: \"order\"\ns: \"NHWC\"\n",
                        "name: \"pads\"\nints: 1\nints: 0\nints: 1\nints: 2\n", "name: \"stride\"\ni: 2\n"},
                       {{1, 56, 56, 32}, {64, 3, 3, 32}, {64}});
  auto kernel = KernelFromOpLutRecord(record);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ(kernel->Kind(), "conv2d+relu");
  EXPECT_EQ(kernel->dtype, DataType::kUInt8);
  const std::map<std::string, std::int64_t> expected = {
      {"n", 1},  {"ih", 56}, {"iw", 56}, {"ic", 32}, {"oc", 64}, {"kh", 3}, {"kw", 3}, {"sh", 2}, {"sw", 2},
      {"dh", 1}, {"dw", 1},  {"g", 1},   {"pt", 1},  {"pl", 0},  {"pb", 1}, {"pr", 2}, {"bias", 1}};
  EXPECT_EQ(kernel->params, expected);
}

TEST(OpLut, MapsAnNchwFloatDepthwiseConvWithJsonArgs) {
  auto record = Record("Conv", {{"group", 32}, {"stride", 1}, {"pad", 1}}, {{1, 32, 28, 20}, {32, 1, 3, 3}});
  auto kernel = KernelFromOpLutRecord(record);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ(kernel->Kind(), "depthwise_conv2d");
  EXPECT_EQ(kernel->dtype, DataType::kFloat32);
  EXPECT_EQ(kernel->Param("ic"), 32);
  EXPECT_EQ(kernel->Param("ih"), 28);
  EXPECT_EQ(kernel->Param("iw"), 20);
  EXPECT_EQ(kernel->Param("g"), 32);
  EXPECT_EQ(kernel->Param("bias"), 0);
  EXPECT_EQ(kernel->Param("pr"), 1);
}

TEST(OpLut, MapsFcPoolsAddAndUnary) {
  auto fc = KernelFromOpLutRecord(Record("Int8FC", nlohmann::json::array(), {{4, 1280}, {1000, 1280}, {1000}}));
  ASSERT_TRUE(fc.ok()) << fc.status().message();
  EXPECT_EQ(fc->Key(), "fully_connected|bias=1,k=1280,m=4,n=1000|uint8");

  auto pool = KernelFromOpLutRecord(Record("Int8AveragePool", {"name: \"global_pooling\" i: 1"}, {{1, 7, 7, 1280}}));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(pool->Key(), "global_avg_pool|c=1280,h=7,n=1,w=7|uint8");

  auto max = KernelFromOpLutRecord(Record("MaxPool", {{"kernel", 2}, {"stride", 2}}, {{1, 16, 8, 8}}));
  ASSERT_TRUE(max.ok()) << max.status().message();
  EXPECT_EQ(max->Kind(), "max_pool2d");
  EXPECT_EQ(max->Param("c"), 16);
  EXPECT_EQ(max->Param("kh"), 2);

  auto add = KernelFromOpLutRecord(Record("Int8AddRelu", nlohmann::json::array(), {{1, 8, 8, 16}, {1, 8, 8, 16}}));
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_EQ(add->Kind(), "add+relu");
  EXPECT_EQ(add->Param("a3"), 16);
  EXPECT_EQ(add->Param("b1"), 8);

  auto relu = KernelFromOpLutRecord(Record("Relu", nlohmann::json::array(), {{1, 16, 8, 4}}));
  ASSERT_TRUE(relu.ok()) << relu.status().message();
  EXPECT_EQ(relu->Key(), "relu|c=16,h=8,n=1,w=4|float32");  // NCHW input reported as NHWC
}

TEST(OpLut, UnmappableAndMalformedRecordsAreToldApart) {
  auto shuffle = KernelFromOpLutRecord(Record("Int8ChannelShuffle", nlohmann::json::array(), {{1, 8, 8, 16}}));
  EXPECT_EQ(shuffle.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(shuffle.status().message().find("Int8ChannelShuffle"), std::string::npos);
  auto legacy = KernelFromOpLutRecord(Record("Conv", {{"legacy_pad", 3}}, {{1, 3, 8, 8}, {8, 3, 3, 3}}));
  EXPECT_EQ(legacy.status().code(), StatusCode::kUnsupported);
  auto mismatch = KernelFromOpLutRecord(Record("Conv", nlohmann::json::array(), {{1, 3, 8, 8}, {8, 4, 3, 3}}));
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidInput);
  auto bad_arg = KernelFromOpLutRecord(Record("Conv", {"name: \"stride\" i: two"}, {{1, 3, 8, 8}, {8, 3, 3, 3}}));
  EXPECT_EQ(bad_arg.status().code(), StatusCode::kInvalidInput);
}

TEST(OpLut, ReadsAFileCountingUnmappedLines) {
  TempDir dir;
  std::string text = Record("Int8Conv", nlohmann::json::array(), {{1, 8, 8, 16}, {16, 1, 1, 16}}).dump() + "\n" +
                     Record("Int8ChannelShuffle", nlohmann::json::array(), {{1, 8, 8, 16}}).dump() + "\n\n" +
                     Record("Int8ChannelShuffle", nlohmann::json::array(), {{1, 4, 4, 16}}).dump() + "\n";
  auto table = ReadOpLutTable(dir.Write("lut.jsonl", text));
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->data_lines, 3u);
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(table->rows[0].line, 1u);
  EXPECT_EQ(table->rows[0].device, "SM-G930F-7.0-24");
  EXPECT_DOUBLE_EQ(table->rows[0].stats.p90, 4.0);
  EXPECT_TRUE(std::isnan(table->rows[0].stats.mean));
  EXPECT_EQ(table->SkippedCount(), 2u);
  EXPECT_EQ(table->skipped.begin()->second, 2u);

  const std::string bad = dir.Write("bad.jsonl", text + "{\"op_type\": \"Relu\", \"input_shapes\": [[1]]}\n");
  auto failed = ReadOpLutTable(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), bad + ":5: runtime_us_p50 is missing");
  auto not_json = ReadOpLutTable(dir.Write("nj.jsonl", "{oops\n"));
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.status().message().find("nj.jsonl:1: not a JSON line"), std::string::npos);
}

TEST(Csv, ReadsTheTfliteEstimatorTable) {
  TempDir dir;
  const std::string path = dir.Write("conv.csv",
                                 ",kernel_size,filter_size,input_shape,stride,padding,latency_time\n"
                                 "0,3,32,\"[1, 32, 32, 16]\",2,same,1.5\n"
                                 "1,1,16,8x8x48,1,VALID,0.25\n");
  auto no_unit = ReadCsvTable(path);
  ASSERT_FALSE(no_unit.ok());
  EXPECT_NE(no_unit.status().message().find("latency_time has no unit"), std::string::npos);
  auto table = ReadCsvTable(path, "ms");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ASSERT_EQ(table->rows.size(), 2u);
  const Kernel& k = table->rows[0].kernel;
  EXPECT_EQ(k.Kind(), "conv2d");
  EXPECT_EQ(k.Param("ih"), 32);
  EXPECT_EQ(k.Param("ic"), 16);
  EXPECT_EQ(k.Param("oc"), 32);
  EXPECT_EQ(k.Param("sh"), 2);
  // TensorFlow SAME, 32 → 16 with k 3 s 2: one pad row, at the end.
  EXPECT_EQ(k.Param("pt"), 0);
  EXPECT_EQ(k.Param("pb"), 1);
  EXPECT_DOUBLE_EQ(table->rows[0].stats.p50, 1500.0);
  EXPECT_EQ(table->rows[1].kernel.Param("n"), 1);
  EXPECT_EQ(table->rows[1].kernel.Param("ic"), 48);
  EXPECT_EQ(table->rows[1].kernel.Param("pr"), 0);
  EXPECT_DOUBLE_EQ(table->rows[1].stats.p50, 250.0);
  EXPECT_EQ(table->rows[1].line, 3u);
}

TEST(Csv, MalformedRowsNameFileAndLine) {
  TempDir dir;
  const std::string header = "kernel_size,filter_size,input_shape,stride,padding,latency_us\n";
  struct Case {
    std::string row;
    std::string says;
  };
  const Case cases[] = {
      {"3,32,1x8x8x16,1,same,x\n", ":2: column latency_us: 'x' is not a number"},
      {"3,32,8x8,1,same,1\n", ":2: input_shape '8x8' is not"},
      {"3,32,8x8x16,1,full,1\n", ":2: padding 'full'"},
      {"0,32,8x8x16,1,same,1\n", ":2: column kernel_size: '0' is not a positive integer"},
      {"3,32\n", ":2: 2 fields, column stride missing"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Write("bad.csv", header + c.row);
    auto table = ReadCsvTable(path);
    ASSERT_FALSE(table.ok()) << c.row;
    EXPECT_NE(table.status().message().find(path + c.says), std::string::npos) << table.status().message();
  }
  auto no_columns = ReadCsvTable(dir.Write("cols.csv", "a,b\n1,2\n"));
  ASSERT_FALSE(no_columns.ok());
  EXPECT_NE(no_columns.status().message().find("no column 'kernel_size'"), std::string::npos);
}

TEST(TensorrtTable, StoresTheOneFigureAsMedianInMicroseconds) {
  TempDir dir;
  auto table = ReadTensorrtConvTable(dir.Write("t.out", "{Regular,1,3,8,8,8,3,1,0} 1.5\n{Regular,1,3,8,8,9,3,1,0} -1\n"),
                                     "fp16");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(table->rows[0].stats.p50, 1500.0);
  EXPECT_TRUE(std::isnan(table->rows[0].stats.mean));
  EXPECT_EQ(table->rows[0].kernel.dtype, DataType::kFloat16);
  EXPECT_EQ(table->SkippedCount(), 1u);
  EXPECT_EQ(table->data_lines, 2u);
  EXPECT_FALSE(ReadTensorrtConvTable(dir.Write("u.out", ""), "fp64").ok());
}

}  // namespace
}  // namespace latte
