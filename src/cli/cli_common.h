#pragma once
// What every subcommand shares: turning a Status into the one-line error and exit code,
// and parsing the flags several commands take.

#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "import/import.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "run/backend_registry.h"
#include "run/measure.h"

namespace latte::cli {

/// Seconds in a duration: "30s", "10m", "2h", "1h30m", "1.5h", or a bare number of seconds.
Expected<double> ParseDuration(std::string_view text);

/// Exit codes: 0 ok, 1 internal failure (a bug), 2 bad input (file, flag, database), 130
/// stopped by a signal (what was measured is kept).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 130;

/// Most threads a command runs with (the backends refuse more).
inline constexpr int kMaxThreads = 1024;

/// A flag check: an integer in lo..hi. CLI11 reports a refusal as one line naming the flag,
/// "--num-threads: 0 is not in 1..1024" (exit 2, before the command starts).
CLI::Validator IntegerIn(long long lo, long long hi);

/// A flag check: a finite number (no nan or inf) in lo..hi: "--min-secs: inf is not a number in 0..150".
CLI::Validator NumberIn(double lo, double hi);

/// A flag check: a precision's name (ParsePrecision: fp32, bf16, int8) among `runs`, the ones the
/// command runs: "--precision: fp16 is not a precision (fp32, bf16, int8)", "--precision: bf16 is
/// not one calibrate runs (fp32)". Commands then read the value with ParsePrecision.
CLI::Validator PrecisionIn(std::vector<Precision> runs, const std::string& command);

/// The precisions a store's measurements may carry: those Latte runs (fp32, bf16, int8) and fp16,
/// which only an imported table has. What fit's and export's --precision filter on and import's
/// --precision stores a table under.
std::vector<std::string> StoredPrecisionNames();

/// --warmup-runs, --num-runs and --min-secs (snake_case aliases kept) of the measurement protocol, read into `measure`
/// (whose values are the defaults shown) and checked on parse: warmup 0..1,000,000, runs
/// 1..1,000,000, seconds 0..measure.max_secs (the protocol's hard stop of a timed pass, so no
/// value makes a measurement run without end). `what` ends each description ("per kernel").
void AddProtocolFlags(CLI::App& cmd, MeasureOptions& measure, const std::string& what = "");

/// --db: `what` ("Store file"), a SQLite file or a PostgreSQL server's URL, read into `db` (empty:
/// DefaultStorePath(), shown).
void AddStoreFlag(CLI::App& cmd, std::string& db, const std::string& what);

/// How validate and pareto measure whole models by default: the bench protocol with 5 warmup runs
/// (their runs are compared with predictions, so the first, colder runs stay out).
MeasureOptions ValidationMeasureOptions();

/// A file a command writes after long work (-o, --plot, --trace), checked before it: not a
/// directory, in a folder that exists and this process may write into; the error names the
/// path. An optional flag not given (empty) passes; a `required` one must not be empty.
Status CheckOutputFile(const std::string& path, bool required = false);

/// -o FILE of a command that prints a report: the report goes to FILE (whole, as every file Latte
/// writes) instead of stdout.
void AddReportOutputFlag(CLI::App& cmd, std::string& output);
/// Before any work: --format html (a page, not terminal output) needs -o, and -o must be writable
/// (as CheckOutputFile).
Status CheckReportOutput(const std::string& format, const std::string& output);
/// `report` to stdout, or to `output` when given (errors name the file).
Status EmitReport(const std::string& output, const std::string& report);

/// `name` is a backend the registry knows; else "FLAG: unknown backend 'x' (known: a, b, c)".
Status CheckBackendName(const BackendRegistry& registry, const std::string& flag, const std::string& name);

/// The exit code of a command's result: kExitOk, kExitInternal for kInternal, kExitInterrupted for
/// kInterrupted, kExitBadInput for the rest.
int ExitCodeOf(const Status& status);

/// What main does with a command's result, once: an error as "error: message" on one line to
/// stderr (an interruption's message as is), then its exit code.
int ReportResult(const Status& status);

/// Makes `run` the work of subcommand `cmd`: its Status becomes `result` when the command runs.
void OnRun(CLI::App* cmd, Status& result, std::function<Status()> run);

/// Parses repeated "NAME=1x3x224x224" values of --input-shape.
Expected<std::map<std::string, Shape>> ParseInputShapes(const std::vector<std::string>& values);
/// Parses repeated "NAME=V[,V...]" values of --input-value (each value's text, checked against the
/// input's type and shape by the import).
Expected<std::map<std::string, std::vector<std::string>>> ParseInputValues(const std::vector<std::string>& values);

/// --input-shape and --input-value, as the commands that import a model take them.
struct ModelInputFlags {
  std::vector<std::string> shapes;  // NAME=1x3x224x224
  std::vector<std::string> values;  // NAME=V[,V...]
};
/// Adds both flags to `cmd`; `shape_note` ends --input-shape's description ("; applies to ...").
void AddModelInputFlags(CLI::App& cmd, ModelInputFlags& flags, const std::string& shape_note = "");
/// Both flags as import options.
Expected<ImportOptions> ParseModelInputs(const ModelInputFlags& flags);

/// --calibration-data NAME=FILE.npy (repeatable): the samples --precision int8 calibrates on, read
/// from NumPy files (float32 or float64, C order); null when none are given. Errors name the file;
/// samples for a run without int8 among its `precisions` (`int8` false) are refused saying so.
void AddCalibrationDataFlag(CLI::App& cmd, std::vector<std::string>& flags);
Expected<std::shared_ptr<const CalibrationInputs>> ReadCalibrationData(const std::vector<std::string>& flags, bool int8,
                                                                       const std::string& precisions);

/// Imports MODEL with the --input-shape and --input-value values, as every command that reads a
/// model does; errors name the model file.
Status ImportForCommand(const std::string& model, const ModelInputFlags& inputs, Graph& graph);
/// The same for several models sharing one list of --input-shape values (validate, calibrate): a
/// name only some of the models have applies where it exists; a name none of them has is an error
/// (a typo), as is every problem ImportForCommand reports. An --input-value names an input of
/// every model.
Status ImportModelsForCommand(const std::vector<std::string>& models, const ModelInputFlags& inputs,
                              std::vector<Graph>& graphs);

/// Clears and returns the flag that SIGINT and SIGTERM raise from now on: long commands (profile,
/// calibrate) stop cleanly after the current kernel, keeping what they measured.
const std::atomic<bool>* StopFlagRaisedBySignals();

}  // namespace latte::cli
