#pragma once
// Model import: reads a .tflite or .onnx file into a Graph with every shape inferred.

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

struct ImportOptions {
  /// Graph input name → shape, overriding the file (dynamic dims, batch). Inputs with dynamic
  /// dims not named here get batch 1 for their first dim; other unknown dims are an error.
  std::map<std::string, Shape> input_shapes;
  /// A name in `input_shapes` that is not one of this model's inputs is an error, unless this
  /// is set (one list of shapes given for several models; the caller checks each name is used).
  bool skip_unknown_input_names = false;
  /// Graph input name → its value, one text per element in row-major order ("16000"; "1", "3",
  /// "16", "24"), read as the input's type (integer, bool, float32 or float64) and shape (from
  /// `input_shapes` or the file, fully known). The input becomes a constant for the import, so
  /// what is computed from it folds (an If on it is inlined). ONNX models only; every name
  /// must be an input of the model, `skip_unknown_input_names` notwithstanding.
  std::map<std::string, std::vector<std::string>> input_values;
};

enum class ModelFormat { kUnknown, kTflite, kOnnx };

/// Guesses the format from the bytes (TFLite's "TFL3" identifier; else ONNX protobuf), using
/// the file extension only to break ties.
ModelFormat DetectModelFormat(std::span<const std::uint8_t> bytes, const std::string& path);

/// Reads `path`, imports it, applies `options`, infers shapes, validates. Error messages do
/// not repeat the path: the caller prints "error: PATH: message".
Expected<Graph> ImportModel(const std::string& path, const ImportOptions& options = {});

/// The check `skip_unknown_input_names` leaves to its caller: kInvalidInput naming the first of
/// `shapes` that is no input of any model imported with them (`inputs`: those models' input names).
Status CheckInputShapesNamed(const std::map<std::string, Shape>& shapes, const std::set<std::string>& inputs);

/// The same from bytes already in memory (fuzzers, tests).
Expected<Graph> ImportModelBytes(std::span<const std::uint8_t> bytes, ModelFormat format,
                                 const ImportOptions& options = {});

}  // namespace latte
