#pragma once
// A profiling campaign: every sampled kernel built into a one-kernel graph, run on a backend
// under the measurement protocol, and handed to listeners (store writer, progress report). A
// fixed reference kernel is measured at intervals so that drift of the machine shows in the
// data. The campaign stops cleanly when its budget is spent or it is asked to stop; kernels
// listed as done (a resumed campaign) are skipped.
//
// This header deliberately includes neither the store nor the backend registry (see store_writer.h).

#include <atomic>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/progress.h"
#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel.h"
#include "run/backend.h"
#include "run/measure.h"

namespace latte {

class BackendRegistry;

/// What a campaign is about to do, for listeners that set themselves up.
struct CampaignStart {
  std::string backend;          // name, as given
  std::string backend_version;  // Backend::Version() of that backend
  RunOptions run;
  std::size_t planned = 0;       // kernels in the sample
  std::size_t already_done = 0;  // of those, done in an earlier run of the same campaign
};

/// How a campaign ended.
struct CampaignSummary {
  std::size_t planned = 0;
  std::size_t already_done = 0;  // skipped: measured or unsupported in an earlier run
  std::size_t measured = 0;      // in this run
  std::size_t unsupported = 0;   // in this run
  std::size_t remaining = 0;     // not reached (budget spent or stopped)
  std::size_t references = 0;    // readings of the reference kernel
  std::string reference_error;   // why the reference kernel could not be measured, if it could not
  bool budget_spent = false;
  bool interrupted = false;      // the stop flag was raised
  bool complete() const { return remaining == 0; }
};

/// Receives a campaign's results as they happen. A failing listener (a locked store) stops the
/// campaign with its Status: nothing is measured that cannot be kept.
class MeasurementListener {
 public:
  virtual ~MeasurementListener() = default;
  virtual Status OnStart(const CampaignStart& start) { return Status::Ok(); }
  virtual Status OnMeasured(const Kernel& kernel, const Measurement& measurement) = 0;
  virtual Status OnUnsupported(const Kernel& kernel, std::string_view why) = 0;
  /// One kernel of the campaign's list is done: measured, refused, or at int8 every part of it
  /// (LoweredKernels) measured or refused; after its OnMeasured / OnUnsupported calls.
  virtual Status OnKernelDone(const Kernel& kernel) { return Status::Ok(); }
  /// A reading of the reference kernel (drift detection).
  virtual Status OnReference(const Kernel& kernel, const Measurement& measurement) { return Status::Ok(); }
  virtual Status OnFinish(const CampaignSummary& summary) { return Status::Ok(); }
};

/// The protocol's settings for small kernels: short runs, a few re-measurements at most.
MeasureOptions KernelMeasureOptions();

/// The drift reference: conv2d 3×3, 32→32 channels, 28×28, stride 1, SAME, bias.
Kernel ReferenceKernel();

struct CampaignOptions {
  std::string backend = "xnnpack";
  RunOptions run;
  MeasureOptions measure = KernelMeasureOptions();
  double budget_secs = 0;             // 0 = no budget
  Kernel reference = ReferenceKernel();
  std::size_t reference_every = 100;  // kernels between reference readings (also at start and end); 0 = never
  const std::atomic<bool>* stop = nullptr;  // raised by a signal handler: stop after the current kernel
  SecondsClock clock = SteadySeconds;       // for the budget (injected in tests)
};

/// Prepares `graph` on `backend` (every node; no fallback) and measures whole runs of it.
Expected<Measurement> MeasureGraph(const Graph& graph, const std::string& backend, const BackendRegistry& registry,
                                   const RunOptions& run, const MeasureOptions& measure);

/// Builds `kernel`'s graph, prepares it on `backend` and measures it. kUnsupported (with the
/// backend's reason) when the backend cannot run it; kInvalidInput for impossible params.
/// A backend that runs whole graphs (ONNX Runtime) pays per run a fixed cost that a model pays
/// once, not once a kernel, and wraps a kernel alone in layout changes that a model mostly does
/// without: its times are taken without them (WholeGraphRunCostUs subtracted, then the layout
/// changes' share of the run, from a few profiled runs, taken off).
Expected<Measurement> MeasureKernel(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                    const RunOptions& run, const MeasureOptions& measure);

/// What a model lowered to run.precision makes of `kernel` on `backend`, as a prediction lowers
/// a model (PlanGraphOnBackend). At int8 (LowerPlanToInt8Uncalibrated): its int8 form (dtype
/// int8) with the quantize and dequantize at its edges, or the kernel itself where the backend
/// keeps it fp32; an elementwise add, sub or mul lowered to int8 also gives its fp32 self: a
/// model's real scales can keep it fp32 (XNNPACK's limits on the ratios of its scales, which a
/// run's calibration meets on a third of a detector's adds), and then the pack must predict it at
/// fp32. At bf16 (LowerPlanToBf16): its bf16 form (dtype bf16) with the casts from and to float32
/// at its edges. A kernel already lowered (int8 or bf16, a conversion, an edge cast) is itself.
/// At --precision int8 or bf16 a campaign measures these in place of each kernel it samples
/// (MeasureLoweredKernels), and MeasureKernel measures each alone in its key's dtype (a
/// conversion or a lowered kernel without the conversions around it: the share of a lowered run
/// its entries take).
Expected<std::vector<Kernel>> LoweredKernels(const Kernel& kernel, const std::string& backend,
                                             const BackendRegistry& registry, const RunOptions& run);

/// A part of a lowered model's kernel and its measurement, or why it has none.
struct MeasuredPart {
  Kernel kernel;
  Expected<Measurement> measurement;
};

/// At --precision int8 or bf16, the parts of `kernel` (LoweredKernels) that `wanted` says yes
/// to, each with its measurement as MeasureKernel would take it, in the same order. The lowered
/// form and the conversions at its edges come from one lowered run of the kernel's graph, each
/// the share of it its nodes took (the run's entries checked node for node against the plan the
/// parts come from): a conversion timed as a model runs it, beside a lowered neighbour, costs no
/// run of its own. A part kept fp32, an add's fp32 self, and every part of a run whose scales
/// planned it otherwise are measured alone. Fails as LoweredKernels does.
Expected<std::vector<MeasuredPart>> MeasureLoweredKernels(const Kernel& kernel, const std::function<bool(const Kernel&)>& wanted,
                                                          const std::string& backend, const BackendRegistry& registry,
                                                          const RunOptions& run, const MeasureOptions& measure);

/// What one run of a whole-graph backend (Executor::RunsWholeGraph) costs besides its nodes: the
/// call into it, binding inputs and outputs. Measured once per process for each backend and
/// thread count, as 2·T(one node) − T(two nodes) over tiny relu chains run alternately, in blocks
/// (RunCostFromBlocks); 0 for a backend that runs single nodes (Latte's executor: a kernel alone
/// is what a model runs).
Expected<double> WholeGraphRunCostUs(const std::string& backend, const BackendRegistry& registry, const RunOptions& run);

/// The run cost from blocks of alternating runs, each block's (median one-node time, median
/// two-node time) in microseconds: the median over blocks of 2·one − two, each never below 0, so
/// that one block the host disturbed does not set it (0 with no blocks).
double RunCostFromBlocks(const std::vector<std::pair<double, double>>& blocks);

/// `m` with every time t made (t − run_cost_us) · (1 − layout_share), never below 0, and its
/// stats summarized again: a whole-graph backend's kernel alone, as MeasureKernel takes it.
Measurement WithoutRunCosts(Measurement m, double run_cost_us, double layout_share);

/// Runs the campaign over `kernels` in order, skipping keys in `done`. A kernel that cannot be
/// built or run is reported to OnUnsupported with the reason (never retried by a resumed
/// campaign, never a silent gap). Fails for an unknown backend, bad options or a failing listener.
Expected<CampaignSummary> RunCampaign(const std::vector<Kernel>& kernels, const std::set<std::string>& done,
                                      const CampaignOptions& options, const BackendRegistry& registry,
                                      const std::vector<MeasurementListener*>& listeners);

/// A listener that drives a Progress report (items = the campaign's kernels done; the note counts
/// what was unsupported, int8 parts included).
class ProgressListener : public MeasurementListener {
 public:
  explicit ProgressListener(Progress& progress) : progress_(progress) {}
  Status OnStart(const CampaignStart& start) override;
  Status OnMeasured(const Kernel&, const Measurement&) override { return Status::Ok(); }  // OnKernelDone counts
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override;
  Status OnKernelDone(const Kernel& kernel) override;
  Status OnFinish(const CampaignSummary& summary) override;

 private:
  Progress& progress_;
  std::size_t unsupported_ = 0;
};

}  // namespace latte
