#pragma once
// Tables measured elsewhere (devices we do not have), read into Kernels with their statistics
// before anything touches the store: a malformed line fails the whole file as "FILE:LINE: what",
// a line Latte cannot map to a real op kind is counted with the reason, never guessed.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "core/status.h"
#include "ir/kernel.h"

namespace latte {

/// One measured kernel of a table. Stats in microseconds; NaN where the table gives no figure,
/// n = 0 (the tables do not say how many runs).
struct TableRow {
  Kernel kernel;
  Stats stats;
  std::size_t line = 0;  // 1-based line in the file
  std::string device;    // the row's own device name (op-lut), else empty
};

/// A whole table read into rows.
struct ParsedTable {
  std::vector<TableRow> rows;
  std::size_t data_lines = 0;                  // non-blank lines holding a record (header excluded)
  std::map<std::string, std::size_t> skipped;  // why → how many lines (failed runs, unmappable ops)
  std::size_t SkippedCount() const;
};

/// Stats of a table that gives a single latency figure: p50 = `us`, everything else unknown (NaN).
Stats SingleFigureStats(double us);

/// The TensorRT conv library (tensorrt_conv.h): latency -1 lines skipped ("failed in TensorRT (-1)").
/// The one figure per line is stored as p50.
Expected<ParsedTable> ReadTensorrtConvTable(const std::string& path, std::string_view precision);

/// The operator latency look-up table: JSON lines with op_type, op_args, input_shapes,
/// input_dtypes, runtime_us_p0/p10/p50/p90/p100 and device. op_type and op_args are those of
/// Caffe2 operators (op_args: protobuf text of each argument, e.g. "name: \"stride\" i: 2", or
/// a JSON object name → value). Mapping (shapes as the op's `order` says, NCHW by default and NHWC
/// for Int8* ops):
/// - Conv, ConvRelu, Int8Conv, Int8ConvRelu → conv2d (+relu); groups == input channels with one
///   channel per group → depthwise_conv2d. Kernel size from the filter shape; stride(s), pad(s) /
///   pad_t.., dilation(s), group from the args. Params of kernel.h incl. bias (third input given).
/// - FC, Int8FC, Int8FCRelu → fully_connected m k n bias (+relu).
/// - MaxPool, AveragePool, Int8MaxPool, Int8AveragePool (+Relu) → max/avg_pool2d, or
///   global_max/avg_pool with global_pooling.
/// - Add, Sum, Int8Add, Int8Sum (+Relu) with two inputs → add; Mul → mul.
/// - Relu, Sigmoid, Tanh, Softmax and their Int8 forms → the unary kind (n h w c of the input).
/// - Int8Quantize → quantize, Int8Dequantize → dequantize.
/// dtype: uint8 for Int8* ops (Caffe2's quantized tensors), else from input_dtypes[0] (Caffe2
/// DataType numbers: 1 float32, 2 int32, 3/6 uint8, 7 int8, 10 int64, 12 float16).
/// Anything else (another op type, legacy_pad, ranks the kind cannot take) is skipped with why.
Expected<ParsedTable> ReadOpLutTable(const std::string& path);

/// Maps one op-LUT record; kUnsupported says why a valid record has no Latte kernel,
/// kInvalidInput that the record itself is wrong.
Expected<Kernel> KernelFromOpLutRecord(const nlohmann::json& record);

/// A CSV with a header line naming the columns (case-insensitive, surrounding spaces ignored;
/// fields may be "quoted"). Two layouts are understood:
/// - Latte's own export (csv_export): a `kernel_key` column and statistic columns n, p0_us,
///   p10_us, p50_us, p90_us, p99_us, p100_us, mean_us, std_us (any subset; at least p50_us or
///   mean_us). Other columns (device, backend, ...) are ignored: the command line names them.
/// - The TFLite estimator's conv table: kernel_size, filter_size (output channels), input_shape
///   ("[1, 32, 32, 16]", "32x32x16": N H W C with N = 1 when three numbers), stride, padding
///   (same|valid, TensorFlow's rule gives explicit pads) and a latency column: latency_ms,
///   latency_us, or latency_time, whose unit `latency_unit` ("ms" or "us") must then name.
///   Each row is conv2d with n ih iw ic oc kh kw sh sw dh dw g pt pl pb pr (no bias: not said).
Expected<ParsedTable> ReadCsvTable(const std::string& path, std::string_view latency_unit = {},
                                   std::string_view precision = "fp32");

}  // namespace latte
