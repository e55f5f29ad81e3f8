// latte: one binary, one subcommand per file (cmd_*.cc). Parsing only; the work is in the
// libraries. Bad flags print one "error: ..." line and exit 2; a command's result is turned into
// its error line and exit code here, once.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace latte::cli;
  CLI::App app{"Latte: predict, measure and compare neural-network latency on a device and runtime"};
  app.set_version_flag("--version", "latte 0.1.0");
  app.require_subcommand(1);
  latte::Status result;
  // In the order `latte --help` lists them.
  for (AddCommand* add : {AddInspectCommand, AddBenchCommand, AddCompareCommand, AddProfileCommand, AddPredictCommand,
                          AddValidateCommand, AddParetoCommand, AddImportCommand, AddExportCommand, AddFitCommand,
                          AddCalibrateCommand, AddAdaptCommand, AddLabCommand})
    add(app, result);
  // Name a mistyped command instead of CLI11's "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      found = found || sub->get_name() == argv[1];
    }
    if (!found) {
      std::cerr << "error: unknown command '" << argv[1] << "' (commands: " << known << ")\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 checks required arguments before it reports unknown ones: `latte --bogus inspect`
    // would say "model is required". An unknown flag is the first thing to fix: name it.
    for (const std::string& extra : app.remaining(true)) {
      if (extra.size() > 1 && extra[0] == '-') {
        std::cerr << "error: unknown flag '" << extra << "' (see 'latte --help' and 'latte COMMAND --help')\n";
        return kExitBadInput;
      }
    }
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::cerr << "error: " << what << " (see 'latte --help')\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
    return kExitInternal;
  }
  return ReportResult(result);
}
