#include "run/host_load.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace latte {

namespace {

// Busy seconds in one /proc/stat cpu line's fields after the name: user nice system idle iowait
// irq softirq steal (guest time is already inside user).
bool BusySeconds(const std::string& fields_text, double tick, double& busy) {
  std::istringstream fields(fields_text);
  double v[8] = {};
  for (double& x : v)
    if (!(fields >> x)) return false;
  busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
  return true;
}

}  // namespace

CpuClock ReadCpuClock() {
  CpuClock c;
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    c.self_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  // Only the CPUs this process may run on (a container's cpuset, taskset): others' work on the
  // rest of a big machine takes nothing from us.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool have_affinity = sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_COUNT(&mine) > 0;
  const double tick = static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  std::ifstream stat("/proc/stat");
  std::string line;
  double all = 0, chosen = 0;
  int counted = 0, cpus = 0;
  bool have_all = false;
  while (std::getline(stat, line) && line.rfind("cpu", 0) == 0) {
    double busy = 0;
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || !BusySeconds(line.substr(space), tick, busy)) return c;
    if (space == 3) {  // "cpu  ...": every CPU
      all = busy;
      have_all = true;
      continue;
    }
    ++cpus;
    const int id = std::atoi(line.c_str() + 3);
    if (have_affinity && id >= 0 && id < CPU_SETSIZE && CPU_ISSET(id, &mine)) chosen += busy, ++counted;
  }
  if (have_affinity && counted > 0) {
    c.host_busy_s = chosen;
    c.cores = counted;
  } else if (have_all) {
    c.host_busy_s = all;
    c.cores = std::max(1, cpus);
  } else {
    return c;
  }
  c.ok = true;
  return c;
}

HostLoad LoadBetween(const CpuClock& before, const CpuClock& after) {
  HostLoad load;
  load.window_s = after.wall_s - before.wall_s;
  load.cores = before.cores;
  if (!before.ok || !after.ok || load.window_s <= 0) return load;
  const double others = (after.host_busy_s - before.host_busy_s) - (after.self_s - before.self_s);
  load.other_cores = std::max(0.0, others / load.window_s);
  return load;
}

bool Contended(const HostLoad& load, int threads) {
  if (!load.known() || load.window_s < kMinJudgedWindowSecs) return false;
  const double free_cores = std::max(0, load.cores - std::max(1, threads));
  return load.other_cores > free_cores + 0.25;
}

std::string DescribeHostLoad(const HostLoad& load, bool contended, int threads) {
  if (!load.known()) return "other processes' load unknown (/proc/stat unreadable)";
  const std::string used = fmt::format("other processes used {:.2f} of {} core{}", load.other_cores, load.cores,
                                       load.cores == 1 ? "" : "s");
  if (load.window_s < kMinJudgedWindowSecs) return fmt::format("{} (over {:.2f} s: too short to judge)", used, load.window_s);
  if (contended)
    return fmt::format("busy: {} while {} thread{} ran; times are likely slower than this machine's", used, threads,
                       threads == 1 ? "" : "s");
  return used;
}

}  // namespace latte
