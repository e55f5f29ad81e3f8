// NumPy .npy arrays: files as numpy.save writes them (versions 1 and 2, float32 and float64, a
// scalar) read back to their values, and every malformed or unsupported file refused saying why.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "import/npy.h"

namespace latte {
namespace {

using Bytes = std::vector<std::uint8_t>;

// An .npy file as numpy.save lays it out: magic, version, header length, the header dict padded
// with spaces to a multiple of 64 bytes and ended by a newline, then the raw values.
Bytes Npy(const std::string& dict, const void* data, std::size_t bytes, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
  const std::size_t n = header.size();
  out.push_back(static_cast<std::uint8_t>(n & 0xff));
  out.push_back(static_cast<std::uint8_t>((n >> 8) & 0xff));
  if (major != 1) {
    out.push_back(static_cast<std::uint8_t>((n >> 16) & 0xff));
    out.push_back(static_cast<std::uint8_t>((n >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  const auto* p = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + bytes);
  return out;
}

TEST(Npy, ReadsFloat32AndFloat64AsNumpySavesThem) {
  const float f[6] = {0.5f, -1.0f, 2.0f, 3.25f, -4.0f, 1e-3f};
  auto a = ParseNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof f));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->shape, (Shape{2, 3}));
  EXPECT_EQ(a->data, std::vector<float>(f, f + 6));

  const double d[3] = {1.5, -2.25, 1e10};
  auto b = ParseNpy(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof d, 2));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->shape, (Shape{3}));
  EXPECT_EQ(b->data, (std::vector<float>{1.5f, -2.25f, 1e10f}));

  const float s = 7.0f;
  auto scalar = ParseNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", &s, sizeof s));
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->data, std::vector<float>{7.0f});
}

TEST(Npy, MalformedOrUnsupportedFilesAreRefusedSayingWhy) {
  const float f[4] = {1, 2, 3, 4};
  const Bytes good = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", f, sizeof f);
  struct Case {
    Bytes bytes;
    std::string why;
  };
  Bytes truncated_header(good.begin(), good.begin() + 40);
  Bytes truncated_data(good.begin(), good.end() - 3);
  Bytes padded = good;
  padded.push_back(0);
  Bytes version9 = good;
  version9[6] = 9;
  Bytes huge_header = good;
  huge_header[8] = 0xff, huge_header[9] = 0xff;
  const std::vector<Case> cases = {
      {{}, "not a NumPy .npy file"},
      {Bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, "not a NumPy .npy file"},
      {truncated_header, "the .npy header is truncated"},
      {huge_header, "the .npy header is truncated (65535 bytes announced)"},
      {version9, ".npy format version 9"},
      {truncated_data, "the .npy data has 13 bytes, but its shape needs 4 values of 4 bytes"},
      {padded, "the .npy data has 17 bytes, but its shape needs 4 values of 4 bytes"},
      {Npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", f, sizeof f), "dtype is '<i4'"},
      {Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", f, sizeof f), "dtype is '>f4'"},
      {Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", f, sizeof f), "Fortran order"},
      {Npy("{'descr': '<f4', 'fortran_order': False, }", f, sizeof f), "no 'shape'"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, x), }", f, sizeof f), "is not a tuple of sizes"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", f, sizeof f),
       "size overflows"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, }", f, sizeof f), "is not closed"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseNpy(c.bytes);
    ASSERT_FALSE(parsed.ok()) << c.why;
    EXPECT_NE(parsed.status().message().find(c.why), std::string::npos) << parsed.status().message();
  }
  // A file on disk: a missing one names its path.
  auto missing = ReadNpy("/nonexistent/latte-test/x.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/latte-test/x.npy"), std::string::npos) << missing.status().message();
}

}  // namespace
}  // namespace latte
