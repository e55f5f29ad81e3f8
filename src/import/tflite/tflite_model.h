#pragma once
// The parts of a TFLite model the importer uses, read out of the flatbuffer with every index
// and size checked: operator codes, subgraph 0's tensors (with constant data and sparsity)
// and operators (with their options table still in the file).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "import/tflite/flatbuffer_reader.h"
#include "ir/tensor.h"

namespace latte::tflite {

/// Sparsity of a constant tensor (TFLite's variant of the TACO format).
struct SparsityInfo {
  struct Dim {
    bool sparse = false;                 // SPARSE_CSR, else DENSE
    std::int32_t dense_size = 0;         // DENSE: the size of this level
    std::vector<std::int32_t> segments;  // SPARSE_CSR: array_segments
    std::vector<std::int32_t> indices;   // SPARSE_CSR: array_indices
  };
  std::vector<std::int32_t> traversal_order;  // n + k entries
  std::vector<std::int32_t> block_map;        // k entries
  std::vector<Dim> dims;                      // one per traversal level
};

struct TfTensor {
  std::string name;
  std::int8_t raw_type = 0;  // TensorType as in the file
  DataType dtype = DataType::kUnknown;
  Shape shape;
  bool shape_known = true;
  QuantParams quant;
  /// Constant data (compressed values while `sparsity` is set); null for activations.
  std::shared_ptr<const std::vector<std::uint8_t>> data;
  std::optional<SparsityInfo> sparsity;

  /// Rank and every dimension known.
  bool fully_known() const {
    if (!shape_known) return false;
    for (auto d : shape)
      if (d < 0) return false;
    return true;
  }
};

struct TfOperator {
  std::int32_t builtin = 0;          // BuiltinOperator (kCustom for custom ops)
  std::string custom_code;           // for custom ops
  std::vector<std::int32_t> inputs;  // -1 = absent optional input
  std::vector<std::int32_t> outputs;
  std::uint8_t options_type = 0;  // BuiltinOptions union tag
  FbTable options;                // absent when options_type is 0
  std::span<const std::uint8_t> custom_options;
};

struct TfModel {
  std::uint32_t version = 0;
  std::string description;
  std::string subgraph_name;
  std::size_t num_subgraphs = 0;
  std::vector<TfTensor> tensors;  // of subgraph 0
  std::vector<TfOperator> operators;
  std::vector<std::int32_t> inputs, outputs;
};

/// Reads the model header, operator codes, buffers and subgraph 0. `reader` must view
/// `file` (which external buffers are read from). Fails with kInvalidInput naming the
/// table and field for anything out of range or malformed.
Expected<TfModel> ReadModel(FlatReader& reader, std::span<const std::uint8_t> file);

/// "CONV_2D", or the custom code for custom ops: what node.source_op says.
std::string OperatorName(const TfOperator& op);
/// "subgraph 0, operator 12 (CONV_2D)": how errors name an operator.
std::string DescribeOperator(const TfOperator& op, std::size_t index);
/// "subgraph 0, tensor 5 'conv1/weights'".
std::string DescribeTensor(const TfModel& model, std::int32_t index);

}  // namespace latte::tflite
