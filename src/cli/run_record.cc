#include "cli/run_record.h"

#include <iostream>

#include <fmt/format.h>

#include "db/server_url.h"
#include "db/store.h"
#include "profile/lab.h"

namespace latte::cli {

void AddRunRecordFlags(CLI::App& cmd, RunRecordFlags& flags, const std::string& what) {
  cmd.add_option("--db", flags.db,
                 "Record " + what + " in this store: a SQLite file, or a PostgreSQL database as "
                 "postgresql://USER@HOST/NAME (a password is never shown or stored); `latte export --runs` reads them");
  cmd.add_option("--device-name", flags.device_name,
                 "With --db: the device the run is recorded for (default: this machine's fingerprint key)");
}

Status CheckRunStore(const RunRecordFlags& flags) {
  if (flags.db.empty()) {
    if (!flags.device_name.empty()) return InvalidInput("--device-name: only with --db (the store that records the run)");
    return Status::Ok();
  }
  // Opened and closed: a run can take minutes (compare forks a child per configuration), and a
  // server's connection is better made again than held idle through it.
  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(flags.db));
  return Status::Ok();
}

std::string ProtocolArguments(const MeasureOptions& measure) {
  return fmt::format(" --warmup-runs {} --num-runs {} --min-secs {}", measure.warmup_runs, measure.num_runs,
                     measure.min_secs);
}

Status RecordRunIn(const RunRecordFlags& flags, const DeviceFingerprint& here, RunInfo run,
                   std::span<const ValidationRecord> validations, std::span<const ComparisonRecord> comparisons) {
  if (flags.db.empty()) return Status::Ok();
  const std::string db = MaskPassword(flags.db);
  run.arguments += (flags.device_name.empty() ? "" : " --device-name " + flags.device_name) + " --db " + db;
  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(flags.db));
  LATTE_ASSIGN_OR_RETURN(std::int64_t id,
                         RunHistory::Record(store, LabDeviceInfo(here, flags.device_name), run, validations, comparisons));
  std::cerr << "recorded as run " << id << " in " << db << "\n";
  return Status::Ok();
}

}  // namespace latte::cli
