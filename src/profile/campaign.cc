#include "profile/campaign.h"

#include "ir/kernel_graph.h"
#include "profile/space.h"
#include "run/executor.h"

namespace latte {
namespace {

Status Notify(const std::vector<MeasurementListener*>& listeners, const std::function<Status(MeasurementListener&)>& call) {
  for (MeasurementListener* listener : listeners) LATTE_RETURN_IF_ERROR(call(*listener));
  return Status::Ok();
}

// The reason recorded for a kernel that produced no measurement.
std::string WhyNot(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnsupported: return status.message();
    case StatusCode::kInvalidInput: return "invalid kernel: " + status.message();
    default: return "failed: " + status.message();
  }
}

}  // namespace

MeasureOptions KernelMeasureOptions() {
  MeasureOptions options;
  options.warmup_runs = 2;
  options.min_warmup_secs = 0.02;
  options.num_runs = 20;
  options.min_secs = 0.1;
  options.max_secs = 10;
  options.max_remeasures = 1;
  return options;
}

Kernel ReferenceKernel() { return ConvKernel(OpKind::kConv2D, 28, 28, 32, 32, 3, 1); }

Expected<Measurement> MeasureKernel(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                    const RunOptions& run, const MeasureOptions& measure) {
  LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(kernel));
  return MeasureGraph(graph, backend, registry, run, measure);
}

Expected<Measurement> MeasureGraph(const Graph& graph, const std::string& backend, const BackendRegistry& registry,
                                   const RunOptions& run, const MeasureOptions& measure) {
  Placement placement;
  placement.default_backend = backend;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, Executor::Create(graph, placement, registry, run));
  FillRandomInputs(graph, executor->buffers());
  MeasureOptions with_threads = measure;
  with_threads.threads = run.num_threads;
  return Measure([&] { return executor->Run(); }, with_threads);
}

Expected<CampaignSummary> RunCampaign(const std::vector<Kernel>& kernels, const std::set<std::string>& done,
                                      const CampaignOptions& options, const BackendRegistry& registry,
                                      const std::vector<MeasurementListener*>& listeners) {
  LATTE_RETURN_IF_ERROR(options.measure.Validate());
  if (options.budget_secs < 0) return InvalidInput("the budget must not be negative");
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(options.backend, options.run));

  CampaignSummary summary;
  summary.planned = kernels.size();
  for (const Kernel& kernel : kernels) summary.already_done += done.count(kernel.Key());
  CampaignStart start{options.backend, backend->Version(), options.run, summary.planned, summary.already_done};
  backend.reset();  // each kernel's executor creates its own
  LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnStart(start); }));

  const double started = options.clock();
  auto measure_reference = [&]() -> Status {
    auto reading = MeasureKernel(options.reference, options.backend, registry, options.run, options.measure);
    // The reference is a plain conv most backends run; one that cannot goes without drift
    // readings, which the summary says.
    if (!reading.ok()) {
      summary.reference_error = WhyNot(reading.status());
      return Status::Ok();
    }
    ++summary.references;
    return Notify(listeners, [&](MeasurementListener& l) { return l.OnReference(options.reference, *reading); });
  };
  const bool any_left = summary.already_done < summary.planned;
  if (options.reference_every > 0 && any_left) LATTE_RETURN_IF_ERROR(measure_reference());

  std::size_t since_reference = 0;
  std::size_t index = 0;
  for (; index < kernels.size(); ++index) {
    const Kernel& kernel = kernels[index];
    if (done.count(kernel.Key())) continue;
    if (options.stop != nullptr && options.stop->load()) {
      summary.interrupted = true;
      break;
    }
    if (options.budget_secs > 0 && options.clock() - started >= options.budget_secs) {
      summary.budget_spent = true;
      break;
    }
    auto measurement = MeasureKernel(kernel, options.backend, registry, options.run, options.measure);
    if (measurement.ok()) {
      ++summary.measured;
      LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnMeasured(kernel, *measurement); }));
    } else {
      ++summary.unsupported;
      const std::string why = WhyNot(measurement.status());
      LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnUnsupported(kernel, why); }));
    }
    if (options.reference_every > 0 && ++since_reference >= options.reference_every) {
      since_reference = 0;
      LATTE_RETURN_IF_ERROR(measure_reference());
    }
  }
  for (; index < kernels.size(); ++index) summary.remaining += done.count(kernels[index].Key()) ? 0 : 1;
  if (options.reference_every > 0 && since_reference > 0) LATTE_RETURN_IF_ERROR(measure_reference());
  LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnFinish(summary); }));
  return summary;
}

Status ProgressListener::OnStart(const CampaignStart& start) {
  progress_.SetTotal(start.planned);
  progress_.AddPreviouslyDone(start.already_done);
  return Status::Ok();
}

Status ProgressListener::OnMeasured(const Kernel&, const Measurement&) {
  progress_.Advance();
  return Status::Ok();
}

Status ProgressListener::OnUnsupported(const Kernel&, std::string_view) {
  progress_.SetNote(std::to_string(++unsupported_) + " unsupported");
  progress_.Advance();
  return Status::Ok();
}

Status ProgressListener::OnFinish(const CampaignSummary&) {
  progress_.Finish();
  return Status::Ok();
}

}  // namespace latte
