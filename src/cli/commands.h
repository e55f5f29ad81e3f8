#pragma once
// One function per subcommand, each in its own cmd_*.cc; main() adds them all. A command
// sets `exit_code` when it runs.

namespace CLI {
class App;
}

namespace latte::cli {

void AddInspectCommand(CLI::App& app, int& exit_code);
void AddBenchCommand(CLI::App& app, int& exit_code);
void AddCompareCommand(CLI::App& app, int& exit_code);
void AddProfileCommand(CLI::App& app, int& exit_code);
void AddPredictCommand(CLI::App& app, int& exit_code);
void AddValidateCommand(CLI::App& app, int& exit_code);
void AddImportCommand(CLI::App& app, int& exit_code);
void AddExportCommand(CLI::App& app, int& exit_code);
void AddFitCommand(CLI::App& app, int& exit_code);
void AddCalibrateCommand(CLI::App& app, int& exit_code);
void AddParetoCommand(CLI::App& app, int& exit_code);
void AddAdaptCommand(CLI::App& app, int& exit_code);

}  // namespace latte::cli
