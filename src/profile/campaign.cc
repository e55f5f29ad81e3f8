#include "profile/campaign.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "core/stats.h"
#include "ir/fusion_rules.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "ir/nchwc_layout.h"
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
  return {.warmup_runs = 2, .min_warmup_secs = 0.02, .num_runs = 20, .min_secs = 0.1, .max_secs = 10,
          .max_remeasures = 1};
}

Kernel ReferenceKernel() { return ConvKernel(OpKind::kConv2D, 28, 28, 32, 32, 3, 1); }

namespace {

Expected<std::unique_ptr<Executor>> ExecutorFor(const Graph& graph, const std::string& backend,
                                                const BackendRegistry& registry, const RunOptions& run) {
  Placement placement;
  placement.default_backend = backend;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, Executor::Create(graph, placement, registry, run));
  // An int8 kernel is measured only when all of it runs int8 (quantize and dequantize at its
  // edges included, as a model pays them at a precision boundary); a node kept at fp32 means the
  // backend has no int8 kernel for it.
  if (run.precision == Precision::kInt8)
    for (size_t i = 0; i < executor->assignments().size(); ++i)
      if (const NodeAssignment& a = executor->assignments()[i]; a.precision != Precision::kInt8)
        return Unsupported("int8: " + DescribeNode(graph, static_cast<NodeId>(i)) + " stays fp32: " + a.precision_why);
  FillRandomInputs(graph, executor->buffers());
  return executor;
}

Expected<Measurement> MeasureRuns(Executor& executor, const RunOptions& run, const MeasureOptions& measure) {
  MeasureOptions with_threads = measure;
  with_threads.threads = run.num_threads;
  return Measure([&] { return executor.Run(); }, with_threads);
}

// Profiled runs of a kernel on a whole-graph backend: enough for a stable share, few enough that
// writing the profiler's files stays a small part of a measurement.
constexpr int kLayoutShareRuns = 5;

// A whole-graph backend's kernel measured alone, as a model runs it: without the fixed cost of a
// run, and without the share of the run its layout changes took, or, in a graph with `helpers`
// (nodes that only feed the kernel or read its result, BuildBlockedResidualGraph), the share the
// helpers took: the layout changes there are theirs (the kernel sits between blocked helpers).
Status AsKernelTime(Executor& executor, double run_cost_us, const std::vector<NodeId>& helpers, Measurement& m) {
  std::vector<double> node_us;
  LayoutUs layout;
  for (int i = 0; i < kLayoutShareRuns; ++i) LATTE_RETURN_IF_ERROR(executor.RunProfiled(node_us, &layout));
  double total_us = 0, helper_us = 0;
  for (std::size_t i = 0; i < node_us.size(); ++i) {
    total_us += node_us[i];
    const std::vector<NodeId>& sources = executor.entries().at(i).sources;
    if (std::any_of(sources.begin(), sources.end(),
                    [&](NodeId n) { return std::find(helpers.begin(), helpers.end(), n) != helpers.end(); }))
      helper_us += node_us[i];
  }
  const double removed_us = helpers.empty() ? layout.total() : helper_us;
  m = WithoutRunCosts(std::move(m), run_cost_us, total_us > 0 ? removed_us / total_us : 0.0);
  return Status::Ok();
}

// The graph that measures `kernel` on `backend`: BuildKernelGraph's, with its tensors as the
// backend holds a model's (a backend that keeps the file's layout runs images NCHW:
// WithNchwTensors), or for a residual kind on a backend with an NCHWc pass, one whose residual
// operand that pass holds blocked (so it fuses the add as it does in a model), with the nodes that
// make it so.
Expected<BlockedResidualGraph> MeasuredGraph(const Kernel& kernel, const std::string& backend,
                                             const BackendRegistry& registry) {
  const BackendFactory* factory = registry.Find(backend);
  if (factory != nullptr && factory->nchwc_block > 0 && IsResidualFusion(kernel))
    return BuildBlockedResidualGraph(kernel, factory->nchwc_block);
  const bool nchw = factory != nullptr && !factory->takes_nhwc;
  LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(nchw ? WithNchwTensors(kernel) : kernel));
  return BlockedResidualGraph{std::move(graph), {}};
}

}  // namespace

Measurement WithoutRunCosts(Measurement m, double run_cost_us, double layout_share) {
  const double kept = 1.0 - std::clamp(layout_share, 0.0, 1.0);
  auto without = [&](double us) { return std::max(0.0, us - run_cost_us) * kept; };
  for (double& v : m.samples_us) v = without(v);
  m.first_us = without(m.first_us);
  m.warmup_avg_us = without(m.warmup_avg_us);
  m.stats = Summarize(m.samples_us);
  return m;
}

double RunCostFromBlocks(const std::vector<std::pair<double, double>>& blocks) {
  if (blocks.empty()) return 0;
  std::vector<double> estimates;
  for (const auto& [one_us, two_us] : blocks) estimates.push_back(std::max(0.0, 2 * one_us - two_us));
  return Median(std::move(estimates));
}

Expected<double> WholeGraphRunCostUs(const std::string& backend, const BackendRegistry& registry, const RunOptions& run) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, double> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(backend, run.num_threads);
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::unique_ptr<Executor> chains[2];
  for (int length = 1; length <= 2; ++length) {
    std::vector<JoinedKernel> chain;
    for (int i = 0; i < length; ++i) chain.push_back({NhwcKernel(OpKind::kRelu, 1, 1, 8), {i - 1}});
    LATTE_ASSIGN_OR_RETURN(Graph graph, JoinKernels(chain));
    LATTE_ASSIGN_OR_RETURN(chains[length - 1], ExecutorFor(graph, backend, registry, run));
    if (!chains[length - 1]->RunsWholeGraph()) return known[key] = 0.0;
  }
  // The two chains alternate run by run (which goes first alternating too), so that a host whose
  // speed moves while this measures moves both alike: measured one after the other, a slow phase
  // under the one-node chain once made the cost larger than small kernels' whole runs.
  constexpr int kWarmupRuns = 20, kBlocks = 5, kRunsPerBlock = 100;
  auto timed = [](Executor& executor, std::vector<double>& us) -> Status {
    const auto start = std::chrono::steady_clock::now();
    LATTE_RETURN_IF_ERROR(executor.Run());
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    return Status::Ok();
  };
  std::vector<double> ignored;
  for (int i = 0; i < kWarmupRuns; ++i)
    for (auto& chain : chains) LATTE_RETURN_IF_ERROR(timed(*chain, ignored));
  std::vector<std::pair<double, double>> blocks;
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<double> us[2];
    for (int i = 0; i < kRunsPerBlock; ++i) {
      const int first = i % 2;
      LATTE_RETURN_IF_ERROR(timed(*chains[first], us[first]));
      LATTE_RETURN_IF_ERROR(timed(*chains[1 - first], us[1 - first]));
    }
    blocks.emplace_back(Median(std::move(us[0])), Median(std::move(us[1])));
  }
  return known[key] = RunCostFromBlocks(blocks);
}

namespace {

// The entries of a lowered executor's profile that are one kernel of a model at its precision:
// a conversion the executor inserted, or the user's nodes (the kernel itself).
using EntryFilter = std::function<bool(const std::vector<ProfileEntry>&, std::size_t)>;
bool IsKernelEntry(const std::vector<ProfileEntry>& entries, std::size_t i) { return !entries[i].inserted; }
EntryFilter InsertedEntriesOf(OpKind op) {
  return [name = std::string(OpName(op))](const std::vector<ProfileEntry>& entries, std::size_t i) {
    return entries[i].inserted && entries[i].op == name;
  };
}
// At bf16 the casts at a graph's inputs come before its first node, those at its outputs after
// it (LowerPlanToBf16).
EntryFilter Bf16CastEntries(bool to_bf16) {
  return [to_bf16](const std::vector<ProfileEntry>& entries, std::size_t i) {
    if (!entries[i].inserted || entries[i].op != OpName(OpKind::kCast)) return false;
    const bool before_nodes = std::none_of(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(i),
                                           [](const ProfileEntry& e) { return !e.inserted; });
    return before_nodes == to_bf16;
  };
}

// A lowered executor's run (int8 or bf16) timed whole under the protocol, its fixed run cost (a
// whole-graph backend's, measured on fp32 relus: a backend's int8 may lack them) and each
// entry's time in a few profiled runs: what a part of the run is given as its share.
struct LoweredRun {
  Precision precision = Precision::kInt8;
  Measurement whole;
  double run_cost_us = 0;
  std::vector<double> entry_us;
  double total_us = 0;
  /// The run's time kept in the share `part_us` of its entries took, or kUnsupported for none.
  Expected<Measurement> Share(double part_us) const {
    if (!(part_us > 0) || !(total_us > 0)) return Unsupported(std::string(PrecisionName(precision)) + ": the profile gave the measured part no time");
    return WithoutRunCosts(whole, run_cost_us, 1.0 - part_us / total_us);
  }
};

Expected<LoweredRun> TimeLoweredRun(Executor& executor, const std::string& backend, const BackendRegistry& registry,
                                    const RunOptions& run, const MeasureOptions& measure) {
  LoweredRun timed;
  timed.precision = run.precision;
  LATTE_ASSIGN_OR_RETURN(timed.whole, MeasureRuns(executor, run, measure));
  if (executor.RunsWholeGraph()) {
    RunOptions fp32 = run;
    fp32.precision = Precision::kFp32;
    LATTE_ASSIGN_OR_RETURN(timed.run_cost_us, WholeGraphRunCostUs(backend, registry, fp32));
  }
  for (int i = 0; i < kLayoutShareRuns; ++i) LATTE_RETURN_IF_ERROR(executor.RunProfiled(timed.entry_us));
  for (double us : timed.entry_us) timed.total_us += us;
  return timed;
}

// `graph` (fp32) run at run.precision (int8: every node of it int8), its time kept in the share
// of the entries `keep` selects: a kernel or a conversion as a model runs it, between neighbours
// at that precision, not its own conversions at its edges.
Expected<Measurement> MeasureEntries(const Graph& graph, const EntryFilter& keep, const std::string& backend,
                                     const BackendRegistry& registry, const RunOptions& run, const MeasureOptions& measure) {
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, ExecutorFor(graph, backend, registry, run));
  LATTE_ASSIGN_OR_RETURN(const LoweredRun timed, TimeLoweredRun(*executor, backend, registry, run, measure));
  double kept_us = 0;
  for (std::size_t i = 0; i < timed.entry_us.size(); ++i)
    if (keep(executor->entries(), i)) kept_us += timed.entry_us[i];
  return timed.Share(kept_us);
}

// An fp32 kernel as a model's plan lowers it to run.precision: its graph, that plan, and the plan
// split into kernels (the kernel's own fusion kept, as a model's rules would group it).
struct LoweredForm {
  Graph graph;
  GraphPlan plan;
  KernelGrouping grouping;
};

Expected<LoweredForm> LoweredFormOf(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                    const RunOptions& run) {
  LoweredForm form;
  LATTE_ASSIGN_OR_RETURN(form.graph, BuildKernelGraph(kernel));
  LATTE_ASSIGN_OR_RETURN(form.plan, PlanGraphOnBackend(form.graph, backend, registry, run));
  std::vector<std::string> fused;
  if (!kernel.fused.empty()) fused.push_back(kernel.Kind());
  LATTE_ASSIGN_OR_RETURN(const FusionRules rules, FusionRules::FromKinds(fused));
  LATTE_ASSIGN_OR_RETURN(form.grouping, GroupIntoKernels(form.plan.graph, rules));
  if (!form.grouping.uncovered.empty())
    return Unsupported(std::string(PrecisionName(run.precision)) + ": " + form.grouping.uncovered[0].op + " in the " +
                       std::string(PrecisionName(run.precision)) + " form of " + kernel.Key() + ": " +
                       form.grouping.uncovered[0].why);
  return form;
}

// A cast between float32 and bfloat16: a bf16 graph's edge.
bool IsBf16EdgeCast(const Kernel& k) {
  if (k.op != OpKind::kCast) return false;
  const auto to = static_cast<DataType>(ReadParams<CastKernelParams>(k).to);
  return (k.dtype == DataType::kFloat32 && to == DataType::kBFloat16) ||
         (k.dtype == DataType::kBFloat16 && to == DataType::kFloat32);
}

// A kernel only a run at `precision` times: an int8 kernel or a conversion at int8; at bf16 a
// bf16 kernel or a cast at the edges.
bool IsLoweredPart(const Kernel& k, Precision precision) {
  if (precision == Precision::kBf16) return k.dtype == DataType::kBFloat16 || IsBf16EdgeCast(k);
  return k.dtype == DataType::kInt8 || k.op == OpKind::kQuantize || k.op == OpKind::kDequantize;
}

bool IsInt8Binary(const Kernel& k) {
  return k.dtype == DataType::kInt8 && (k.op == OpKind::kAdd || k.op == OpKind::kSub || k.op == OpKind::kMul);
}

// Whether a run at the plan's precision (its executor's `entries`) ran the plan node for node.
Status CheckRunMatchesPlan(const GraphPlan& plan, const std::vector<ProfileEntry>& entries, Precision precision) {
  if (precision == Precision::kInt8) return CheckRunMatchesInt8Plan(plan, entries);
  if (entries.size() != plan.graph.num_nodes())
    return Unsupported("the run has " + std::to_string(entries.size()) + " nodes, the plan " +
                       std::to_string(plan.graph.num_nodes()));
  return Status::Ok();
}

}  // namespace

Expected<std::vector<Kernel>> LoweredKernels(const Kernel& kernel, const std::string& backend,
                                             const BackendRegistry& registry, const RunOptions& run) {
  if (IsLoweredPart(kernel, run.precision)) return std::vector{kernel};
  LATTE_ASSIGN_OR_RETURN(LoweredForm form, LoweredFormOf(kernel, backend, registry, run));
  std::vector<Kernel> kernels;
  bool int8_binary = false;
  for (KernelGroup& group : form.grouping.kernels) {
    int8_binary |= IsInt8Binary(group.kernel);
    kernels.push_back(std::move(group.kernel));
  }
  if (int8_binary) kernels.push_back(kernel);  // kept fp32 where a model's scales say so
  return kernels;
}

Expected<std::vector<MeasuredPart>> MeasureLoweredKernels(const Kernel& kernel, const std::function<bool(const Kernel&)>& wanted,
                                                          const std::string& backend, const BackendRegistry& registry,
                                                          const RunOptions& run, const MeasureOptions& measure) {
  auto alone = [&](const Kernel& part) { return MeasuredPart{part, MeasureKernel(part, backend, registry, run, measure)}; };
  if (IsLoweredPart(kernel, run.precision)) {
    if (!wanted(kernel)) return std::vector<MeasuredPart>{};
    return std::vector<MeasuredPart>{alone(kernel)};
  }
  LATTE_ASSIGN_OR_RETURN(const LoweredForm form, LoweredFormOf(kernel, backend, registry, run));
  std::vector<const KernelGroup*> parts, shared;  // wanted; those one lowered run of the kernel times
  bool int8_binary = false;
  for (const KernelGroup& group : form.grouping.kernels) {
    int8_binary |= IsInt8Binary(group.kernel);
    if (!wanted(group.kernel)) continue;
    parts.push_back(&group);
    if (IsLoweredPart(group.kernel, run.precision)) shared.push_back(&group);
  }
  // One run of the kernel at the precision under the protocol; each shared part keeps the share
  // of it its nodes took (the run's entries are the plan's nodes, checked node for node).
  std::map<const KernelGroup*, Expected<Measurement>> timed;
  if (!shared.empty()) {
    Expected<std::unique_ptr<Executor>> executor = ExecutorFor(form.graph, backend, registry, run);
    if (executor.ok() && CheckRunMatchesPlan(form.plan, (*executor)->entries(), run.precision).ok()) {
      LATTE_ASSIGN_OR_RETURN(const LoweredRun timed_run, TimeLoweredRun(**executor, backend, registry, run, measure));
      for (const KernelGroup* group : shared) {
        double part_us = 0;
        for (NodeId n : group->nodes) part_us += timed_run.entry_us.at(static_cast<std::size_t>(n));
        timed.emplace(group, timed_run.Share(part_us));
      }
    }
  }
  std::vector<MeasuredPart> measured;
  for (const KernelGroup* group : parts) {
    auto it = timed.find(group);
    measured.push_back(it != timed.end() ? MeasuredPart{group->kernel, std::move(it->second)} : alone(group->kernel));
  }
  if (int8_binary && wanted(kernel)) measured.push_back(alone(kernel));  // kept fp32 where a model's scales say so
  return measured;
}

namespace {

// A quantize or dequantize at int8: the inserted conversion of that kind inside the int8 run of a
// carrier of its shape the backend runs at int8. A relu first (an int8 clamp on XNNPACK and
// oneDNN); then, for a backend without an int8 clamp, a 3×3 max pool of stride 1, which keeps the
// shape (oneDNN's had none before its clamp became a binary maximum: every random network in
// context was skipped at its first quantize, and an int8 pack had no context).
Expected<Measurement> MeasureConversion(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                        const RunOptions& run, const MeasureOptions& measure) {
  const NhwcParams p = ReadParams<NhwcParams>(kernel);
  Kernel relu = NhwcKernel(OpKind::kRelu, p.h, p.w, p.c);
  WriteParams(p, relu);
  std::vector<Kernel> carriers = {relu};
  if (p.n == 1 && p.h > 0 && p.w > 0) carriers.push_back(PoolKernel(OpKind::kMaxPool2D, p.h, p.w, p.c, 3, 1));
  Status first = Status::Ok();
  for (const Kernel& carrier : carriers) {
    LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(carrier));
    Expected<Measurement> m = MeasureEntries(graph, InsertedEntriesOf(kernel.op), backend, registry, run, measure);
    if (m.ok() || m.status().code() != StatusCode::kUnsupported) return m;
    if (first.ok()) first = m.status();
  }
  return first;
}

}  // namespace

Expected<Measurement> MeasureKernel(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                    const RunOptions& run, const MeasureOptions& measure) {
  if (run.precision == Precision::kInt8) {
    // At int8 a kernel is measured as an int8 model runs it, in its key's dtype: an int8 kernel
    // inside its float32 twin's int8 run, a conversion inside the int8 run of a carrier of its
    // shape, and any other kernel at fp32 (a kind the backend keeps fp32 in an int8 model).
    if (kernel.op == OpKind::kQuantize || kernel.op == OpKind::kDequantize) return MeasureConversion(kernel, backend, registry, run, measure);
    if (kernel.dtype == DataType::kInt8) {
      Kernel twin = kernel;
      twin.dtype = DataType::kFloat32;
      LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(twin));
      return MeasureEntries(graph, IsKernelEntry, backend, registry, run, measure);
    }
    RunOptions fp32 = run;
    fp32.precision = Precision::kFp32;
    return MeasureKernel(kernel, backend, registry, fp32, measure);
  }
  if (run.precision == Precision::kBf16) {
    // At bf16 a kernel is measured as a bf16 model runs it: inside a bf16 run of its float32
    // twin, without the casts at the run's edges; a cast at a model's edge inside that of a relu
    // of its shape.
    if (IsBf16EdgeCast(kernel)) {
      const CastKernelParams p = ReadParams<CastKernelParams>(kernel);
      Kernel carrier = NhwcKernel(OpKind::kRelu, p.h, p.w, p.c);
      WriteParams(static_cast<const NhwcParams&>(p), carrier);
      LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(carrier));
      return MeasureEntries(graph, Bf16CastEntries(kernel.dtype == DataType::kFloat32), backend, registry, run, measure);
    }
    Kernel twin = kernel;
    if (twin.dtype == DataType::kBFloat16) twin.dtype = DataType::kFloat32;
    LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(twin));
    return MeasureEntries(graph, IsKernelEntry, backend, registry, run, measure);
  }
  LATTE_ASSIGN_OR_RETURN(BlockedResidualGraph graph, MeasuredGraph(kernel, backend, registry));
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, ExecutorFor(graph.graph, backend, registry, run));
  LATTE_ASSIGN_OR_RETURN(Measurement m, MeasureRuns(*executor, run, measure));
  if (executor->RunsWholeGraph()) {
    LATTE_ASSIGN_OR_RETURN(double run_cost_us, WholeGraphRunCostUs(backend, registry, run));
    LATTE_RETURN_IF_ERROR(AsKernelTime(*executor, run_cost_us, graph.helpers, m));
  }
  return m;
}

Expected<Measurement> MeasureGraph(const Graph& graph, const std::string& backend, const BackendRegistry& registry,
                                   const RunOptions& run, const MeasureOptions& measure) {
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, ExecutorFor(graph, backend, registry, run));
  return MeasureRuns(*executor, run, measure);
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
  if (Support s = backend->RunsPrecision(options.run.precision); !s.ok()) return Unsupported(s.why());
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
  const bool lowered = options.run.precision == Precision::kInt8 || options.run.precision == Precision::kBf16;
  std::set<std::string> parts_seen;  // the parts measured in this run (a shape's quantize recurs)
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
    // At int8 or bf16, what a model at that precision makes of the kernel: its lowered form and
    // the conversions at its edges (at int8 the kernel itself where the backend keeps it fp32);
    // each measured once.
    Expected<std::vector<MeasuredPart>> parts = std::vector<MeasuredPart>{};
    if (lowered) {
      parts = MeasureLoweredKernels(
          kernel, [&](const Kernel& part) { return !done.count(part.Key()) && parts_seen.insert(part.Key()).second; },
          options.backend, registry, options.run, options.measure);
    } else {
      parts->push_back({kernel, MeasureKernel(kernel, options.backend, registry, options.run, options.measure)});
    }
    if (!parts.ok()) {
      ++summary.unsupported;
      const std::string why = WhyNot(parts.status());
      LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnUnsupported(kernel, why); }));
      LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnKernelDone(kernel); }));
      continue;
    }
    for (const MeasuredPart& part : *parts) {
      if (part.measurement.ok()) {
        ++summary.measured;
        LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnMeasured(part.kernel, *part.measurement); }));
      } else {
        ++summary.unsupported;
        const std::string why = WhyNot(part.measurement.status());
        LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnUnsupported(part.kernel, why); }));
      }
    }
    LATTE_RETURN_IF_ERROR(Notify(listeners, [&](MeasurementListener& l) { return l.OnKernelDone(kernel); }));
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

Status ProgressListener::OnUnsupported(const Kernel&, std::string_view) {
  progress_.SetNote(std::to_string(++unsupported_) + " unsupported");
  return Status::Ok();
}

// The bar counts the campaign's kernels (its total), not their int8 or bf16 parts.
Status ProgressListener::OnKernelDone(const Kernel&) {
  progress_.Advance();
  return Status::Ok();
}

Status ProgressListener::OnFinish(const CampaignSummary&) {
  progress_.Finish();
  return Status::Ok();
}

}  // namespace latte
