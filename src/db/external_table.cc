#include "db/external_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "core/text.h"
#include "db/tensorrt_conv.h"
#include "ir/kernel_params.h"
#include "ir/op_params.h"

namespace latte {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Opens a table file, failing with the path and the reason.
Expected<std::ifstream> OpenTable(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) return InvalidInput(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  return in;
}

// ---------------------------------------------------------------------------------------------
// op-lut: Caffe2 operator arguments.

struct Caffe2Arg {
  std::vector<double> numbers;  // i, f, ints, floats
  std::optional<std::string> text;  // s
};
using Caffe2Args = std::map<std::string, Caffe2Arg>;

// One argument in protobuf text form: `name: "pads" ints: 1 ints: 1 ...`.
Status ParseArgText(std::string_view text, Caffe2Args& args) {
  std::string name;
  Caffe2Arg arg;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  while (true) {
    skip_space();
    if (i >= text.size()) break;
    size_t colon = text.find(':', i);
    if (colon == std::string_view::npos) return InvalidInput("op_args entry '" + std::string(text) + "': expected 'field: value'");
    std::string field(Trim(text.substr(i, colon - i)));
    i = colon + 1;
    skip_space();
    std::string value;
    bool quoted = i < text.size() && text[i] == '"';
    if (quoted) {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value += text[i++];
      }
      if (i >= text.size()) return InvalidInput("op_args entry '" + std::string(text) + "': unterminated string");
      ++i;
    } else {
      size_t start = i;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      value = std::string(text.substr(start, i - start));
    }
    if (field == "name") {
      name = value;
    } else if (field == "s" || field == "strings") {
      arg.text = value;
    } else if (field == "i" || field == "f" || field == "ints" || field == "floats") {
      double number = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (quoted || ec != std::errc() || ptr != value.data() + value.size()) {
        return InvalidInput("op_args entry '" + std::string(text) + "': '" + value + "' is not a number");
      }
      arg.numbers.push_back(number);
    }  // other fields (n, nets, tensors) carry nothing a kernel needs
  }
  if (name.empty()) return InvalidInput("op_args entry '" + std::string(text) + "' has no name");
  args[name] = std::move(arg);
  return Status::Ok();
}

Caffe2Arg ArgFromJson(const nlohmann::json& value) {
  Caffe2Arg arg;
  if (value.is_string()) arg.text = value.get<std::string>();
  if (value.is_number()) arg.numbers.push_back(value.get<double>());
  if (value.is_array()) {
    for (const auto& v : value) {
      if (v.is_number()) arg.numbers.push_back(v.get<double>());
    }
  }
  return arg;
}

Expected<Caffe2Args> ParseOpArgs(const nlohmann::json& op_args) {
  Caffe2Args args;
  if (op_args.is_null()) return args;
  if (op_args.is_object()) {
    for (const auto& [name, value] : op_args.items()) args[name] = ArgFromJson(value);
    return args;
  }
  if (!op_args.is_array()) return InvalidInput("op_args is neither a list nor an object");
  for (const auto& entry : op_args) {
    if (entry.is_string()) {
      LATTE_RETURN_IF_ERROR(ParseArgText(entry.get<std::string>(), args));
    } else if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      Caffe2Arg arg;
      for (const char* field : {"i", "f", "ints", "floats", "s", "strings"}) {
        if (entry.contains(field)) {
          Caffe2Arg part = ArgFromJson(entry[field]);
          arg.numbers.insert(arg.numbers.end(), part.numbers.begin(), part.numbers.end());
          if (part.text) arg.text = part.text;
        }
      }
      args[entry["name"].get<std::string>()] = std::move(arg);
    } else {
      return InvalidInput("op_args entry " + entry.dump() + " is neither a string nor {\"name\": ...}");
    }
  }
  return args;
}

std::optional<std::int64_t> ArgInt(const Caffe2Args& args, const std::string& name) {
  auto it = args.find(name);
  if (it == args.end() || it->second.numbers.empty()) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(it->second.numbers[0]));
}

// A (h, w) pair from "NAME" (both), "NAMEs" ([h, w]) or "NAME_h"/"NAME_w".
Expected<std::pair<std::int64_t, std::int64_t>> ArgPair(const Caffe2Args& args, const std::string& name,
                                                       std::int64_t fallback) {
  std::pair<std::int64_t, std::int64_t> pair{fallback, fallback};
  if (auto v = ArgInt(args, name)) pair = {*v, *v};
  auto plural = args.find(name + "s");
  if (plural != args.end() && !plural->second.numbers.empty()) {
    if (plural->second.numbers.size() != 2) return InvalidInput("op arg " + name + "s needs 2 values");
    pair = {std::llround(plural->second.numbers[0]), std::llround(plural->second.numbers[1])};
  }
  if (auto v = ArgInt(args, name + "_h")) pair.first = *v;
  if (auto v = ArgInt(args, name + "_w")) pair.second = *v;
  if (pair.first <= 0 || pair.second <= 0) return InvalidInput("op arg " + name + " must be positive");
  return pair;
}

// Caffe2's pads: "pad" (all four), "pads" [t, l, b, r], or pad_t/pad_l/pad_b/pad_r.
Expected<Padding2D> ArgPads(const Caffe2Args& args) {
  Padding2D p;
  if (auto v = ArgInt(args, "pad")) p = {*v, *v, *v, *v};
  auto pads = args.find("pads");
  if (pads != args.end() && !pads->second.numbers.empty()) {
    const auto& n = pads->second.numbers;
    if (n.size() != 4) return InvalidInput("op arg pads needs 4 values (t, l, b, r)");
    p = {std::llround(n[0]), std::llround(n[1]), std::llround(n[2]), std::llround(n[3])};
  }
  if (auto v = ArgInt(args, "pad_t")) p.top = *v;
  if (auto v = ArgInt(args, "pad_l")) p.left = *v;
  if (auto v = ArgInt(args, "pad_b")) p.bottom = *v;
  if (auto v = ArgInt(args, "pad_r")) p.right = *v;
  if (p.top < 0 || p.left < 0 || p.bottom < 0 || p.right < 0) return InvalidInput("negative pad");
  return p;
}

using Shape4 = std::array<std::int64_t, 4>;

// An input shape as N H W C: rank 4 in the op's layout, lower ranks padded with leading 1s.
Expected<Shape4> Nhwc(const std::vector<std::int64_t>& shape, bool nchw, std::string_view what) {
  if (shape.size() > 4) return Unsupported(fmt::format("{} has rank {} (at most 4)", what, shape.size()));
  for (std::int64_t d : shape) {
    if (d <= 0) return InvalidInput(fmt::format("{} has a non-positive dimension", what));
  }
  Shape4 s = {1, 1, 1, 1};
  std::copy(shape.begin(), shape.end(), s.begin() + (4 - shape.size()));
  if (nchw && shape.size() == 4) s = {shape[0], shape[2], shape[3], shape[1]};
  return s;
}

DataType DataTypeFromCaffe2(std::int64_t code) {
  switch (code) {
    case 1: return DataType::kFloat32;
    case 2: return DataType::kInt32;
    case 3: case 6: return DataType::kUInt8;
    case 7: return DataType::kInt8;
    case 9: return DataType::kInt16;
    case 10: return DataType::kInt64;
    case 12: return DataType::kFloat16;
    case 13: return DataType::kFloat64;
    default: return DataType::kUnknown;
  }
}

Status RequirePadMode(const Caffe2Args& args) {
  if (auto legacy = ArgInt(args, "legacy_pad"); legacy && *legacy != 0) {
    return Unsupported(fmt::format("legacy_pad {} (Caffe legacy padding) is not mapped", *legacy));
  }
  return Status::Ok();
}

Expected<Kernel> MapConv(const std::vector<std::vector<std::int64_t>>& shapes, const Caffe2Args& args, bool nchw) {
  if (shapes.size() < 2) return InvalidInput("conv needs input and filter shapes");
  if (shapes[0].size() != 4 || shapes[1].size() != 4) return Unsupported("conv with non-4D input or filter (only 2D convs)");
  LATTE_RETURN_IF_ERROR(RequirePadMode(args));
  LATTE_ASSIGN_OR_RETURN(Shape4 in, Nhwc(shapes[0], nchw, "conv input"));
  const auto& f = shapes[1];
  // Filters: NCHW [oc, ic/g, kh, kw]; NHWC [oc, kh, kw, ic/g].
  std::int64_t oc = f[0], per_group = nchw ? f[1] : f[3], kh = nchw ? f[2] : f[1], kw = nchw ? f[3] : f[2];
  std::int64_t groups = ArgInt(args, "group").value_or(1);
  if (oc <= 0 || per_group <= 0 || kh <= 0 || kw <= 0 || groups <= 0) return InvalidInput("conv filter shape or group not positive");
  if (per_group * groups != in[3] || oc % groups != 0) {
    return InvalidInput(fmt::format("conv input channels {} != filter channels {} x group {}", in[3], per_group, groups));
  }
  LATTE_ASSIGN_OR_RETURN(auto stride, ArgPair(args, "stride", 1));
  LATTE_ASSIGN_OR_RETURN(auto dilation, ArgPair(args, "dilation", 1));
  LATTE_ASSIGN_OR_RETURN(Padding2D pads, ArgPads(args));
  Kernel kernel;
  kernel.op = groups > 1 && per_group == 1 ? OpKind::kDepthwiseConv2D : OpKind::kConv2D;
  WriteParams(ConvKernelParams{.n = in[0], .ih = in[1], .iw = in[2], .ic = in[3], .oc = oc, .kh = kh, .kw = kw,
                               .sh = stride.first, .sw = stride.second, .g = groups, .dh = dilation.first,
                               .dw = dilation.second, .pt = pads.top, .pl = pads.left, .pb = pads.bottom,
                               .pr = pads.right, .bias = shapes.size() >= 3 ? 1 : 0, .oh = std::nullopt,
                               .ow = std::nullopt, .elmt_fused = std::nullopt},
              kernel);
  return kernel;
}

Expected<Kernel> MapPool(const std::vector<std::vector<std::int64_t>>& shapes, const Caffe2Args& args, bool nchw,
                         bool max) {
  if (shapes.empty()) return InvalidInput("pool needs an input shape");
  if (shapes[0].size() != 4) return Unsupported("pool with a non-4D input (only 2D pools)");
  LATTE_RETURN_IF_ERROR(RequirePadMode(args));
  LATTE_ASSIGN_OR_RETURN(Shape4 in, Nhwc(shapes[0], nchw, "pool input"));
  Kernel kernel;
  if (ArgInt(args, "global_pooling").value_or(0) != 0) {
    kernel.op = max ? OpKind::kGlobalMaxPool : OpKind::kGlobalAvgPool;
    WriteParams(NhwcParams{in[0], in[1], in[2], in[3]}, kernel);
    return kernel;
  }
  if (!args.count("kernel") && !args.count("kernels") && !args.count("kernel_h")) {
    return InvalidInput("pool without kernel / kernels / kernel_h args");
  }
  LATTE_ASSIGN_OR_RETURN(auto size, ArgPair(args, "kernel", 1));
  LATTE_ASSIGN_OR_RETURN(auto stride, ArgPair(args, "stride", 1));
  LATTE_ASSIGN_OR_RETURN(Padding2D pads, ArgPads(args));
  kernel.op = max ? OpKind::kMaxPool2D : OpKind::kAvgPool2D;
  WriteParams(PoolKernelParams{in[0], in[1], in[2], in[3], size.first, size.second, stride.first, stride.second,
                               pads.top, pads.left, pads.bottom, pads.right},
              kernel);
  return kernel;
}

Expected<Kernel> MapFullyConnected(const std::vector<std::vector<std::int64_t>>& shapes, const Caffe2Args& args) {
  if (shapes.size() < 2) return InvalidInput("FC needs input and weight shapes");
  const auto& x = shapes[0];
  const auto& w = shapes[1];
  std::int64_t axis = ArgInt(args, "axis").value_or(1), axis_w = ArgInt(args, "axis_w").value_or(1);
  if (axis < 0 || axis > static_cast<std::int64_t>(x.size()) || axis_w < 0 || axis_w > static_cast<std::int64_t>(w.size())) {
    return InvalidInput("FC axis out of range of the input shapes");
  }
  auto product = [](const std::vector<std::int64_t>& s, std::size_t begin, std::size_t end) {
    std::int64_t p = 1;
    for (std::size_t i = begin; i < end; ++i) p *= s[i];
    return p;
  };
  std::int64_t m = product(x, 0, axis), k = product(x, axis, x.size());
  std::int64_t n = product(w, 0, axis_w), wk = product(w, axis_w, w.size());
  if (k != wk || m <= 0 || k <= 0 || n <= 0) {
    return InvalidInput(fmt::format("FC input features {} != weight features {}", k, wk));
  }
  Kernel kernel;
  kernel.op = OpKind::kFullyConnected;
  WriteParams(FullyConnectedKernelParams{m, k, n, shapes.size() >= 3 ? 1 : 0}, kernel);
  return kernel;
}

Expected<Kernel> MapBinary(const std::vector<std::vector<std::int64_t>>& shapes, const Caffe2Args& args, bool nchw,
                           OpKind op) {
  if (shapes.size() != 2) return Unsupported(fmt::format("{} of {} inputs (only 2 are mapped)", OpName(op), shapes.size()));
  if (ArgInt(args, "broadcast").value_or(0) != 0) return Unsupported("legacy broadcast (axis) semantics are not mapped");
  LATTE_ASSIGN_OR_RETURN(Shape4 a, Nhwc(shapes[0], nchw, "first input"));
  LATTE_ASSIGN_OR_RETURN(Shape4 b, Nhwc(shapes[1], nchw, "second input"));
  Kernel kernel;
  kernel.op = op;
  WriteParams(BinaryKernelParams{a, b}, kernel);
  return kernel;
}

Expected<Kernel> MapUnary(const std::vector<std::vector<std::int64_t>>& shapes, bool nchw, OpKind op) {
  if (shapes.empty()) return InvalidInput(std::string(OpName(op)) + " needs an input shape");
  LATTE_ASSIGN_OR_RETURN(Shape4 in, Nhwc(shapes[0], nchw, "input"));
  Kernel kernel;
  kernel.op = op;
  WriteParams(NhwcParams{in[0], in[1], in[2], in[3]}, kernel);
  return kernel;
}

// Stats of an op-LUT record; p50 required, the other percentiles NaN when absent.
Expected<Stats> OpLutStats(const nlohmann::json& record) {
  Stats stats;
  stats.p0 = stats.p10 = stats.p50 = stats.p90 = stats.p99 = stats.p100 = stats.mean = stats.std = kNaN;
  const std::pair<const char*, double*> fields[] = {{"runtime_us_p0", &stats.p0},   {"runtime_us_p10", &stats.p10},
                                                    {"runtime_us_p50", &stats.p50}, {"runtime_us_p90", &stats.p90},
                                                    {"runtime_us_p100", &stats.p100}};
  for (const auto& [name, target] : fields) {
    if (!record.contains(name)) continue;
    const auto& value = record[name];
    if (!value.is_number()) return InvalidInput(std::string(name) + " is not a number");
    double v = value.get<double>();
    if (!std::isfinite(v) || v < 0) return InvalidInput(fmt::format("{} = {} is not a latency", name, v));
    *target = v;
  }
  if (std::isnan(stats.p50)) return InvalidInput("runtime_us_p50 is missing");
  return stats;
}

// ---------------------------------------------------------------------------------------------
// CSV.

Expected<double> ParseNumber(std::string_view text, std::string_view column) {
  text = Trim(text);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return InvalidInput(fmt::format("column {}: '{}' is not a number", column, text));
  }
  return value;
}

Expected<std::int64_t> ParsePositiveInt(std::string_view text, std::string_view column) {
  LATTE_ASSIGN_OR_RETURN(double value, ParseNumber(text, column));
  if (value != std::floor(value) || value <= 0 || value > 1e12) {
    return InvalidInput(fmt::format("column {}: '{}' is not a positive integer", column, Trim(text)));
  }
  return static_cast<std::int64_t>(value);
}

// Every integer in "[1, 32, 32, 16]", "(32, 32, 16)", "32x32x16".
Expected<std::vector<std::int64_t>> ParseShapeText(std::string_view text) {
  std::vector<std::int64_t> dims;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      std::int64_t value = 0;
      auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
      if (ec != std::errc()) return InvalidInput("input_shape '" + std::string(text) + "': number out of range");
      dims.push_back(value);
      i = ptr - text.data();
    } else if (std::string_view(" \t[](),xX").find(text[i]) != std::string_view::npos) {
      ++i;
    } else {
      return InvalidInput(fmt::format("input_shape '{}': unexpected '{}'", text, text[i]));
    }
  }
  return dims;
}

// ms → µs, rounded to 1e-6 µs (far below what any table states) so 21.6377 ms is 21637.7 µs
// rather than 21637.699999999997.
double MsToUs(double ms) { return std::round(ms * 1e9) / 1e6; }

}  // namespace

std::size_t ParsedTable::SkippedCount() const {
  std::size_t count = 0;
  for (const auto& [why, n] : skipped) count += n;
  return count;
}

Stats SingleFigureStats(double us) {
  Stats stats;
  stats.p0 = stats.p10 = stats.p90 = stats.p99 = stats.p100 = stats.mean = stats.std = kNaN;
  stats.p50 = us;
  return stats;
}

Expected<ParsedTable> ReadTensorrtConvTable(const std::string& path, std::string_view precision) {
  LATTE_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromPrecision(precision));
  LATTE_ASSIGN_OR_RETURN(TensorrtConvFile file, ReadTensorrtConvFile(path, dtype));
  ParsedTable table;
  table.data_lines = file.rows.size() + file.failed_lines;
  if (file.failed_lines > 0) table.skipped["failed in TensorRT (latency -1)"] = file.failed_lines;
  table.rows.reserve(file.rows.size());
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    table.rows.push_back({std::move(file.rows[i].kernel), SingleFigureStats(MsToUs(file.rows[i].latency_ms)),
                          file.line_numbers[i], ""});
  }
  return table;
}

Expected<Kernel> KernelFromOpLutRecord(const nlohmann::json& record) {
  if (!record.is_object()) return InvalidInput("not a JSON object");
  if (!record.contains("op_type") || !record["op_type"].is_string()) return InvalidInput("op_type missing or not a string");
  const std::string type = record["op_type"].get<std::string>();
  if (!record.contains("input_shapes") || !record["input_shapes"].is_array()) {
    return InvalidInput("input_shapes missing or not a list");
  }
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& shape : record["input_shapes"]) {
    if (!shape.is_array()) return InvalidInput("input_shapes holds a non-list " + shape.dump());
    std::vector<std::int64_t> dims;
    for (const auto& d : shape) {
      if (!d.is_number_integer()) return InvalidInput("input_shapes holds a non-integer " + d.dump());
      dims.push_back(d.get<std::int64_t>());
    }
    shapes.push_back(std::move(dims));
  }
  LATTE_ASSIGN_OR_RETURN(Caffe2Args args, ParseOpArgs(record.contains("op_args") ? record["op_args"] : nlohmann::json()));

  const bool int8 = type.rfind("Int8", 0) == 0;
  std::string base = int8 ? type.substr(4) : type;
  bool relu = false;  // "ConvRelu": the op with a relu fused; "Relu" alone is the unary op
  if (base.size() >= 4 && base.compare(base.size() - 4, 4, "Relu") == 0) {
    relu = true;
    base.resize(base.size() - 4);
  }
  std::string order = int8 ? "NHWC" : "NCHW";
  if (auto it = args.find("order"); it != args.end() && it->second.text) order = *it->second.text;
  if (order != "NCHW" && order != "NHWC") return InvalidInput("order '" + order + "' is neither NCHW nor NHWC");
  const bool nchw = order == "NCHW";

  Expected<Kernel> kernel = Unsupported("op type '" + type + "' has no Latte kernel mapping");
  if (base == "Conv") kernel = MapConv(shapes, args, nchw);
  else if (base == "FC") kernel = MapFullyConnected(shapes, args);
  else if (base == "MaxPool") kernel = MapPool(shapes, args, nchw, true);
  else if (base == "AveragePool") kernel = MapPool(shapes, args, nchw, false);
  else if (base == "Add" || base == "Sum") kernel = MapBinary(shapes, args, nchw, OpKind::kAdd);
  else if (base == "Mul" && !relu) kernel = MapBinary(shapes, args, nchw, OpKind::kMul);
  else if (base.empty() && relu) {  // "Relu" / "Int8Relu": the whole name was the suffix
    relu = false;
    kernel = MapUnary(shapes, nchw, OpKind::kRelu);
  } else if (!relu && base == "Sigmoid") kernel = MapUnary(shapes, nchw, OpKind::kSigmoid);
  else if (!relu && base == "Tanh") kernel = MapUnary(shapes, nchw, OpKind::kTanh);
  else if (!relu && base == "Softmax") kernel = MapUnary(shapes, nchw, OpKind::kSoftmax);
  else if (!relu && int8 && base == "Quantize") kernel = MapUnary(shapes, nchw, OpKind::kQuantize);
  else if (!relu && int8 && base == "Dequantize") kernel = MapUnary(shapes, nchw, OpKind::kDequantize);
  if (!kernel.ok()) return kernel;
  if (relu) kernel->fused.push_back(OpKind::kRelu);

  if (int8) {
    kernel->dtype = DataType::kUInt8;
  } else if (record.contains("input_dtypes") && record["input_dtypes"].is_array() && !record["input_dtypes"].empty()) {
    const auto& code = record["input_dtypes"][0];
    if (!code.is_number_integer()) return InvalidInput("input_dtypes holds a non-integer " + code.dump());
    kernel->dtype = DataTypeFromCaffe2(code.get<std::int64_t>());
    if (kernel->dtype == DataType::kUnknown) return Unsupported("input dtype code " + code.dump() + " is not mapped");
  }
  return kernel;
}

Expected<ParsedTable> ReadOpLutTable(const std::string& path) {
  LATTE_ASSIGN_OR_RETURN(std::ifstream in, OpenTable(path));
  ParsedTable table;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (Trim(line).empty()) continue;
    ++table.data_lines;
    auto where = [&] { return fmt::format("{}:{}", path, number); };
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) return InvalidInput(where() + ": not a JSON line");
    if (!record.is_object()) return InvalidInput(where() + ": not a JSON object");
    Expected<Stats> stats = OpLutStats(record);
    if (!stats.ok()) return stats.status().WithContext(where());
    std::string device;
    if (record.contains("device")) {
      if (!record["device"].is_string()) return InvalidInput(where() + ": device is not a string");
      device = record["device"].get<std::string>();
    }
    Expected<Kernel> kernel = KernelFromOpLutRecord(record);
    if (!kernel.ok()) {
      if (kernel.status().code() != StatusCode::kUnsupported) return kernel.status().WithContext(where());
      ++table.skipped[kernel.status().message()];
      continue;
    }
    table.rows.push_back({std::move(kernel).value(), *stats, number, device});
  }
  if (in.bad()) return IoError(path + ": read error");
  return table;
}

Expected<ParsedTable> ReadCsvTable(const std::string& path, std::string_view latency_unit,
                                   std::string_view precision) {
  LATTE_ASSIGN_OR_RETURN(DataType dtype, DataTypeFromPrecision(precision));
  LATTE_ASSIGN_OR_RETURN(std::ifstream in, OpenTable(path));
  std::string line;
  std::size_t number = 0;
  std::map<std::string, std::size_t> columns;
  while (std::getline(in, line)) {
    ++number;
    if (Trim(line).empty()) continue;
    Expected<std::vector<std::string>> header = SplitCsvLine(line);
    if (!header.ok()) return header.status().WithContext(fmt::format("{}:{}", path, number));
    for (std::size_t i = 0; i < header->size(); ++i) {
      std::string name = Lower(Trim((*header)[i]));
      if (name.empty()) continue;  // pandas' unnamed index column
      if (!columns.emplace(name, i).second) return InvalidInput(fmt::format("{}:{}: column '{}' twice", path, number, name));
    }
    break;
  }
  if (columns.empty()) return InvalidInput(path + ": empty (no header line)");
  auto has = [&](const char* name) { return columns.count(name) != 0; };

  const bool latte_layout = has("kernel_key");
  double scale = 0;  // latency column → µs
  std::string latency_column;
  if (!latte_layout) {
    for (const char* needed : {"kernel_size", "filter_size", "input_shape", "stride", "padding"}) {
      if (!has(needed)) {
        return InvalidInput(fmt::format("{}: no column '{}' (a CSV needs kernel_key, or the TFLite estimator's "
                                        "kernel_size, filter_size, input_shape, stride, padding and a latency)",
                                        path, needed));
      }
    }
    if (has("latency_us")) {
      latency_column = "latency_us", scale = 1;
    } else if (has("latency_ms")) {
      latency_column = "latency_ms", scale = 1000;
    } else if (has("latency_time")) {
      latency_column = "latency_time";
      if (latency_unit == "ms") scale = 1000;
      else if (latency_unit == "us") scale = 1;
      else return InvalidInput(path + ": column latency_time has no unit: say --unit ms or --unit us");
    } else {
      return InvalidInput(path + ": no latency column (latency_us, latency_ms or latency_time)");
    }
  } else if (!has("p50_us") && !has("mean_us")) {
    return InvalidInput(path + ": a kernel_key table needs a p50_us or mean_us column");
  }

  ParsedTable table;
  while (std::getline(in, line)) {
    ++number;
    if (Trim(line).empty()) continue;
    ++table.data_lines;
    const std::string where = fmt::format("{}:{}", path, number);
    Expected<std::vector<std::string>> fields = SplitCsvLine(line);
    if (!fields.ok()) return fields.status().WithContext(where);
    auto cell = [&](const std::string& name) -> Expected<std::string_view> {
      std::size_t index = columns.at(name);
      if (index >= fields->size()) return InvalidInput(fmt::format("{} fields, column {} missing", fields->size(), name));
      return Trim((*fields)[index]);
    };
    Expected<TableRow> row = [&]() -> Expected<TableRow> {
      TableRow row;
      row.line = number;
      if (latte_layout) {
        LATTE_ASSIGN_OR_RETURN(std::string_view key, cell("kernel_key"));
        LATTE_ASSIGN_OR_RETURN(row.kernel, ParseKernelKey(key));
        row.stats = SingleFigureStats(kNaN);
        const std::pair<const char*, double*> stat_columns[] = {
            {"p0_us", &row.stats.p0},     {"p10_us", &row.stats.p10}, {"p50_us", &row.stats.p50},
            {"p90_us", &row.stats.p90},   {"p99_us", &row.stats.p99}, {"p100_us", &row.stats.p100},
            {"mean_us", &row.stats.mean}, {"std_us", &row.stats.std}};
        for (const auto& [name, target] : stat_columns) {
          if (!has(name)) continue;
          LATTE_ASSIGN_OR_RETURN(std::string_view text, cell(name));
          if (text.empty()) continue;
          LATTE_ASSIGN_OR_RETURN(*target, ParseNumber(text, name));
          if (*target < 0) return InvalidInput(fmt::format("column {}: negative latency {}", name, *target));
        }
        if (std::isnan(row.stats.p50) && std::isnan(row.stats.mean)) return InvalidInput("neither p50_us nor mean_us given");
        if (has("n")) {
          LATTE_ASSIGN_OR_RETURN(std::string_view text, cell("n"));
          if (!text.empty()) {
            LATTE_ASSIGN_OR_RETURN(double n, ParseNumber(text, "n"));
            if (n < 0 || n != std::floor(n)) return InvalidInput(fmt::format("column n: '{}' is not a count", text));
            row.stats.n = static_cast<std::size_t>(n);
          }
        }
        return row;
      }
      LATTE_ASSIGN_OR_RETURN(std::string_view k_text, cell("kernel_size"));
      LATTE_ASSIGN_OR_RETURN(std::int64_t k, ParsePositiveInt(k_text, "kernel_size"));
      LATTE_ASSIGN_OR_RETURN(std::string_view f_text, cell("filter_size"));
      LATTE_ASSIGN_OR_RETURN(std::int64_t filters, ParsePositiveInt(f_text, "filter_size"));
      LATTE_ASSIGN_OR_RETURN(std::string_view s_text, cell("stride"));
      LATTE_ASSIGN_OR_RETURN(std::int64_t stride, ParsePositiveInt(s_text, "stride"));
      LATTE_ASSIGN_OR_RETURN(std::string_view shape_text, cell("input_shape"));
      LATTE_ASSIGN_OR_RETURN(std::vector<std::int64_t> shape, ParseShapeText(shape_text));
      if (shape.size() == 3) shape.insert(shape.begin(), 1);
      if (shape.size() != 4) return InvalidInput(fmt::format("input_shape '{}' is not [N,] H, W, C", shape_text));
      for (std::int64_t d : shape) {
        if (d <= 0) return InvalidInput(fmt::format("input_shape '{}' has a zero dimension", shape_text));
      }
      LATTE_ASSIGN_OR_RETURN(std::string_view padding_text, cell("padding"));
      std::string padding = Lower(padding_text);
      if (padding != "same" && padding != "valid") {
        return InvalidInput(fmt::format("padding '{}' is neither same nor valid", padding_text));
      }
      std::int64_t pt = 0, pb = 0, pl = 0, pr = 0;
      LATTE_RETURN_IF_ERROR(ConvOutputSize(shape[1], k, stride, 1, padding, pt, pb));
      LATTE_RETURN_IF_ERROR(ConvOutputSize(shape[2], k, stride, 1, padding, pl, pr));
      LATTE_ASSIGN_OR_RETURN(std::string_view latency_text, cell(latency_column));
      LATTE_ASSIGN_OR_RETURN(double latency, ParseNumber(latency_text, latency_column));
      if (latency <= 0) return InvalidInput(fmt::format("column {}: latency {} is not positive", latency_column, latency));
      row.kernel.op = OpKind::kConv2D;
      row.kernel.dtype = dtype;
      // The table says no bias: that key stays absent.
      WriteParams(ConvKernelParams{.n = shape[0], .ih = shape[1], .iw = shape[2], .ic = shape[3], .oc = filters,
                                   .kh = k, .kw = k, .sh = stride, .sw = stride, .g = 1, .dh = 1, .dw = 1, .pt = pt,
                                   .pl = pl, .pb = pb, .pr = pr, .bias = std::nullopt, .oh = std::nullopt,
                                   .ow = std::nullopt, .elmt_fused = std::nullopt},
                  row.kernel);
      row.stats = SingleFigureStats(scale == 1000 ? MsToUs(latency) : latency);
      return row;
    }();
    if (!row.ok()) return row.status().WithContext(where);
    table.rows.push_back(std::move(row).value());
  }
  if (in.bad()) return IoError(path + ": read error");
  return table;
}

}  // namespace latte
