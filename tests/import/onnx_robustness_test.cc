// Bad ONNX input: empty, truncated, random and bit-flipped files, and hand-made hostile models
// (external data, sizes that lie, undefined names, cycles). Each gives a clear error, or for
// the corruptions either an error or a graph, and never a crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "test_paths.h"
#include "core/file.h"
#include "import/import.h"
#include "import/onnx/onnx_importer.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;
using Bytes = std::vector<std::uint8_t>;

// Each import forks for ONNX's shape inference; under AddressSanitizer a fork costs ~100 ms,
// so the corruption sweeps run a quarter of their rounds there.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSweepDivisor = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kSweepDivisor = 4;
#else
constexpr int kSweepDivisor = 1;
#endif
#else
constexpr int kSweepDivisor = 1;
#endif

// A one-Relu model to break in various ways.
struct TinyModel {
  onnx::ModelProto model;
  TinyModel() {
    model.set_ir_version(8);
    auto* import = model.add_opset_import();
    import->set_domain("");
    import->set_version(13);
    auto* g = model.mutable_graph();
    g->set_name("tiny");
    auto* x = g->add_input();
    x->set_name("x");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 3}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    Node("Relu", {"x"}, {"y"}, "relu");
    g->add_output()->set_name("y");
  }
  onnx::GraphProto& graph() { return *model.mutable_graph(); }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name) {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return *n;
  }
  // A float initializer `name` with `dims` and `bytes` bytes of raw data, added to x.
  onnx::TensorProto& Weight(const std::string& name, const Ints& dims, size_t bytes) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    for (auto d : dims) t->add_dims(d);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->set_raw_data(std::string(bytes, '\0'));
    Node("Add", {"y", name}, {"z_" + name}, "add_" + name);
    return *t;
  }
  Bytes Serialize() const {
    std::string s = model.SerializeAsString();
    return {s.begin(), s.end()};
  }
};

// An import that must fail: with a message, not an internal error.
Status ExpectError(const Bytes& bytes, const ImportOptions& options = {}) {
  auto g = ImportModelBytes(bytes, ModelFormat::kOnnx, options);
  EXPECT_FALSE(g.ok());
  if (g.ok()) return Status::Ok();
  EXPECT_FALSE(g.status().message().empty());
  EXPECT_NE(g.status().code(), StatusCode::kInternal) << g.status().message();
  return g.status();
}

void ExpectFails(const Bytes& bytes) { static_cast<void>(ExpectError(bytes)); }

// A corrupted input may still import; if not, the error must be a real message. Returns
// whether it imported.
bool ExpectGraphOrError(const Bytes& bytes, const std::string& what, const ImportOptions& options) {
  auto g = ImportModelBytes(bytes, ModelFormat::kOnnx, options);
  if (g.ok()) return true;
  EXPECT_FALSE(g.status().message().empty()) << what;
  EXPECT_NE(g.status().code(), StatusCode::kInternal) << what << ": " << g.status().message();
  return false;
}

Bytes ClassifierBytes() {
  auto bytes = ReadFileBytes(testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : Bytes{};
}

bool Contains(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

TEST(OnnxRobustness, EmptyInput) {
  auto g = ImportOnnx({}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(g.status().message().find("empty"), std::string::npos) << g.status().message();
  ExpectFails({});
}

TEST(OnnxRobustness, TinyModelImports) {
  auto g = ImportModelBytes(TinyModel().Serialize(), ModelFormat::kOnnx);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_nodes(), 1u);
}

TEST(OnnxRobustness, TruncatedRealModelFailsAtEveryLength) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const Bytes full = ClassifierBytes();
  ASSERT_GT(full.size(), 1000u);
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 64; ++n) lengths.push_back(n);
  for (size_t n = 64; n < full.size(); n += full.size() / 300) lengths.push_back(n);
  for (size_t n = full.size() - 64; n < full.size(); ++n) lengths.push_back(n);  // cuts in the tail (opset_import)
  for (size_t n : lengths) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
    ExpectFails(Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
  }
}

TEST(OnnxRobustness, RandomBytesFail) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 400; ++i) {
    const size_t size = 1 + rng() % (i < 200 ? 64 : 8192);
    Bytes bytes(size);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    if (i % 4 == 0) bytes[0] = 0x08;  // looks like ONNX's first field
    SCOPED_TRACE("random input " + std::to_string(i) + " of " + std::to_string(size) + " bytes");
    ExpectFails(bytes);
  }
}

TEST(OnnxRobustness, BitFlippedRealModelNeverCrashes) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const Bytes full = ClassifierBytes();
  ImportOptions options;  // the classifier's input is [?, 3, ?, ?]
  options.input_shapes["x"] = {1, 3, 48, 192};
  std::mt19937 rng(7);
  int imported = 0;
  const int rounds = 1000 / kSweepDivisor;
  for (int i = 0; i < rounds; ++i) {
    Bytes bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    imported += ExpectGraphOrError(bytes, "flip round " + std::to_string(i), options);
  }
  std::cout << "bit-flipped models: " << imported << " of " << rounds << " still import, the rest fail with an error\n";
}

// ONNX's node tests cover most op types: corrupt each a few ways (attributes, types, dims,
// names) and import it; an error or a graph, never a crash.
TEST(OnnxRobustness, BitFlippedConformanceModelsNeverCrash) {
  namespace fs = std::filesystem;
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/share/libonnx-testdata/data/node", ec))
    if (fs::exists(entry.path() / "model.onnx")) models.push_back(entry.path() / "model.onnx");
  ASSERT_FALSE(models.empty()) << "libonnx-testdata is not installed";
  std::sort(models.begin(), models.end());
  std::mt19937 rng(11);
  int imported = 0, total = 0;
  for (const fs::path& path : models) {
    auto original = ReadFileBytes(path.string());
    ASSERT_TRUE(original.ok()) << original.status().message();
    for (int round = 0; round < 8 / kSweepDivisor; ++round, ++total) {
      Bytes bytes = *original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      imported += ExpectGraphOrError(bytes, path.parent_path().filename().string() + " round " + std::to_string(round), {});
    }
  }
  std::cout << "bit-flipped node-test models: " << imported << " of " << total << " still import\n";
}

TEST(OnnxRobustness, ExternalDataIsRefusedWithoutOpeningIt) {
  TinyModel m;
  auto& w = m.Weight("w", {3}, 0);
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w.add_external_data();
  entry->set_key("location");
  entry->set_value("/etc/passwd");
  Status s = ExpectError(m.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "tensor 'w' stores its data in an external file, which Latte does not read");

  // The same inside a Constant node.
  TinyModel c;
  auto& node = c.Node("Constant", {}, {"k"}, "const");
  auto* attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_name("k");
  attr->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  attr->mutable_t()->set_data_location(onnx::TensorProto::EXTERNAL);
  s = ExpectError(c.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(Contains(s, "tensor 'k' stores its data in an external file")) << s.message();
}

TEST(OnnxRobustness, DeclaredDimsThatDoNotMatchTheData) {
  TinyModel raw;
  raw.Weight("w", {2, 3}, 20);  // 6 floats need 24 bytes
  Status s = ExpectError(raw.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(Contains(s, "tensor 'w'") && Contains(s, "20 bytes") && Contains(s, "24")) << s.message();

  TinyModel typed;
  auto& t = typed.Weight("v", {2, 3}, 0);
  t.clear_raw_data();
  for (int i = 0; i < 5; ++i) t.add_float_data(1.0f);
  s = ExpectError(typed.Serialize());
  EXPECT_TRUE(Contains(s, "tensor 'v'") && Contains(s, "5 values")) << s.message();

  TinyModel none;
  none.Weight("n", {3}, 0).clear_raw_data();
  s = ExpectError(none.Serialize());
  EXPECT_TRUE(Contains(s, "tensor 'n' has no data")) << s.message();
}

TEST(OnnxRobustness, EnormousOrNegativeDims) {
  TinyModel huge;
  huge.Weight("big", {std::int64_t{1} << 40}, 4);
  Status s = ExpectError(huge.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(Contains(s, "tensor 'big'")) << s.message();

  TinyModel overflow;
  overflow.Weight("wide", {std::int64_t{1} << 40, std::int64_t{1} << 40, std::int64_t{1} << 40}, 4);
  s = ExpectError(overflow.Serialize());
  EXPECT_TRUE(Contains(s, "tensor 'wide'") && Contains(s, "overflow")) << s.message();

  TinyModel negative;
  negative.Weight("neg", {3, -2}, 4);
  s = ExpectError(negative.Serialize());
  EXPECT_TRUE(Contains(s, "tensor 'neg'") && Contains(s, "negative")) << s.message();

  // A huge declared input dim: refused by shape inference, not allocated.
  TinyModel input;
  input.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(
      std::int64_t{1} << 62);
  ExpectFails(input.Serialize());
}

TEST(OnnxRobustness, UndefinedNodeInput) {
  TinyModel m;
  m.Node("Add", {"y", "ghost"}, {"z"}, "adder");
  Status s = ExpectError(m.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(Contains(s, "'adder'") && Contains(s, "'ghost'")) << s.message();

  TinyModel out;
  out.graph().add_output()->set_name("nowhere");
  s = ExpectError(out.Serialize());
  EXPECT_TRUE(Contains(s, "'nowhere'")) << s.message();
}

TEST(OnnxRobustness, MessagesStayOnOneLine) {
  TinyModel m;
  m.Node("Add", {"y", "evil\nname"}, {"z"}, "line\rbreak");
  Status s = ExpectError(m.Serialize());
  EXPECT_EQ(s.message().find_first_of("\n\r"), std::string::npos) << s.message();
  EXPECT_TRUE(Contains(s, "'evil?name'")) << s.message();

  TinyModel long_name;
  long_name.Node("Add", {"y", std::string(100000, 'q')}, {"z"}, "long");
  s = ExpectError(long_name.Serialize());
  EXPECT_LT(s.message().size(), 1100u);
}

TEST(OnnxRobustness, CycleIsReported) {
  TinyModel m;
  m.Node("Add", {"y", "b"}, {"a"}, "first");
  m.Node("Relu", {"a"}, {"b"}, "second");
  m.graph().add_output()->set_name("b");
  Status s = ExpectError(m.Serialize());
  EXPECT_TRUE(Contains(s, "cycle")) << s.message();

  TinyModel self;
  self.Node("Add", {"y", "s"}, {"s"}, "itself");
  s = ExpectError(self.Serialize());
  EXPECT_TRUE(Contains(s, "cycle")) << s.message();
}

TEST(OnnxRobustness, MissingAndDuplicateNames) {
  TinyModel unnamed_input;
  unnamed_input.graph().mutable_input(0)->set_name("");
  EXPECT_TRUE(Contains(ExpectError(unnamed_input.Serialize()), "no name"));

  TinyModel unnamed_weight;
  unnamed_weight.Weight("w", {3}, 12).set_name("");
  EXPECT_TRUE(Contains(ExpectError(unnamed_weight.Serialize()), "no name"));

  TinyModel twice;
  twice.Node("Relu", {"x"}, {"y"}, "again");
  Status s = ExpectError(twice.Serialize());
  EXPECT_TRUE(Contains(s, "'again'") && Contains(s, "'y'")) << s.message();

  TinyModel no_op;
  no_op.graph().mutable_node(0)->clear_op_type();
  EXPECT_TRUE(Contains(ExpectError(no_op.Serialize()), "op_type"));
}

TEST(OnnxRobustness, MissingGraphOrOpset) {
  TinyModel no_graph;
  no_graph.model.clear_graph();
  EXPECT_TRUE(Contains(ExpectError(no_graph.Serialize()), "no graph"));
  TinyModel no_opset;
  no_opset.model.clear_opset_import();
  EXPECT_TRUE(Contains(ExpectError(no_opset.Serialize()), "opset"));
}

TEST(OnnxRobustness, BadAttributesAreErrorsNamingTheNode) {
  TinyModel m;
  auto* w = m.graph().add_initializer();
  w->set_name("w");
  for (int d : {2, 3, 1, 1}) w->add_dims(d);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->set_raw_data(std::string(24, '\0'));
  m.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  m.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto& conv = m.Node("Conv", {"x", "w"}, {"c"}, "bad_conv");
  auto* strides = conv.add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::FLOAT);
  strides->set_f(2.0f);
  m.graph().add_output()->set_name("c");
  Status s = ExpectError(m.Serialize());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(Contains(s, "'bad_conv'") && Contains(s, "strides")) << s.message();
}

}  // namespace
}  // namespace latte
