#include "import/tflite/flatbuffer_reader.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstring>

namespace latte::tflite {
namespace {

// The verifier's own limit (it asserts on larger buffers); anything past it (external
// buffers of a >2 GiB model) is reached through checked offsets, never through tables.
constexpr std::size_t kMaxVerifiedBytes = FLATBUFFERS_MAX_BUFFER_SIZE - 1;

std::string FieldName(Field field) { return "field '" + std::string(field.name) + "'"; }

// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
std::size_t Utf8Length(const std::string& s, std::size_t i) {
  auto byte = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return byte(k) >= lo && byte(k) <= hi; };
  const unsigned c = byte(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Flatbuffer strings are UTF-8 by definition, and names end up in text and JSON reports:
// bytes that are not valid UTF-8, and control characters, become "\xNN".
std::string CleanText(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8Length(s, i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0 || c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace

FlatReader::FlatReader(std::span<const std::uint8_t> bytes)
    : bytes_(bytes), copy_budget_(2 * std::uint64_t{bytes.size()} + (1u << 16)) {
  const std::size_t size = std::min(bytes.size(), kMaxVerifiedBytes);
  const auto max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 64);
  verifier_ = std::make_unique<flatbuffers::Verifier>(bytes.data(), size, /*max_depth=*/64, max_tables,
                                                      /*check_alignment=*/true);
}

bool FlatReader::TakeCopy(std::uint64_t bytes) {
  if (bytes > copy_budget_) return false;
  copy_budget_ -= bytes;
  return true;
}

FlatReader::~FlatReader() = default;

Expected<FbTable> FlatReader::Root(std::string context) {
  const flatbuffers::uoffset_t offset = verifier_->VerifyOffset(0);
  if (offset == 0) return InvalidInput(context + ": root table offset at byte 0 is out of bounds");
  return OpenTable(offset, std::move(context));
}

Expected<FbTable> FlatReader::OpenTable(std::size_t offset, std::string context) {
  const std::uint8_t* start = bytes_.data() + offset;
  if (!verifier_->VerifyTableStart(start))
    return InvalidInput(context + ": table at byte " + std::to_string(offset) +
                        " is malformed (vtable out of bounds or misaligned, or too many tables)");
  // Fields are verified one by one as they are read; the nesting depth is fixed by the
  // schema, so the verifier's depth count is closed at once.
  verifier_->EndTable();
  return FbTable(this, reinterpret_cast<const flatbuffers::Table*>(start), std::move(context));
}

Status FbTable::Error(Field field, const std::string& what) const {
  return InvalidInput(context_ + ": " + FieldName(field) + " " + what);
}

bool FbTable::Has(Field field) const { return table_ != nullptr && table_->CheckField(field.vtable_offset()); }

template <typename T>
Expected<T> FbTable::Scalar(Field field, T fallback) const {
  if (table_ == nullptr) return fallback;
  if (!table_->VerifyField<T>(*reader_->verifier_, field.vtable_offset(), sizeof(T)))
    return Error(field, "is out of bounds or misaligned");
  return table_->GetField<T>(field.vtable_offset(), fallback);
}

Expected<FbTable> FbTable::Table(Field field, std::string context) const {
  if (!Has(field)) return FbTable();
  if (!table_->VerifyOffset(*reader_->verifier_, field.vtable_offset())) return Error(field, "points outside the file");
  auto* field_at =
      reinterpret_cast<const std::uint8_t*>(table_) + table_->GetOptionalFieldOffset(field.vtable_offset());
  const std::size_t target = static_cast<std::size_t>(field_at - reader_->bytes_.data()) +
                             flatbuffers::ReadScalar<flatbuffers::uoffset_t>(field_at);
  return reader_->OpenTable(target, std::move(context));
}

Expected<const std::uint8_t*> FbTable::VectorStart(Field field, std::size_t element_size) const {
  if (!Has(field)) return static_cast<const std::uint8_t*>(nullptr);
  flatbuffers::Verifier& verifier = *reader_->verifier_;
  if (!table_->VerifyOffset(verifier, field.vtable_offset())) return Error(field, "points outside the file");
  auto* vec = table_->GetPointer<const std::uint8_t*>(field.vtable_offset());
  if (!verifier.VerifyVectorOrString(vec, element_size)) {
    // Say how large the vector claims to be when its length is readable.
    const std::size_t at = static_cast<std::size_t>(vec - reader_->bytes_.data());
    if (at % sizeof(flatbuffers::uoffset_t) != 0)
      return Error(field, "points to a misaligned vector at byte " + std::to_string(at));
    if (at + 4 <= reader_->bytes_.size()) {
      std::uint32_t count;
      std::memcpy(&count, vec, sizeof(count));
      return Error(field, "declares " + std::to_string(count) + " elements of " + std::to_string(element_size) +
                              " bytes at byte " + std::to_string(at) + ", past the end of the " +
                              std::to_string(reader_->bytes_.size()) + "-byte file");
    }
    return Error(field, "points outside the file");
  }
  return vec;
}

template <typename T>
Expected<std::vector<T>> FbTable::Scalars(Field field) const {
  LATTE_ASSIGN_OR_RETURN(const std::uint8_t* vec, VectorStart(field, sizeof(T)));
  std::vector<T> out;
  if (vec == nullptr) return out;
  const auto count = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec);
  if (!reader_->TakeCopy(std::uint64_t{count} * sizeof(T)))
    return Error(field, "is one of more vectors than the file holds (shared too many times)");
  out.resize(count);  // verified: count * sizeof(T) bytes lie inside the file
  if (count != 0) std::memcpy(out.data(), vec + sizeof(flatbuffers::uoffset_t), count * sizeof(T));
  return out;
}

Expected<std::span<const std::uint8_t>> FbTable::Bytes(Field field) const {
  LATTE_ASSIGN_OR_RETURN(const std::uint8_t* vec, VectorStart(field, 1));
  if (vec == nullptr) return std::span<const std::uint8_t>();
  const auto count = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec);
  return std::span<const std::uint8_t>(vec + sizeof(flatbuffers::uoffset_t), count);
}

Expected<std::string> FbTable::String(Field field) const {
  if (!Has(field)) return std::string();
  flatbuffers::Verifier& verifier = *reader_->verifier_;
  if (!table_->VerifyOffset(verifier, field.vtable_offset())) return Error(field, "points outside the file");
  auto* str = table_->GetPointer<const flatbuffers::String*>(field.vtable_offset());
  if (!verifier.VerifyString(str)) return Error(field, "is not a valid string (out of bounds or not terminated)");
  if (!reader_->TakeCopy(str->size()))
    return Error(field, "is one of more strings than the file holds (shared too many times)");
  return CleanText(str->str());
}

Expected<std::uint32_t> FbTable::TableCount(Field field) const {
  LATTE_ASSIGN_OR_RETURN(const std::uint8_t* vec, VectorStart(field, sizeof(flatbuffers::uoffset_t)));
  if (vec == nullptr) return 0u;
  return flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec);
}

Expected<FbTable> FbTable::TableAt(Field field, std::uint32_t index, std::string context) const {
  LATTE_ASSIGN_OR_RETURN(const std::uint8_t* vec, VectorStart(field, sizeof(flatbuffers::uoffset_t)));
  if (vec == nullptr || index >= flatbuffers::ReadScalar<flatbuffers::uoffset_t>(vec))
    return Error(field, "has no entry " + std::to_string(index));
  const std::size_t element = static_cast<std::size_t>(vec - reader_->bytes_.data()) + sizeof(flatbuffers::uoffset_t) +
                              std::size_t{index} * sizeof(flatbuffers::uoffset_t);
  const flatbuffers::uoffset_t offset = reader_->verifier_->VerifyOffset(element);
  if (offset == 0)
    return InvalidInput(context + ": offset at byte " + std::to_string(element) + " points outside the file");
  return reader_->OpenTable(element + offset, std::move(context));
}

template Expected<std::int8_t> FbTable::Scalar(Field, std::int8_t) const;
template Expected<std::uint8_t> FbTable::Scalar(Field, std::uint8_t) const;
template Expected<std::int32_t> FbTable::Scalar(Field, std::int32_t) const;
template Expected<std::uint32_t> FbTable::Scalar(Field, std::uint32_t) const;
template Expected<std::int64_t> FbTable::Scalar(Field, std::int64_t) const;
template Expected<std::uint64_t> FbTable::Scalar(Field, std::uint64_t) const;
template Expected<float> FbTable::Scalar(Field, float) const;
template Expected<std::vector<std::int32_t>> FbTable::Scalars(Field) const;
template Expected<std::vector<std::int64_t>> FbTable::Scalars(Field) const;
template Expected<std::vector<float>> FbTable::Scalars(Field) const;
template Expected<std::vector<std::uint16_t>> FbTable::Scalars(Field) const;
template Expected<std::vector<std::uint8_t>> FbTable::Scalars(Field) const;

}  // namespace latte::tflite
