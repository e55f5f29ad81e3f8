#include "run/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <span>

#include "run/graph_prep.h"
#include "run/int8_plan.h"

namespace latte {

std::string Placement::BackendFor(const Graph& graph, NodeId node) const {
  if (auto it = by_node.find(node); it != by_node.end()) return it->second;
  if (auto it = by_op_kind.find(graph.node(node).kind); it != by_op_kind.end()) return it->second;
  return default_backend;
}

namespace {

using BackendsByName = std::map<std::string, std::unique_ptr<Backend>>;

// The backends `names` name, each created once, every one of which must run `precision` at all: a
// backend without it says so once, not as its refusal of node after node.
Expected<BackendsByName> BackendsRunning(Precision precision, const std::vector<std::string>& names,
                                         const BackendRegistry& registry, const RunOptions& options) {
  BackendsByName backends;
  for (const std::string& name : names) {
    if (backends.count(name) != 0) continue;
    LATTE_ASSIGN_OR_RETURN(backends[name], registry.Create(name, options));
    if (Support s = backends[name]->RunsPrecision(precision); !s.ok()) return Unsupported(s.why());
  }
  return backends;
}

}  // namespace

Expected<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, const Placement& placement,
                                                     const BackendRegistry& registry, const RunOptions& options) {
  const auto num_user_nodes = static_cast<NodeId>(graph.num_nodes());
  std::vector<std::string> wanted(graph.num_nodes());
  for (NodeId id = 0; id < num_user_nodes; ++id) wanted[static_cast<size_t>(id)] = placement.BackendFor(graph, id);
  // The graph as it runs (NHWC where the backends need it, clamps folded): the same plan
  // prediction uses, so profile entry k is node k of the plan.
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphForBackends(graph, wanted, registry.NhwcBackendNames()));
  // bf16: activations bfloat16 between nodes, the caller's inputs and outputs float32 (cast nodes
  // inserted at the edges, run by the neighbouring nodes' backend); a node a backend cannot run
  // at bf16 is refused by it, saying why.
  if (options.precision == Precision::kBf16) {
    LATTE_RETURN_IF_ERROR(BackendsRunning(Precision::kBf16, wanted, registry, options).status());
    LowerPlanToBf16(plan);
  }
  if (options.precision == Precision::kInt8) return CreateInt8(graph, std::move(plan), wanted, placement, registry, options);
  return Build(graph, std::move(plan), wanted, placement, registry, options, nullptr, nullptr);
}

Expected<std::unique_ptr<Executor>> Executor::Build(const Graph& graph, GraphPlan plan, const std::vector<std::string>& wanted,
                                                    const Placement& placement, const BackendRegistry& registry,
                                                    const RunOptions& options, const Int8State* int8, NodeId* refused,
                                                    bool node_by_node) {
  const std::vector<std::vector<NodeId>> sources = std::move(plan.sources);

  // Buffers come after every node said yes: a node no backend runs (an opaque op, whose
  // output shape may be unknown) is reported as such, not as a buffer without a shape.
  std::unique_ptr<Executor> executor(new Executor(std::move(plan.graph), TensorBuffers{}));
  const Graph& run_graph = executor->prepared_graph_;
  auto backend = [&](const std::string& name) -> Expected<Backend*> {
    auto it = executor->backends_.find(name);
    if (it != executor->backends_.end()) return it->second.get();
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> created, registry.Create(name, options));
    Backend* raw = created.get();
    executor->backends_[name] = std::move(created);
    return raw;
  };

  // 3. A whole-model runtime (ort) placed on every node runs the graph as one model.
  Backend* whole = nullptr;
  if (!node_by_node && !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) { return w == wanted[0]; })) {
    LATTE_ASSIGN_OR_RETURN(Backend * b, backend(wanted[0]));
    bool all = b->RunsWholeGraphs();
    for (NodeId k = 0; all && k < static_cast<NodeId>(run_graph.num_nodes()); ++k) all = b->Supports(run_graph, k).ok();
    if (all) whole = b;
  }

  executor->assignments_.assign(graph.num_nodes(), NodeAssignment{});
  for (NodeId k = 0; k < static_cast<NodeId>(run_graph.num_nodes()); ++k) {
    const std::vector<NodeId>& from = sources[static_cast<size_t>(k)];
    const Node& node = run_graph.node(k);
    ProfileEntry entry;
    entry.sources = from;
    entry.inserted = from.empty();
    entry.name = entry.inserted ? node.name : graph.node(from[0]).name;
    for (NodeId src : from) {
      if (!entry.op.empty()) entry.op += "+";
      entry.op += NodeOpName(graph.node(src));
    }
    if (entry.inserted) entry.op = NodeOpName(node);
    const std::string what =
        entry.inserted ? "inserted node '" + node.name + "' (" + entry.op + ")" : DescribeNode(graph, from[0]);

    NodeAssignment assignment;
    Backend* chosen = nullptr;
    Support support = Support::No("no backend");
    if (entry.inserted) {
      const std::vector<std::string> candidates = InsertedNodeBackends(run_graph, sources, wanted, k, placement.default_backend);
      for (const std::string& name : candidates) {
        LATTE_ASSIGN_OR_RETURN(Backend * b, backend(name));
        support = b->Supports(run_graph, k);
        if (support.ok()) {
          assignment.backend = name, chosen = b;
          break;
        }
      }
      if (chosen == nullptr) assignment.backend = candidates[0];
    } else {
      assignment.backend = wanted[static_cast<size_t>(from[0])];
      LATTE_ASSIGN_OR_RETURN(chosen, backend(assignment.backend));
      support = chosen->Supports(run_graph, k);
    }
    if (!support.ok()) {
      if (placement.fallback.empty() || placement.fallback == assignment.backend)
        return Unsupported(what + ": " + assignment.backend + " cannot run it: " + support.why());
      LATTE_ASSIGN_OR_RETURN(Backend * fallback, backend(placement.fallback));
      Support second = fallback->Supports(run_graph, k);
      if (!second.ok())
        return Unsupported(what + ": neither " + assignment.backend + " (" + support.why() + ") nor " + placement.fallback +
                           " (" + second.why() + ") can run it");
      assignment.fell_back = true;
      assignment.why = support.why();
      assignment.backend = placement.fallback;
      chosen = fallback;
    }
    // Which precision the node computes in (at int8, per node of the fp32 plan it runs).
    assignment.precision = options.precision == Precision::kInt8 ? Precision::kFp32 : options.precision;
    const NodeId plan_node = int8 != nullptr ? int8->from[static_cast<size_t>(k)] : -1;
    if (int8 != nullptr && (plan_node < 0 || int8->choice.int8[static_cast<size_t>(plan_node)])) assignment.precision = Precision::kInt8;
    if (plan_node >= 0 && !int8->choice.int8[static_cast<size_t>(plan_node)])
      assignment.precision_why = int8->choice.kept_why[static_cast<size_t>(plan_node)];
    if (whole == nullptr) {
      auto ready = chosen->Prepare(run_graph, k);
      if (!ready.ok()) {
        if (refused != nullptr && plan_node >= 0 && assignment.precision == Precision::kInt8 &&
            ready.status().code() == StatusCode::kUnsupported)
          *refused = plan_node;
        return ready.status().WithContext(what + " on " + assignment.backend);
      }
      executor->prepared_.push_back(std::move(ready).value());
    }
    entry.backend = assignment.backend;
    entry.precision = assignment.precision;
    for (NodeId src : from) executor->assignments_[static_cast<size_t>(src)] = assignment;
    executor->entries_.push_back(std::move(entry));
  }
  if (whole != nullptr) {
    auto ready = whole->PrepareGraph(run_graph);
    if (!ready.ok()) return ready.status().WithContext("the whole graph on " + wanted[0]);
    executor->whole_graph_ = std::move(ready).value();
  }
  LATTE_ASSIGN_OR_RETURN(executor->buffers_, TensorBuffers::Allocate(run_graph));
  return executor;
}

Status Executor::RunObserving(const std::function<void(NodeId)>& after) {
  if (whole_graph_) return Unsupported("a whole-graph backend's intermediate activations cannot be observed");
  for (size_t i = 0; i < prepared_.size(); ++i) {
    Status s = prepared_[i]->Run(buffers_);
    if (!s.ok()) return s.WithContext("'" + entries_[i].name + "' (" + entries_[i].op + ") on " + entries_[i].backend);
    after(static_cast<NodeId>(i));
  }
  return Status::Ok();
}

namespace {

// One calibration run's inputs: graph input → its values (in the caller's arrays, not copied).
using CalibrationSample = std::vector<std::pair<TensorId, std::span<const float>>>;

// --calibration-data split into runs: each float input's array holds one tensor of its shape, or
// several along a first axis (of an input whose first dimension is 1, the array's first axis may
// count them instead); every input the same number. Empty without calibration data.
Expected<std::vector<CalibrationSample>> CalibrationSamples(const Graph& graph, const CalibrationInputs* calibration) {
  std::vector<CalibrationSample> samples;
  if (calibration == nullptr || calibration->arrays.empty()) return samples;
  std::set<std::string> used;
  std::string first;  // the input that set the count, for messages
  for (TensorId id : graph.inputs) {
    const Tensor& t = graph.tensor(id);
    auto it = calibration->arrays.find(t.name);
    if (t.dtype != DataType::kFloat32) {
      if (it != calibration->arrays.end())
        return InvalidInput("--calibration-data: input '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + ", not float32");
      continue;  // integer inputs (indices, masks) are generated as at fp32
    }
    if (it == calibration->arrays.end())
      return InvalidInput("--calibration-data gives no samples of input '" + t.name + "' (" + ShapeToString(t.shape) + ")");
    used.insert(t.name);
    const CalibrationInputs::Array& a = it->second;
    const std::int64_t size = t.num_elements().value_or(-1);
    if (size <= 0) return InvalidInput("--calibration-data: input '" + t.name + "' has no known size");
    const auto tail_equal = [&](std::size_t from_array, std::size_t from_input) {
      return a.shape.size() - from_array == t.shape.size() - from_input &&
             std::equal(a.shape.begin() + static_cast<std::ptrdiff_t>(from_array), a.shape.end(),
                        t.shape.begin() + static_cast<std::ptrdiff_t>(from_input));
    };
    std::int64_t count = 0;
    if (a.shape == t.shape) count = 1;
    else if (a.shape.size() == t.shape.size() + 1 && tail_equal(1, 0)) count = a.shape[0];
    else if (!t.shape.empty() && t.shape[0] == 1 && a.shape.size() == t.shape.size() && tail_equal(1, 1)) count = a.shape[0];
    if (count <= 0 || static_cast<std::int64_t>(a.data.size()) != count * size)
      return InvalidInput(a.source + ": shape " + ShapeToString(a.shape) + " holds no samples of input '" + t.name + "' (" +
                          ShapeToString(t.shape) + "): give " + ShapeToString(t.shape) + " or Nx" + ShapeToString(t.shape));
    if (samples.empty()) {
      samples.resize(static_cast<std::size_t>(count));
      first = t.name;
    } else if (samples.size() != static_cast<std::size_t>(count)) {
      return InvalidInput("--calibration-data: input '" + first + "' has " + std::to_string(samples.size()) +
                          " samples but '" + t.name + "' has " + std::to_string(count));
    }
    for (std::int64_t s = 0; s < count; ++s) {
      samples[static_cast<std::size_t>(s)].emplace_back(
          id, std::span<const float>(a.data).subspan(static_cast<std::size_t>(s * size), static_cast<std::size_t>(size)));
    }
  }
  for (const auto& [name, array] : calibration->arrays)
    if (!used.count(name)) return InvalidInput("--calibration-data names '" + name + "', which is no float input of the model");
  return samples;
}

}  // namespace

Expected<std::unique_ptr<Executor>> Executor::CreateInt8(const Graph& graph, GraphPlan plan, const std::vector<std::string>& wanted,
                                                         const Placement& placement, const BackendRegistry& registry,
                                                         const RunOptions& options) {
  // Every backend the run may use must have int8 kernels at all; a node it cannot run in int8 is
  // then its own answer (kept at fp32, saying why).
  std::vector<std::string> names;
  for (std::size_t i = 0; i < wanted.size(); ++i)
    if (placement.fp32_nodes.count(static_cast<NodeId>(i)) == 0) names.push_back(wanted[i]);
  if (!placement.fallback.empty()) names.push_back(placement.fallback);
  LATTE_ASSIGN_OR_RETURN(BackendsByName backends, BackendsRunning(Precision::kInt8, names, registry, options));
  // Calibration: the activations' ranges over a few fp32 runs of the same plan (same tensor ids),
  // node by node (a whole-graph backend's activations are not seen otherwise).
  RunOptions fp32 = options;
  fp32.precision = Precision::kFp32;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> reference,
                         Build(graph, plan, wanted, placement, registry, fp32, nullptr, nullptr, /*node_by_node=*/true));
  LATTE_ASSIGN_OR_RETURN(std::vector<CalibrationSample> samples, CalibrationSamples(graph, options.calibration.get()));
  const Graph& planned = reference->prepared_graph();
  ActivationRanges ranges(planned.num_tensors());
  auto observe = [&](TensorId t) {
    if (planned.tensor(t).dtype != DataType::kFloat32 || planned.tensor(t).is_constant()) return;
    const float* v = reference->buffers_.as<float>(t);
    if (v == nullptr) return;
    for (size_t i = 0, n = reference->buffers_.bytes(t) / sizeof(float); i < n; ++i) ranges[static_cast<size_t>(t)].Add(v[i]);
  };
  const int runs = samples.empty() ? kInt8CalibrationRuns : static_cast<int>(samples.size());
  for (int run = 1; run <= runs; ++run) {
    FillRandomInputs(graph, reference->buffers_, static_cast<unsigned>(run));  // integer inputs too
    if (!samples.empty())
      for (const auto& [input, values] : samples[static_cast<size_t>(run - 1)])
        std::memcpy(reference->buffers_.mutable_data(input), values.data(), values.size_bytes());
    for (TensorId t : planned.inputs) observe(t);
    LATTE_RETURN_IF_ERROR(reference->RunObserving([&](NodeId k) {
      for (TensorId t : planned.node(k).outputs) observe(t);
    }).WithContext("calibrating int8 on fp32 runs"));
  }
  reference.reset();

  // Every node that can be lowered tries int8; each one its backend refuses stays fp32 with the
  // backend's reason, and the plan is lowered again (its neighbours' conversions change).
  Int8State state;
  state.choice = Int8Choice::Eligible(plan.graph);
  if (!placement.fp32_nodes.empty()) {
    std::vector<bool> user_fp32(graph.num_nodes(), false);
    for (NodeId n : placement.fp32_nodes)
      if (n >= 0 && static_cast<std::size_t>(n) < user_fp32.size()) user_fp32[static_cast<std::size_t>(n)] = true;
    KeepUserNodesFp32(plan, user_fp32, state.choice);
  }
  // A plan node's backend: its user node's, or for a node the plan inserted (a layout transpose)
  // the first its neighbours suggest.
  auto supports = [&](NodeId k, const Graph& lowered, NodeId j) -> Expected<Support> {
    const std::vector<NodeId>& from = plan.sources[static_cast<size_t>(k)];
    const std::string name = from.empty() ? InsertedNodeBackends(plan.graph, plan.sources, wanted, k, placement.default_backend)[0]
                                          : wanted[static_cast<size_t>(from[0])];
    if (backends.count(name) == 0) {
      LATTE_ASSIGN_OR_RETURN(backends[name], registry.Create(name, options));
    }
    return backends[name]->Supports(lowered, j);
  };
  for (size_t attempt = 0; attempt <= plan.graph.num_nodes(); ++attempt) {
    LATTE_ASSIGN_OR_RETURN(Int8Plan lowered, SettleInt8Plan(plan, ranges, supports, state.choice));
    state.from = lowered.from;
    NodeId refused = -1;
    auto built = Build(graph, std::move(lowered.plan), wanted, placement, registry, options, &state, &refused);
    if (built.ok()) {
      Int8Calibration& calibration = (*built)->int8_calibration_;
      calibration.runs = runs;
      calibration.inputs = "generated inputs";
      if (!samples.empty()) {
        std::string sources;
        for (const auto& [name, array] : options.calibration->arrays) sources += (sources.empty() ? "" : ", ") + name + ": " + array.source;
        calibration.inputs = "--calibration-data (" + sources + ")";
      }
    }
    if (built.ok() || refused < 0) return built;
    // Its backend refused the int8 operator when creating it (a conv's scale limits).
    state.choice.int8[static_cast<size_t>(refused)] = false;
    state.choice.kept_why[static_cast<size_t>(refused)] = built.status().message();
  }
  return Internal("int8 lowering did not settle");
}

namespace {

// `plan` lowered with one scale for every activation, from `choice` (what may run int8), each
// int8 node asked its backend's Supports. Fills fp32_why.
Expected<GraphPlan> LowerUncalibrated(const GraphPlan& plan, const std::string& backend, const BackendRegistry& registry,
                                      RunOptions options, Int8Choice choice) {
  options.precision = Precision::kInt8;
  LATTE_ASSIGN_OR_RETURN(BackendsByName backends, BackendsRunning(Precision::kInt8, {backend}, registry, options));
  auto supports = [&](NodeId, const Graph& lowered, NodeId j) -> Expected<Support> {
    return backends.at(backend)->Supports(lowered, j);
  };
  // No ranges: every activation gets Int8ParamsFor's parameters of a tensor never seen.
  LATTE_ASSIGN_OR_RETURN(Int8Plan lowered, SettleInt8Plan(plan, ActivationRanges{}, supports, choice));
  GraphPlan out = std::move(lowered.plan);
  for (NodeId k : lowered.from) out.fp32_why.push_back(k < 0 ? "" : choice.kept_why[static_cast<size_t>(k)]);
  return out;
}

}  // namespace

Expected<GraphPlan> LowerPlanToInt8Uncalibrated(const GraphPlan& plan, const std::string& backend,
                                                const BackendRegistry& registry, RunOptions options) {
  return LowerUncalibrated(plan, backend, registry, std::move(options), Int8Choice::Eligible(plan.graph));
}

Expected<GraphPlan> LowerPlanToInt8AsRun(const GraphPlan& plan, const std::string& backend, const BackendRegistry& registry,
                                         RunOptions options, const std::vector<ProfileEntry>& entries) {
  std::set<NodeId> ran_fp32;  // the user's nodes the run kept fp32
  for (const ProfileEntry& entry : entries)
    if (!entry.inserted && entry.precision != Precision::kInt8) ran_fp32.insert(entry.sources.begin(), entry.sources.end());
  Int8Choice choice = Int8Choice::Eligible(plan.graph);
  for (std::size_t k = 0; k < plan.graph.num_nodes(); ++k) {
    if (!choice.int8[k]) continue;
    for (NodeId user : plan.sources[k])
      if (ran_fp32.count(user)) {
        choice.int8[k] = false;
        choice.kept_why[k] = kKeptFp32ByRun;
      }
  }
  LATTE_ASSIGN_OR_RETURN(GraphPlan as_run, LowerUncalibrated(plan, backend, registry, std::move(options), std::move(choice)));
  LATTE_RETURN_IF_ERROR(CheckRunMatchesInt8Plan(as_run, entries));
  return as_run;
}

Expected<GraphPlan> PlanGraphOnBackend(const Graph& graph, const std::string& backend, const BackendRegistry& registry,
                                       const RunOptions& run) {
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphForBackends(graph, std::vector<std::string>(graph.num_nodes(), backend),
                                                              registry.NhwcBackendNames()));
  if (run.precision == Precision::kBf16) LowerPlanToBf16(plan);
  if (run.precision != Precision::kInt8) return plan;
  return LowerPlanToInt8Uncalibrated(plan, backend, registry, run);
}

Status CheckRunMatchesInt8Plan(const GraphPlan& plan, const std::vector<ProfileEntry>& entries) {
  for (std::size_t k = 0; k < entries.size() && k < plan.graph.num_nodes() && k < plan.fp32_why.size(); ++k) {
    const bool planned_int8 = plan.fp32_why[k].empty(), ran_int8 = entries[k].precision == Precision::kInt8;
    if (planned_int8 != ran_int8)
      return Unsupported("'" + entries[k].name + "' (" + entries[k].op + ") ran " + (ran_int8 ? "int8" : "fp32") +
                         " but the uncalibrated plan lowered it " + (planned_int8 ? "to int8" : "at fp32") +
                         " (the run's calibrated scales decided otherwise): the two cannot be compared layer by layer");
  }
  if (entries.size() != plan.graph.num_nodes() || plan.fp32_why.size() != plan.graph.num_nodes())
    return Unsupported("the int8 run has " + std::to_string(entries.size()) + " nodes, the uncalibrated plan " +
                       std::to_string(plan.graph.num_nodes()) + " (the run's calibrated scales kept other nodes at fp32)");
  return Status::Ok();
}

Status Executor::Run() {
  if (whole_graph_) return whole_graph_->Run(buffers_).WithContext("the whole graph on " + entries_.at(0).backend);
  for (size_t i = 0; i < prepared_.size(); ++i) {
    Status s = prepared_[i]->Run(buffers_);
    if (!s.ok()) return s.WithContext("'" + entries_[i].name + "' (" + entries_[i].op + ") on " + entries_[i].backend);
  }
  return Status::Ok();
}

Status Executor::RunProfiled(std::vector<double>& entry_us, LayoutUs* layout) {
  if (whole_graph_) {
    entry_us.resize(entries_.size(), 0.0);  // the prepared graph's node ids are the entries' indices
    LayoutUs unwanted;  // the backend adds to what it is given
    Status s = whole_graph_->RunProfiled(buffers_, entry_us, layout != nullptr ? *layout : unwanted);
    return s.WithContext("the whole graph on " + entries_.at(0).backend);
  }
  entry_us.resize(prepared_.size(), 0.0);
  for (size_t i = 0; i < prepared_.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status s = prepared_[i]->Run(buffers_);
    entry_us[i] += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) return s.WithContext("'" + entries_[i].name + "' (" + entries_[i].op + ") on " + entries_[i].backend);
  }
  return Status::Ok();
}

std::vector<std::string> Executor::BackendVersions() const {
  std::vector<std::string> out;
  for (const auto& [name, backend] : backends_) out.push_back(name + " " + backend->Version());
  return out;
}

namespace {

// The indices an integer input may hold: [0, n) when every node reading it is a gather reading it
// as its indices (n: the smallest gathered axis); 1 (zeros only) otherwise.
std::int64_t IndexRange(const Graph& graph, TensorId id) {
  std::int64_t range = 0;
  for (NodeId c : graph.Consumers(id)) {
    const Node& node = graph.node(c);
    if (node.kind != OpKind::kGather || node.input(1) != id || node.input(0) == kNoTensor) return 1;
    const Tensor& data = graph.tensor(node.inputs[0]);
    const auto rank = static_cast<std::int64_t>(data.shape.size());
    std::int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (!data.fully_known() || axis < 0 || axis >= rank) return 1;
    const std::int64_t n = data.shape[static_cast<size_t>(axis)];
    range = range == 0 ? n : std::min(range, n);
  }
  return std::max<std::int64_t>(range, 1);
}

}  // namespace

void FillRandomInputs(const Graph& graph, TensorBuffers& buffers, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (TensorId id : graph.inputs) {
    std::uint8_t* data = buffers.mutable_data(id);
    if (data == nullptr) continue;
    const DataType dtype = graph.tensor(id).dtype;
    if (dtype == DataType::kBool) {  // a where's condition, a logic op's operand: both values
      for (size_t i = 0; i < buffers.bytes(id); ++i) data[i] = static_cast<std::uint8_t>(rng() & 1);
      continue;
    }
    if (dtype == DataType::kInt64 || dtype == DataType::kInt32) {  // indices within what they index
      std::uniform_int_distribution<std::int64_t> index(0, IndexRange(graph, id) - 1);
      if (dtype == DataType::kInt64) {
        auto* values = reinterpret_cast<std::int64_t*>(data);
        for (size_t i = 0; i < buffers.bytes(id) / sizeof(std::int64_t); ++i) values[i] = index(rng);
      } else {
        auto* values = reinterpret_cast<std::int32_t*>(data);
        for (size_t i = 0; i < buffers.bytes(id) / sizeof(std::int32_t); ++i) values[i] = static_cast<std::int32_t>(index(rng));
      }
      continue;
    }
    if (dtype != DataType::kFloat32) {
      std::memset(data, 0, buffers.bytes(id));
      continue;
    }
    auto* values = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < buffers.bytes(id) / sizeof(float); ++i) values[i] = uniform(rng);
  }
}

}  // namespace latte
