#include "core/device.h"

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

TEST(Device, ReadsThisMachine) {
  DeviceFingerprint d = ReadDeviceFingerprint();
  EXPECT_GE(d.logical_cores, 1);
  EXPECT_FALSE(d.os.empty());
}

}  // namespace
}  // namespace latte
