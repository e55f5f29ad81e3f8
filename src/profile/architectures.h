#pragma once
// A prior over kernels that looks like real networks: architectures of the families people
// deploy and search over, generated in code at several widths and resolutions, and the kernels
// they run. Real networks use channel counts that are multiples of 8, maps that halve from
// 96–640 (and wide strips of text), expansion ratios of 3–6 and depthwise windows of 3, 5 and 7; a log-uniform box of
// parameters spends most of a calibration on kernels no network has.
//
// Families: MobileNet v1 (width 0.25–1.0), v2 (0.35–1.4, and MnasNet/FBNet-like searched blocks:
// expansion 3/4/6, window 3/5/7 per stage), v3-like (hard-swish and squeeze-and-excite),
// EfficientNet-lite (width and resolution scaled together), ResNet-like (basic and bottleneck
// blocks), RegNet-like (grouped 3×3 bottlenecks, widths on a quantized line), and detector
// backbones at 256–640 with SSD-lite heads, and encoder–decoders for masks and keypoint heatmaps
// (few channels at up to full resolution, the heads' 1–39 outputs), and text recognizers on wide
// strips (32 or 48 rows, 100–320 columns, strides that halve the rows only; MobileNet v3 drawn on
// such strips too, as text-direction classifiers run it). Activations are fused the way the executor folds
// them (relu/relu6 into the conv or add before them); hard-swish, sigmoid and the rest are their
// own kernels, as models run them.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace latte {

/// One drawn architecture: its family and size, and its kernels in the order it runs them.
struct Architecture {
  std::string name;  // "mobilenet_v2 x0.75 @192"
  std::vector<Kernel> kernels;
};

/// The architecture `index` of the prior under `seed`: the same pair always gives the same one.
Architecture DrawArchitecture(std::uint64_t seed, std::uint64_t index);

/// `count` distinct kernels (by key) from architectures drawn in turn (index 0, 1, ...), in a
/// deterministic shuffled order, so that a campaign cut short by its budget has still seen every
/// family and size. Fewer when the prior has fewer (it stops after kMaxArchitectures). With
/// `residual_fusions`, each residual add's conv is drawn also with the add fused into it
/// (conv2d+add, +relu or relu6: ir/fusion_rules' IsResidualFusion); without, the draw is what it always was.
std::vector<Kernel> ArchitectureKernels(std::uint64_t seed, std::size_t count, bool residual_fusions = false);
inline constexpr std::uint64_t kMaxArchitectures = 5'000;

}  // namespace latte
