#include "import/tflite/tflite_importer.h"

#include <algorithm>
#include <cstring>

#include "import/tflite/flatbuffer_reader.h"
#include "import/tflite/tflite_constants.h"
#include "import/tflite/tflite_model.h"
#include "import/tflite/tflite_ops.h"

namespace latte {
namespace {

using tflite::TfModel;

// Data the importer may create by expanding constants: fp16 → float32 doubles the weights,
// int8 → float32 quadruples them, sparse → dense multiplies them by the sparsity.
std::uint64_t ExpansionBudget(std::size_t file_size) {
  return std::max<std::uint64_t>(std::uint64_t{256} << 20, std::uint64_t{32} * file_size);
}

std::string Printable(std::span<const std::uint8_t> bytes) {
  std::string out;
  for (std::uint8_t c : bytes) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// One writer per tensor, never a constant or a graph input.
Status CheckWriters(const TfModel& model) {
  std::vector<std::int64_t> writer(model.tensors.size(), -1);
  std::vector<bool> is_input(model.tensors.size(), false);
  for (std::int32_t t : model.inputs) is_input[static_cast<std::size_t>(t)] = true;
  for (std::size_t i = 0; i < model.operators.size(); ++i) {
    const tflite::TfOperator& op = model.operators[i];
    for (std::int32_t t : op.outputs) {
      const auto id = static_cast<std::size_t>(t);
      const std::string where = tflite::DescribeOperator(op, i);
      if (writer[id] >= 0)
        return InvalidInput(tflite::DescribeTensor(model, t) + " is written by both " +
                            tflite::DescribeOperator(model.operators[static_cast<std::size_t>(writer[id])],
                                                     static_cast<std::size_t>(writer[id])) +
                            " and operator " + std::to_string(i) + " (" + tflite::OperatorName(op) + ")");
      if (model.tensors[id].data)
        return InvalidInput(where + ": writes " + tflite::DescribeTensor(model, t) + ", a constant");
      if (is_input[id]) return InvalidInput(where + ": writes " + tflite::DescribeTensor(model, t) + ", a graph input");
      writer[id] = static_cast<std::int64_t>(i);
    }
  }
  return Status::Ok();
}

Expected<Graph> Build(TfModel& model, std::size_t file_size) {
  LATTE_RETURN_IF_ERROR(CheckWriters(model));
  tflite::ByteBudget budget(ExpansionBudget(file_size));
  std::vector<bool> folded;
  LATTE_RETURN_IF_ERROR(tflite::FoldConstants(model, folded, budget));

  std::vector<Node> nodes;
  for (std::size_t i = 0; i < model.operators.size(); ++i) {
    if (folded[i]) continue;
    LATTE_ASSIGN_OR_RETURN(Node node, tflite::MapOperator(model, i));
    nodes.push_back(std::move(node));
  }

  // Keep the tensors something refers to (folded-away fp16 and sparse sources go), in
  // file order, renumbered.
  std::vector<TensorId> remap(model.tensors.size(), kNoTensor);
  auto use = [&](TensorId t) {
    if (t != kNoTensor) remap[static_cast<std::size_t>(t)] = 0;
  };
  for (const Node& n : nodes) {
    for (TensorId t : n.inputs) use(t);
    for (TensorId t : n.outputs) use(t);
  }
  for (std::int32_t t : model.inputs) use(t);
  for (std::int32_t t : model.outputs) use(t);

  Graph graph;
  graph.source_format = "tflite";
  graph.name = model.subgraph_name.empty() ? model.description : model.subgraph_name;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    if (remap[i] == kNoTensor) continue;
    tflite::TfTensor& src = model.tensors[i];
    Tensor t;
    t.name = std::move(src.name);
    t.dtype = src.dtype;
    t.shape = std::move(src.shape);
    t.shape_known = src.shape_known;
    t.quant = std::move(src.quant);
    t.data = std::move(src.data);
    remap[i] = graph.AddTensor(std::move(t));
  }
  auto map = [&](TensorId t) { return t == kNoTensor ? kNoTensor : remap[static_cast<std::size_t>(t)]; };
  for (Node& n : nodes) {
    for (TensorId& t : n.inputs) t = map(t);
    for (TensorId& t : n.outputs) t = map(t);
    graph.AddNode(std::move(n));
  }
  for (std::int32_t t : model.inputs) graph.inputs.push_back(map(t));
  for (std::int32_t t : model.outputs) graph.outputs.push_back(map(t));
  return graph;
}

}  // namespace

Expected<Graph> ImportTflite(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return InvalidInput("empty file (0 bytes): not a TFLite model");
  if (bytes.size() < 8)
    return InvalidInput("file of " + std::to_string(bytes.size()) + " bytes is too small to be a TFLite model");
  if (std::memcmp(bytes.data() + 4, "TFL3", 4) != 0)
    return InvalidInput("not a TFLite model: bytes 4-7 are '" + Printable(bytes.subspan(4, 4)) +
                        "', expected the file identifier 'TFL3'");
  // Flatbuffer scalars are read in place: give the reader an 8-byte aligned copy if needed.
  std::vector<std::uint64_t> aligned;
  std::span<const std::uint8_t> view = bytes;
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::uint64_t) != 0) {
    aligned.resize((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    view = std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(aligned.data()), bytes.size());
  }
  tflite::FlatReader reader(view);
  LATTE_ASSIGN_OR_RETURN(TfModel model, tflite::ReadModel(reader, view));
  return Build(model, bytes.size());
}

}  // namespace latte
