#pragma once
// A checked view of a flatbuffer: every table, vector and string is verified with
// flatbuffers::Verifier before it is read, and every failure names the table ("subgraph 0,
// tensor 5") and the field. Tables are read through flatbuffers::Table by vtable offset.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "import/tflite/tflite_schema.h"

namespace flatbuffers {
class Table;
class Verifier;
}  // namespace flatbuffers

namespace latte::tflite {

class FlatReader;

/// A verified table (or an absent one). Accessors verify the field before reading it.
class FbTable {
 public:
  FbTable() = default;
  bool present() const { return table_ != nullptr; }
  /// Where this table is, for messages: "subgraph 0, tensor 5".
  const std::string& context() const { return context_; }
  /// True when the field is set in this table's vtable.
  bool Has(Field field) const;

  /// A scalar field (int8..uint64, float, bool as uint8), or `fallback` when absent.
  template <typename T>
  Expected<T> Scalar(Field field, T fallback) const;
  /// A sub-table; absent → a table with present() == false.
  Expected<FbTable> Table(Field field, std::string context) const;
  /// A vector of scalars, copied out (so misaligned 8-byte elements are never loaded in
  /// place); absent → empty.
  template <typename T>
  Expected<std::vector<T>> Scalars(Field field) const;
  /// A vector of bytes, in place; absent → empty.
  Expected<std::span<const std::uint8_t>> Bytes(Field field) const;
  /// A string; absent → "".
  Expected<std::string> String(Field field) const;
  /// Number of entries of a vector of tables (absent → 0); each is opened with TableAt.
  Expected<std::uint32_t> TableCount(Field field) const;
  /// The i-th table of a vector of tables (i < TableCount). A null entry is an error.
  Expected<FbTable> TableAt(Field field, std::uint32_t index, std::string context) const;

  /// "subgraph 0, tensor 5: field 'shape' is ..." for errors about this table.
  Status Error(Field field, const std::string& what) const;

 private:
  friend class FlatReader;
  FbTable(FlatReader* reader, const flatbuffers::Table* table, std::string context)
      : reader_(reader), table_(table), context_(std::move(context)) {}
  // Start of the vector a field points to (verified), or null when the field is absent.
  Expected<const std::uint8_t*> VectorStart(Field field, std::size_t element_size) const;

  FlatReader* reader_ = nullptr;
  const flatbuffers::Table* table_ = nullptr;
  std::string context_;
};

/// Owns the verifier over one buffer. The buffer must outlive the reader and every table
/// read from it, and must start 8-byte aligned.
///
/// Tables, vectors and strings may be shared (many offsets to one object), which a hostile
/// file can use to make a small file expand into a huge model. So the reader opens at most
/// one table per 4 bytes of file (distinct tables cannot be packed tighter) and copies out
/// at most about twice the file in vectors and strings.
class FlatReader {
 public:
  explicit FlatReader(std::span<const std::uint8_t> bytes);
  ~FlatReader();
  FlatReader(const FlatReader&) = delete;
  FlatReader& operator=(const FlatReader&) = delete;

  /// The root table (the offset at byte 0), named `context`.
  Expected<FbTable> Root(std::string context);
  std::span<const std::uint8_t> bytes() const { return bytes_; }

 private:
  friend class FbTable;
  // Opens the table at byte `offset`, verifying its vtable.
  Expected<FbTable> OpenTable(std::size_t offset, std::string context);
  // Charges `bytes` copied out of the file against the budget (see the constructor).
  bool TakeCopy(std::uint64_t bytes);

  std::span<const std::uint8_t> bytes_;
  std::uint64_t copy_budget_ = 0;
  std::unique_ptr<flatbuffers::Verifier> verifier_;
};

}  // namespace latte::tflite
