#pragma once
// Runs the built `latte` binary as a user would, capturing exit status, stdout and stderr.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace latte::testing {

/// A fresh temporary directory, removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "latte-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to the file `name` in this directory and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = (path_ / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Writes an .npy of float32 `values` in `shape`, as numpy.save does (version 1).
inline void WriteNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
  std::string dims;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff) << static_cast<char>(header.size() >> 8) << header;
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Starts the program at `argv[0]` with `argv` in the background, stdin from /dev/null, stdout
/// and stderr into the given files (or /dev/null; the same file for both gets both). With
/// `own_group`, in a process group of its own (what kills the test's group leaves it running).
/// Returns its pid, 0 (with a failure added) when it could not be started.
inline pid_t SpawnProgram(std::vector<std::string> argv_strings, const std::string& out_path = "/dev/null",
                          const std::string& err_path = "/dev/null", bool own_group = false) {
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_path == out_path) posix_spawn_file_actions_adddup2(&actions, 1, 2);
  else posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot run " << argv[0] << ": " << std::strerror(rc);
    return 0;
  }
  return pid;
}

/// Starts the built latte with `args` in the background, stdin from /dev/null, stdout and stderr
/// into the given files (or /dev/null). Returns its pid, 0 when it could not be started.
inline pid_t SpawnLatte(const std::vector<std::string>& args, const std::string& out_path = "/dev/null",
                        const std::string& err_path = "/dev/null") {
  std::vector<std::string> argv = {LATTE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return SpawnProgram(std::move(argv), out_path, err_path);
}

/// How many times slower the built latte runs than a release build: the sanitizers' (debug preset)
/// run it several times slower (loading the two shipped packs: 69 s under them).
#ifdef LATTE_SANITIZED
inline constexpr int kSlowdown = 8;
#else
inline constexpr int kSlowdown = 1;
#endif

/// Runs the built latte with `args`, stdin from /dev/null, stdout and stderr into files in `dir`.
/// Kills it after `timeout_secs` (× kSlowdown; a hang is a failure too).
inline RunResult RunLatte(const std::vector<std::string>& args, const std::filesystem::path& dir,
                          int timeout_secs = 60) {
  RunResult result;
  const std::string out_path = (dir / "stdout.txt").string();
  const std::string err_path = (dir / "stderr.txt").string();
  const pid_t pid = SpawnLatte(args, out_path, err_path);
  if (pid == 0) return result;
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_secs * kSlowdown);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = ReadAll(out_path);
  result.err = ReadAll(err_path);
  return result;
}


}  // namespace latte::testing
