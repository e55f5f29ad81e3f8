#include "import/tflite/tflite_model.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "import/tflite/tflite_schema.h"

namespace latte::tflite {
namespace {

constexpr std::size_t kMaxRank = 32;  // TFLite kernels stop at 6-8; beyond this is hostile
// Far more tensors, operators or operator codes than any real model has (large language
// models have tens of thousands); keeps a hostile file's model small in memory.
constexpr std::uint32_t kMaxEntries = 1u << 20;

Status CheckCount(const std::string& where, const char* what, std::uint32_t count) {
  if (count > kMaxEntries)
    return Unsupported(where + ": " + std::to_string(count) + " " + what + ", more than Latte imports (" +
                       std::to_string(kMaxEntries) + ")");
  return Status::Ok();
}

std::string Where(std::size_t index, const char* what) {
  return "subgraph 0, " + std::string(what) + " " + std::to_string(index);
}

DataType ToDataType(std::int8_t type) {
  switch (type) {
    case kTypeFloat32: return DataType::kFloat32;
    case kTypeFloat16: return DataType::kFloat16;
    case kTypeInt32: return DataType::kInt32;
    case kTypeUInt8: return DataType::kUInt8;
    case kTypeInt64: return DataType::kInt64;
    case kTypeString: return DataType::kString;
    case kTypeBool: return DataType::kBool;
    case kTypeInt16: return DataType::kInt16;
    case kTypeInt8: return DataType::kInt8;
    case kTypeFloat64: return DataType::kFloat64;
    default: return DataType::kUnknown;  // complex, uint16/32/64, int4, bfloat16, resource, variant
  }
}

struct OpCode {
  std::int32_t builtin = 0;
  std::string custom;
};

Expected<std::vector<OpCode>> ReadOpCodes(const FbTable& root) {
  LATTE_ASSIGN_OR_RETURN(std::uint32_t count, root.TableCount(schema::Model["operator_codes"]));
  LATTE_RETURN_IF_ERROR(CheckCount("model", "operator codes", count));
  std::vector<OpCode> codes;
  codes.reserve(count);  // verified: the vector's offsets lie inside the file
  for (std::uint32_t i = 0; i < count; ++i) {
    LATTE_ASSIGN_OR_RETURN(FbTable t,
                           root.TableAt(schema::Model["operator_codes"], i, "operator code " + std::to_string(i)));
    constexpr const auto& f = schema::OperatorCode;
    LATTE_ASSIGN_OR_RETURN(std::int8_t deprecated, t.Scalar<std::int8_t>(f["deprecated_builtin_code"], 0));
    LATTE_ASSIGN_OR_RETURN(std::int32_t builtin, t.Scalar<std::int32_t>(f["builtin_code"], 0));
    OpCode code;
    // Old files set only the byte-wide deprecated code, new ones both (or only the wide one
    // for codes above 127): the larger is the real one.
    code.builtin = std::max<std::int32_t>(deprecated, builtin);
    if (code.builtin == kCustom) {
      LATTE_ASSIGN_OR_RETURN(code.custom, t.String(schema::OperatorCode["custom_code"]));
    }
    codes.push_back(std::move(code));
  }
  return codes;
}

// One Buffer table's bytes: inline data, or (files over 2 GiB) offset and size from the
// start of the file. Empty = no data.
Expected<std::span<const std::uint8_t>> ReadBuffer(const FbTable& root, std::uint32_t index,
                                                   std::span<const std::uint8_t> file) {
  LATTE_ASSIGN_OR_RETURN(FbTable b, root.TableAt(schema::Model["buffers"], index, "buffer " + std::to_string(index)));
  LATTE_ASSIGN_OR_RETURN(std::span<const std::uint8_t> data, b.Bytes(schema::Buffer["data"]));
  if (!data.empty()) return data;
  LATTE_ASSIGN_OR_RETURN(std::uint64_t offset, b.Scalar<std::uint64_t>(schema::Buffer["offset"], 0));
  LATTE_ASSIGN_OR_RETURN(std::uint64_t size, b.Scalar<std::uint64_t>(schema::Buffer["size"], 0));
  if (offset <= 1) return std::span<const std::uint8_t>();  // the format's "not set"
  if (offset > file.size() || size > file.size() - offset)
    return InvalidInput("buffer " + std::to_string(index) + ": external data at offset " + std::to_string(offset) +
                        " with size " + std::to_string(size) + " lies outside the " + std::to_string(file.size()) +
                        "-byte file");
  return file.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
}

Expected<SparsityInfo> ReadSparsity(const FbTable& table) {
  const std::string& where = table.context();
  SparsityInfo s;
  LATTE_ASSIGN_OR_RETURN(s.traversal_order, table.Scalars<std::int32_t>(schema::SparsityParameters["traversal_order"]));
  LATTE_ASSIGN_OR_RETURN(s.block_map, table.Scalars<std::int32_t>(schema::SparsityParameters["block_map"]));
  LATTE_ASSIGN_OR_RETURN(std::uint32_t levels, table.TableCount(schema::SparsityParameters["dim_metadata"]));
  if (levels > 2 * kMaxRank) return InvalidInput(where + ": " + std::to_string(levels) + " dim_metadata levels");
  for (std::uint32_t l = 0; l < levels; ++l) {
    const std::string level_where = where + ", dim_metadata " + std::to_string(l);
    LATTE_ASSIGN_OR_RETURN(FbTable m, table.TableAt(schema::SparsityParameters["dim_metadata"], l, level_where));
    SparsityInfo::Dim dim;
    LATTE_ASSIGN_OR_RETURN(std::int8_t format, m.Scalar<std::int8_t>(schema::DimensionMetadata["format"], kDimDense));
    if (format != kDimDense && format != kDimSparseCsr)
      return InvalidInput(level_where + ": unknown format " + std::to_string(format) + " (0 DENSE, 1 SPARSE_CSR)");
    dim.sparse = format == kDimSparseCsr;
    LATTE_ASSIGN_OR_RETURN(dim.dense_size, m.Scalar<std::int32_t>(schema::DimensionMetadata["dense_size"], 0));
    if (dim.sparse) {
      // Each index array is a union: a table holding an int32, uint16 or uint8 vector.
      auto read_indices = [&](Field type_field, Field table_field, std::vector<std::int32_t>& out) -> Status {
        LATTE_ASSIGN_OR_RETURN(std::uint8_t type, m.Scalar<std::uint8_t>(type_field, 0));
        LATTE_ASSIGN_OR_RETURN(FbTable v, m.Table(table_field, level_where + ", " + table_field.name));
        if (!v.present()) return InvalidInput(level_where + ": SPARSE_CSR level has no " + table_field.name);
        if (type == kIndexVectorInt32) {
          LATTE_ASSIGN_OR_RETURN(out, v.Scalars<std::int32_t>(schema::IndexVector["values"]));
        } else if (type == kIndexVectorUint16) {
          LATTE_ASSIGN_OR_RETURN(auto values, v.Scalars<std::uint16_t>(schema::IndexVector["values"]));
          out.assign(values.begin(), values.end());
        } else if (type == kIndexVectorUint8) {
          LATTE_ASSIGN_OR_RETURN(auto values, v.Scalars<std::uint8_t>(schema::IndexVector["values"]));
          out.assign(values.begin(), values.end());
        } else {
          return InvalidInput(level_where + ": " + table_field.name + " has unknown index vector type " +
                              std::to_string(type) + " (1 int32, 2 uint16, 3 uint8)");
        }
        return Status::Ok();
      };
      constexpr const auto& f = schema::DimensionMetadata;
      LATTE_RETURN_IF_ERROR(read_indices(f["array_segments_type"], f["array_segments"], dim.segments));
      LATTE_RETURN_IF_ERROR(read_indices(f["array_indices_type"], f["array_indices"], dim.indices));
    }
    s.dims.push_back(std::move(dim));
  }
  return s;
}

// Buffers by index, read when a tensor first refers to them, so tensors sharing a buffer
// share one copy and memory stays bounded by the file size.
using BufferCache = std::unordered_map<std::uint32_t, std::shared_ptr<const std::vector<std::uint8_t>>>;

Expected<TfTensor> ReadTensor(const FbTable& t, std::size_t index, const FbTable& root, std::uint32_t num_buffers,
                              std::span<const std::uint8_t> file, BufferCache& buffer_cache) {
  const std::string where = Where(index, "tensor");
  TfTensor tensor;
  LATTE_ASSIGN_OR_RETURN(tensor.name, t.String(schema::Tensor["name"]));
  const std::string named = where + " '" + tensor.name + "'";
  LATTE_ASSIGN_OR_RETURN(tensor.raw_type, t.Scalar<std::int8_t>(schema::Tensor["type"], kTypeFloat32));
  tensor.dtype = ToDataType(tensor.raw_type);

  LATTE_ASSIGN_OR_RETURN(std::vector<std::int32_t> shape, t.Scalars<std::int32_t>(schema::Tensor["shape"]));
  if (shape.size() > kMaxRank)
    return InvalidInput(named + ": rank " + std::to_string(shape.size()) + " exceeds " + std::to_string(kMaxRank));
  for (std::int32_t d : shape) {
    if (d < -1) return InvalidInput(named + ": shape has dimension " + std::to_string(d));
    tensor.shape.push_back(d == -1 ? kUnknownDim : d);
  }
  if (t.Has(schema::Tensor["shape_signature"])) {
    LATTE_ASSIGN_OR_RETURN(std::vector<std::int32_t> signature,
                           t.Scalars<std::int32_t>(schema::Tensor["shape_signature"]));
    if (signature.size() != shape.size())
      return InvalidInput(named + ": shape_signature has rank " + std::to_string(signature.size()) +
                          " but shape has rank " + std::to_string(shape.size()));
    for (std::size_t i = 0; i < signature.size(); ++i)
      if (signature[i] == -1) tensor.shape[i] = kUnknownDim;
  }
  LATTE_ASSIGN_OR_RETURN(std::uint8_t has_rank, t.Scalar<std::uint8_t>(schema::Tensor["has_rank"], 0));

  LATTE_ASSIGN_OR_RETURN(std::uint32_t buffer, t.Scalar<std::uint32_t>(schema::Tensor["buffer"], 0));
  if (buffer != 0 && buffer >= num_buffers)
    return InvalidInput(named + ": buffer index " + std::to_string(buffer) + " out of range (" +
                        std::to_string(num_buffers) + " buffers)");
  if (buffer != 0) {  // buffer 0 is the format's empty sentinel: an activation
    auto& cached = buffer_cache[buffer];
    if (!cached) {
      LATTE_ASSIGN_OR_RETURN(std::span<const std::uint8_t> bytes, ReadBuffer(root, buffer, file));
      cached = std::make_shared<const std::vector<std::uint8_t>>(bytes.begin(), bytes.end());
    }
    if (!cached->empty()) tensor.data = cached;
  }

  // An empty shape is a scalar when has_rank says so or the tensor is a constant (its data
  // settles it); otherwise the format means "rank unknown". (Old files that omit has_rank on
  // scalar activations get an unknown rank, which shape inference fills in downstream.)
  tensor.shape_known = !shape.empty() || has_rank != 0 || tensor.data != nullptr;

  LATTE_ASSIGN_OR_RETURN(FbTable q, t.Table(schema::Tensor["quantization"], named + ", quantization"));
  if (q.present()) {
    constexpr const auto& f = schema::QuantizationParameters;
    LATTE_ASSIGN_OR_RETURN(tensor.quant.scale, q.Scalars<float>(f["scale"]));
    LATTE_ASSIGN_OR_RETURN(tensor.quant.zero_point, q.Scalars<std::int64_t>(f["zero_point"]));
    LATTE_ASSIGN_OR_RETURN(tensor.quant.axis, q.Scalar<std::int32_t>(f["quantized_dimension"], 0));
  }

  LATTE_ASSIGN_OR_RETURN(FbTable sp, t.Table(schema::Tensor["sparsity"], named + ", sparsity"));
  if (sp.present()) {
    LATTE_ASSIGN_OR_RETURN(tensor.sparsity, ReadSparsity(sp));
  }

  if (tensor.data && !tensor.sparsity) {
    // A dense constant must hold exactly shape × element size bytes.
    const std::size_t element = DataTypeSize(tensor.dtype);
    if (element != 0) {
      auto elements = ShapeElements(tensor.shape);
      if (!elements)
        return InvalidInput(named + ": constant has unknown or too large shape " + ShapeToString(tensor.shape));
      if (static_cast<std::uint64_t>(*elements) > std::numeric_limits<std::uint64_t>::max() / element ||
          static_cast<std::uint64_t>(*elements) * element != tensor.data->size())
        return InvalidInput(named + ": buffer " + std::to_string(buffer) + " has " +
                            std::to_string(tensor.data->size()) + " bytes, but shape " + ShapeToString(tensor.shape) +
                            " of " + std::string(DataTypeName(tensor.dtype)) + " needs " +
                            std::to_string(static_cast<std::uint64_t>(*elements) * element));
    }
  }
  return tensor;
}

Expected<std::vector<std::int32_t>> ReadTensorList(const FbTable& table, Field field, std::size_t num_tensors,
                                                   const std::string& where, bool allow_absent) {
  LATTE_ASSIGN_OR_RETURN(std::vector<std::int32_t> list, table.Scalars<std::int32_t>(field));
  for (std::int32_t t : list) {
    if (t == -1 && allow_absent) continue;
    if (t < 0 || static_cast<std::size_t>(t) >= num_tensors)
      return InvalidInput(where + ": " + field.name + " tensor index " + std::to_string(t) + " out of range (" +
                          std::to_string(num_tensors) + " tensors)");
  }
  return list;
}

}  // namespace

std::string OperatorName(const TfOperator& op) {
  if (op.builtin == kCustom) return op.custom_code;
  std::string name = BuiltinOpName(op.builtin);
  return name.empty() ? "BUILTIN_" + std::to_string(op.builtin) : name;
}

std::string DescribeOperator(const TfOperator& op, std::size_t index) {
  return "subgraph 0, operator " + std::to_string(index) + " (" + OperatorName(op) + ")";
}

std::string DescribeTensor(const TfModel& model, std::int32_t index) {
  std::string out = "subgraph 0, tensor " + std::to_string(index);
  if (index >= 0 && static_cast<std::size_t>(index) < model.tensors.size())
    out += " '" + model.tensors[static_cast<std::size_t>(index)].name + "'";
  return out;
}

Expected<TfModel> ReadModel(FlatReader& reader, std::span<const std::uint8_t> file) {
  LATTE_ASSIGN_OR_RETURN(FbTable root, reader.Root("model"));
  TfModel model;
  LATTE_ASSIGN_OR_RETURN(model.version, root.Scalar<std::uint32_t>(schema::Model["version"], 0));
  LATTE_ASSIGN_OR_RETURN(model.description, root.String(schema::Model["description"]));
  LATTE_ASSIGN_OR_RETURN(std::vector<OpCode> codes, ReadOpCodes(root));
  LATTE_ASSIGN_OR_RETURN(std::uint32_t num_buffers, root.TableCount(schema::Model["buffers"]));
  LATTE_ASSIGN_OR_RETURN(std::uint32_t num_subgraphs, root.TableCount(schema::Model["subgraphs"]));
  model.num_subgraphs = num_subgraphs;
  if (num_subgraphs == 0) return InvalidInput("model: has no subgraphs");
  LATTE_ASSIGN_OR_RETURN(FbTable sg, root.TableAt(schema::Model["subgraphs"], 0, "subgraph 0"));
  LATTE_ASSIGN_OR_RETURN(model.subgraph_name, sg.String(schema::SubGraph["name"]));

  // Tensors. Buffers are read once each, when a tensor first refers to them.
  LATTE_ASSIGN_OR_RETURN(std::uint32_t num_tensors, sg.TableCount(schema::SubGraph["tensors"]));
  LATTE_RETURN_IF_ERROR(CheckCount("subgraph 0", "tensors", num_tensors));
  BufferCache buffer_cache;
  model.tensors.reserve(num_tensors);
  for (std::uint32_t i = 0; i < num_tensors; ++i) {
    LATTE_ASSIGN_OR_RETURN(FbTable t, sg.TableAt(schema::SubGraph["tensors"], i, Where(i, "tensor")));
    LATTE_ASSIGN_OR_RETURN(TfTensor tensor, ReadTensor(t, i, root, num_buffers, file, buffer_cache));
    model.tensors.push_back(std::move(tensor));
  }

  LATTE_ASSIGN_OR_RETURN(model.inputs,
                         ReadTensorList(sg, schema::SubGraph["inputs"], num_tensors, "subgraph 0", false));
  LATTE_ASSIGN_OR_RETURN(model.outputs,
                         ReadTensorList(sg, schema::SubGraph["outputs"], num_tensors, "subgraph 0", false));

  LATTE_ASSIGN_OR_RETURN(std::uint32_t num_ops, sg.TableCount(schema::SubGraph["operators"]));
  LATTE_RETURN_IF_ERROR(CheckCount("subgraph 0", "operators", num_ops));
  model.operators.reserve(num_ops);
  for (std::uint32_t i = 0; i < num_ops; ++i) {
    const std::string where = Where(i, "operator");
    LATTE_ASSIGN_OR_RETURN(FbTable t, sg.TableAt(schema::SubGraph["operators"], i, where));
    TfOperator op;
    LATTE_ASSIGN_OR_RETURN(std::uint32_t opcode, t.Scalar<std::uint32_t>(schema::Operator["opcode_index"], 0));
    if (opcode >= codes.size())
      return InvalidInput(where + ": opcode index " + std::to_string(opcode) + " out of range (" +
                          std::to_string(codes.size()) + " operator codes)");
    op.builtin = codes[opcode].builtin;
    op.custom_code = codes[opcode].custom;
    const std::string named = DescribeOperator(op, i);
    LATTE_ASSIGN_OR_RETURN(op.inputs, ReadTensorList(t, schema::Operator["inputs"], num_tensors, named, true));
    LATTE_ASSIGN_OR_RETURN(op.outputs, ReadTensorList(t, schema::Operator["outputs"], num_tensors, named, false));
    LATTE_ASSIGN_OR_RETURN(op.options_type, t.Scalar<std::uint8_t>(schema::Operator["builtin_options_type"], 0));
    if (op.options_type != kNoOptions) {
      LATTE_ASSIGN_OR_RETURN(op.options, t.Table(schema::Operator["builtin_options"], named + ", builtin_options"));
    }
    LATTE_ASSIGN_OR_RETURN(op.custom_options, t.Bytes(schema::Operator["custom_options"]));
    if (op.custom_options.empty()) {
      constexpr const auto& f = schema::Operator;
      LATTE_ASSIGN_OR_RETURN(std::uint64_t offset, t.Scalar<std::uint64_t>(f["large_custom_options_offset"], 0));
      LATTE_ASSIGN_OR_RETURN(std::uint64_t size, t.Scalar<std::uint64_t>(f["large_custom_options_size"], 0));
      if (offset > 1) {
        if (offset > file.size() || size > file.size() - offset)
          return InvalidInput(named + ": large custom options at offset " + std::to_string(offset) + " with size " +
                              std::to_string(size) + " lie outside the " + std::to_string(file.size()) + "-byte file");
        op.custom_options = file.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
      }
    }
    model.operators.push_back(std::move(op));
  }
  return model;
}

}  // namespace latte::tflite
