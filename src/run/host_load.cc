#include "run/host_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace latte {

CpuClock ReadCpuClock() {
  CpuClock c;
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    c.self_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return c;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  double v[8] = {};
  for (double& x : v)
    if (!(fields >> x)) return c;
  const double tick = static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  c.host_busy_s = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
  c.ok = true;
  return c;
}

HostLoad LoadBetween(const CpuClock& before, const CpuClock& after) {
  HostLoad load;
  load.window_s = after.wall_s - before.wall_s;
  if (!before.ok || !after.ok || load.window_s <= 0) return load;
  const double others = (after.host_busy_s - before.host_busy_s) - (after.self_s - before.self_s);
  load.other_cores = std::max(0.0, others / load.window_s);
  return load;
}

bool Contended(const HostLoad& load, int threads, int cores) {
  if (!load.known() || load.window_s < kMinJudgedWindowSecs) return false;
  const double free_cores = std::max(0, cores - std::max(1, threads));
  return load.other_cores > free_cores + 0.25;
}

std::string DescribeHostLoad(const HostLoad& load, bool contended, int threads, int cores) {
  if (!load.known()) return "other processes' load unknown (/proc/stat unreadable)";
  char text[200];
  if (load.window_s < kMinJudgedWindowSecs) {
    std::snprintf(text, sizeof(text), "other processes used %.2f of %d cores (over %.2f s: too short to judge)",
                  load.other_cores, cores, load.window_s);
  } else if (contended) {
    std::snprintf(text, sizeof(text),
                  "busy: other processes used %.2f of %d cores while %d thread%s ran; times are likely slower than "
                  "this machine's",
                  load.other_cores, cores, threads, threads == 1 ? "" : "s");
  } else {
    std::snprintf(text, sizeof(text), "other processes used %.2f of %d cores", load.other_cores, cores);
  }
  return text;
}

}  // namespace latte
