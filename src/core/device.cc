#include "core/device.h"

#include <sched.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "core/text.h"

namespace latte {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The flags that decide which kernels a library picks; the full list is too long to key on.
constexpr const char* kIsaFlags[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                                     "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "neon", "asimd", "asimddp"};

}  // namespace

void ParseCpuInfo(const std::string& cpuinfo, DeviceFingerprint& device) {
  std::istringstream lines(cpuinfo);
  std::string line;
  std::vector<std::string> flags;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key(Trim(line.substr(0, colon))), value(Trim(line.substr(colon + 1)));
    if (device.cpu_model.empty() && (key == "model name" || key == "Hardware")) device.cpu_model = value;
    if (device.max_mhz == 0 && key == "cpu MHz") device.max_mhz = std::atof(value.c_str());
    if (flags.empty() && (key == "flags" || key == "Features")) {
      std::istringstream words(value);
      flags.assign(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>());
    }
  }
  device.isa_flags.clear();
  for (const char* f : kIsaFlags)
    if (std::find(flags.begin(), flags.end(), f) != flags.end()) device.isa_flags.emplace_back(f);
}

DeviceFingerprint ReadDeviceFingerprint() {
  DeviceFingerprint device;
  ParseCpuInfo(ReadText("/proc/cpuinfo"), device);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) device.logical_cores = CPU_COUNT(&set);
  const std::string max_khz(Trim(ReadText("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")));
  if (!max_khz.empty()) device.max_mhz = std::atof(max_khz.c_str()) / 1000.0;
  utsname u{};
  if (uname(&u) == 0) device.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return device;
}

std::string DeviceFingerprint::Describe() const {
  std::string flags;
  for (const auto& f : isa_flags) flags += (flags.empty() ? "" : " ") + f;
  return (cpu_model.empty() ? "unknown CPU" : cpu_model) + " (" + std::to_string(logical_cores) + " cores, " +
         (flags.empty() ? "no SIMD flags read" : flags) + ", " + std::to_string(static_cast<int>(max_mhz)) + " MHz, " +
         os + ")";
}

int FloatLanes(const std::vector<std::string>& isa_flags) {
  auto has = [&](const char* flag) { return std::find(isa_flags.begin(), isa_flags.end(), flag) != isa_flags.end(); };
  return has("avx512f") ? 16 : has("avx") ? 8 : 4;
}

std::string DeviceFingerprint::Key() const {
  std::string key = cpu_model + "|" + std::to_string(logical_cores) + "|";
  for (const auto& f : isa_flags) key += f + ",";
  return key;
}

CacheSizes ReadCacheSizes(const std::string& root) {
  CacheSizes caches;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = root + "/index" + std::to_string(index) + "/";
    const std::string level(Trim(ReadText(dir + "level"))), type(Trim(ReadText(dir + "type")));
    const std::string size(Trim(ReadText(dir + "size")));
    if (level.empty() || size.empty() || type == "Instruction") continue;
    // "48K", "1024K", "32768K", "1M"
    long long bytes = 0;
    std::size_t used = 0;
    try {
      bytes = std::stoll(size, &used);
    } catch (const std::exception&) {
      continue;
    }
    const std::string unit = size.substr(used);
    if (unit == "K") bytes <<= 10;
    else if (unit == "M") bytes <<= 20;
    else if (unit == "G") bytes <<= 30;
    else if (!unit.empty()) continue;
    if (level == "1") caches.l1d = bytes;
    else if (level == "2") caches.l2 = bytes;
    else if (level == "3") caches.l3 = bytes;
  }
  // Some virtual machines have no sysfs cache folder: the C library's reading of CPUID instead.
  if (caches.l2 == 0 && caches.l3 == 0) {
    caches.l1d = std::max(0L, sysconf(_SC_LEVEL1_DCACHE_SIZE));
    caches.l2 = std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE));
    caches.l3 = std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE));
  }
  return caches;
}

}  // namespace latte
