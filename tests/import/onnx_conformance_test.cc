// ONNX's own node tests (Debian libonnx-testdata): every model.onnx goes through
// latte::ImportModel. A model imports fully, imports with opaque nodes, or fails with a
// clear error; never a crash, an empty message or an internal error. For fully imported
// models, Latte's inferred output shapes are compared with the expected outputs' dims.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <regex>
#include <string>
#include <vector>

#include "core/file.h"
#include "import/import.h"

namespace latte {
namespace {

namespace fs = std::filesystem;

const char* const kNodeTests = "/usr/share/libonnx-testdata/data/node";

// An error message with its specifics (names, numbers) blurred, to group alike errors.
std::string MessageKind(const std::string& message) {
  static const std::regex quoted("'[^']*'"), number("[0-9]+");
  std::string kind = std::regex_replace(std::regex_replace(message, quoted, "'…'"), number, "N");
  return kind.size() > 110 ? kind.substr(0, 110) + "…" : kind;
}

struct Mismatch {
  std::string test, got, want;
};

struct Sweep {
  int imported = 0, with_opaque = 0, failed = 0, compared = 0;
  int imported_constant_fed = 0;  // opaque models that import fully once their inputs are constants
  std::map<std::string, std::vector<std::string>> errors;  // message kind → tests
  std::map<std::string, int> opaque_ops;                   // source op → nodes
  std::map<std::string, int> opaque_reasons;               // why a known op stayed opaque → nodes
  std::vector<std::string> problems;                       // empty messages, internal errors
  std::map<std::string, std::vector<Mismatch>> mismatches;  // op type → mismatches
};

// Every graph input's declared shape, given back as input_shapes: ImportModel then infers
// all known ops' shapes anew with Latte's rules rather than keeping those ONNX inferred.
ImportOptions DeclaredInputShapes(std::span<const std::uint8_t> bytes) {
  ImportOptions options;
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return options;
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  for (const auto& input : model.graph().input()) {
    if (initializers.count(input.name()) || !input.type().tensor_type().has_shape()) continue;
    Shape shape;
    bool known = true;
    for (const auto& d : input.type().tensor_type().shape().dim()) {
      known = known && d.has_dim_value() && d.dim_value() > 0;
      shape.push_back(d.dim_value());
    }
    if (known) options.input_shapes[input.name()] = shape;
  }
  return options;
}

std::vector<fs::path> TestDirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNodeTests, ec))
    if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// Op type of the node writing each graph output, from the file.
std::vector<std::string> OutputOps(const fs::path& model_path) {
  std::vector<std::string> ops;
  auto bytes = ReadFileBytes(model_path.string());
  onnx::ModelProto model;
  if (!bytes.ok() || !model.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) return ops;
  for (const auto& out : model.graph().output()) {
    std::string op = "(no node)";
    for (const auto& n : model.graph().node())
      for (const auto& o : n.output())
        if (o == out.name()) op = n.op_type();
    ops.push_back(op);
  }
  return ops;
}

void CompareOutputs(const fs::path& dir, const Graph& g, Sweep& sweep, const std::string& suffix = "") {
  const std::vector<std::string> ops = OutputOps(dir / "model.onnx");
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const fs::path expected = dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb");
    auto bytes = ReadFileBytes(expected.string());
    onnx::TensorProto tensor;
    if (!bytes.ok() || !tensor.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) continue;
    const Shape want(tensor.dims().begin(), tensor.dims().end());
    const Tensor& out = g.tensor(g.outputs[i]);
    ++sweep.compared;
    if (out.fully_known() && out.shape == want) continue;
    const std::string op = i < ops.size() ? ops[i] : "?";
    std::string test = dir.filename().string() + suffix;
    if (g.outputs.size() > 1) test.append("#").append(std::to_string(i));
    sweep.mismatches[op].push_back({test, ShapeToString(out.shape, out.shape_known), ShapeToString(want)});
  }
}

// The model with its inputs after the first turned into initializers holding the test's
// input data: ops whose shape-like inputs (Reshape's shape, Resize's scales, ...) the test
// feeds at run time then map to known kinds too.
std::optional<std::vector<std::uint8_t>> WithConstantInputs(const fs::path& dir) {
  auto bytes = ReadFileBytes((dir / "model.onnx").string());
  onnx::ModelProto model;
  if (!bytes.ok() || !model.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) return std::nullopt;
  auto* graph = model.mutable_graph();
  if (graph->input_size() < 2) return std::nullopt;
  for (int i = 1; i < graph->input_size(); ++i) {
    auto data = ReadFileBytes((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
    onnx::TensorProto* t = graph->add_initializer();
    if (!data.ok() || !t->ParseFromArray(data->data(), static_cast<int>(data->size()))) return std::nullopt;
    t->set_name(graph->input(i).name());
  }
  graph->mutable_input()->DeleteSubrange(1, graph->input_size() - 1);
  std::string out = model.SerializeAsString();
  return std::vector<std::uint8_t>(out.begin(), out.end());
}

void CompareWithConstantInputs(const fs::path& dir, const Graph& imported, Sweep& sweep) {
  bool fed = false;  // only models held back by run-time inputs
  for (const Node& n : imported.nodes())
    fed = fed || n.unsupported_reason.find("non-constant") != std::string::npos;
  if (!fed) return;
  auto bytes = WithConstantInputs(dir);
  if (!bytes) return;
  auto g = ImportModelBytes(*bytes, ModelFormat::kOnnx, DeclaredInputShapes(*bytes));
  const std::string test = dir.filename().string() + "(const)";
  if (!g.ok()) {
    const auto ops = OutputOps(dir / "model.onnx");
    sweep.mismatches[ops.empty() ? "?" : ops[0]].push_back({test, "error: " + g.status().message(), "-"});
    return;
  }
  for (const Node& n : g->nodes())
    if (n.kind == OpKind::kOpaque) return;
  ++sweep.imported_constant_fed;
  CompareOutputs(dir, *g, sweep, "(const)");
}

Sweep RunSweep(bool compare_shapes) {
  Sweep sweep;
  for (const fs::path& dir : TestDirs()) {
    const std::string name = dir.filename().string();
    auto bytes = ReadFileBytes((dir / "model.onnx").string());
    if (!bytes.ok()) {
      sweep.problems.push_back(name + ": " + bytes.status().message());
      continue;
    }
    // The plain import; for the shape check, with the inputs' shapes restated (see above).
    auto g = compare_shapes ? ImportModelBytes(*bytes, ModelFormat::kOnnx, DeclaredInputShapes(*bytes))
                            : ImportModel((dir / "model.onnx").string());
    if (!g.ok()) {
      // Inferring anew failed where keeping ONNX's shapes worked: Latte's rules disagree.
      if (compare_shapes && ImportModel((dir / "model.onnx").string()).ok()) {
        const auto ops = OutputOps(dir / "model.onnx");
        sweep.mismatches[ops.empty() ? "?" : ops[0]].push_back({name, "error: " + g.status().message(), "-"});
      }
      ++sweep.failed;
      const Status& s = g.status();
      if (s.message().empty()) sweep.problems.push_back(name + ": empty error message");
      if (s.code() == StatusCode::kInternal) sweep.problems.push_back(name + ": internal error: " + s.message());
      sweep.errors[MessageKind(s.message())].push_back(name);
      continue;
    }
    bool opaque = false;
    for (const Node& n : g->nodes())
      if (n.kind == OpKind::kOpaque) {
        opaque = true;
        ++sweep.opaque_ops[n.source_op];
        if (n.unsupported_reason.rfind("ONNX op '", 0) != 0) ++sweep.opaque_reasons[MessageKind(n.unsupported_reason)];
        if (n.unsupported_reason.empty()) sweep.problems.push_back(name + ": opaque node '" + n.name + "' without a reason");
      }
    if (opaque) {
      ++sweep.with_opaque;
      if (compare_shapes) CompareWithConstantInputs(dir, *g, sweep);
      continue;
    }
    ++sweep.imported;
    if (compare_shapes) CompareOutputs(dir, *g, sweep);
  }
  return sweep;
}

TEST(OnnxConformance, EveryNodeTestImportsOrFailsCleanly) {
  const auto dirs = TestDirs();
  ASSERT_FALSE(dirs.empty()) << "no ONNX node tests under " << kNodeTests << " (Debian package libonnx-testdata)";
  const Sweep sweep = RunSweep(false);
  std::cout << "ONNX node tests: " << dirs.size() << " models: " << sweep.imported << " imported, " << sweep.with_opaque
            << " with unsupported ops (opaque nodes), " << sweep.failed << " failed with an error\n";
  std::cout << "errors by kind:\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> errors(sweep.errors.begin(), sweep.errors.end());
  std::sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [kind, tests] : errors) {
    std::cout << "  " << tests.size() << "× " << kind << "  [" << tests[0];
    if (tests.size() > 1) std::cout << ", " << tests[1];
    if (tests.size() > 2) std::cout << ", …";
    std::cout << "]\n";
  }
  std::cout << "opaque ops:";
  for (const auto& [op, n] : sweep.opaque_ops) std::cout << " " << op << "×" << n;
  std::cout << "\nknown ops kept opaque:\n";
  for (const auto& [reason, n] : sweep.opaque_reasons) std::cout << "  " << n << "× " << reason << "\n";
  EXPECT_EQ(sweep.imported + sweep.with_opaque + sweep.failed, static_cast<int>(dirs.size()));
  for (const std::string& p : sweep.problems) ADD_FAILURE() << p;
}

// Fails while Latte's shape inference disagrees with ONNX's reference outputs; the list says
// which op types to look at.
TEST(OnnxConformance, InferredShapesMatchExpectedOutputs) {
  ASSERT_FALSE(TestDirs().empty()) << "no ONNX node tests under " << kNodeTests;
  const Sweep sweep = RunSweep(true);
  int count = 0;
  for (const auto& [op, list] : sweep.mismatches) count += static_cast<int>(list.size());
  std::cout << "compared " << sweep.compared << " outputs of " << sweep.imported << " fully imported models and "
            << sweep.imported_constant_fed << " more that import fully with their inputs as constants ((const) below); "
            << count << " shape mismatches\n";
  std::string report;
  for (const auto& [op, list] : sweep.mismatches) {
    report += "  " + op + " (" + std::to_string(list.size()) + "):";
    for (const Mismatch& m : list) report += " " + m.test + " got " + m.got + " want " + m.want + ";";
    report += "\n";
  }
  std::cout << report;
  EXPECT_EQ(count, 0) << "Latte's inferred output shapes differ from ONNX's expected outputs:\n" << report;
}

}  // namespace
}  // namespace latte
