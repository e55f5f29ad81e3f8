#pragma once
// NumPy .npy arrays (what `numpy.save` writes): the input tensors a user hands Latte, such as the
// samples `--calibration-data` quantizes a model with. Float arrays only (float32, or float64
// converted), little-endian, C order; format versions 1–3.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"

namespace latte {

struct NpyArray {
  Shape shape;              // () for a scalar
  std::vector<float> data;  // row-major, the product of `shape` values
};

/// Largest .npy Latte reads (1 GiB: calibration samples, not datasets).
inline constexpr std::uint64_t kMaxNpyBytes = 1ull << 30;

/// Parses a whole .npy file's bytes. Fails (kInvalidInput or kUnsupported) saying what is wrong:
/// not an .npy, a truncated header or data, a dtype other than float32/float64, Fortran order.
/// Messages do not name the file (ReadNpy adds it).
Expected<NpyArray> ParseNpy(std::span<const std::uint8_t> bytes);

/// Reads and parses `path`; errors name it.
Expected<NpyArray> ReadNpy(const std::string& path);

}  // namespace latte
