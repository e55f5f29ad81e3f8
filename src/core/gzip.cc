#include "core/gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace latte {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // zlib: 15-bit window, gzip wrapper
constexpr std::size_t kChunk = 1 << 16;

}  // namespace

bool LooksGzipped(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// libdeflate decompresses a whole buffer about twice as fast as zlib's stream (0.3 s of the shipped
// pack's 63 MB): sized by the gzip trailer's ISIZE, it answers only a well-formed single stream that
// fits; anything else (damaged, truncated, larger than the cap, an ISIZE that lies) goes to zlib,
// whose answer and message stand.
std::optional<std::string> GunzipWhole(std::span<const std::uint8_t> bytes, std::size_t max_bytes) {
  if (bytes.size() < 18) return std::nullopt;  // a gzip header and trailer
  const std::uint8_t* trailer = bytes.data() + bytes.size() - 4;
  const std::size_t isize = std::size_t{trailer[0]} | std::size_t{trailer[1]} << 8 | std::size_t{trailer[2]} << 16 |
                            std::size_t{trailer[3]} << 24;
  // DEFLATE expands at most 1032:1, so a small file cannot make this allocate much whatever it claims.
  if (isize > max_bytes || isize > bytes.size() * 1032) return std::nullopt;
  struct Free {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
  };
  std::unique_ptr<libdeflate_decompressor, Free> decompressor(libdeflate_alloc_decompressor());
  if (decompressor == nullptr) return std::nullopt;
  std::string out(isize, '\0');
  std::size_t written = 0;
  if (libdeflate_gzip_decompress(decompressor.get(), bytes.data(), bytes.size(), out.data(), out.size(), &written) !=
          LIBDEFLATE_SUCCESS ||
      written != isize) {
    return std::nullopt;
  }
  return out;
}

Expected<std::string> Gunzip(std::span<const std::uint8_t> bytes, std::size_t max_bytes) {
  if (std::optional<std::string> whole = GunzipWhole(bytes, max_bytes)) return std::move(*whole);
  z_stream stream{};
  if (inflateInit2(&stream, kGzipWindowBits) != Z_OK) return Internal("zlib: inflateInit2 failed");
  stream.next_in = const_cast<Bytef*>(bytes.data());
  stream.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() >= max_bytes) {
      inflateEnd(&stream);
      return InvalidInput("gzip data decompresses to more than " + std::to_string(max_bytes >> 20) + " MiB");
    }
    const std::size_t old = out.size();
    const std::size_t grow = std::min(kChunk, max_bytes - old);
    out.resize(old + grow);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    stream.avail_out = static_cast<uInt>(grow);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.resize(old + grow - stream.avail_out);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK) {
      inflateEnd(&stream);
      return InvalidInput(std::string("damaged gzip data (") + (stream.msg != nullptr ? stream.msg : "zlib error") + ")");
    }
    if (stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      return InvalidInput("truncated gzip data");
    }
  }
  inflateEnd(&stream);
  return out;
}

Expected<std::string> Gzip(std::string_view text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("zlib: deflateInit2 failed");
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(out.size() - stream.avail_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return Internal("zlib: deflate did not finish");
  return out;
}

}  // namespace latte
