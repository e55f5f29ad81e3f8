// The `latte` Python module (`latte._latte`; python/latte/__init__.py re-exports it): models,
// packs, predictions, benchmarks and comparisons over the same libraries as the CLI. Every result
// is what the CLI's `--format json` prints, built by the same report/ view (converted from its JSON,
// or for predictions, the hot path of a search loop, written by the view straight into dicts and
// lists: PythonDocument), so the two cannot disagree. Logic stays in src/: this file converts arguments,
// calls the libraries with the GIL released, and turns a failed Status into latte.Error carrying
// the CLI's one-line message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "core/device.h"
#include "core/file.h"
#include "import/import.h"
#include "ir/kernel.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"
#include "report/bench_view.h"
#include "report/compare_view.h"
#include "report/inspect_view.h"
#include "report/predict_view.h"
#include "run/benchmark.h"
#include "run/compare.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace latte::python {
namespace {

/// A failed Status on its way to Python, where it becomes latte.Error.
struct StatusError {
  Status status;
};

PyObject* g_error_type = nullptr;  // latte.Error, created once at import (never freed: module lifetime)

[[noreturn]] void Throw(const Status& status) { throw StatusError{status}; }
void Check(const Status& status) {
  if (!status.ok()) Throw(status);
}
template <typename T>
T Take(Expected<T> value) {
  if (!value.ok()) Throw(value.status());
  return std::move(value).value();
}

std::string_view CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidInput: return "invalid_input";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kInterrupted: return "interrupted";
  }
  return "internal";
}

// A dict key as a new reference. The views' keys are a few dozen names repeated in every row
// (a 114-layer prediction has 1,140 of them): each is made once, interned, and reused, so a dict
// insert finds its hash cached. Bounded: past kMaxKeys names, keys are made afresh. Called with
// the GIL held.
struct KeyHash {
  using is_transparent = void;  // found by a string_view, no std::string made
  std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

PyObject* DictKey(std::string_view key) {
  constexpr std::size_t kMaxKeys = 512;
  // Each holds one reference, never released.
  static std::unordered_map<std::string, PyObject*, KeyHash, std::equal_to<>> keys;
  if (auto it = keys.find(key); it != keys.end()) {
    Py_INCREF(it->second);
    return it->second;
  }
  PyObject* name = PyUnicode_DecodeUTF8(key.data(), static_cast<Py_ssize_t>(key.size()), "replace");
  if (name == nullptr || keys.size() >= kMaxKeys) return name;
  PyUnicode_InternInPlace(&name);
  Py_INCREF(name);
  keys.emplace(key, name);
  return name;
}

/// A new reference to `json` as Python objects (null with a Python error set when out of memory):
/// objects as dicts (keys in the JSON's order), arrays as lists. A number that is not finite
/// becomes None, as the CLI's JSON writes it (null); text that is not UTF-8 (a name from a model
/// file) gets U+FFFD, as the CLI's DumpJson replaces it. The C API directly: a prediction's
/// hundreds of small dicts are most of what Python adds to the library's time.
PyObject* NewPython(const nlohmann::json& json) {
  using Type = nlohmann::json::value_t;
  switch (json.type()) {
    case Type::boolean: return PyBool_FromLong(json.get<bool>() ? 1 : 0);
    case Type::number_integer: return PyLong_FromLongLong(json.get<std::int64_t>());
    case Type::number_unsigned: return PyLong_FromUnsignedLongLong(json.get<std::uint64_t>());
    case Type::number_float: {
      const double value = json.get<double>();
      if (std::isfinite(value)) return PyFloat_FromDouble(value);
      Py_RETURN_NONE;
    }
    case Type::string: {
      const std::string& text = json.get_ref<const std::string&>();
      return PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
    }
    case Type::array: {
      PyObject* list = PyList_New(static_cast<Py_ssize_t>(json.size()));
      if (list == nullptr) return nullptr;
      Py_ssize_t i = 0;
      for (const nlohmann::json& item : json) {
        PyObject* value = NewPython(item);
        if (value == nullptr) {
          Py_DECREF(list);
          return nullptr;
        }
        PyList_SET_ITEM(list, i++, value);  // steals the reference
      }
      return list;
    }
    case Type::object: {
      PyObject* dict = PyDict_New();
      if (dict == nullptr) return nullptr;
      for (const auto& [key, item] : json.get_ref<const nlohmann::json::object_t&>()) {
        PyObject* name = DictKey(key);
        PyObject* value = name == nullptr ? nullptr : NewPython(item);
        const int failed = value == nullptr ? -1 : PyDict_SetItem(dict, name, value);
        Py_XDECREF(name);
        Py_XDECREF(value);
        if (failed != 0) {
          Py_DECREF(dict);
          return nullptr;
        }
      }
      return dict;
    }
    case Type::null:
    case Type::binary:
    case Type::discarded: break;
  }
  Py_RETURN_NONE;
}

py::object ToPython(const nlohmann::json& json) {
  PyObject* object = NewPython(json);
  if (object == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(object);
}

/// The document builder (report/document.h) that writes a view's content as Python objects, as
/// NewPython would convert its JSON (the same keys, None for what is not finite, U+FFFD for text
/// that is not UTF-8) but with no JSON document in between. Called with the GIL held.
class PythonDocument {
 public:
  using Value = py::object;
  Value Object() { return Own(PyDict_New()); }
  Value Array(std::size_t expected_size) {
    (void)expected_size;  // lists grow by PyList_Append
    return Own(PyList_New(0));
  }
  void Set(Value& object, std::string_view key, Value value) {
    const py::object name = Own(DictKey(key));
    if (PyDict_SetItem(object.ptr(), name.ptr(), value.ptr()) != 0) throw py::error_already_set();
  }
  void Push(Value& array, Value value) {
    if (PyList_Append(array.ptr(), value.ptr()) != 0) throw py::error_already_set();
  }
  Value Text(std::string_view text) {
    return Own(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  }
  Value Number(double value) { return std::isfinite(value) ? Own(PyFloat_FromDouble(value)) : Null(); }
  Value Integer(std::int64_t value) { return Own(PyLong_FromLongLong(value)); }
  Value Boolean(bool value) { return py::bool_(value); }
  Value Null() { return py::none(); }
  Value FromJson(const nlohmann::json& json) { return ToPython(json); }

 private:
  static Value Own(PyObject* made) {  // a new reference, or null with Python's error set
    if (made == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(made);
  }
};

/// An imported model: the graph every call predicts, benchmarks or compares.
struct Model {
  Graph graph;
  std::string name;         // how reports and errors name it: the path, or what the caller said
  long long file_bytes = 0;  // the file's (or the bytes') size, for bench and compare
};

/// A loaded predictor pack, with the machine note `latte predict` prints (worked out once).
struct LoadedPack {
  Pack pack;
  std::string path;
  std::string machine_note;
  LoadedPack(Pack p, std::string file) : pack(std::move(p)), path(std::move(file)) {}
  LoadedPack(const LoadedPack&) = delete;  // Pack's predictors are unique: Python holds it by pointer
  LoadedPack& operator=(const LoadedPack&) = delete;
};

/// "NAME=1x3x224x224" and "NAME=V,V" texts from Python dicts: the CLI's own parser then checks
/// them, so a bad shape fails with the CLI's words.
cli::ModelInputFlags InputFlags(const std::optional<py::dict>& shapes, const std::optional<py::dict>& values) {
  cli::ModelInputFlags flags;
  if (shapes) {
    for (const auto& [key, dims] : *shapes) {
      std::string text = py::cast<std::string>(key) + "=";
      bool first = true;
      for (const py::handle dim : py::cast<py::iterable>(dims)) {
        if (py::isinstance<py::bool_>(dim) || !py::isinstance<py::int_>(dim))
          throw py::type_error("input_shapes: each dimension must be an int");
        if (!first) text += 'x';
        text += py::str(dim).cast<std::string>();
        first = false;
      }
      flags.shapes.push_back(std::move(text));
    }
  }
  if (values) {
    for (const auto& [key, items] : *values) {
      std::string text = py::cast<std::string>(key) + "=";
      bool first = true;
      auto add = [&](py::handle item) {
        std::string v = py::isinstance<py::bool_>(item) ? (item.cast<bool>() ? "1" : "0")
                                                        : py::str(item).cast<std::string>();
        if (!first) text += ',';
        text += v;
        first = false;
      };
      if (py::isinstance<py::str>(items) || !py::isinstance<py::iterable>(items)) add(items);
      else
        for (const py::handle item : py::cast<py::iterable>(items)) add(item);
      flags.values.push_back(std::move(text));
    }
  }
  return flags;
}

Model LoadModel(const py::object& source, const std::optional<py::dict>& input_shapes,
                const std::optional<py::dict>& input_values, const std::optional<std::string>& name) {
  const cli::ModelInputFlags flags = InputFlags(input_shapes, input_values);
  Model model;
  const py::object os_path_like = py::module_::import("os").attr("PathLike");
  if (py::isinstance<py::str>(source) || py::isinstance(source, os_path_like)) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(source)).cast<std::string>();
    model.name = name.value_or(path);
    {
      py::gil_scoped_release release;
      Check(cli::ImportForCommand(path, flags, model.graph));  // errors name the path, as the CLI's
      std::error_code ec;
      const auto size = std::filesystem::file_size(path, ec);
      model.file_bytes = ec ? 0 : static_cast<long long>(size);
    }
    return model;
  }
  if (!PyObject_CheckBuffer(source.ptr()))
    throw py::type_error("load_model takes a path (str or os.PathLike) or the model's bytes (bytes, bytearray, memoryview)");
  model.name = name.value_or("<bytes>");
  // PyBUF_SIMPLE: one contiguous run of bytes (a strided view, such as memoryview(b)[::-1], is
  // refused with BufferError instead of being read past its ends).
  struct Buffer {
    Py_buffer view{};
    ~Buffer() { PyBuffer_Release(&view); }
  } buffer;
  if (PyObject_GetBuffer(source.ptr(), &buffer.view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  const auto size = static_cast<std::uint64_t>(buffer.view.len);
  const std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(buffer.view.buf), size);
  py::gil_scoped_release release;
  // The checks ReadFileBytes makes of a file, in its words.
  if (bytes.empty()) Throw(InvalidInput("file is empty (0 bytes)").WithContext(model.name));
  if (size > kMaxModelFileBytes) Throw(InvalidInput(fmt::format("model is larger than {} bytes", kMaxModelFileBytes)).WithContext(model.name));
  ImportOptions options = Take(cli::ParseModelInputs(flags));
  Expected<Graph> graph = ImportModelBytes(bytes, DetectModelFormat(bytes, model.name), options);
  if (!graph.ok()) Throw(graph.status().WithContext(model.name));
  model.graph = std::move(graph).value();
  model.file_bytes = static_cast<long long>(size);
  return model;
}

std::unique_ptr<LoadedPack> LoadPack(const py::object& path_object) {
  const std::string path = py::str(py::module_::import("os").attr("fspath")(path_object)).cast<std::string>();
  py::gil_scoped_release release;
  auto loaded = std::make_unique<LoadedPack>(Take(Pack::Load(path)), path);
  loaded->machine_note = CompareMachine(loaded->pack, ReadDeviceFingerprint());
  return loaded;
}

/// What `latte predict MODEL --pack PACK --format json` prints, as Python objects: planned and
/// predicted without the GIL, then written by the CLI's view straight into dicts and lists.
py::object Predict(const LoadedPack& loaded, const Model& model) {
  std::optional<GraphPlan> plan;
  std::optional<ModelPrediction> prediction;
  {
    py::gil_scoped_release release;
    BackendRegistry registry;  // an int8 pack asks its backend which nodes run int8
    cli::RegisterBuiltinBackends(registry);
    Expected<GraphPlan> planned = PlanGraphForPrediction(model.graph, loaded.pack, &registry);
    if (!planned.ok()) Throw(planned.status().WithContext(model.name));
    plan.emplace(std::move(planned).value());
    Expected<ModelPrediction> predicted = PredictModel(plan->graph, loaded.pack);
    if (!predicted.ok()) Throw(predicted.status().WithContext(model.name));
    prediction.emplace(std::move(predicted).value());
    NameUserNodes(*plan, model.graph, *prediction);
  }
  PythonDocument doc;
  return PredictView(plan->graph, *prediction, loaded.pack, model.name, loaded.machine_note).Build(doc);
}

/// An element of a list of models, kept alive in `keep` while the GIL is released; TypeError
/// naming its place when it is something else.
const Model& ModelArgument(py::handle item, const char* function, std::vector<py::object>& keep) {
  if (!py::isinstance<Model>(item))
    throw py::type_error(fmt::format("{}: models[{}] is a {}, not a latte.Model", function, keep.size(),
                                     py::str(py::type::of(item).attr("__name__")).cast<std::string>()));
  keep.push_back(py::reinterpret_borrow<py::object>(item));
  return py::cast<const Model&>(item);
}

py::list PredictMany(const LoadedPack& loaded, const py::iterable& models) {
  std::vector<const Model*> list;
  std::vector<py::object> keep;  // holds each model while the GIL is released
  for (const py::handle item : models) list.push_back(&ModelArgument(item, "predict_many", keep));
  // Each result converted as soon as it is made: a list of JSON documents held to the end was
  // slower than predict() in a loop (more memory, colder caches); so was predicting on two
  // threads and converting after (hand_landmark_lite on a busy 2-core host: 465-587/s, one: 626-757/s).
  py::list out(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out[i] = Predict(loaded, *list[i]);
  return out;
}

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out;
}

/// Kernels of one kind, one per element of the broadcast parameter arrays, predicted.
py::dict PredictKernels(const LoadedPack& loaded, const std::string& kind, std::optional<int> threads,
                        const py::kwargs& params) {
  const auto context = [&](const Status& status) { return status.WithContext("predict_kernels: " + kind); };
  Expected<Kernel> parsed = ParseKernelKind(kind);
  if (!parsed.ok()) Throw(context(parsed.status()));
  Kernel kernel = std::move(parsed).value();
  Expected<DataType> dtype = DataTypeFromPrecision(loaded.pack.info.precision);
  if (!dtype.ok()) Throw(dtype.status().WithContext(loaded.path));
  kernel.dtype = *dtype;
  const int at_threads = threads.value_or(loaded.pack.info.threads);
  if (at_threads < 1 || at_threads > cli::kMaxThreads)
    Throw(InvalidInput(fmt::format("threads: {} is not in 1..{}", at_threads, cli::kMaxThreads)));

  // The parameters the pack's kernels of this kind (or of its main op, for a fused kind predicted
  // as the sum of its parts) have: each must be given, and no other.
  const KindModel* model = nullptr;
  if (auto it = loaded.pack.kinds.find(kind); it != loaded.pack.kinds.end()) model = &it->second;
  else if (auto main = loaded.pack.kinds.find(std::string(OpName(kernel.op))); main != loaded.pack.kinds.end())
    model = &main->second;
  std::vector<std::string> names;
  for (const auto& [key, value] : params) names.push_back(py::cast<std::string>(key));
  if (model != nullptr) {
    std::vector<std::string> known;
    for (const auto& [key, range] : model->ranges.params)
      if (key != "threads") known.push_back(key);
    for (const std::string& name : names)
      if (std::find(known.begin(), known.end(), name) == known.end())
        Throw(context(InvalidInput("no parameter '" + name + "' (this pack's " + model->kind + " kernels have: " +
                                   JoinKeys(known) + ")")));
    for (const std::string& key : known)
      if (std::find(names.begin(), names.end(), key) == names.end())
        Throw(context(InvalidInput("parameter '" + key + "' is missing (give each of: " + JoinKeys(known) + ")")));
  }

  // Arrays broadcast against each other as numpy does; integers only (a float is refused rather
  // than rounded).
  const py::module_ np = py::module_::import("numpy");
  py::list arrays;
  for (const auto& [key, value] : params) {
    py::array array = np.attr("asarray")(value);
    const char type = array.dtype().kind();
    if (type != 'i' && type != 'u' && type != 'b')
      Throw(context(InvalidInput(fmt::format("parameter '{}': integers expected, got {}", py::cast<std::string>(key),
                                             py::str(array.dtype()).cast<std::string>()))));
    arrays.append(array);
  }
  py::tuple shape;
  std::vector<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>> columns;
  if (arrays.empty()) {
    shape = py::tuple();
  } else {
    py::object broadcast;
    try {
      broadcast = np.attr("broadcast_arrays")(*arrays);
    } catch (const py::error_already_set& e) {
      Throw(context(InvalidInput(std::string("the parameter arrays do not broadcast together: ") + e.what())));
    }
    shape = py::tuple(broadcast.attr("__getitem__")(0).attr("shape"));
    for (const py::handle array : broadcast)
      columns.push_back(py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(
          np.attr("ascontiguousarray")(array, "dtype"_a = "int64")));
  }
  std::size_t count = 1;
  for (const py::handle dim : shape) count *= dim.cast<std::size_t>();

  std::vector<std::int64_t*> slots;  // each parameter's value in `kernel`, set per element
  for (const std::string& name : names) kernel.params[name] = 0;
  // Taken once every name is in: adding a name moves the others.
  for (const std::string& name : names) slots.push_back(&kernel.params[name]);
  std::vector<const std::int64_t*> data;
  for (const auto& column : columns) data.push_back(column.data());

  py::array_t<double> ms(count), spread(count);
  py::array_t<bool> outside(count);
  std::vector<PredictionSource> sources(count);
  double* ms_out = ms.mutable_data();
  double* spread_out = spread.mutable_data();
  bool* outside_out = outside.mutable_data();
  {
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t p = 0; p < slots.size(); ++p) *slots[p] = data[p][i];
      const auto where = [&](const Status& status) {
        return context(status.WithContext(fmt::format("kernel {} ({})", i, kernel.Key())));
      };
      if (Status plausible = CheckKernelParams(kernel); !plausible.ok()) Throw(where(plausible));
      Expected<Prediction> prediction = loaded.pack.Predict(kernel, at_threads);
      if (!prediction.ok()) Throw(where(prediction.status()));
      ms_out[i] = prediction->ms;
      spread_out[i] = prediction->spread_ms;
      outside_out[i] = prediction->outside_training_range;
      sources[i] = prediction->source;
    }
  }
  py::list source_names(count);
  std::map<PredictionSource, py::str> interned;
  for (std::size_t i = 0; i < count; ++i) {
    auto [it, added] = interned.try_emplace(sources[i]);
    if (added) it->second = py::str(std::string(PredictionSourceName(sources[i])));
    source_names[i] = it->second;
  }
  py::dict out;
  out["ms"] = ms.attr("reshape")(shape);
  out["spread_ms"] = spread.attr("reshape")(shape);
  out["source"] = np.attr("array")(source_names).attr("reshape")(shape);
  out["outside_training_range"] = outside.attr("reshape")(shape);
  return out;
}

/// The measurement flags bench and compare share, checked in the CLI's ranges.
MeasureOptions ProtocolOptions(int warmup_runs, int num_runs, double min_secs) {
  constexpr long long kMaxRuns = 1000000;
  MeasureOptions measure;
  if (warmup_runs < 0 || warmup_runs > kMaxRuns)
    Throw(InvalidInput(fmt::format("warmup_runs: {} is not in 0..{}", warmup_runs, kMaxRuns)));
  if (num_runs < 1 || num_runs > kMaxRuns)
    Throw(InvalidInput(fmt::format("num_runs: {} is not in 1..{}", num_runs, kMaxRuns)));
  if (!std::isfinite(min_secs) || min_secs < 0 || min_secs > measure.max_secs)
    Throw(InvalidInput(fmt::format("min_secs: {} is not a number in 0..{}", min_secs, measure.max_secs)));
  measure.warmup_runs = warmup_runs;
  measure.num_runs = num_runs;
  measure.min_secs = min_secs;
  Check(measure.Validate());
  return measure;
}

void CheckThreads(int threads) {
  if (threads < 1 || threads > cli::kMaxThreads)
    Throw(InvalidInput(fmt::format("num_threads: {} is not in 1..{}", threads, cli::kMaxThreads)));
}

// calibration_data={'input': array, ...}: as the CLI's --calibration-data NAME=FILE.npy, each
// array taken as float32 in C order (one tensor of the input's shape, or N along a first axis).
std::shared_ptr<const CalibrationInputs> CalibrationArguments(const py::object& data) {
  if (data.is_none()) return nullptr;
  if (!py::isinstance<py::dict>(data)) Throw(InvalidInput("calibration_data: a dict of input name → numpy array"));
  auto inputs = std::make_shared<CalibrationInputs>();
  for (const auto& [key, value] : data.cast<py::dict>()) {
    const std::string name = py::str(key);
    py::array_t<float, py::array::c_style | py::array::forcecast> array;
    try {
      array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
    } catch (const py::error_already_set&) {
      Throw(InvalidInput("calibration_data['" + name + "']: not an array of numbers"));
    }
    if (!array) Throw(InvalidInput("calibration_data['" + name + "']: not an array of numbers"));
    CalibrationInputs::Array& a = inputs->arrays[name];
    a.source = "calibration_data['" + name + "']";
    for (py::ssize_t i = 0; i < array.ndim(); ++i) a.shape.push_back(static_cast<std::int64_t>(array.shape(i)));
    a.data.assign(array.data(), array.data() + array.size());
  }
  return inputs;
}

py::object Bench(const Model& model, const std::string& backend, int num_threads, const std::string& fallback,
                 const std::string& precision, int warmup_runs, int num_runs, double min_secs, bool op_profiling,
                 const py::object& calibration_data) {
  CheckThreads(num_threads);
  BenchOptions options;
  Expected<Precision> parsed = ParsePrecision(precision);
  if (!parsed.ok()) Throw(parsed.status().WithContext("precision"));
  options.run.precision = *parsed;
  if (!calibration_data.is_none() && *parsed != Precision::kInt8)
    Throw(InvalidInput("calibration_data: only precision='int8' calibrates (this run is " + precision + ")"));
  options.run.calibration = CalibrationArguments(calibration_data);
  options.placement.default_backend = backend;
  options.placement.fallback = fallback;
  options.run.num_threads = num_threads;
  options.measure = ProtocolOptions(warmup_runs, num_runs, min_secs);
  options.op_profiling = op_profiling;
  nlohmann::json json;
  {
    py::gil_scoped_release release;
    BackendRegistry registry;
    cli::RegisterBuiltinBackends(registry);
    Check(cli::CheckBackendName(registry, "backend", backend));
    if (!fallback.empty()) Check(cli::CheckBackendName(registry, "fallback", fallback));
    Expected<BenchResult> result = BenchmarkGraph(model.graph, options, registry);
    if (!result.ok()) Throw(result.status().WithContext(model.name));
    json = BenchView(model.graph, *result, options, model.name, model.file_bytes).Json();
  }
  return ToPython(json);
}

py::object Compare(const py::iterable& model_objects, const std::vector<std::string>& backends,
                   const std::vector<int>& threads, const std::vector<std::string>& precisions, int warmup_runs,
                   int num_runs, double min_secs, const py::object& calibration_data) {
  std::vector<const Model*> models;
  std::vector<py::object> keep;  // holds each model while the GIL is released
  for (const py::handle item : model_objects) models.push_back(&ModelArgument(item, "compare", keep));
  // As the CLI: a configuration listed twice would be measured and shown twice.
  const auto twice = [](const char* what, const auto& values) {
    for (std::size_t i = 0; i < values.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (values[i] == values[j]) Throw(InvalidInput(fmt::format("{}: {} is given twice", what, values[i])));
  };
  std::vector<std::string> names;
  for (const Model* model : models) names.push_back(model->name);
  twice("models", names);
  twice("backends", backends);
  twice("num_threads", threads);
  twice("precisions", precisions);
  if (models.empty()) Throw(InvalidInput("models: none given"));
  if (backends.empty()) Throw(InvalidInput("backends: none given"));
  if (threads.empty()) Throw(InvalidInput("num_threads: none given"));
  CompareOptions options;
  for (int t : threads) CheckThreads(t);
  options.threads = threads;
  std::string listed;
  for (const std::string& p : precisions) {
    Expected<Precision> parsed = ParsePrecision(p);
    if (!parsed.ok()) Throw(parsed.status().WithContext("precisions"));
    options.precisions.push_back(*parsed);
    listed += (listed.empty() ? "" : ",") + p;
  }
  if (options.precisions.empty()) Throw(InvalidInput("precisions: none given"));
  const bool int8 = std::find(options.precisions.begin(), options.precisions.end(), Precision::kInt8) != options.precisions.end();
  if (!calibration_data.is_none() && !int8)
    Throw(InvalidInput("calibration_data: only precision 'int8' calibrates (this run is " + listed + ")"));
  // As the CLI: each model's int8 rows take the samples of its own inputs; a name no model has is a typo.
  options.calibration = CalibrationArguments(calibration_data);
  if (options.calibration)
    for (const auto& [name, array] : options.calibration->arrays) {
      bool used = false;
      for (const Model* model : models)
        for (TensorId id : model->graph.inputs) used |= model->graph.tensor(id).name == name;
      if (!used) Throw(InvalidInput("calibration_data names input '" + name + "', which no model has"));
    }
  options.measure = ProtocolOptions(warmup_runs, num_runs, min_secs);
  nlohmann::json json;
  {
    py::gil_scoped_release release;
    BackendRegistry registry;
    cli::RegisterBuiltinBackends(registry);
    for (const std::string& name : backends) Check(cli::CheckBackendName(registry, "backends", name));
    options.backends = backends;
    std::vector<CompareModel> compared;
    for (const Model* model : models) {
      // Each child process runs a copy of the graph (weights are shared, not copied).
      compared.push_back({model->name, model->file_bytes, [graph = model->graph]() -> Expected<Graph> { return graph; }});
    }
    json = CompareView(Take(CompareModels(compared, options, registry))).Json();
  }
  return ToPython(json);
}

py::dict ShapesOf(const Graph& graph, const std::vector<TensorId>& ids) {
  py::dict out;
  for (TensorId id : ids) out[py::str(graph.tensor(id).name)] = py::cast(graph.tensor(id).shape);
  return out;
}

}  // namespace
}  // namespace latte::python

PYBIND11_MODULE(_latte, m) {
  using namespace latte;
  using namespace latte::python;
  using namespace pybind11::literals;
  m.doc() = "Latte's library: import models, predict their latency from a pack, benchmark and compare runtimes.";

  g_error_type = PyErr_NewExceptionWithDoc(
      "latte.Error",
      "A failure caused by the input (a bad or hostile model file, a damaged pack, a wrong argument, an "
      "unsupported op). str(e) is the line `latte` prints after 'error: '; e.code names the kind "
      "('invalid_input', 'unsupported', 'not_found', 'io_error', 'internal') and e.exit_code is the CLI's "
      "exit code for it.",
      PyExc_Exception, nullptr);
  if (g_error_type == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(g_error_type));
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusError& e) {
      py::object error = py::reinterpret_borrow<py::object>(g_error_type)(e.status.message());
      error.attr("code") = std::string(CodeName(e.status.code()));
      error.attr("exit_code") = cli::ExitCodeOf(e.status);
      PyErr_SetObject(g_error_type, error.ptr());
    }
  });

  py::class_<Model>(m, "Model", "A model imported from a .tflite or .onnx file (or its bytes), shapes inferred.")
      .def_readonly("name", &Model::name, "How reports and errors name the model: its path, or the name given.")
      .def_property_readonly("inputs", [](const Model& model) { return ShapesOf(model.graph, model.graph.inputs); },
                             "The graph's inputs: name -> shape.")
      .def_property_readonly("outputs", [](const Model& model) { return ShapesOf(model.graph, model.graph.outputs); },
                             "The graph's outputs: name -> shape.")
      .def_property_readonly("num_nodes", [](const Model& model) { return model.graph.num_nodes(); },
                             "Nodes in the graph.")
      .def_readonly("file_bytes", &Model::file_bytes, "Size of the file (or bytes) it was read from.")
      .def(
          "inspect", [](const Model& model) { return ToPython(InspectView(model.graph, model.name).Json()); },
          "What `latte inspect MODEL --format json` prints: one row per node (op, shapes, geometry, MACs, "
          "parameters, bytes), the totals and the coverage.")
      .def("__repr__", [](const Model& model) {
        return fmt::format("<latte.Model '{}': {} nodes>", model.name, model.graph.num_nodes());
      });

  m.def("load_model", &LoadModel, "source"_a, py::kw_only(), "input_shapes"_a = py::none(),
        "input_values"_a = py::none(), "name"_a = py::none(),
        "Imports a .tflite or .onnx model from a path or from its bytes (such as torch.onnx.export's output "
        "written to io.BytesIO). input_shapes: {input name: shape} for dynamic dims (as --input-shape); "
        "input_values: {input name: values} for small inputs that should fold as constants (as --input-value). "
        "name: how reports name the model (default: the path, or '<bytes>'). Raises latte.Error with the CLI's "
        "message for a bad file.");

  py::class_<LoadedPack>(m, "Pack", "A predictor pack (from `latte calibrate` or `latte fit`), loaded once.")
      .def_static("load", &LoadPack, "path"_a,
                  "Reads a pack (.json or .json.gz). Raises latte.Error ('PATH: what') for a missing or damaged "
                  "file.")
      .def_readonly("path", &LoadedPack::path, "The file the pack was read from.")
      .def_property_readonly("backend", [](const LoadedPack& p) { return p.pack.info.backend; }, "The backend it predicts.")
      .def_property_readonly("backend_version", [](const LoadedPack& p) { return p.pack.info.backend_version; })
      .def_property_readonly("threads", [](const LoadedPack& p) { return p.pack.info.threads; }, "Threads it was measured with.")
      .def_property_readonly("precision", [](const LoadedPack& p) { return p.pack.info.precision; })
      .def_property_readonly("fusion_rules", [](const LoadedPack& p) { return p.pack.info.fusion_rules; },
                             "Kinds the backend runs as one kernel, such as 'conv2d+relu6'.")
      .def_property_readonly(
          "kinds",
          [](const LoadedPack& p) {
            std::vector<std::string> kinds;
            for (const auto& [kind, model] : p.pack.kinds) kinds.push_back(kind);
            return kinds;
          },
          "The kernel kinds the pack has predictors for.")
      .def_property_readonly("device", [](const LoadedPack& p) { return ToPython(p.pack.info.device); },
                             "The fingerprint of the machine the pack was measured on.")
      .def_readonly("machine_note", &LoadedPack::machine_note,
                    "How this machine differs from the pack's ('' when it does not): the predictions stay the "
                    "pack's machine's.")
      .def("predict", &Predict, "model"_a,
           "The model's latency per kernel and in total: what `latte predict MODEL --pack PACK --format json` "
           "prints, as dicts and lists (total_ms, interval_ms, layers, coverage, ...).")
      .def("predict_many", &PredictMany, "models"_a,
           "predict() of each model, in order, as a list, for search loops: one call, the GIL released while "
           "each model is predicted; the first model that fails is the error.")
      .def("predict_kernels", &PredictKernels, "kind"_a, py::kw_only(), "threads"_a = py::none(),
           "Predicts kernels of one kind (such as 'conv2d' or 'depthwise_conv2d+relu6'), one per element of "
           "the parameter arrays given as keywords (ih=, iw=, ic=, oc=, kh=, ...; numpy arrays or scalars, "
           "broadcast together; integers). Every parameter the pack's kernels of that kind have must be "
           "given. Returns {'ms', 'spread_ms', 'source', 'outside_training_range'}, each an array of the "
           "broadcast shape. threads: predict at another thread count (default: the pack's).")
      .def("__repr__", [](const LoadedPack& p) {
        return fmt::format("<latte.Pack '{}': {} {} thread{} {}, {} kinds>", p.path, p.pack.info.backend,
                           p.pack.info.threads, p.pack.info.threads == 1 ? "" : "s", p.pack.info.precision,
                           p.pack.kinds.size());
      });

  m.def("bench", &Bench, "model"_a, py::kw_only(), "backend"_a = "xnnpack", "num_threads"_a = 1, "fallback"_a = "",
        "precision"_a = "fp32", "warmup_runs"_a = 1, "num_runs"_a = 50, "min_secs"_a = 1.0, "op_profiling"_a = false,
        "calibration_data"_a = py::none(),
        "Measures the model's latency on a backend under Latte's protocol: what `latte bench MODEL --format json` "
        "prints (latency percentiles, throughput, memory; per-node times with op_profiling=True; at precision "
        "'int8' on xnnpack or ort the model quantized post-training, calibrated on calibration_data={input name: "
        "array} when given, with 'int8' saying which nodes ran int8).");
  m.def("compare", &Compare, "models"_a, py::kw_only(),
        "backends"_a = std::vector<std::string>{"xnnpack", "onednn", "ort"}, "num_threads"_a = std::vector<int>{1},
        "precisions"_a = std::vector<std::string>{"fp32"}, "warmup_runs"_a = 1, "num_runs"_a = 50, "min_secs"_a = 1.0,
        "calibration_data"_a = py::none(),
        "Benchmarks every model x backend x threads x precision, each in its own child process: what `latte "
        "compare --format json` prints (one row per configuration, or why it could not run; an int8 row calibrated "
        "on the calibration_data={input name: array} of its model's inputs, else on generated inputs).");
}
