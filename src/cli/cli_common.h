#pragma once
// What every subcommand shares: turning a Status into the one-line error and exit code,
// and parsing the flags several commands take.

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace latte::cli {

/// Exit codes: 0 ok, 1 internal failure (a bug), 2 bad input (file, flag, database).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

/// Prints "error: SUBJECT: message" (or "error: message" without a subject) on one line to
/// stderr and returns the exit code for the status.
int ReportError(const std::string& subject, const Status& status);

/// Parses repeated "NAME=1x3x224x224" values of --input-shape.
Expected<std::map<std::string, Shape>> ParseInputShapes(const std::vector<std::string>& values);

/// Imports MODEL with the --input-shape values, as every command that reads a model does. On
/// failure prints the error line and returns its exit code; on success returns kExitOk.
int ImportForCommand(const std::string& model, const std::vector<std::string>& input_shapes, Graph& graph);

/// Clears and returns the flag that SIGINT and SIGTERM raise from now on: long commands (profile,
/// calibrate) stop cleanly after the current kernel, keeping what they measured.
const std::atomic<bool>* StopFlagRaisedBySignals();

}  // namespace latte::cli
