#pragma once
// `--db` and `--device-name` of the commands that record their runs in a store (validate and
// compare, db/run_history.h): the store checked before any work, and the run recorded after it.

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/status.h"
#include "db/run_history.h"
#include "run/measure.h"

namespace latte::cli {

struct RunRecordFlags {
  std::string db;           // "" = the run is not recorded
  std::string device_name;  // "" = this machine's fingerprint key
};

/// Adds --db (a SQLite file or a PostgreSQL URL to record the run in) and --device-name.
void AddRunRecordFlags(CLI::App& cmd, RunRecordFlags& flags, const std::string& what);

/// Before any measurement: --device-name needs --db, and the store opens (created or migrated
/// to this latte's schema), so an unreachable, damaged or newer store fails at once, one line
/// naming it. Nothing to do without --db.
Status CheckRunStore(const RunRecordFlags& flags);

/// " --warmup-runs W --num-runs N --min-secs S": the protocol flags as a command line spells them.
std::string ProtocolArguments(const MeasureOptions& measure);

/// Records the run (this machine under --device-name, when given) in ONE transaction and says
/// "recorded as run N in DB" on stderr; the password of a URL is never shown or stored.
Status RecordRunIn(const RunRecordFlags& flags, const DeviceFingerprint& here, RunInfo run,
                   std::span<const ValidationRecord> validations, std::span<const ComparisonRecord> comparisons);

}  // namespace latte::cli
