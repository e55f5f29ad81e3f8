// `latte lab submit | work | status` as a lab runs them, against a throwaway PostgreSQL server: a
// worker killed with SIGKILL in the middle of a job loses no completed measurement and duplicates
// none (its job goes to the next worker once its lease runs out), two workers with different
// --device-name share a campaign's jobs and each stores its own device's measurements, the status
// counts are exact, and errors (no server, bad flags, a SQLite file) are one line and exit 2 with no
// password shown or stored.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../db/postgres_server.h"
#include "cli/run_latte.h"

namespace latte::testing {
namespace {

constexpr const char* kPassword = "pw-L4bSecret";

class LabCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
    url_ = SharedPostgresServer().CreateDatabase();
    ASSERT_FALSE(url_.empty());
  }
  // The database's URL with a password in it (the test server logs in by trust, never asking).
  std::string WithPassword() const {
    std::string url = url_;
    url.replace(0, 13, "postgresql://latte:" + std::string(kPassword) + "@");
    return url;
  }
  static std::string Masked(std::string url) {
    const std::size_t at = url.find(kPassword);
    if (at != std::string::npos) url.replace(at, std::string(kPassword).size(), "***");
    return url;
  }
  std::string Query(const std::string& sql) const { return PostgresServer::Query(url_, sql); }
  long Number(const std::string& sql) const {
    const std::string text = Query(sql);
    return text.empty() ? 0 : std::stol(text);
  }

  // Submits `kernels` relu kernels in jobs of `job_size`, each kernel timed for at least `min_secs`.
  void Submit(const TempDir& dir, int kernels, int job_size, const std::string& min_secs, const std::string& url = "") {
    RunResult r = RunLatte({"lab", "submit", "--db", url.empty() ? url_ : url, "--device-class", "epyc", "--strategy",
                            "random", "--kernels", "relu", "--max-kernels", std::to_string(kernels), "--seed", "3",
                            "--job-size", std::to_string(job_size), "--num-runs", "3", "--warmup-runs", "1",
                            "--min-secs", min_secs},
                           dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const int jobs = (kernels + job_size - 1) / job_size;
    EXPECT_NE(r.out.find(std::to_string(kernels) + " kernels in " + std::to_string(jobs) + " jobs"), std::string::npos)
        << r.out;
  }

  std::string url_;
};

// Waits (at most `secs`) until `sql` on `url` answers `want`.
bool WaitFor(const std::string& url, const std::string& sql, const std::string& want, double secs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PostgresServer::Query(url, sql) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_F(LabCli, AWorkerKilledMidJobLosesNothingAndDuplicatesNothing) {
  TempDir dir;
  Submit(dir, 24, 4, "0.05");  // 6 jobs, each some tenths of a second
  const std::vector<std::string> work = {"lab", "work", "--db", url_, "--device-name", "board-1", "--lease", "1s"};
  std::vector<std::string> argv = {LATTE_BINARY};
  argv.insert(argv.end(), work.begin(), work.end());
  const pid_t pid = SpawnProgram(argv, (dir.path() / "killed.out").string(), (dir.path() / "killed.err").string());
  ASSERT_GT(pid, 0);
  // Once it has completed a job and holds the next one, SIGKILL: no chance to clean up.
  const bool mid_job = WaitFor(url_,
                               "SELECT count(*) FILTER (WHERE state = 'done') >= 1 AND "
                               "count(*) FILTER (WHERE state = 'claimed') = 1 FROM lab_jobs",
                               "t\n", 60 * kSlowdown);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(mid_job) << ReadAll(dir.path() / "killed.err");
  const long done = Number("SELECT count(*) FROM lab_jobs WHERE state = 'done'");
  const std::string killed_job = Query("SELECT id FROM lab_jobs WHERE state = 'claimed'");
  ASSERT_LT(done, 6);
  // Every completed job's measurements are there, and nothing of the job it was measuring.
  EXPECT_EQ(Number("SELECT count(*) FROM measurements"), 4 * done);

  // The next worker waits for the dead one's lease to run out, then takes its job.
  RunResult next = RunLatte(work, dir.path(), 120);
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.out.find("as device board-1: " + std::to_string(6 - done) + " jobs done (" +
                          std::to_string(4 * (6 - done)) + " kernels measured, 0 unsupported), 0 lost"),
            std::string::npos)
      << next.out;
  EXPECT_EQ(Query("SELECT attempt FROM lab_jobs WHERE id = " + killed_job), "2\n");
  EXPECT_EQ(Query("SELECT count(*) FROM lab_jobs WHERE state <> 'done'"), "0\n");
  EXPECT_EQ(Query("SELECT count(*) FROM measurements"), "24\n");
  EXPECT_EQ(Query("SELECT count(DISTINCT kernel_id) FROM measurements"), "24\n");
  EXPECT_EQ(Query("SELECT count(DISTINCT campaign_id) FROM measurements"), "1\n");
  EXPECT_EQ(Query("SELECT done FROM campaigns WHERE kind = 'lab'"), "24\n");
  // Drift readings of the reference kernel go with each completed job.
  EXPECT_GE(Number("SELECT count(*) FROM reference_measurements"), 6);
}

TEST_F(LabCli, AWorkerStoppedWithSigintGivesItsJobBackAtOnce) {
  TempDir dir;
  Submit(dir, 12, 4, "0.05");  // 3 jobs
  const pid_t pid = SpawnProgram({LATTE_BINARY, "lab", "work", "--db", url_, "--device-name", "board-2", "--lease", "10m"},
                                 (dir.path() / "w.out").string(), (dir.path() / "w.err").string());
  ASSERT_GT(pid, 0);
  const bool claimed = WaitFor(url_, "SELECT count(*) FROM lab_jobs WHERE state = 'claimed'", "1\n", 60 * kSlowdown);
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(claimed) << ReadAll(dir.path() / "w.err");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << ReadAll(dir.path() / "w.err");
  // Nothing held: the job is queued again now, not when its 10-minute lease would have run out.
  EXPECT_EQ(Query("SELECT count(*) FROM lab_jobs WHERE state = 'claimed'"), "0\n");
  const long done = Number("SELECT count(*) FROM lab_jobs WHERE state = 'done'");
  EXPECT_EQ(Number("SELECT count(*) FROM lab_jobs WHERE state = 'queued' AND attempt = 0"), 3 - done);
  EXPECT_EQ(Number("SELECT count(*) FROM measurements"), 4 * done);
  RunResult next = RunLatte({"lab", "work", "--db", url_, "--device-name", "board-2"}, dir.path(), 120);
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(Query("SELECT count(*) FROM measurements"), "12\n");
}

TEST_F(LabCli, TwoDevicesShareTheJobsAndEachStoresItsOwnMeasurements) {
  TempDir dir;
  Submit(dir, 16, 2, "0.05");  // 8 jobs
  std::vector<pid_t> pids;
  for (const std::string name : {"phone-a", "phone-b"}) {
    pids.push_back(SpawnProgram({LATTE_BINARY, "lab", "work", "--db", url_, "--device-name", name, "--format", "json"},
                                (dir.path() / (name + ".out")).string(), (dir.path() / (name + ".err")).string()));
    ASSERT_GT(pids.back(), 0);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  long jobs = 0, measured = 0;
  for (const std::string name : {"phone-a", "phone-b"}) {
    const nlohmann::json out = nlohmann::json::parse(ReadAll(dir.path() / (name + ".out")), nullptr, false);
    ASSERT_TRUE(out.is_object()) << ReadAll(dir.path() / (name + ".err"));
    EXPECT_EQ(out["device"], name);
    EXPECT_GE(out["jobs"].get<long>(), 1) << name << " took no job";
    jobs += out["jobs"].get<long>();
    measured += out["measured"].get<long>();
    // Its measurements carry its name and this machine's fingerprint, in a campaign of its own.
    EXPECT_EQ(Number("SELECT count(*) FROM measurements m JOIN devices d ON d.id = m.device_id WHERE d.key = '" + name + "'"),
              out["measured"].get<long>());
    EXPECT_EQ(Query("SELECT fingerprint::json->>'name' FROM devices WHERE key = '" + name + "'"), name + "\n");
    EXPECT_NE(Query("SELECT fingerprint::json->>'cpu_model' FROM devices WHERE key = '" + name + "'"), "\n");
    EXPECT_EQ(Query("SELECT count(DISTINCT m.campaign_id) FROM measurements m JOIN devices d ON d.id = m.device_id "
                    "WHERE d.key = '" + name + "'"),
              "1\n");
  }
  EXPECT_EQ(jobs, 8);
  EXPECT_EQ(measured, 16);
  EXPECT_EQ(Query("SELECT count(DISTINCT kernel_id) FROM measurements"), "16\n");  // no kernel twice
  EXPECT_EQ(Query("SELECT count(*) FROM campaigns WHERE kind = 'lab'"), "2\n");

  RunResult status = RunLatte({"lab", "status", "--db", url_, "--format", "json"}, dir.path());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const nlohmann::json json = nlohmann::json::parse(status.out);
  ASSERT_EQ(json["campaigns"].size(), 1u);
  const nlohmann::json& c = json["campaigns"][0];
  EXPECT_EQ(c["device_class"], "epyc");
  EXPECT_EQ(c["jobs"], 8);
  EXPECT_EQ(c["done"], 8);
  EXPECT_EQ(c["claimed"], 0);
  EXPECT_EQ(c["failed"], 0);
  EXPECT_EQ(c["left"], 0);
  EXPECT_EQ(c["measured"], 16);
  EXPECT_GT(c["kernels_per_sec"].get<double>(), 0);
  ASSERT_EQ(json["devices"].size(), 2u);
  EXPECT_EQ(json["devices"][0]["device"], "phone-a");
  EXPECT_EQ(json["devices"][1]["device"], "phone-b");
  EXPECT_EQ(json["devices"][0]["done"].get<long>() + json["devices"][1]["done"].get<long>(), 8);
  RunResult text = RunLatte({"lab", "status", "--db", url_}, dir.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("campaign  class  configuration"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("phone-a"), std::string::npos) << text.out;
}

TEST_F(LabCli, StatusCountsWhatIsLeftBeforeAnyWorkerCame) {
  TempDir dir;
  Submit(dir, 5, 2, "0");  // 3 jobs
  RunResult again = RunLatte({"lab", "submit", "--db", url_, "--device-class", "epyc", "--strategy", "random",
                              "--kernels", "relu", "--max-kernels", "5", "--seed", "3", "--job-size", "2",
                              "--num-runs", "3", "--warmup-runs", "1", "--min-secs", "0"},
                             dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("was submitted before (5 kernels in 3 jobs); queued its 0 failed jobs again"),
            std::string::npos)
      << again.out;
  RunResult status = RunLatte({"lab", "status", "--db", url_, "--format", "json"}, dir.path());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const nlohmann::json c = nlohmann::json::parse(status.out)["campaigns"][0];
  EXPECT_EQ(c["jobs"], 3);
  EXPECT_EQ(c["left"], 3);
  EXPECT_EQ(c["done"], 0);
  EXPECT_EQ(c["kernels"], 5);
  // One job, then stop.
  RunResult one = RunLatte({"lab", "work", "--db", url_, "--max-jobs", "1"}, dir.path());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  status = RunLatte({"lab", "status", "--db", url_, "--format", "json"}, dir.path());
  const nlohmann::json after = nlohmann::json::parse(status.out)["campaigns"][0];
  EXPECT_EQ(after["done"], 1);
  EXPECT_EQ(after["left"], 2);
  EXPECT_EQ(after["kernels_done"], 2);
}

TEST_F(LabCli, ErrorsAreOneLineAndExitTwo) {
  TempDir dir;
  const std::string gone = "postgresql://latte:" + std::string(kPassword) + "@/lab?host=" + dir.path().string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"lab", "submit", "--db", gone, "--device-class", "x", "--kernels", "relu"},
        std::vector<std::string>{"lab", "work", "--db", gone}, std::vector<std::string>{"lab", "status", "--db", gone}}) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_EQ(r.err.rfind("error: " + Masked(gone) + ": cannot connect (", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
  }
  const std::string file = (dir.path() / "lab.db").string();
  const std::pair<std::vector<std::string>, std::string> bad[] = {
      {{"lab", "work"}, "error: --db is required"},
      {{"lab"}, "error: A subcommand is required"},
      {{"lab", "submit", "--db", url_, "--kernels", "relu"}, "error: --device-class is required"},
      {{"lab", "submit", "--db", url_, "--device-class", "x"}, "error: --kernels is required for --strategy grid"},
      {{"lab", "submit", "--db", url_, "--device-class", "x", "--kernels", "relu", "--strategy", "adaptive"},
       "adaptive not in {grid,random,from-models,architectures,transformers}"},
      {{"lab", "submit", "--db", url_, "--device-class", "x", "--kernels", "relu", "--backend", "nope"},
       "unknown backend 'nope'"},
      {{"lab", "work", "--db", url_, "--lease", "0.05s"}, "error: --lease: 0.05s is not in 0.1s..7d"},
      {{"lab", "work", "--db", url_, "--lease", "0s"}, "error: --lease: bad duration"},
      {{"lab", "work", "--db", url_, "--lease", "soon"}, "error: --lease: "},
      {{"lab", "work", "--db", url_, "--bogus"}, "error: unknown flag '--bogus'"},
      {{"lab", "submit", "--db", file, "--device-class", "x", "--kernels", "relu"},
       "error: " + file + ": latte lab needs a PostgreSQL store (--db postgresql://...), because "},
      {{"lab", "work", "--db", file}, "error: " + file + ": latte lab needs a PostgreSQL store"},
      {{"lab", "status", "--db", file}, "error: " + file + ": latte lab needs a PostgreSQL store"},
  };
  for (const auto& [args, want] : bad) {
    RunResult r = RunLatte(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << want;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(file));  // refused before a file was made
}

TEST_F(LabCli, APasswordIsNeverShownNorStored) {
  TempDir dir;
  const std::string url = WithPassword();
  Submit(dir, 4, 2, "0", url);
  std::vector<RunResult> runs;
  runs.push_back(RunLatte({"lab", "submit", "--db", url, "--device-class", "epyc", "--strategy", "random", "--kernels",
                           "relu", "--max-kernels", "4", "--seed", "3", "--job-size", "2", "--num-runs", "3",
                           "--warmup-runs", "1", "--min-secs", "0", "--format", "json"},
                          dir.path()));
  runs.push_back(RunLatte({"lab", "work", "--db", url}, dir.path()));
  runs.push_back(RunLatte({"lab", "status", "--db", url}, dir.path()));
  runs.push_back(RunLatte({"lab", "status", "--db", url, "--format", "json"}, dir.path()));
  for (const RunResult& r : runs) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find(kPassword), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(kPassword), std::string::npos) << r.err;
  }
  EXPECT_NE(runs[2].out.find(Masked(url)), std::string::npos) << runs[2].out;
  EXPECT_EQ(Query("SELECT count(*) FROM lab_jobs WHERE state = 'done'"), "2\n");
  // Stored provenance: no row of any table holds it.
  for (const char* table : {"lab_submissions", "lab_jobs", "campaigns", "devices", "backends", "measurements",
                            "reference_measurements"}) {
    EXPECT_EQ(Query(std::string("SELECT count(*) FROM ") + table + " t WHERE t::text LIKE '%" + kPassword + "%'"), "0\n")
        << table;
  }
}

}  // namespace
}  // namespace latte::testing
