#pragma once
// Import-time folding: what is computed from constants (shape subgraphs, so that a Reshape's
// target or a Resize's sizes become constants; filled constants such as a Pad's) and
// BatchNormalization into the conv before it.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "import/onnx/onnx_import_state.h"

namespace latte::onnx_import {

/// If `proto` computes a constant from constants — Shape or Size of a tensor whose shape is
/// known; Cast, Slice, Concat, Gather, Squeeze, Unsqueeze, Reshape, Identity; Add, Sub, Mul,
/// Div (integers toward zero), Mod, Min, Max, Neg, Abs, Floor, Ceil, Round; the comparisons,
/// Not, And, Or, Xor and Where; ConstantOfShape, Range, Expand and Tile — stores the result as
/// constant data on its output and returns true. Only exact results fold: integers that would
/// overflow, a division by zero, a type it does not compute in (float16, strings) or a result
/// beyond its size caps leave the node to be mapped as usual. Then, for an op it has a rule for,
/// `why_not` (if given) says why, naming the input that is not a constant.
bool FoldConstantNode(ImportState& state, const onnx::NodeProto& proto, std::string* why_not = nullptr);

/// Folds each batch_norm whose input comes from a conv2d / depthwise_conv2d /
/// transpose_conv2d with constant float32 weights (and bias, if any), where the conv's output
/// feeds only that batch_norm and the BN parameters are constant: the weights are scaled per
/// output channel and the bias adjusted (or added), in float32. The conv then writes the BN's
/// output; folded BN nodes are marked in `removed` (indexed by node id). Returns how many.
int FoldBatchNorms(Graph& graph, std::vector<bool>& removed);

}  // namespace latte::onnx_import
