#pragma once
// IEEE 754 half precision ↔ float conversion (for fp16 weights in model files).

#include <cstdint>

namespace latte {

/// Converts binary16 bits to float exactly (normals, subnormals, inf, nan).
float HalfToFloat(std::uint16_t bits);
/// Converts float to binary16 bits, rounding to nearest even.
std::uint16_t FloatToHalf(float value);

}  // namespace latte
