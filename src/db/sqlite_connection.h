#pragma once
// The store's connection to a SQLite file (db/sql_connection.h): WAL, foreign keys, the schema
// version in PRAGMA user_version and Latte's mark in PRAGMA application_id.

#include <memory>
#include <string>

#include "core/status.h"
#include "db/sql_connection.h"

namespace latte::sql {

/// Opens the file at PATH (created, with its parent folders, unless `read_only`). Read-only: a
/// missing file is "PATH: no such database" (kNotFound), an empty one "PATH: not a Latte database
/// (empty file)", and the connection refuses writes. `busy_timeout_ms`: how long a write waits for
/// another process's transaction.
Expected<std::unique_ptr<Connection>> OpenSqlite(const std::string& path, int busy_timeout_ms, bool read_only);

/// An empty database in memory (what a store's schema should be is read from one).
Expected<std::unique_ptr<Connection>> OpenSqliteInMemory();

}  // namespace latte::sql
