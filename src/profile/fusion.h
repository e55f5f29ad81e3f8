#pragma once
// Fusion detection: for each op chain a runtime may run as one kernel (conv+relu, conv+add+relu,
// dwconv+relu6, fc+relu, add+relu, ...), measure its ops alone and the chain together, and call
// it fused when the chain saves more than alpha × the cheapest op: T(a) + T(b) − T(ab) >
// alpha · min(T(a), T(b)). The chain is built as separate nodes, as an ONNX model has them; a
// backend that fuses them saves the follower's memory pass. Alpha is raised where the measured
// noise (the runs' p10–p90 spread) is larger than alpha would allow for; where the noise is
// larger than the cheapest op itself, or the saving is larger than the followers could ever
// save (the machine drifted between runs), the shape is inconclusive rather than guessed.
// Parts and chain are measured in interleaved rounds (medians kept) so slow drift hits all alike.

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel.h"
#include "profile/campaign.h"

namespace latte {

class BackendRegistry;

/// One chain at one shape.
struct FusionEvidence {
  Kernel chain;                   // the fused kind with the main op's params
  std::vector<double> parts_us;   // median of each op alone, main op first
  double together_us = 0;         // median of the chain of separate nodes
  double noise_us = 0;            // combined half-spread (p90 − p10) / 2 of all those runs
  double alpha = 0;               // the alpha applied: the requested one, or higher where noise demands
  double saving_us = 0;           // Σ parts − together
  bool fused = false;
  /// "fused", "separate", "inconclusive: noise" or "inconclusive: drift".
  std::string verdict;
  std::string why_not_measured;   // non-empty: this shape could not be measured (and why)
};

/// One chain kind over its shapes: fused when the backend declares it (Backend::FusedByConstruction,
/// nothing timed), else when most conclusive shapes say so (at least two needed).
struct FusionDecision {
  std::string kind;  // "conv2d+relu"
  bool fused = false;
  bool declared = false;  // fused by construction, as the backend declares: not timed
  int shapes_fused = 0;
  int shapes_measured = 0;      // with a conclusive verdict
  int shapes_inconclusive = 0;
  std::vector<FusionEvidence> evidence;
};

struct FusionReport {
  std::string backend;
  int num_threads = 1;
  double alpha = 0.5;
  std::vector<FusionDecision> decisions;
  /// The fused kinds: the FusionRules for this backend (ir/kernel_graph.h), as kind strings.
  std::vector<std::string> rules;
};

struct FusionOptions {
  CampaignOptions campaign;  // backend, threads, measurement settings, stop flag
  double alpha = 0.5;
  int rounds = 3;  // interleaved measurements of parts and chain; medians are kept
  /// A shape whose verdict is inconclusive is measured again (another `rounds` rounds, pooled
  /// with the first) up to this many times, so that a noisy minute does not decide the rules.
  int retries = 2;
  /// Chain kinds to test; empty = DefaultFusionChains().
  std::vector<std::string> chains;
};

/// conv2d+relu, conv2d+relu6, conv2d+add, conv2d+add+relu, depthwise_conv2d+relu,
/// depthwise_conv2d+relu6, fully_connected+relu, add+relu, and a transformer's fully_connected+gelu
/// (an MLP projection with its bias, then gelu) and matmul+add (attention's scores plus a mask)
/// (those a backend declares fused are not timed).
std::vector<std::string> DefaultFusionChains();

/// The test shapes of a chain kind: its main op's params at three sizes, fused ops set.
Expected<std::vector<Kernel>> FusionShapes(const std::string& chain_kind);

/// A runnable graph of `chain`'s ops as separate nodes (main op, then each fused op reading the
/// previous output; an add's other operand a graph input of the same shape).
Expected<Graph> BuildChainGraph(const Kernel& chain);

/// Decides one shape from its timings (exposed for tests): fills alpha, saving_us, fused, verdict.
void DecideFusion(FusionEvidence& evidence, double alpha);

/// Measures every chain the backend does not declare fused (progress lines on `log`) and decides;
/// the rules are the declared kinds and the chains timing found fused. Fails for an unknown
/// backend or bad options; a shape the backend cannot run is kept with why_not_measured.
Expected<FusionReport> DetectFusion(const FusionOptions& options, const BackendRegistry& registry, std::ostream& log);

}  // namespace latte
