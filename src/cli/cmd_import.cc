// `latte import --format F FILE --device NAME --backend NAME`: a table measured elsewhere into
// the store, whole or not at all.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "db/server_url.h"
#include "db/store.h"
#include "db/table_io.h"

namespace latte::cli {

void AddImportCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string file, db;
    TableImportOptions options;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("import", "Store a latency table measured elsewhere (TensorRT conv library, "
                                               "operator LUT, CSV) as measurements");
  cmd->add_option("--format", flags->options.format, "Table format")
      ->required()
      ->check(CLI::IsMember({"tensorrt-conv", "op-lut", "csv"}));
  cmd->add_option("file", flags->file, "Table file")->required();
  cmd->add_option("--device", flags->options.device,
                  "Device name to store the rows under (op-lut: default each line's device)");
  cmd->add_option("--backend", flags->options.backend, "Runtime that measured the table (e.g. tensorrt)")->required();
  cmd->add_option("--backend-version", flags->options.backend_version, "Its version, when known");
  cmd->add_option("--num-threads,--num_threads", flags->options.threads, "Threads it ran with, when known (0 = unknown)")
      ->check(IntegerIn(0, kMaxThreads));
  cmd->add_option("--precision", flags->options.precision, "Precision of the table")
      ->check(CLI::IsMember(StoredPrecisionNames()));
  cmd->add_option("--unit", flags->options.latency_unit, "Unit of a CSV latency_time column")
      ->check(CLI::IsMember({"ms", "us"}));
  AddStoreFlag(*cmd, flags->db, "Store (created when new)");
  OnRun(cmd, result, [flags]() -> Status {
    const std::string db = flags->db.empty() ? DefaultStorePath() : flags->db;
    auto store = Store::Open(db);
    if (!store.ok()) {
      return store.status();
    }
    auto report = ImportTable(*store, flags->file, flags->options);
    if (!report.ok()) {
      return report.status();
    }
    std::cout << flags->file << ": " << report->Describe() << " into " << MaskPassword(db) << "\n";
    return Status::Ok();
  });
}

}  // namespace latte::cli
