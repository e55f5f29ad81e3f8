#pragma once
// ONNX's own shape inference, run where a crash in it cannot take Latte down.

#include <onnx/onnx_pb.h>

namespace latte::onnx_import {

/// Runs ONNX's shape inference on `model` and stores what it found in the main graph's
/// value_info and output types. libonnx's inference is not hardened against hostile files
/// (1.12 segfaults on, for one, a LayerNormalization whose axis is out of range), so it runs
/// in a forked child that sends its results back through a pipe. If the child fails, crashes
/// or takes longer than a minute, the model is left as it was and false is returned; a
/// partial result (inference threw part way) is still used.
bool InferOnnxShapes(onnx::ModelProto& model);

}  // namespace latte::onnx_import
