// `latte fit --db FILE --backend B [--device D] [--num-threads T] [--precision P] -o PACK.json`:
// fit a predictor pack on stored measurements, printing each kind's cross-validated accuracy.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "ir/kernel_graph.h"
#include "calibrate/fit_store.h"
#include "report/fit_view.h"

namespace latte::cli {
namespace {

// Far above any device (an exaflop is 1e9 GFLOP/s), low enough to stay a finite rate in the pack.
constexpr double kMaxRooflineRate = 1e9;

}  // namespace

void AddFitCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string db, backend, device, precision, output;
    std::vector<std::string> fusion_rules;
    int threads = 0;
    FitOptions options;
    bool no_drift_correction = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("fit", "Fit a predictor pack on stored measurements (k-fold cross-validated)");
  AddStoreFlag(*cmd, flags->db, "Store");
  cmd->add_option("--backend", flags->backend, "Backend whose measurements to fit (xnnpack, tensorrt, ...)")->required();
  cmd->add_option("--device", flags->device, "Device key (needed when the store holds several devices)");
  cmd->add_option("--num-threads,--num_threads", flags->threads, "Thread count (needed when several were measured)")
      ->check(IntegerIn(1, kMaxThreads));
  cmd->add_option("--precision", flags->precision, "Precision (needed when several were measured)")
      ->check(CLI::IsMember(StoredPrecisionNames()));
  cmd->add_option("-o,--output", flags->output, "Pack file to write")->required();
  cmd->add_option("--fusion-rules", flags->fusion_rules,
                  "Fused kinds the backend runs as one kernel, comma-separated (default: every fused kind measured)")
      ->delimiter(',');
  cmd->add_option("--folds", flags->options.folds, "Cross-validation folds")->check(CLI::Range(2, 100));
  // 0 is the default: the roofline takes the best the samples reach (RooflinePredictor::Fit).
  cmd->add_option("--peak-gflops", flags->options.predictor.peak_gflops,
                  "Device peak GFLOP/s for the roofline (default 0: the best the samples reach)")
      ->check(NumberIn(0, kMaxRooflineRate));
  cmd->add_option("--bandwidth-gbs", flags->options.predictor.bandwidth_gbs,
                  "Device memory bandwidth in GB/s for the roofline (default 0: the best the samples reach)")
      ->check(NumberIn(0, kMaxRooflineRate));
  cmd->add_flag("--no-drift-correction", flags->no_drift_correction,
                "Fit the measurements as stored, not scaled to the drift reference's median level");
  OnRun(cmd, result, [flags]() -> Status {
    StoreFitRequest request;
    request.correct_drift = !flags->no_drift_correction;
    request.db = flags->db.empty() ? DefaultStorePath() : flags->db;
    request.filter.backend = flags->backend;
    if (flags->threads > 0) request.filter.threads = flags->threads;
    if (!flags->precision.empty()) request.filter.precision = flags->precision;
    if (!flags->device.empty()) request.filter.device = flags->device;
    request.options = flags->options;
    {  // The pack says how models are planned for it: as the backend is registered (a backend this
       // latte does not run, such as an imported table's, takes the file's layout).
      BackendRegistry registry;
      RegisterBuiltinBackends(registry);
      SetBackendTraits(registry.Find(flags->backend), request);
    }
    if (!flags->fusion_rules.empty()) {
      if (auto rules = FusionRules::FromKinds(flags->fusion_rules); !rules.ok()) {
        return rules.status().WithContext("--fusion-rules");
      }
      request.fusion_rules = flags->fusion_rules;
    }
    request.command = "latte fit --db " + MaskPassword(request.db) + " --backend " + flags->backend +
                      (flags->device.empty() ? "" : " --device " + flags->device) +
                      (flags->threads > 0 ? " --num-threads " + std::to_string(flags->threads) : "") +
                      (flags->precision.empty() ? "" : " --precision " + flags->precision) +
                      (flags->no_drift_correction ? " --no-drift-correction" : "");
    if (!flags->fusion_rules.empty()) {
      request.command += " --fusion-rules ";
      for (std::size_t i = 0; i < flags->fusion_rules.size(); ++i) request.command += (i ? "," : "") + flags->fusion_rules[i];
    }
    request.command += " -o " + flags->output;
    // Before the fit, which can take minutes.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->output, /*required=*/true));
    auto fit = FitFromStore(request);
    if (!fit.ok()) {
      return fit.status();
    }
    std::cout << FitReportText(*fit, flags->options.folds);
    if (Status saved = fit->fit.pack.Save(flags->output); !saved.ok()) {
      return saved;
    }
    std::cout << "wrote " << flags->output << " (" << fit->fit.pack.kinds.size() << " kernel kinds)\n";
    return Status::Ok();
  });
}

}  // namespace latte::cli
