#include "run/ort/ort_backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "import/export/onnx_export.h"
#include "ir/fusion_rules.h"
#include "ir/nchwc_layout.h"
#include "run/node_checks.h"

#if LATTE_HAVE_ORT
// The API table comes from the dlopen'ed library (Ort::InitApi), never from a link-time symbol.
#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>
#endif

namespace latte {

std::string OrtLibraryPath() {
  if (const char* env = std::getenv("LATTE_ORT_LIBRARY"); env != nullptr && *env != '\0') return env;
#ifdef LATTE_ORT_LIBRARY
  return LATTE_ORT_LIBRARY;
#else
  return "";
#endif
}

namespace {

const char kHowToGet[] =
    "run scripts/setup (it fetches ONNX Runtime into .deps/onnxruntime), or configure with "
    "-DORT_ROOT=<your install> / set LATTE_ORT_LIBRARY=<path to libonnxruntime.so>";

}  // namespace

void AttributeOrtEvents(const std::vector<OrtProfileEvent>& events, std::vector<double>& node_us, LayoutUs& layout) {
  const auto n = static_cast<NodeId>(node_us.size());
  auto owned = [&](const OrtProfileEvent& e) { return e.owner >= 0 && e.owner < n; };
  std::vector<bool> seen(node_us.size(), false);
  for (const OrtProfileEvent& e : events)
    if (owned(e)) seen[static_cast<std::size_t>(e.owner)] = true;
  std::vector<NodeId> next_owner(events.size() + 1, -1);  // the owned event after each
  for (std::size_t i = events.size(); i-- > 0;) next_owner[i] = owned(events[i]) ? events[i].owner : next_owner[i + 1];
  NodeId previous = -1;
  double pending = 0;  // waits for the next owned event
  for (std::size_t i = 0; i < events.size(); ++i) {
    const OrtProfileEvent& e = events[i];
    if (owned(e)) {
      if (e.layout_transpose) layout.transposes += e.us;
      node_us[static_cast<std::size_t>(e.owner)] += e.us + pending;
      pending = 0;
      previous = e.owner;
      continue;
    }
    const bool reorder = e.op.rfind("Reorder", 0) == 0;
    if (reorder) layout.reorders += e.us;
    if (reorder && e.op == "ReorderOutput" && previous >= 0) {
      node_us[static_cast<std::size_t>(previous)] += e.us;
      continue;
    }
    if (!reorder) {
      const NodeId upto = next_owner[i + 1] >= 0 ? next_owner[i + 1] : n;
      NodeId split = -1;
      for (NodeId k = previous + 1; k < upto && split < 0; ++k)
        if (!seen[static_cast<std::size_t>(k)]) split = k;
      if (split >= 0) {
        node_us[static_cast<std::size_t>(split)] += e.us;
        continue;
      }
    }
    pending += e.us;
  }
  if (pending > 0 && previous >= 0) node_us[static_cast<std::size_t>(previous)] += pending;
}

#if !LATTE_HAVE_ORT

Expected<std::string> LoadOnnxRuntime(const std::string& path) {
  return NotFound("this build has no ONNX Runtime headers (none found at configure time): " + std::string(kHowToGet));
}
Expected<std::unique_ptr<Backend>> OrtBackend::Create(const RunOptions&) {
  LATTE_ASSIGN_OR_RETURN(std::string version, LoadOnnxRuntime(""));
  return Internal("unreachable");
}
std::string OrtBackend::Version() const { return "ONNX Runtime (not built)"; }
Support OrtBackend::Supports(const Graph&, NodeId) const { return Support::No("ONNX Runtime is not built in"); }
Support OrtBackend::RunsPrecision(Precision) const { return Support::No("ONNX Runtime is not built in"); }
Expected<std::unique_ptr<PreparedNode>> OrtBackend::Prepare(const Graph&, NodeId) {
  return Unsupported("ONNX Runtime is not built in");
}
Expected<std::unique_ptr<PreparedGraph>> OrtBackend::PrepareGraph(const Graph&) {
  return Unsupported("ONNX Runtime is not built in");
}

#else

namespace {

struct Loaded {
  const OrtApi* api = nullptr;
  std::string version;
};

std::mutex& LoadMutex() {
  static std::mutex mutex;
  return mutex;
}

Ort::Env& Environment() {
  static Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "latte");
  return env;
}

Expected<ONNXTensorElementDataType> ElementType(DataType type) {
  switch (type) {
    case DataType::kFloat32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case DataType::kFloat16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case DataType::kFloat64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case DataType::kInt8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case DataType::kUInt8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case DataType::kInt16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case DataType::kInt32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case DataType::kInt64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case DataType::kBool: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    default: break;
  }
  return Unsupported("no ONNX Runtime element type for " + std::string(DataTypeName(type)));
}

// One ORT session over an exported model, fed from and writing to TensorBuffers.
class Session {
 public:
  static Expected<std::unique_ptr<Session>> Create(const Graph& graph, const std::string& model,
                                                   std::vector<TensorId> inputs, std::vector<TensorId> outputs,
                                                   const RunOptions& options) {
    std::unique_ptr<Session> s(new Session(graph, std::move(inputs), std::move(outputs)));
    try {
      Ort::SessionOptions so;
      so.SetIntraOpNumThreads(options.num_threads);
      so.SetInterOpNumThreads(1);
      so.SetExecutionMode(ORT_SEQUENTIAL);
      so.SetGraphOptimizationLevel(ORT_ENABLE_ALL);
      s->session_ = std::make_unique<Ort::Session>(Environment(), model.data(), model.size(), so);
      Ort::AllocatorWithDefaultOptions allocator;
      if (s->session_->GetInputCount() != s->inputs_.size() || s->session_->GetOutputCount() != s->outputs_.size())
        return Internal("the exported model's inputs/outputs do not match the graph's");
      for (size_t i = 0; i < s->inputs_.size(); ++i)
        s->input_names_.push_back(s->session_->GetInputNameAllocated(i, allocator).get());
      for (size_t i = 0; i < s->outputs_.size(); ++i)
        s->output_names_.push_back(s->session_->GetOutputNameAllocated(i, allocator).get());
    } catch (const Ort::Exception& e) {
      return Unsupported(std::string("ONNX Runtime refused the exported model: ") + e.what());
    }
    for (auto& n : s->input_names_) s->input_ptrs_.push_back(n.c_str());
    for (auto& n : s->output_names_) s->output_ptrs_.push_back(n.c_str());
    return s;
  }

  Status Run(TensorBuffers& buffers, const Ort::RunOptions& run_options) {
    try {
      std::vector<Ort::Value> in, out;
      LATTE_RETURN_IF_ERROR(Bind(buffers, inputs_, in, false));
      LATTE_RETURN_IF_ERROR(Bind(buffers, outputs_, out, true));
      session_->Run(run_options, input_ptrs_.data(), in.data(), in.size(), output_ptrs_.data(), out.data(), out.size());
    } catch (const Ort::Exception& e) {
      return Internal(std::string("ONNX Runtime run failed: ") + e.what());
    }
    return Status::Ok();
  }

 private:
  Session(const Graph& graph, std::vector<TensorId> inputs, std::vector<TensorId> outputs)
      : graph_(graph), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

  // Tensors over the buffers' own memory: no copies in or out.
  Status Bind(TensorBuffers& buffers, const std::vector<TensorId>& ids, std::vector<Ort::Value>& values, bool writable) {
    static const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    for (TensorId id : ids) {
      const Tensor& t = graph_.tensor(id);
      std::uint8_t* data = writable ? buffers.mutable_data(id) : const_cast<std::uint8_t*>(buffers.data(id));
      if (data == nullptr) return Internal("tensor '" + t.name + "' has no buffer");
      LATTE_ASSIGN_OR_RETURN(ONNXTensorElementDataType type, ElementType(t.dtype));
      const size_t bytes = static_cast<size_t>(t.num_bytes().value_or(0));
      values.push_back(Ort::Value::CreateTensor(memory, data, bytes, t.shape.data(), t.shape.size(), type));
    }
    return Status::Ok();
  }

  const Graph& graph_;
  std::vector<TensorId> inputs_, outputs_;
  std::unique_ptr<Ort::Session> session_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<const char*> input_ptrs_, output_ptrs_;
};

class OrtNode final : public PreparedNode {
 public:
  explicit OrtNode(std::unique_ptr<Session> session) : session_(std::move(session)) {}
  Status Run(TensorBuffers& buffers) override { return session_->Run(buffers, run_options_); }

 private:
  std::unique_ptr<Session> session_;
  Ort::RunOptions run_options_;
};

// The Latte node an ORT node came from: ORT names a fused node "fused <first node>" and a node
// its NCHWc layout pass rewrote "<output tensor>_nchwc"; the exporter recorded both kinds of name.
NodeId OwnerOf(std::string name, const std::map<std::string, NodeId>& owners) {
  if (name.rfind("fused ", 0) == 0) name.erase(0, 6);
  if (name.ends_with("_nchwc")) name.resize(name.size() - 6);
  if (auto it = owners.find(name); it != owners.end()) return it->second;
  return OnnxNodeOwner(name);
}

// Reads a profile ORT wrote and adds each node event's duration to a Latte node (AttributeOrtEvents).
Status AddProfile(const std::filesystem::path& file, const std::map<std::string, NodeId>& owners,
                  std::vector<double>& node_us, LayoutUs& layout) {
  std::ifstream in(file);
  if (!in) return IoError("cannot read ONNX Runtime's profile " + file.string());
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.is_array()) return Internal("ONNX Runtime's profile " + file.string() + " is not a JSON array");
  std::vector<std::pair<double, OrtProfileEvent>> events;  // by start time
  for (const auto& e : json) {
    if (!e.is_object() || e.value("cat", "") != "Node") continue;
    std::string name = e.value("name", "");
    const std::string suffix = "_kernel_time";
    if (!name.ends_with(suffix)) continue;
    name.resize(name.size() - suffix.size());
    OrtProfileEvent event;
    event.owner = OwnerOf(name, owners);
    event.us = e.value("dur", 0.0);
    if (auto args = e.find("args"); args != e.end() && args->is_object()) event.op = args->value("op_name", "");
    event.layout_transpose = event.op == "Transpose" && IsOnnxLayoutTranspose(name);
    events.emplace_back(e.value("ts", 0.0), std::move(event));
  }
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<OrtProfileEvent> ordered;
  for (auto& [ts, event] : events) ordered.push_back(std::move(event));
  AttributeOrtEvents(ordered, node_us, layout);
  return Status::Ok();
}

class OrtGraph final : public PreparedGraph {
 public:
  OrtGraph(const Graph& graph, std::unique_ptr<Session> session, std::map<std::string, NodeId> owners)
      : graph_(graph), session_(std::move(session)), owners_(std::move(owners)) {}
  Status Run(TensorBuffers& buffers) override { return session_->Run(buffers, plain_); }

  Status RunProfiled(TensorBuffers& buffers, std::vector<double>& node_us, LayoutUs& layout) override {
    namespace fs = std::filesystem;
    static std::atomic<int> counter{0};
    std::error_code ec;
    // $LATTE_ORT_PROFILE_DIR keeps ORT's own profile files there (bench/nchwc_walk_check.sh reads
    // them); otherwise they are read and removed from the temporary directory.
    const char* keep_in = std::getenv("LATTE_ORT_PROFILE_DIR");
    const bool keep = keep_in != nullptr && *keep_in != '\0';
    const fs::path dir = keep ? fs::path(keep_in) : fs::temp_directory_path(ec);
    if (ec) return IoError("no temporary directory for ONNX Runtime's profile: " + ec.message());
    const std::string stem = "latte-ort-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    Ort::RunOptions profiled;
    try {
      profiled.EnableProfiling((dir / stem).c_str());
    } catch (const Ort::Exception& e) {
      return Unsupported(std::string("ONNX Runtime cannot profile a run: ") + e.what());
    }
    node_us.resize(graph_.num_nodes(), 0.0);
    Status run = session_->Run(buffers, profiled);
    // The profile is written when the run options go: [prefix]_[timestamp].json.
    profiled = Ort::RunOptions(nullptr);
    Status parsed = Status::Ok();
    bool found = false;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind(stem + "_", 0) != 0 || !file.ends_with(".json")) continue;
      found = true;
      if (parsed.ok()) parsed = AddProfile(entry.path(), owners_, node_us, layout);
      if (!keep) fs::remove(entry.path(), ec);
    }
    LATTE_RETURN_IF_ERROR(run);
    if (!found) return Internal("ONNX Runtime wrote no profile for a profiled run (looked for " + (dir / stem).string() + "_*.json)");
    return parsed;
  }

 private:
  const Graph& graph_;
  std::unique_ptr<Session> session_;
  std::map<std::string, NodeId> owners_;
  Ort::RunOptions plain_;
};

}  // namespace

Expected<std::string> LoadOnnxRuntime(const std::string& path) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  static std::map<std::string, Expected<Loaded>> loaded;
  if (auto it = loaded.find(path); it != loaded.end()) {
    if (!it->second.ok()) return it->second.status();
    return it->second->version;
  }
  auto load = [&]() -> Expected<Loaded> {
    if (path.empty()) return NotFound(std::string("ONNX Runtime was not found at build time: ") + kHowToGet);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return NotFound("cannot load ONNX Runtime from " + path + " (" + (why ? why : "unknown reason") + "): " + kHowToGet);
    }
    using GetApiBase = const OrtApiBase* (*)();
    auto get_base = reinterpret_cast<GetApiBase>(dlsym(handle, "OrtGetApiBase"));
    if (get_base == nullptr) return NotFound(path + " is not ONNX Runtime (no OrtGetApiBase): " + kHowToGet);
    const OrtApiBase* base = get_base();
    Loaded result;
    result.version = base->GetVersionString();
    result.api = base->GetApi(ORT_API_VERSION);
    if (result.api == nullptr)
      return NotFound(path + " is ONNX Runtime " + result.version + ", older than the headers Latte was built with (API " +
                      std::to_string(ORT_API_VERSION) + "): " + kHowToGet);
    return result;  // the library stays loaded for the process's life
  };
  auto result = load();
  if (result.ok()) Ort::InitApi(result->api);
  loaded.emplace(path, result);
  if (!result.ok()) return result.status();
  return result->version;
}

Expected<std::unique_ptr<Backend>> OrtBackend::Create(const RunOptions& options) {
  LATTE_ASSIGN_OR_RETURN(std::string version, LoadOnnxRuntime(OrtLibraryPath()));
  if (options.num_threads < 1) return InvalidInput("num_threads must be at least 1");
  return std::unique_ptr<Backend>(new OrtBackend(options, std::move(version)));
}

std::string OrtBackend::Version() const {
  return "ONNX Runtime " + version_ + " (CPU, " + std::to_string(options_.num_threads) +
         (options_.num_threads == 1 ? " thread)" : " threads)");
}

namespace {
// What ort answers for bf16.
constexpr const char* kBf16Refusal =
    "bf16 unsupported on ort, because Latte hands ONNX Runtime fp32 models only (no bf16 export)";

// The kinds ONNX Runtime runs in int8 when an exported model carries them in QDQ form (its QDQ
// fusions on the CPU provider: QLinearConv, QGemm and QLinearMatMul, the QLinear elementwise ops and
// pools, and the data movement whose dequantize and quantize it drops). Any other kind it would run
// in float between a dequantize and a quantize: such a node stays fp32, saying so.
bool OrtRunsInt8(OpKind kind) {
  switch (kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kFullyConnected: case OpKind::kMatMul:
    case OpKind::kAdd: case OpKind::kMul: case OpKind::kAvgPool2D: case OpKind::kGlobalAvgPool: case OpKind::kMaxPool2D:
    case OpKind::kSigmoid: case OpKind::kLeakyRelu: case OpKind::kSoftmax: case OpKind::kConcat: case OpKind::kResize:
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze: case OpKind::kTranspose:
    case OpKind::kGather: case OpKind::kSlice: case OpKind::kReduceMax: case OpKind::kReduceMin:
    case OpKind::kRelu: case OpKind::kRelu6: case OpKind::kClip:
    case OpKind::kPad:  // exported as a pad of the quantized values (onnx_export)
      return true;
    default:
      return false;
  }
}

bool IsQuantized(const Tensor& t) {
  return t.dtype == DataType::kInt8 || t.dtype == DataType::kUInt8 || !t.quant.empty();
}
}  // namespace

// int8: the exported model is in QDQ form (onnx_export), which ONNX Runtime fuses into its int8
// kernels (MLAS, with VNNI where the CPU has it).
Support OrtBackend::RunsPrecision(Precision precision) const {
  return precision == Precision::kBf16 ? Support::No(kBf16Refusal) : Support::Yes();
}

Support OrtBackend::Supports(const Graph& graph, NodeId id) const {
  if (options_.precision == Precision::kBf16) return Support::No(kBf16Refusal);
  const Node& node = graph.node(id);
  const bool converts = node.kind == OpKind::kQuantize || node.kind == OpKind::kDequantize;
  bool quantized = false;
  auto check = [&](TensorId t, const char* role) -> Status {
    const Tensor& tensor = graph.tensor(t);
    if (IsQuantized(tensor)) {
      const std::string what = std::string(role) + " '" + tensor.name + "'";
      // A quantized model's own weights (int8, per channel) and biases (int32) are read by its
      // dequantize nodes, which the export writes as they are; any other node reading them would
      // need them quantized by the export, which starts from float weights.
      if (tensor.is_constant()) {
        if (node.kind != OpKind::kDequantize) return Unsupported(what + " holds quantized weights, read by a " + std::string(OpName(node.kind)) + " (only a dequantize reads them on ONNX Runtime)");
        if (tensor.dtype != DataType::kInt8 && tensor.dtype != DataType::kUInt8 && tensor.dtype != DataType::kInt32)
          return Unsupported(what + " is " + std::string(DataTypeName(tensor.dtype)) + " with quantization parameters");
        return CheckQuantParams(tensor, what, /*per_tensor=*/false);
      }
      if ((tensor.dtype != DataType::kInt8 && tensor.dtype != DataType::kUInt8) || tensor.quant.empty())
        return Unsupported(what + " is " + std::string(DataTypeName(tensor.dtype)) + " with quantization parameters");
      // What the export writes as a QuantizeLinear/DequantizeLinear pair's operands, checked here
      // rather than clamped there.
      LATTE_RETURN_IF_ERROR(CheckQuantParams(tensor, what, /*per_tensor=*/true));
      quantized = true;
    }
    if (!tensor.fully_known()) return Unsupported(std::string(role) + " '" + tensor.name + "' has unknown shape");
    return ElementType(tensor.dtype).status();
  };
  for (TensorId t : node.inputs)
    if (t != kNoTensor)
      if (Status s = check(t, "input"); !s.ok()) return Support::No(s.message());
  for (TensorId t : node.outputs)
    if (Status s = check(t, "output"); !s.ok()) return Support::No(s.message());
  if (quantized && !converts && !OrtRunsInt8(node.kind))
    return Support::No("ONNX Runtime has no int8 " + std::string(OpName(node.kind)) +
                       " (no QDQ fusion for it: it would run in float between a dequantize and a quantize)");
  if (Status s = CheckOnnxExportable(graph, id); !s.ok()) return Support::No(s.message());
  return Support::Yes();
}

Expected<std::unique_ptr<PreparedNode>> OrtBackend::Prepare(const Graph& graph, NodeId id) {
  if (Support support = Supports(graph, id); !support.ok()) return Unsupported(support.why());
  LATTE_ASSIGN_OR_RETURN(std::string model, ExportOnnxNode(graph, id));
  const Node& node = graph.node(id);
  std::vector<TensorId> inputs;
  for (TensorId t : node.inputs)  // as ExportOnnxNode lists them: activations, first use only
    if (t != kNoTensor && !graph.tensor(t).is_constant() && std::find(inputs.begin(), inputs.end(), t) == inputs.end())
      inputs.push_back(t);
  LATTE_ASSIGN_OR_RETURN(auto session, Session::Create(graph, model, inputs, node.outputs, options_));
  return std::unique_ptr<PreparedNode>(new OrtNode(std::move(session)));
}

Expected<std::unique_ptr<PreparedGraph>> OrtBackend::PrepareGraph(const Graph& graph) {
  if (options_.precision == Precision::kBf16) return Unsupported(kBf16Refusal);
  std::map<std::string, NodeId> owners;
  LATTE_ASSIGN_OR_RETURN(std::string model, ExportOnnx(graph, &owners));
  LATTE_ASSIGN_OR_RETURN(auto session, Session::Create(graph, model, graph.inputs, graph.outputs, options_));
  return std::unique_ptr<PreparedGraph>(new OrtGraph(graph, std::move(session), std::move(owners)));
}

#endif  // LATTE_HAVE_ORT

std::vector<std::string> OrtBackend::FusedByConstruction() const {
  std::vector<std::string> kinds = FoldedActivationKinds();
  if (const int block = HostNchwcBlock(); block > 0)
    for (const std::string& kind : ResidualFusionKinds()) kinds.push_back(NchwcRule(kind, block));
  return kinds;
}

void RegisterOrtBackend(BackendRegistry& registry) {
  registry.RegisterBuiltin({"ort", "ONNX Runtime, CPU execution provider (whole graphs as one ONNX model)",
                            [](const RunOptions& options) { return OrtBackend::Create(options); },
                            /*takes_nhwc=*/false,  // the exported graph in its own layout
                            /*clamps_run_apart=*/{OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv},
                            /*nchwc_block=*/HostNchwcBlock(),
                            // Its NCHWc pass blocks a conv's output channels by the vector (padding
                            // them): a conv to 8 channels took what one to 16 did (the stores' samples).
                            /*channels_in_vectors=*/true,
                            /*channels_not_in_vectors=*/{OpKind::kTransposeConv2D}});
}

}  // namespace latte
