#pragma once
// A throwaway PostgreSQL server for tests: Debian's initdb and pg_ctl (package postgresql) make a
// cluster in a fresh temporary folder and start it listening only on a Unix socket in that folder
// (no port, no network); it is stopped and the folder removed when the test process ends, and by a
// watchdog if the process dies first. initdb refuses to run as root: as root, the server runs as
// the unprivileged user `nobody` (through runuser), the folder given to it.
//
// A test calls SharedPostgresServer() and skips, saying why, when there is none (no server
// binaries on this machine); each test takes a fresh database with CreateDatabase().

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"

namespace latte::testing {

class PostgresServer {
 public:
  PostgresServer() { Start(); }
  ~PostgresServer() { Stop(); }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  bool running() const { return running_; }
  /// Why there is no server ("" when running).
  const std::string& why_not() const { return why_not_; }
  /// The folder holding the cluster and the socket.
  const std::filesystem::path& dir() const { return dir_; }

  /// The URL of database `name` on this server, over its socket.
  std::string Url(const std::string& name) const {
    return "postgresql:///" + name + "?host=" + dir_.string() + "&user=latte";
  }

  /// A new empty database; returns its URL (empty, with a failure added, when it could not).
  std::string CreateDatabase() {
    const std::string name = "t" + std::to_string(++databases_);
    if (!RunSql(Url("postgres"), "CREATE DATABASE " + name)) return "";
    return Url(name);
  }

  /// Runs `sql` on the database at `url` as another program would (libpq, no Latte); false, with
  /// the failure added, when it could not.
  static bool RunSql(const std::string& url, const std::string& sql) {
    std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), PQfinish);
    if (PQstatus(conn.get()) != CONNECTION_OK) {
      ADD_FAILURE() << url << ": " << PQerrorMessage(conn.get());
      return false;
    }
    PGresult* result = PQexec(conn.get(), sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!ok) ADD_FAILURE() << sql << ": " << PQresultErrorMessage(result);
    PQclear(result);
    return ok;
  }

  /// The first column of every row `sql` returns, one line each (how tests see a database as
  /// another program would).
  static std::string Query(const std::string& url, const std::string& sql) {
    std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), PQfinish);
    PGresult* result = PQexec(conn.get(), sql.c_str());
    std::string text;
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(result) << PQerrorMessage(conn.get());
    } else {
      for (int row = 0; row < PQntuples(result); ++row) text += std::string(PQgetvalue(result, row, 0)) + "\n";
    }
    PQclear(result);
    return text;
  }

 private:
  // Finds `name` on PATH, then in the newest /usr/lib/postgresql/*/bin (Debian keeps the server
  // binaries there, off PATH).
  static std::string FindProgram(const std::string& name) {
    if (const char* path = std::getenv("PATH")) {
      std::string dirs = path;
      for (std::size_t start = 0; start <= dirs.size();) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        const std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
        if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        start = end + 1;
      }
    }
    std::error_code ec;
    std::string best;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::filesystem::path candidate = entry.path() / "bin" / name;
      if (::access(candidate.c_str(), X_OK) == 0 && candidate.string() > best) best = candidate.string();
    }
    return best;
  }

  // Runs argv (as the server's user), its output into `log`; true when it exits 0.
  bool Run(std::vector<std::string> args, const std::string& log) const {
    if (!as_user_.empty()) args.insert(args.begin(), {runuser_, "-u", as_user_, "--"});
    const pid_t pid = SpawnProgram(std::move(args), log, log);
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  static std::string ReadText(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  void Start() {
    const std::string initdb = FindProgram("initdb"), pg_ctl = FindProgram("pg_ctl");
    if (initdb.empty() || pg_ctl.empty()) {
      why_not_ = "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin: "
                 "install Debian's postgresql package (scripts/setup does)";
      return;
    }
    pg_ctl_ = pg_ctl;
    std::string pattern = (std::filesystem::temp_directory_path() / "latte-pg-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      why_not_ = "cannot make a temporary folder for the PostgreSQL server";
      return;
    }
    dir_ = pattern;
    owner_ = ::getpid();
    if (::geteuid() == 0) {  // initdb refuses root: the server runs as nobody, in a folder of its own
      runuser_ = FindProgram("runuser");
      const passwd* nobody = ::getpwnam("nobody");
      if (runuser_.empty() || nobody == nullptr || ::chown(dir_.c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
        why_not_ = "running as root, and cannot run the PostgreSQL server as the user nobody (runuser, chown)";
        return;
      }
      as_user_ = "nobody";
    }
    const std::string data = (dir_ / "data").string(), log = (dir_ / "initdb.log").string();
    if (!Run({initdb, "-D", data, "-U", "latte", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"}, log)) {
      why_not_ = "initdb failed: " + ReadText(log);
      return;
    }
    const std::string start_log = (dir_ / "start.log").string();
    // Only the socket in our folder; no durability needed by a server that lives for one test.
    const std::string options = "-c listen_addresses='' -k " + dir_.string() +
                                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
    if (!Run({pg_ctl, "-D", data, "-l", (dir_ / "server.log").string(), "-w", "-t", "60", "-o", options, "start"},
             start_log)) {
      why_not_ = "pg_ctl start failed: " + ReadText(start_log) + ReadText(dir_ / "server.log");
      Run({pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"}, "/dev/null");
      return;
    }
    running_ = true;
    StartWatchdog(data);
  }

  // A process that stops the server and removes the folder once this one is gone, however it ended.
  void StartWatchdog(const std::string& data) {
    const std::string stop = (as_user_.empty() ? "" : runuser_ + " -u " + as_user_ + " -- ") + pg_ctl_ + " -D " +
                             data + " -m immediate -w stop";
    const std::string script = "while kill -0 " + std::to_string(owner_) + " 2>/dev/null; do sleep 1; done; " + stop +
                               " >/dev/null 2>&1; rm -rf " + dir_.string();
    // Its own process group: what kills the test's group (a timeout) leaves it to clean up.
    watchdog_ = SpawnProgram({"/bin/sh", "-c", script}, "/dev/null", "/dev/null", /*own_group=*/true);
  }

  void Stop() {
    if (dir_.empty() || ::getpid() != owner_) return;  // a forked child of a test leaves it alone
    if (running_) Run({pg_ctl_, "-D", (dir_ / "data").string(), "-m", "immediate", "-w", "stop"}, "/dev/null");
    if (watchdog_ > 0) {
      ::kill(watchdog_, SIGKILL);
      ::waitpid(watchdog_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool running_ = false;
  std::string why_not_;
  std::filesystem::path dir_;
  std::string pg_ctl_, runuser_, as_user_;
  pid_t owner_ = 0, watchdog_ = 0;
  int databases_ = 0;
};

/// The server of this test process, started on first use and stopped when the process ends.
/// Check running() (and skip with why_not()) before using it.
inline PostgresServer& SharedPostgresServer() {
  static PostgresServer server;
  return server;
}

}  // namespace latte::testing
