#pragma once
// Import-time folding: shape arithmetic on constants (so that a Reshape's target becomes a
// constant) and BatchNormalization into the conv before it.

#include <onnx/onnx_pb.h>

#include <vector>

#include "import/onnx/onnx_import_state.h"

namespace latte::onnx_import {

/// If `proto` is shape arithmetic on constants — Shape of a tensor whose shape is known, or
/// Cast/Slice/Concat/Gather/Squeeze/Unsqueeze/Reshape/Identity of small integer constants —
/// stores the result as constant data on its output and returns true. Returns false for
/// anything else or anything it cannot be sure of; the node is then mapped as usual.
bool FoldShapeComputation(ImportState& state, const onnx::NodeProto& proto);

/// Folds each batch_norm whose input comes from a conv2d / depthwise_conv2d /
/// transpose_conv2d with constant float32 weights (and bias, if any), where the conv's output
/// feeds only that batch_norm and the BN parameters are constant: the weights are scaled per
/// output channel and the bias adjusted (or added), in float32. The conv then writes the BN's
/// output; folded BN nodes are marked in `removed` (indexed by node id). Returns how many.
int FoldBatchNorms(Graph& graph, std::vector<bool>& removed);

}  // namespace latte::onnx_import
