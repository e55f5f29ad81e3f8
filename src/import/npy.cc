#include "import/npy.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <string_view>

#include "core/file.h"

namespace latte {
namespace {

// The value of `key` in the header's Python dict literal, as written (up to the next top-level
// comma or the closing brace): "'<f4'", "False", "(2, 3)".
Expected<std::string_view> DictValue(std::string_view header, std::string_view key) {
  std::string quoted(1, '\'');
  quoted.append(key).push_back('\'');
  const std::size_t at = header.find(quoted);
  if (at == std::string_view::npos) return InvalidInput("the .npy header has no '" + std::string(key) + "'");
  std::size_t i = header.find(':', at + quoted.size());
  if (i == std::string_view::npos) return InvalidInput("the .npy header's '" + std::string(key) + "' has no value");
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  std::size_t end = i;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  if (depth != 0 || end == header.size()) return InvalidInput("the .npy header's '" + std::string(key) + "' is not closed");
  return header.substr(i, end - i);
}

Expected<Shape> ParseShapeTuple(std::string_view text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return InvalidInput("the .npy shape is not a tuple");
  Shape shape;
  std::size_t i = 1;
  const std::size_t end = text.size() - 1;
  while (i < end) {
    while (i < end && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= end) break;
    std::int64_t d = 0;
    std::size_t digits = 0;
    while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (d > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return InvalidInput("the .npy shape has a dimension too large");
      d = d * 10 + (text[i] - '0');
      ++i, ++digits;
    }
    if (digits == 0) return InvalidInput("the .npy shape " + std::string(text) + " is not a tuple of sizes");
    shape.push_back(d);
    if (shape.size() > 16) return InvalidInput("the .npy shape has more than 16 dimensions");
  }
  return shape;
}

std::uint32_t ReadLittle(const std::uint8_t* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Expected<NpyArray> ParseNpy(std::span<const std::uint8_t> bytes) {
  static constexpr std::uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return InvalidInput("not a NumPy .npy file (no \\x93NUMPY magic)");
  const int major = bytes[6];
  if (major < 1 || major > 3) return Unsupported(".npy format version " + std::to_string(major) + " (1 to 3 are read)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t start = 8 + length_bytes;
  if (bytes.size() < start) return InvalidInput("the .npy header is truncated");
  const std::size_t header_len = ReadLittle(bytes.data() + 8, static_cast<int>(length_bytes));
  if (header_len > bytes.size() - start) return InvalidInput("the .npy header is truncated (" + std::to_string(header_len) + " bytes announced)");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + start), header_len);

  LATTE_ASSIGN_OR_RETURN(std::string_view descr, DictValue(header, "descr"));
  LATTE_ASSIGN_OR_RETURN(std::string_view order, DictValue(header, "fortran_order"));
  LATTE_ASSIGN_OR_RETURN(std::string_view shape_text, DictValue(header, "shape"));
  std::size_t item = 0;
  if (descr == "'<f4'") item = 4;
  else if (descr == "'<f8'") item = 8;
  else return Unsupported("the .npy array's dtype is " + std::string(descr) + " (float32 '<f4' or float64 '<f8' are read)");
  if (order != "False") return Unsupported("the .npy array is in Fortran order (save it in C order)");
  NpyArray array;
  LATTE_ASSIGN_OR_RETURN(array.shape, ParseShapeTuple(shape_text));

  std::uint64_t count = 1;
  for (std::int64_t d : array.shape) {
    if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d))
      return InvalidInput("the .npy shape's size overflows");
    count *= static_cast<std::uint64_t>(d);
  }
  const std::size_t data_bytes = bytes.size() - start - header_len;
  if (count > data_bytes / item || count * item != data_bytes)
    return InvalidInput("the .npy data has " + std::to_string(data_bytes) + " bytes, but its shape needs " +
                        std::to_string(count) + " values of " + std::to_string(item) + " bytes (truncated or padded file?)");
  const std::uint8_t* data = bytes.data() + start + header_len;
  array.data.resize(static_cast<std::size_t>(count));
  if (item == 4) {
    std::memcpy(array.data.data(), data, data_bytes);
  } else {
    for (std::size_t i = 0; i < array.data.size(); ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      array.data[i] = static_cast<float>(v);
    }
  }
  return array;
}

Expected<NpyArray> ReadNpy(const std::string& path) {
  auto bytes = ReadFileBytes(path, kMaxNpyBytes);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  auto array = ParseNpy(*bytes);
  if (!array.ok()) return array.status().WithContext(path);
  return array;
}

}  // namespace latte
