#pragma once
// Reading whole files with a size limit, so a hostile path (a device, a huge file)
// cannot make Latte allocate without bound.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace latte {

/// Largest model file Latte reads (2 GiB, the protobuf and flatbuffers limit).
inline constexpr std::uint64_t kMaxModelFileBytes = 2ull << 30;

/// Reads `path` whole. Fails with a clear message if it is missing, not a regular file,
/// empty, or larger than `max_bytes`.
Expected<std::vector<std::uint8_t>> ReadFileBytes(const std::string& path,
                                                  std::uint64_t max_bytes = kMaxModelFileBytes);

}  // namespace latte
