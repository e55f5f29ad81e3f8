// `latte pareto MODEL --backends xnnpack,onednn --packs A.json,B.json`: which backend should run
// each op (and, with a backend listed at fp32 and at int8, at which precision): the latency/memory
// Pareto front over per-op assignments (and drift from fp32 when some choice is int8), predicted
// from the packs, optionally verified for real (--verify K).
#include <CLI/CLI.hpp>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/file.h"
#include "report/inspect_view.h"
#include "report/pareto_view.h"
#include "search/pareto.h"

namespace latte::cli {

void AddParetoCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string model, mode = "name", search = "auto", format = "text", plot, output;
    std::vector<std::string> backends, packs;
    ModelInputFlags inputs;
    std::uint64_t seed = 0;
    std::size_t verify = 0, evaluations = 2000, population = 40, generations = 50;
    MeasureOptions measure = ValidationMeasureOptions();
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "pareto",
      "Search per-op backend (and precision) assignments for the latency/memory(/drift) Pareto front (predicted; --verify "
      "runs some)");
  cmd->add_option("model", flags->model, "Model file (.tflite or .onnx)")->required();
  cmd->add_option("--backends", flags->backends,
                  "Backends, comma-separated; the first is the fallback; one listed twice with an fp32 and an int8 pack "
                  "(xnnpack,xnnpack@int8) chooses a precision per op too")
      ->delimiter(',')
      ->required();
  cmd->add_option("--packs", flags->packs, "One predictor pack per backend, in the same order, comma-separated")
      ->delimiter(',')
      ->required();
  cmd->add_option("--mode", flags->mode, "Op list: one digit per op kind (name) or per (op kind, input size) (index)")
      ->check(CLI::IsMember({"name", "index"}))
      ->capture_default_str();
  cmd->add_option("--search", flags->search, "auto (brute force when small enough, else nsga2), brute, random, local, nsga2")
      ->check(CLI::IsMember({"auto", "brute", "random", "local", "nsga2"}))
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed, "Seed of the random searches")->capture_default_str();
  cmd->add_option("--evaluations", flags->evaluations, "random, local: distinct assignments evaluated at most")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--population", flags->population, "nsga2: population")->check(CLI::Range(4, 100000))->capture_default_str();
  cmd->add_option("--generations", flags->generations, "nsga2: generations")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--verify", flags->verify, "Run K assignments spread over the front (and the all-on-one-backend ones) for real")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  AddProtocolFlags(*cmd, flags->measure, " of each --verify run");
  cmd->add_option("--format", flags->format, "Output format (html: a page, with -o)")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  AddReportOutputFlag(*cmd, flags->output);
  cmd->add_option("--plot", flags->plot, "Write an SVG of the evaluated points and the fronts to FILE");
  AddModelInputFlags(*cmd, flags->inputs);
  OnRun(cmd, result, [flags]() -> Status {
    if (flags->packs.size() != flags->backends.size()) {
      return InvalidInput("--packs gives " + std::to_string(flags->packs.size()) + " pack(s) for " +
                          std::to_string(flags->backends.size()) + " backend(s): one per backend");
    }
    ParetoOptions options;
    auto mode = ParseOpListMode(flags->mode);
    options.mode = *mode;
    options.search.method = flags->search;
    options.search.seed = flags->seed;
    options.search.evaluations = flags->evaluations;
    options.search.population = flags->population;
    options.search.generations = flags->generations;
    options.verify = flags->verify;
    options.measure = flags->measure;
    if (Status s = options.measure.Validate(); !s.ok()) {
      return s;
    }
    // An unwritable --plot fails now, not after loading the packs, the search and the verification runs.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->plot));
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    std::vector<Pack> packs;
    for (const std::string& path : flags->packs) {
      auto pack = Pack::Load(path);
      if (!pack.ok()) {
        return pack.status();
      }
      packs.push_back(std::move(pack).value());
    }
    // A choice is a backend at its pack's precision; "xnnpack@int8" also says which precision it expects.
    std::vector<SearchBackend> backends;
    for (std::size_t i = 0; i < packs.size(); ++i) {
      const std::string& listed = flags->backends[i];
      const std::size_t at = listed.find('@');
      auto precision = ParsePrecision(at == std::string::npos ? packs[i].info.precision : listed.substr(at + 1));
      if (!precision.ok()) return precision.status().WithContext("--backends " + listed);
      backends.push_back({listed.substr(0, at), &packs[i], *precision});
    }
    options.run.num_threads = packs[0].info.threads;
    Graph graph;
    LATTE_RETURN_IF_ERROR(ImportForCommand(flags->model, flags->inputs, graph));
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    auto result = RunParetoSearch(graph, backends, options, registry);
    if (!result.ok()) {
      return result.status().WithContext(flags->model);
    }
    ParetoView view(*result);
    if (!flags->plot.empty()) {
      if (Status written = WriteFileAtomically(flags->plot, view.Svg()); !written.ok()) {
        return written.WithContext(flags->plot);
      }
    }
    if (flags->format == "json") return EmitReport(flags->output, DumpJson(view.Json()) + "\n");
    if (flags->format == "html") return EmitReport(flags->output, view.Html(graph, flags->model));
    return EmitReport(flags->output, view.Text());
  });
}

}  // namespace latte::cli
