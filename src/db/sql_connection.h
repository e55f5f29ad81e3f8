#pragma once
// The seam between the store's logic (db/store.cc) and a database engine: a connection that runs
// SQL with numbered parameters (?1, ?2, ...: SQLite's spelling, which the PostgreSQL connection
// turns into $1, $2, ...) and reads rows. One implementation per engine: sqlite_connection (a file)
// and postgres_connection (a server, over libpq). The SQL itself is written once, in store.cc.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/status.h"

namespace latte::sql {

/// What a column of the current row holds. SQLite keeps any type in any column (a REAL column can
/// hold text another program wrote); a server's column holds its declared type or NULL.
enum class ValueType { kNull, kInteger, kReal, kText, kBlob };

/// One statement of a connection, as each engine prepares, binds, runs and reads it.
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual Status Prepare(std::string_view sql) = 0;
  /// Ready to bind and run again; every parameter unbound.
  virtual void Reset() = 0;
  virtual void BindNull(int i) = 0;
  virtual void BindInt(int i, std::int64_t v) = 0;
  virtual void BindReal(int i, double v) = 0;
  virtual void BindText(int i, std::string_view v) = 0;
  /// true: a row is ready; false: done.
  virtual Expected<bool> Step() = 0;
  /// Rows the last INSERT, UPDATE or DELETE changed.
  virtual std::int64_t Changes() const = 0;
  virtual ValueType Type(int col) const = 0;
  virtual std::int64_t Int(int col) const = 0;
  virtual double Real(int col) const = 0;
  virtual std::string Text(int col) const = 0;
};

/// A set of (table, column) names.
using Columns = std::set<std::pair<std::string, std::string>>;

/// An open database. Not thread-safe.
class Connection {
 public:
  explicit Connection(std::string name) : name_(std::move(name)) {}
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// What errors name: the file, or the server's URL with its password masked.
  const std::string& name() const { return name_; }

  virtual std::unique_ptr<StatementImpl> NewStatement() = 0;
  /// Runs SQL without parameters (BEGIN, COMMIT, ...).
  virtual Status Exec(std::string_view sql) = 0;
  /// The statement that starts a write transaction and takes the store's one write lock, waiting
  /// for it as long as the busy timeout: writers take turns, so a migration runs once and no two
  /// batches deadlock over the kernels they share.
  virtual std::string_view BeginSql() const = 0;
  /// The statement that starts a write transaction locking only the rows it touches, where the
  /// engine has row locks (a server); else the same as BeginSql.
  virtual std::string_view BeginRowsSql() const { return BeginSql(); }
  /// An SQL expression for the current time as ISO 8601 UTC with milliseconds
  /// ("2026-11-23T09:34:00.123Z"), by the database's clock: a server's, never a client's.
  virtual std::string_view NowSql() const = 0;

  /// The schema bookkeeping each engine keeps its own way (SQLite: PRAGMA user_version and
  /// application_id; a server: the latte_schema table).
  struct Header {
    std::int64_t version = 0;  // 0: none written
    std::int64_t tables = 0;   // tables of any program
    bool ours = false;         // marked as Latte's
  };
  virtual Expected<Header> ReadHeader() = 0;
  /// Writes the schema version (and Latte's mark), inside the migrating transaction.
  virtual Status WriteVersion(int version) = 0;
  /// Runs one migration script (kMigrations: written in SQLite's types, which a server's
  /// connection maps to its own). When the database's schema contradicts it, fails with the
  /// engine's own words in `*refused`.
  virtual Status Migrate(std::string_view script, std::string* refused) = 0;
  /// Every (table, column) of the database's tables.
  Expected<Columns> TableColumns();
  /// The engine's own check of a store's pages, on opening (a server checks its own).
  virtual Status CheckIntegrity() { return Status::Ok(); }
  /// After the read-only checks passed, what writing needs (SQLite: foreign keys, WAL).
  virtual Status PrepareForWrites() { return Status::Ok(); }
  /// How a database that holds tables but is not Latte's, or nothing at all, is described.
  virtual std::string_view ForeignWords() const = 0;
  virtual std::string_view EmptyWords() const = 0;

 protected:
  /// A query of (table, column) for every column of the database's tables.
  virtual std::string_view TableColumnsSql() const = 0;

 private:
  std::string name_;
};

/// A statement of a connection, with the store's binding overloads: NaN binds as NULL ("the
/// source gave no such figure").
class Statement {
 public:
  explicit Statement(Connection& db) : impl_(db.NewStatement()) {}

  Status Prepare(std::string_view sql) { return impl_->Prepare(sql); }
  void Reset() { impl_->Reset(); }
  void Bind(int i, std::int64_t v) { impl_->BindInt(i, v); }
  void Bind(int i, int v) { impl_->BindInt(i, v); }
  void Bind(int i, std::size_t v) { impl_->BindInt(i, static_cast<std::int64_t>(v)); }
  void Bind(int i, std::string_view v) { impl_->BindText(i, v); }
  void Bind(int i, const std::string& v) { impl_->BindText(i, v); }
  void Bind(int i, const char* v) { impl_->BindText(i, v); }
  void Bind(int i, double v) {
    if (std::isnan(v)) impl_->BindNull(i);
    else impl_->BindReal(i, v);
  }
  void Bind(int i, const std::optional<std::int64_t>& v) {
    if (v) impl_->BindInt(i, *v);
    else impl_->BindNull(i);
  }

  Expected<bool> Step() { return impl_->Step(); }
  Status Run() {
    Expected<bool> row = Step();
    return row.ok() ? Status::Ok() : row.status();
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
  std::int64_t Changes() const { return impl_->Changes(); }

  ValueType Type(int col) const { return impl_->Type(col); }
  bool IsNull(int col) const { return Type(col) == ValueType::kNull; }
  std::int64_t Int(int col) const { return impl_->Int(col); }
  /// NaN when NULL.
  double Real(int col) const { return impl_->Real(col); }
  std::string Text(int col) const { return impl_->Text(col); }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

inline Expected<Columns> Connection::TableColumns() {
  Statement select(*this);
  LATTE_RETURN_IF_ERROR(select.Prepare(TableColumnsSql()));
  Columns columns;
  LATTE_RETURN_IF_ERROR(select.ForEachRow([&] { columns.emplace(select.Text(0), select.Text(1)); }));
  return columns;
}

}  // namespace latte::sql
