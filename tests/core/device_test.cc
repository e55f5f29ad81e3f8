#include "core/device.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(Device, ParsesCpuInfo) {
  const std::string cpuinfo =
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "model name\t: AMD EPYC 9R14 96-Core Processor\n"
      "cpu MHz\t\t: 3699.998\n"
      "flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512vl avx512_vnni avx512_bf16 xsave\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: something else\n";
  DeviceFingerprint d;
  ParseCpuInfo(cpuinfo, d);
  EXPECT_EQ(d.cpu_model, "AMD EPYC 9R14 96-Core Processor");
  EXPECT_NEAR(d.max_mhz, 3699.998, 1e-9);
  EXPECT_EQ(d.isa_flags, (std::vector<std::string>{"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                                                    "avx512_vnni", "avx512_bf16"}));
  d.logical_cores = 2;
  d.os = "Linux 6.1 x86_64";
  EXPECT_EQ(d.Describe(),
            "AMD EPYC 9R14 96-Core Processor (2 cores, sse4_2 avx avx2 fma avx512f avx512bw avx512vl avx512_vnni "
            "avx512_bf16, 3699 MHz, Linux 6.1 x86_64)");
  DeviceFingerprint other = d;
  other.max_mhz = 1000;  // the clock is not part of the key: it varies between reads
  EXPECT_EQ(d.Key(), other.Key());
  other.logical_cores = 4;
  EXPECT_NE(d.Key(), other.Key());
}

TEST(Device, FloatLanesOfTheWidestVector) {
  EXPECT_EQ(FloatLanes({"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"}), 16);
  EXPECT_EQ(FloatLanes({"sse4_2", "avx", "avx2", "fma"}), 8);
  EXPECT_EQ(FloatLanes({"sse4_2"}), 4);
  EXPECT_EQ(FloatLanes({}), 4);
}

TEST(Device, ReadsThisMachine) {
  DeviceFingerprint d = ReadDeviceFingerprint();
  EXPECT_GE(d.logical_cores, 1);
  EXPECT_FALSE(d.os.empty());
}

}  // namespace
}  // namespace latte

#include <filesystem>
#include <fstream>

namespace latte {
namespace {

void WriteCache(const std::filesystem::path& root, int index, const char* level, const char* type, const char* size) {
  const auto dir = root / ("index" + std::to_string(index));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "level") << level << "\n";
  std::ofstream(dir / "type") << type << "\n";
  std::ofstream(dir / "size") << size << "\n";
}

TEST(CacheSizes, ReadsDataAndUnifiedLevelsAndSkipsInstructionCaches) {
  const auto root = std::filesystem::temp_directory_path() / ("latte-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  WriteCache(root, 0, "1", "Data", "48K");
  WriteCache(root, 1, "1", "Instruction", "32K");
  WriteCache(root, 2, "2", "Unified", "1024K");
  WriteCache(root, 3, "3", "Unified", "32M");
  const CacheSizes caches = ReadCacheSizes(root.string());
  EXPECT_EQ(caches.l1d, 48 << 10);
  EXPECT_EQ(caches.l2, 1 << 20);
  EXPECT_EQ(caches.l3, 32ll << 20);
  WriteCache(root, 3, "3", "Unified", "lots");  // unreadable: left at 0
  EXPECT_EQ(ReadCacheSizes(root.string()).l3, 0);
  std::filesystem::remove_all(root);
  // No folder (a virtual machine without it): the C library's CPUID reading, whatever it says here.
  const CacheSizes none = ReadCacheSizes(root.string());
  EXPECT_EQ(none.l2, std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE)));
  EXPECT_EQ(none.l3, std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE)));
}

}  // namespace
}  // namespace latte
