#include "core/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace latte {

Expected<std::vector<std::uint8_t>> ReadFileBytes(const std::string& path, std::uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("no such file");
    return IoError(std::string("cannot stat: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return InvalidInput("is a directory, not a file");
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

namespace {

Status WriteWhole(const std::string& path, std::string_view data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return IoError(std::string("cannot open for writing: ") + std::strerror(errno));
  const size_t put = std::fwrite(data.data(), 1, data.size(), f);
  const bool failed = put != data.size() || std::fflush(f) != 0;
  const int error = errno;
  if (std::fclose(f) != 0 || failed) {
    return IoError("wrote " + std::to_string(put) + " of " + std::to_string(data.size()) +
                   " bytes: " + std::strerror(failed ? error : errno));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view data) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return WriteWhole(path, data);
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  if (Status written = WriteWhole(temporary, data); !written.ok()) {
    std::remove(temporary.c_str());
    return written;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return IoError(std::string("cannot replace it: ") + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace latte
