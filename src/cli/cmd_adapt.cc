// `latte adapt --pack P.json --budget 60s -o MINE.json`: correct a pack made on another machine
// (or at another time) for this one, by measuring a few dozen of its kernels again here.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "calibrate/adapt.h"
#include "profile/profile.h"
#include "report/adapt_view.h"
#include "report/inspect_view.h"

namespace latte::cli {

void AddAdaptCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string pack, budget = "60s", output, format = "text";
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "adapt", "Correct a pack for this machine: measure a few dozen of its kernels here and scale it per kernel class");
  cmd->add_option("--pack", flags->pack, "Pack to adapt (JSON or .json.gz)")->required();
  cmd->add_option("--budget", flags->budget, "Time to measure: 30s, 60s, 2m (at least 10s)")->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Adapted pack to write")->required();
  cmd->add_option("--format", flags->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  OnRun(cmd, result, [flags]() -> Status {
    AdaptOptions options;
    auto budget = ParseDuration(flags->budget);
    if (!budget.ok()) {
      return budget.status().WithContext("--budget");
    }
    options.budget_secs = *budget;
    options.command = "latte adapt --pack " + flags->pack + " --budget " + flags->budget + " -o " + flags->output;
    options.stop = StopFlagRaisedBySignals();
    // What cannot work is refused before the pack (tens of MB) is read.
    if (Status s = CheckAdaptOptions(options); !s.ok()) {
      return s;
    }
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->output, /*required=*/true));
    auto pack = Pack::Load(flags->pack);
    if (!pack.ok()) {
      return pack.status();
    }
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    auto result = RunAdapt(std::move(pack).value(), options, registry, std::cerr);
    if (!result.ok()) {
      return result.status().WithContext(flags->pack);
    }
    if (result->interrupted) {
      return Interrupted("adapt: interrupted: no pack written");
    }
    if (flags->format == "json") std::cout << DumpJson(AdaptReportJson(*result)) << "\n";
    else std::cout << AdaptReportText(*result);
    if (Status saved = result->pack.Save(flags->output); !saved.ok()) {
      return saved;
    }
    if (flags->format != "json") std::cout << "wrote " << flags->output << "\n";
    return Status::Ok();
  });
}

}  // namespace latte::cli
