// `latte export --format csv|jsonl [--db FILE] [-o FILE]`: stored measurements out, one row each.
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
    std::string format = "csv", db, output, backend, precision, device, kind;
    int threads = -1;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("export", "Write stored measurements as CSV or JSON lines");
  cmd->add_option("--format", flags->format, "Output format")->check(CLI::IsMember({"csv", "jsonl"}));
  AddStoreFlag(*cmd, flags->db, "Store");
  cmd->add_option("-o,--output", flags->output, "Output file (default: standard output)");
  cmd->add_option("--backend", flags->backend, "Only this backend");
  cmd->add_option("--num-threads,--num_threads", flags->threads, "Only this thread count")->check(IntegerIn(0, kMaxThreads));
  cmd->add_option("--precision", flags->precision, "Only this precision")->check(CLI::IsMember({"fp32", "fp16", "int8"}));
  cmd->add_option("--device", flags->device, "Only this device key");
  cmd->add_option("--kind", flags->kind, "Only this kernel kind (e.g. conv2d+relu)");
  OnRun(cmd, result, [flags]() -> Status {
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
    auto written = ExportMeasurements(*store, filter, flags->format, out);
    if (!written.ok()) {
      return written.status();  // the store's errors name the store
    }
    if (!flags->output.empty()) {
      if (Status saved = WriteFileAtomically(flags->output, file.view()); !saved.ok()) {
        return saved.WithContext(flags->output);  // its messages do not name the file
      }
    }
    if (!flags->output.empty()) std::cerr << flags->output << ": " << *written << " measurements\n";
    return Status::Ok();
  });
}

}  // namespace latte::cli
