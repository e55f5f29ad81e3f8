// The bad-input contract of the real binary: for a file Latte cannot read (missing, empty, a
// directory, wrong magic, random, truncated or corrupted bytes) or a bad flag, `latte` exits 2
// and prints exactly one line to stderr, `error: FILE: what went wrong` (`error: ...` for
// flags). It never crashes: a corrupted real model gives exit 0 or 2, never a signal.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_latte.h"
#include "test_paths.h"


namespace {

namespace fs = std::filesystem;
using ::latte::testing::ReadAll;
using ::latte::testing::RunLatte;
using ::latte::testing::RunResult;

void WriteAll(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Deterministic bytes: raw mt19937 output (the standard fixes its sequence; distributions vary).
std::string RandomBytes(std::uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  return bytes;
}

class CliBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "latte-bad-input-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "mkdtemp: " << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  RunResult Run(const std::vector<std::string>& args) { return RunLatte(args, dir_); }

  RunResult Inspect(const fs::path& file) { return Run({"inspect", file.string()}); }

  /// Exit 2 and stderr exactly "error: " + prefix + message + "\n", message non-empty.
  static void ExpectOneLineError(const RunResult& r, const std::string& prefix) {
    EXPECT_FALSE(r.timed_out) << "timed out";
    EXPECT_FALSE(r.signaled) << "killed by signal " << r.signal << " (" << strsignal(r.signal)
                             << "); stderr:\n" << r.err;
    EXPECT_EQ(r.exit_code, 2) << "stderr:\n" << r.err;
    const std::string head = "error: " + prefix;
    ASSERT_FALSE(r.err.empty()) << "nothing on stderr";
    EXPECT_EQ(r.err.rfind(head, 0), 0u) << "stderr does not start with '" << head << "':\n" << r.err;
    EXPECT_EQ(r.err.back(), '\n') << "stderr does not end with a newline:\n" << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "stderr is not exactly one line:\n" << r.err;
    if (r.err.size() >= head.size() + 1) {
      std::string message = r.err.substr(head.size(), r.err.size() - head.size() - 1);
      EXPECT_NE(message.find_first_not_of(" \t"), std::string::npos) << "empty message:\n" << r.err;
    }
  }
  static void ExpectFileError(const RunResult& r, const fs::path& file) {
    ExpectOneLineError(r, file.string() + ": ");
  }

  /// A copy of a real model (fetched by scripts/setup) as bytes.
  static std::string ModelBytes(const std::string& name) {
    return ReadAll(::latte::testing::ModelPath(name));
  }

  fs::path dir_;
};

TEST_F(CliBadInput, MissingFile) {
  for (const char* name : {"no-such-model.tflite", "no-such-model.onnx", "no-such-model"}) {
    SCOPED_TRACE(name);
    ExpectFileError(Inspect(dir_ / name), dir_ / name);
  }
}

TEST_F(CliBadInput, ZeroLengthFile) {
  for (const char* name : {"empty.tflite", "empty.onnx", "empty"}) {
    SCOPED_TRACE(name);
    WriteAll(dir_ / name, "");
    ExpectFileError(Inspect(dir_ / name), dir_ / name);
  }
}

TEST_F(CliBadInput, Directory) {
  for (const char* name : {"a-directory", "a-directory.tflite", "a-directory.onnx"}) {
    SCOPED_TRACE(name);
    fs::create_directory(dir_ / name);
    ExpectFileError(Inspect(dir_ / name), dir_ / name);
  }
}

TEST_F(CliBadInput, TextFileNamedTflite) {
  WriteAll(dir_ / "x.tflite", "This is a text file, not a TFLite flatbuffer.\nSecond line.\n");
  ExpectFileError(Inspect(dir_ / "x.tflite"), dir_ / "x.tflite");
}

TEST_F(CliBadInput, PngHeaderNamedOnnx) {
  // PNG signature, then an IHDR chunk (1x1, 8-bit RGBA) and the start of IDAT.
  static const char kPng[] =
      "\x89PNG\r\n\x1a\n"
      "\x00\x00\x00\x0d" "IHDR" "\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
      "\x00\x00\x00\x0a" "IDAT" "\x78\x9c\x63\x00\x01\x00\x00\x05\x00\x01";
  WriteAll(dir_ / "x.onnx", std::string(kPng, sizeof(kPng) - 1));
  ExpectFileError(Inspect(dir_ / "x.onnx"), dir_ / "x.onnx");
}

TEST_F(CliBadInput, TextFileWithoutExtension) {
  WriteAll(dir_ / "notes", "hello\n");
  ExpectFileError(Inspect(dir_ / "notes"), dir_ / "notes");
}

TEST_F(CliBadInput, RandomBytes) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    for (size_t size : {size_t{7}, size_t{4096}, size_t{100000}}) {
      for (const char* ext : {".tflite", ".onnx"}) {
        fs::path file = dir_ / ("random-" + std::to_string(seed) + "-" + std::to_string(size) + ext);
        SCOPED_TRACE(file.string());
        WriteAll(file, RandomBytes(seed, size));
        ExpectFileError(Inspect(file), file);
      }
    }
  }
}

TEST_F(CliBadInput, RandomBytesWithTfliteIdentifier) {
  // Past the magic check: the flatbuffer reader has to reject the rest.
  for (std::uint32_t seed : {11u, 12u, 13u, 14u}) {
    std::string bytes = RandomBytes(seed, 4096);
    bytes.replace(4, 4, "TFL3");
    fs::path file = dir_ / ("random-tfl3-" + std::to_string(seed) + ".tflite");
    SCOPED_TRACE(file.string());
    WriteAll(file, bytes);
    ExpectFileError(Inspect(file), file);
  }
}

class CliBadInputModel : public CliBadInput, public ::testing::WithParamInterface<const char*> {};

TEST_P(CliBadInputModel, TruncatedToHalf) {
  LATTE_REQUIRE_MODEL(GetParam());
  std::string bytes = ModelBytes(GetParam());
  ASSERT_GT(bytes.size(), 1000u);
  fs::path file = dir_ / (std::string("half-") + GetParam());
  WriteAll(file, bytes.substr(0, bytes.size() / 2));
  ExpectFileError(Inspect(file), file);
}

TEST_P(CliBadInputModel, TruncatedElsewhereNeverCrashes) {
  LATTE_REQUIRE_MODEL(GetParam());
  std::string bytes = ModelBytes(GetParam());
  for (size_t keep : {size_t{1}, size_t{8}, size_t{64}, bytes.size() / 4, bytes.size() * 3 / 4, bytes.size() - 1}) {
    fs::path file = dir_ / ("cut-" + std::to_string(keep) + "-" + GetParam());
    SCOPED_TRACE(file.string());
    WriteAll(file, bytes.substr(0, keep));
    RunResult r = Inspect(file);
    if (r.exit_code == 0 && !r.signaled && !r.timed_out) continue;  // trailing bytes unused
    ExpectFileError(r, file);
  }
}

TEST_P(CliBadInputModel, FlippedBytesNeverCrash) {
  LATTE_REQUIRE_MODEL(GetParam());
  const std::string original = ModelBytes(GetParam());
  ASSERT_GT(original.size(), 1000u);
  for (std::uint32_t seed = 1; seed <= 8; ++seed) {
    std::string bytes = original;
    std::mt19937 rng(seed);
    for (int i = 0; i < 64; ++i) {
      size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(bytes[at] ^ static_cast<char>(1 + rng() % 255));  // always changes
    }
    fs::path file = dir_ / ("flipped-" + std::to_string(seed) + "-" + GetParam());
    SCOPED_TRACE(file.string());
    WriteAll(file, bytes);
    RunResult r = Inspect(file);
    EXPECT_FALSE(r.timed_out);
    ASSERT_FALSE(r.signaled) << "crashed with signal " << r.signal << " (" << strsignal(r.signal)
                             << "); stderr:\n" << r.err;
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << "exit " << r.exit_code << "; stderr:\n" << r.err;
    if (r.exit_code == 2) ExpectFileError(r, file);
  }
}

INSTANTIATE_TEST_SUITE_P(RealModels, CliBadInputModel,
                         ::testing::Values("face_detection_short_range.tflite",
                                           "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Tflite" : "Onnx");
                         });

TEST_F(CliBadInput, InspectWithoutFile) {
  ExpectOneLineError(Run({"inspect"}), "");
}

TEST_F(CliBadInput, UnknownFormat) {
  WriteAll(dir_ / "x.tflite", "irrelevant");
  ExpectOneLineError(Run({"inspect", "--format", "yaml", (dir_ / "x.tflite").string()}), "");
}

TEST_F(CliBadInput, UnknownCommand) {
  ExpectOneLineError(Run({"nosuchcommand"}), "");
}

TEST_F(CliBadInput, UnknownFlag) {
  ExpectOneLineError(Run({"inspect", "--no-such-flag", (dir_ / "x.tflite").string()}), "");
}

TEST_F(CliBadInput, BadInputShape) {
  WriteAll(dir_ / "x.tflite", "irrelevant");
  ExpectOneLineError(Run({"inspect", "--input-shape", "x=1xbanana", (dir_ / "x.tflite").string()}), "");
}

}  // namespace
