#pragma once
// The device fingerprint recorded with every measurement: a prediction is only as good as the
// machine it was measured on, so every figure says which machine that was.

#include <string>
#include <vector>

namespace latte {

struct DeviceFingerprint {
  std::string cpu_model;               // "AMD EPYC 9R14 96-Core Processor"
  int logical_cores = 0;               // cores this process may use
  std::vector<std::string> isa_flags;  // the SIMD features kernels dispatch on: avx2, fma, avx512f, ...
  double max_mhz = 0;                  // from cpufreq when exposed, else /proc/cpuinfo's current MHz
  std::string os;                      // "Linux 6.1.0 x86_64"
  /// One line: "AMD EPYC 9R14 (2 cores, avx2 fma avx512f ..., 3700 MHz, Linux ...)".
  std::string Describe() const;
  /// A short stable key for the hardware (model, cores, flags): two fingerprints with the
  /// same key are the same kind of machine.
  std::string Key() const;
};

/// The 32-bit lanes of the widest SIMD vector `isa_flags` name (DeviceFingerprint::isa_flags, or
/// the flags of a device key): 16 with avx512f, 8 with avx, 4 otherwise (SSE; and an ARM core's
/// NEON, whose flags no fingerprint records).
int FloatLanes(const std::vector<std::string>& isa_flags);

/// Reads the fingerprint of this machine from /proc and /sys (fields it cannot read stay empty).
DeviceFingerprint ReadDeviceFingerprint();

/// The data caches one core sees, in bytes (0 when not exposed).
struct CacheSizes {
  long long l1d = 0, l2 = 0, l3 = 0;
};

/// Reads the caches of cpu0 from `root` (sysfs's cpu0/cache folder: index*/level, type, size);
/// when it holds no L2 or L3 (virtual machines without the folder), what the C library reads
/// from CPUID (sysconf's _SC_LEVEL*_CACHE_SIZE).

CacheSizes ReadCacheSizes(const std::string& root = "/sys/devices/system/cpu/cpu0/cache");

/// Parses /proc/cpuinfo text (exposed for tests).
void ParseCpuInfo(const std::string& cpuinfo, DeviceFingerprint& device);

}  // namespace latte
