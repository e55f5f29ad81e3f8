#include "db/server_url.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace latte {
namespace {

// The forms of `--db` a server is named by.
constexpr std::string_view kUrlSchemes[] = {"postgresql://", "postgres://"};
constexpr std::string_view kKeywords[] = {"host",    "hostaddr", "port",    "dbname",  "user",
                                          "password", "passfile", "service", "options", "sslmode",
                                          "connect_timeout", "application_name"};

bool IsUrl(std::string_view db) {
  return std::any_of(std::begin(kUrlSchemes), std::end(kUrlSchemes),
                     [&](std::string_view scheme) { return db.starts_with(scheme); });
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Where a password is written in `db`: [begin, end) of its text as written.
struct Span {
  std::size_t begin = 0, end = 0;
  bool url = false;  // percent-encoded (a URL) rather than quoted (keyword words)
};

std::vector<Span> PasswordSpans(std::string_view db) {
  std::vector<Span> spans;
  if (IsUrl(db)) {
    const std::size_t start = db.find("://") + 3;
    const std::size_t authority_end = std::min(db.find_first_of("/?", start), db.size());
    const std::size_t at = db.substr(start, authority_end - start).rfind('@');
    if (at != std::string_view::npos) {
      const std::size_t colon = db.substr(start, at).find(':');
      if (colon != std::string_view::npos) spans.push_back({start + colon + 1, start + at, true});
    }
    std::size_t param = db.find('?', start);
    while (param != std::string_view::npos && param < db.size()) {
      ++param;
      const std::size_t end = std::min(db.find('&', param), db.size());
      const std::string_view pair = db.substr(param, end - param);
      if (pair.starts_with("password=")) spans.push_back({param + 9, end, true});
      param = end;
    }
    return spans;
  }
  // key = value words; a value is 'quoted' (backslash escapes) or runs to the next space.
  std::size_t i = 0;
  while (i < db.size()) {
    while (i < db.size() && IsSpace(db[i])) ++i;
    const std::size_t key_begin = i;
    while (i < db.size() && db[i] != '=' && !IsSpace(db[i])) ++i;
    const std::string_view key = db.substr(key_begin, i - key_begin);
    while (i < db.size() && IsSpace(db[i])) ++i;
    if (i >= db.size() || db[i] != '=') break;  // not keyword words: nothing more to find
    ++i;
    while (i < db.size() && IsSpace(db[i])) ++i;
    const std::size_t value_begin = i;
    const bool quoted = i < db.size() && db[i] == '\'';
    if (quoted) ++i;
    while (i < db.size() && (quoted ? db[i] != '\'' : !IsSpace(db[i]))) i += db[i] == '\\' ? 2 : 1;
    i = std::min(i + (quoted ? 1 : 0), db.size());
    if (key == "password") spans.push_back({value_begin, i, false});
  }
  return spans;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A password as the server sees it: percent-decoded, or unquoted and unescaped.
std::string Decoded(std::string_view raw, bool url) {
  std::string out;
  if (url) {
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '%' && i + 2 < raw.size() && HexDigit(raw[i + 1]) >= 0 && HexDigit(raw[i + 2]) >= 0) {
        out += static_cast<char>(HexDigit(raw[i + 1]) * 16 + HexDigit(raw[i + 2]));
        i += 2;
      } else {
        out += raw[i];
      }
    }
    return out;
  }
  if (raw.size() >= 2 && raw.front() == '\'' && raw.back() == '\'') raw = raw.substr(1, raw.size() - 2);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
    out += raw[i];
  }
  return out;
}

}  // namespace

bool IsServerUrl(std::string_view db) {
  if (IsUrl(db)) return true;
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](std::string_view key) {
    if (!db.starts_with(key)) return false;
    std::size_t i = key.size();
    while (i < db.size() && IsSpace(db[i])) ++i;
    return i < db.size() && db[i] == '=';
  });
}

std::string MaskPassword(std::string_view db) {
  std::string masked(db);
  if (!IsServerUrl(db)) return masked;
  std::vector<Span> spans = PasswordSpans(db);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) masked.replace(it->begin, it->end - it->begin, "***");
  return masked;
}

std::vector<std::string> Passwords(std::string_view db) {
  std::vector<std::string> passwords;
  if (!IsServerUrl(db)) return passwords;
  for (const Span& span : PasswordSpans(db)) {
    const std::string_view raw = db.substr(span.begin, span.end - span.begin);
    for (std::string text : {std::string(raw), Decoded(raw, span.url)}) {
      if (!text.empty() && std::find(passwords.begin(), passwords.end(), text) == passwords.end()) {
        passwords.push_back(std::move(text));
      }
    }
  }
  // Longest first: a password that contains another is masked whole.
  std::sort(passwords.begin(), passwords.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return passwords;
}

std::string Scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

}  // namespace latte
