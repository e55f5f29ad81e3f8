#pragma once
// The TensorRT conv latency library (../shared/data/v100-tensorrt/): one line a convolution,
// `{Conv_type,Batch,In_C,In_H,In_W,Out_C,Kernel,Stride,ElmtFused} latency_ms`, -1 = TensorRT
// could not build or run it. Read into Kernels so predictors and the store share one key.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/dtype.h"
#include "ir/kernel.h"

namespace latte {

/// One line of the library. The kernel has op conv2d (Regular) or depthwise_conv2d (Depthwise)
/// and exactly the params the line gives: n ic ih iw oc kh kw sh sw g (groups: 1, or ic for
/// depthwise) and elmt_fused (0/1). No padding or dilation: the file does not say them.
struct TensorrtConvRow {
  Kernel kernel;
  double latency_ms = 0;  // as written; meaningless when failed
  bool failed = false;    // latency -1: TensorRT failed on this configuration
};

/// Parses one line (no trailing newline needed). `dtype` is the precision the file was measured
/// at (float32 for conv_data.out, float16 for conv_data.out.fp16, int8). Fails saying what is
/// wrong with the line (without file:line: the caller adds them).
Expected<TensorrtConvRow> ParseTensorrtConvLine(std::string_view line, DataType dtype = DataType::kFloat32);

/// A whole file: the valid (not failed) rows in file order, and how many lines said -1.
struct TensorrtConvFile {
  std::vector<TensorrtConvRow> rows;
  std::size_t failed_lines = 0;
  std::vector<std::size_t> line_numbers;  // 1-based line of each row in `rows`
};

/// Reads PATH. Blank lines are ignored; a malformed line fails as "PATH:LINE: what".
Expected<TensorrtConvFile> ReadTensorrtConvFile(const std::string& path, DataType dtype = DataType::kFloat32);

/// Inverse of ParseTensorrtConvLine: "{Regular,1,32,56,56,64,3,1,0} 0.123". ElmtFused is the
/// elmt_fused param, else 1 when an add is fused. Pads, bias and fused activations are not in the
/// format and are left out. Fails for a kernel the format cannot express: another op, a missing
/// param, non-square kernel or stride, dilation other than 1, groups other than 1 (conv2d) or ic
/// (depthwise), fused ops other than add and activations.
Expected<std::string> FormatTensorrtConvLine(const Kernel& kernel, double latency_ms);

}  // namespace latte
