#include "db/store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/campaign_key.h"
#include "db/postgres_connection.h"
#include "db/server_url.h"
#include "db/sql_connection.h"
#include "db/sqlite_connection.h"

namespace latte {
namespace {

using sql::Statement;
using sql::ValueType;

// Schema, one entry per version: migrations[i] takes user_version i to i + 1. Only ever append.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  fingerprint TEXT NOT NULL);
CREATE TABLE backends(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  threads INTEGER NOT NULL,
  precision TEXT NOT NULL,
  UNIQUE(name, version, threads, precision));
CREATE TABLE kernels(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  params TEXT NOT NULL,
  dtype TEXT NOT NULL);
CREATE TABLE campaigns(
  id INTEGER PRIMARY KEY,
  command TEXT NOT NULL,
  space TEXT NOT NULL,
  created TEXT NOT NULL,
  planned INTEGER NOT NULL DEFAULT 0,
  done INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  UNIQUE(command, space));
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  backend_id INTEGER NOT NULL REFERENCES backends(id),
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  campaign_id INTEGER REFERENCES campaigns(id),
  n INTEGER NOT NULL,
  p0 REAL, p10 REAL, p50 REAL, p90 REAL, p100 REAL, mean REAL, std REAL,
  time TEXT NOT NULL,
  source TEXT NOT NULL,
  UNIQUE(campaign_id, kernel_id));
CREATE INDEX measurements_by_kernel ON measurements(kernel_id);
CREATE INDEX measurements_by_backend ON measurements(backend_id, device_id);
CREATE TABLE unsupported(
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  backend_id INTEGER NOT NULL REFERENCES backends(id),
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  campaign_id INTEGER REFERENCES campaigns(id),
  why TEXT NOT NULL,
  time TEXT NOT NULL,
  UNIQUE(campaign_id, kernel_id));
)sql",
    // 1 -> 2: p99, and the reference kernel's readings for drift.
    R"sql(
ALTER TABLE measurements ADD COLUMN p99 REAL;
CREATE TABLE reference_measurements(
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  time TEXT NOT NULL,
  p50 REAL NOT NULL,
  kernel_key TEXT NOT NULL);
CREATE INDEX reference_by_campaign ON reference_measurements(campaign_id);
)sql",
    // 2 -> 3: layers measured inside graphs and alone (the in-graph context of a pack).
    R"sql(
CREATE TABLE graph_layers(
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  backend_id INTEGER NOT NULL REFERENCES backends(id),
  graph TEXT NOT NULL,
  layer INTEGER NOT NULL,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  in_graph_us REAL NOT NULL,
  alone_us REAL NOT NULL,
  weight_bytes INTEGER NOT NULL,
  output_bytes INTEGER NOT NULL,
  inputs TEXT NOT NULL,
  time TEXT NOT NULL,
  UNIQUE(campaign_id, graph, layer));
)sql",
    // 3 -> 4: a campaign's identity as columns (db/campaign_key.h), not the text of a command line;
    // FillCampaignKeys fills them for the campaigns already stored.
    R"sql(
ALTER TABLE campaigns ADD COLUMN kind TEXT;
ALTER TABLE campaigns ADD COLUMN backend TEXT;
ALTER TABLE campaigns ADD COLUMN threads INTEGER;
ALTER TABLE campaigns ADD COLUMN precision TEXT;
ALTER TABLE campaigns ADD COLUMN settings TEXT;
ALTER TABLE campaigns ADD COLUMN strategy TEXT;
ALTER TABLE campaigns ADD COLUMN seed INTEGER;
CREATE UNIQUE INDEX campaigns_by_key ON campaigns(kind, backend, threads, precision, settings, space);
)sql",
    // 4 -> 5: work handed out by the database (db/lab_queue.h): a lab campaign submitted for a class
    // of devices, cut into jobs of kernels that workers claim under a lease. Times of the queue
    // (lease_until, claimed_at, finished_at) are seconds since the epoch by the server's clock.
    R"sql(
CREATE TABLE lab_submissions(
  id INTEGER PRIMARY KEY,
  device_class TEXT NOT NULL,
  backend TEXT NOT NULL,
  threads INTEGER NOT NULL,
  precision TEXT NOT NULL,
  settings TEXT NOT NULL,
  space TEXT NOT NULL,
  created TEXT NOT NULL,
  jobs INTEGER NOT NULL,
  kernels INTEGER NOT NULL,
  UNIQUE(device_class, backend, threads, precision, settings, space));
CREATE TABLE lab_jobs(
  id INTEGER PRIMARY KEY,
  submission_id INTEGER NOT NULL REFERENCES lab_submissions(id),
  seq INTEGER NOT NULL,
  kernels TEXT NOT NULL,
  size INTEGER NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  worker TEXT,
  device_id INTEGER REFERENCES devices(id),
  lease_until REAL,
  claimed_at REAL,
  finished_at REAL,
  measured INTEGER NOT NULL DEFAULT 0,
  unsupported INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  UNIQUE(submission_id, seq));
CREATE INDEX lab_jobs_open ON lab_jobs(id) WHERE state IN ('queued', 'claimed');
CREATE INDEX lab_jobs_by_device ON lab_jobs(device_id, submission_id);
)sql",
    // 5 -> 6: the runs of `latte validate` and `latte compare` (db/run_history.h), a lab's history of
    // accuracy per device: one row per run (validate's configuration is the pack's; compare's rows
    // each name theirs), its models' figures in run_validations or run_comparisons. A figure a run
    // did not have (a configuration that could not run, no RAPL) is NULL.
    R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  command TEXT NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  time TEXT NOT NULL,
  arguments TEXT NOT NULL,
  pack TEXT,
  pack_hash TEXT,
  pack_device TEXT,
  backend TEXT,
  threads INTEGER,
  precision TEXT,
  drift_ratio REAL);
CREATE INDEX runs_by_device ON runs(device_id, id);
CREATE TABLE run_validations(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  model TEXT NOT NULL,
  predicted_ms REAL,
  measured_ms REAL,
  interval_lo_ms REAL,
  interval_hi_ms REAL,
  error_pct REAL,
  covered_nodes INTEGER NOT NULL,
  total_nodes INTEGER NOT NULL,
  uncovered_measured_ms REAL,
  UNIQUE(run_id, seq));
CREATE TABLE run_comparisons(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  model TEXT NOT NULL,
  backend TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  threads INTEGER NOT NULL,
  precision TEXT NOT NULL,
  ok INTEGER NOT NULL,
  why TEXT NOT NULL,
  p50_us REAL,
  mean_us REAL,
  throughput_per_s REAL,
  timed_runs INTEGER,
  model_bytes INTEGER NOT NULL,
  peak_rss_kb INTEGER,
  energy_mj REAL,
  host_other_cores REAL,
  contended INTEGER,
  drift_max_abs_diff REAL,
  drift_cosine REAL,
  UNIQUE(run_id, seq));
)sql",
    // 6 -> 7: a graph's own layout changes per run, on each of its layers (NULL before).
    R"sql(
ALTER TABLE graph_layers ADD COLUMN graph_layout_us REAL;
)sql",
};
static_assert(std::size(kMigrations) == kStoreSchemaVersion);

std::string NowIso() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", text, static_cast<int>(millis));
}

// What the database lacks of the tables and columns its schema version's migrations create ("no
// table graph_layers", "no column measurements.p50"), or "" when nothing. The expected schema is
// built by running those migrations on an empty in-memory database, so it is never written down
// twice (and is the same for every engine).
Expected<std::string> MissingSchema(sql::Connection& db, std::int64_t version) {
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<sql::Connection> memory, sql::OpenSqliteInMemory());
  for (std::int64_t v = 0; v < version; ++v) LATTE_RETURN_IF_ERROR(memory->Exec(kMigrations[v]));
  LATTE_ASSIGN_OR_RETURN(sql::Columns expected, memory->TableColumns());
  LATTE_ASSIGN_OR_RETURN(sql::Columns actual, db.TableColumns());
  std::set<std::string> tables;
  for (const auto& [table, column] : actual) tables.insert(table);
  for (const auto& [table, column] : expected) {
    if (!tables.contains(table)) return "no table " + table;
  }
  for (const auto& [table, column] : expected) {
    if (!actual.contains({table, column})) return "no column " + table + "." + column;
  }
  return std::string();
}

// A campaign key's columns (kind, backend, threads, precision, settings, strategy, seed), bound from
// parameter `first` on.
void BindCampaignKey(Statement& statement, int first, const CampaignKey& key) {
  statement.Bind(first, key.kind);
  statement.Bind(first + 1, key.backend);
  statement.Bind(first + 2, key.threads);
  statement.Bind(first + 3, key.precision);
  statement.Bind(first + 4, key.settings);
  statement.Bind(first + 5, key.Strategy());
  statement.Bind(first + 6, key.Seed());
}

// Migration 3 -> 4's second half: each stored campaign's key, read from the command text it was
// identified by. A text of no known form (none was ever written) leaves the columns NULL: the
// campaign and its rows are kept, and no new campaign resumes it.
Status FillCampaignKeys(sql::Connection& db) {
  std::vector<std::pair<std::int64_t, CampaignKey>> keys;
  {
    Statement select(db);
    LATTE_RETURN_IF_ERROR(select.Prepare("SELECT id, command, space FROM campaigns"));
    while (true) {
      LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      std::optional<CampaignKey> key = ParseCampaignCommand(select.Text(1), select.Text(2));
      if (key) keys.emplace_back(select.Int(0), std::move(*key));
    }
  }
  Statement update(db);
  LATTE_RETURN_IF_ERROR(update.Prepare(
      "UPDATE campaigns SET kind = ?2, backend = ?3, threads = ?4, precision = ?5, settings = ?6, strategy = ?7, "
      "seed = ?8 WHERE id = ?1"));
  for (const auto& [id, key] : keys) {
    update.Reset();
    update.Bind(1, id);
    BindCampaignKey(update, 2, key);
    LATTE_RETURN_IF_ERROR(update.Run());
  }
  return Status::Ok();
}

// What each migration does beyond its SQL (nullptr: nothing), by the version it migrates from.
constexpr Status (*kMigrationSteps[])(sql::Connection&) = {nullptr, nullptr, nullptr, FillCampaignKeys, nullptr,
                                                             nullptr, nullptr};
static_assert(std::size(kMigrationSteps) == kStoreSchemaVersion);

std::string ParamsJson(const Kernel& kernel) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : kernel.params) params[name] = value;
  return params.dump();
}

}  // namespace

std::string DefaultStorePath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/latte/latte.db";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/latte/latte.db";
  return "latte.db";  // no home: the current folder, rather than failing
}

DeviceInfo DeviceInfoFrom(const DeviceFingerprint& fingerprint) {
  nlohmann::json json = {{"cpu_model", fingerprint.cpu_model}, {"logical_cores", fingerprint.logical_cores},
                         {"isa_flags", fingerprint.isa_flags}, {"max_mhz", fingerprint.max_mhz},
                         {"os", fingerprint.os}};
  return {fingerprint.Key(), fingerprint.Describe(), json.dump()};
}

Store::Store(std::unique_ptr<sql::Connection> db) : db_(std::move(db)), path_(db_->name()) {}
Store::Store(Store&& other) noexcept = default;
Store& Store::operator=(Store&& other) noexcept = default;
Store::~Store() = default;

Expected<Store> Store::Open(const std::string& path, const StoreOptions& options) {
  return OpenDatabase(path, options, /*read_only=*/false);
}

Expected<Store> Store::OpenReadOnly(const std::string& path, const StoreOptions& options) {
  StoreOptions read_options = options;
  read_options.schema_version = kStoreSchemaVersion;  // never migrated: any known version is read as is
  return OpenDatabase(path, read_options, /*read_only=*/true);
}

Expected<Store> Store::OpenDatabase(const std::string& target, const StoreOptions& options, bool read_only) {
  if (options.schema_version < 1 || options.schema_version > kStoreSchemaVersion) {
    return Internal(fmt::format("schema version {} requested, this latte knows 1..{}", options.schema_version,
                                kStoreSchemaVersion));
  }
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<sql::Connection> connection,
                         IsServerUrl(target) ? sql::OpenPostgres(target, options.busy_timeout_ms, read_only)
                                             : sql::OpenSqlite(target, options.busy_timeout_ms, read_only));
  Store store(std::move(connection));
  store.read_only_ = read_only;
  sql::Connection& db = *store.db_;
  const std::string& name = db.name();

  // Read-only checks first, so a database that is not ours is never written to.
  LATTE_ASSIGN_OR_RETURN(sql::Connection::Header header, db.ReadHeader());
  const std::int64_t version = header.version;
  if (header.tables > 0 && !header.ours) {
    return InvalidInput(fmt::format("{}: not a Latte database ({})", name, db.ForeignWords()));
  }
  if (header.tables == 0 && read_only) return InvalidInput(fmt::format("{}: not a Latte database ({})", name, db.EmptyWords()));
  if (version > kStoreSchemaVersion) {
    return InvalidInput(fmt::format("{}: schema version {} is newer than this latte understands ({}): use a newer latte",
                                    name, version, kStoreSchemaVersion));
  }
  // A new database has neither tables nor a version; a Latte store has both.
  if (version < 0 || (version == 0) != (header.tables == 0)) {
    return InvalidInput(fmt::format("{}: not a Latte database (schema version {})", name, version));
  }
  if (header.tables > 0) {
    LATTE_RETURN_IF_ERROR(db.CheckIntegrity());
    LATTE_ASSIGN_OR_RETURN(std::string missing, MissingSchema(db, version));
    if (!missing.empty()) return InvalidInput(name + ": damaged Latte database (" + missing + ")");
  }

  store.version_ = static_cast<int>(version);
  if (read_only) return store;

  LATTE_RETURN_IF_ERROR(db.PrepareForWrites());
  if (version < options.schema_version) {
    // Migrate under a write lock; another process may have migrated meanwhile, so re-read.
    LATTE_RETURN_IF_ERROR(store.Transaction([&]() -> Status {
      LATTE_ASSIGN_OR_RETURN(sql::Connection::Header current, db.ReadHeader());
      for (std::int64_t v = current.version; v < options.schema_version; ++v) {
        std::string refused;
        Status migrated = db.Migrate(kMigrations[v], &refused);
        if (!refused.empty()) {  // the database's schema is not what its version says
          return InvalidInput(
              fmt::format("{}: damaged Latte database (migrating it to schema version {}: {})", name, v + 1, refused));
        }
        LATTE_RETURN_IF_ERROR(migrated);
        if (kMigrationSteps[v] != nullptr) LATTE_RETURN_IF_ERROR(kMigrationSteps[v](db));
      }
      if (current.version < options.schema_version) {
        LATTE_RETURN_IF_ERROR(db.WriteVersion(options.schema_version));
        store.version_ = options.schema_version;
      } else {
        store.version_ = static_cast<int>(current.version);
      }
      return Status::Ok();
    }));
  }
  return store;
}

Expected<int> Store::SchemaVersion() const {
  LATTE_ASSIGN_OR_RETURN(sql::Connection::Header header, db_->ReadHeader());
  return static_cast<int>(header.version);
}

Status Store::Transaction(const std::function<Status()>& body, TransactionLock lock) {
  if (read_only_) return Internal(path_ + ": a write to a store opened read-only");
  if (transaction_depth_ > 0) return body();
  if (Status begun = db_->Exec(lock == TransactionLock::kStore ? db_->BeginSql() : db_->BeginRowsSql()); !begun.ok()) {
    db_->Exec("ROLLBACK").ok();  // a server's transaction may have begun before its lock wait failed
    return begun;
  }
  ++transaction_depth_;
  Status status = body();
  --transaction_depth_;
  if (status.ok()) {
    status = db_->Exec("COMMIT");
    if (status.ok()) return status;
  }
  db_->Exec("ROLLBACK").ok();  // best effort: the engine may already have rolled back
  return status;
}

namespace {

// One column's value of a row that InsertOrFindId writes.
using RowValue = std::variant<std::string, std::int64_t>;

// Inserts a row of `table` unless one with the same key (its first `key_columns` columns) is
// there, and returns the id of the row with that key. Run inside a transaction.
Expected<std::int64_t> InsertOrFindId(sql::Connection& db, const std::string& table,
                                      const std::vector<std::pair<std::string, RowValue>>& row, std::size_t key_columns) {
  std::string columns, placeholders, key, where;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    columns += (i ? ", " : "") + row[i].first;
    placeholders += (i ? ", ?" : "?") + n;
    if (i < key_columns) {
      key += (i ? ", " : "") + row[i].first;
      where += (i ? " AND " : "") + row[i].first + " = ?" + n;
    }
  }
  auto bind = [&](Statement& statement, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
      std::visit([&](const auto& value) { statement.Bind(static_cast<int>(i + 1), value); }, row[i].second);
  };
  Statement insert(db);
  LATTE_RETURN_IF_ERROR(insert.Prepare(fmt::format("INSERT INTO {}({}) VALUES({}) ON CONFLICT({}) DO NOTHING", table,
                                                   columns, placeholders, key)));
  bind(insert, row.size());
  LATTE_RETURN_IF_ERROR(insert.Run());
  Statement select(db);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format("SELECT id FROM {} WHERE {}", table, where)));
  bind(select, key_columns);
  LATTE_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return Internal(db.name() + ": " + table + " row vanished");
  return select.Int(0);
}

}  // namespace

Expected<std::int64_t> Store::UpsertDevice(const DeviceInfo& device) {
  if (device.key.empty()) return InvalidInput("a device needs a non-empty key");
  std::int64_t id = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    const std::string fingerprint = device.fingerprint_json.empty() ? std::string("{}") : device.fingerprint_json;
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(*db_, "devices",
                                              {{"key", device.key}, {"description", device.description},
                                               {"fingerprint", fingerprint}},
                                              1));
    return Status::Ok();
  }));
  return id;
}

Expected<std::int64_t> Store::UpsertBackend(const BackendInfo& backend) {
  if (backend.name.empty()) return InvalidInput("a backend needs a non-empty name");
  std::int64_t id = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(*db_, "backends",
                                              {{"name", backend.name},
                                               {"version", backend.version},
                                               {"threads", static_cast<std::int64_t>(backend.threads)},
                                               {"precision", backend.precision}},
                                              4));
    return Status::Ok();
  }));
  return id;
}

Expected<std::int64_t> Store::UpsertKernel(const Kernel& kernel) {
  if (kernel.op == OpKind::kOpaque) return InvalidInput("an opaque op is not a kernel that can be stored");
  std::int64_t id = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(*db_, "kernels",
                                              {{"key", kernel.Key()},
                                               {"kind", kernel.Kind()},
                                               {"params", ParamsJson(kernel)},
                                               {"dtype", std::string(DataTypeName(kernel.dtype))}},
                                              1));
    return Status::Ok();
  }));
  return id;
}

Expected<std::size_t> Store::InsertMeasurements(std::int64_t device_id, std::int64_t backend_id,
                                                std::span<const MeasurementRecord> records) {
  std::size_t inserted = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    Statement kernel_insert(*db_), kernel_select(*db_), insert(*db_);
    LATTE_RETURN_IF_ERROR(kernel_insert.Prepare(
        "INSERT INTO kernels(key, kind, params, dtype) VALUES(?1, ?2, ?3, ?4) ON CONFLICT(key) DO NOTHING"));
    LATTE_RETURN_IF_ERROR(kernel_select.Prepare("SELECT id FROM kernels WHERE key = ?1"));
    const bool has_p99 = version_ >= 2;
    LATTE_RETURN_IF_ERROR(insert.Prepare(
        has_p99 ? "INSERT INTO measurements(device_id, backend_id, kernel_id, campaign_id, n, p0, p10, p50, p90, p100, "
                  "mean, std, time, source, p99) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
                  "ON CONFLICT(campaign_id, kernel_id) DO NOTHING"
                : "INSERT INTO measurements(device_id, backend_id, kernel_id, campaign_id, n, p0, p10, p50, p90, p100, "
                  "mean, std, time, source) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
                  "ON CONFLICT(campaign_id, kernel_id) DO NOTHING"));
    const std::string now = NowIso();
    for (const MeasurementRecord& record : records) {
      if (record.kernel.op == OpKind::kOpaque) return InvalidInput("an opaque op is not a kernel that can be stored");
      const std::string key = record.kernel.Key();
      kernel_insert.Reset();
      kernel_insert.Bind(1, key);
      kernel_insert.Bind(2, record.kernel.Kind());
      kernel_insert.Bind(3, ParamsJson(record.kernel));
      kernel_insert.Bind(4, DataTypeName(record.kernel.dtype));
      LATTE_RETURN_IF_ERROR(kernel_insert.Run());
      kernel_select.Reset();
      kernel_select.Bind(1, key);
      LATTE_ASSIGN_OR_RETURN(bool found, kernel_select.Step());
      if (!found) return Internal(path_ + ": kernel row vanished");
      const std::int64_t kernel_id = kernel_select.Int(0);

      const Stats& s = record.stats;
      insert.Reset();
      insert.Bind(1, device_id);
      insert.Bind(2, backend_id);
      insert.Bind(3, kernel_id);
      insert.Bind(4, record.campaign);
      insert.Bind(5, s.n);
      insert.Bind(6, s.p0);
      insert.Bind(7, s.p10);
      insert.Bind(8, s.p50);
      insert.Bind(9, s.p90);
      insert.Bind(10, s.p100);
      insert.Bind(11, s.mean);
      insert.Bind(12, s.std);
      insert.Bind(13, record.time.empty() ? now : record.time);
      insert.Bind(14, record.source);
      if (has_p99) insert.Bind(15, s.p99);
      LATTE_RETURN_IF_ERROR(insert.Run());
      inserted += static_cast<std::size_t>(insert.Changes());
    }
    return Status::Ok();
  }));
  return inserted;
}

Status Store::RecordUnsupported(std::int64_t device_id, std::int64_t backend_id, const Kernel& kernel,
                                std::string_view why, std::optional<std::int64_t> campaign) {
  return Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(std::int64_t kernel_id, UpsertKernel(kernel));
    Statement insert(*db_);
    LATTE_RETURN_IF_ERROR(insert.Prepare(
        "INSERT INTO unsupported(device_id, backend_id, kernel_id, campaign_id, why, time) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(campaign_id, kernel_id) DO NOTHING"));
    insert.Bind(1, device_id);
    insert.Bind(2, backend_id);
    insert.Bind(3, kernel_id);
    insert.Bind(4, campaign);
    insert.Bind(5, why);
    insert.Bind(6, NowIso());
    return insert.Run();
  });
}

Expected<CampaignInfo> Store::FindOrCreateCampaign(const CampaignKey& key, std::int64_t planned) {
  CampaignInfo info;
  const std::string command = key.CommandText();
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    Statement insert(*db_);
    if (version_ >= 4) {
      LATTE_RETURN_IF_ERROR(insert.Prepare(
          "INSERT INTO campaigns(command, space, created, planned, done, status, kind, backend, threads, precision, "
          "settings, strategy, seed) VALUES(?1, ?2, ?3, ?4, 0, 'running', ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
          "ON CONFLICT DO NOTHING"));
      BindCampaignKey(insert, 5, key);
    } else {  // a store kept at an older schema (tests of migrations): identified by the text
      LATTE_RETURN_IF_ERROR(insert.Prepare(
          "INSERT INTO campaigns(command, space, created, planned, done, status) VALUES(?1, ?2, ?3, ?4, 0, 'running') "
          "ON CONFLICT(command, space) DO NOTHING"));
    }
    insert.Bind(1, command);
    insert.Bind(2, key.space);
    insert.Bind(3, NowIso());
    insert.Bind(4, planned);
    LATTE_RETURN_IF_ERROR(insert.Run());
    LATTE_ASSIGN_OR_RETURN(std::vector<CampaignInfo> campaigns, ListCampaigns());
    for (CampaignInfo& campaign : campaigns) {
      if (campaign.key == key) {
        info = std::move(campaign);
        return Status::Ok();
      }
    }
    return Internal(path_ + ": campaign row vanished");
  }));
  return info;
}

Expected<std::set<std::string>> Store::CampaignDoneKeys(std::int64_t campaign_id) const {
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(
      "SELECT k.key FROM measurements m JOIN kernels k ON k.id = m.kernel_id WHERE m.campaign_id = ?1 "
      "UNION SELECT k.key FROM unsupported u JOIN kernels k ON k.id = u.kernel_id WHERE u.campaign_id = ?1"));
  select.Bind(1, campaign_id);
  std::set<std::string> keys;
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    keys.insert(select.Text(0));
  }
  return keys;
}

Status Store::UpdateCampaign(std::int64_t campaign_id, std::int64_t done, const std::string& status) {
  return Transaction([&]() -> Status {
    Statement update(*db_);
    LATTE_RETURN_IF_ERROR(update.Prepare("UPDATE campaigns SET done = ?2, status = ?3 WHERE id = ?1"));
    update.Bind(1, campaign_id);
    update.Bind(2, done);
    update.Bind(3, status);
    LATTE_RETURN_IF_ERROR(update.Run());
    if (update.Changes() == 0) return NotFound(fmt::format("{}: no campaign with id {}", path_, campaign_id));
    return Status::Ok();
  });
}

Expected<std::vector<CampaignInfo>> Store::ListCampaigns() const {
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(
      version_ >= 4 ? "SELECT id, command, space, created, planned, done, status, kind, backend, threads, precision, "
                      "settings FROM campaigns ORDER BY id"
                    : "SELECT id, command, space, created, planned, done, status FROM campaigns ORDER BY id"));
  std::vector<CampaignInfo> campaigns;
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    CampaignInfo& c = campaigns.emplace_back();
    c = {select.Int(0), select.Text(1), select.Text(2), select.Text(3), select.Int(4), select.Int(5), select.Text(6), {}};
    if (version_ >= 4) {
      if (!select.IsNull(7)) {
        c.key = {select.Text(7), select.Text(8), select.Int(9), select.Text(10), select.Text(11), c.space};
      }
    } else {  // read as it is (opened read-only): the key from the text, as the migration reads it
      if (std::optional<CampaignKey> key = ParseCampaignCommand(c.command, c.space)) c.key = std::move(*key);
    }
  }
  return campaigns;
}

Status Store::RecordReference(const ReferenceMeasurement& reference) {
  if (version_ < 2) return Internal(path_ + ": reference measurements need schema version 2");
  return Transaction([&]() -> Status {
    Statement insert(*db_);
    LATTE_RETURN_IF_ERROR(insert.Prepare(
        "INSERT INTO reference_measurements(campaign_id, time, p50, kernel_key) VALUES(?1, ?2, ?3, ?4)"));
    insert.Bind(1, reference.campaign);
    insert.Bind(2, reference.time.empty() ? NowIso() : reference.time);
    insert.Bind(3, reference.p50_us);
    insert.Bind(4, reference.kernel_key);
    return insert.Run();
  });
}

namespace {

// A cell as a user would quote it: at most 24 characters, anything unprintable as '?'.
std::string Quoted(const std::string& text) {
  std::string shown = text.size() > 24 ? text.substr(0, 21) + "..." : text;
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "'" + shown + "'";
}

// Reads the statistic in column `col` into `value` (NaN when NULL) and says why it is no time, or
// "" when it is one. SQLite keeps text it cannot read as a number as text, even in a REAL column;
// read as a double it would be 0, a number nobody measured.
std::string ReadStatistic(const Statement& select, int col, const char* name, bool required, double& value) {
  value = std::numeric_limits<double>::quiet_NaN();
  switch (select.Type(col)) {
    case ValueType::kNull:
      return required ? fmt::format("{} is missing", name) : std::string();
    case ValueType::kInteger:
    case ValueType::kReal:
      break;
    case ValueType::kText:
      return fmt::format("{} is not a number ({})", name, Quoted(select.Text(col)));
    default:
      return fmt::format("{} is not a number (a blob)", name);
  }
  value = select.Real(col);
  if (!std::isfinite(value)) return fmt::format("{} is {}, not a finite number", name, value);
  if (value < 0) return fmt::format("{} is {}, a negative time", name, value);
  return std::string();
}

}  // namespace

Expected<std::vector<ReferenceMeasurement>> Store::ListReferences(std::int64_t campaign_id) const {
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(
      "SELECT campaign_id, time, p50, kernel_key, id FROM reference_measurements WHERE campaign_id = ?1 ORDER BY id"));
  select.Bind(1, campaign_id);
  std::vector<ReferenceMeasurement> references;
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    double p50 = 0;
    std::string why = ReadStatistic(select, 2, "p50", /*required=*/true, p50);
    if (why.empty() && !(p50 > 0)) why = "p50 is 0";
    if (!why.empty()) return InvalidInput(fmt::format("{}: reference reading {}: {}", path_, select.Int(4), why));
    references.push_back({select.Int(0), select.Text(1), p50, select.Text(3)});
  }
  return references;
}

namespace {

// WHERE clause of a MeasurementFilter over tables aliased d (devices), b (backends), k (kernels)
// and x (measurements or unsupported); binds in order of appearance.
struct FilterSql {
  std::string where;
  std::vector<std::variant<std::string, std::int64_t>> values;
};

FilterSql BuildFilter(const MeasurementFilter& filter) {
  FilterSql sql;
  auto add = [&](const char* condition, std::variant<std::string, std::int64_t> value) {
    sql.where += sql.where.empty() ? " WHERE " : " AND ";
    sql.where += fmt::format(fmt::runtime(condition), sql.values.size() + 1);
    sql.values.push_back(std::move(value));
  };
  if (filter.backend) add("b.name = ?{}", *filter.backend);
  if (filter.threads) add("b.threads = ?{}", static_cast<std::int64_t>(*filter.threads));
  if (filter.precision) add("b.precision = ?{}", *filter.precision);
  if (filter.device) add("d.key = ?{}", *filter.device);
  if (filter.kind) add("k.kind = ?{}", *filter.kind);
  if (filter.campaign) add("x.campaign_id = ?{}", *filter.campaign);
  return sql;
}

void BindFilter(Statement& stmt, const FilterSql& sql) {
  for (std::size_t i = 0; i < sql.values.size(); ++i) {
    std::visit([&](const auto& v) { stmt.Bind(static_cast<int>(i + 1), v); }, sql.values[i]);
  }
}

}  // namespace

Expected<std::size_t> Store::InsertGraphLayers(std::int64_t device_id, std::int64_t backend_id,
                                              std::int64_t campaign_id, std::span<const GraphLayerRecord> layers) {
  if (version_ < 3) return InvalidInput(path_ + ": schema version " + std::to_string(version_) + " has no graph layers");
  std::size_t inserted = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    Statement insert(*db_);
    // A file kept at an older schema (Open's schema_version) has no column for the graph's layout time.
    const bool layout_column = version_ >= 7;
    LATTE_RETURN_IF_ERROR(insert.Prepare(fmt::format(
        "INSERT INTO graph_layers(campaign_id, device_id, backend_id, graph, layer, kernel_id, in_graph_us, alone_us, "
        "weight_bytes, output_bytes, inputs, time{}) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12{}) "
        "ON CONFLICT(campaign_id, graph, layer) DO NOTHING",
        layout_column ? ", graph_layout_us" : "", layout_column ? ", ?13" : "")));
    const std::string now = NowIso();
    for (const GraphLayerRecord& layer : layers) {
      if (!(layer.in_graph_us >= 0) || !(layer.alone_us >= 0)) {
        return InvalidInput(fmt::format("graph {} layer {} ({}): times must be 0 or more (in graph {} us, alone {} us)",
                                        layer.graph, layer.layer, layer.kernel.Key(), layer.in_graph_us, layer.alone_us));
      }
      if (layer.graph_layout_us < 0 || std::isinf(layer.graph_layout_us)) {  // NaN: not recorded
        return InvalidInput(fmt::format("graph {} layer {}: the graph's layout changes took {} us, not a time",
                                        layer.graph, layer.layer, layer.graph_layout_us));
      }
      LATTE_ASSIGN_OR_RETURN(std::int64_t kernel_id, UpsertKernel(layer.kernel));
      insert.Reset();
      insert.Bind(1, campaign_id);
      insert.Bind(2, device_id);
      insert.Bind(3, backend_id);
      insert.Bind(4, layer.graph);
      insert.Bind(5, static_cast<std::int64_t>(layer.layer));
      insert.Bind(6, kernel_id);
      insert.Bind(7, layer.in_graph_us);
      insert.Bind(8, layer.alone_us);
      insert.Bind(9, layer.traffic.weight_bytes);
      insert.Bind(10, layer.traffic.output_bytes);
      insert.Bind(11, InputsToText(layer.traffic));
      insert.Bind(12, layer.time.empty() ? now : layer.time);
      if (layout_column) insert.Bind(13, layer.graph_layout_us);  // NaN: NULL
      LATTE_RETURN_IF_ERROR(insert.Run());
      inserted += static_cast<std::size_t>(insert.Changes());
    }
    return Status::Ok();
  }));
  return inserted;
}

Expected<std::vector<StoredGraphLayer>> Store::QueryGraphLayers(const MeasurementFilter& filter) const {
  std::vector<StoredGraphLayer> rows;
  if (version_ < 3) return rows;
  FilterSql where = BuildFilter(filter);
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "SELECT x.id, k.key, x.graph, x.layer, x.in_graph_us, x.alone_us, x.weight_bytes, x.output_bytes, x.inputs, "
      "x.time, x.campaign_id, d.key, d.description, d.fingerprint, b.name, b.version, b.threads, b.precision{} "
      "FROM graph_layers x JOIN devices d ON d.id = x.device_id JOIN backends b ON b.id = x.backend_id "
      "JOIN kernels k ON k.id = x.kernel_id{} ORDER BY x.id",
      version_ >= 7 ? ", x.graph_layout_us" : "", where.where)));
  BindFilter(select, where);
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    const std::string context = fmt::format("{}: not a Latte database (graph layer {})", path_, select.Int(0));
    StoredGraphLayer stored;
    GraphLayerRecord& r = stored.record;
    Expected<Kernel> kernel = ParseKernelKey(select.Text(1));
    if (!kernel.ok()) return kernel.status().WithContext(context);
    r.kernel = std::move(kernel).value();
    r.graph = select.Text(2);
    r.layer = static_cast<int>(select.Int(3));
    std::string why = ReadStatistic(select, 4, "in_graph_us", /*required=*/true, r.in_graph_us);
    if (why.empty()) why = ReadStatistic(select, 5, "alone_us", /*required=*/true, r.alone_us);
    if (!why.empty()) return InvalidInput(fmt::format("{}: graph layer {}: {}", path_, select.Int(0), why));
    r.traffic.weight_bytes = select.Int(6);
    r.traffic.output_bytes = select.Int(7);
    Expected<std::vector<std::pair<int, std::int64_t>>> inputs = ParseInputsText(select.Text(8));
    if (!inputs.ok()) return inputs.status().WithContext(context);
    r.traffic.inputs = std::move(inputs).value();
    r.time = select.Text(9);
    stored.campaign = select.Int(10);
    stored.device = {select.Text(11), select.Text(12), select.Text(13)};
    stored.backend = {select.Text(14), select.Text(15), static_cast<int>(select.Int(16)), select.Text(17)};
    if (version_ >= 7) {
      why = ReadStatistic(select, 18, "graph_layout_us", /*required=*/false, r.graph_layout_us);
      if (!why.empty()) return InvalidInput(fmt::format("{}: graph layer {}: {}", path_, select.Int(0), why));
    }
    rows.push_back(std::move(stored));
  }
  // By campaign, graph and layer, the graph's name compared byte by byte: a server's collation
  // might order text otherwise, and the order is what the fits read.
  std::stable_sort(rows.begin(), rows.end(), [](const StoredGraphLayer& a, const StoredGraphLayer& b) {
    return std::tie(a.campaign, a.record.graph, a.record.layer) < std::tie(b.campaign, b.record.graph, b.record.layer);
  });
  return rows;
}

Expected<std::set<std::string>> Store::CampaignGraphs(std::int64_t campaign_id) const {
  std::set<std::string> graphs;
  if (version_ < 3) return graphs;
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare("SELECT DISTINCT graph FROM graph_layers WHERE campaign_id = ?1"));
  select.Bind(1, campaign_id);
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    graphs.insert(select.Text(0));
  }
  return graphs;
}

Expected<std::vector<StoredMeasurement>> Store::QueryMeasurements(const MeasurementFilter& filter,
                                                                  std::vector<DamagedMeasurement>* damaged) const {
  // Devices and backends are few, measurements many: each row names its device and backend by id,
  // read once here, rather than repeating a device's fingerprint (a kilobyte) on every row.
  std::map<std::int64_t, DeviceInfo> devices;
  std::map<std::int64_t, BackendInfo> backends;
  // Read again when a row names one added since (by another process; rows are never deleted).
  auto read_devices_and_backends = [&]() -> Status {
    Statement select(*db_);
    LATTE_RETURN_IF_ERROR(select.Prepare("SELECT id, key, description, fingerprint FROM devices"));
    LATTE_RETURN_IF_ERROR(select.ForEachRow(
        [&] { devices[select.Int(0)] = {select.Text(1), select.Text(2), select.Text(3)}; }));
    LATTE_RETURN_IF_ERROR(select.Prepare("SELECT id, name, version, threads, precision FROM backends"));
    return select.ForEachRow([&] {
      backends[select.Int(0)] = {select.Text(1), select.Text(2), static_cast<int>(select.Int(3)), select.Text(4)};
    });
  };
  LATTE_RETURN_IF_ERROR(read_devices_and_backends());
  FilterSql where = BuildFilter(filter);
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "SELECT x.id, k.id, k.key, x.n, x.p0, x.p10, x.p50, x.p90, x.p100, x.mean, x.std, {}, x.campaign_id, x.time, "
      "x.source, x.device_id, x.backend_id "
      "FROM measurements x JOIN devices d ON d.id = x.device_id JOIN backends b ON b.id = x.backend_id "
      "JOIN kernels k ON k.id = x.kernel_id{} ORDER BY x.id",
      version_ >= 2 ? "x.p99" : "NULL", where.where)));
  BindFilter(select, where);
  std::vector<StoredMeasurement> rows;
  std::map<std::int64_t, Kernel> kernels;  // parse each key once
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    StoredMeasurement m;
    m.id = select.Int(0);
    auto it = kernels.find(select.Int(1));
    if (it == kernels.end()) {
      Expected<Kernel> kernel = ParseKernelKey(select.Text(2));
      if (!kernel.ok()) return kernel.status().WithContext(path_ + ": not a Latte database (kernel " +
                                                           std::to_string(select.Int(1)) + ")");
      it = kernels.emplace(select.Int(1), std::move(kernel).value()).first;
    }
    m.kernel = it->second;
    // p50 first: the figure every measurement has and every reader uses.
    std::string why = ReadStatistic(select, 6, "p50", /*required=*/true, m.stats.p50);
    const std::pair<int, double*> others[] = {{4, &m.stats.p0},    {5, &m.stats.p10},  {7, &m.stats.p90},
                                              {11, &m.stats.p99},  {8, &m.stats.p100}, {9, &m.stats.mean},
                                              {10, &m.stats.std}};
    constexpr const char* kOtherNames[] = {"p0", "p10", "p90", "p99", "p100", "mean", "std"};
    for (std::size_t i = 0; i < std::size(others) && why.empty(); ++i) {
      why = ReadStatistic(select, others[i].first, kOtherNames[i], /*required=*/false, *others[i].second);
    }
    if (why.empty() && (select.Type(3) != ValueType::kInteger || select.Int(3) < 0)) {
      why = "n is not a sample count (" + Quoted(select.Text(3)) + ")";
    }
    if (!why.empty()) {
      if (damaged == nullptr) return InvalidInput(fmt::format("{}: measurement {}: {}", path_, m.id, why));
      damaged->push_back({m.id, std::move(why)});
      continue;
    }
    m.stats.n = static_cast<std::size_t>(select.Int(3));
    if (!select.IsNull(12)) m.campaign = select.Int(12);
    m.time = select.Text(13);
    m.source = select.Text(14);
    auto device = devices.find(select.Int(15));
    auto backend = backends.find(select.Int(16));
    if (device == devices.end() || backend == backends.end()) {
      LATTE_RETURN_IF_ERROR(read_devices_and_backends());
      device = devices.find(select.Int(15));
      backend = backends.find(select.Int(16));
      if (device == devices.end() || backend == backends.end()) {
        return Internal(fmt::format("{}: measurement {}: its device or backend vanished", path_, m.id));
      }
    }
    m.device = device->second;
    m.backend = backend->second;
    rows.push_back(std::move(m));
  }
  return rows;
}

Expected<std::vector<std::pair<Kernel, std::string>>> Store::QueryUnsupported(const MeasurementFilter& filter) const {
  FilterSql where = BuildFilter(filter);
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "SELECT k.key, x.why FROM unsupported x JOIN devices d ON d.id = x.device_id "
      "JOIN backends b ON b.id = x.backend_id JOIN kernels k ON k.id = x.kernel_id{} ORDER BY x.id",
      where.where)));
  BindFilter(select, where);
  std::vector<std::pair<Kernel, std::string>> rows;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&]() -> Status {
    Expected<Kernel> kernel = ParseKernelKey(select.Text(0));
    if (!kernel.ok()) return kernel.status().WithContext(path_);
    rows.emplace_back(std::move(kernel).value(), select.Text(1));
    return Status::Ok();
  }));
  return rows;
}

Expected<std::vector<DeviceInfo>> Store::ListDevices() const {
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare("SELECT key, description, fingerprint FROM devices ORDER BY id"));
  std::vector<DeviceInfo> devices;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&] { devices.push_back({select.Text(0), select.Text(1), select.Text(2)}); }));
  return devices;
}

Expected<std::vector<BackendInfo>> Store::ListBackends() const {
  Statement select(*db_);
  LATTE_RETURN_IF_ERROR(select.Prepare("SELECT name, version, threads, precision FROM backends ORDER BY id"));
  std::vector<BackendInfo> backends;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&] {
    backends.push_back({select.Text(0), select.Text(1), static_cast<int>(select.Int(2)), select.Text(3)});
  }));
  return backends;
}

}  // namespace latte
