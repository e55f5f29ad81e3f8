// --precision int8: the executor quantizes an fp32 graph post-training (activation ranges from
// fp32 runs, run/int8_plan), and XNNPACK or oneDNN runs the int8 nodes, or ONNX Runtime the whole
// graph exported in QDQ form. A quantized conv, depthwise conv and fully-connected layer match a
// reference computed here from the same quantized inputs and weights within one output step on
// each; adds and pools on the backends that run them int8; a kind without an int8 operator stays
// fp32 with the reason, and conversions are inserted where the precisions meet.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "import/export/onnx_export.h"
#include "import/import.h"
#include "ir/graph_builder.h"
#include "run/backend_test_util.h"
#include "run/executor.h"
#include "run/int8_plan.h"
#include "run/output_drift.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

BackendRegistry Registry() {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOrtBackend(registry);
  RegisterOnednnBackend(registry);
  return registry;
}

// The backends that run --precision int8, each checked against the same references.
const std::vector<std::string> kInt8Backends = {"xnnpack", "ort", "onednn"};

Expected<std::unique_ptr<Executor>> Int8Executor(const Graph& graph, const BackendRegistry& registry,
                                                 const std::string& backend = "xnnpack") {
  Placement placement;
  placement.default_backend = backend;
  RunOptions options;
  options.precision = Precision::kInt8;
  return Executor::Create(graph, placement, registry, options);
}

// `int8` and an fp32 executor of `graph` on `backend`, run on the same generated inputs: how far
// the int8 run's outputs are from fp32's.
Expected<RunDrift> DriftFromFp32(const Graph& graph, Executor& int8, const std::string& backend, const BackendRegistry& registry) {
  Placement placement;
  placement.default_backend = backend;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> fp32, Executor::Create(graph, placement, registry, RunOptions{}));
  FillRandomInputs(graph, fp32->buffers());
  FillRandomInputs(graph, int8.buffers());
  LATTE_RETURN_IF_ERROR(fp32->Run());
  LATTE_RETURN_IF_ERROR(int8.Run());
  return CompareOutputs(graph, fp32->buffers(), int8.buffers(), "fp32");
}

// The parameters the executor gave the int8 twin of `name` ("x/int8", "y/int8").
QuantParams ParamsOf(const Graph& prepared, const std::string& name) {
  for (const Tensor& t : prepared.tensors())
    if (t.name == name) return t.quant;
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

// Round to nearest, saturated to int8, back to real: a value as the int8 activation holds it.
float FakeQuantize(float v, const QuantParams& q) {
  const double s = q.scale.at(0), z = static_cast<double>(q.zero_point.at(0));
  const double level = std::clamp(std::nearbyint(v / s) + z, -128.0, 127.0);
  return static_cast<float>((level - z) * s);
}

// Symmetric per-output-channel weights (channel c at i % channels or in block c), as real values.
Floats FakeQuantizeWeights(const Floats& w, size_t channels, bool channel_is_last) {
  std::vector<double> max(channels, 0.0);
  auto channel = [&](size_t i) { return channel_is_last ? i % channels : i / (w.size() / channels); };
  for (size_t i = 0; i < w.size(); ++i) max[channel(i)] = std::max(max[channel(i)], static_cast<double>(std::abs(w[i])));
  Floats out(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const double s = max[channel(i)] / 127.0;
    out[i] = s > 0 ? static_cast<float>(std::round(w[i] / s) * s) : 0.0f;
  }
  return out;
}

// Runs the one-node graph at int8 on inputs `xs` (one per graph input) and checks each output
// against `reference` (of the fake-quantized inputs) within one step of the output's scale, after
// the reference is clamped to `act` and to what the output's int8 can hold. Unless `exact` (a max
// pool picks one of its int8 inputs: the reference's floats exactly), an output equal to the
// reference everywhere means the node did not run in int8.
void ExpectInputsWithinOneStepOn(const std::string& backend, const Graph& graph, const std::vector<Floats>& xs,
                                 const std::function<Floats(const std::vector<Floats>&)>& reference, float act_min,
                                 float act_max, const std::string& what, bool exact = false) {
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(graph, registry, backend);
  ASSERT_TRUE(executor.ok()) << what << ": " << executor.status().message();
  Executor& e = **executor;
  ASSERT_EQ(e.assignments().size(), 1u);
  ASSERT_EQ(e.assignments()[0].precision, Precision::kInt8) << what << ": " << e.assignments()[0].precision_why;
  // a quantize per input, the int8 node, dequantize
  ASSERT_EQ(xs.size(), graph.inputs.size());
  ASSERT_EQ(e.entries().size(), xs.size() + 2) << what;
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(e.entries()[i].op, "quantize");
  EXPECT_EQ(e.entries().back().op, "dequantize");
  const Graph& prepared = e.prepared_graph();
  std::vector<Floats> xq;
  for (size_t i = 0; i < xs.size(); ++i) {
    const QuantParams qx = ParamsOf(prepared, graph.tensor(graph.inputs[i]).name + "/int8");
    ASSERT_EQ(qx.scale.size(), 1u);
    std::copy(xs[i].begin(), xs[i].end(), e.buffers().mutable_as<float>(graph.inputs[i]));
    xq.emplace_back(xs[i].size());
    for (size_t k = 0; k < xs[i].size(); ++k) xq.back()[k] = FakeQuantize(xs[i][k], qx);
  }
  const QuantParams qy = ParamsOf(prepared, graph.tensor(graph.outputs[0]).name + "/int8");
  ASSERT_EQ(qy.scale.size(), 1u);
  ASSERT_TRUE(e.Run().ok());
  const float* got = e.buffers().as<float>(graph.outputs[0]);
  const Floats want = reference(xq);
  const float step = qy.scale[0];
  const float lo = (-128.0f - static_cast<float>(qy.zero_point[0])) * step, hi = (127.0f - static_cast<float>(qy.zero_point[0])) * step;
  float worst = 0;
  size_t at = 0;
  bool differs = false;
  for (size_t i = 0; i < want.size(); ++i) {
    const float r = std::clamp(std::clamp(want[i], act_min, act_max), lo, hi);
    const float err = std::abs(got[i] - r);
    if (err > worst) worst = err, at = i;
    differs = differs || got[i] != want[i];
  }
  EXPECT_LE(worst, step) << what << ": element " << at << " is " << got[at] << " in int8, the reference " << want[at]
                         << " (one step: " << step << ")";
  if (!exact) {
    EXPECT_TRUE(differs) << what << ": int8 gave the reference's floats exactly; was it run in int8?";
  }
}

// The same for a graph of one input.
void ExpectWithinOneStepOn(const std::string& backend, const Graph& graph, const Floats& x,
                           const std::function<Floats(const Floats&)>& reference, float act_min, float act_max,
                           const std::string& what, bool exact = false) {
  ExpectInputsWithinOneStepOn(
      backend, graph, {x}, [&](const std::vector<Floats>& xq) { return reference(xq[0]); }, act_min, act_max, what, exact);
}

// On every int8 backend.
void ExpectWithinOneStep(const Graph& graph, const Floats& x, const std::function<Floats(const Floats&)>& reference,
                         float act_min, float act_max, const std::string& what) {
  for (const std::string& backend : kInt8Backends) {
    SCOPED_TRACE(backend);
    ExpectWithinOneStepOn(backend, graph, x, reference, act_min, act_max, what + " on " + backend);
  }
}

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Int8, Conv2DWithinOneStepOfReference) {
  const std::int64_t H = 9, W = 7, C = 4, O = 6, K = 3, S = 2;
  const std::int64_t OH = (H - K) / S + 1, OW = (W - K) / S + 1;
  const Floats w = Random(O * K * K * C, 1, -0.3f, 0.3f), b = Random(O, 2);
  const Floats wq = FakeQuantizeWeights(w, static_cast<size_t>(O), false);
  for (const char* act : {"none", "relu6"}) {
    GraphBuilder gb;
    TensorId x = gb.Input("x", {1, H, W, C});
    TensorId y = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {O, K, K, C}, w), gb.Constant("b", {O}, b)},
                        Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")},
                               {"strides", Ints{S, S}}, {"activation", std::string(act)}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto conv = [&](const Floats& xq) {
      Floats out(static_cast<size_t>(OH * OW * O));
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow)
          for (std::int64_t o = 0; o < O; ++o) {
            double sum = b[static_cast<size_t>(o)];
            for (std::int64_t kh = 0; kh < K; ++kh)
              for (std::int64_t kw = 0; kw < K; ++kw)
                for (std::int64_t c = 0; c < C; ++c)
                  sum += static_cast<double>(xq[static_cast<size_t>(((oh * S + kh) * W + ow * S + kw) * C + c)]) *
                         wq[static_cast<size_t>(((o * K + kh) * K + kw) * C + c)];
            out[static_cast<size_t>((oh * OW + ow) * O + o)] = static_cast<float>(sum);
          }
      return out;
    };
    const bool relu6 = std::string(act) == "relu6";
    ExpectWithinOneStep(*g, Random(H * W * C, 3), conv, relu6 ? 0.0f : -kInf, relu6 ? 6.0f : kInf, std::string("conv2d ") + act);
  }
}

TEST(Int8, DepthwiseConv2DWithinOneStepOfReference) {
  const std::int64_t H = 6, W = 6, C = 8, K = 3;
  const Floats w = Random(K * K * C, 4, -0.5f, 0.5f), b = Random(C, 5);
  const Floats wq = FakeQuantizeWeights(w, static_cast<size_t>(C), true);
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, H, W, C});
  TensorId y = gb.Op1(OpKind::kDepthwiseConv2D, "dw", {x, gb.Constant("w", {1, K, K, C}, w), gb.Constant("b", {C}, b)},
                      Attrs({{"filter_layout", std::string("1HWO")}, {"padding", std::string("valid")},
                             {"groups", C}, {"depth_multiplier", std::int64_t{1}}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::int64_t OH = H - K + 1, OW = W - K + 1;
  auto dw = [&](const Floats& xq) {
    Floats out(static_cast<size_t>(OH * OW * C));
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow)
        for (std::int64_t c = 0; c < C; ++c) {
          double sum = b[static_cast<size_t>(c)];
          for (std::int64_t kh = 0; kh < K; ++kh)
            for (std::int64_t kw = 0; kw < K; ++kw)
              sum += static_cast<double>(xq[static_cast<size_t>(((oh + kh) * W + ow + kw) * C + c)]) *
                     wq[static_cast<size_t>((kh * K + kw) * C + c)];
          out[static_cast<size_t>((oh * OW + ow) * C + c)] = static_cast<float>(sum);
        }
    return out;
  };
  ExpectWithinOneStep(*g, Random(H * W * C, 6), dw, -kInf, kInf, "depthwise_conv2d");
}

TEST(Int8, FullyConnectedWithinOneStepOfReference) {
  const std::int64_t R = 3, I = 16, O = 5;
  const Floats w = Random(O * I, 7, -0.2f, 0.2f), b = Random(O, 8);
  for (const char* layout : {"OI", "IO"}) {
    const bool oi = std::string(layout) == "OI";
    // Per output channel: o's weights at [o, :] (OI) or [:, o] (IO).
    const Floats wq = FakeQuantizeWeights(w, static_cast<size_t>(O), !oi);
    GraphBuilder gb;
    TensorId x = gb.Input("x", {R, I});
    TensorId y = gb.Op1(OpKind::kFullyConnected, "fc", {x, gb.Constant("w", oi ? Shape{O, I} : Shape{I, O}, w), gb.Constant("b", {O}, b)},
                        Attrs({{"weights_layout", std::string(layout)}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto fc = [&](const Floats& xq) {
      Floats out(static_cast<size_t>(R * O));
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t o = 0; o < O; ++o) {
          double sum = b[static_cast<size_t>(o)];
          for (std::int64_t i = 0; i < I; ++i)
            sum += static_cast<double>(xq[static_cast<size_t>(r * I + i)]) * wq[static_cast<size_t>(oi ? o * I + i : i * O + o)];
          out[static_cast<size_t>(r * O + o)] = static_cast<float>(sum);
        }
      return out;
    };
    ExpectWithinOneStep(*g, Random(R * I, 9), fc, -kInf, kInf, std::string("fully_connected ") + layout);
    // Rows in a rank-3 input kept as they are: ONNX Runtime's export is a MatMul and an Add
    // there, not a Gemm.
    GraphBuilder gb3;
    TensorId x3 = gb3.Input("x", {1, R, I});
    TensorId y3 = gb3.Op1(OpKind::kFullyConnected, "fc", {x3, gb3.Constant("w", oi ? Shape{O, I} : Shape{I, O}, w), gb3.Constant("b", {O}, b)},
                          Attrs({{"weights_layout", std::string(layout)}, {"keep_num_dims", std::int64_t{1}}}));
    auto g3 = gb3.Finish({y3});
    ASSERT_TRUE(g3.ok()) << g3.status().message();
    ExpectWithinOneStepOn("ort", *g3, Random(R * I, 9), fc, -kInf, kInf, std::string("rank-3 fully_connected ") + layout);
  }
}

// A transposed conv (a decoder's upsampling), on oneDNN's s8 deconvolution: weights per output
// channel as the conv's (XNNPACK's qs8 deconvolution takes one weight scale: it stays fp32 there).
TEST(Int8, TransposeConv2DWithinOneStepOfReferenceOnOnednn) {
  const std::int64_t C = 4, O = 6, K = 3;
  const Floats w = Random(O * K * K * C, 40, -0.3f, 0.3f), b = Random(O, 41);
  const Floats wq = FakeQuantizeWeights(w, static_cast<size_t>(O), false);
  for (const char* act : {"none", "relu"}) {
    GraphBuilder gb;
    TensorId x = gb.Input("x", {1, 5, 7, C});
    TensorId y = gb.Op1(OpKind::kTransposeConv2D, "up", {x, gb.Constant("w", {O, K, K, C}, w), gb.Constant("b", {O}, b)},
                        Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{2, 2}}, {"padding", std::string("same")},
                               {"activation", std::string(act)}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto up = [&](const Floats& xq) { return reference::TransposeConv2D(xq, wq, b, *p); };
    const bool relu = std::string(act) == "relu";
    ExpectWithinOneStepOn("onednn", *g, Random(5 * 7 * C, 42), up, relu ? 0.0f : -kInf, kInf, std::string("transpose_conv2d ") + act);
  }
}

// add and sub of two activations, each with its own scale and zero point from the calibration
// runs (the inputs here reach past the generated ones' range: saturated, as the reference has them),
// with and without a fused relu6. ONNX Runtime fuses a QDQ add only.
TEST(Int8, AddAndSubWithinOneStepOfReference) {
  const Shape s{1, 5, 6, 8};
  const auto n = static_cast<size_t>(reference::Product(s));
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub})
    for (const char* act : {"none", "relu6"}) {
      GraphBuilder gb;
      TensorId a = gb.Input("a", s), b = gb.Input("b", s);
      TensorId y = gb.Op1(kind, "op", {a, b}, Attrs({{"activation", std::string(act)}}));
      auto g = gb.Finish({y});
      ASSERT_TRUE(g.ok()) << g.status().message();
      const float sign = kind == OpKind::kSub ? -1.0f : 1.0f;
      auto op = [&](const std::vector<Floats>& xq) {
        Floats out(n);
        for (size_t k = 0; k < n; ++k) out[k] = xq[0][k] + sign * xq[1][k];
        return out;
      };
      const bool relu6 = std::string(act) == "relu6";
      std::vector<std::string> backends = {"xnnpack", "onednn"};
      if (kind == OpKind::kAdd && !relu6) backends.push_back("ort");
      for (const std::string& backend : backends) {
        const std::string what = std::string(OpName(kind)) + " " + act + " on " + backend;
        ExpectInputsWithinOneStepOn(backend, *g, {Random(static_cast<std::int64_t>(n), 20, -1.0f, 1.0f), Random(static_cast<std::int64_t>(n), 21, -1.5f, 0.5f)},
                                    op, relu6 ? 0.0f : -kInf, relu6 ? 6.0f : kInf, what);
      }
    }
}

// An add of a constant per channel (a bias the graph adds on its own): XNNPACK quantizes the
// constant, oneDNN reads it as floats.
TEST(Int8, AddOfAConstantWithinOneStepOfReference) {
  const Shape s{1, 4, 5, 8};
  const auto n = static_cast<size_t>(reference::Product(s));
  const Floats c = Random(8, 22, -0.5f, 0.5f);
  GraphBuilder gb;
  TensorId y = gb.Op1(OpKind::kAdd, "add", {gb.Input("x", s), gb.Constant("c", {8}, c)});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto op = [&](const Floats& xq) {
    Floats out(n);
    for (size_t k = 0; k < n; ++k) out[k] = xq[k] + c[k % 8];
    return out;
  };
  for (const std::string backend : {"xnnpack", "onednn"})
    ExpectWithinOneStepOn(backend, *g, Random(static_cast<std::int64_t>(n), 23), op, -kInf, kInf, "add of a constant on " + backend);
}

// A product of int8 values with zero points on oneDNN (its binary takes none: the second operand is
// made f32 with its zero point taken off first): two maps, a map by one value per channel as a
// squeeze-and-excite scales it (either operand first), by one value, and by a float32 constant.
TEST(Int8, MulWithinOneStepOfReferenceOnOnednn) {
  const Shape s{1, 5, 6, 8};
  const auto n = static_cast<size_t>(reference::Product(s));
  const Floats map = Random(static_cast<std::int64_t>(n), 28, -1.0f, 2.0f);
  struct Case {
    std::string what;
    Shape other;
    bool other_first;
    std::string act;
  };
  const Case cases[] = {{"two maps", s, false, "none"},          {"two maps, relu", s, false, "relu"},
                        {"per channel", {1, 1, 1, 8}, false, "none"}, {"per channel first", {1, 1, 1, 8}, true, "none"},
                        {"one value", {1}, false, "none"}};
  for (const Case& c : cases) {
    const auto m = static_cast<size_t>(reference::Product(c.other));
    GraphBuilder gb;
    TensorId x = gb.Input("x", s), w = gb.Input("w", c.other);
    TensorId y = gb.Op1(OpKind::kMul, "mul", c.other_first ? std::vector<TensorId>{w, x} : std::vector<TensorId>{x, w},
                        Attrs({{"activation", c.act}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto op = [&](const std::vector<Floats>& xq) {
      Floats out(n);
      for (size_t k = 0; k < n; ++k) out[k] = xq[0][k] * xq[1][k % m];  // the graph's inputs: x, then w
      return out;
    };
    ExpectInputsWithinOneStepOn("onednn", *g, {map, Random(static_cast<std::int64_t>(m), 29, -0.5f, 1.5f)}, op,
                                c.act == "relu" ? 0.0f : -kInf, kInf, "mul of " + c.what + " on onednn");
  }
  GraphBuilder gb;
  const Floats w = Random(8, 30, 0.2f, 1.2f);
  TensorId y = gb.Op1(OpKind::kMul, "mul", {gb.Constant("w", {8}, w), gb.Input("x", s)});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto op = [&](const Floats& xq) {
    Floats out(n);
    for (size_t k = 0; k < n; ++k) out[k] = xq[k] * w[k % 8];
    return out;
  };
  ExpectWithinOneStepOn("onednn", *g, map, op, -kInf, kInf, "mul of a constant on onednn");
}

// Max pools keep their input's parameters; average pools rescale to their output's (XNNPACK's
// windowed average pool is qu8 only, so it is checked on oneDNN alone).
TEST(Int8, PoolsWithinOneStepOfReference) {
  struct Case {
    OpKind kind;
    std::int64_t kernel, stride;
    std::string padding;
    std::vector<std::string> backends;
  };
  const Shape xs{1, 9, 7, 8};
  const Case cases[] = {
      {OpKind::kMaxPool2D, 3, 2, "same", {"xnnpack", "onednn"}}, {OpKind::kAvgPool2D, 3, 2, "same", {"onednn"}},
      {OpKind::kAvgPool2D, 2, 2, "valid", {"onednn"}},          {OpKind::kGlobalAvgPool, 0, 0, "", {"xnnpack", "onednn"}},
      {OpKind::kGlobalMaxPool, 0, 0, "", {"xnnpack", "onednn"}},
  };
  const Floats input = Random(reference::Product(xs), 24);
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", xs);
    const bool global = c.kind == OpKind::kGlobalAvgPool || c.kind == OpKind::kGlobalMaxPool;
    TensorId y = global ? b.Op1(c.kind, "pool", {x})
                        : b.Op1(c.kind, "pool", {x},
                                Attrs({{"kernel", Ints{c.kernel, c.kernel}}, {"strides", Ints{c.stride, c.stride}}, {"padding", c.padding}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetPoolParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto pool = [&](const Floats& xq) {
      if (c.kind == OpKind::kGlobalAvgPool) return reference::MeanMiddle(xq, 1, xs[1] * xs[2], xs[3]);
      return reference::Pool2D(xq, *p, c.kind == OpKind::kMaxPool2D || c.kind == OpKind::kGlobalMaxPool);
    };
    const bool max = c.kind == OpKind::kMaxPool2D || c.kind == OpKind::kGlobalMaxPool;
    for (const std::string& backend : c.backends)
      ExpectWithinOneStepOn(backend, *g, input, pool, -kInf, kInf, std::string(OpName(c.kind)) + " " + c.padding + " on " + backend, max);
  }
}

// A mean averages int8 values and rescales them to its output's parameters, as an average pool:
// over the map (a squeeze-and-excite's or a segmentation head's spatial mean) on both backends,
// over the channels on oneDNN (XNNPACK's int8 mean is a global average pool).
TEST(Int8, MeanWithinOneStepOfReference) {
  const Shape xs{1, 9, 7, 8};
  const Floats input = Random(reference::Product(xs), 25);
  struct Case {
    Ints axes;
    std::int64_t outer, reduced, inner;
    std::vector<std::string> backends;
  };
  const Case cases[] = {{{1, 2}, 1, 63, 8, {"xnnpack", "onednn"}}, {{3}, 63, 8, 1, {"onednn"}}};
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"axes", c.axes}, {"keepdims", std::int64_t{1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto mean = [&](const Floats& xq) { return reference::MeanMiddle(xq, c.outer, c.reduced, c.inner); };
    for (const std::string& backend : c.backends)
      ExpectWithinOneStepOn(backend, *g, input, mean, -kInf, kInf, "mean over " + std::to_string(c.axes.size()) + " axes on " + backend);
  }
}

// relu and relu6 standing alone run int8 under their input's parameters (on oneDNN as a binary
// maximum with a clip: its eltwise takes no s8 clip); each picks an int8 value or a bound.
TEST(Int8, StandaloneClampsRunInt8) {
  const Shape xs{1, 5, 6, 16};
  const Floats input = Random(reference::Product(xs), 26, -8.0f, 8.0f);
  for (OpKind kind : {OpKind::kRelu, OpKind::kRelu6}) {
    GraphBuilder b;
    TensorId y = b.Op1(kind, "clamp", {b.Input("x", xs)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const float hi = kind == OpKind::kRelu6 ? 6.0f : kInf;
    auto clamp = [&](const Floats& xq) {
      Floats out(xq.size());
      for (size_t i = 0; i < xq.size(); ++i) out[i] = std::clamp(xq[i], 0.0f, hi);
      return out;
    };
    for (const std::string backend : {"xnnpack", "onednn"})
      ExpectWithinOneStepOn(backend, *g, input, clamp, 0.0f, hi, std::string(OpName(kind)) + " on " + backend, true);
  }
}

// The activations of MobileNetV3-like models run int8 on oneDNN: the function of the real values,
// rescaled to the output's parameters inside one binary primitive (its eltwise takes no s8 for
// them), each output within one step of the function of the fake-quantized input.
TEST(Int8, OnednnActivationsWithinOneStepOfReference) {
  const Shape xs{1, 6, 5, 16};
  const Floats input = Random(reference::Product(xs), 27, -5.0f, 5.0f);
  struct Case {
    OpKind kind;
    Attributes attrs;
    std::function<float(float)> f;
  };
  const auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  const Case cases[] = {
      {OpKind::kSigmoid, {}, sigmoid},
      {OpKind::kTanh, {}, [](float v) { return std::tanh(v); }},
      {OpKind::kHardSwish, {}, [](float v) { return v * std::clamp(v + 3.0f, 0.0f, 6.0f) / 6.0f; }},
      {OpKind::kHardSigmoid, Attrs({{"alpha", 0.25}, {"beta", 0.4}}), [](float v) { return std::clamp(0.25f * v + 0.4f, 0.0f, 1.0f); }},
      {OpKind::kLeakyRelu, Attrs({{"alpha", 0.1}}), [](float v) { return v > 0 ? v : 0.1f * v; }},
  };
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId y = b.Op1(c.kind, "act", {b.Input("x", xs)}, c.attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto reference = [&](const Floats& xq) {
      Floats out(xq.size());
      std::transform(xq.begin(), xq.end(), out.begin(), c.f);
      return out;
    };
    ExpectWithinOneStepOn("onednn", *g, input, reference, -kInf, kInf, std::string(OpName(c.kind)) + " on onednn");
  }
}

// oneDNN 2.6.3's AMX int8 kernels wrote past their output on a CPU with AMX (this 1×1 conv
// corrupted the heap within five runs): an int8 conv or fully-connected layer takes a kernel that
// is not AMX, on any CPU.
TEST(OnednnInt8, ConvsAndFullyConnectedNeverRunOnAmxKernels) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 6, 6, 96});
  TensorId conv = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {32, 1, 1, 96}, Random(32 * 96, 40, -0.3f, 0.3f)), gb.Constant("b", {32}, Random(32, 41))},
                         Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId conv3 = gb.Op1(OpKind::kConv2D, "conv3", {conv, gb.Constant("w3", {64, 3, 3, 32}, Random(64 * 9 * 32, 42, -0.3f, 0.3f)), gb.Constant("b3", {64}, Random(64, 43))},
                          Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("same")}}));
  TensorId flat = gb.Op1(OpKind::kReshape, "flat", {conv3, gb.ConstantInts("shape", {1, 6 * 6 * 64})});
  TensorId y = gb.Op1(OpKind::kFullyConnected, "fc", {flat, gb.Constant("wf", {16, 6 * 6 * 64}, Random(16 * 6 * 6 * 64, 44, -0.1f, 0.1f)), gb.Constant("bf", {16}, Random(16, 45))},
                      Attrs({{"weights_layout", std::string("OI")}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry, "onednn");
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const Graph& prepared = (*executor)->prepared_graph();
  RunOptions options;
  options.precision = Precision::kInt8;
  auto backend = OnednnBackend::Create(options);
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  int checked = 0;
  for (NodeId k = 0; k < static_cast<NodeId>(prepared.num_nodes()); ++k) {
    const Node& node = prepared.node(k);
    if (node.kind != OpKind::kConv2D && node.kind != OpKind::kFullyConnected) continue;
    auto prepared_node = (*backend)->Prepare(prepared, k);
    ASSERT_TRUE(prepared_node.ok()) << node.name << ": " << prepared_node.status().message();
    const std::vector<std::string> names = OnednnImplementations(**prepared_node);
    ASSERT_FALSE(names.empty()) << node.name;
    for (const std::string& name : names) EXPECT_EQ(name.find("amx"), std::string::npos) << node.name << " runs on " << name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// A small MobileNet-like block on oneDNN at int8: every node int8 but the division, which Latte's
// oneDNN backend has no int8 form of and keeps fp32 saying so; the outputs close to fp32's.
TEST(OnednnInt8, ABlockRunsInt8ButItsDivisionAndStaysCloseToFp32) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 12, 12, 8});
  const Attributes conv_attrs = Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("same")},
                                   {"activation", std::string("relu6")}});
  TensorId expand = gb.Op1(OpKind::kConv2D, "expand", {x, gb.Constant("we", {16, 1, 1, 8}, Random(128, 30, -0.5f, 0.5f)), gb.Constant("be", {16}, Random(16, 31))}, conv_attrs);
  TensorId dw = gb.Op1(OpKind::kDepthwiseConv2D, "dw", {expand, gb.Constant("wd", {1, 3, 3, 16}, Random(144, 32, -0.5f, 0.5f)), gb.Constant("bd", {16}, Random(16, 33))},
                       Attrs({{"filter_layout", std::string("1HWO")}, {"padding", std::string("same")}, {"groups", std::int64_t{16}},
                              {"depth_multiplier", std::int64_t{1}}, {"activation", std::string("relu6")}}));
  TensorId project = gb.Op1(OpKind::kConv2D, "project", {dw, gb.Constant("wp", {8, 1, 1, 16}, Random(128, 34, -0.5f, 0.5f)), gb.Constant("bp", {8}, Random(8, 35))},
                            Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId residual = gb.Op1(OpKind::kAdd, "residual", {project, x});
  TensorId scaled = gb.Op1(OpKind::kMul, "scaled", {residual, gb.Constant("s", {8}, Random(8, 36, 0.5f, 1.5f))});
  TensorId divided = gb.Op1(OpKind::kDiv, "divided", {scaled, gb.Constant("d", {8}, Random(8, 39, 1.0f, 2.0f))});
  TensorId pooled = gb.Op1(OpKind::kGlobalAvgPool, "pool", {divided});
  TensorId flat = gb.Op1(OpKind::kReshape, "flat", {pooled, gb.ConstantInts("shape", {1, 8})});
  TensorId y = gb.Op1(OpKind::kFullyConnected, "fc", {flat, gb.Constant("wf", {4, 8}, Random(32, 37)), gb.Constant("bf", {4}, Random(4, 38))},
                      Attrs({{"weights_layout", std::string("OI")}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry, "onednn");
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const auto& assignments = (*executor)->assignments();
  ASSERT_EQ(assignments.size(), g->num_nodes());
  for (size_t k = 0; k < assignments.size(); ++k) {
    const NodeAssignment& a = assignments[k];
    SCOPED_TRACE(g->node(static_cast<NodeId>(k)).name);
    if (g->node(static_cast<NodeId>(k)).name == "divided") {
      EXPECT_EQ(a.precision, Precision::kFp32);
      EXPECT_NE(a.precision_why.find("int8 div unsupported on onednn"), std::string::npos) << a.precision_why;
    } else {
      EXPECT_EQ(a.precision, Precision::kInt8) << a.precision_why;
    }
  }
  auto drift = DriftFromFp32(*g, **executor, "onednn", registry);
  ASSERT_TRUE(drift.ok()) << drift.status().message();
  EXPECT_GT(drift->max_abs_diff, 0.0);  // it ran int8
  EXPECT_GE(drift->cosine, 0.99);
}

// conv → softmax → add: softmax has no int8 operator in this XNNPACK, so it stays fp32, saying why;
// the conv's output is dequantized for it and its output quantized for the add.
TEST(XnnpackInt8, KindWithoutInt8OperatorStaysFp32AndSaysWhy) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 4, 4, 3});
  TensorId c = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {8, 1, 1, 3}, Random(24, 10)), gb.Constant("b", {8}, Random(8, 11))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId s = gb.Op1(OpKind::kSoftmax, "sm", {c}, Attrs({{"axis", std::int64_t{-1}}}));
  TensorId y = gb.Op1(OpKind::kAdd, "add", {s, c});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const auto& a = (*executor)->assignments();
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].precision, Precision::kInt8) << a[0].precision_why;
  EXPECT_EQ(a[1].precision, Precision::kFp32);
  EXPECT_EQ(a[1].precision_why, "xnnpack has no int8 softmax (qu8 only)");
  EXPECT_EQ(a[2].precision, Precision::kInt8) << a[2].precision_why;
  std::vector<std::string> ops;
  for (const ProfileEntry& e : (*executor)->entries()) ops.push_back(e.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "conv2d", "dequantize", "softmax", "quantize", "add", "dequantize"}));

  // Close to the fp32 run on the same inputs.
  auto drift = DriftFromFp32(*g, **executor, "xnnpack", registry);
  ASSERT_TRUE(drift.ok()) << drift.status().message();
  EXPECT_LE(drift->max_abs_diff, 0.1);
}

// A placement that keeps one node fp32 (a per-op precision choice): conv → add → conv, the add kept
// fp32 although XNNPACK runs it int8. The add says why; a dequantize before it and a quantize after
// it are where the precisions meet, and the outputs stay close to fp32's.
TEST(XnnpackInt8, APlacementKeepsTheNodesItNamesFp32) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 4, 4, 3});
  const Attributes conv = Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}});
  TensorId c1 = gb.Op1(OpKind::kConv2D, "conv1", {x, gb.Constant("w1", {3, 1, 1, 3}, Random(9, 12)), gb.Constant("b1", {3}, Random(3, 13))}, conv);
  TensorId a = gb.Op1(OpKind::kAdd, "add", {c1, x});
  TensorId y = gb.Op1(OpKind::kConv2D, "conv2", {a, gb.Constant("w2", {4, 1, 1, 3}, Random(12, 14)), gb.Constant("b2", {4}, Random(4, 15))}, conv);
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  Placement placement;
  placement.fp32_nodes = {1};
  RunOptions options;
  options.precision = Precision::kInt8;
  auto executor = Executor::Create(*g, placement, registry, options);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const auto& assigned = (*executor)->assignments();
  ASSERT_EQ(assigned.size(), 3u);
  EXPECT_EQ(assigned[0].precision, Precision::kInt8) << assigned[0].precision_why;
  EXPECT_EQ(assigned[1].precision, Precision::kFp32);
  EXPECT_EQ(assigned[1].precision_why, kKeptFp32ByPlacement);
  EXPECT_EQ(assigned[2].precision, Precision::kInt8) << assigned[2].precision_why;
  std::vector<std::string> ops;
  for (const ProfileEntry& e : (*executor)->entries()) ops.push_back(e.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "conv2d", "dequantize", "add", "quantize", "conv2d", "dequantize"}));
  auto drift = DriftFromFp32(*g, **executor, "xnnpack", registry);
  ASSERT_TRUE(drift.ok()) << drift.status().message();
  EXPECT_GT(drift->max_abs_diff, 0.0);
  EXPECT_GE(drift->cosine, 0.99);
}

// An add of a small constant to an activation thousands wide: with the run's real scales the
// constant's scale is too small beside the output's for XNNPACK's int8 add (its ratio limit), so
// the run keeps the add fp32; the uncalibrated lowering (one scale for all) lowers it. The plan
// lowered as the run ran keeps it fp32, saying why, and is the run's plan node for node.
TEST(XnnpackInt8, APlanLoweredAsTheRunRanKeepsWhatTheRunsScalesKeptFp32) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 4, 4, 8});
  TensorId c = gb.Op1(OpKind::kConv2D, "wide", {x, gb.Constant("w", {8, 1, 1, 8}, Floats(64, 900.0f))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId y = gb.Op1(OpKind::kAdd, "plus3", {c, gb.Constant("three", {1}, Floats{3.0f})});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  ASSERT_EQ((*executor)->assignments().size(), 2u);
  EXPECT_EQ((*executor)->assignments()[0].precision, Precision::kInt8);
  ASSERT_EQ((*executor)->assignments()[1].precision, Precision::kFp32) << "the add ran int8: pick a wider activation";

  RunOptions options;
  options.precision = Precision::kInt8;
  auto fp32 = PlanGraphOnBackend(*g, "xnnpack", registry, RunOptions{});
  ASSERT_TRUE(fp32.ok()) << fp32.status().message();
  auto uncalibrated = LowerPlanToInt8Uncalibrated(*fp32, "xnnpack", registry, options);
  ASSERT_TRUE(uncalibrated.ok()) << uncalibrated.status().message();
  EXPECT_FALSE(CheckRunMatchesInt8Plan(*uncalibrated, (*executor)->entries()).ok());

  auto as_run = LowerPlanToInt8AsRun(*fp32, "xnnpack", registry, options, (*executor)->entries());
  ASSERT_TRUE(as_run.ok()) << as_run.status().message();
  EXPECT_TRUE(CheckRunMatchesInt8Plan(*as_run, (*executor)->entries()).ok());
  std::vector<std::string> plan;
  for (NodeId k = 0; k < static_cast<NodeId>(as_run->graph.num_nodes()); ++k)
    plan.push_back(std::string(OpName(as_run->graph.node(k).kind)) + (as_run->fp32_why[static_cast<size_t>(k)].empty() ? "" : " fp32: " + as_run->fp32_why[static_cast<size_t>(k)]));
  EXPECT_EQ(plan, (std::vector<std::string>{"quantize", "conv2d", "dequantize", std::string("add fp32: ") + kKeptFp32ByRun}));
}

// The lowering gives a concat's inputs and output one scale and zero point (XNNPACK's int8 copy
// moves bytes), covering every input's range.
TEST(XnnpackInt8, ConcatSharesOneScaleCoveringItsInputs) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 2, 2, 3});
  TensorId a = gb.Op1(OpKind::kConv2D, "small", {x, gb.Constant("w1", {2, 1, 1, 3}, Random(6, 12, -0.1f, 0.1f))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId b = gb.Op1(OpKind::kConv2D, "large", {x, gb.Constant("w2", {2, 1, 1, 3}, Random(6, 13, -3.0f, 3.0f))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId y = gb.Op1(OpKind::kConcat, "cat", {a, b}, Attrs({{"axis", std::int64_t{3}}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  for (const NodeAssignment& n : (*executor)->assignments()) EXPECT_EQ(n.precision, Precision::kInt8) << n.precision_why;
  const Graph& prepared = (*executor)->prepared_graph();
  EXPECT_EQ(prepared.tensor(a).quant, prepared.tensor(b).quant);
  EXPECT_EQ(prepared.tensor(a).quant, ParamsOf(prepared, prepared.tensor(y).name + "/int8"));
}

// Quantization parameters the lowering would never write (a zero scale, a zero point out of int8,
// one scale per channel on an activation) are refused with the reason, never run.
TEST(Int8, ImpossibleActivationParametersAreRefusedSayingWhich) {
  RunOptions options;
  options.precision = Precision::kInt8;
  const BackendRegistry registry = Registry();
  for (const std::string& name : kInt8Backends) {
  SCOPED_TRACE(name);
  auto backend = registry.Create(name, options);
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  struct Case {
    QuantParams quant;
    std::string why;
  };
  const std::vector<Case> cases = {
      {{{0.0f}, {0}, 0}, "input 'x' has scale 0.000000"},
      {{{-0.5f}, {0}, 0}, "input 'x' has scale -0.500000"},
      {{{std::numeric_limits<float>::quiet_NaN()}, {0}, 0}, "input 'x' has scale nan"},
      {{{0.1f}, {300}, 0}, "input 'x' has zero point 300"},
      {{{0.1f, 0.2f}, {0, 0}, 3}, "input 'x' is not quantized per tensor"},
      {{{0.1f}, {}, 0}, "input 'x' is not quantized per tensor"},
  };
  for (const Case& c : cases) {
    GraphBuilder gb;
    TensorId y = gb.Op1(OpKind::kRelu, "relu", {gb.Input("x", {1, 2, 2, 2}, DataType::kInt8)});
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    g->mutable_tensor(g->inputs[0]).quant = c.quant;
    g->mutable_tensor(y).quant = {{0.1f}, {0}, 0};
    Support s = (*backend)->Supports(*g, 0);
    EXPECT_FALSE(s.ok()) << c.why;
    EXPECT_EQ(s.why(), c.why);
    EXPECT_FALSE((*backend)->Prepare(*g, 0).ok()) << c.why;
  }
  }
}

// On ONNX Runtime a kind it has no int8 form of (no QDQ fusion: it would compute in float between
// a dequantize and a quantize) stays fp32, saying so; the kinds it has run int8, a softmax too.
TEST(Int8, OrtKeepsAKindWithoutAQdqFusionAtFp32AndSaysWhy) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 4, 4, 3});
  TensorId c = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {8, 1, 1, 3}, Random(24, 10)), gb.Constant("b", {8}, Random(8, 11))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  TensorId h = gb.Op1(OpKind::kHardSwish, "hs", {c});
  TensorId s = gb.Op1(OpKind::kSoftmax, "sm", {h}, Attrs({{"axis", std::int64_t{-1}}}));
  TensorId y = gb.Op1(OpKind::kAdd, "add", {s, c});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto executor = Int8Executor(*g, registry, "ort");
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const auto& a = (*executor)->assignments();
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].precision, Precision::kInt8) << a[0].precision_why;
  EXPECT_EQ(a[1].precision, Precision::kFp32);
  EXPECT_EQ(a[1].precision_why,
            "ONNX Runtime has no int8 hard_swish (no QDQ fusion for it: it would run in float between a dequantize and a quantize)");
  EXPECT_EQ(a[2].precision, Precision::kInt8) << a[2].precision_why;
  EXPECT_EQ(a[3].precision, Precision::kInt8) << a[3].precision_why;
  for (const NodeAssignment& n : a) EXPECT_EQ(n.backend, "ort");
  std::vector<std::string> ops;
  for (const ProfileEntry& e : (*executor)->entries()) ops.push_back(e.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "conv2d", "dequantize", "hard_swish", "quantize", "softmax", "add",
                                           "dequantize"}));
  // One ONNX Runtime session runs it all, close to the fp32 run on the same inputs.
  EXPECT_TRUE((*executor)->RunsWholeGraph());
  auto drift = DriftFromFp32(*g, **executor, "ort", registry);
  ASSERT_TRUE(drift.ok()) << drift.status().message();
  EXPECT_LE(drift->max_abs_diff, 0.1);
}

// A real model on ONNX Runtime at int8: every node int8 (face_detection_short_range has no kind
// without a QDQ form), and its outputs within the drift the xnnpack int8 run of it shows.
TEST(Int8, OrtRunsARealModelInt8CloseToFp32) {
  const std::string file = "face_detection_short_range.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto graph = ImportModel(latte::testing::ModelPath(file), ImportOptions{});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const BackendRegistry registry = Registry();
  auto int8 = Int8Executor(*graph, registry, "ort");
  ASSERT_TRUE(int8.ok()) << int8.status().message();
  for (const NodeAssignment& n : (*int8)->assignments()) EXPECT_EQ(n.precision, Precision::kInt8) << n.precision_why;
  EXPECT_TRUE((*int8)->RunsWholeGraph());
  auto drift = DriftFromFp32(*graph, **int8, "ort", registry);
  ASSERT_TRUE(drift.ok()) << drift.status().message();
  ASSERT_EQ(drift->outputs.size(), 2u);
  for (const OutputDrift& o : drift->outputs) {
    EXPECT_GT(o.cosine, 0.95) << o.name;
    EXPECT_LT(o.cosine, 1.0) << o.name << ": int8 gave fp32's outputs exactly; was it run in int8?";
    EXPECT_EQ(o.nonfinite_mismatches, 0) << o.name;
  }
}

// A QDQ model as a quantizer writes one (here: the lowering of a real model, exported; uint8
// activations, int8 weights per channel, int32 biases, each behind a DequantizeLinear), imported
// as a file is and run on ONNX Runtime, gives the outputs the lowering itself gave.
TEST(Int8, OrtRunsAnImportedQdqModelAsTheLoweringRanIt) {
  const std::string file = "face_detection_short_range.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto graph = ImportModel(latte::testing::ModelPath(file), ImportOptions{});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const BackendRegistry registry = Registry();
  auto int8 = Int8Executor(*graph, registry, "ort");
  ASSERT_TRUE(int8.ok()) << int8.status().message();
  auto bytes = ExportOnnx((*int8)->prepared_graph());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto qdq = ImportModelBytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()),
                              ModelFormat::kOnnx);
  ASSERT_TRUE(qdq.ok()) << qdq.status().message();
  int quantize = 0, dequantize = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(qdq->num_nodes()); ++n) {
    EXPECT_NE(qdq->node(n).kind, OpKind::kOpaque) << qdq->node(n).source_op;
    quantize += qdq->node(n).kind == OpKind::kQuantize;
    dequantize += qdq->node(n).kind == OpKind::kDequantize;
  }
  // Every QuantizeLinear and DequantizeLinear of the file is one node of the graph.
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  int file_quantize = 0, file_dequantize = 0;
  for (const onnx::NodeProto& node : proto.graph().node()) {
    file_quantize += node.op_type() == "QuantizeLinear";
    file_dequantize += node.op_type() == "DequantizeLinear";
  }
  EXPECT_EQ(quantize, file_quantize);
  EXPECT_EQ(dequantize, file_dequantize);
  EXPECT_GT(dequantize, quantize);  // the weights' and biases' too
  // XNNPACK runs Latte's own lowering, not a file's QDQ nodes (its conv weights are a dequantize's
  // output there): refused, saying which node.
  auto xnnpack = Executor::Create(*qdq, Placement{}, registry, RunOptions{});
  ASSERT_FALSE(xnnpack.ok());
  EXPECT_EQ(xnnpack.status().code(), StatusCode::kUnsupported) << xnnpack.status().message();
  EXPECT_NE(xnnpack.status().message().find("(conv2d): weights are not a constant"), std::string::npos) << xnnpack.status().message();
  Placement placement;
  placement.default_backend = "ort";
  auto run = Executor::Create(*qdq, placement, registry, RunOptions{});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE((*run)->RunsWholeGraph());
  FillRandomInputs(*graph, (*int8)->buffers());
  FillRandomInputs(*qdq, (*run)->buffers());
  ASSERT_TRUE((*int8)->Run().ok());
  ASSERT_TRUE((*run)->Run().ok());
  ASSERT_EQ(qdq->outputs.size(), graph->outputs.size());
  for (size_t o = 0; o < graph->outputs.size(); ++o) {
    const TensorId want_id = graph->outputs[o], got_id = qdq->outputs[o];
    ASSERT_EQ(qdq->tensor(got_id).name, graph->tensor(want_id).name);
    const size_t n = (*int8)->buffers().bytes(want_id) / sizeof(float);
    ASSERT_EQ((*run)->buffers().bytes(got_id) / sizeof(float), n);
    const float* want = (*int8)->buffers().as<float>(want_id);
    const float* got = (*run)->buffers().as<float>(got_id);
    for (size_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << graph->tensor(want_id).name << "[" << i << "]";
  }
}

// --calibration-data: the activation ranges come from the user's samples, not generated inputs.
// Samples of x spanning [-2, 5] give x's int8 twin the scale 7/255 and the zero point
// round(-128 + 2 / (7/255)) = -55, whatever the backend; bad samples are refused saying which.
TEST(Int8, CalibrationDataSetsTheRangesAndBadSamplesAreRefused) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 2, 2, 3});
  TensorId y = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {4, 1, 1, 3}, Random(12, 21))},
                      Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("valid")}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BackendRegistry registry = Registry();
  auto data = std::make_shared<CalibrationInputs>();
  // Three samples along a first axis: the first spans [-2, 5], the others inside it.
  Floats samples = Random(3 * 12, 22, -1.0f, 1.0f);
  samples[0] = -2.0f, samples[5] = 5.0f;
  data->arrays["x"] = {"x.npy", {3, 1, 2, 2, 3}, samples};
  for (const std::string& backend : kInt8Backends) {
    SCOPED_TRACE(backend);
    Placement placement;
    placement.default_backend = backend;
    RunOptions options;
    options.precision = Precision::kInt8;
    options.calibration = data;
    auto executor = Executor::Create(*g, placement, registry, options);
    ASSERT_TRUE(executor.ok()) << executor.status().message();
    EXPECT_EQ((*executor)->int8_calibration().Describe(), "3 fp32 runs on --calibration-data (x: x.npy)");
    EXPECT_EQ((*executor)->int8_calibration().runs, 3);
    const QuantParams q = ParamsOf((*executor)->prepared_graph(), "x/int8");
    ASSERT_EQ(q.scale.size(), 1u);
    EXPECT_FLOAT_EQ(q.scale[0], 7.0f / 255.0f);
    EXPECT_EQ(q.zero_point.at(0), -55);
    // Without it: 4 runs on generated inputs in [-1, 1).
    options.calibration = nullptr;
    auto generated = Executor::Create(*g, placement, registry, options);
    ASSERT_TRUE(generated.ok()) << generated.status().message();
    EXPECT_EQ((*generated)->int8_calibration().Describe(), "4 fp32 runs on generated inputs");
    EXPECT_LT(ParamsOf((*generated)->prepared_graph(), "x/int8").scale.at(0), 2.0f / 255.0f + 1e-6f);
  }

  struct Case {
    std::map<std::string, CalibrationInputs::Array> arrays;
    std::string why;
  };
  const std::vector<Case> cases = {
      {{{"x", {"x.npy", {2, 2, 3}, Floats(12)}}}, "x.npy: shape 2x2x3 holds no samples of input 'x' (1x2x2x3): give 1x2x2x3 or Nx1x2x2x3"},
      {{{"x", {"x.npy", {2, 1, 2, 2, 3}, Floats(12)}}}, "x.npy: shape 2x1x2x2x3 holds no samples of input 'x'"},
      {{{"y", {"y.npy", {1, 2, 2, 3}, Floats(12)}}}, "--calibration-data gives no samples of input 'x' (1x2x2x3)"},
      {{{"x", {"x.npy", {1, 2, 2, 3}, Floats(12)}}, {"z", {"z.npy", {1}, Floats(1)}}},
       "--calibration-data names 'z', which is no float input of the model"},
  };
  for (const Case& c : cases) {
    auto bad = std::make_shared<CalibrationInputs>();
    bad->arrays = c.arrays;
    RunOptions options;
    options.precision = Precision::kInt8;
    options.calibration = bad;
    auto executor = Executor::Create(*g, Placement{}, registry, options);
    ASSERT_FALSE(executor.ok()) << c.why;
    EXPECT_EQ(executor.status().code(), StatusCode::kInvalidInput) << executor.status().message();
    EXPECT_NE(executor.status().message().find(c.why), std::string::npos) << executor.status().message();
  }
}

TEST(Int8Plan, ParamsCoverTheRangeAndZero) {
  ValueRange r;
  r.Add(0.5f), r.Add(2.0f);
  QuantParams q = Int8ParamsFor(r);  // [0, 2]: zero at -128
  EXPECT_FLOAT_EQ(q.scale[0], 2.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -128);
  r.Add(-1.0f);
  q = Int8ParamsFor(r);  // [-1, 2]
  EXPECT_FLOAT_EQ(q.scale[0], 3.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -43);  // round(-128 + 85)
  EXPECT_GT(Int8ParamsFor(ValueRange{}).scale[0], 0.0f);  // never seen: still a usable scale
}

}  // namespace
}  // namespace latte

