#include "run/host_load.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <ctime>
#include <thread>

#include "run/measure.h"

namespace latte {
namespace {

CpuClock Clock(double busy, double self, double wall) {
  CpuClock c;
  c.host_busy_s = busy, c.self_s = self, c.wall_s = wall, c.cores = 2, c.ok = true;
  return c;
}

// Spins for `secs` of wall time.
// This process's CPU time in seconds.
double ProcessCpuSecs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Spins until this process has used `secs` of CPU (not of wall time: on a busy host a wall-clock
// spin gets less CPU than it asked for), or 20 times that in wall time.
void Spin(double secs) {
  const double until = ProcessCpuSecs() + secs;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(20 * secs);
  volatile unsigned long x = 0;
  while (ProcessCpuSecs() < until && std::chrono::steady_clock::now() < give_up) x = x + 1;
}

pid_t SpinningChild(double secs) {
  const pid_t pid = fork();
  if (pid == 0) {
    Spin(secs);
    _exit(0);
  }
  return pid;
}

TEST(HostLoad, OthersAreTheHostsBusyTimeLessOursPerSecond) {
  HostLoad load = LoadBetween(Clock(10, 1, 100), Clock(12.5, 2, 101));
  EXPECT_DOUBLE_EQ(load.other_cores, 1.5);
  EXPECT_DOUBLE_EQ(load.window_s, 1.0);
  // Ticks and rusage disagree a little: never below zero.
  EXPECT_DOUBLE_EQ(LoadBetween(Clock(10, 1, 100), Clock(10.9, 2, 101)).other_cores, 0.0);
  EXPECT_FALSE(LoadBetween(CpuClock{}, Clock(12, 2, 101)).known());
}

TEST(HostLoad, ContendedWhenOthersTakeCoresTheRunNeeds) {
  auto load = [](double other, double window = 1.0) { return HostLoad{other, window, 2}; };
  EXPECT_FALSE(Contended(load(0.1), 2));
  EXPECT_TRUE(Contended(load(0.5), 2));   // two threads need both cores
  EXPECT_FALSE(Contended(load(1.0), 1));  // one thread leaves a core for the others
  EXPECT_TRUE(Contended(load(1.5), 1));
  EXPECT_FALSE(Contended(load(1.5, 0.1), 1));  // too short a window to judge
  EXPECT_FALSE(Contended(HostLoad{}, 2));       // unknown is not a verdict
  EXPECT_NE(DescribeHostLoad(load(0.5), true, 2).find("busy: other processes used 0.50 of 2 cores while 2 threads"),
            std::string::npos);
  EXPECT_EQ(DescribeHostLoad(load(0.02), false, 1), "other processes used 0.02 of 2 cores");
}

TEST(HostLoad, ReadsThisProcessAsOursAndAChildAsOthers) {
  const CpuClock before = ReadCpuClock();
  ASSERT_TRUE(before.ok) << "/proc/stat unreadable";
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  EXPECT_EQ(before.cores, CPU_COUNT(&mine));  // the CPUs this process may run on
  Spin(0.4);  // this process: counted as ours
  const CpuClock middle = ReadCpuClock();
  EXPECT_GE(middle.self_s - before.self_s, 0.2);
  const pid_t child = SpinningChild(0.6);  // another process: counted as others
  ASSERT_GT(child, 0);
  int status = 0;
  waitpid(child, &status, 0);
  const HostLoad load = LoadBetween(middle, ReadCpuClock());
  EXPECT_GE(load.other_cores, 0.3) << "window " << load.window_s << " s";
}

TEST(Measure, ReMeasuresAndSaysSoWhenOthersTakeTheCoresItNeeds) {
  const int cores = ReadCpuClock().cores;
  // A run that needs every core (it sleeps, so the spinners always get theirs), while a child per
  // core spins through all attempts.
  std::vector<pid_t> children;
  for (int i = 0; i < cores; ++i) children.push_back(SpinningChild(3.0));
  MeasureOptions options;
  options.warmup_runs = 0;
  options.min_warmup_secs = 0;
  options.num_runs = 5;
  options.min_secs = 0.4;
  options.threads = cores;
  auto m = Measure([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); return Status::Ok(); }, options);
  for (pid_t c : children) {
    int status = 0;
    kill(c, SIGKILL);
    waitpid(c, &status, 0);
  }
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->contended) << DescribeHostLoad(m->host, m->contended, cores);
  EXPECT_EQ(m->attempts, 1 + options.max_remeasures);
  EXPECT_GE(m->host.other_cores, 0.5);
}

}  // namespace
}  // namespace latte
