// Bad TFLite input: every case must give an error that says what is wrong (or, for bit
// flips, either a graph or an error), never a crash, a hang or an unbounded allocation.
// Run under the sanitizer build too (LATTE_SANITIZE=ON).

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_paths.h"
#include "core/file.h"
#include "import/import.h"
#include "import/tflite/tflite_importer.h"
#include "tflite_test_builder.h"

namespace latte {
namespace {

using namespace testing::tfl;  // NOLINT: the builder's constants read better unqualified

constexpr const char* kSmallModel = "face_detection_short_range.tflite";

std::vector<std::uint8_t> ReadModel(const char* file) {
  auto bytes = ReadFileBytes(testing::ModelPath(file));
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : std::vector<std::uint8_t>{};
}

// Expects ImportTflite to fail with kInvalidInput and a message containing `needle`.
void ExpectInvalid(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  auto graph = ImportTflite(bytes);
  ASSERT_FALSE(graph.ok()) << "expected an error containing '" << needle << "'";
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidInput) << graph.status().message();
  EXPECT_NE(graph.status().message().find(needle), std::string::npos) << graph.status().message();
}

// input [1,4] → RELU → [1,4]: a minimal valid model to break in one place.
ModelSpec TinyModel() {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x");
  const auto y = m.Activation({1, 4}, "y");
  m.Op(kRelu, {x}, {y});
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

TEST(TfliteRobustnessTest, TinyModelIsValid) {
  auto graph = ImportModelBytes(TinyModel().Build(), ModelFormat::kTflite);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->num_nodes(), 1u);
}

TEST(TfliteRobustnessTest, ZeroLength) {
  ExpectInvalid({}, "empty file");
  auto graph = ImportModelBytes({}, ModelFormat::kTflite);
  EXPECT_FALSE(graph.ok());
}

TEST(TfliteRobustnessTest, TooShortForAHeader) { ExpectInvalid({0x10, 0, 0, 0, 'T', 'F'}, "too small"); }

TEST(TfliteRobustnessTest, WrongMagic) {
  std::vector<std::uint8_t> bytes = TinyModel().Build();
  std::memcpy(bytes.data() + 4, "ONNX", 4);
  ExpectInvalid(bytes, "TFL3");
  std::memcpy(bytes.data() + 4, "\x01\x02\x03\x04", 4);
  ExpectInvalid(bytes, "\\x01\\x02");
}

TEST(TfliteRobustnessTest, TruncatedRealModel) {
  LATTE_REQUIRE_MODEL(kSmallModel);
  const std::vector<std::uint8_t> full = ReadModel(kSmallModel);
  ASSERT_TRUE(ImportTflite(full).ok());
  for (std::size_t k = 0; k < 64; ++k) {
    const std::size_t length = full.size() * k / 64;
    std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(length));
    auto graph = ImportTflite(cut);
    ASSERT_FALSE(graph.ok()) << "truncated to " << length << " bytes";
    EXPECT_EQ(graph.status().code(), StatusCode::kInvalidInput);
    EXPECT_FALSE(graph.status().message().empty());
  }
  // The last bytes too: every cut of a flatbuffer loses something it refers to.
  for (std::size_t drop = 1; drop <= 64; ++drop) {
    std::vector<std::uint8_t> cut(full.begin(), full.end() - static_cast<std::ptrdiff_t>(drop));
    EXPECT_FALSE(ImportTflite(cut).ok()) << "dropped " << drop << " bytes";
  }
}

TEST(TfliteRobustnessTest, TruncatedSmallModelAtEveryLength) {
  const std::vector<std::uint8_t> full = TinyModel().Build();
  for (std::size_t length = 0; length < full.size(); ++length) {
    std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(length));
    auto graph = ImportTflite(cut);
    EXPECT_FALSE(graph.ok()) << "truncated to " << length << " bytes";
    if (!graph.ok()) {
      EXPECT_FALSE(graph.status().message().empty());
    }
  }
}

TEST(TfliteRobustnessTest, RandomBytes) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    const std::size_t size = rng() % 4096;
    std::vector<std::uint8_t> bytes(size);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    // Most rounds carry the identifier, so the flatbuffer reader itself is exercised.
    if (size >= 8 && round % 4 != 0) std::memcpy(bytes.data() + 4, "TFL3", 4);
    // Small root offsets reach tables inside the buffer more often.
    if (size >= 8 && round % 2 == 0) {
      const std::uint32_t root = static_cast<std::uint32_t>(rng() % size) & ~3u;
      std::memcpy(bytes.data(), &root, 4);
    }
    auto graph = ImportTflite(bytes);
    ASSERT_FALSE(graph.ok()) << "round " << round;
    EXPECT_FALSE(graph.status().message().empty());
  }
}

// Flips bits of a real model: each result is a graph or an error, never a crash. Half the
// flips hit the flatbuffer's structure (everything but the weight buffers).
TEST(TfliteRobustnessTest, BitFlippedRealModel) {
  LATTE_REQUIRE_MODEL(kSmallModel);
  const std::vector<std::uint8_t> full = ReadModel(kSmallModel);
  // Where the weight buffers lie, to aim the other half of the flips elsewhere.
  RawReader r(full);
  const std::size_t buffers = r.Vector(r.Root(), 4);
  std::vector<bool> is_data(full.size(), false);
  for (std::size_t i = 0; i < r.Length(buffers); ++i) {
    const std::size_t data = r.Vector(r.TableAt(buffers, i), 0);
    for (std::size_t k = 0; k < r.Length(data); ++k) is_data[data + 4 + k] = true;
  }
  std::vector<std::size_t> structure;
  for (std::size_t i = 0; i < full.size(); ++i)
    if (!is_data[i]) structure.push_back(i);
  ASSERT_GT(structure.size(), 1000u);

  std::mt19937 rng(2024);
  std::vector<std::uint8_t> bytes = full;
  int ok = 0, failed = 0;
  for (int round = 0; round < 2000; ++round) {
    const std::size_t at = round % 2 == 0 ? rng() % full.size() : structure[rng() % structure.size()];
    const int flips = 1 + static_cast<int>(rng() % 3);
    std::vector<std::pair<std::size_t, std::uint8_t>> changed;
    for (int f = 0; f < flips; ++f) {
      const std::size_t pos = f == 0 ? at : (at + rng() % 64) % full.size();
      changed.push_back({pos, bytes[pos]});
      bytes[pos] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    }
    auto graph = ImportTflite(bytes);
    if (graph.ok()) {
      ++ok;
      // A graph that imports must also survive validation and shape inference.
      auto full_import = ImportModelBytes(bytes, ModelFormat::kTflite);
      if (!full_import.ok()) {
        EXPECT_FALSE(full_import.status().message().empty());
      }
    } else {
      ++failed;
      EXPECT_FALSE(graph.status().message().empty());
    }
    for (auto it = changed.rbegin(); it != changed.rend(); ++it) bytes[it->first] = it->second;
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

TEST(TfliteRobustnessTest, BitFlippedSmallModel) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto w = m.FloatConstant({4, 3, 3, 3}, "w", std::vector<float>(108, 0.5f));
  const auto b = m.FloatConstant({4}, "b", {1, 2, 3, 4});
  const auto y = m.Activation({1, 8, 8, 4}, "y");
  m.Op(kConv, {x, w, b}, {y}).options_type = 1;
  m.ops.back().options.I8(0, 0).I32(1, 1).I32(2, 1).I8(3, 1);
  const auto z = m.Activation({1, 8, 8, 4}, "z");
  // Then RELU, PAD with constant paddings, RESHAPE with new_shape.
  const auto p = m.IntConstant({4, 2}, "paddings", {0, 0, 1, 1, 1, 1, 0, 0});
  const auto zp = m.Activation({1, 10, 10, 4}, "zp");
  m.Op(kRelu, {y}, {z});
  m.Op(kPad, {z, p}, {zp});
  const auto out = m.Activation({1, 400}, "out");
  m.Op(kReshape, {zp}, {out}).options_type = 17;
  m.ops.back().options.I32s(0, {1, 400});
  m.inputs = {x};
  m.outputs = {out};
  const std::vector<std::uint8_t> full = m.Build();
  ASSERT_TRUE(ImportModelBytes(full, ModelFormat::kTflite).ok());
  std::mt19937 rng(7);
  for (int round = 0; round < 4000; ++round) {
    std::vector<std::uint8_t> bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    auto graph = ImportTflite(bytes);
    if (graph.ok()) {
      auto full_import = ImportModelBytes(bytes, ModelFormat::kTflite);
      if (!full_import.ok()) {
        EXPECT_FALSE(full_import.status().message().empty());
      }
    } else {
      EXPECT_FALSE(graph.status().message().empty());
    }
  }
}

// Sets the length word of the vector field `field` of the table at `table` to `length`.
void PatchVectorLength(std::vector<std::uint8_t>& bytes, std::size_t table, int field, std::uint32_t length) {
  RawReader r(bytes);
  const std::size_t vec = r.Vector(table, field);
  ASSERT_NE(vec, 0u);
  std::memcpy(bytes.data() + vec, &length, 4);
}

TEST(TfliteRobustnessTest, HugeDeclaredVectorSizes) {
  const std::vector<std::uint8_t> good = TinyModel().Build();
  RawReader r(good);
  const std::size_t model = r.Root();
  const std::size_t sg = r.TableAt(r.Vector(model, 2), 0);
  const std::size_t tensor0 = r.TableAt(r.Vector(sg, 0), 0);
  const std::size_t op0 = r.TableAt(r.Vector(sg, 3), 0);
  for (std::uint32_t length : {0x7fffffffu, 0x40000000u, 0xffffffffu, 1000000u}) {
    std::vector<std::uint8_t> bytes = good;
    PatchVectorLength(bytes, sg, 0, length);
    ExpectInvalid(bytes, "field 'tensors'");
    bytes = good;
    PatchVectorLength(bytes, tensor0, 0, length);
    ExpectInvalid(bytes, "subgraph 0, tensor 0: field 'shape'");
    bytes = good;
    PatchVectorLength(bytes, op0, 1, length);
    ExpectInvalid(bytes, "field 'inputs'");
    bytes = good;
    PatchVectorLength(bytes, model, 4, length);
    ExpectInvalid(bytes, "field 'buffers'");
    bytes = good;
    PatchVectorLength(bytes, model, 1, length);
    ExpectInvalid(bytes, "field 'operator_codes'");
  }
  // A string's length too.
  std::vector<std::uint8_t> bytes = good;
  PatchVectorLength(bytes, tensor0, 3, 0x10000000u);
  ExpectInvalid(bytes, "field 'name'");
}

TEST(TfliteRobustnessTest, HugeDenseShapeOfASparseTensor) {
  // One stored value claiming a 100000 x 100000 dense tensor: the importer must refuse to
  // allocate 40 GB for it.
  ModelSpec m;
  const auto x = m.Activation({1, 100000}, "x");
  const auto w = m.FloatConstant({100000, 100000}, "w", {1.0f});
  m.tensors[static_cast<std::size_t>(w)].sparsity =
      SparsitySpec{{0, 1}, {}, {{0, 100000, 3, {}, {}}, {1, 0, 1, std::vector<std::int32_t>(100001, 0), {}}}};
  m.tensors[static_cast<std::size_t>(w)].sparsity->dims[1].segments.back() = 1;
  m.tensors[static_cast<std::size_t>(w)].sparsity->dims[1].indices = {0};
  const auto y = m.Activation({1, 100000}, "y");
  m.Op(kFullyConnected, {x, w}, {y});
  m.inputs = {x};
  m.outputs = {y};
  ExpectInvalid(m.Build(), "expanding it needs 40000000000 bytes");
}

TEST(TfliteRobustnessTest, HugeDenseShapeOfAConstant) {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x");
  const auto w = m.FloatConstant({1 << 30, 1 << 30}, "w", {1.0f, 2.0f});
  const auto y = m.Activation({1, 4}, "y");
  m.Op(kAdd, {x, w}, {y});
  m.inputs = {x};
  m.outputs = {y};
  ExpectInvalid(m.Build(), "subgraph 0, tensor 1 'w': buffer 1 has 8 bytes, but shape 1073741824x1073741824");
}

// Many tables may point to one string or vector; a small file must not expand into a huge
// model that way.
TEST(TfliteRobustnessTest, SharedDataCannotAmplify) {
  ModelSpec m;
  const std::string long_name(10000, 'n');
  std::int32_t prev = m.Activation({1, 4}, long_name);
  m.inputs = {prev};
  for (int i = 0; i < 2000; ++i) {
    const auto next = m.Activation({1, 4}, long_name);
    m.Op(kRelu, {prev}, {next});
    prev = next;
  }
  m.outputs = {prev};
  const auto bytes = m.Build();
  ASSERT_LT(bytes.size(), 200000u);  // 2001 tensors share one 10 kB name
  ExpectInvalid(bytes, "field 'name' is one of more strings than the file holds");

  // A large constant read as a shape by many RESHAPEs would be copied into each node.
  ModelSpec r;
  const auto x = r.Activation({1, 4}, "x");
  std::vector<std::int32_t> shape(5000, 1);
  shape[0] = 4;
  const auto s = r.IntConstant({5000}, "shape", shape);
  const auto y = r.Activation({}, "y");
  r.Op(kReshape, {x, s}, {y});
  r.inputs = {x};
  r.outputs = {y};
  ExpectInvalid(r.Build(), "subgraph 0, operator 0 (RESHAPE): input 1 'shape' has 20000 bytes, too many for a shape");
}

TEST(TfliteRobustnessTest, OperatorInputIndexOutOfRange) {
  ModelSpec m = TinyModel();
  m.ops[0].inputs = {999};
  ExpectInvalid(m.Build(), "subgraph 0, operator 0 (RELU): inputs tensor index 999 out of range (2 tensors)");
  m.ops[0].inputs = {-7};
  ExpectInvalid(m.Build(), "inputs tensor index -7 out of range");
}

TEST(TfliteRobustnessTest, OperatorOutputIndexOutOfRange) {
  ModelSpec m = TinyModel();
  m.ops[0].outputs = {2};
  ExpectInvalid(m.Build(), "subgraph 0, operator 0 (RELU): outputs tensor index 2 out of range (2 tensors)");
  m.ops[0].outputs = {-1};  // -1 only marks absent optional inputs
  ExpectInvalid(m.Build(), "outputs tensor index -1 out of range");
}

TEST(TfliteRobustnessTest, GraphInputOutputIndexOutOfRange) {
  ModelSpec m = TinyModel();
  m.inputs = {5};
  ExpectInvalid(m.Build(), "subgraph 0: inputs tensor index 5 out of range (2 tensors)");
  m = TinyModel();
  m.outputs = {1, 77};
  ExpectInvalid(m.Build(), "subgraph 0: outputs tensor index 77 out of range");
}

TEST(TfliteRobustnessTest, BufferIndexOutOfRange) {
  ModelSpec m = TinyModel();
  m.tensors[1].buffer = 42;
  ExpectInvalid(m.Build(), "subgraph 0, tensor 1 'y': buffer index 42 out of range (1 buffers)");
}

TEST(TfliteRobustnessTest, OpcodeIndexOutOfRange) {
  ModelSpec m = TinyModel();
  m.ops[0].opcode_index = 3;
  ExpectInvalid(m.Build(), "subgraph 0, operator 0: opcode index 3 out of range (1 operator codes)");
}

TEST(TfliteRobustnessTest, ExternalBufferOutOfRange) {
  ModelSpec m = TinyModel();
  m.buffers.push_back(BufferSpec{{}, 1u << 30, 16});
  const auto c = m.Activation({4}, "c");
  m.tensors[static_cast<std::size_t>(c)].buffer = 1;
  const auto y2 = m.Activation({1, 4}, "y2");
  m.Op(kAdd, {1, c}, {y2});
  m.outputs = {y2};
  ExpectInvalid(m.Build(), "buffer 1: external data at offset 1073741824 with size 16 lies outside the");
  m.buffers[1] = BufferSpec{{}, 8, ~std::uint64_t{0}};  // offset + size overflows
  ExpectInvalid(m.Build(), "lies outside the");
}

TEST(TfliteRobustnessTest, CyclicGraph) {
  // a = ADD(x, b); b = ADD(a, x): each feeds the other.
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x");
  const auto a = m.Activation({1, 4}, "a");
  const auto b = m.Activation({1, 4}, "b");
  m.Op(kAdd, {x, b}, {a});
  m.Op(kAdd, {a, x}, {b});
  m.inputs = {x};
  m.outputs = {b};
  const auto bytes = m.Build();
  // The file is well formed; the graph is not.
  auto graph = ImportTflite(bytes);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto imported = ImportModelBytes(bytes, ModelFormat::kTflite);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("cycle"), std::string::npos) << imported.status().message();
}

TEST(TfliteRobustnessTest, TensorWrittenByTwoOperators) {
  ModelSpec m = TinyModel();
  m.Op(kLogistic, {0}, {1});
  ExpectInvalid(m.Build(),
                "subgraph 0, tensor 1 'y' is written by both subgraph 0, operator 0 (RELU) and operator 1 (LOGISTIC)");
}

TEST(TfliteRobustnessTest, OperatorWritingAConstantOrAGraphInput) {
  ModelSpec m = TinyModel();
  const auto c = m.FloatConstant({1, 4}, "c", {1, 2, 3, 4});
  m.Op(kRelu, {1}, {c});
  ExpectInvalid(m.Build(), "subgraph 0, operator 1 (RELU): writes subgraph 0, tensor 2 'c', a constant");
  m = TinyModel();
  m.Op(kRelu, {1}, {0});
  ExpectInvalid(m.Build(), "writes subgraph 0, tensor 0 'x', a graph input");
}

TEST(TfliteRobustnessTest, WrongOptionsTableType) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto w = m.FloatConstant({4, 1, 1, 3}, "w", std::vector<float>(12, 1.0f));
  const auto y = m.Activation({1, 8, 8, 4}, "y");
  m.Op(kConv, {x, w}, {y}).options_type = 11;  // AddOptions on a CONV_2D
  m.ops.back().options.I8(0, 0);
  m.inputs = {x};
  m.outputs = {y};
  ExpectInvalid(m.Build(), "subgraph 0, operator 0 (CONV_2D): builtin_options has type 11, expected 1 (Conv2DOptions)");
}

TEST(TfliteRobustnessTest, BadOptionValues) {
  auto conv = [](TableSpec options) {
    ModelSpec m;
    const auto x = m.Activation({1, 8, 8, 3}, "x");
    const auto w = m.FloatConstant({4, 1, 1, 3}, "w", std::vector<float>(12, 1.0f));
    const auto y = m.Activation({1, 8, 8, 4}, "y");
    m.Op(kConv, {x, w}, {y}).options_type = 1;
    m.ops.back().options = std::move(options);
    m.inputs = {x};
    m.outputs = {y};
    return m.Build();
  };
  ExpectInvalid(conv(TableSpec().I32(1, 1).I32(2, 0)), "strides are 0x1, must be ≥ 1");
  ExpectInvalid(conv(TableSpec().I32(1, 1).I32(2, 1).I8(0, 7)), "unknown padding 7");
  ExpectInvalid(conv(TableSpec().I32(1, 1).I32(2, 1).I8(3, 9)), "unknown fused activation 9");
  ExpectInvalid(conv(TableSpec().I32(1, 1).I32(2, 1).I32(5, -2)), "dilations are -2x1");
  ExpectInvalid(conv(TableSpec()), "strides are 0x0");  // no strides at all
}

TEST(TfliteRobustnessTest, BadShapes) {
  ModelSpec m = TinyModel();
  m.tensors[0].shape = {1, -5};
  ExpectInvalid(m.Build(), "subgraph 0, tensor 0 'x': shape has dimension -5");
  m = TinyModel();
  m.tensors[0].shape_signature = std::vector<std::int32_t>{-1, 4, 1};
  ExpectInvalid(m.Build(), "shape_signature has rank 3 but shape has rank 2");
  m = TinyModel();
  m.tensors[0].shape = std::vector<std::int32_t>(40, 1);
  ExpectInvalid(m.Build(), "rank 40 exceeds 32");
}

TEST(TfliteRobustnessTest, MissingSubgraph) {
  // A model table with only a version: no subgraphs.
  flatbuffers::FlatBufferBuilder fbb;
  const auto start = fbb.StartTable();
  fbb.AddElement<std::uint32_t>(Vt(0), 3);
  fbb.Finish(flatbuffers::Offset<void>(fbb.EndTable(start)), "TFL3");
  std::vector<std::uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  ExpectInvalid(bytes, "model: has no subgraphs");
}

// Sparse metadata that points outside its arrays or disagrees with the shape.
TEST(TfliteRobustnessTest, BadSparsity) {
  auto model = [](SparsitySpec sparsity, std::vector<float> values) {
    ModelSpec m;
    const auto x = m.Activation({1, 4}, "x");
    const auto w = m.FloatConstant({4, 4}, "w", std::move(values));
    m.tensors[static_cast<std::size_t>(w)].sparsity = std::move(sparsity);
    const auto y = m.Activation({1, 4}, "y");
    m.Op(kFullyConnected, {x, w}, {y});
    m.inputs = {x};
    m.outputs = {y};
    return m.Build();
  };
  using D = SparsitySpec::Dim;
  const D dense4{0, 4, 3, {}, {}};
  // A valid one first: rows dense, columns CSR.
  const SparsitySpec good{{0, 1}, {}, {dense4, D{1, 0, 3, {0, 1, 1, 2, 3}, {0, 3, 1}}}};
  ASSERT_TRUE(ImportTflite(model(good, {1, 2, 3})).ok());

  SparsitySpec s = good;
  s.dims[1].indices = {0, 4, 1};  // column 4 of 4
  ExpectInvalid(model(s, {1, 2, 3}), "tensor 1 'w': sparsity level 1: array_indices[1] = 4 is out of range [0, 4)");
  s = good;
  s.dims[1].segments = {0, 1, 1, 2, 9};  // past the indices
  ExpectInvalid(model(s, {1, 2, 3}), "segment 3 is [2, 9), array_indices has 3 entries");
  s = good;
  s.dims[1].segments = {0, 2, 1, 2, 3};  // decreasing
  ExpectInvalid(model(s, {1, 2, 3}), "segment 1 is [2, 1)");
  s = good;
  s.dims[1].segments = {0, 1, 1};  // too few segments for 4 rows
  ExpectInvalid(model(s, {1, 2, 3}), "array_segments has 3 entries");
  s = good;
  s.dims[1].indices = {0, 2, 2};  // repeated column in one row
  s.dims[1].segments = {0, 1, 1, 3, 3};
  ExpectInvalid(model(s, {1, 2, 3}), "not increasing");
  ExpectInvalid(model(good, {1, 2}), "metadata places more than the 2 values stored");
  ExpectInvalid(model(good, {1, 2, 3, 4}), "metadata places 3 values, but 4 are stored");
  s = good;
  s.traversal_order = {1, 1};
  ExpectInvalid(model(s, {1, 2, 3}), "traversal_order entry 1 is 1, not a valid permutation");
  s = good;
  s.dims[0].dense_size = 5;
  ExpectInvalid(model(s, {1, 2, 3}), "level 0 is DENSE with size 5, expected 4");
  s = good;
  s.dims.pop_back();
  ExpectInvalid(model(s, {1, 2, 3}), "dim_metadata has 1 levels, expected 2");
  s = good;
  s.traversal_order = {0, 1, 2};
  s.block_map = {1};
  s.dims.push_back(D{0, 3, 3, {}, {}});  // block of 3 does not divide 4
  ExpectInvalid(model(s, {1, 2, 3}), "block size 3 does not divide dim 1");
  s = good;
  s.dims[1].index_type = 7;
  ExpectInvalid(model(s, {1, 2, 3}), "unknown index vector type 7");
}

TEST(TfliteRobustnessTest, BadCustomOptionsOfTransposedConv) {
  ModelSpec m;
  const auto x = m.Activation({1, 4, 4, 2}, "x");
  const auto w = m.FloatConstant({1, 2, 2, 2}, "w", std::vector<float>(8, 1.0f));
  const auto b = m.FloatConstant({1}, "b", {0.0f});
  const auto y = m.Activation({1, 8, 8, 1}, "y");
  OpSpec& op = m.Op(kCustom, {x, w, b}, {y});
  op.custom = "Convolution2DTransposeBias";
  op.custom_options = {1, 0, 0, 0, 2, 0, 0, 0};  // 8 bytes: no stride_h
  m.inputs = {x};
  m.outputs = {y};
  ExpectInvalid(m.Build(), "subgraph 0, operator 0 (Convolution2DTransposeBias): custom_options has 8 bytes");
  m.ops[0].custom_options = {9, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0};
  ExpectInvalid(m.Build(), "unknown padding 9");
}

TEST(TfliteRobustnessTest, MisalignedBufferIsCopied) {
  const std::vector<std::uint8_t> good = TinyModel().Build();
  std::vector<std::uint8_t> shifted(good.size() + 1);
  std::memcpy(shifted.data() + 1, good.data(), good.size());
  auto graph = ImportTflite(std::span<const std::uint8_t>(shifted.data() + 1, good.size()));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->num_nodes(), 1u);
}

}  // namespace
}  // namespace latte
