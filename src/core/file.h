#pragma once
// Reading whole files with a size limit, so a hostile path (a device, a huge file)
// cannot make Latte allocate without bound; writing them whole or not at all.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace latte {

/// Largest model file Latte reads (2 GiB, the protobuf and flatbuffers limit).
inline constexpr std::uint64_t kMaxModelFileBytes = 2ull << 30;

/// Reads `path` whole. Fails with a clear message if it is missing, not a regular file,
/// empty, or larger than `max_bytes`.
Expected<std::vector<std::uint8_t>> ReadFileBytes(const std::string& path,
                                                  std::uint64_t max_bytes = kMaxModelFileBytes);

/// Writes `data` to `path` whole or not at all: into a temporary file beside it, then renamed over
/// it, so a crash, a full disk or a second Ctrl-C never leaves a truncated file where a good one
/// was. A path that exists and is not a regular file (a pipe, /dev/stdout, a symlink) is written
/// in place. Messages do not name the path (callers add it, as for ReadFileBytes).
Status WriteFileAtomically(const std::string& path, std::string_view data);

}  // namespace latte
