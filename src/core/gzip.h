#pragma once
// gzip in memory (zlib): shipped predictor packs are JSON compressed with gzip, ~4x smaller.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace latte {

/// True when `bytes` begin with gzip's magic number (1f 8b).
bool LooksGzipped(std::span<const std::uint8_t> bytes);

/// Decompresses a gzip stream. Fails on damaged or truncated input, and when the output would
/// exceed `max_bytes` (a small file must not be able to claim gigabytes).
Expected<std::string> Gunzip(std::span<const std::uint8_t> bytes, std::size_t max_bytes);

/// Compresses `text` as one gzip stream (best compression; no file name or time stamp in the
/// header, so the same text always gives the same bytes).
Expected<std::string> Gzip(std::string_view text);

}  // namespace latte
