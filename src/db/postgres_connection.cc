#include "db/postgres_connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "db/server_url.h"

namespace latte::sql {
namespace {

// Type oids of the server's built-in types (pg_type.h is not part of the client's headers).
constexpr Oid kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kTextOid = 25,
              kOidOid = 26, kFloat4Oid = 700, kFloat8Oid = 701, kNumericOid = 1700;

// The advisory lock a write transaction holds ('LATT', as the SQLite store's application_id): one
// writer at a time, as on a SQLite file.
constexpr std::int64_t kWriteLock = 0x4C415454;

// A message of the server or of libpq on one line, without what might repeat a password.
std::string OneLine(std::string_view text, const std::vector<std::string>& secrets) {
  std::string line;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == ' ' && (line.empty() || line.back() == ' ')) continue;
    line += c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return Scrub(std::move(line), secrets);
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

class PostgresConnection;

// A failed result as a Status naming the database and what it means to a user.
Status ResultError(const PostgresConnection& db, const PGresult* result);

class PostgresStatement final : public StatementImpl {
 public:
  explicit PostgresStatement(PostgresConnection& db) : db_(db) {}
  PostgresStatement(const PostgresStatement&) = delete;
  PostgresStatement& operator=(const PostgresStatement&) = delete;
  ~PostgresStatement() override { PQclear(result_); }

  Status Prepare(std::string_view sql) override {
    sql_ = PostgresParameters(sql);
    int count = 0;
    for (std::size_t i = 0; i + 1 < sql_.size(); ++i) {
      if (sql_[i] != '$' || !std::isdigit(static_cast<unsigned char>(sql_[i + 1]))) continue;
      int n = 0;
      std::from_chars(sql_.data() + i + 1, sql_.data() + sql_.size(), n);
      count = std::max(count, n);
    }
    values_.assign(static_cast<std::size_t>(count), std::nullopt);
    types_.assign(static_cast<std::size_t>(count), 0);
    Clear();
    return Status::Ok();
  }
  void Reset() override {
    Clear();
    std::fill(values_.begin(), values_.end(), std::nullopt);
    std::fill(types_.begin(), types_.end(), 0);
  }
  void BindNull(int i) override { Set(i, std::nullopt, 0); }
  void BindInt(int i, std::int64_t v) override { Set(i, std::to_string(v), kInt8Oid); }
  // Shortest text that reads back as the same double (the server reads "inf" and "nan" too).
  void BindReal(int i, double v) override { Set(i, fmt::format("{}", v), kFloat8Oid); }
  void BindText(int i, std::string_view v) override { Set(i, std::string(v), kTextOid); }
  Expected<bool> Step() override;
  std::int64_t Changes() const override {
    std::int64_t n = 0;
    if (result_ != nullptr) {
      const char* text = PQcmdTuples(result_);
      std::from_chars(text, text + std::char_traits<char>::length(text), n);
    }
    return n;
  }
  ValueType Type(int col) const override {
    if (PQgetisnull(result_, row_, col)) return ValueType::kNull;
    switch (PQftype(result_, col)) {
      case kInt8Oid:
      case kInt2Oid:
      case kInt4Oid:
      case kOidOid:
        return ValueType::kInteger;
      case kFloat4Oid:
      case kFloat8Oid:
      case kNumericOid:
        return ValueType::kReal;
      case kByteaOid:
        return ValueType::kBlob;
      default:
        return ValueType::kText;
    }
  }
  std::int64_t Int(int col) const override {
    std::int64_t v = 0;
    if (PQftype(result_, col) == kBoolOid) return *PQgetvalue(result_, row_, col) == 't' ? 1 : 0;
    const char* text = PQgetvalue(result_, row_, col);
    std::from_chars(text, text + PQgetlength(result_, row_, col), v);
    return v;
  }
  double Real(int col) const override {
    double v = std::numeric_limits<double>::quiet_NaN();
    if (PQgetisnull(result_, row_, col)) return v;
    const char* text = PQgetvalue(result_, row_, col);
    std::from_chars(text, text + PQgetlength(result_, row_, col), v);  // "Infinity" and "NaN" too
    return v;
  }
  std::string Text(int col) const override {
    return std::string(PQgetvalue(result_, row_, col), static_cast<std::size_t>(PQgetlength(result_, row_, col)));
  }

 private:
  void Clear() {
    PQclear(result_);
    result_ = nullptr;
    row_ = -1;
  }
  void Set(int i, std::optional<std::string> value, Oid type) {
    if (i < 1) return;
    const auto at = static_cast<std::size_t>(i - 1);
    if (at >= values_.size()) {
      values_.resize(at + 1);
      types_.resize(at + 1, 0);
    }
    values_[at] = std::move(value);
    types_[at] = type;
  }

  PostgresConnection& db_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<Oid> types_;  // 0 for NULL: the server infers it from where it goes
  PGresult* result_ = nullptr;
  int row_ = -1;
};

class PostgresConnection final : public Connection {
 public:
  PostgresConnection(PGconn* conn, std::string name, std::vector<std::string> secrets)
      : Connection(std::move(name)), conn_(conn), secrets_(std::move(secrets)) {}
  ~PostgresConnection() override { PQfinish(conn_); }

  PGconn* conn() const { return conn_; }
  const std::vector<std::string>& secrets() const { return secrets_; }

  std::unique_ptr<StatementImpl> NewStatement() override { return std::make_unique<PostgresStatement>(*this); }

  Status Exec(std::string_view sql) override { return Run(sql, nullptr); }

  std::string_view BeginSql() const override { return begin_sql_; }
  std::string_view BeginRowsSql() const override { return "BEGIN"; }
  std::string_view NowSql() const override {
    return "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
  }

  // Outside a transaction, read in one snapshot: another process may be creating the schema.
  Expected<Header> ReadHeader() override {
    const bool own_snapshot = PQtransactionStatus(conn_) == PQTRANS_IDLE;
    if (own_snapshot) LATTE_RETURN_IF_ERROR(Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    Expected<Header> header = ReadHeaderInTransaction();
    if (own_snapshot) {
      Status end = Exec("COMMIT");
      if (header.ok() && !end.ok()) return end;
    }
    return header;
  }

  Status WriteVersion(int version) override {
    return Exec(fmt::format(
        "CREATE TABLE IF NOT EXISTS latte_schema(version BIGINT NOT NULL); DELETE FROM latte_schema; "
        "INSERT INTO latte_schema(version) VALUES({})",
        version));
  }

  Status Migrate(std::string_view script, std::string* refused) override {
    return Run(PostgresTypes(script), refused);
  }

  std::string_view TableColumnsSql() const override {
    return "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()";
  }

  std::string_view ForeignWords() const override { return "tables of another program"; }
  std::string_view EmptyWords() const override { return "an empty database"; }

 private:
  Expected<Header> ReadHeaderInTransaction() {
    Header header;
    {
      Statement tables(*this);
      LATTE_RETURN_IF_ERROR(tables.Prepare(
          "SELECT count(*), count(*) FILTER (WHERE tablename = 'latte_schema') FROM pg_catalog.pg_tables "
          "WHERE schemaname = current_schema()"));
      LATTE_ASSIGN_OR_RETURN(bool row, tables.Step());
      if (!row) return Internal(name() + ": no answer reading the schema");
      header.tables = tables.Int(0);
      header.ours = tables.Int(1) > 0;
    }
    if (header.ours) {
      Statement version(*this);
      LATTE_RETURN_IF_ERROR(version.Prepare("SELECT coalesce(max(version), 0) FROM latte_schema"));
      LATTE_ASSIGN_OR_RETURN(bool row, version.Step());
      if (row) header.version = version.Int(0);
    }
    return header;
  }

  // Runs SQL without parameters; with `refused`, a statement the schema contradicts (SQLSTATE
  // class 42: a table already there, a column missing) is said in the server's words there.
  Status Run(std::string_view sql, std::string* refused) {
    PGresult* result = PQexec(conn_, std::string(sql).c_str());
    const ExecStatusType status = PQresultStatus(result);
    Status outcome = Status::Ok();
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
      const char* primary = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
      if (refused != nullptr && state != nullptr && std::string_view(state).starts_with("42") && primary != nullptr) {
        *refused = OneLine(primary, secrets_);
        outcome = InvalidInput(name() + ": " + *refused);
      } else {
        outcome = ResultError(*this, result);
      }
    }
    PQclear(result);
    return outcome;
  }

  PGconn* conn_;
  std::vector<std::string> secrets_;
  const std::string begin_sql_ = fmt::format("BEGIN; SELECT pg_advisory_xact_lock({})", kWriteLock);
};

Status ResultError(const PostgresConnection& db, const PGresult* result) {
  const char* state_field = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = result != nullptr ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const std::string state = state_field != nullptr ? state_field : "";
  const std::string message = OneLine(primary != nullptr ? primary : PQerrorMessage(db.conn()), db.secrets());
  if (PQstatus(db.conn()) != CONNECTION_OK) return IoError(db.name() + ": lost the connection to the server (" + message + ")");
  // A lock not granted within lock_timeout, a deadlock, a serialization failure: as SQLite's busy.
  if (state == "55P03" || state == "40P01" || state == "40001") {
    return IoError(db.name() + ": database is locked by another process");
  }
  // The connection, the server's resources, an operator's intervention, the system.
  for (const char* io_class : {"08", "53", "57", "58"}) {
    if (state.starts_with(io_class)) return IoError(db.name() + ": " + message);
  }
  return Internal(db.name() + ": " + message + (state.empty() ? "" : " (SQLSTATE " + state + ")"));
}

Expected<bool> PostgresStatement::Step() {
  if (result_ == nullptr) {
    std::vector<const char*> values(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) values[i] = values_[i] ? values_[i]->c_str() : nullptr;
    result_ = PQexecParams(db_.conn(), sql_.c_str(), static_cast<int>(values.size()), types_.data(), values.data(),
                           nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result_);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      Status error = ResultError(db_, result_);
      Clear();
      return error;
    }
    row_ = -1;
  }
  ++row_;
  return row_ < PQntuples(result_);
}

void IgnoreNotice(void*, const char*) {}  // "relation already exists, skipping" is no news

}  // namespace

std::string PostgresTypes(std::string_view script) {
  std::string out;
  std::size_t i = 0;
  while (i < script.size()) {
    if (!IsWordChar(script[i])) {
      out += script[i++];
      continue;
    }
    std::size_t end = i;
    while (end < script.size() && IsWordChar(script[end])) ++end;
    const std::string_view word = script.substr(i, end - i);
    if (word == "INTEGER" && script.substr(end).starts_with(" PRIMARY KEY")) {
      out += "BIGINT GENERATED BY DEFAULT AS IDENTITY";
    } else if (word == "INTEGER") {
      out += "BIGINT";
    } else if (word == "REAL") {
      out += "DOUBLE PRECISION";
    } else {
      out += word;
    }
    i = end;
  }
  return out;
}

std::string PostgresParameters(std::string_view sql) {
  std::string out(sql);
  bool quoted = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\'') quoted = !quoted;
    if (!quoted && out[i] == '?' && i + 1 < out.size() && std::isdigit(static_cast<unsigned char>(out[i + 1]))) {
      out[i] = '$';
    }
  }
  return out;
}

Expected<std::unique_ptr<Connection>> OpenPostgres(const std::string& target, int lock_timeout_ms, bool read_only) {
  const std::string name = MaskPassword(target);
  std::vector<std::string> secrets = Passwords(target);
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(target.c_str(), &parse_error);
  if (options == nullptr) {
    const std::string why = parse_error != nullptr ? OneLine(parse_error, secrets) : "libpq cannot read it";
    PQfreemem(parse_error);
    return InvalidInput(name + ": not a valid PostgreSQL URL (" + why + ")");
  }
  PQconninfoFree(options);
  // The target's own settings come last and win over these defaults.
  const char* const keywords[] = {"connect_timeout", "client_encoding", "fallback_application_name", "dbname", nullptr};
  const char* const values[] = {"10", "UTF8", "latte", target.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) return IoError(name + ": cannot connect (out of memory)");
  auto connection = std::make_unique<PostgresConnection>(conn, name, std::move(secrets));  // PQfinish on every return
  if (PQstatus(conn) != CONNECTION_OK) {
    return IoError(name + ": cannot connect (" + OneLine(PQerrorMessage(conn), connection->secrets()) + ")");
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  // Doubles as text that reads back exactly, whatever the server's default; a lock waited for as
  // long as SQLite's busy timeout.
  LATTE_RETURN_IF_ERROR(connection->Exec(fmt::format("SET extra_float_digits = 3; SET lock_timeout = {}",
                                                     std::max(1, lock_timeout_ms))));
  if (read_only) LATTE_RETURN_IF_ERROR(connection->Exec("SET default_transaction_read_only = on"));
  return std::unique_ptr<Connection>(std::move(connection));
}

}  // namespace latte::sql
