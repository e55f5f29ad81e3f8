#pragma once
// An average pool whose window is its whole unpadded input is a global average pool: the same
// mean per channel. Exporters write SE blocks' squeeze that way (TFLite's AVERAGE_POOL_2D over
// the whole map); the plan runs it as the global pool the backends have (XNNPACK's global average
// pooling, which it also has at int8, where its windowed average pool is qu8 only) and keys it as
// one, so that it is measured and predicted as the kind it is.

#include "ir/graph.h"

namespace latte {

/// Turns each avg_pool2d of `graph` whose window covers its whole input (no padding, one output
/// pixel, no dilation) into a global_avg_pool of the same input, output, layout and fused
/// activation. Node and tensor ids are unchanged. Returns how many it turned.
int WholeWindowAvgPoolsToGlobal(Graph& graph);

}  // namespace latte
