#include "db/tensorrt_conv.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/text.h"
#include "ir/kernel_params.h"

namespace latte {
namespace {

// The nine fields in file order, with the names the format's header uses.
constexpr const char* kFieldNames[] = {"Conv_type", "Batch", "In_C", "In_H", "In_W", "Out_C", "Kernel", "Stride",
                                       "ElmtFused"};

}  // namespace

Expected<TensorrtConvRow> ParseTensorrtConvLine(std::string_view line, DataType dtype) {
  line = Trim(line);
  if (line.empty() || line.front() != '{') return InvalidInput("expected '{' at the start of the line");
  size_t close = line.find('}');
  if (close == std::string_view::npos) return InvalidInput("missing '}'");
  std::string_view fields_text = line.substr(1, close - 1);
  std::string_view latency_text = Trim(line.substr(close + 1));

  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = fields_text.find(',', start);
    fields.push_back(Trim(fields_text.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields.size() != 9) {
    return InvalidInput(fmt::format("expected 9 fields {{Conv_type,Batch,In_C,In_H,In_W,Out_C,Kernel,Stride,ElmtFused}}, "
                                    "got {}",
                                    fields.size()));
  }
  TensorrtConvRow row;
  if (fields[0] == "Regular") {
    row.kernel.op = OpKind::kConv2D;
  } else if (fields[0] == "Depthwise") {
    row.kernel.op = OpKind::kDepthwiseConv2D;
  } else {
    return InvalidInput("Conv_type '" + std::string(fields[0]) + "' is neither Regular nor Depthwise");
  }
  std::int64_t v[9] = {};
  for (int i = 1; i < 9; ++i) {
    const char* end = fields[i].data() + fields[i].size();
    auto [ptr, ec] = std::from_chars(fields[i].data(), end, v[i]);
    if (ec != std::errc() || ptr != end || fields[i].empty()) {
      return InvalidInput(fmt::format("{} '{}' is not an integer", kFieldNames[i], fields[i]));
    }
    bool valid = i == 8 ? (v[i] == 0 || v[i] == 1) : v[i] > 0;
    if (!valid) {
      return InvalidInput(fmt::format("{} = {} is out of range ({})", kFieldNames[i], v[i],
                                      i == 8 ? "0 or 1" : "must be positive"));
    }
  }
  const std::int64_t ic = v[2], oc = v[5];
  if (row.kernel.op == OpKind::kDepthwiseConv2D && oc % ic != 0) {
    return InvalidInput(fmt::format("Depthwise with Out_C {} not a multiple of In_C {}", oc, ic));
  }
  row.kernel.dtype = dtype;
  // The library's lines say no dilations, pads or bias: those keys stay absent.
  ConvKernelParams conv;
  conv.n = v[1], conv.ic = ic, conv.ih = v[3], conv.iw = v[4], conv.oc = oc;
  conv.kh = conv.kw = v[6];
  conv.sh = conv.sw = v[7];
  conv.g = row.kernel.op == OpKind::kDepthwiseConv2D ? ic : 1;
  conv.elmt_fused = v[8];
  WriteParams(conv, row.kernel);

  if (latency_text.empty()) return InvalidInput("missing latency after '}'");
  double latency = 0;
  const char* end = latency_text.data() + latency_text.size();
  auto [ptr, ec] = std::from_chars(latency_text.data(), end, latency);
  if (ec != std::errc() || ptr != end || !std::isfinite(latency)) {
    return InvalidInput("latency '" + std::string(latency_text) + "' is not a number");
  }
  if (latency == -1) {
    row.failed = true;
  } else if (latency <= 0) {
    return InvalidInput(fmt::format("latency {} ms is neither positive nor -1 (failed)", latency));
  }
  row.latency_ms = latency;
  LATTE_RETURN_IF_ERROR(CheckKernelParams(row.kernel));
  return row;
}

Expected<TensorrtConvFile> ReadTensorrtConvFile(const std::string& path, DataType dtype) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return std::filesystem::exists(path, ec) ? InvalidInput(path + ": not a regular file")
                                             : NotFound(path + ": no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  TensorrtConvFile file;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (Trim(line).empty()) continue;
    Expected<TensorrtConvRow> row = ParseTensorrtConvLine(line, dtype);
    if (!row.ok()) return row.status().WithContext(fmt::format("{}:{}", path, number));
    if (row->failed) {
      ++file.failed_lines;
      continue;
    }
    file.rows.push_back(std::move(row).value());
    file.line_numbers.push_back(number);
  }
  if (in.bad()) return IoError(path + ": read error");
  return file;
}

Expected<std::string> FormatTensorrtConvLine(const Kernel& kernel, double latency_ms) {
  const char* type = nullptr;
  if (kernel.op == OpKind::kConv2D) type = "Regular";
  if (kernel.op == OpKind::kDepthwiseConv2D) type = "Depthwise";
  if (type == nullptr) return Unsupported("tensorrt-conv cannot express a " + kernel.Kind() + " kernel");
  using P = ConvKernelParams;
  for (std::int64_t P::*field : {&P::n, &P::ic, &P::ih, &P::iw, &P::oc, &P::kh, &P::kw, &P::sh, &P::sw}) {
    if (!kernel.params.count(ParamKey(field)))
      return InvalidInput("kernel " + kernel.Key() + " has no param " + ParamKey(field));
  }
  const P p = ReadParams<P>(kernel);
  if (p.kh != p.kw || p.sh != p.sw) {
    return Unsupported("tensorrt-conv cannot express a non-square kernel or stride (" + kernel.Key() + ")");
  }
  if (p.dh.value_or(1) != 1 || p.dw.value_or(1) != 1) {
    return Unsupported("tensorrt-conv cannot express dilation (" + kernel.Key() + ")");
  }
  // Absent, the groups are the ones the library's conv type has (ReadParams).
  if (p.g != (kernel.op == OpKind::kDepthwiseConv2D ? p.ic : 1)) {
    return Unsupported("tensorrt-conv cannot express groups " + std::to_string(p.g) + " (" + kernel.Key() + ")");
  }
  bool add_fused = false;
  for (OpKind f : kernel.fused) {
    if (f == OpKind::kAdd) {
      add_fused = true;
    } else if (OpCategoryOf(f) != OpCategory::kActivation) {
      return Unsupported("tensorrt-conv cannot express fused " + std::string(OpName(f)) + " (" + kernel.Key() + ")");
    }
  }
  const std::int64_t elmt = p.elmt_fused.value_or(add_fused ? 1 : 0);
  return fmt::format("{{{},{},{},{},{},{},{},{},{}}} {}", type, p.n, p.ic, p.ih, p.iw, p.oc, p.kh, p.sh, elmt,
                     latency_ms);
}

}  // namespace latte
