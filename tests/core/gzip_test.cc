#include "core/gzip.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace latte {
namespace {

std::vector<std::uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

TEST(Gzip, RoundTripsAndIsDeterministic) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 1000) + ",";
  auto packed = Gzip(text);
  ASSERT_TRUE(packed.ok());
  EXPECT_LT(packed->size(), text.size() / 2);
  EXPECT_TRUE(LooksGzipped(Bytes(*packed)));
  EXPECT_FALSE(LooksGzipped(Bytes(text)));
  EXPECT_EQ(*Gzip(text), *packed);  // no time stamp in the header
  auto unpacked = Gunzip(Bytes(*packed), 1 << 20);
  ASSERT_TRUE(unpacked.ok()) << unpacked.status().message();
  EXPECT_EQ(*unpacked, text);
  auto empty = Gzip("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*Gunzip(Bytes(*empty), 16), "");
}

TEST(Gzip, DamagedTruncatedAndOversizedAreErrors) {
  const std::string text(100000, 'a');
  const std::string packed = *Gzip(text);
  auto truncated = Gunzip(Bytes(packed.substr(0, packed.size() / 2)), 1 << 20);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos) << truncated.status().message();
  std::string flipped = packed;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x5a);
  flipped[flipped.size() - 6] = static_cast<char>(flipped[flipped.size() - 6] ^ 0xff);  // the CRC, at least
  EXPECT_FALSE(Gunzip(Bytes(flipped), 1 << 20).ok());
  // 100 KB of 'a' compresses to ~200 bytes: the cap holds whatever the header claims.
  auto bomb = Gunzip(Bytes(packed), 1000);
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.status().message().find("more than"), std::string::npos) << bomb.status().message();
  EXPECT_FALSE(Gunzip(Bytes("\x1f\x8bnot gzip at all"), 1 << 20).ok());
}

// The trailer's size only sizes the fast whole-buffer try: a stream whose trailer lies, or one
// whose output is exactly the cap, gets the same answer as any other.
TEST(Gzip, TrailerSizeIsOnlyAHint) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + " ";
  const std::string packed = *Gzip(text);
  auto exact = Gunzip(Bytes(packed), text.size());
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  EXPECT_EQ(*exact, text);
  EXPECT_FALSE(Gunzip(Bytes(packed), text.size() - 1).ok());
  for (const std::uint8_t claimed : {0x00, 0x01, 0xff}) {  // ISIZE's high byte: 0, far too small, far too large
    std::string lying = packed;
    lying[lying.size() - 1] = static_cast<char>(claimed);
    if (lying == packed) continue;
    auto got = Gunzip(Bytes(lying), 1 << 20);
    EXPECT_FALSE(got.ok()) << "zlib checks the length too";
  }
  std::string small_claim = packed;  // claims 1 byte
  small_claim.replace(small_claim.size() - 4, 4, std::string("\x01\0\0\0", 4));
  EXPECT_FALSE(Gunzip(Bytes(small_claim), 1 << 20).ok());
}

}  // namespace
}  // namespace latte
