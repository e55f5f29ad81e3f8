// ONNX's own node tests (Debian's libonnx-testdata) on each kernel backend: every case whose nodes
// the backend says it runs must give the recorded outputs. One line per case: op, backend, and
// pass, FAIL or unsupported with the reason.

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "import/import.h"
#include "import/onnx/onnx_tensor.h"
#include "run/backend_registry.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

namespace fs = std::filesystem;

const char* const kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Ops whose results come from approximations of exp/log/erf (XNNPACK and oneDNN use polynomial
// or table-based kernels accurate to a few ulp of the result, not correctly rounded like numpy):
// compared at 1e-3 instead of 1e-4.
bool Transcendental(const std::string& op) {
  static const std::set<std::string> kOps = {"Sigmoid", "Tanh", "Elu", "Selu", "Softmax", "LogSoftmax", "Exp", "Log",
                                            "Pow", "Softplus", "Erf", "Gelu", "HardSwish", "Celu", "Mish", "Sqrt"};
  return kOps.count(op) != 0;
}

struct Case {
  std::string name;    // "test_relu"
  std::string ops;     // "Relu" (every node's op type, joined)
  bool transcendental = false;
  std::string model;   // model.onnx with every graph input but the first turned into an initializer
  std::vector<onnx::TensorProto> inputs;   // the inputs left as graph inputs, in order
  std::vector<onnx::TensorProto> outputs;  // expected, in graph output order
};

// Reads one test directory. Inputs after the first become constants (weights, bias, shapes,
// clip bounds are constants in real models, and the backends run those as weights); returns
// false with `why` when the case cannot be read.
bool LoadCase(const fs::path& dir, Case& c, std::string& why) {
  c.name = dir.filename().string();
  onnx::ModelProto model;
  if (!model.ParseFromString(ReadBytes(dir / "model.onnx"))) {
    why = "model.onnx does not parse";
    return false;
  }
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == "Dropout" && node.input_size() >= 3) {
      why = "Dropout in training mode draws a random mask";
      return false;
    }
    if (!c.ops.empty()) c.ops += "+";
    c.ops += node.op_type();
    c.transcendental = c.transcendental || Transcendental(node.op_type());
  }
  const fs::path data = dir / "test_data_set_0";
  std::vector<onnx::TensorProto> given;
  for (int i = 0; fs::exists(data / ("input_" + std::to_string(i) + ".pb")); ++i) {
    onnx::TensorProto t;
    if (!t.ParseFromString(ReadBytes(data / ("input_" + std::to_string(i) + ".pb")))) {
      why = "input_" + std::to_string(i) + ".pb does not parse";
      return false;
    }
    given.push_back(std::move(t));
  }
  for (int i = 0; fs::exists(data / ("output_" + std::to_string(i) + ".pb")); ++i) {
    onnx::TensorProto t;
    if (!t.ParseFromString(ReadBytes(data / ("output_" + std::to_string(i) + ".pb")))) {
      why = "output_" + std::to_string(i) + ".pb does not parse";
      return false;
    }
    c.outputs.push_back(std::move(t));
  }
  // Graph inputs that are not initializers, in order, are what input_i.pb feed.
  std::set<std::string> initialized;
  for (const auto& init : model.graph().initializer()) initialized.insert(init.name());
  std::vector<std::string> fed;
  for (const auto& input : model.graph().input())
    if (!initialized.count(input.name())) fed.push_back(input.name());
  if (fed.size() != given.size() || fed.empty()) {
    why = std::to_string(fed.size()) + " graph inputs, " + std::to_string(given.size()) + " input files";
    return false;
  }
  onnx::GraphProto* graph = model.mutable_graph();
  for (size_t i = 1; i < fed.size(); ++i) {
    onnx::TensorProto* init = graph->add_initializer();
    *init = given[i];
    init->set_name(fed[i]);
  }
  auto* inputs = graph->mutable_input();
  inputs->erase(std::remove_if(inputs->begin(), inputs->end(),
                               [&](const onnx::ValueInfoProto& v) {
                                 return std::find(fed.begin() + 1, fed.end(), v.name()) != fed.end();
                               }),
                inputs->end());
  c.inputs = {given[0]};
  model.SerializeToString(&c.model);
  return true;
}

enum class Outcome { kPass, kFail, kUnsupported };

struct Result {
  Outcome outcome = Outcome::kUnsupported;
  std::string detail;
};

// |got - want| ≤ tol + tol·|want| everywhere (NaN matches NaN); `detail` names the worst element.
bool Close(const float* got, const std::vector<float>& want, float tol, std::string& detail) {
  float worst = 0;
  size_t at = 0;
  bool ok = true;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    const float err = std::abs(got[i] - want[i]);
    const float excess = err - (tol + tol * std::abs(want[i]));
    if (!(excess <= 0)) {
      if (ok || !(excess <= worst)) worst = std::isnan(excess) ? INFINITY : excess, at = i;
      ok = false;
    }
  }
  if (!ok) detail = "element " + std::to_string(at) + " is " + std::to_string(got[at]) + ", expected " + std::to_string(want[at]);
  return ok;
}

Result RunCase(const Case& c, const std::string& backend, const BackendRegistry& registry) {
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(c.model.data()), c.model.size());
  auto graph = ImportModelBytes(bytes, ModelFormat::kOnnx);
  if (!graph.ok()) return {Outcome::kUnsupported, "import: " + graph.status().message()};
  if (graph->outputs.size() != c.outputs.size())
    return {Outcome::kUnsupported, "import: " + std::to_string(graph->outputs.size()) + " outputs, " +
                                       std::to_string(c.outputs.size()) + " expected"};
  for (TensorId id : graph->inputs)
    if (graph->tensor(id).dtype != DataType::kFloat32) return {Outcome::kUnsupported, "a non-float input"};
  for (const onnx::TensorProto& t : c.outputs)
    if (t.data_type() != onnx::TensorProto::FLOAT) return {Outcome::kUnsupported, "a non-float output"};
  Placement placement;
  placement.default_backend = backend;
  auto executor = Executor::Create(*graph, placement, registry, RunOptions{});
  if (!executor.ok()) {
    // Anything but "unsupported" from a valid conformance model is a bug to see.
    const bool expected = executor.status().code() == StatusCode::kUnsupported;
    return {expected ? Outcome::kUnsupported : Outcome::kFail, executor.status().message()};
  }
  auto input = onnx_import::TensorFromProto(c.inputs[0], "input");
  if (!input.ok()) return {Outcome::kFail, "input_0.pb: " + input.status().message()};
  const TensorId in_id = graph->inputs[0];
  TensorBuffers& buffers = (*executor)->buffers();
  if (input->data->size() != buffers.bytes(in_id)) return {Outcome::kFail, "input_0.pb size differs from the graph input"};
  std::memcpy(buffers.mutable_data(in_id), input->data->data(), input->data->size());
  for (int run = 0; run < 2; ++run) {  // twice: buffers are rebound on every run
    Status s = (*executor)->Run();
    if (!s.ok()) return {Outcome::kFail, "run: " + s.message()};
  }
  const float tol = c.transcendental ? 1e-3f : 1e-4f;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    auto want_tensor = onnx_import::TensorFromProto(c.outputs[i], "output");
    if (!want_tensor.ok()) return {Outcome::kFail, "output_" + std::to_string(i) + ".pb: " + want_tensor.status().message()};
    auto want = ConstantFloats(*want_tensor);
    if (!want.ok()) return {Outcome::kFail, "output_" + std::to_string(i) + ".pb: " + want.status().message()};
    const TensorId out = graph->outputs[i];
    if (buffers.bytes(out) != want->size() * sizeof(float))
      return {Outcome::kFail, "output " + std::to_string(i) + " has " + std::to_string(buffers.bytes(out) / sizeof(float)) +
                                  " values, expected " + std::to_string(want->size())};
    std::string detail;
    if (!Close(buffers.as<float>(out), *want, tol, detail))
      return {Outcome::kFail, "output " + std::to_string(i) + ": " + detail};
  }
  return {Outcome::kPass, ""};
}

void RunConformance(const std::string& backend) {
  ASSERT_TRUE(fs::exists(kNodeTests)) << kNodeTests << " is missing: install libonnx-testdata";
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kNodeTests))
    if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::map<Outcome, int> counts;
  std::string failures;
  for (const fs::path& dir : dirs) {
    Case c;
    std::string why;
    Result r;
    if (!LoadCase(dir, c, why)) {
      r = {Outcome::kUnsupported, "test data: " + why};
    } else {
      r = RunCase(c, backend, registry);
    }
    ++counts[r.outcome];
    const char* verdict = r.outcome == Outcome::kPass ? "pass" : r.outcome == Outcome::kFail ? "FAIL" : "unsupported";
    std::cout << c.name << " [" << c.ops << "] " << backend << ": " << verdict << (r.detail.empty() ? "" : " (" + r.detail + ")")
              << "\n";
    if (r.outcome == Outcome::kFail) failures += "\n  " + c.name + ": " + r.detail;
  }
  std::cout << backend << ": " << counts[Outcome::kPass] << " pass, " << counts[Outcome::kFail] << " fail, "
            << counts[Outcome::kUnsupported] << " unsupported of " << dirs.size() << " node tests\n";
  EXPECT_EQ(counts[Outcome::kFail], 0) << backend << " claims these cases and gets them wrong:" << failures;
  // The backends run the common ops: a collapse of coverage is a regression too.
  EXPECT_GE(counts[Outcome::kPass], 100) << backend;
}

TEST(Conformance, XnnpackOnOnnxNodeTests) { RunConformance("xnnpack"); }
TEST(Conformance, OnednnOnOnnxNodeTests) { RunConformance("onednn"); }

}  // namespace
}  // namespace latte
