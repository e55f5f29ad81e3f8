#include "core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace latte {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  auto total = static_cast<long long>(std::llround(seconds));
  long long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

Progress::Progress(std::ostream& out, std::size_t total, ProgressOptions options, SecondsClock clock)
    : out_(out), total_(total), options_(std::move(options)), clock_(std::move(clock)) {
  start_ = clock_();
  last_emit_ = start_;
}

void Progress::AddPreviouslyDone(std::size_t n) {
  done_ += n;
  previously_done_ += n;
  items_at_last_emit_ += n;
}

void Progress::Advance(std::size_t n) {
  done_ += n;
  const double now = clock_();
  if (options_.tty) {
    if (now - last_emit_ >= options_.redraw_secs || (total_ > 0 && done_ >= total_)) Emit(false);
  } else if (done_ - items_at_last_emit_ >= options_.every_items || now - last_emit_ >= options_.every_secs) {
    Emit(false);
  }
}

double Progress::Rate() const {
  const double elapsed = clock_() - start_;
  if (elapsed <= 0) return 0;
  return static_cast<double>(done_ - previously_done_) / elapsed;
}

double Progress::EtaSeconds() const {
  if (total_ == 0) return -1;
  if (done_ >= total_) return 0;
  const double rate = Rate();
  if (rate <= 0) return -1;
  return static_cast<double>(total_ - done_) / rate;
}

std::string Progress::Line() const {
  std::string line = options_.label + " ";
  if (total_ > 0) {
    const double fraction = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
    if (options_.tty) {
      const int filled = static_cast<int>(fraction * options_.bar_width);
      // Appended piece by piece: `"[" + std::string(...)` trips GCC 12's -Wrestrict false alarm.
      line += '[';
      line.append(static_cast<size_t>(filled), '#');
      line.append(static_cast<size_t>(options_.bar_width - filled), '.');
      line += "] ";
    }
    line += fmt::format("{}/{} {:.0f}%", done_, total_, 100 * fraction);
  } else {
    line += fmt::format("{}", done_);
  }
  line += fmt::format(" {:.1f}/s", Rate());
  if (total_ > 0) line += " ETA " + FormatDuration(EtaSeconds());
  if (!note_.empty()) line += " (" + note_ + ")";
  return line;
}

void Progress::Emit(bool final) {
  const std::string line = Line();
  if (options_.tty) {
    out_ << '\r' << line;
    // Blank what a longer previous line left behind.
    if (line.size() < last_line_width_) out_ << std::string(last_line_width_ - line.size(), ' ');
    last_line_width_ = line.size();
    if (final) out_ << '\n';
  } else {
    out_ << line << '\n';
  }
  out_.flush();
  last_emit_ = clock_();
  items_at_last_emit_ = done_;
}

void Progress::Finish() { Emit(true); }

}  // namespace latte
