#pragma once
// One function per subcommand, each in its own cmd_*.cc; main() adds them all. A command's run
// returns a Status into `result`, which main turns into the one-line error and the exit code.

#include "core/status.h"

namespace CLI {
class App;
}

namespace latte::cli {

void AddInspectCommand(CLI::App& app, Status& result);
void AddBenchCommand(CLI::App& app, Status& result);
void AddCompareCommand(CLI::App& app, Status& result);
void AddProfileCommand(CLI::App& app, Status& result);
void AddPredictCommand(CLI::App& app, Status& result);
void AddValidateCommand(CLI::App& app, Status& result);
void AddImportCommand(CLI::App& app, Status& result);
void AddExportCommand(CLI::App& app, Status& result);
void AddFitCommand(CLI::App& app, Status& result);
void AddCalibrateCommand(CLI::App& app, Status& result);
void AddParetoCommand(CLI::App& app, Status& result);
void AddAdaptCommand(CLI::App& app, Status& result);

}  // namespace latte::cli
