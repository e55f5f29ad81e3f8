#include "core/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace latte {

Expected<std::vector<std::uint8_t>> ReadFileBytes(const std::string& path, std::uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("no such file");
    return IoError(std::string("cannot stat: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return InvalidInput("is a directory, not a model file");
  if (!S_ISREG(st.st_mode)) return InvalidInput("not a regular file");
  if (st.st_size == 0) return InvalidInput("file is empty (0 bytes)");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return InvalidInput("file is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                        std::to_string(max_bytes));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return IoError(std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = std::fread(bytes.data(), 1, bytes.size(), f);
  bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error || got != bytes.size())
    return IoError("read " + std::to_string(got) + " of " + std::to_string(bytes.size()) + " bytes");
  return bytes;
}

}  // namespace latte
