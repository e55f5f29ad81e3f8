#include "db/store.h"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/campaign_key.h"

namespace latte {
namespace {

// 'LATT': marks a file as Latte's, so another program's SQLite file is refused, not altered.
constexpr int kApplicationId = 0x4C415454;

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

// One SQLite failure as a Status naming the file and what it means to a user.
Status DbError(const std::string& path, sqlite3* db, int rc, std::string_view doing = {}) {
  const int primary = rc & 0xff;
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return IoError(path + ": database is locked by another process");
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return InvalidInput(path + ": not a Latte database (" + detail + ")");
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOMEM:
      return IoError(path + ": " + detail);
    default:
      return Internal(path + ": " + (doing.empty() ? "" : std::string(doing) + ": ") + detail);
  }
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  Status Prepare(std::string_view sql) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) return DbError(path_, db_, rc, "prepare");
    return Status::Ok();
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, int v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, std::size_t v) { sqlite3_bind_int64(stmt_, i, static_cast<std::int64_t>(v)); }
  void Bind(int i, std::string_view v) { sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void Bind(int i, const std::string& v) { Bind(i, std::string_view(v)); }
  void Bind(int i, const char* v) { Bind(i, std::string_view(v)); }
  // NaN is "the source gave no such figure": NULL in the file.
  void Bind(int i, double v) {
    if (std::isnan(v)) sqlite3_bind_null(stmt_, i);
    else sqlite3_bind_double(stmt_, i, v);
  }
  void Bind(int i, const std::optional<std::int64_t>& v) {
    if (v) Bind(i, *v);
    else sqlite3_bind_null(stmt_, i);
  }

  /// true: a row is ready; false: done. Errors come back as a Status.
  Expected<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return DbError(path_, db_, rc, "step");
  }
  Status Run() {
    Expected<bool> row = Step();
    if (!row.ok()) return row.status();
    return Status::Ok();
  }
  /// Steps through every row, calling `read` on each (a read that returns a Status stops at its
  /// first error).
  template <class Read>
  Status ForEachRow(Read&& read) {
    while (true) {
      LATTE_ASSIGN_OR_RETURN(bool row, Step());
      if (!row) return Status::Ok();
      if constexpr (std::is_same_v<decltype(read()), Status>) {
        LATTE_RETURN_IF_ERROR(read());
      } else {
        read();
      }
    }
  }

  std::int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, col);
  }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int Type(int col) const { return sqlite3_column_type(stmt_, col); }
  std::string Text(int col) const {
    const unsigned char* text = sqlite3_column_text(stmt_, col);
    return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, col));
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

Status Exec(sqlite3* db, const std::string& path, const char* sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK) return DbError(path, db, rc, sql);
  return Status::Ok();
}

Expected<std::int64_t> QueryInt(sqlite3* db, const std::string& path, const char* sql) {
  Statement stmt(db, path);
  LATTE_RETURN_IF_ERROR(stmt.Prepare(sql));
  LATTE_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Internal(path + ": no result for " + sql);
  return stmt.Int(0);
}

// Every (table, column) of the database's tables.
Expected<std::set<std::pair<std::string, std::string>>> TableColumns(sqlite3* db, const std::string& path) {
  Statement select(db, path);
  LATTE_RETURN_IF_ERROR(select.Prepare(
      "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'"));
  std::set<std::pair<std::string, std::string>> columns;
  while (true) {
    LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) break;
    columns.emplace(select.Text(0), select.Text(1));
  }
  return columns;
}

// What the file lacks of the tables and columns its schema version's migrations create ("no table
// graph_layers", "no column measurements.p50"), or "" when nothing. The expected schema is built by
// running those migrations on an empty in-memory database, so it is never written down twice.
Expected<std::string> MissingSchema(sqlite3* db, const std::string& path, std::int64_t version) {
  const std::string memory_name = ":memory:";
  sqlite3* memory = nullptr;
  int rc = sqlite3_open_v2(memory_name.c_str(), &memory, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> close(memory, sqlite3_close_v2);
  if (rc != SQLITE_OK) return Internal("cannot open an in-memory database: " + std::string(sqlite3_errstr(rc)));
  for (std::int64_t v = 0; v < version; ++v) LATTE_RETURN_IF_ERROR(Exec(memory, memory_name, kMigrations[v]));
  LATTE_ASSIGN_OR_RETURN(auto expected, TableColumns(memory, memory_name));
  LATTE_ASSIGN_OR_RETURN(auto actual, TableColumns(db, path));
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
Status FillCampaignKeys(sqlite3* db, const std::string& path) {
  std::vector<std::pair<std::int64_t, CampaignKey>> keys;
  {
    Statement select(db, path);
    LATTE_RETURN_IF_ERROR(select.Prepare("SELECT id, command, space FROM campaigns"));
    while (true) {
      LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      std::optional<CampaignKey> key = ParseCampaignCommand(select.Text(1), select.Text(2));
      if (key) keys.emplace_back(select.Int(0), std::move(*key));
    }
  }
  Statement update(db, path);
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
constexpr Status (*kMigrationSteps[])(sqlite3*, const std::string&) = {nullptr, nullptr, nullptr, FillCampaignKeys};
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

Store::Store(Store&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)), read_only_(other.read_only_),
      transaction_depth_(other.transaction_depth_), version_(other.version_) {}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    read_only_ = other.read_only_;
    transaction_depth_ = other.transaction_depth_;
    version_ = other.version_;
  }
  return *this;
}

Store::~Store() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Expected<Store> Store::Open(const std::string& path, const StoreOptions& options) {
  return OpenFile(path, options, /*read_only=*/false);
}

Expected<Store> Store::OpenReadOnly(const std::string& path, const StoreOptions& options) {
  StoreOptions read_options = options;
  read_options.schema_version = kStoreSchemaVersion;  // never migrated: any known version is read as is
  return OpenFile(path, read_options, /*read_only=*/true);
}

Expected<Store> Store::OpenFile(const std::string& path, const StoreOptions& options, bool read_only) {
  if (options.schema_version < 1 || options.schema_version > kStoreSchemaVersion) {
    return Internal(fmt::format("schema version {} requested, this latte knows 1..{}", options.schema_version,
                                kStoreSchemaVersion));
  }
  std::error_code ec;
  std::filesystem::path fs_path(path);
  const bool exists = std::filesystem::exists(fs_path, ec);
  if (exists && !std::filesystem::is_regular_file(fs_path, ec)) {
    return InvalidInput(path + ": not a Latte database (not a regular file)");
  }
  if (read_only) {
    if (!exists) return NotFound(path + ": no such database");
    if (std::filesystem::file_size(fs_path, ec) == 0 && !ec) {
      return InvalidInput(path + ": not a Latte database (empty file)");
    }
  } else if (fs_path.has_parent_path() && !std::filesystem::exists(fs_path.parent_path(), ec)) {
    std::filesystem::create_directories(fs_path.parent_path(), ec);
    if (ec) return IoError(path + ": cannot create folder " + fs_path.parent_path().string() + ": " + ec.message());
  }
  // Read-only opens a read-write connection without CREATE and with query_only set, rather than
  // SQLITE_OPEN_READONLY: a read-only connection cannot remove the WAL's -wal and -shm files when
  // it closes, and would leave them beside the store; this one removes them as any last reader does
  // (and, as any reader does, folds into the file what a writer killed mid-way left in the WAL).
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | (read_only ? 0 : SQLITE_OPEN_CREATE), nullptr);
  Store store(raw, path);  // closes raw on every early return below
  store.read_only_ = read_only;
  if (rc != SQLITE_OK) return DbError(path, raw, rc, "open");
  sqlite3_extended_result_codes(raw, 0);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  if (read_only) LATTE_RETURN_IF_ERROR(Exec(raw, path, "PRAGMA query_only = ON"));

  // Read-only checks first, so a file that is not ours is never written to. One statement: one
  // snapshot, even while another process is creating the schema of a new file.
  std::int64_t version = 0, app_id = 0, objects = 0;
  {
    Statement header(raw, path);
    LATTE_RETURN_IF_ERROR(header.Prepare(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), "
        "(SELECT count(*) FROM sqlite_master)"));
    LATTE_ASSIGN_OR_RETURN(bool row, header.Step());
    if (!row) return Internal(path + ": no answer reading the header");
    version = header.Int(0);
    app_id = header.Int(1);
    objects = header.Int(2);
  }
  if (objects > 0 && app_id != kApplicationId) {
    return InvalidInput(path + ": not a Latte database (a SQLite file of another program)");
  }
  if (objects == 0 && read_only) return InvalidInput(path + ": not a Latte database (an empty SQLite database)");
  if (version > kStoreSchemaVersion) {
    return InvalidInput(fmt::format("{}: schema version {} is newer than this latte understands ({}): use a newer latte",
                                    path, version, kStoreSchemaVersion));
  }
  // A new file has neither tables nor a version; a Latte store has both.
  if (version < 0 || (version == 0) != (objects == 0)) {
    return InvalidInput(fmt::format("{}: not a Latte database (schema version {})", path, version));
  }
  if (objects > 0) {
    Statement check(raw, path);
    LATTE_RETURN_IF_ERROR(check.Prepare("PRAGMA quick_check(1)"));
    LATTE_ASSIGN_OR_RETURN(bool row, check.Step());
    std::string verdict = row ? check.Text(0) : "no answer";
    if (verdict != "ok") return InvalidInput(path + ": not a Latte database (damaged: " + verdict + ")");
    LATTE_ASSIGN_OR_RETURN(std::string missing, MissingSchema(raw, path, version));
    if (!missing.empty()) return InvalidInput(path + ": damaged Latte database (" + missing + ")");
  }

  store.version_ = static_cast<int>(version);
  if (read_only) return store;

  LATTE_RETURN_IF_ERROR(Exec(raw, path, "PRAGMA foreign_keys = ON"));
  // Switching to WAL can report busy at once, without the busy handler, while another process
  // opens the same new file: retry until the busy timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busy_timeout_ms);
  while (true) {
    Statement wal(raw, path);
    LATTE_RETURN_IF_ERROR(wal.Prepare("PRAGMA journal_mode = WAL"));
    Expected<bool> row = wal.Step();
    if (row.ok() && *row && wal.Text(0) == "wal") break;
    const bool busy = (sqlite3_errcode(raw) & 0xff) == SQLITE_BUSY || (row.ok() && *row);
    if (!busy || std::chrono::steady_clock::now() > deadline) {
      return row.ok() ? IoError(path + ": cannot switch the database to WAL mode") : row.status();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (version < options.schema_version) {
    // Migrate under a write lock; another process may have migrated meanwhile, so re-read.
    LATTE_RETURN_IF_ERROR(store.Transaction([&]() -> Status {
      LATTE_ASSIGN_OR_RETURN(std::int64_t current, QueryInt(raw, path, "PRAGMA user_version"));
      for (std::int64_t v = current; v < options.schema_version; ++v) {
        char* error = nullptr;
        const int migrated = sqlite3_exec(raw, kMigrations[v], nullptr, nullptr, &error);
        const std::string detail = error != nullptr ? error : sqlite3_errstr(migrated);
        sqlite3_free(error);
        if ((migrated & 0xff) == SQLITE_ERROR) {  // the file's schema is not what its version says
          return InvalidInput(
              fmt::format("{}: damaged Latte database (migrating it to schema version {}: {})", path, v + 1, detail));
        }
        if (migrated != SQLITE_OK) return DbError(path, raw, migrated, "migrating");
        if (kMigrationSteps[v] != nullptr) LATTE_RETURN_IF_ERROR(kMigrationSteps[v](raw, path));
      }
      if (current < options.schema_version) {
        LATTE_RETURN_IF_ERROR(Exec(raw, path, fmt::format("PRAGMA user_version = {}", options.schema_version).c_str()));
        LATTE_RETURN_IF_ERROR(Exec(raw, path, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str()));
        store.version_ = options.schema_version;
      } else {
        store.version_ = static_cast<int>(current);
      }
      return Status::Ok();
    }));
  }
  return store;
}

Expected<int> Store::SchemaVersion() const {
  LATTE_ASSIGN_OR_RETURN(std::int64_t version, QueryInt(db_, path_, "PRAGMA user_version"));
  return static_cast<int>(version);
}

Status Store::Transaction(const std::function<Status()>& body) {
  if (read_only_) return Internal(path_ + ": a write to a store opened read-only");
  if (transaction_depth_ > 0) return body();
  LATTE_RETURN_IF_ERROR(Exec(db_, path_, "BEGIN IMMEDIATE"));
  ++transaction_depth_;
  Status status = body();
  --transaction_depth_;
  if (status.ok()) {
    status = Exec(db_, path_, "COMMIT");
    if (status.ok()) return status;
  }
  Exec(db_, path_, "ROLLBACK").ok();  // best effort: SQLite may already have rolled back
  return status;
}

namespace {

// One column's value of a row that InsertOrFindId writes.
using RowValue = std::variant<std::string, std::int64_t>;

// Inserts a row of `table` unless one with the same key (its first `key_columns` columns) is
// there, and returns the id of the row with that key. Run inside a transaction.
Expected<std::int64_t> InsertOrFindId(sqlite3* db, const std::string& path, const std::string& table,
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
  Statement insert(db, path);
  LATTE_RETURN_IF_ERROR(insert.Prepare(fmt::format("INSERT INTO {}({}) VALUES({}) ON CONFLICT({}) DO NOTHING", table,
                                                   columns, placeholders, key)));
  bind(insert, row.size());
  LATTE_RETURN_IF_ERROR(insert.Run());
  Statement select(db, path);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format("SELECT id FROM {} WHERE {}", table, where)));
  bind(select, key_columns);
  LATTE_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return Internal(path + ": " + table + " row vanished");
  return select.Int(0);
}

}  // namespace

Expected<std::int64_t> Store::UpsertDevice(const DeviceInfo& device) {
  if (device.key.empty()) return InvalidInput("a device needs a non-empty key");
  std::int64_t id = 0;
  LATTE_RETURN_IF_ERROR(Transaction([&]() -> Status {
    const std::string fingerprint = device.fingerprint_json.empty() ? std::string("{}") : device.fingerprint_json;
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(db_, path_, "devices",
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
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(db_, path_, "backends",
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
    LATTE_ASSIGN_OR_RETURN(id, InsertOrFindId(db_, path_, "kernels",
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
    Statement kernel_insert(db_, path_), kernel_select(db_, path_), insert(db_, path_);
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
      inserted += static_cast<std::size_t>(sqlite3_changes(db_));
    }
    return Status::Ok();
  }));
  return inserted;
}

Status Store::RecordUnsupported(std::int64_t device_id, std::int64_t backend_id, const Kernel& kernel,
                                std::string_view why, std::optional<std::int64_t> campaign) {
  return Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(std::int64_t kernel_id, UpsertKernel(kernel));
    Statement insert(db_, path_);
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
    Statement insert(db_, path_);
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
  Statement select(db_, path_);
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
    Statement update(db_, path_);
    LATTE_RETURN_IF_ERROR(update.Prepare("UPDATE campaigns SET done = ?2, status = ?3 WHERE id = ?1"));
    update.Bind(1, campaign_id);
    update.Bind(2, done);
    update.Bind(3, status);
    LATTE_RETURN_IF_ERROR(update.Run());
    if (sqlite3_changes(db_) == 0) return NotFound(fmt::format("{}: no campaign with id {}", path_, campaign_id));
    return Status::Ok();
  });
}

Expected<std::vector<CampaignInfo>> Store::ListCampaigns() const {
  Statement select(db_, path_);
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
    Statement insert(db_, path_);
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
    case SQLITE_NULL:
      return required ? fmt::format("{} is missing", name) : std::string();
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      break;
    case SQLITE_TEXT:
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
  Statement select(db_, path_);
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
    Statement insert(db_, path_);
    LATTE_RETURN_IF_ERROR(insert.Prepare(
        "INSERT INTO graph_layers(campaign_id, device_id, backend_id, graph, layer, kernel_id, in_graph_us, alone_us, "
        "weight_bytes, output_bytes, inputs, time) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
        "ON CONFLICT(campaign_id, graph, layer) DO NOTHING"));
    const std::string now = NowIso();
    for (const GraphLayerRecord& layer : layers) {
      if (!(layer.in_graph_us >= 0) || !(layer.alone_us > 0)) {
        return InvalidInput(fmt::format("graph {} layer {} ({}): times must be positive (in graph {} us, alone {} us)",
                                        layer.graph, layer.layer, layer.kernel.Key(), layer.in_graph_us, layer.alone_us));
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
      LATTE_RETURN_IF_ERROR(insert.Run());
      inserted += static_cast<std::size_t>(sqlite3_changes(db_));
    }
    return Status::Ok();
  }));
  return inserted;
}

Expected<std::vector<StoredGraphLayer>> Store::QueryGraphLayers(const MeasurementFilter& filter) const {
  std::vector<StoredGraphLayer> rows;
  if (version_ < 3) return rows;
  FilterSql where = BuildFilter(filter);
  Statement select(db_, path_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "SELECT x.id, k.key, x.graph, x.layer, x.in_graph_us, x.alone_us, x.weight_bytes, x.output_bytes, x.inputs, "
      "x.time, x.campaign_id, d.key, d.description, d.fingerprint, b.name, b.version, b.threads, b.precision "
      "FROM graph_layers x JOIN devices d ON d.id = x.device_id JOIN backends b ON b.id = x.backend_id "
      "JOIN kernels k ON k.id = x.kernel_id{} ORDER BY x.campaign_id, x.graph, x.layer",
      where.where)));
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
    rows.push_back(std::move(stored));
  }
  return rows;
}

Expected<std::set<std::string>> Store::CampaignGraphs(std::int64_t campaign_id) const {
  std::set<std::string> graphs;
  if (version_ < 3) return graphs;
  Statement select(db_, path_);
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
  FilterSql where = BuildFilter(filter);
  Statement select(db_, path_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "SELECT x.id, k.id, k.key, x.n, x.p0, x.p10, x.p50, x.p90, x.p100, x.mean, x.std, {}, x.campaign_id, x.time, "
      "x.source, d.key, d.description, d.fingerprint, b.name, b.version, b.threads, b.precision "
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
    if (why.empty() && (select.Type(3) != SQLITE_INTEGER || select.Int(3) < 0)) {
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
    m.device = {select.Text(15), select.Text(16), select.Text(17)};
    m.backend = {select.Text(18), select.Text(19), static_cast<int>(select.Int(20)), select.Text(21)};
    rows.push_back(std::move(m));
  }
  return rows;
}

Expected<std::vector<std::pair<Kernel, std::string>>> Store::QueryUnsupported(const MeasurementFilter& filter) const {
  FilterSql where = BuildFilter(filter);
  Statement select(db_, path_);
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
  Statement select(db_, path_);
  LATTE_RETURN_IF_ERROR(select.Prepare("SELECT key, description, fingerprint FROM devices ORDER BY id"));
  std::vector<DeviceInfo> devices;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&] { devices.push_back({select.Text(0), select.Text(1), select.Text(2)}); }));
  return devices;
}

Expected<std::vector<BackendInfo>> Store::ListBackends() const {
  Statement select(db_, path_);
  LATTE_RETURN_IF_ERROR(select.Prepare("SELECT name, version, threads, precision FROM backends ORDER BY id"));
  std::vector<BackendInfo> backends;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&] {
    backends.push_back({select.Text(0), select.Text(1), static_cast<int>(select.Int(2)), select.Text(3)});
  }));
  return backends;
}

}  // namespace latte
