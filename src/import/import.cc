#include "import/import.h"

#include <cstring>
#include <set>

#include "core/file.h"
#include "import/onnx/onnx_importer.h"
#include "import/tflite/tflite_importer.h"
#include "ir/shape_inference.h"

namespace latte {

ModelFormat DetectModelFormat(std::span<const std::uint8_t> bytes, const std::string& path) {
  // A TFLite flatbuffer carries the file identifier "TFL3" at bytes 4..7.
  if (bytes.size() >= 8 && std::memcmp(bytes.data() + 4, "TFL3", 4) == 0) return ModelFormat::kTflite;
  auto ends_with = [&](const char* ext) {
    size_t n = std::strlen(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (ends_with(".tflite")) return ModelFormat::kTflite;  // wrong magic: the TFLite reader says so
  // An ONNX ModelProto starts with a protobuf tag; field 1 (ir_version, varint) is usual.
  if (ends_with(".onnx") || (!bytes.empty() && (bytes[0] == 0x08 || bytes[0] == 0x0a || bytes[0] == 0x12 ||
                                                bytes[0] == 0x1a || bytes[0] == 0x3a || bytes[0] == 0x42)))
    return ModelFormat::kOnnx;
  return ModelFormat::kUnknown;
}

Expected<Graph> ImportModelBytes(std::span<const std::uint8_t> bytes, ModelFormat format,
                                 const ImportOptions& options) {
  Expected<Graph> imported = InvalidInput("not a TFLite or ONNX model (unrecognized first bytes)");
  switch (format) {
    case ModelFormat::kTflite:
      if (!options.input_values.empty())
        return InvalidInput("--input-value " + options.input_values.begin()->first +
                            ": Latte takes input values for ONNX models only (a TFLite file has no If or shape subgraph to fold)");
      imported = ImportTflite(bytes);
      break;
    case ModelFormat::kOnnx: imported = ImportOnnx(bytes, options); break;
    case ModelFormat::kUnknown: break;
  }
  if (!imported.ok()) return imported.status();
  Graph graph = std::move(imported).value();

  // Input shapes: the caller's, else the file's with an unknown leading dim read as batch 1.
  std::set<std::string> used;
  for (TensorId id : graph.inputs) {
    Tensor& t = graph.mutable_tensor(id);
    auto it = options.input_shapes.find(t.name);
    if (it != options.input_shapes.end()) {
      t.shape = it->second;
      t.shape_known = true;
      used.insert(it->first);
      continue;
    }
    if (!t.shape_known) return InvalidInput("input '" + t.name + "' has unknown rank; give it with --input-shape " + t.name + "=...");
    if (!t.shape.empty() && t.shape[0] < 0) t.shape[0] = 1;
    for (auto d : t.shape)
      if (d < 0)
        return InvalidInput("input '" + t.name + "' has shape " + ShapeToString(t.shape) +
                            " with unknown dims; give it with --input-shape " + t.name + "=...");
  }
  // Shapes the file declared downstream of a changed input are stale: infer them anew.
  // (Opaque nodes keep theirs; nothing else can say what they produce.)
  if (!used.empty())
    for (const Node& node : graph.nodes())
      if (node.kind != OpKind::kOpaque)
        for (TensorId t : node.outputs) graph.mutable_tensor(t).shape_known = false;
  for (const auto& [name, shape] : options.input_shapes)
    if (!used.count(name) && !options.input_values.count(name) && !options.skip_unknown_input_names) {
      std::string names;
      for (TensorId id : graph.inputs) names += (names.empty() ? "" : ", ") + graph.tensor(id).name;
      return InvalidInput("--input-shape names '" + name + "', but the model's inputs are: " + names);
    }

  LATTE_RETURN_IF_ERROR(graph.Validate());
  LATTE_RETURN_IF_ERROR(graph.SortTopologically());
  LATTE_RETURN_IF_ERROR(InferShapes(graph));
  return graph;
}

Expected<Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  LATTE_ASSIGN_OR_RETURN(std::vector<std::uint8_t> bytes, ReadFileBytes(path));
  return ImportModelBytes(bytes, DetectModelFormat(bytes, path), options);
}

Status CheckInputShapesNamed(const std::map<std::string, Shape>& shapes, const std::set<std::string>& inputs) {
  for (const auto& [name, shape] : shapes)
    if (!inputs.count(name)) return InvalidInput("--input-shape names '" + name + "', but no model has an input of that name");
  return Status::Ok();
}

}  // namespace latte
