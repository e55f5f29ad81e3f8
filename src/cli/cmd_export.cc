// `latte export --format csv|jsonl [--db FILE] [-o FILE]`: stored measurements out, one row each;
// `--runs validate|compare`: the recorded runs of those commands instead (db/run_history.h).
#include <CLI/CLI.hpp>
#include <sstream>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/file.h"
#include "db/store.h"
#include "db/table_io.h"

namespace latte::cli {

void AddExportCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string format = "csv", db, output, backend, precision, device, kind, runs;
    int threads = -1;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("export", "Write stored measurements (or the runs validate and compare recorded) as CSV or JSON lines");
  cmd->add_option("--format", flags->format, "Output format")->check(CLI::IsMember({"csv", "jsonl"}));
  AddStoreFlag(*cmd, flags->db, "Store");
  cmd->add_option("-o,--output", flags->output, "Output file (default: standard output)");
  cmd->add_option("--backend", flags->backend, "Only this backend");
  cmd->add_option("--num-threads,--num_threads", flags->threads, "Only this thread count")->check(IntegerIn(0, kMaxThreads));
  cmd->add_option("--precision", flags->precision, "Only this precision")->check(CLI::IsMember(StoredPrecisionNames()));
  cmd->add_option("--device", flags->device, "Only this device key");
  cmd->add_option("--kind", flags->kind, "Only this kernel kind (e.g. conv2d+relu)");
  cmd->add_option("--runs", flags->runs,
                  "Instead of measurements, the runs `latte validate --db` or `latte compare --db` recorded: one row per "
                  "model or configuration, with the run's time, device and pack (--device filters them)")
      ->check(CLI::IsMember({"validate", "compare"}));
  OnRun(cmd, result, [flags]() -> Status {
    if (!flags->runs.empty()) {
      for (const auto& [flag, given] : {std::pair<const char*, bool>{"--backend", !flags->backend.empty()},
                                        {"--num-threads", flags->threads >= 0},
                                        {"--precision", !flags->precision.empty()},
                                        {"--kind", !flags->kind.empty()}}) {
        if (given) return InvalidInput(std::string(flag) + ": filters measurements, not --runs (which --device filters)");
      }
    }
    const std::string db = flags->db.empty() ? DefaultStorePath() : flags->db;
    auto store = Store::OpenReadOnly(db);  // exporting never creates, migrates or writes a store
    if (!store.ok()) {
      return store.status();
    }
    MeasurementFilter filter;
    if (!flags->backend.empty()) filter.backend = flags->backend;
    if (flags->threads >= 0) filter.threads = flags->threads;
    if (!flags->precision.empty()) filter.precision = flags->precision;
    if (!flags->device.empty()) filter.device = flags->device;
    if (!flags->kind.empty()) filter.kind = flags->kind;
    // -o: the export is written whole once complete, so a failed one leaves an earlier file as it was.
    std::ostringstream file;
    std::ostream& out = flags->output.empty() ? std::cout : file;
    RunFilter runs;
    if (!flags->device.empty()) runs.device = flags->device;
    runs.command = flags->runs;
    auto written = flags->runs.empty() ? ExportMeasurements(*store, filter, flags->format, out)
                                       : ExportRuns(*store, runs, flags->format, out);
    if (!written.ok()) {
      return written.status();  // the store's errors name the store
    }
    if (!flags->output.empty()) {
      if (Status saved = WriteFileAtomically(flags->output, file.view()); !saved.ok()) {
        return saved.WithContext(flags->output);  // its messages do not name the file
      }
    }
    if (!flags->output.empty()) {
      std::cerr << flags->output << ": " << *written << (flags->runs.empty() ? " measurements\n" : " rows of runs\n");
    }
    return Status::Ok();
  });
}

}  // namespace latte::cli
