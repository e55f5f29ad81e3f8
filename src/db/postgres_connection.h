#pragma once
// The store's connection to a PostgreSQL server over libpq (db/sql_connection.h): the schema of
// the SQLite store in the server's types, its version in the latte_schema table, writers taking
// turns on an advisory lock, and a lock wait bounded like SQLite's busy timeout.

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "db/sql_connection.h"

namespace latte::sql {

/// Connects to the server `target` names (a postgresql:// or postgres:// URL, or libpq's key=value
/// words; db/server_url.h). Errors name the target with its password masked: a target libpq cannot
/// read is kInvalidInput "URL: not a valid PostgreSQL URL (...)", a server that cannot be reached
/// or refuses the login kIoError "URL: cannot connect (...)". `lock_timeout_ms`: how long a
/// statement waits for another session's lock. `read_only`: the session refuses writes.
Expected<std::unique_ptr<Connection>> OpenPostgres(const std::string& target, int lock_timeout_ms, bool read_only);

/// `script` (written in SQLite's types) in PostgreSQL's: INTEGER is BIGINT, REAL is DOUBLE
/// PRECISION, and an INTEGER PRIMARY KEY an identity column.
std::string PostgresTypes(std::string_view script);

/// `sql` with SQLite's numbered parameters (?1) as PostgreSQL's ($1), outside quoted text.
std::string PostgresParameters(std::string_view sql);

}  // namespace latte::sql
