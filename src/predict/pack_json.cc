#include "predict/pack_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace latte {
namespace {

constexpr int kMaxDepth = 256;

// Where a value sits, as far as packing cares: the array named "trees", one of its elements, or
// one of that element's number arrays.
enum class Place { kOther, kTrees, kTree, kTreeNumbers };

// RFC 3629's well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), as
// nlohmann's lexer accepts it.
bool IsUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  auto in = [](unsigned char c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; };
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    if (in(c, 0xC2, 0xDF)) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (in(c, 0xE1, 0xEC) || in(c, 0xEE, 0xEF)) n = 3;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (in(c, 0xF1, 0xF3)) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return false;
    if (static_cast<std::size_t>(end - p) < n || !in(p[1], lo, hi)) return false;
    for (std::size_t i = 2; i < n; ++i)
      if (!in(p[i], 0x80, 0xBF)) return false;
    p += n;
  }
  return true;
}

void AppendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

template <typename T>
nlohmann::json Pack(const std::vector<T>& values, std::uint64_t subtype) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return nlohmann::json::binary(std::move(bytes), subtype);
}

template <typename T>
std::optional<std::vector<T>> Unpack(const nlohmann::json& value, std::uint64_t subtype) {
  if (!value.is_binary()) return std::nullopt;
  const nlohmann::json::binary_t& bytes = value.get_binary();
  if (!bytes.has_subtype() || bytes.subtype() != subtype || bytes.size() % sizeof(T) != 0) return std::nullopt;
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

class Reader {
 public:
  explicit Reader(std::string_view text) : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  Status Read(nlohmann::json& out) {
    SkipSpace();
    LATTE_RETURN_IF_ERROR(Value(out, Place::kOther, 0));
    SkipSpace();
    if (p_ != end_) return Fail("text after the JSON value");
    return Status::Ok();
  }

 private:
  // A JSON number's text at p_ (RFC 8259's grammar), without consuming it.
  struct NumberToken {
    const char* end = nullptr;  // null: not a number
    bool integer = true;        // no fraction, no exponent
  };

  Status Fail(std::string_view what) const {
    return InvalidInput(fmt::format("not valid JSON: {} at byte {}", what, p_ - begin_));
  }

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  NumberToken ScanNumber() const {
    const char* q = p_;
    NumberToken token;
    if (q < end_ && *q == '-') ++q;
    if (q == end_ || !Digit(*q)) return token;
    if (*q == '0') ++q;
    else
      while (q < end_ && Digit(*q)) ++q;
    if (q < end_ && *q == '.') {
      token.integer = false;
      ++q;
      if (q == end_ || !Digit(*q)) return token;
      while (q < end_ && Digit(*q)) ++q;
    }
    if (q < end_ && (*q == 'e' || *q == 'E')) {
      token.integer = false;
      ++q;
      if (q < end_ && (*q == '+' || *q == '-')) ++q;
      if (q == end_ || !Digit(*q)) return token;
      while (q < end_ && Digit(*q)) ++q;
    }
    token.end = q;
    return token;
  }

  // A double as strtod gives it: from_chars, and where that reports out of range, strtod (which
  // gives 0 for an underflow; an overflow gives inf, refused by the caller as nlohmann does).
  static double ToDouble(const char* begin, const char* end) {
    double value = 0;
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc() && ptr == end) return value;
    const std::string copy(begin, end);
    return std::strtod(copy.c_str(), nullptr);
  }

  Status Number(nlohmann::json& out) {
    const NumberToken token = ScanNumber();
    if (token.end == nullptr) return Fail("not a value");
    if (token.integer) {
      // Integers as nlohmann keeps them: unsigned when not negative, signed when negative, and a
      // double when they overflow 64 bits.
      if (*p_ == '-') {
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(p_, token.end, v);
        if (ec == std::errc() && ptr == token.end) {
          out = v;
          p_ = token.end;
          return Status::Ok();
        }
      } else {
        std::uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(p_, token.end, v);
        if (ec == std::errc() && ptr == token.end) {
          out = v;
          p_ = token.end;
          return Status::Ok();
        }
      }
    }
    const double v = ToDouble(p_, token.end);
    if (!std::isfinite(v)) return Fail("number overflow");
    out = v;
    p_ = token.end;
    return Status::Ok();
  }

  // "[n, n, ...]" of numbers all integers (int64) or all with a fraction or exponent, packed; false
  // (nothing consumed) for anything else, which the generic path then reads or refuses.
  bool PackedArray(nlohmann::json& out) {
    const char* const start = p_;
    std::vector<std::int64_t> integers;
    std::vector<double> doubles;
    ++p_;
    SkipSpace();
    if (p_ < end_ && *p_ == ']') {
      p_ = start;
      return false;
    }
    while (true) {
      SkipSpace();
      const NumberToken token = ScanNumber();
      if (token.end == nullptr || (token.integer ? !doubles.empty() : !integers.empty())) break;
      if (token.integer) {
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(p_, token.end, v);
        if (ec != std::errc() || ptr != token.end) break;
        integers.push_back(v);
      } else {
        const double v = ToDouble(p_, token.end);
        if (!std::isfinite(v)) break;
        doubles.push_back(v);
      }
      p_ = token.end;
      SkipSpace();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        out = integers.empty() ? Pack(doubles, kPackedDoubles) : Pack(integers, kPackedIntegers);
        return true;
      }
      break;
    }
    p_ = start;
    return false;
  }

  Status String(std::string& out) {
    ++p_;  // the opening quote
    while (true) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) ++p_;
      out.append(run, p_);
      if (p_ == end_) return Fail("unterminated string");
      if (*p_ == '"') {
        ++p_;
        break;
      }
      if (*p_ != '\\') return Fail("control character in a string");
      ++p_;
      if (p_ == end_) return Fail("unterminated string");
      const char escape = *p_++;
      switch (escape) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          LATTE_RETURN_IF_ERROR(Hex4(cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return Fail("lone surrogate in a string");
            p_ += 2;
            std::uint32_t low = 0;
            LATTE_RETURN_IF_ERROR(Hex4(low));
            if (low < 0xDC00 || low > 0xDFFF) return Fail("lone surrogate in a string");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Fail("lone surrogate in a string");
          }
          AppendUtf8(out, cp);
          break;
        }
        default: return Fail("bad escape in a string");
      }
    }
    if (!IsUtf8(out)) return Fail("a string that is not UTF-8");
    return Status::Ok();
  }

  Status Hex4(std::uint32_t& cp) {
    if (end_ - p_ < 4) return Fail("bad \\u escape");
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return Fail("bad \\u escape");
    }
    return Status::Ok();
  }

  Status Literal(std::string_view word, nlohmann::json value, nlohmann::json& out) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return Fail("not a value");
    p_ += word.size();
    out = std::move(value);
    return Status::Ok();
  }

  Status Value(nlohmann::json& out, Place place, int depth) {
    if (depth > kMaxDepth) return Fail("nested deeper than 256 levels");
    if (p_ == end_) return Fail("unexpected end");
    switch (*p_) {
      case '{': return Object(out, place, depth);
      case '[':
        if (place == Place::kTreeNumbers && PackedArray(out)) return Status::Ok();
        return Array(out, place, depth);
      case '"': {
        std::string text;
        LATTE_RETURN_IF_ERROR(String(text));
        out = std::move(text);
        return Status::Ok();
      }
      case 't': return Literal("true", true, out);
      case 'f': return Literal("false", false, out);
      case 'n': return Literal("null", nullptr, out);
      default: return Number(out);
    }
  }

  Status Object(nlohmann::json& out, Place place, int depth) {
    ++p_;
    out = nlohmann::json::object();
    SkipSpace();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      if (p_ == end_ || *p_ != '"') return Fail("expected a key");
      std::string key;
      LATTE_RETURN_IF_ERROR(String(key));
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return Fail("expected ':'");
      ++p_;
      SkipSpace();
      Place child = Place::kOther;
      if (key == "trees") child = Place::kTrees;
      else if (place == Place::kTree && (key == "value" || key == "left" || key == "right" || key == "feature"))
        child = Place::kTreeNumbers;
      nlohmann::json value;
      LATTE_RETURN_IF_ERROR(Value(value, child, depth + 1));
      out[key] = std::move(value);  // a repeated key keeps its last value, as nlohmann's parser
      LATTE_ASSIGN_OR_RETURN(const bool more, More('}', "an object"));
      if (!more) return Status::Ok();
    }
  }

  // After an object's member or an array's element: true past a ',' (another follows), false
  // past `close` (the end).
  Expected<bool> More(char close, const char* in) {
    SkipSpace();
    if (p_ == end_) return Fail(std::string("unexpected end in ") + in);
    if (*p_ == ',' || *p_ == close) return *p_++ == ',';
    return Fail(std::string("expected ',' or '") + close + "'");
  }

  Status Array(nlohmann::json& out, Place place, int depth) {
    ++p_;
    out = nlohmann::json::array();
    SkipSpace();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return Status::Ok();
    }
    const Place child = place == Place::kTrees ? Place::kTree : Place::kOther;
    while (true) {
      SkipSpace();
      nlohmann::json value;
      LATTE_RETURN_IF_ERROR(Value(value, child, depth + 1));
      out.push_back(std::move(value));
      LATTE_ASSIGN_OR_RETURN(const bool more, More(']', "an array"));
      if (!more) return Status::Ok();
    }
  }

  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace

Expected<nlohmann::json> ParsePackJson(std::string_view text) {
  nlohmann::json out;
  Reader reader(text);
  LATTE_RETURN_IF_ERROR(reader.Read(out));
  return out;
}

std::optional<std::vector<std::int64_t>> PackedIntegers(const nlohmann::json& value) {
  return Unpack<std::int64_t>(value, kPackedIntegers);
}

std::optional<std::vector<double>> PackedDoubles(const nlohmann::json& value) {
  return Unpack<double>(value, kPackedDoubles);
}

}  // namespace latte
