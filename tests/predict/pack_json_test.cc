// ParsePackJson gives what nlohmann::json::parse gives, refuses what it refuses, and packs only the
// trees' number arrays; a pack read through it is the pack nlohmann's DOM gives, byte for byte.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/file.h"
#include "core/gzip.h"
#include "predict/pack.h"
#include "predict/pack_json.h"
#include "predict/predictor.h"

namespace latte {
namespace {

TEST(PackJson, SameValuesAndNumberTypesAsNlohmann) {
  const std::vector<std::string> documents = {
      "0", "-0", "17", "-17", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
      "-9223372036854775809", "0.5", "-1.25e3", "1E-400", "2.2250738585072014e-308", "4.9e-324",
      "1.7976931348623157e308", "0.1000000000000000055511151231257827", "true", "false", "null", "\"\"",
      R"("a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00 é €")", "[]", "{}", " \n\t[1, 2.5, \"x\", [], {}] ",
      R"({"b": 1, "a": [true, null], "b": 2})",  // a repeated key keeps its last value
      R"({"trees": [], "value": [1, 2], "left": [0.5]})",  // not inside a tree: plain arrays
      R"({"trees": [{"value": [], "left": [1, 0.5], "right": ["x"], "feature": [18446744073709551615]}]})",
  };
  for (const std::string& text : documents) {
    const nlohmann::json expected = nlohmann::json::parse(text);
    Expected<nlohmann::json> got = ParsePackJson(text);
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().message();
    EXPECT_EQ(*got, expected) << text;
    EXPECT_EQ(got->dump(), expected.dump()) << text;  // number types too (unsigned, signed, float)
  }
}

TEST(PackJson, RefusesWhatNlohmannRefuses) {
  const std::vector<std::string> documents = {
      "", " ", "[", "]", "{", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{1:2}", "01", "1.", ".5", "+1",
      "-", "1e", "1e+", "nul", "tru", "[1 2]", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
      "\"\\ud800\\u0041\"", "\"a\tb\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "1e400",
      "-1e400", "[1] x", "{\"trees\": [{\"value\": [1, 2,]}]}", "{\"trees\": [{\"left\": [1 2]}]}",
      "{\"trees\": [{\"value\": [1e999]}]}", "NaN", "Infinity"};
  for (const std::string& text : documents) {
    EXPECT_FALSE(nlohmann::json::accept(text)) << "nlohmann accepts " << text;
    Expected<nlohmann::json> got = ParsePackJson(text);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().message().rfind("not valid JSON: ", 0), 0u) << got.status().message();
  }
  // Nesting a hostile file could use to exhaust the stack is refused, saying so.
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  Expected<nlohmann::json> got = ParsePackJson(deep);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("nested deeper than 256 levels"), std::string::npos);
  EXPECT_TRUE(ParsePackJson(std::string(200, '[') + std::string(200, ']')).ok());
}

TEST(PackJson, PacksTheTreesNumberArrays) {
  const std::string text =
      R"({"trees": [{"value": [0.5, -1.25e3, 3.0], "left": [1, -1, -1], "right": [2, -1, -1], "feature": [0, 0, 0],)"
      R"( "other": [1, 2]}], "value": [1, 2]})";
  Expected<nlohmann::json> got = ParsePackJson(text);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const nlohmann::json& tree = got->at("trees").at(0);
  ASSERT_TRUE(tree.at("value").is_binary());
  EXPECT_EQ(PackedDoubles(tree.at("value")), (std::vector<double>{0.5, -1250, 3}));
  EXPECT_EQ(PackedIntegers(tree.at("left")), (std::vector<std::int64_t>{1, -1, -1}));
  EXPECT_FALSE(PackedIntegers(tree.at("value")));
  EXPECT_TRUE(tree.at("other").is_array());
  EXPECT_TRUE(got->at("value").is_array());

  // Read as the same arrays would be, refusals included, in the same words.
  const nlohmann::json plain = nlohmann::json::parse(text).at("trees").at(0);
  for (const char* key : {"value", "left", "right", "feature"}) {
    Expected<std::vector<float>> a = JsonFloats(tree.at(key), "x"), b = JsonFloats(plain.at(key), "x");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
    for (auto [lo, hi] : {std::pair<std::int64_t, std::int64_t>{-1, 10}, {0, 10}}) {
      Expected<std::vector<std::int64_t>> c = JsonIntegers(tree.at(key), "x", lo, hi);
      Expected<std::vector<std::int64_t>> d = JsonIntegers(plain.at(key), "x", lo, hi);
      ASSERT_EQ(c.ok(), d.ok()) << key;
      if (c.ok()) EXPECT_EQ(*c, *d);
      else EXPECT_EQ(c.status().message(), d.status().message());
    }
  }
  // A float too large for a float is refused as from the array.
  Expected<nlohmann::json> huge = ParsePackJson(R"({"trees": [{"value": [1e300]}]})");
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(JsonFloats(huge->at("trees").at(0).at("value"), "x").status().message(),
            JsonFloats(nlohmann::json::parse("[1e300]"), "x").status().message());
}

// `json` with every packed array turned back into the JSON array it was read from.
nlohmann::json Unpacked(const nlohmann::json& json) {
  if (auto integers = PackedIntegers(json)) return *integers;
  if (auto doubles = PackedDoubles(json)) return *doubles;
  if (json.is_array() || json.is_object()) {
    nlohmann::json out = json;
    for (auto& item : out) item = Unpacked(item);
    return out;
  }
  return json;
}

// Thousands of damaged variants of a tree ensemble's text (bytes flipped, inserted, dropped, cut
// short): ParsePackJson accepts exactly what nlohmann accepts, and reads the same values.
TEST(PackJson, AgreesWithNlohmannOnDamagedText) {
  const std::string good =
      R"({"params": ["ic", "oc"], "base_score": -1.5, "trees": [{"value": [0.25, -3.5e-2, 1.0, 7E3],)"
      R"( "left": [1, -1, -1, 0], "right": [2, -1, -1, 0], "feature": [0, 1, 2, 3]}, {"value": [1.5],)"
      R"( "left": [-1], "right": [-1], "feature": [0]}], "name": "gbdt \u00e9é", "n": 18446744073709551615})";
  const std::string alphabet = "{}[]\",:.-+eE0123456789 tfnulÃ©ÿ";
  std::mt19937 rng(7);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = good;
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: text.erase(at, 1); break;
        default: text.resize(at); break;
      }
      if (text.empty()) break;
    }
    const bool nlohmann_accepts = nlohmann::json::accept(text);
    Expected<nlohmann::json> got = ParsePackJson(text);
    ASSERT_EQ(got.ok(), nlohmann_accepts) << text << (got.ok() ? "" : ": " + got.status().message());
    if (got.ok()) {
      ++accepted;
      EXPECT_EQ(Unpacked(*got), nlohmann::json::parse(text)) << text;
    }
  }
  EXPECT_GT(accepted, 500);  // the comparison saw values, not only refusals
}

// The shipped oneDNN pack (the smaller one) read through ParsePackJson is the pack nlohmann's DOM
// gives: the same text when written again.
TEST(PackJson, ShippedPackReadsAsThroughNlohmann) {
  const std::string path = std::string(LATTE_SOURCE_DIR) + "/data/packs/onednn-1thread-fp32.json.gz";
  Expected<std::vector<std::uint8_t>> bytes = ReadFileBytes(path, Pack::kMaxPackBytes);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Expected<std::string> text = Gunzip(*bytes, Pack::kMaxPackBytes);
  ASSERT_TRUE(text.ok());
  Expected<Pack> through_nlohmann = Pack::FromJson(nlohmann::json::parse(*text));
  Expected<Pack> loaded = Pack::Load(path);
  ASSERT_TRUE(through_nlohmann.ok() && loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->Dump(), through_nlohmann->Dump());
}

}  // namespace
}  // namespace latte
