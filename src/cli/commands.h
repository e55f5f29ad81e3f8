#pragma once
// One function per subcommand, each in its own cmd_*.cc; main() adds them all. A command's run
// returns a Status into `result`, which main turns into the one-line error and the exit code.

#include "core/status.h"

namespace CLI {
class App;
}

namespace latte::cli {

/// Adds one subcommand to `app`; what its run returns is stored in `result`.
using AddCommand = void(CLI::App& app, Status& result);

AddCommand AddInspectCommand, AddBenchCommand, AddCompareCommand, AddProfileCommand, AddPredictCommand,
    AddValidateCommand, AddImportCommand, AddExportCommand, AddFitCommand, AddCalibrateCommand, AddParetoCommand,
    AddAdaptCommand, AddLabCommand;

}  // namespace latte::cli
