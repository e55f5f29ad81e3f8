#include "db/tensorrt_conv.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using latte::testing::TempDir;

std::string SharedData(const std::string& file) {
  return latte::testing::SourceDir() + "/../shared/data/v100-tensorrt/" + file;
}

TEST(TensorrtConv, ParsesARegularLine) {
  auto row = ParseTensorrtConvLine("{Regular,128,3,480,480,192,7,2,1} 30.9881");
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_FALSE(row->failed);
  EXPECT_DOUBLE_EQ(row->latency_ms, 30.9881);
  EXPECT_EQ(row->kernel.op, OpKind::kConv2D);
  EXPECT_EQ(row->kernel.dtype, DataType::kFloat32);
  const std::map<std::string, std::int64_t> expected = {{"n", 128}, {"ic", 3},  {"ih", 480}, {"iw", 480},
                                                        {"oc", 192}, {"kh", 7}, {"kw", 7},   {"sh", 2},
                                                        {"sw", 2},   {"g", 1},  {"elmt_fused", 1}};
  EXPECT_EQ(row->kernel.params, expected);  // no padding or dilation invented
}

TEST(TensorrtConv, ParsesDepthwiseFailedAndFp16) {
  auto row = ParseTensorrtConvLine("{Depthwise,1,64,56,56,64,3,1,0} -1\r", DataType::kFloat16);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_TRUE(row->failed);
  EXPECT_EQ(row->kernel.op, OpKind::kDepthwiseConv2D);
  EXPECT_EQ(row->kernel.Param("g"), 64);
  EXPECT_EQ(row->kernel.Param("elmt_fused"), 0);
  EXPECT_EQ(row->kernel.dtype, DataType::kFloat16);
}

TEST(TensorrtConv, RejectsMalformedLinesSayingWhat) {
  struct Case {
    const char* line;
    const char* says;
  };
  const Case cases[] = {
      {"Regular,1,3,8,8,8,3,1,0} 1.0", "expected '{'"},
      {"{Regular,1,3,8,8,8,3,1,0 1.0", "missing '}'"},
      {"{Regular,1,3,8,8,8,3,1} 1.0", "expected 9 fields"},
      {"{Grouped,1,3,8,8,8,3,1,0} 1.0", "Conv_type 'Grouped'"},
      {"{Regular,1,x,8,8,8,3,1,0} 1.0", "In_C 'x' is not an integer"},
      {"{Regular,1,3,0,8,8,3,1,0} 1.0", "In_H = 0 is out of range"},
      {"{Regular,1,3,8,8,8,3,1,2} 1.0", "ElmtFused = 2"},
      {"{Regular,1,3,8,8,8,3,1,0}", "missing latency"},
      {"{Regular,1,3,8,8,8,3,1,0} fast", "latency 'fast'"},
      {"{Regular,1,3,8,8,8,3,1,0} -2", "neither positive nor -1"},
      {"{Depthwise,1,3,8,8,8,3,1,0} 1", "not a multiple of In_C"},
  };
  for (const Case& c : cases) {
    auto row = ParseTensorrtConvLine(c.line);
    ASSERT_FALSE(row.ok()) << c.line;
    EXPECT_NE(row.status().message().find(c.says), std::string::npos) << c.line << " → " << row.status().message();
  }
}

TEST(TensorrtConv, FormatsTheInverseLine) {
  for (const char* line : {"{Regular,128,3,480,480,192,7,2,1} 30.9881", "{Depthwise,1,64,56,56,64,3,1,0} 0.0123"}) {
    auto row = ParseTensorrtConvLine(line);
    ASSERT_TRUE(row.ok());
    auto text = FormatTensorrtConvLine(row->kernel, row->latency_ms);
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_EQ(*text, line);
  }
  // A model's conv kernel: pads and bias are left out, a fused add sets ElmtFused.
  Kernel k;
  k.op = OpKind::kConv2D;
  k.fused = {OpKind::kAdd, OpKind::kRelu};
  k.params = {{"n", 1}, {"ih", 56}, {"iw", 56}, {"ic", 64}, {"oc", 64}, {"kh", 3}, {"kw", 3}, {"sh", 1},
              {"sw", 1}, {"dh", 1},  {"dw", 1},  {"g", 1},   {"pt", 1},  {"pl", 1}, {"pb", 1}, {"pr", 1}, {"bias", 1}};
  auto text = FormatTensorrtConvLine(k, 0.5);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{Regular,1,64,56,56,64,3,1,1} 0.5");
  Kernel non_square = k;
  non_square.params["kw"] = 5;
  EXPECT_EQ(FormatTensorrtConvLine(non_square, 1).status().code(), StatusCode::kUnsupported);
  Kernel dilated = k;
  dilated.params["dh"] = 2;
  EXPECT_EQ(FormatTensorrtConvLine(dilated, 1).status().code(), StatusCode::kUnsupported);
  Kernel pool;
  pool.op = OpKind::kMaxPool2D;
  EXPECT_EQ(FormatTensorrtConvLine(pool, 1).status().code(), StatusCode::kUnsupported);
}

TEST(TensorrtConv, ReadsAFileCountingFailedLinesAndNamingBadLines) {
  TempDir dir;
  const auto path = (dir.path() / "conv.out").string();
  {
    std::ofstream out(path);
    out << "{Regular,1,3,8,8,8,3,1,0} 1.5\n\n{Regular,1,3,8,8,16,3,1,0} -1\n{Depthwise,1,8,8,8,8,3,2,0} 0.25\n";
  }
  auto file = ReadTensorrtConvFile(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->rows.size(), 2u);
  EXPECT_EQ(file->failed_lines, 1u);
  EXPECT_EQ(file->line_numbers, (std::vector<std::size_t>{1, 4}));
  { std::ofstream(path, std::ios::app) << "{Regular,1,3,8,8,8,3,1,0} oops\n"; }
  auto bad = ReadTensorrtConvFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind(path + ":5: latency 'oops'", 0), 0u) << bad.status().message();
  auto missing = ReadTensorrtConvFile(path + ".none");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(TensorrtConv, ReadsTheRealV100Library) {
  for (const char* name : {"conv_data.out", "conv_data.out.fp16"}) {
    const std::string path = SharedData(name);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (../shared is absent)";
    std::ifstream in(path);
    std::size_t lines = 0, failed = 0;
    for (std::string line; std::getline(in, line);) {
      ++lines;
      if (line.size() >= 3 && line.compare(line.size() - 3, 3, " -1") == 0) ++failed;
    }
    auto file = ReadTensorrtConvFile(path, DataType::kFloat16);
    ASSERT_TRUE(file.ok()) << file.status().message();
    EXPECT_EQ(file->failed_lines, failed) << name;
    EXPECT_EQ(file->rows.size() + file->failed_lines, lines) << name;
    EXPECT_GT(file->rows.size(), 80000u);
    for (const auto& row : file->rows) ASSERT_GT(row.latency_ms, 0);
  }
}

}  // namespace
}  // namespace latte
