#pragma once
// How busy the rest of the host was while we measured: CPU time the whole machine spent busy
// (including the hypervisor's steal) minus this process's own, per second of wall time. A run
// with N threads on a machine whose other work takes one of its cores competes for cores, and
// can be twice as slow with a perfectly steady spread: the noise check of the timings cannot see
// it, this can.

#include <string>

namespace latte {

/// One reading of the host's and this process's CPU clocks, in seconds.
struct CpuClock {
  double host_busy_s = 0;  // the CPUs this process may run on (its affinity; else all): user, nice,
                           // system, irq, softirq, steal (/proc/stat)
  int cores = 0;           // how many CPUs host_busy_s covers
  double self_s = 0;       // this process, every thread: user + system (getrusage)
  double wall_s = 0;       // monotonic
  bool ok = false;         // false when /proc/stat could not be read
};
CpuClock ReadCpuClock();

/// What others (other processes, the hypervisor) used between two readings.
struct HostLoad {
  double other_cores = -1;  // average cores' worth of CPU others used; -1 when unknown
  double window_s = 0;
  int cores = 0;  // the CPUs it was measured over (this process's)
  bool known() const { return other_cores >= 0; }
};
HostLoad LoadBetween(const CpuClock& before, const CpuClock& after);

/// Windows shorter than this are not judged: /proc/stat counts in 10 ms ticks.
inline constexpr double kMinJudgedWindowSecs = 0.3;

/// True when, over a judged window, others used more than the cores `threads` threads leave
/// free of the load's `cores`, with a quarter-core margin for the system's own ticks.
bool Contended(const HostLoad& load, int threads);

/// One line for reports: "other processes used 0.02 of 2 cores", with "busy: ... while 2
/// threads ran; times are likely slower than this machine's" when `contended`.
std::string DescribeHostLoad(const HostLoad& load, bool contended, int threads);

}  // namespace latte
