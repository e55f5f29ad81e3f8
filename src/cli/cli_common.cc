#include "cli/cli_common.h"

#include <set>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "core/file.h"
#include "db/store.h"
#include "import/import.h"
#include "import/npy.h"

namespace latte::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

// The first Ctrl-C asks the command to stop at its next safe point (after the current kernel,
// keeping every measurement); a second one, for when that point is far (a long kernel, a fit),
// ends the process at once as the signal would have (committed measurements stay committed).
extern "C" void RequestStop(int sig) {
  if (g_stop_requested.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

CLI::Validator IntegerIn(long long lo, long long hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ptr == text.data() || ptr != end) return "'" + text + "' is not an integer";
        if (ec != std::errc() || value < lo || value > hi) return text + " is not in " + range;
        return "";
      },
      "INT in " + range);
}

CLI::Validator NumberIn(double lo, double hi) {
  auto number = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return std::string(buffer);
  };
  const std::string range = number(lo) + ".." + number(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(value) || value < lo || value > hi) return text + " is not a number in " + range;
        return "";
      },
      "NUMBER in " + range);
}

CLI::Validator PrecisionIn(std::vector<Precision> runs, const std::string& command) {
  std::string all, allowed;
  for (Precision p : kAllPrecisions) all += (all.empty() ? "" : ", ") + std::string(PrecisionName(p));
  for (Precision p : runs) allowed += (allowed.empty() ? "" : ", ") + std::string(PrecisionName(p));
  return CLI::Validator(
      [runs, all, allowed, command](std::string& text) -> std::string {
        Expected<Precision> precision = ParsePrecision(text);
        if (!precision.ok()) return text + " is not a precision (" + all + ")";
        if (std::find(runs.begin(), runs.end(), *precision) == runs.end())
          return text + " is not one " + command + " runs (" + allowed + ")";
        return "";
      },
      "one of " + allowed);
}

std::vector<std::string> StoredPrecisionNames() {
  std::vector<std::string> names = {"fp16"};
  for (Precision p : kAllPrecisions) names.emplace_back(PrecisionName(p));
  return names;
}

MeasureOptions ValidationMeasureOptions() {
  MeasureOptions options;
  options.warmup_runs = 5;
  return options;
}

void AddStoreFlag(CLI::App& cmd, std::string& db, const std::string& what) {
  cmd.add_option("--db", db,
                 what + ": a SQLite file, or a PostgreSQL database as postgresql://USER@HOST/NAME (default: " +
                     DefaultStorePath() + ")");
}

void AddProtocolFlags(CLI::App& cmd, MeasureOptions& measure, const std::string& what) {
  constexpr long long kMaxRuns = 1000000;
  cmd.add_option("--warmup-runs,--warmup_runs", measure.warmup_runs, "Warmup runs" + what)
      ->check(IntegerIn(0, kMaxRuns))
      ->capture_default_str();
  cmd.add_option("--num-runs,--num_runs", measure.num_runs, "Timed runs" + what + " (at least --min-secs of them)")
      ->check(IntegerIn(1, kMaxRuns))
      ->capture_default_str();
  cmd.add_option("--min-secs,--min_secs", measure.min_secs, "Minimum seconds of timed runs" + what)
      ->check(NumberIn(0, measure.max_secs))
      ->capture_default_str();
}

namespace {

Status CheckOutputPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return InvalidInput("empty output path");
  if (fs::is_directory(path, ec)) return InvalidInput("is a directory, not a file to write");
  const fs::path parent = fs::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(folder, ec)) return NotFound("no such folder " + folder);
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return IoError("cannot write into the folder " + folder);
  return Status::Ok();
}

}  // namespace

Status CheckOutputFile(const std::string& path, bool required) {
  if (path.empty() && !required) return Status::Ok();
  return CheckOutputPath(path).WithContext(path);
}

void AddReportOutputFlag(CLI::App& cmd, std::string& output) {
  cmd.add_option("-o,--output", output, "Write the report to FILE instead of stdout (needed with --format html)");
}

Status CheckReportOutput(const std::string& format, const std::string& output) {
  if (format == "html" && output.empty()) {
    return InvalidInput("--format html writes a page: give -o FILE.html");
  }
  return CheckOutputFile(output);
}

Status EmitReport(const std::string& output, const std::string& report) {
  if (output.empty()) {
    std::cout << report;
    return Status::Ok();
  }
  return WriteFileAtomically(output, report).WithContext(output);
}

Status CheckBackendName(const BackendRegistry& registry, const std::string& flag, const std::string& name) {
  if (registry.Find(name) != nullptr) return Status::Ok();
  std::string known;
  for (const std::string& k : registry.Names()) known += (known.empty() ? "" : ", ") + k;
  return InvalidInput(flag + ": unknown backend '" + name + "' (known: " + known + ")");
}

const std::atomic<bool>* StopFlagRaisedBySignals() {
  g_stop_requested.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  return &g_stop_requested;
}


int ExitCodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInternal: return kExitInternal;
    case StatusCode::kInterrupted: return kExitInterrupted;
    default: return kExitBadInput;
  }
}

int ReportResult(const Status& status) {
  std::string message = status.message();
  for (char& c : message)  // one line, always
    if (c == '\n' || c == '\r') c = ' ';
  if (status.code() == StatusCode::kInterrupted) {
    if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
  } else if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
  }
  return ExitCodeOf(status);
}

void OnRun(CLI::App* cmd, Status& result, std::function<Status()> run) {
  cmd->callback([&result, run = std::move(run)] { result = run(); });
}

namespace {

// One value of a repeated NAME=... flag, split at its last '=' (names may contain one): the name
// and what follows, neither empty, or the error saying what `flag` expects.
Expected<std::pair<std::string, std::string>> SplitNamed(const std::string& flag, const std::string& value,
                                                         const std::string& expected) {
  const size_t eq = value.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
    return InvalidInput(flag + " '" + value + "': expected " + expected);
  return std::pair{value.substr(0, eq), value.substr(eq + 1)};
}

}  // namespace

Expected<std::map<std::string, Shape>> ParseInputShapes(const std::vector<std::string>& values) {
  std::map<std::string, Shape> shapes;
  for (const std::string& value : values) {
    LATTE_ASSIGN_OR_RETURN(const auto named, SplitNamed("--input-shape", value, "NAME=SHAPE, like x=1x3x224x224"));
    auto shape = ParseShape(named.second);
    if (!shape.ok()) return shape.status().WithContext("--input-shape '" + value + "'");
    shapes[named.first] = *shape;
  }
  return shapes;
}

Expected<std::map<std::string, std::vector<std::string>>> ParseInputValues(const std::vector<std::string>& values) {
  std::map<std::string, std::vector<std::string>> parsed;
  for (const std::string& value : values) {
    LATTE_ASSIGN_OR_RETURN(const auto named,
                           SplitNamed("--input-value", value, "NAME=VALUE[,VALUE...], like sr=16000"));
    std::vector<std::string> texts;
    for (size_t start = 0;;) {
      const size_t comma = named.second.find(',', start);
      texts.push_back(named.second.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (texts.back().empty()) return InvalidInput("--input-value '" + value + "': an empty value between commas");
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    parsed[named.first] = std::move(texts);
  }
  return parsed;
}

void AddModelInputFlags(CLI::App& cmd, ModelInputFlags& flags, const std::string& shape_note) {
  cmd.add_option("--input-shape", flags.shapes, "Input shape NAME=1x3x224x224 (repeatable" + shape_note + ")");
  cmd.add_option("--input-value", flags.values,
                 "Value of a small input, NAME=V[,V...] in row-major order (repeatable; ONNX): the input becomes a "
                 "constant, so what is computed from it (shapes, an If's condition) folds at import");
}

void AddCalibrationDataFlag(CLI::App& cmd, std::vector<std::string>& flags) {
  cmd.add_option("--calibration-data", flags,
                 "With --precision int8: samples of input NAME to calibrate on, NAME=FILE.npy (repeatable; float32 or "
                 "float64, the input's shape or N samples of it along a first axis; default: 4 generated inputs)");
}

Expected<std::shared_ptr<const CalibrationInputs>> ReadCalibrationData(const std::vector<std::string>& flags, bool int8,
                                                                       const std::string& precisions) {
  if (flags.empty()) return std::shared_ptr<const CalibrationInputs>();
  if (!int8) return InvalidInput("--calibration-data: only --precision int8 calibrates (this run is " + precisions + ")");
  auto data = std::make_shared<CalibrationInputs>();
  for (const std::string& flag : flags) {
    LATTE_ASSIGN_OR_RETURN(const auto named, SplitNamed("--calibration-data", flag, "NAME=FILE.npy, like x=samples.npy"));
    if (data->arrays.count(named.first)) return InvalidInput("--calibration-data names input '" + named.first + "' twice");
    LATTE_ASSIGN_OR_RETURN(NpyArray array, ReadNpy(named.second));
    data->arrays[named.first] = {named.second, std::move(array.shape), std::move(array.data)};
  }
  return std::shared_ptr<const CalibrationInputs>(std::move(data));
}

Expected<ImportOptions> ParseModelInputs(const ModelInputFlags& flags) {
  ImportOptions options;
  LATTE_ASSIGN_OR_RETURN(options.input_shapes, ParseInputShapes(flags.shapes));
  LATTE_ASSIGN_OR_RETURN(options.input_values, ParseInputValues(flags.values));
  return options;
}

Status ImportForCommand(const std::string& model, const ModelInputFlags& inputs, Graph& graph) {
  std::vector<Graph> graphs;
  LATTE_RETURN_IF_ERROR(ImportModelsForCommand({model}, inputs, graphs));
  graph = std::move(graphs[0]);
  return Status::Ok();
}

Status ImportModelsForCommand(const std::vector<std::string>& models, const ModelInputFlags& inputs,
                              std::vector<Graph>& graphs) {
  LATTE_ASSIGN_OR_RETURN(ImportOptions options, ParseModelInputs(inputs));
  // One model: the import refuses a name it lacks. Several: checked below, over all of them.
  options.skip_unknown_input_names = models.size() > 1;
  std::set<std::string> names;
  graphs.clear();
  for (const std::string& model : models) {
    auto imported = ImportModel(model, options);
    if (!imported.ok()) return imported.status().WithContext(model);
    for (TensorId id : imported->inputs) names.insert(imported->tensor(id).name);
    graphs.push_back(std::move(imported).value());
  }
  return options.skip_unknown_input_names ? CheckInputShapesNamed(options.input_shapes, names) : Status::Ok();
}

Expected<double> ParseDuration(std::string_view text) {
  const std::string whole(text);
  if (text.empty()) return InvalidInput("empty duration (like 30s, 10m, 2h, 1h30m)");
  double total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
    if (end == i) return InvalidInput("bad duration '" + whole + "' (like 30s, 10m, 2h, 1h30m)");
    double value = 0;
    try {
      std::size_t used = 0;
      value = std::stod(std::string(text.substr(i, end - i)), &used);
      if (used != end - i) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return InvalidInput("bad duration '" + whole + "' (like 30s, 10m, 2h, 1h30m)");
    }
    double unit = 1;
    if (end < text.size()) {
      switch (text[end]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        default: return InvalidInput("bad duration '" + whole + "': unknown unit '" + text[end] + "' (s, m, h)");
      }
      ++end;
    } else if (i > 0) {
      return InvalidInput("bad duration '" + whole + "': a unit (s, m, h) after every number but a lone one");
    }
    total += value * unit;
    i = end;
  }
  if (!(total > 0)) return InvalidInput("bad duration '" + whole + "': must be more than 0");
  return total;
}

}  // namespace latte::cli
