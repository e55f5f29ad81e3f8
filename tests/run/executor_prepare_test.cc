// The executor's prepared copy: an NCHW graph converted for NHWC backends, clamps folded, a
// transpose wherever two layouts meet, and profiles that still name the user's nodes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "run/backend_test_util.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/toy_backends.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

using ::latte::testing::Attrs;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

// x (NCHW) → conv → relu → max_pool → output, ONNX style.
Graph NchwConvReluPool() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 8, 8});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {4, 3, 3, 3}, Random(108, 1)), b.Constant("b", {4}, Random(4, 2))},
                     Attrs({{"layout", std::string("NCHW")}, {"filter_layout", std::string("OIHW")},
                            {"padding", std::string("explicit")}, {"pads", Ints{1, 1, 1, 1}}}));
  y = b.Op1(OpKind::kRelu, "relu", {y});
  y = b.Op1(OpKind::kMaxPool2D, "pool", {y},
            Attrs({{"layout", std::string("NCHW")}, {"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}}));
  auto g = b.Finish({y});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return *g;
}

BackendRegistry Registry() {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RegisterToyBackends(registry, /*with_sigmoid=*/false);
  return registry;
}

std::vector<float> RunWith(const Graph& g, const Placement& placement, std::vector<ProfileEntry>* entries,
                           std::vector<NodeAssignment>* assignments) {
  BackendRegistry registry = Registry();
  auto exec = Executor::Create(g, placement, registry, {});
  if (!exec.ok()) {
    ADD_FAILURE() << exec.status().message();
    return {};
  }
  FillRandomInputs(g, (*exec)->buffers(), 4);
  std::vector<double> us;
  EXPECT_TRUE((*exec)->RunProfiled(us).ok());
  EXPECT_EQ(us.size(), (*exec)->entries().size());
  if (entries) *entries = (*exec)->entries();
  if (assignments) *assignments = (*exec)->assignments();
  const TensorId out = g.outputs[0];
  EXPECT_EQ((*exec)->buffers().bytes(out), 4u * 4 * 4 * sizeof(float)) << "the output keeps its NCHW id and shape";
  const float* data = (*exec)->buffers().as<float>(out);
  return std::vector<float>(data, data + (*exec)->buffers().bytes(out) / sizeof(float));
}

// The same graph computed naively in NCHW.
std::vector<float> Reference(const Graph& g) {
  auto allocated = TensorBuffers::Allocate(g);
  EXPECT_TRUE(allocated.ok());
  TensorBuffers& buffers = *allocated;
  FillRandomInputs(g, buffers, 4);
  const float* x = buffers.as<float>(g.inputs[0]);
  auto w = *ConstantFloats(g.tensor(g.node(0).inputs[1]));
  auto bias = *ConstantFloats(g.tensor(g.node(0).inputs[2]));
  std::vector<float> conv(4 * 8 * 8), out(4 * 4 * 4, -INFINITY);
  for (int o = 0; o < 4; ++o)
    for (int y = 0; y < 8; ++y)
      for (int xx = 0; xx < 8; ++xx) {
        double acc = bias[static_cast<size_t>(o)];
        for (int i = 0; i < 3; ++i)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = y + ky - 1, ix = xx + kx - 1;
              if (iy < 0 || iy >= 8 || ix < 0 || ix >= 8) continue;
              acc += x[(i * 8 + iy) * 8 + ix] * w[static_cast<size_t>(((o * 3 + i) * 3 + ky) * 3 + kx)];
            }
        conv[static_cast<size_t>((o * 8 + y) * 8 + xx)] = static_cast<float>(std::max(acc, 0.0));
      }
  for (int o = 0; o < 4; ++o)
    for (int y = 0; y < 8; ++y)
      for (int xx = 0; xx < 8; ++xx) {
        float& m = out[static_cast<size_t>((o * 4 + y / 2) * 4 + xx / 2)];
        m = std::max(m, conv[static_cast<size_t>((o * 8 + y) * 8 + xx)]);
      }
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

TEST(ExecutorPrepare, NchwGraphRunsConvertedWithTheReluFolded) {
  const Graph g = NchwConvReluPool();
  for (const char* backend : {"xnnpack", "onednn"}) {
    Placement placement;
    placement.default_backend = backend;
    std::vector<ProfileEntry> entries;
    std::vector<NodeAssignment> assignments;
    ExpectNear(RunWith(g, placement, &entries, &assignments), Reference(g));
    // transpose in, conv+relu, pool, transpose out.
    ASSERT_EQ(entries.size(), 4u) << backend;
    EXPECT_TRUE(entries[0].inserted);
    EXPECT_EQ(entries[0].op, "transpose");
    EXPECT_EQ(entries[0].name, "x:to_nhwc");
    EXPECT_EQ(entries[1].op, "conv2d+relu");
    EXPECT_EQ(entries[1].name, "conv");
    EXPECT_EQ(entries[1].sources, (std::vector<NodeId>{0, 1}));
    EXPECT_EQ(entries[2].op, "max_pool2d");
    EXPECT_EQ(entries[2].sources, (std::vector<NodeId>{2}));
    EXPECT_TRUE(entries[3].inserted);
    for (const ProfileEntry& e : entries) EXPECT_EQ(e.backend, backend) << e.name;
    ASSERT_EQ(assignments.size(), 3u);  // one per user node, the folded relu with its conv
    for (const NodeAssignment& a : assignments) EXPECT_EQ(a.backend, backend);
  }
}

TEST(ExecutorPrepare, ANodeOnAnNchwBackendGetsTransposesAroundIt) {
  const Graph g = NchwConvReluPool();
  Placement placement;
  placement.default_backend = "xnnpack";
  placement.by_node[1] = "relu-only";  // a backend that reads the graph as the file has it (NCHW)
  std::vector<ProfileEntry> entries;
  std::vector<NodeAssignment> assignments;
  ExpectNear(RunWith(g, placement, &entries, &assignments), Reference(g));
  std::vector<std::string> ops, backends;
  for (const ProfileEntry& e : entries) ops.push_back(e.op + (e.inserted ? " (inserted)" : "")), backends.push_back(e.backend);
  // The relu is not folded (another backend) and is read and written in NCHW.
  EXPECT_EQ(ops, (std::vector<std::string>{"transpose (inserted)", "conv2d", "transpose (inserted)", "relu",
                                           "transpose (inserted)", "max_pool2d", "transpose (inserted)"}));
  EXPECT_EQ(backends,
            (std::vector<std::string>{"xnnpack", "xnnpack", "xnnpack", "relu-only", "xnnpack", "xnnpack", "xnnpack"}));
  EXPECT_EQ(assignments[1].backend, "relu-only");
}

TEST(ExecutorPrepare, RefusalNamesTheUsersNode) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 8, 8});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {4, 3, 3, 3}, Random(108, 1))},
                     Attrs({{"layout", std::string("NCHW")}, {"filter_layout", std::string("OIHW")}, {"padding", std::string("same")}}));
  y = b.Op1(OpKind::kErf, "erf", {y});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  BackendRegistry registry = Registry();
  auto exec = Executor::Create(*g, Placement{}, registry, {});
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(exec.status().message(), "node 1 'erf' (erf): xnnpack cannot run it: erf not implemented in the xnnpack backend");
}

}  // namespace
}  // namespace latte
