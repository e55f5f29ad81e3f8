// oneDNN's slice and gather (reorders of windows and rows) and what BERT's mask takes (its int64
// unsqueeze, its cast, 1 − mask), against answers computed here: slices of several ranks with negative, clamped and stepped
// bounds; gathers of an embedding table by int64 and int32 indices known only at run time
// (negative ones counting from the end), of constant indices (ViT's class token), and an index
// out of range refused with an error that names it, nothing read or written; the int64 → float cast
// refused, saying why; depth_to_space and space_to_depth as one reorder.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "run/backend_test_util.h"
#include "run/onednn/onednn_backend.h"
#include "run/reference_ops.h"
#include "run/tensor_buffers.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::ExpectClose;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;
using Bytes = std::vector<std::uint8_t>;

std::unique_ptr<Backend> MakeBackend() {
  auto backend = OnednnBackend::Create(RunOptions{});
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

template <typename T>
Bytes BytesOf(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// An integer constant of any shape (a scalar when `shape` is empty), int64 or int32.
TensorId IndexConstant(GraphBuilder& b, const std::string& name, const Shape& shape, const Ints& values, DataType dtype) {
  Tensor t;
  t.name = name;
  t.shape = shape;
  t.shape_known = true;
  t.dtype = dtype;
  if (dtype == DataType::kInt64) {
    t.data = std::make_shared<Bytes>(BytesOf(values));
  } else {
    t.data = std::make_shared<Bytes>(BytesOf(std::vector<std::int32_t>(values.begin(), values.end())));
  }
  return b.graph().AddTensor(std::move(t));
}

// Every node of `graph` on oneDNN, each run twice, the graph inputs filled with `inputs` (bytes,
// in order); the first output's floats, or the status of the first refusal or failed run.
Expected<Floats> RunOnOnednn(const Graph& graph, const std::vector<Bytes>& inputs) {
  auto backend = MakeBackend();
  if (!backend) return Internal("no onednn backend");
  LATTE_ASSIGN_OR_RETURN(TensorBuffers buffers, TensorBuffers::Allocate(graph));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorId id = graph.inputs[i];
    EXPECT_EQ(buffers.bytes(id), inputs[i].size()) << "input " << i;
    std::memcpy(buffers.mutable_data(id), inputs[i].data(), std::min(buffers.bytes(id), inputs[i].size()));
  }
  const TensorId out = graph.outputs[0];
  std::fill(buffers.mutable_as<float>(out), buffers.mutable_as<float>(out) + buffers.bytes(out) / sizeof(float), -7.0f);
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    if (Support support = backend->Supports(graph, n); !support.ok()) return Unsupported(support.why());
    LATTE_ASSIGN_OR_RETURN(auto prepared, backend->Prepare(graph, n));
    for (int run = 0; run < 2; ++run) LATTE_RETURN_IF_ERROR(prepared->Run(buffers));
  }
  const float* data = buffers.as<float>(out);
  return Floats(data, data + buffers.bytes(out) / sizeof(float));
}

// --- slice ------------------------------------------------------------------------------------

// A slice's answer computed directly from ONNX's rule: per axis, the indices Python's
// range(start, end, step) walks once negative bounds count from the end and both are clamped.
std::vector<Ints> Picked(const Shape& xs, const Ints& starts, const Ints& ends, const Ints& axes, const Ints& steps) {
  std::vector<Ints> picked(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) {
    picked[d].resize(static_cast<size_t>(xs[d]));
    std::iota(picked[d].begin(), picked[d].end(), 0);
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto rank = static_cast<std::int64_t>(xs.size());
    const std::int64_t named = axes.empty() ? static_cast<std::int64_t>(i) : axes[i];
    const auto axis = static_cast<size_t>(named < 0 ? named + rank : named);
    const std::int64_t dim = xs[axis], step = steps.empty() ? 1 : steps[i];
    std::int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    Ints out;
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, dim), e = std::clamp<std::int64_t>(e, 0, dim);
      for (std::int64_t v = s; v < e; v += step) out.push_back(v);
    } else {
      s = std::clamp<std::int64_t>(s, 0, dim - 1), e = std::clamp<std::int64_t>(e, -1, dim - 1);
      for (std::int64_t v = s; v > e; v += step) out.push_back(v);
    }
    picked[axis] = out;
  }
  return picked;
}

Floats SliceReference(const Floats& x, const Shape& xs, const std::vector<Ints>& picked) {
  Floats out;
  Ints at(xs.size(), 0);  // position in each picked list
  const size_t rank = xs.size();
  for (const Ints& p : picked)
    if (p.empty()) return out;
  while (true) {
    std::int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) flat = flat * xs[d] + picked[d][static_cast<size_t>(at[d])];
    out.push_back(x[static_cast<size_t>(flat)]);
    size_t d = rank;
    while (d > 0 && ++at[d - 1] == static_cast<std::int64_t>(picked[d - 1].size())) at[--d] = 0;
    if (d == 0) return out;
  }
}

TEST(OnednnSlice, WindowsOfSeveralRanksMatchOnnxsRule) {
  struct Case {
    Shape x;
    Ints starts, ends, axes, steps;
    Shape want;
  };
  const Case cases[] = {
      {{10}, {2}, {8}, {}, {}, {6}},
      {{3, 4}, {1, -3}, {3, -1}, {0, 1}, {}, {2, 2}},
      {{2, 5, 6}, {-100}, {4}, {-1}, {}, {2, 5, 4}},             // a start before the axis: clamped to 0
      {{1, 6, 7, 8}, {1, 2}, {1000, -2}, {1, 3}, {}, {1, 5, 7, 4}},  // an end past it: clamped to its size
      {{1, 6, 7, 8}, {0, 1}, {6, 7}, {1, 2}, {2, 3}, {1, 3, 2, 8}},  // steps of 2 and 3
      {{1, 6, 7, 8}, {-5, 0}, {100, 8}, {2, 3}, {2, 4}, {1, 6, 3, 2}},
      {{2, 3, 4, 5, 2}, {1, 1}, {2, 2}, {0, 4}, {}, {1, 3, 4, 5, 1}},
      {{2, 3, 4, 5, 2, 3}, {-2, 1, 0}, {-1, 5, 3}, {2, 3, 0}, {1, 2, 2}, {1, 3, 1, 2, 2, 3}},
  };
  std::uint32_t seed = 2100;
  for (const Case& c : cases) {
    GraphBuilder b;
    Attributes attrs = Attrs({{"starts", c.starts}, {"ends", c.ends}});
    if (!c.axes.empty()) attrs.Set("axes", c.axes);
    if (!c.steps.empty()) attrs.Set("steps", c.steps);
    const TensorId y = b.Op1(OpKind::kSlice, "slice", {b.Input("x", c.x)}, attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const std::string what = "slice of " + ShapeToString(c.x) + " to " + ShapeToString(c.want);
    ASSERT_EQ(g->tensor(y).shape, c.want) << what;
    const Floats x = Random(reference::Product(c.x), seed++);
    auto got = RunOnOnednn(*g, {BytesOf(x)});
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    ExpectClose(*got, SliceReference(x, c.x, Picked(c.x, c.starts, c.ends, c.axes, c.steps)), what);
  }
}

// Written out by hand: rows 1..2 and columns −3..−2 of a 3×4 matrix holding 0..11.
TEST(OnednnSlice, NegativeBoundsByHand) {
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kSlice, "slice", {b.Input("x", {3, 4})},
                           Attrs({{"starts", Ints{1, -3}}, {"ends", Ints{3, -1}}, {"axes", Ints{0, -1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  auto got = RunOnOnednn(*g, {BytesOf(x)});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, (Floats{5, 6, 9, 10}));
}

std::string WhyNot(const Graph& graph) {
  auto backend = MakeBackend();
  if (!backend) return "no backend";
  const auto last = static_cast<NodeId>(graph.num_nodes() - 1);
  const Support support = backend->Supports(graph, last);
  if (support.ok()) return "supported";
  auto prepared = backend->Prepare(graph, last);
  EXPECT_FALSE(prepared.ok());
  if (!prepared.ok()) {
    EXPECT_EQ(prepared.status().message(), support.why());
  }
  return support.why();
}

// Steps whose window oneDNN will not describe: the last axis stepped by 2 over a width of 3
// (elements 0 and 2 of each row) inside an axis of stride 3.
TEST(OnednnSlice, AStridedWindowOnednnRefusesIsUnsupportedSayingWhy) {
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kSlice, "slice", {b.Input("x", {2, 4, 3})},
                           Attrs({{"starts", Ints{0}}, {"ends", Ints{3}}, {"axes", Ints{2}}, {"steps", Ints{2}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::string why = WhyNot(*g);
  EXPECT_EQ(why.rfind("slice with steps: oneDNN 2.", 0), 0u) << why;
  EXPECT_NE(why.find(" refuses its strided window as a memory descriptor (dims 2,4,2, strides 12,3,2)"), std::string::npos) << why;
}

TEST(OnednnSlice, ANegativeStepIsUnsupportedSayingWhy) {
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kSlice, "slice", {b.Input("x", {4, 6})},
                           Attrs({{"starts", Ints{-1}}, {"ends", Ints{-100}}, {"axes", Ints{1}}, {"steps", Ints{-2}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(WhyNot(*g), "slice with a negative step (-2 on axis 1): a oneDNN reorder reads with non-negative strides only");
}

// --- gather -----------------------------------------------------------------------------------

// The rows of a [rows, width] table the (possibly negative) indices pick, in order.
Floats Rows(const Floats& table, std::int64_t rows, std::int64_t width, const Ints& indices) {
  Floats out;
  for (std::int64_t i : indices) {
    const std::int64_t r = i < 0 ? i + rows : i;
    out.insert(out.end(), table.begin() + r * width, table.begin() + (r + 1) * width);
  }
  return out;
}

// An embedding look-up: a constant table, token ids as a run-time input of either integer type.
TEST(OnednnGather, EmbeddingRowsByRunTimeInt64AndInt32Ids) {
  const std::int64_t rows = 10, width = 6;
  const Floats table = Random(rows * width, 2200);
  const Ints ids{0, 9, -1, 3, -10, 5};
  for (DataType dtype : {DataType::kInt64, DataType::kInt32}) {
    GraphBuilder b;
    const TensorId y = b.Op1(OpKind::kGather, "embed", {b.Constant("table", {rows, width}, table), b.Input("ids", {2, 3}, dtype)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_EQ(g->tensor(y).shape, (Shape{2, 3, width}));
    const Bytes input = dtype == DataType::kInt64 ? BytesOf(ids) : BytesOf(std::vector<std::int32_t>(ids.begin(), ids.end()));
    auto got = RunOnOnednn(*g, {input});
    ASSERT_TRUE(got.ok()) << DataTypeName(dtype) << ": " << got.status().message();
    EXPECT_EQ(*got, Rows(table, rows, width, ids)) << DataTypeName(dtype);
  }
}

// Run-time indices on an inner axis of an activation: each index copies its slab of every outer row.
TEST(OnednnGather, RunTimeIndicesOnAnInnerAxis) {
  const Shape xs{2, 5, 3};
  const Floats x = Random(30, 2201);
  const std::vector<std::int32_t> ids{4, -5, 2};
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kGather, "gather", {b.Input("x", xs), b.Input("ids", {3}, DataType::kInt32)},
                           Attrs({{"axis", std::int64_t{1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats want;
  for (std::int64_t o = 0; o < 2; ++o)
    for (std::int32_t i : ids)
      for (std::int64_t k = 0; k < 3; ++k) want.push_back(x[static_cast<size_t>((o * 5 + (i < 0 ? i + 5 : i)) * 3 + k)]);
  auto got = RunOnOnednn(*g, {BytesOf(x), BytesOf(ids)});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, want);
}

// ViT's class token, x[:, 0]: a scalar constant index on axis 1 drops the axis.
TEST(OnednnGather, ClassTokenByAConstantIndex) {
  const Shape xs{1, 17, 8};
  const Floats x = Random(17 * 8, 2202);
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kGather, "first_token",
                           {b.Input("x", xs), IndexConstant(b, "zero", {}, {0}, DataType::kInt64)}, Attrs({{"axis", std::int64_t{1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->tensor(y).shape, (Shape{1, 8}));
  auto got = RunOnOnednn(*g, {BytesOf(x)});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, Floats(x.begin(), x.begin() + 8));
}

// Constant indices in runs (3 4 5, then 1, then −1 = 6, then 2), on axis 1 of [2, 7, 4], int32.
TEST(OnednnGather, ConstantIndicesInRuns) {
  const Shape xs{2, 7, 4};
  const Floats x = Random(56, 2203);
  const Ints ids{3, 4, 5, 1, -1, 2};
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kGather, "gather", {b.Input("x", xs), IndexConstant(b, "ids", {2, 3}, ids, DataType::kInt32)},
                           Attrs({{"axis", std::int64_t{1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->tensor(y).shape, (Shape{2, 2, 3, 4}));
  Floats want;
  for (std::int64_t o = 0; o < 2; ++o) {
    const Floats slab(x.begin() + o * 28, x.begin() + (o + 1) * 28);
    const Floats rows = Rows(slab, 7, 4, ids);
    want.insert(want.end(), rows.begin(), rows.end());
  }
  auto got = RunOnOnednn(*g, {BytesOf(x)});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, want);
}

// An id past the table, either end: the run fails naming the indices, the index and the range,
// and the output is left as it was (nothing gathered before the check).
TEST(OnednnGather, AnIndexOutOfRangeIsRefusedWithAClearError) {
  const Floats table = Random(40, 2204);
  for (const Ints& ids : {Ints{1, 10, 2}, Ints{1, 2, -11}}) {
    GraphBuilder b;
    const TensorId y = b.Op1(OpKind::kGather, "embed", {b.Constant("table", {10, 4}, table), b.Input("ids", {3}, DataType::kInt64)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto backend = MakeBackend();
    ASSERT_NE(backend, nullptr);
    auto prepared = backend->Prepare(*g, 0);
    ASSERT_TRUE(prepared.ok()) << prepared.status().message();
    auto buffers = TensorBuffers::Allocate(*g);
    ASSERT_TRUE(buffers.ok());
    std::memcpy(buffers->mutable_data(g->inputs[0]), ids.data(), ids.size() * sizeof(std::int64_t));
    float* out = buffers->mutable_as<float>(y);
    std::fill(out, out + 12, 5.0f);
    const Status status = (*prepared)->Run(*buffers);
    EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
    const std::string bad = std::to_string(ids[1] == 10 ? 10 : -11), at = ids[1] == 10 ? "1" : "2";
    EXPECT_EQ(status.message(), "gather indices 'ids': index " + bad + " at position " + at + " is out of range [-10, 10)");
    EXPECT_EQ(Floats(out, out + 12), Floats(12, 5.0f));
  }
  // A constant index out of range: no node to run, said before anything is made.
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kGather, "first_token", {b.Input("x", {1, 5, 2}), IndexConstant(b, "at", {}, {5}, DataType::kInt64)},
                           Attrs({{"axis", std::int64_t{1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(WhyNot(*g), "gather indices 'at': index 5 at position 0 is out of range [-5, 5)");
}

TEST(OnednnGather, SaysNoWithTheReason) {
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kGather, "embed", {b.Input("table", {10, 4}, DataType::kInt64), b.Input("ids", {3}, DataType::kInt64)});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(WhyNot(*g), "input 'table' is int64: onednn runs fp32 only");
}

// --- sub of a broadcast first input ----------------------------------------------------------

// 1 − x (BERT's mask: a scalar constant first) and a [1, 3] row minus a [4, 3] matrix, as
// −(b − a) on oneDNN; with a fused relu after it. (Div has no such identity: onednn_ops_test says no.)
TEST(OnednnSub, BroadcastFirstInputAsNegatedSwap) {
  struct Case {
    Shape as, bs;
    bool constant_a;
    std::string act;
  };
  const Case cases[] = {{{}, {1, 1, 1, 8}, true, "none"}, {{1, 3}, {4, 3}, false, "none"}, {{3}, {2, 4, 3}, false, "relu"}};
  std::uint32_t seed = 2300;
  for (const Case& c : cases) {
    GraphBuilder b;
    const Floats a = c.as.empty() ? Floats{1.0f} : Random(reference::Product(c.as), seed++);
    const Floats bv = Random(reference::Product(c.bs), seed++);
    const TensorId at = c.constant_a ? b.Constant("a", c.as, a) : b.Input("a", c.as);
    const TensorId bt = b.Input("b", c.bs);
    const TensorId y = b.Op1(OpKind::kSub, "sub", {at, bt}, Attrs({{"activation", c.act}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats want = reference::Binary(a, c.as, bv, c.bs, c.bs, [](float p, float q) { return p - q; });
    reference::Activate(want, c.act);
    std::vector<Bytes> inputs;
    if (!c.constant_a) inputs.push_back(BytesOf(a));
    inputs.push_back(BytesOf(bv));
    auto got = RunOnOnednn(*g, inputs);
    const std::string what = "sub " + ShapeToString(c.as) + " − " + ShapeToString(c.bs);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    EXPECT_EQ(*got, want) << what;  // exact: b − a negated is a − b
  }
}

// --- BERT's mask: [1, S] int64 → unsqueeze → cast to float ------------------------------------

// An int64 tensor through the reshape family: a copy, values (beyond 32 bits too) untouched.
TEST(OnednnMask, Int64UnsqueezeCopiesTheValues) {
  const Ints mask{1, 0, -1, (std::int64_t{1} << 40) + 3, std::numeric_limits<std::int64_t>::min(), 7};
  for (DataType dtype : {DataType::kInt64, DataType::kInt32}) {
    GraphBuilder b;
    const TensorId y = b.Op1(OpKind::kUnsqueeze, "unsqueeze", {b.Input("attention_mask", {1, 6}, dtype)}, Attrs({{"axes", Ints{1, 2}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_EQ(g->tensor(y).shape, (Shape{1, 1, 1, 6}));
    auto backend = MakeBackend();
    ASSERT_NE(backend, nullptr);
    ASSERT_TRUE(backend->Supports(*g, 0).ok()) << backend->Supports(*g, 0).why();
    auto prepared = backend->Prepare(*g, 0);
    ASSERT_TRUE(prepared.ok()) << prepared.status().message();
    auto buffers = TensorBuffers::Allocate(*g);
    ASSERT_TRUE(buffers.ok());
    const Bytes in = dtype == DataType::kInt64 ? BytesOf(mask) : BytesOf(std::vector<std::int32_t>{1, 0, -1, 1 << 30, -(1 << 30), 7});
    std::memcpy(buffers->mutable_data(g->inputs[0]), in.data(), in.size());
    ASSERT_TRUE((*prepared)->Run(*buffers).ok());
    EXPECT_EQ(Bytes(buffers->data(y), buffers->data(y) + buffers->bytes(y)), in) << DataTypeName(dtype);
  }
}

TEST(OnednnMask, Int64CastIsUnsupportedSayingWhy) {
  GraphBuilder b;
  const TensorId y = b.Op1(OpKind::kCast, "cast", {b.Input("mask", {1, 1, 1, 6}, DataType::kInt64)}, Attrs({{"to", std::string("float32")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->tensor(y).dtype, DataType::kFloat32);
  const std::string why = WhyNot(*g);
  EXPECT_EQ(why.rfind("cast from int64 to float32 unsupported, because oneDNN 2.", 0), 0u) << why;
  EXPECT_NE(why.find(" has no 64-bit integer type"), std::string::npos) << why;
}

// --- depth_to_space / space_to_depth (face_detection_full_range_sparse's classifier) -------------

Floats RunOneNode(OpKind kind, const Shape& xs, const Attributes& attrs, const Floats& x, Shape* ys = nullptr) {
  GraphBuilder b;
  const TensorId y = b.Op1(kind, "op", {b.Input("x", xs)}, attrs);
  auto g = b.Finish({y});
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  if (ys != nullptr) *ys = g->tensor(y).shape;
  auto got = RunOnOnednn(*g, {BytesOf(x)});
  EXPECT_TRUE(got.ok()) << OpName(kind) << ": " << got.status().message();
  return got.ok() ? *got : Floats{};
}

TEST(OnednnDepthSpace, DepthToSpaceBothModesAndItsInverse) {
  const Shape xs{2, 3, 4, 12};  // block 2: 3 output channels
  const Floats x = Random(reference::Product(xs), 2400);
  Shape ys;
  const Floats dcr = RunOneNode(OpKind::kDepthToSpace, xs, Attrs({{"block_size", std::int64_t{2}}}), x, &ys);
  ASSERT_EQ(ys, (Shape{2, 6, 8, 3}));
  EXPECT_EQ(dcr, reference::DepthToSpace(x, xs, 2)) << "DCR";
  // CRD: output channel c of block offset (i, j) reads input channel c·4 + i·2 + j.
  Floats crd_want(x.size());
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t yy = 0; yy < 6; ++yy)
      for (std::int64_t xx = 0; xx < 8; ++xx)
        for (std::int64_t c = 0; c < 3; ++c)
          crd_want[static_cast<size_t>(((n * 6 + yy) * 8 + xx) * 3 + c)] =
              x[static_cast<size_t>(((n * 3 + yy / 2) * 4 + xx / 2) * 12 + c * 4 + (yy % 2) * 2 + xx % 2)];
  EXPECT_EQ(RunOneNode(OpKind::kDepthToSpace, xs, Attrs({{"block_size", std::int64_t{2}}, {"mode", std::string("CRD")}}), x), crd_want)
      << "CRD";
  // space_to_depth undoes DCR's depth_to_space.
  EXPECT_EQ(RunOneNode(OpKind::kSpaceToDepth, ys, Attrs({{"block_size", std::int64_t{2}}}), dcr), x) << "space_to_depth";
}

}  // namespace
}  // namespace latte
