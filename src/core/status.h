#pragma once
// Status and Expected<T>: how Latte reports failures caused by its input (a bad file,
// an unsupported op, a locked database). Programmer errors are assertions instead.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace latte {

/// What kind of failure a Status carries. The CLI maps kInternal to exit 1, kInterrupted to 130,
/// the rest to 2.
enum class StatusCode {
  kOk,
  kInvalidInput,  // the input is malformed (truncated file, index out of range, bad flag)
  kUnsupported,   // the input is valid but Latte (or a backend) cannot handle it
  kNotFound,      // a file, tensor or name that should exist does not
  kIoError,       // the operating system refused (cannot open, read, write)
  kInternal,      // a bug in Latte
  kInterrupted,   // stopped on request (a signal): what was done is kept; the CLI exits 130
};

/// One outcome: ok, or a code with a one-line message saying what went wrong and where.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Prefixes the message with "context: " (for example the node being imported).
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string message) { return {StatusCode::kInvalidInput, std::move(message)}; }
inline Status Unsupported(std::string message) { return {StatusCode::kUnsupported, std::move(message)}; }
inline Status NotFound(std::string message) { return {StatusCode::kNotFound, std::move(message)}; }
inline Status IoError(std::string message) { return {StatusCode::kIoError, std::move(message)}; }
inline Status Internal(std::string message) { return {StatusCode::kInternal, std::move(message)}; }
/// Stopped on request; `message` (may be empty: the command said it already) is printed as is.
inline Status Interrupted(std::string message) { return {StatusCode::kInterrupted, std::move(message)}; }

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "Expected built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }
  T& value() & { assert(ok()); return std::get<T>(state_); }
  const T& value() const& { assert(ok()); return std::get<T>(state_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

namespace internal {
inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Expected<T>& e) { return e.status(); }
}  // namespace internal

}  // namespace latte

#define LATTE_CONCAT_INNER(a, b) a##b
#define LATTE_CONCAT(a, b) LATTE_CONCAT_INNER(a, b)

/// Returns the Status of `expr` (a Status or an Expected) from the enclosing function if it failed.
/// The Status is copied out within the full expression: `expr` may be `Temporary().status()`,
/// whose reference would dangle if the macro held on to it.
#define LATTE_RETURN_IF_ERROR(expr)                                          \
  do {                                                                       \
    ::latte::Status latte_status_ = ::latte::internal::ToStatus((expr));     \
    if (!latte_status_.ok()) return latte_status_;                           \
  } while (0)

#define LATTE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

/// `LATTE_ASSIGN_OR_RETURN(Graph g, Import(path));` declares g or returns the error.
#define LATTE_ASSIGN_OR_RETURN(lhs, expr) \
  LATTE_ASSIGN_OR_RETURN_IMPL(LATTE_CONCAT(latte_expected_, __LINE__), lhs, expr)
