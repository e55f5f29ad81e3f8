#include "profile/fusion.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "core/stats.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "ir/shape_inference.h"
#include "profile/space.h"
#include "run/backend_registry.h"

namespace latte {
namespace {

Kernel Fc(std::int64_t k, std::int64_t n, std::int64_t rows = 1) {
  Kernel kernel;
  kernel.op = OpKind::kFullyConnected;
  WriteParams(FullyConnectedKernelParams{rows, k, n, 1}, kernel);
  return kernel;
}

Kernel SameShapeBinary(OpKind op, std::int64_t h, std::int64_t w, std::int64_t c) {
  Kernel kernel;
  kernel.op = op;
  WriteParams(BinaryKernelParams{{1, h, w, c}, {1, h, w, c}}, kernel);
  return kernel;
}

// One kernel's medians and half-spreads over the rounds.
struct KernelTimings {
  std::vector<double> p50, half_spread;
  void Add(const Measurement& m) {
    p50.push_back(m.stats.p50);
    half_spread.push_back((m.stats.p90 - m.stats.p10) / 2);
  }
  double MedianP50() const { return Median(p50); }
  double MedianHalfSpread() const { return Median(half_spread); }
};

}  // namespace

std::vector<std::string> DefaultFusionChains() {
  return {"conv2d+relu",           "conv2d+relu6",           "conv2d+add",           "conv2d+add+relu",
          "depthwise_conv2d+relu", "depthwise_conv2d+relu6", "fully_connected+relu", "add+relu",
          "fully_connected+gelu",  "matmul+add"};
}

Expected<std::vector<Kernel>> FusionShapes(const std::string& chain_kind) {
  LATTE_ASSIGN_OR_RETURN(Kernel kind, ParseKindAlias(chain_kind));
  if (kind.fused.empty()) return InvalidInput("fusion chain '" + chain_kind + "' has a single op");
  std::vector<Kernel> shapes;
  switch (kind.op) {
    case OpKind::kConv2D:
      shapes = {ConvKernel(kind.op, 28, 28, 32, 32, 3, 1), ConvKernel(kind.op, 14, 14, 64, 64, 1, 1),
                ConvKernel(kind.op, 56, 56, 16, 16, 3, 1)};
      break;
    case OpKind::kDepthwiseConv2D:
      shapes = {ConvKernel(kind.op, 56, 56, 32, 32, 3, 1), ConvKernel(kind.op, 28, 28, 64, 64, 3, 1),
                ConvKernel(kind.op, 14, 14, 128, 128, 3, 1)};
      break;
    case OpKind::kFullyConnected:
      // A gelu follows a transformer's MLP projection: rows of a sequence, 4× wider out.
      if (kind.fused[0] == OpKind::kGelu) shapes = {Fc(128, 512, 64), Fc(192, 768, 197), Fc(256, 1024, 128)};
      else shapes = {Fc(256, 256), Fc(1024, 1024), Fc(64, 512)};
      break;
    case OpKind::kMatMul: {
      // Attention's scores, to which a mask is added: heads of [seq, head_dim] × [head_dim, seq].
      for (const auto& [heads, seq, head_dim] : {std::array<std::int64_t, 3>{4, 128, 64}, {3, 197, 64}, {8, 64, 32}}) {
        Kernel scores;
        scores.op = OpKind::kMatMul;
        WriteParams(MatMulKernelParams{heads, seq, head_dim, seq}, scores);
        shapes.push_back(scores);
      }
      break;
    }
    case OpKind::kAdd: case OpKind::kMul: case OpKind::kSub:
      shapes = {SameShapeBinary(kind.op, 28, 28, 32), SameShapeBinary(kind.op, 56, 56, 16),
                SameShapeBinary(kind.op, 14, 14, 128)};
      break;
    default: {
      // Any other main op: three points spread over its default grid.
      Kernel main;
      main.op = kind.op;
      LATTE_ASSIGN_OR_RETURN(std::vector<Kernel> grid, GridKernels(main, "default"));
      for (std::size_t i : {grid.size() / 4, grid.size() / 2, grid.size() * 3 / 4}) shapes.push_back(grid[i]);
    }
  }
  for (Kernel& shape : shapes) shape.fused = kind.fused;
  return shapes;
}

Expected<Graph> BuildChainGraph(const Kernel& chain) {
  Kernel main = chain;
  main.fused.clear();
  LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(main));
  if (graph.outputs.size() != 1) return Internal("the one-kernel graph of " + main.Kind() + " has several outputs");
  TensorId previous = graph.outputs[0];
  for (std::size_t i = 0; i < chain.fused.size(); ++i) {
    const OpKind op = chain.fused[i];
    Node node;
    node.kind = op;
    node.name = fmt::format("fused{}_{}", i, OpName(op));
    node.inputs = {previous};
    if (OpCategoryOf(op) == OpCategory::kElementwise) {  // a binary op's other operand: same shape
      Tensor other;
      other.name = node.name + "_other";
      other.shape = graph.tensor(previous).shape;
      other.shape_known = true;
      const TensorId id = graph.AddTensor(std::move(other));
      graph.inputs.push_back(id);
      node.inputs.push_back(id);
    }
    Tensor out;
    out.name = node.name + "_out";
    previous = graph.AddTensor(std::move(out));
    node.outputs = {previous};
    graph.AddNode(std::move(node));
  }
  graph.outputs = {previous};
  LATTE_RETURN_IF_ERROR(InferShapes(graph));
  LATTE_RETURN_IF_ERROR(graph.Validate());
  return graph;
}

void DecideFusion(FusionEvidence& evidence, double alpha) {
  double sum = 0, cheapest = 0;
  for (std::size_t i = 0; i < evidence.parts_us.size(); ++i) {
    sum += evidence.parts_us[i];
    cheapest = i == 0 ? evidence.parts_us[i] : std::min(cheapest, evidence.parts_us[i]);
  }
  evidence.saving_us = sum - evidence.together_us;
  // A saving within twice the noise proves nothing: alpha grows to cover it.
  evidence.alpha = cheapest > 0 ? std::max(alpha, 2 * evidence.noise_us / cheapest) : alpha;
  evidence.fused = cheapest > 0 && evidence.saving_us > evidence.alpha * cheapest;
  const double followers = evidence.parts_us.empty() ? 0 : sum - evidence.parts_us[0];
  if (cheapest <= 0 || evidence.alpha >= 1) {
    // The noise exceeds the cheapest op: no saving could be told apart from it.
    evidence.verdict = "inconclusive: noise";
    evidence.fused = false;
  } else if (evidence.saving_us > followers + 2 * evidence.noise_us) {
    // Fusion can at most save the followers' whole time: more means the machine drifted.
    evidence.verdict = "inconclusive: drift";
    evidence.fused = false;
  } else {
    evidence.verdict = evidence.fused ? "fused" : "separate";
  }
}

namespace {

// `rounds` more interleaved rounds of a chain's parts and the chain itself, added to `timings` (one
// per node, then the chain). "" or what stopped a measurement.
Expected<std::string> MeasureChainRounds(const Graph& graph, const Kernel& chain, const CampaignOptions& c,
                                         const BackendRegistry& registry, int rounds,
                                         std::vector<KernelTimings>& timings) {
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t node = 0; node <= graph.num_nodes(); ++node) {
      Expected<Measurement> m = Status(StatusCode::kInternal, "unset");
      if (node < graph.num_nodes()) {
        auto part = KernelOfNodes(graph, {static_cast<NodeId>(node)});
        if (!part.ok()) return part.status().WithContext(chain.Key());
        m = MeasureKernel(*part, c.backend, registry, c.run, c.measure);
        if (!m.ok()) return part->Kind() + " alone: " + m.status().message();
      } else {
        m = MeasureGraph(graph, c.backend, registry, c.run, c.measure);
        if (!m.ok()) return "the chain: " + m.status().message();
      }
      timings[node].Add(*m);
    }
  }
  return std::string();
}

}  // namespace

Expected<FusionReport> DetectFusion(const FusionOptions& options, const BackendRegistry& registry, std::ostream& log) {
  LATTE_RETURN_IF_ERROR(options.campaign.measure.Validate());
  if (!(options.alpha > 0)) return InvalidInput("--alpha must be more than 0");
  if (options.retries < 0) return InvalidInput("fusion retries must be 0 or more");
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend,
                         registry.Create(options.campaign.backend, options.campaign.run));
  const std::vector<std::string> declared = backend->FusedByConstruction();
  backend.reset();
  FusionReport report;
  report.backend = options.campaign.backend;
  report.num_threads = options.campaign.run.num_threads;
  report.alpha = options.alpha;
  report.rules = declared;
  const CampaignOptions& c = options.campaign;
  for (const std::string& chain_kind : options.chains.empty() ? DefaultFusionChains() : options.chains) {
    LATTE_ASSIGN_OR_RETURN(std::vector<Kernel> shapes, FusionShapes(chain_kind));
    FusionDecision decision;
    decision.kind = shapes.front().Kind();
    // A declared rule, conditional or not, is the backend's word: not timed.
    auto rule = std::find_if(declared.begin(), declared.end(),
                             [&](const std::string& r) { return FusionRuleKind(r) == decision.kind; });
    if (rule != declared.end()) {
      decision.fused = decision.declared = true;
      log << "fusion " << decision.kind << ": fused by construction (declared by " << report.backend
          << (*rule != decision.kind ? ", where the graph allows: " + *rule : std::string()) << ")\n";
      report.decisions.push_back(std::move(decision));
      continue;
    }
    for (const Kernel& chain : shapes) {
      if (c.stop != nullptr && c.stop->load()) return report;
      FusionEvidence evidence;
      evidence.chain = chain;
      auto graph = BuildChainGraph(chain);
      if (!graph.ok()) return graph.status().WithContext(chain.Key());
      // Interleaved rounds: parts, chain, parts, chain, ... (medians kept); again while inconclusive.
      std::vector<KernelTimings> timings(graph->num_nodes() + 1);
      std::string why;
      for (int attempt = 0; attempt <= options.retries; ++attempt) {
        if (attempt > 0 && c.stop != nullptr && c.stop->load()) return report;
        LATTE_ASSIGN_OR_RETURN(why, MeasureChainRounds(*graph, chain, c, registry, std::max(1, options.rounds), timings));
        if (!why.empty()) break;
        double noise2 = 0;
        evidence.parts_us.clear();
        for (std::size_t node = 0; node < timings.size(); ++node) {
          const double half = timings[node].MedianHalfSpread();
          noise2 += half * half;
          if (node + 1 < timings.size()) evidence.parts_us.push_back(timings[node].MedianP50());
        }
        evidence.together_us = timings.back().MedianP50();
        evidence.noise_us = std::sqrt(noise2);
        DecideFusion(evidence, options.alpha);
        log << fmt::format("fusion {}: parts {:.1f} us, together {:.1f} us, saving {:.1f} us, noise {:.1f} us -> {}{}\n",
                           chain.Key(), evidence.together_us + evidence.saving_us, evidence.together_us,
                           evidence.saving_us, evidence.noise_us, evidence.verdict,
                           attempt > 0 ? fmt::format(" (measured {} times)", attempt + 1) : "");
        if (evidence.verdict.rfind("inconclusive", 0) != 0) break;
      }
      if (!why.empty()) {
        evidence.why_not_measured = why;
        log << "fusion " << chain.Key() << ": not measured: " << why << "\n";
      } else if (evidence.verdict.rfind("inconclusive", 0) == 0) {
        ++decision.shapes_inconclusive;
      } else {
        ++decision.shapes_measured;
        decision.shapes_fused += evidence.fused ? 1 : 0;
      }
      decision.evidence.push_back(std::move(evidence));
    }
    // One conclusive shape is an anecdote: a decision needs at least two.
    decision.fused = decision.shapes_measured >= 2 && 2 * decision.shapes_fused > decision.shapes_measured;
    if (decision.fused) report.rules.push_back(decision.kind);
    report.decisions.push_back(std::move(decision));
  }
  return report;
}

}  // namespace latte
