#include "core/file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace latte {
namespace {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("latte_file_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(FileTest, ReadsWholeFile) {
  auto bytes = ReadFileBytes(Write("a.bin", "hello"));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "hello");
}

TEST_F(FileTest, ClearErrors) {
  auto missing = ReadFileBytes((dir_ / "nope").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "no such file");
  EXPECT_NE(ReadFileBytes(Write("empty", "")).status().message().find("empty"), std::string::npos);
  EXPECT_NE(ReadFileBytes(dir_.string()).status().message().find("directory"), std::string::npos);
  auto big = ReadFileBytes(Write("big", std::string(100, 'x')), 10);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("more than the limit"), std::string::npos);
  EXPECT_FALSE(ReadFileBytes("/dev/null").ok());  // not a regular file
}

TEST_F(FileTest, WritesWholeOrNotAtAll) {
  const std::string path = Write("pack.json", "the old pack");
  ASSERT_TRUE(WriteFileAtomically(path, "the new pack").ok());
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "the new pack");
  ASSERT_TRUE(WriteFileAtomically((dir_ / "fresh.json").string(), "x").ok());
  // Nothing is left beside them.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 2u);
  // A folder that does not exist: an error, and the old file elsewhere is untouched.
  Status failed = WriteFileAtomically((dir_ / "no" / "such" / "pack.json").string(), "y");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), StatusCode::kIoError);
  EXPECT_NE(failed.message().find("cannot open for writing"), std::string::npos) << failed.message();
  EXPECT_FALSE(WriteFileAtomically(dir_.string(), "z").ok());  // a directory is not replaced
  EXPECT_TRUE(std::filesystem::is_directory(dir_));
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "written in place").ok());  // not a regular file
}

}  // namespace
}  // namespace latte
