#pragma once
// A progress report for long loops (profiling campaigns): on a terminal one line redrawn with \r
// (done/total, rate, ETA); otherwise plain lines every N items or seconds, so logs stay readable.
// The clock is injected so that tests drive time by hand.

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>

namespace latte {

/// Seconds since some fixed point; steady (never goes back).
using SecondsClock = std::function<double()>;

/// The process's steady clock in seconds.
double SteadySeconds();

/// True when file descriptor `fd` is a terminal.
bool IsTerminal(int fd);

struct ProgressOptions {
  std::string label = "progress";
  bool tty = false;            // redraw one line with \r (a terminal) instead of printing lines
  std::size_t every_items = 50;  // plain mode: a line after this many items...
  double every_secs = 10;        // ...or this many seconds since the last line, whichever first
  double redraw_secs = 0.2;      // tty mode: at most this often
  int bar_width = 24;
};

class Progress {
 public:
  /// `total` 0 means unknown (no bar, no ETA).
  Progress(std::ostream& out, std::size_t total, ProgressOptions options, SecondsClock clock = SteadySeconds);

  /// Adds `n` finished items and reports if it is time to.
  void Advance(std::size_t n = 1);
  /// Items that were already done before this run (a resumed campaign): counted in done/total
  /// but not in the rate.
  void AddPreviouslyDone(std::size_t n);
  void SetTotal(std::size_t total) { total_ = total; }
  /// A short note shown after the numbers ("3 unsupported").
  void SetNote(std::string note) { note_ = std::move(note); }
  /// Prints the final state (and ends the tty line with a newline).
  void Finish();

  std::size_t done() const { return done_; }
  /// Items per second in this run (0 before any time has passed).
  double Rate() const;
  /// Seconds left at the current rate; negative when unknown.
  double EtaSeconds() const;
  /// The text of the report without \r or newline: "label 12/100 12% 3.4/s ETA 0:25 (note)".
  std::string Line() const;

 private:
  void Emit(bool final);

  std::ostream& out_;
  std::size_t total_;
  ProgressOptions options_;
  SecondsClock clock_;
  double start_;
  double last_emit_;
  std::size_t done_ = 0;
  std::size_t previously_done_ = 0;
  std::size_t items_at_last_emit_ = 0;
  std::size_t last_line_width_ = 0;
  std::string note_;
};

/// "0:25", "12:05", "3:02:11".
std::string FormatDuration(double seconds);

}  // namespace latte
