#include "db/sqlite_connection.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <thread>

#include <fmt/format.h>

namespace latte::sql {
namespace {

// 'LATT': marks a file as Latte's, so another program's SQLite file is refused, not altered.
constexpr int kApplicationId = 0x4C415454;

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

class SqliteStatement final : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  Status Prepare(std::string_view sql) override {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) return DbError(path_, db_, rc, "prepare");
    return Status::Ok();
  }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void BindNull(int i) override { sqlite3_bind_null(stmt_, i); }
  void BindInt(int i, std::int64_t v) override { sqlite3_bind_int64(stmt_, i, v); }
  void BindReal(int i, double v) override { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, std::string_view v) override {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  Expected<bool> Step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return DbError(path_, db_, rc, "step");
  }
  std::int64_t Changes() const override { return sqlite3_changes(db_); }
  ValueType Type(int col) const override {
    switch (sqlite3_column_type(stmt_, col)) {
      case SQLITE_NULL: return ValueType::kNull;
      case SQLITE_INTEGER: return ValueType::kInteger;
      case SQLITE_FLOAT: return ValueType::kReal;
      case SQLITE_TEXT: return ValueType::kText;
      default: return ValueType::kBlob;
    }
  }
  std::int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const override {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, col);
  }
  std::string Text(int col) const override {
    const unsigned char* text = sqlite3_column_text(stmt_, col);
    return text == nullptr ? std::string()
                           : std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, col));
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(sqlite3* db, const std::string& path, int busy_timeout_ms)
      : Connection(path), db_(db), busy_timeout_ms_(busy_timeout_ms) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }

  std::unique_ptr<StatementImpl> NewStatement() override { return std::make_unique<SqliteStatement>(db_, name()); }

  Status Exec(std::string_view sql) override {
    const std::string text(sql);
    char* error = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    sqlite3_free(error);
    if (rc != SQLITE_OK) return DbError(name(), db_, rc, text);
    return Status::Ok();
  }

  std::string_view BeginSql() const override { return "BEGIN IMMEDIATE"; }  // the file's write lock
  std::string_view NowSql() const override { return "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"; }

  // One statement: one snapshot, even while another process is creating the schema of a new file.
  Expected<Header> ReadHeader() override {
    Statement header(*this);
    LATTE_RETURN_IF_ERROR(header.Prepare(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), "
        "(SELECT count(*) FROM sqlite_master)"));
    LATTE_ASSIGN_OR_RETURN(bool row, header.Step());
    if (!row) return Internal(name() + ": no answer reading the header");
    return Header{header.Int(0), header.Int(2), header.Int(1) == kApplicationId};
  }

  Status WriteVersion(int version) override {
    LATTE_RETURN_IF_ERROR(Exec(fmt::format("PRAGMA user_version = {}", version)));
    return Exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
  }

  Status Migrate(std::string_view script, std::string* refused) override {
    const std::string text(script);
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    const std::string detail = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    if ((rc & 0xff) == SQLITE_ERROR) {  // the SQL itself refused: the file's schema is not what its version says
      *refused = detail;
      return InvalidInput(name() + ": " + detail);
    }
    if (rc != SQLITE_OK) return DbError(name(), db_, rc, "migrating");
    return Status::Ok();
  }

  std::string_view TableColumnsSql() const override {
    return "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'";
  }

  Status CheckIntegrity() override {
    Statement check(*this);
    LATTE_RETURN_IF_ERROR(check.Prepare("PRAGMA quick_check(1)"));
    LATTE_ASSIGN_OR_RETURN(bool row, check.Step());
    std::string verdict = row ? check.Text(0) : "no answer";
    if (verdict != "ok") return InvalidInput(name() + ": not a Latte database (damaged: " + verdict + ")");
    return Status::Ok();
  }

  Status PrepareForWrites() override {
    LATTE_RETURN_IF_ERROR(Exec("PRAGMA foreign_keys = ON"));
    // Switching to WAL can report busy at once, without the busy handler, while another process
    // opens the same new file: retry until the busy timeout.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
    while (true) {
      Statement wal(*this);
      LATTE_RETURN_IF_ERROR(wal.Prepare("PRAGMA journal_mode = WAL"));
      Expected<bool> row = wal.Step();
      if (row.ok() && *row && wal.Text(0) == "wal") return Status::Ok();
      const bool busy = (sqlite3_errcode(db_) & 0xff) == SQLITE_BUSY || (row.ok() && *row);
      if (!busy || std::chrono::steady_clock::now() > deadline) {
        return row.ok() ? IoError(name() + ": cannot switch the database to WAL mode") : row.status();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::string_view ForeignWords() const override { return "a SQLite file of another program"; }
  std::string_view EmptyWords() const override { return "an empty SQLite database"; }

 private:
  sqlite3* db_;
  int busy_timeout_ms_;
};

}  // namespace

Expected<std::unique_ptr<Connection>> OpenSqlite(const std::string& path, int busy_timeout_ms, bool read_only) {
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
  auto connection = std::make_unique<SqliteConnection>(raw, path, busy_timeout_ms);  // closes raw on every return
  if (rc != SQLITE_OK) return DbError(path, raw, rc, "open");
  sqlite3_extended_result_codes(raw, 0);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  if (read_only) LATTE_RETURN_IF_ERROR(connection->Exec("PRAGMA query_only = ON"));
  return std::unique_ptr<Connection>(std::move(connection));
}

Expected<std::unique_ptr<Connection>> OpenSqliteInMemory() {
  const std::string name = ":memory:";
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  auto connection = std::make_unique<SqliteConnection>(raw, name, 0);
  if (rc != SQLITE_OK) return Internal("cannot open an in-memory database: " + std::string(sqlite3_errstr(rc)));
  return std::unique_ptr<Connection>(std::move(connection));
}

}  // namespace latte::sql
