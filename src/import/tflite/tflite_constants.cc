#include "import/tflite/tflite_constants.h"

#include <cstring>
#include <deque>
#include <functional>
#include <optional>

#include "import/tflite/tflite_schema.h"
#include "ir/half.h"

namespace latte::tflite {

Status ByteBudget::Take(std::uint64_t bytes, const std::string& what) {
  if (bytes > left_)
    return InvalidInput(what + ": expanding it needs " + std::to_string(bytes) +
                        " bytes, more than the importer allows for a file this size");
  left_ -= bytes;
  return Status::Ok();
}

// TFLite sparsity (a TACO variant). A dense tensor of rank n, optionally cut into blocks along
// k of its dims, is walked in `traversal_order` over n + k levels: levels for the original
// dims count blocks (or elements when the dim has no block), levels n..n+k-1 walk inside a
// block, and block_map[j] names the dim block level n + j belongs to. A DENSE level of size s
// turns position p of the level above into positions p*s .. p*s+s-1; a SPARSE_CSR level maps
// position p to the range array_segments[p] .. array_segments[p+1] of array_indices, whose
// entries are the coordinates present (the positions being the indices into that array).
// Values are stored in the order the walk reaches the last level.
Expected<std::vector<std::uint8_t>> DensifyData(const SparsityInfo& sp, const Shape& shape, std::size_t element_size,
                                                std::span<const std::uint8_t> values, ByteBudget& budget,
                                                const std::string& where) {
  const std::size_t n = shape.size();
  const std::size_t levels = sp.traversal_order.size();
  auto fail = [&](const std::string& what) { return InvalidInput(where + ": sparsity " + what); };
  if (n == 0) return fail("on a scalar");
  if (element_size == 0) return fail("on a tensor of unsized element type");
  if (levels < n || levels > 2 * n)
    return fail("traversal_order has " + std::to_string(levels) + " entries for rank " + std::to_string(n));
  const std::size_t k = levels - n;
  if (sp.block_map.size() != k)
    return fail("block_map has " + std::to_string(sp.block_map.size()) + " entries, expected " + std::to_string(k));
  if (sp.dims.size() != levels)
    return fail("dim_metadata has " + std::to_string(sp.dims.size()) + " levels, expected " + std::to_string(levels));
  for (std::int64_t d : shape)
    if (d < 0) return fail("on a tensor of unknown shape " + ShapeToString(shape));

  // traversal_order: a permutation of the dims, then one of the block dims.
  std::vector<bool> seen(levels, false);
  std::vector<std::size_t> level_of(levels, 0);  // traversal level of each dim / block dim
  for (std::size_t l = 0; l < levels; ++l) {
    const std::int32_t t = sp.traversal_order[l];
    const bool ok = l < n ? (t >= 0 && static_cast<std::size_t>(t) < n)
                          : (t >= 0 && static_cast<std::size_t>(t) >= n && static_cast<std::size_t>(t) < levels);
    if (!ok || seen[static_cast<std::size_t>(t)])
      return fail("traversal_order entry " + std::to_string(l) + " is " + std::to_string(t) +
                  ", not a valid permutation");
    seen[static_cast<std::size_t>(t)] = true;
    level_of[static_cast<std::size_t>(t)] = l;
  }
  // Block sizes: block dims are dense, and each divides the dim it belongs to.
  std::vector<std::int64_t> block(n, 1);
  std::vector<bool> blocked(n, false);
  for (std::size_t j = 0; j < k; ++j) {
    const std::int32_t d = sp.block_map[j];
    if (d < 0 || static_cast<std::size_t>(d) >= n || blocked[static_cast<std::size_t>(d)])
      return fail("block_map entry " + std::to_string(j) + " is " + std::to_string(d));
    const SparsityInfo::Dim& meta = sp.dims[level_of[n + j]];
    if (meta.sparse || meta.dense_size <= 0)
      return fail("block dimension " + std::to_string(n + j) + " must be DENSE with a positive size");
    if (shape[static_cast<std::size_t>(d)] % meta.dense_size != 0)
      return fail("block size " + std::to_string(meta.dense_size) + " does not divide dim " + std::to_string(d) +
                  " of " + ShapeToString(shape));
    blocked[static_cast<std::size_t>(d)] = true;
    block[static_cast<std::size_t>(d)] = meta.dense_size;
  }
  // The size each level walks, and the dense sizes the file states.
  std::vector<std::int64_t> size(levels);
  for (std::size_t l = 0; l < levels; ++l) {
    const auto t = static_cast<std::size_t>(sp.traversal_order[l]);
    size[l] = t < n ? shape[t] / block[t] : block[static_cast<std::size_t>(sp.block_map[t - n])];
    if (!sp.dims[l].sparse && sp.dims[l].dense_size != size[l])
      return fail("level " + std::to_string(l) + " is DENSE with size " + std::to_string(sp.dims[l].dense_size) +
                  ", expected " + std::to_string(size[l]));
  }

  auto elements = ShapeElements(shape);
  if (!elements || static_cast<std::uint64_t>(*elements) > (std::uint64_t{1} << 62) / element_size)
    return fail("on a tensor too large: " + ShapeToString(shape));
  const std::uint64_t dense_bytes = static_cast<std::uint64_t>(*elements) * element_size;
  LATTE_RETURN_IF_ERROR(budget.Take(dense_bytes, where));
  if (values.size() % element_size != 0)
    return fail("values take " + std::to_string(values.size()) + " bytes, not a multiple of " +
                std::to_string(element_size));
  const std::uint64_t num_values = values.size() / element_size;

  std::vector<std::int64_t> stride(n, 1);
  for (std::size_t d = n - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];

  std::vector<std::uint8_t> out(static_cast<std::size_t>(dense_bytes), 0);
  std::vector<std::int64_t> coord(levels, 0);
  std::uint64_t consumed = 0;
  // Depth ≤ 2 × rank; sparse indices are strictly increasing below each level's size, so no
  // level has more positions than the dense tensor has elements.
  std::function<Status(std::size_t, std::uint64_t)> visit = [&](std::size_t l, std::uint64_t pos) -> Status {
    if (l == levels) {
      std::int64_t linear = 0;
      for (std::size_t d = 0; d < n; ++d) {
        const std::int64_t outer = coord[level_of[d]];
        std::int64_t c = outer;
        if (blocked[d]) {
          std::size_t j = 0;
          while (static_cast<std::size_t>(sp.block_map[j]) != d) ++j;
          c = outer * block[d] + coord[level_of[n + j]];
        }
        linear += c * stride[d];
      }
      if (consumed >= num_values)
        return fail("metadata places more than the " + std::to_string(num_values) + " values stored");
      std::memcpy(out.data() + static_cast<std::size_t>(linear) * element_size,
                  values.data() + static_cast<std::size_t>(consumed) * element_size, element_size);
      ++consumed;
      return Status::Ok();
    }
    const SparsityInfo::Dim& meta = sp.dims[l];
    if (!meta.sparse) {
      for (std::int64_t i = 0; i < size[l]; ++i) {
        coord[l] = i;
        LATTE_RETURN_IF_ERROR(visit(l + 1, pos * static_cast<std::uint64_t>(size[l]) + static_cast<std::uint64_t>(i)));
      }
      return Status::Ok();
    }
    const auto level = [l] { return "level " + std::to_string(l); };  // built only for errors
    if (pos + 1 >= meta.segments.size())
      return fail(level() + ": array_segments has " + std::to_string(meta.segments.size()) + " entries, position " +
                  std::to_string(pos) + " needs " + std::to_string(pos + 2));
    const std::int64_t begin = meta.segments[pos], end = meta.segments[pos + 1];
    if (begin < 0 || begin > end || static_cast<std::uint64_t>(end) > meta.indices.size())
      return fail(level() + ": segment " + std::to_string(pos) + " is [" + std::to_string(begin) + ", " +
                  std::to_string(end) + "), array_indices has " + std::to_string(meta.indices.size()) + " entries");
    std::int64_t previous = -1;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t index = meta.indices[static_cast<std::size_t>(i)];
      if (index <= previous || index >= size[l])
        return fail(level() + ": array_indices[" + std::to_string(i) + "] = " + std::to_string(index) +
                    " is out of range [0, " + std::to_string(size[l]) + ") or not increasing");
      previous = index;
      coord[l] = index;
      LATTE_RETURN_IF_ERROR(visit(l + 1, static_cast<std::uint64_t>(i)));
    }
    return Status::Ok();
  };
  LATTE_RETURN_IF_ERROR(visit(0, 0));
  if (consumed != num_values)
    return fail("metadata places " + std::to_string(consumed) + " values, but " + std::to_string(num_values) +
                " are stored");
  return out;
}

namespace {

// Dense data of a constant: its own bytes, or expanded from its sparse form.
Expected<std::shared_ptr<const std::vector<std::uint8_t>>> DenseData(const TfModel& model, std::int32_t id,
                                                                     ByteBudget& budget) {
  const TfTensor& t = model.tensors[static_cast<std::size_t>(id)];
  if (!t.sparsity) return t.data;
  LATTE_ASSIGN_OR_RETURN(std::vector<std::uint8_t> dense, DensifyData(*t.sparsity, t.shape, DataTypeSize(t.dtype),
                                                                      *t.data, budget, DescribeTensor(model, id)));
  return std::make_shared<const std::vector<std::uint8_t>>(std::move(dense));
}

// float32 values of a constant read by DEQUANTIZE; nullopt when the type is not one
// DEQUANTIZE takes (the node then stays).
Expected<std::optional<std::vector<float>>> Dequantize(const TfTensor& t, const std::vector<std::uint8_t>& data,
                                                       const std::string& where) {
  const std::size_t size = DataTypeSize(t.dtype);
  if (size == 0 || data.size() % size != 0) return std::optional<std::vector<float>>();
  const std::size_t count = data.size() / size;
  std::vector<float> out(count);
  if (t.dtype == DataType::kFloat16) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint16_t h;
      std::memcpy(&h, data.data() + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
    return std::optional<std::vector<float>>(std::move(out));
  }
  if (t.dtype != DataType::kInt8 && t.dtype != DataType::kUInt8 && t.dtype != DataType::kInt16)
    return std::optional<std::vector<float>>();
  const QuantParams& q = t.quant;
  if (q.scale.empty()) return InvalidInput(where + ": quantized constant has no scale");
  // Per-channel parameters along quantized_dimension.
  std::size_t channels = 1, inner = 1;
  if (q.scale.size() > 1) {
    if (q.axis < 0 || static_cast<std::size_t>(q.axis) >= t.shape.size() ||
        t.shape[static_cast<std::size_t>(q.axis)] != static_cast<std::int64_t>(q.scale.size()))
      return InvalidInput(where + ": " + std::to_string(q.scale.size()) + " scales do not match dim " +
                          std::to_string(q.axis) + " of shape " + ShapeToString(t.shape));
    channels = q.scale.size();
    for (std::size_t d = static_cast<std::size_t>(q.axis) + 1; d < t.shape.size(); ++d)
      inner *= static_cast<std::size_t>(t.shape[d]);
  }
  if (!q.zero_point.empty() && q.zero_point.size() != 1 && q.zero_point.size() != q.scale.size())
    return InvalidInput(where + ": " + std::to_string(q.zero_point.size()) + " zero points for " +
                        std::to_string(q.scale.size()) + " scales");
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = channels == 1 ? 0 : (i / inner) % channels;
    std::int64_t value = 0;
    if (t.dtype == DataType::kInt8)
      value = static_cast<std::int8_t>(data[i]);
    else if (t.dtype == DataType::kUInt8)
      value = data[i];
    else {
      std::int16_t v;
      std::memcpy(&v, data.data() + 2 * i, 2);
      value = v;
    }
    const std::int64_t zero = q.zero_point.empty() ? 0 : q.zero_point[q.zero_point.size() == 1 ? 0 : c];
    out[i] = q.scale[c] * static_cast<float>(value - zero);
  }
  return std::optional<std::vector<float>>(std::move(out));
}

}  // namespace

Status FoldConstants(TfModel& model, std::vector<bool>& folded, ByteBudget& budget) {
  const std::size_t num_ops = model.operators.size();
  folded.assign(num_ops, false);
  // Foldable operators by the tensor they read, to follow chains in any file order.
  std::vector<std::vector<std::size_t>> readers(model.tensors.size());
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < num_ops; ++i) {
    const TfOperator& op = model.operators[i];
    if (op.builtin != kDensify && op.builtin != kDequantize) continue;
    if (op.inputs.empty() || op.inputs[0] < 0 || op.outputs.size() != 1) continue;
    readers[static_cast<std::size_t>(op.inputs[0])].push_back(i);
    if (model.tensors[static_cast<std::size_t>(op.inputs[0])].data) ready.push_back(i);
  }
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop_front();
    if (folded[i]) continue;
    const TfOperator& op = model.operators[i];
    const std::string where = DescribeOperator(op, i);
    const std::int32_t in_id = op.inputs[0], out_id = op.outputs[0];
    LATTE_ASSIGN_OR_RETURN(auto data, DenseData(model, in_id, budget));
    const TfTensor& in = model.tensors[static_cast<std::size_t>(in_id)];
    TfTensor& out = model.tensors[static_cast<std::size_t>(out_id)];
    auto in_elements = ShapeElements(in.shape), out_elements = ShapeElements(out.shape);
    if (!in_elements || !out_elements || *in_elements != *out_elements)
      return InvalidInput(where + ": output shape " + ShapeToString(out.shape) + " does not match input shape " +
                          ShapeToString(in.shape));
    if (op.builtin == kDensify) {
      if (out.dtype != in.dtype)
        return InvalidInput(where + ": output type " + std::string(DataTypeName(out.dtype)) +
                            " differs from input type " + std::string(DataTypeName(in.dtype)));
      out.data = data;
    } else {
      if (out.dtype != DataType::kFloat32) continue;  // not a dequantize to float: keep the node
      LATTE_ASSIGN_OR_RETURN(auto values, Dequantize(in, *data, DescribeTensor(model, in_id)));
      if (!values) continue;
      LATTE_RETURN_IF_ERROR(budget.Take(values->size() * sizeof(float), where));
      auto bytes = std::make_shared<std::vector<std::uint8_t>>(values->size() * sizeof(float));
      std::memcpy(bytes->data(), values->data(), bytes->size());
      out.data = std::move(bytes);
      out.quant = QuantParams();
    }
    out.shape_known = true;
    folded[i] = true;
    for (std::size_t next : readers[static_cast<std::size_t>(out_id)]) ready.push_back(next);
  }

  // Sparse constants that stay in the graph: read directly (TFLite's sparse FULLY_CONNECTED
  // does this) or listed as graph inputs or outputs.
  auto densify = [&](std::int32_t id) -> Status {
    if (id < 0) return Status::Ok();
    TfTensor& t = model.tensors[static_cast<std::size_t>(id)];
    if (!t.data || !t.sparsity) return Status::Ok();
    LATTE_ASSIGN_OR_RETURN(t.data, DenseData(model, id, budget));
    t.sparsity.reset();
    return Status::Ok();
  };
  for (std::size_t i = 0; i < num_ops; ++i)
    if (!folded[i])
      for (std::int32_t id : model.operators[i].inputs) LATTE_RETURN_IF_ERROR(densify(id));
  for (std::int32_t id : model.inputs) LATTE_RETURN_IF_ERROR(densify(id));
  for (std::int32_t id : model.outputs) LATTE_RETURN_IF_ERROR(densify(id));
  return Status::Ok();
}

}  // namespace latte::tflite
