#include "run/process.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's own count (its header is not always installed; the function is its ABI).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace latte {
namespace {

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Expected<nlohmann::json> RunInChild(const std::function<nlohmann::json()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    std::string text;
    try {
      text = work().dump();
    } catch (const std::exception& e) {
      text = nlohmann::json{{"child_error", e.what()}}.dump();
    }
    _exit(WriteAll(fds[1], text) ? 0 : 3);
  }
  close(fds[1]);
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return Internal("the child process running it died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                    strsignal(WTERMSIG(status)) + ")");
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return Internal("the child process running it exited with status " + std::to_string(WEXITSTATUS(status)) +
                    " and no report");
  if (json.contains("child_error")) return Internal(json["child_error"].get<std::string>());
  return json;
}

long PeakRssKb() {
  // VmHWM honours a reset through clear_refs; getrusage's figure does not.
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    std::fclose(f);
    if (kb >= 0) return kb;
  }
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_maxrss;  // Linux reports KB
}

bool ResetMemoryHighWater() {
  malloc_trim(0);
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;  // 5: reset the peak resident set size
  return std::fclose(f) == 0 && ok;
}

long CurrentRssKb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long size = 0, resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::size_t HeapBytesInUse() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // in-use arena chunks + mmap'ed chunks
#endif
}

}  // namespace latte
