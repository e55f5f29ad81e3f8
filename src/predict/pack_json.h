#pragma once
// Reading a pack's JSON text quickly. A calibrated pack is mostly its tree ensembles' number arrays
// (the shipped one: 63 MB of JSON, 11.7 million numbers), and a JSON library that makes one DOM
// node per number spent seconds parsing and freeing them. This reader builds the same
// nlohmann::json as nlohmann::json::parse, except that those arrays arrive packed: one binary
// value per array (PackedNumbers), which JsonFloats and JsonIntegers read as they read an array.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace latte {

/// The binary subtypes of a packed number array: little-endian int64s (every element a JSON
/// integer) or doubles (every element a number with a fraction or an exponent).
inline constexpr std::uint64_t kPackedIntegers = 0x4C49;  // "LI"
inline constexpr std::uint64_t kPackedDoubles = 0x4C44;   // "LD"

/// Parses `text` (one JSON value, whitespace around it) as nlohmann::json::parse does — the same
/// values and number types, strict UTF-8, a repeated key keeping its last value — except that
/// the arrays "value", "left", "right" and "feature" of each element of an array named "trees"
/// are packed when all their elements are integers (that fit an int64) or all are floats;
/// anything else stays a JSON array. Fails with "not valid JSON: what at byte N", and on nesting
/// deeper than 256 levels (a hostile file must not exhaust the stack).
Expected<nlohmann::json> ParsePackJson(std::string_view text);

/// A packed array's integers, or nothing when `value` is not packed integers.
std::optional<std::vector<std::int64_t>> PackedIntegers(const nlohmann::json& value);
/// A packed array's doubles, or nothing when `value` is not packed doubles.
std::optional<std::vector<double>> PackedDoubles(const nlohmann::json& value);

}  // namespace latte
