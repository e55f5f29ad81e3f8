#include "run/output_drift.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace latte {
namespace {

// Element i of a buffer of `type`, as a double; false for a type that is not a number.
bool ReadElements(DataType type, const std::uint8_t* data, std::size_t bytes, std::vector<double>& out) {
  auto read = [&](auto sample) {
    using T = decltype(sample);
    out.resize(bytes / sizeof(T));
    for (std::size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, data + i * sizeof(T), sizeof(T));
      out[i] = static_cast<double>(v);
    }
  };
  switch (type) {
    case DataType::kFloat32: read(float{}); return true;
    case DataType::kFloat64: read(double{}); return true;
    case DataType::kInt8: read(std::int8_t{}); return true;
    case DataType::kUInt8: case DataType::kBool: read(std::uint8_t{}); return true;
    case DataType::kInt16: read(std::int16_t{}); return true;
    case DataType::kInt32: read(std::int32_t{}); return true;
    case DataType::kInt64: read(std::int64_t{}); return true;
    case DataType::kBFloat16:
      out.resize(bytes / 2);
      for (std::size_t i = 0; i < out.size(); ++i) {
        std::uint16_t h;
        std::memcpy(&h, data + 2 * i, 2);
        out[i] = Bf16ToFloat(h);
      }
      return true;
    default: return false;
  }
}

}  // namespace

Expected<RunDrift> CompareOutputs(const Graph& graph, const TensorBuffers& reference, const TensorBuffers& run,
                                  std::string reference_name) {
  RunDrift drift;
  drift.measured = true;
  drift.reference = std::move(reference_name);
  std::vector<double> a, b;
  for (TensorId id : graph.outputs) {
    const Tensor& t = graph.tensor(id);
    const std::uint8_t* ref_data = reference.data(id);
    const std::uint8_t* run_data = run.data(id);
    if (ref_data == nullptr || run_data == nullptr || reference.bytes(id) != run.bytes(id))
      return Internal("output '" + t.name + "' has no buffer, or buffers of different sizes, in the two runs");
    if (!ReadElements(t.dtype, ref_data, reference.bytes(id), a) || !ReadElements(t.dtype, run_data, run.bytes(id), b))
      return Unsupported("output '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + ", not numbers to compare");
    OutputDrift out;
    out.name = t.name;
    out.elements = static_cast<std::int64_t>(a.size());
    double dot = 0, norm_a = 0, norm_b = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
        // The same non-finite value in both is agreement; anything else is counted.
        const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i];
        if (!same) ++out.nonfinite_mismatches;
        continue;
      }
      out.max_abs_diff = std::max(out.max_abs_diff, std::abs(a[i] - b[i]));
      dot += a[i] * b[i], norm_a += a[i] * a[i], norm_b += b[i] * b[i];
    }
    // Equal outputs are exactly 1 (the sums above would round it to 0.9999999999999998).
    if (out.max_abs_diff == 0) out.cosine = 1;
    else if (norm_a == 0 || norm_b == 0) out.cosine = 0;
    else out.cosine = std::clamp(dot / (std::sqrt(norm_a) * std::sqrt(norm_b)), -1.0, 1.0);
    drift.max_abs_diff = std::max(drift.max_abs_diff, out.max_abs_diff);
    drift.cosine = std::min(drift.cosine, out.cosine);
    drift.nonfinite_mismatches += out.nonfinite_mismatches;
    drift.outputs.push_back(std::move(out));
  }
  return drift;
}

nlohmann::json RunDriftToJson(const RunDrift& d) {
  if (!d.measured) return {{"why", d.why}};
  nlohmann::json outputs = nlohmann::json::array();
  for (const OutputDrift& o : d.outputs)
    outputs.push_back({{"name", o.name},
                       {"elements", o.elements},
                       {"max_abs_diff", o.max_abs_diff},
                       {"cosine", o.cosine},
                       {"nonfinite_mismatches", o.nonfinite_mismatches}});
  return {{"reference", d.reference},
          {"max_abs_diff", d.max_abs_diff},
          {"cosine", d.cosine},
          {"nonfinite_mismatches", d.nonfinite_mismatches},
          {"outputs", outputs}};
}

RunDrift RunDriftFromJson(const nlohmann::json& j) {
  RunDrift d;
  if (!j.is_object()) return d;
  if (!j.contains("reference")) {
    d.why = j.value("why", "");
    return d;
  }
  d.measured = true;
  d.reference = j.value("reference", "");
  d.max_abs_diff = j.value("max_abs_diff", 0.0);
  d.cosine = j.value("cosine", 1.0);
  d.nonfinite_mismatches = j.value("nonfinite_mismatches", std::int64_t{0});
  if (j.contains("outputs") && j["outputs"].is_array())
    for (const auto& o : j["outputs"])
      d.outputs.push_back({o.value("name", ""), o.value("elements", std::int64_t{0}), o.value("max_abs_diff", 0.0),
                           o.value("cosine", 1.0), o.value("nonfinite_mismatches", std::int64_t{0})});
  return d;
}

}  // namespace latte
