#pragma once
// What `--db` names: a SQLite file, or a PostgreSQL server given as a URL (postgresql://,
// postgres://) or as libpq's "key=value" words ("host=/run/postgresql dbname=lab"). A password in
// either form is never shown: errors, output and provenance see the masked form.

#include <string>
#include <string_view>
#include <vector>

namespace latte {

/// True when `db` names a PostgreSQL server rather than a file: it starts with "postgresql://" or
/// "postgres://", or with one of libpq's keywords and '=' ("host=", "dbname=", "service=", ...).
/// (A file whose name starts so is named "./host=...".)
bool IsServerUrl(std::string_view db);

/// `db` with every password replaced by "***": a URL's "user:secret@" and "?password=secret", a
/// keyword string's "password=secret" (quoted or not). A file path comes back as it is.
std::string MaskPassword(std::string_view db);

/// The passwords `db` spells (as written and percent-decoded), to remove from the words of a
/// server or a library that might repeat them.
std::vector<std::string> Passwords(std::string_view db);

/// `text` with each of `secrets` replaced by "***".
std::string Scrub(std::string text, const std::vector<std::string>& secrets);

}  // namespace latte
