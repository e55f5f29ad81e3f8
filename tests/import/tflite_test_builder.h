#pragma once
// Builds small TFLite files for tests with flatbuffers::FlatBufferBuilder's generic table
// calls and the format's field ids (written out here independently of the importer), plus a
// tiny unchecked reader for trusted files (the real models), so tests can count what is in a
// file without going through the importer.

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace latte::testing::tfl {

// vtable offset of field `id`.
constexpr flatbuffers::voffset_t Vt(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

// TensorType values.
constexpr std::int8_t kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kInt8 = 9;
// BuiltinOperator values used by the tests.
constexpr std::int32_t kAdd = 0, kAvgPool = 1, kConcat = 2, kConv = 3, kDepthwise = 4, kDepthToSpace = 5,
                       kDequantize = 6, kFullyConnected = 9, kLogistic = 14, kMaxPool = 17, kMul = 18, kRelu = 19,
                       kRelu6 = 21, kReshape = 22, kResizeBilinear = 23, kSoftmax = 25, kCustom = 32, kPad = 34,
                       kTranspose = 39, kMean = 40, kSub = 41, kSqueeze = 43, kStridedSlice = 45, kSplit = 49,
                       kLess = 58, kTransposeConv = 67, kSum = 74, kSquare = 92, kLeakyRelu = 98, kRound = 116, kHardSwish = 117, kDensify = 124,
                       kStablehloAdd = 163;

/// A table given field by field: what an options table or any other small table holds.
class TableSpec {
 public:
  TableSpec& I8(int id, std::int8_t v) { return Add(id, Kind::kI8, v); }
  TableSpec& U8(int id, std::uint8_t v) { return Add(id, Kind::kU8, v); }
  TableSpec& I32(int id, std::int32_t v) { return Add(id, Kind::kI32, v); }
  TableSpec& F32(int id, float v) {
    Value x{id, Kind::kF32, 0, v, {}};
    values_.push_back(x);
    return *this;
  }
  TableSpec& I32s(int id, std::vector<std::int32_t> v) {
    values_.push_back({id, Kind::kI32Vec, 0, 0, std::move(v)});
    return *this;
  }
  bool empty() const { return values_.empty(); }

  flatbuffers::uoffset_t Build(flatbuffers::FlatBufferBuilder& fbb) const {
    std::map<int, flatbuffers::Offset<flatbuffers::Vector<std::int32_t>>> vectors;
    for (const Value& v : values_)
      if (v.kind == Kind::kI32Vec) vectors[v.id] = fbb.CreateVector(v.ints);
    const auto start = fbb.StartTable();
    for (const Value& v : values_) {
      switch (v.kind) {
        case Kind::kI8: fbb.AddElement<std::int8_t>(Vt(v.id), static_cast<std::int8_t>(v.i)); break;
        case Kind::kU8: fbb.AddElement<std::uint8_t>(Vt(v.id), static_cast<std::uint8_t>(v.i)); break;
        case Kind::kI32: fbb.AddElement<std::int32_t>(Vt(v.id), static_cast<std::int32_t>(v.i)); break;
        case Kind::kF32: fbb.AddElement<float>(Vt(v.id), v.f); break;
        case Kind::kI32Vec: fbb.AddOffset(Vt(v.id), vectors[v.id]); break;
      }
    }
    return fbb.EndTable(start);
  }

 private:
  enum class Kind { kI8, kU8, kI32, kF32, kI32Vec };
  struct Value {
    int id;
    Kind kind;
    std::int64_t i;
    float f;
    std::vector<std::int32_t> ints;
  };
  TableSpec& Add(int id, Kind kind, std::int64_t v) {
    values_.push_back({id, kind, v, 0, {}});
    return *this;
  }
  std::vector<Value> values_;
};

struct SparsitySpec {
  struct Dim {
    std::int8_t format = 0;  // 0 DENSE, 1 SPARSE_CSR
    std::int32_t dense_size = 0;
    std::uint8_t index_type = 3;  // 1 int32, 2 uint16, 3 uint8 (both arrays)
    std::vector<std::int32_t> segments, indices;
  };
  std::vector<std::int32_t> traversal_order, block_map;
  std::vector<Dim> dims;
};

struct TensorSpec {
  std::vector<std::int32_t> shape;
  std::int8_t type = kFloat32;
  std::uint32_t buffer = 0;
  std::string name;
  std::vector<float> scale;
  std::vector<std::int64_t> zero_point;
  std::int32_t quantized_dimension = 0;
  std::optional<std::vector<std::int32_t>> shape_signature;
  std::optional<SparsitySpec> sparsity;
};

struct OpSpec {
  std::int32_t builtin = kAdd;
  std::string custom;  // for kCustom
  std::vector<std::int32_t> inputs, outputs;
  std::uint8_t options_type = 0;
  TableSpec options;
  std::vector<std::uint8_t> custom_options;
  std::optional<std::uint32_t> opcode_index;  // overrides the one Build() picks (for bad files)
};

struct BufferSpec {
  std::vector<std::uint8_t> data;
  std::uint64_t offset = 0, size = 0;  // external data (offset > 1)
};

template <typename T>
std::vector<std::uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// A whole model: subgraph 0 plus buffers (buffer 0, the empty sentinel, is there already).
struct ModelSpec {
  std::vector<BufferSpec> buffers{BufferSpec{}};
  std::vector<TensorSpec> tensors;
  std::vector<OpSpec> ops;
  std::vector<std::int32_t> inputs, outputs;
  std::uint32_t version = 3;
  std::string subgraph_name = "main";

  /// An activation tensor; returns its index.
  std::int32_t Activation(std::vector<std::int32_t> shape, std::string name, std::int8_t type = kFloat32) {
    TensorSpec t;
    t.shape = std::move(shape);
    t.type = type;
    t.name = std::move(name);
    tensors.push_back(std::move(t));
    return static_cast<std::int32_t>(tensors.size() - 1);
  }
  /// A constant with its own buffer.
  std::int32_t Constant(std::vector<std::int32_t> shape, std::string name, std::int8_t type,
                        std::vector<std::uint8_t> data) {
    buffers.push_back(BufferSpec{std::move(data), 0, 0});
    std::int32_t id = Activation(std::move(shape), std::move(name), type);
    tensors.back().buffer = static_cast<std::uint32_t>(buffers.size() - 1);
    return id;
  }
  std::int32_t FloatConstant(std::vector<std::int32_t> shape, std::string name, std::vector<float> values) {
    return Constant(std::move(shape), std::move(name), kFloat32, Bytes(values));
  }
  std::int32_t IntConstant(std::vector<std::int32_t> shape, std::string name, std::vector<std::int32_t> values) {
    return Constant(std::move(shape), std::move(name), kInt32, Bytes(values));
  }
  OpSpec& Op(std::int32_t builtin, std::vector<std::int32_t> ins, std::vector<std::int32_t> outs) {
    OpSpec op;
    op.builtin = builtin;
    op.inputs = std::move(ins);
    op.outputs = std::move(outs);
    ops.push_back(std::move(op));
    return ops.back();
  }

  /// The finished file ("TFL3").
  std::vector<std::uint8_t> Build() const {
    flatbuffers::FlatBufferBuilder fbb;
    // Operator codes: one per distinct builtin / custom code, in first-use order.
    std::vector<std::pair<std::int32_t, std::string>> codes;
    std::vector<std::uint32_t> op_code_index;
    for (const OpSpec& op : ops) {
      std::pair<std::int32_t, std::string> key{op.builtin, op.builtin == kCustom ? op.custom : ""};
      std::size_t i = 0;
      while (i < codes.size() && codes[i] != key) ++i;
      if (i == codes.size()) codes.push_back(key);
      op_code_index.push_back(static_cast<std::uint32_t>(i));
    }
    std::vector<flatbuffers::Offset<void>> code_offsets;
    for (const auto& [builtin, custom] : codes) {
      flatbuffers::Offset<flatbuffers::String> name;
      if (builtin == kCustom) name = fbb.CreateString(custom);
      const auto start = fbb.StartTable();
      fbb.AddElement<std::int8_t>(Vt(0), static_cast<std::int8_t>(builtin < 127 ? builtin : 127));
      if (builtin == kCustom) fbb.AddOffset(Vt(1), name);
      fbb.AddElement<std::int32_t>(Vt(2), 1);
      fbb.AddElement<std::int32_t>(Vt(3), builtin);
      code_offsets.push_back(flatbuffers::Offset<void>(fbb.EndTable(start)));
    }

    std::vector<flatbuffers::Offset<void>> tensor_offsets;
    for (const TensorSpec& t : tensors) {
      auto shape = fbb.CreateVector(t.shape);
      auto name = fbb.CreateSharedString(t.name);  // equal names share one string
      flatbuffers::Offset<flatbuffers::Vector<std::int32_t>> signature;
      if (t.shape_signature) signature = fbb.CreateVector(*t.shape_signature);
      flatbuffers::Offset<void> quant;
      if (!t.scale.empty() || !t.zero_point.empty()) {
        auto scale = fbb.CreateVector(t.scale);
        auto zero = fbb.CreateVector(t.zero_point);
        const auto start = fbb.StartTable();
        fbb.AddOffset(Vt(2), scale);
        fbb.AddOffset(Vt(3), zero);
        fbb.AddElement<std::int32_t>(Vt(6), t.quantized_dimension, 0);
        quant = flatbuffers::Offset<void>(fbb.EndTable(start));
      }
      flatbuffers::Offset<void> sparsity;
      if (t.sparsity) sparsity = BuildSparsity(fbb, *t.sparsity);
      const auto start = fbb.StartTable();
      fbb.AddOffset(Vt(0), shape);
      fbb.AddElement<std::int8_t>(Vt(1), t.type, 0);
      fbb.AddElement<std::uint32_t>(Vt(2), t.buffer, 0);
      fbb.AddOffset(Vt(3), name);
      if (!quant.IsNull()) fbb.AddOffset(Vt(4), quant);
      if (!sparsity.IsNull()) fbb.AddOffset(Vt(6), sparsity);
      if (t.shape_signature) fbb.AddOffset(Vt(7), signature);
      tensor_offsets.push_back(flatbuffers::Offset<void>(fbb.EndTable(start)));
    }

    std::vector<flatbuffers::Offset<void>> op_offsets;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpSpec& op = ops[i];
      auto ins = fbb.CreateVector(op.inputs);
      auto outs = fbb.CreateVector(op.outputs);
      flatbuffers::uoffset_t options = 0;
      if (op.options_type != 0) options = op.options.Build(fbb);
      flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> custom;
      if (!op.custom_options.empty()) custom = fbb.CreateVector(op.custom_options);
      const auto start = fbb.StartTable();
      fbb.AddElement<std::uint32_t>(Vt(0), op.opcode_index.value_or(op_code_index[i]), 0);
      fbb.AddOffset(Vt(1), ins);
      fbb.AddOffset(Vt(2), outs);
      if (op.options_type != 0) {
        fbb.AddElement<std::uint8_t>(Vt(3), op.options_type, 0);
        fbb.AddOffset(Vt(4), flatbuffers::Offset<void>(options));
      }
      if (!op.custom_options.empty()) fbb.AddOffset(Vt(5), custom);
      op_offsets.push_back(flatbuffers::Offset<void>(fbb.EndTable(start)));
    }

    auto tensor_vec = fbb.CreateVector(tensor_offsets);
    auto in_vec = fbb.CreateVector(inputs);
    auto out_vec = fbb.CreateVector(outputs);
    auto op_vec = fbb.CreateVector(op_offsets);
    auto sg_name = fbb.CreateString(subgraph_name);
    auto sg_start = fbb.StartTable();
    fbb.AddOffset(Vt(0), tensor_vec);
    fbb.AddOffset(Vt(1), in_vec);
    fbb.AddOffset(Vt(2), out_vec);
    fbb.AddOffset(Vt(3), op_vec);
    fbb.AddOffset(Vt(4), sg_name);
    std::vector<flatbuffers::Offset<void>> subgraphs{flatbuffers::Offset<void>(fbb.EndTable(sg_start))};

    std::vector<flatbuffers::Offset<void>> buffer_offsets;
    for (const BufferSpec& b : buffers) {
      flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> data;
      if (!b.data.empty()) {
        fbb.ForceVectorAlignment(b.data.size(), 1, 16);
        data = fbb.CreateVector(b.data);
      }
      const auto start = fbb.StartTable();
      if (!b.data.empty()) fbb.AddOffset(Vt(0), data);
      fbb.AddElement<std::uint64_t>(Vt(1), b.offset, 0);
      fbb.AddElement<std::uint64_t>(Vt(2), b.size, 0);
      buffer_offsets.push_back(flatbuffers::Offset<void>(fbb.EndTable(start)));
    }

    auto codes_vec = fbb.CreateVector(code_offsets);
    auto sg_vec = fbb.CreateVector(subgraphs);
    auto desc = fbb.CreateString("latte test model");
    auto buf_vec = fbb.CreateVector(buffer_offsets);
    const auto start = fbb.StartTable();
    fbb.AddElement<std::uint32_t>(Vt(0), version, 0);
    fbb.AddOffset(Vt(1), codes_vec);
    fbb.AddOffset(Vt(2), sg_vec);
    fbb.AddOffset(Vt(3), desc);
    fbb.AddOffset(Vt(4), buf_vec);
    fbb.Finish(flatbuffers::Offset<void>(fbb.EndTable(start)), "TFL3");
    return std::vector<std::uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }

 private:
  static flatbuffers::Offset<void> IndexVector(flatbuffers::FlatBufferBuilder& fbb, std::uint8_t type,
                                               const std::vector<std::int32_t>& values) {
    flatbuffers::uoffset_t vec = 0;
    if (type == 1) {
      vec = fbb.CreateVector(values).o;
    } else if (type == 2) {
      std::vector<std::uint16_t> v(values.begin(), values.end());
      vec = fbb.CreateVector(v).o;
    } else {
      std::vector<std::uint8_t> v(values.begin(), values.end());
      vec = fbb.CreateVector(v).o;
    }
    const auto start = fbb.StartTable();
    fbb.AddOffset(Vt(0), flatbuffers::Offset<void>(vec));
    return flatbuffers::Offset<void>(fbb.EndTable(start));
  }

  static flatbuffers::Offset<void> BuildSparsity(flatbuffers::FlatBufferBuilder& fbb, const SparsitySpec& s) {
    std::vector<flatbuffers::Offset<void>> dims;
    for (const SparsitySpec::Dim& d : s.dims) {
      flatbuffers::Offset<void> segments, indices;
      if (d.format == 1) {
        segments = IndexVector(fbb, d.index_type, d.segments);
        indices = IndexVector(fbb, d.index_type, d.indices);
      }
      const auto start = fbb.StartTable();
      fbb.AddElement<std::int8_t>(Vt(0), d.format, 0);
      fbb.AddElement<std::int32_t>(Vt(1), d.dense_size, 0);
      if (d.format == 1) {
        fbb.AddElement<std::uint8_t>(Vt(2), d.index_type, 0);
        fbb.AddOffset(Vt(3), segments);
        fbb.AddElement<std::uint8_t>(Vt(4), d.index_type, 0);
        fbb.AddOffset(Vt(5), indices);
      }
      dims.push_back(flatbuffers::Offset<void>(fbb.EndTable(start)));
    }
    auto order = fbb.CreateVector(s.traversal_order);
    flatbuffers::Offset<flatbuffers::Vector<std::int32_t>> block_map;
    if (!s.block_map.empty()) block_map = fbb.CreateVector(s.block_map);
    auto dims_vec = fbb.CreateVector(dims);
    const auto start = fbb.StartTable();
    fbb.AddOffset(Vt(0), order);
    if (!s.block_map.empty()) fbb.AddOffset(Vt(1), block_map);
    fbb.AddOffset(Vt(2), dims_vec);
    return flatbuffers::Offset<void>(fbb.EndTable(start));
  }
};

/// Unchecked reader for trusted files: position-based access to tables, vectors and strings.
class RawReader {
 public:
  explicit RawReader(const std::vector<std::uint8_t>& bytes) : b_(bytes) {}

  template <typename T>
  T Read(std::size_t pos) const {
    T v;
    std::memcpy(&v, b_.data() + pos, sizeof(T));
    return v;
  }
  std::size_t Root() const { return Read<std::uint32_t>(0); }
  /// Position of field `id` of the table at `table`, or 0 when absent.
  std::size_t Field(std::size_t table, int id) const {
    const std::size_t vtable = table - static_cast<std::size_t>(Read<std::int32_t>(table));
    const auto vsize = Read<std::uint16_t>(vtable);
    const std::size_t at = static_cast<std::size_t>(Vt(id));
    if (at >= vsize) return 0;
    const auto off = Read<std::uint16_t>(vtable + at);
    return off == 0 ? 0 : table + off;
  }
  template <typename T>
  T Scalar(std::size_t table, int id, T fallback) const {
    const std::size_t f = Field(table, id);
    return f == 0 ? fallback : Read<T>(f);
  }
  /// Position of the vector's length word (field `id`), or 0 when absent.
  std::size_t Vector(std::size_t table, int id) const {
    const std::size_t f = Field(table, id);
    return f == 0 ? 0 : f + Read<std::uint32_t>(f);
  }
  std::uint32_t Length(std::size_t vec) const { return vec == 0 ? 0 : Read<std::uint32_t>(vec); }
  std::size_t TableAt(std::size_t vec, std::size_t i) const {
    const std::size_t at = vec + 4 + 4 * i;
    return at + Read<std::uint32_t>(at);
  }
  template <typename T>
  std::vector<T> Values(std::size_t table, int id) const {
    const std::size_t vec = Vector(table, id);
    std::vector<T> out(Length(vec));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = Read<T>(vec + 4 + sizeof(T) * i);
    return out;
  }
  std::string String(std::size_t table, int id) const {
    const std::size_t vec = Vector(table, id);
    if (vec == 0) return "";
    return std::string(reinterpret_cast<const char*>(b_.data() + vec + 4), Length(vec));
  }

 private:
  const std::vector<std::uint8_t>& b_;
};

}  // namespace latte::testing::tfl
