#include "predict/pack.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/file.h"
#include "core/gzip.h"
#include "ir/kernel_graph.h"
#include "predict/features.h"
#include "predict/pack_json.h"
#include "predict/predictors.h"

namespace latte {

// The most threads a pack can be for (the CLI's --num-threads range).
constexpr std::int64_t kMaxPackThreads = 1024;

nlohmann::json AccuracyMetrics::ToJson() const {
  return {{"n", n}, {"rmspe_pct", rmspe_pct}, {"within5_pct", within5_pct}, {"within10_pct", within10_pct}};
}

Expected<AccuracyMetrics> AccuracyMetrics::FromJson(const nlohmann::json& json) {
  AccuracyMetrics m;
  LATTE_ASSIGN_OR_RETURN(double n, JsonNumber(json, "n"));
  LATTE_ASSIGN_OR_RETURN(m.rmspe_pct, JsonNumber(json, "rmspe_pct"));
  LATTE_ASSIGN_OR_RETURN(m.within5_pct, JsonNumber(json, "within5_pct"));
  LATTE_ASSIGN_OR_RETURN(m.within10_pct, JsonNumber(json, "within10_pct"));
  m.n = static_cast<std::size_t>(n);
  return m;
}

double RmspePct(std::span<const double> predicted, std::span<const double> measured, double cap) {
  const std::size_t n = std::min(predicted.size(), measured.size());
  if (n == 0) return 0;
  double sum_sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = std::min(cap, std::abs((predicted[i] - measured[i]) / measured[i]));
    sum_sq += e * e;
  }
  return 100 * std::sqrt(sum_sq / static_cast<double>(n));
}

AccuracyMetrics ComputeAccuracy(std::span<const double> predicted, std::span<const double> measured) {
  AccuracyMetrics m;
  m.n = std::min(predicted.size(), measured.size());
  if (m.n == 0) return m;
  std::size_t within5 = 0, within10 = 0;
  for (std::size_t i = 0; i < m.n; ++i) {
    const double e = (predicted[i] - measured[i]) / measured[i];
    within5 += std::abs(e) <= 0.05;
    within10 += std::abs(e) <= 0.10;
  }
  const double n = static_cast<double>(m.n);
  m.rmspe_pct = RmspePct(predicted, measured);
  m.within5_pct = 100 * static_cast<double>(within5) / n;
  m.within10_pct = 100 * static_cast<double>(within10) / n;
  return m;
}

namespace {

// What TrainingRanges::derived keeps of a kernel.
std::vector<std::pair<const char*, double>> DerivedRangeValues(const Kernel& kernel) {
  const KernelCost cost = ComputeKernelCost(kernel);
  std::vector<std::pair<const char*, double>> values = {{"macs", cost.macs}, {"bytes", cost.Bytes()}};
  if (cost.oh > 0 && cost.ow > 0) values.emplace_back("oh*ow", cost.oh * cost.ow);
  return values;
}

}  // namespace

void TrainingRanges::Extend(const Kernel& kernel, int threads) {
  auto extend = [this](const std::string& name, std::int64_t v) {
    auto [it, inserted] = params.try_emplace(name, v, v);
    if (!inserted) it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
  };
  for (const auto& [name, value] : kernel.params) extend(name, value);
  extend("threads", threads);
  for (const auto& [name, value] : DerivedRangeValues(kernel)) {
    auto [it, inserted] = derived.try_emplace(name, value, value);
    if (!inserted) it->second = {std::min(it->second.first, value), std::max(it->second.second, value)};
  }
  std::string dtype(DataTypeName(kernel.dtype));
  if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) {
    dtypes.push_back(dtype);
    std::sort(dtypes.begin(), dtypes.end());
  }
}

bool TrainingRanges::Contains(const Kernel& kernel, int threads) const {
  auto inside = [this](const std::string& name, std::int64_t v) {
    auto it = params.find(name);
    return it != params.end() && v >= it->second.first && v <= it->second.second;
  };
  for (const auto& [name, value] : kernel.params)
    if (!inside(name, value)) return false;
  if (!derived.empty()) {
    for (const auto& [name, value] : DerivedRangeValues(kernel)) {
      auto it = derived.find(name);
      if (it == derived.end() || value < it->second.first || value > it->second.second) return false;
    }
  }
  return inside("threads", threads) &&
         std::find(dtypes.begin(), dtypes.end(), DataTypeName(kernel.dtype)) != dtypes.end();
}

nlohmann::json TrainingRanges::ToJson() const {
  nlohmann::json ranges = nlohmann::json::object();
  for (const auto& [name, range] : params) ranges[name] = {range.first, range.second};
  nlohmann::json json = {{"params", ranges}, {"dtypes", dtypes}};
  if (!derived.empty()) {
    nlohmann::json together = nlohmann::json::object();
    for (const auto& [name, range] : derived) together[name] = {range.first, range.second};
    json["derived"] = together;
  }
  return json;
}

Expected<TrainingRanges> TrainingRanges::FromJson(const nlohmann::json& json) {
  TrainingRanges r;
  try {
    for (const auto& [name, range] : json.at("params").items()) {
      if (!range.is_array() || range.size() != 2) return InvalidInput("range of '" + name + "' is not [min, max]");
      constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();
      LATTE_ASSIGN_OR_RETURN(const std::int64_t lo, JsonInteger(range[0], "range of '" + name + "'", kMin, kMax));
      LATTE_ASSIGN_OR_RETURN(const std::int64_t hi, JsonInteger(range[1], "range of '" + name + "'", kMin, kMax));
      r.params[name] = {lo, hi};
      if (r.params[name].first > r.params[name].second) return InvalidInput("range of '" + name + "' has min > max");
    }
    if (json.contains("derived")) {  // optional: packs made before derived ranges were kept
      for (const auto& [name, range] : json.at("derived").items()) {
        if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number()) {
          return InvalidInput("derived range of '" + name + "' is not [min, max]");
        }
        const double lo = range[0].get<double>(), hi = range[1].get<double>();
        if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
          return InvalidInput("derived range of '" + name + "' is not finite with min <= max");
        }
        r.derived[name] = {lo, hi};
      }
    }
    r.dtypes = json.at("dtypes").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput("ranges: " + JsonErrorText(e));
  }
  return r;
}

NhwcBackends Pack::NhwcBackendNames() const {
  // A pack written before packs said it: the backends that took NHWC then were these two (the only
  // place a backend's layout is read from its name, and only for such old packs).
  const bool nhwc = info.backend_takes_nhwc.value_or(info.backend == "xnnpack" || info.backend == "onednn");
  return nhwc ? NhwcBackends{info.backend} : NhwcBackends{};
}

std::vector<TrainingSample> Pack::MeasuredKernels() const {
  std::vector<TrainingSample> kernels;
  for (const auto& [kind, model] : kinds) {
    const auto* table = dynamic_cast<const TablePredictor*>(model.table.get());
    if (table == nullptr) continue;
    std::vector<TrainingSample> entries = table->Entries();
    kernels.insert(kernels.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
  }
  return kernels;
}

Expected<Prediction> Pack::Predict(const Kernel& kernel) const { return Predict(kernel, info.threads); }

Expected<Prediction> Pack::Predict(const Kernel& kernel, int threads) const {
  Expected<Prediction> p = PredictUnadapted(kernel, threads);
  // A sum of parts is made of predictions already adapted, each by its own part's class.
  if (!adaptation || !p.ok() || p->source == PredictionSource::kSumOfParts) return p;
  const ClassAdaptation* c = adaptation->ClassFor(kernel);
  if (c == nullptr) return p;
  const double factor = c->Factor(p->ms);
  p->ms *= factor;
  p->spread_ms = p->spread_ms * factor + p->ms * c->spread;
  // Factors a pack's checks on loading allow can still overflow on a huge time: damaged, not inf.
  if (!std::isfinite(p->ms) || !std::isfinite(p->spread_ms))
    return InvalidInput(fmt::format("the pack's adaptation made {} ms of {}: the pack is damaged", p->ms, kernel.Key()));
  return p;
}

Expected<Prediction> Pack::PredictUnadapted(const Kernel& kernel, int threads) const {
  std::string kind = ModelKind(kernel);
  auto it = kinds.find(kind);
  if (it == kinds.end() && !kernel.fused.empty()) return PredictFromParts(kernel, threads);
  if (it == kinds.end()) {
    std::string known;
    for (const auto& [name, model] : kinds) known += (known.empty() ? "" : ", ") + name;
    return Unsupported("no predictor for kernel kind '" + kind + "' in this pack (it has: " +
                       (known.empty() ? "none" : known) + ")");
  }
  const KindModel& model = it->second;
  // Values a pack's checks on loading cannot rule out (trees whose sums overflow): a damaged pack
  // answers nothing rather than an infinite or negative time.
  auto checked = [&](Expected<Prediction> p) -> Expected<Prediction> {
    if (!p.ok() || (p->ms >= 0 && std::isfinite(p->ms) && p->spread_ms >= 0 && std::isfinite(p->spread_ms))) return p;
    return InvalidInput(fmt::format("the pack's {} predictor gave {} ms (± {}) for {}: the pack is damaged",
                                    PredictionSourceName(p->source), p->ms, p->spread_ms, kernel.Key()));
  };
  if (model.table) {
    Expected<Prediction> hit = model.table->Predict(kernel, threads);
    if (hit.ok()) return checked(std::move(hit));
  }
  if (model.by_parts) return PredictFromParts(kernel, threads);
  bool outside = !model.ranges.Contains(kernel, threads);
  // Interpolation answers inside its grid only: beyond it (a parameter clamped, a square grid
  // asked a non-square kernel) it holds its edge, while a tree model later in the order still
  // reads every feature of the kernel, so that one answers.
  auto tree_follows = [&](std::vector<std::string>::const_iterator from) {
    return std::any_of(from, model.order.end(),
                       [&](const std::string& name) { return IsTreePredictor(name) && model.fitted.count(name); });
  };
  // A streaming kind's tree is followed by a predictor that extrapolates in bytes (FitPack): a
  // kernel outside the kind's training ranges, or one interpolation declines, that one answers,
  // not the tree, whose answer beyond what it saw is the rate of the nearest it saw.
  auto extrapolator = model.order.end();
  if (IsStreamingKernel(kernel))
    extrapolator = std::find_if(model.order.begin(), model.order.end(),
                                [&](const std::string& name) { return ExtrapolatesBytes(name) && model.fitted.count(name); });
  bool declined = false;
  std::string why;
  for (auto it = model.order.begin(); it != model.order.end(); ++it) {
    const std::string& name = *it;
    auto predictor = model.fitted.find(name);
    if (predictor == model.fitted.end()) continue;
    if (!predictor->second->Covers(kernel, threads) && tree_follows(it + 1)) {
      declined = true;
      continue;
    }
    if ((declined || outside) && IsTreePredictor(name) && extrapolator != model.order.end() && extrapolator > it) {
      Expected<Prediction> extrapolated = model.fitted.at(*extrapolator)->Predict(kernel, threads);
      if (extrapolated.ok()) {
        extrapolated->outside_training_range = true;
        return checked(std::move(extrapolated));
      }
      why += (why.empty() ? "" : "; ") + extrapolated.status().message();
    }
    Expected<Prediction> prediction = predictor->second->Predict(kernel, threads);
    if (prediction.ok()) {
      prediction->outside_training_range = prediction->outside_training_range || outside;
      return checked(std::move(prediction));
    }
    why += (why.empty() ? "" : "; ") + prediction.status().message();
  }
  return Unsupported("no predictor of kind '" + kind + "' could predict " + kernel.Key() + ": " +
                     (why.empty() ? "the pack has none fitted" : why));
}

Expected<Prediction> Pack::PredictFromParts(const Kernel& kernel, int threads) const {
  Expected<std::vector<Kernel>> parts = KernelParts(kernel);
  if (!parts.ok()) {
    return Unsupported("no predictor for kernel kind '" + kernel.Kind() + "' in this pack, and its parts cannot be " +
                       "told apart: " + parts.status().message());
  }
  // The main op alone, then the followers as the one fused kind they make ("add+relu" of a
  // "conv2d+add+relu"), which backends run as one pass and packs measure; a pack without that kind
  // predicts it by its own parts in turn. Each part fuses fewer ops than `kernel`: this recursion ends.
  std::vector<Kernel>& each = *parts;
  if (each.size() > 2) {
    each[1].fused.assign(kernel.fused.begin() + 1, kernel.fused.end());
    each.resize(2);
  }
  Prediction sum;
  sum.source = PredictionSource::kSumOfParts;
  double followers_ms = 0;
  for (std::size_t i = 0; i < each.size(); ++i) {
    Expected<Prediction> p = Predict(each[i], threads);
    if (!p.ok()) {
      return Unsupported("no predictor for kernel kind '" + kernel.Kind() + "' in this pack, nor for its part '" +
                         each[i].Kind() + "': " + p.status().message());
    }
    sum.ms += p->ms;
    sum.spread_ms += p->spread_ms;  // one pack's errors share a bias: they add
    if (i > 0) followers_ms += p->ms;
    sum.outside_training_range = sum.outside_training_range || p->outside_training_range;
  }
  // Fusing saves at most the followers' own pass: the fused kernel lies between the main op alone
  // and the sum, so half the followers' time is one more standard deviation of this answer.
  sum.spread_ms += followers_ms / 2;
  return sum;
}

nlohmann::json Pack::ToJson() const {
  nlohmann::json out;
  out["format"] = "latte-pack";
  out["format_version"] = kPackFormatVersion;
  out["feature_version"] = kFeatureVersion;
  out["device"] = info.device;
  out["backend"] = {{"name", info.backend}, {"version", info.backend_version}};
  if (info.backend_takes_nhwc) out["backend"]["takes_nhwc"] = *info.backend_takes_nhwc;
  out["threads"] = info.threads;
  out["precision"] = info.precision;
  out["fusion_rules"] = info.fusion_rules;
  out["provenance"] = {{"command", info.command}, {"created", info.created}, {"latte_version", info.latte_version}};
  if (!info.reference_kernel.empty())
    out["reference"] = {{"kernel", info.reference_kernel},
                        {"p50_us", info.reference_p50_us},
                        {"readings", info.reference_readings},
                        {"spread", info.reference_spread},
                        {"corrected", info.reference_corrected}};
  // Absent when corrected in full: packs fitted before it was kept stay byte-identical.
  if (!info.reference_kernel.empty() && info.reference_follow != 1) out["reference"]["follow"] = info.reference_follow;
  nlohmann::json kinds_json = nlohmann::json::object();
  for (const auto& [kind, model] : kinds) {
    nlohmann::json k;
    k["samples"] = model.samples;
    k["ranges"] = model.ranges.ToJson();
    k["order"] = model.order;
    k["selected"] = model.by_parts ? "sum-of-parts" : model.order.empty() ? "table" : model.order.front();
    if (model.by_parts) k["by_parts"] = true;  // absent otherwise: packs fitted before it stay byte-identical
    nlohmann::json cv = nlohmann::json::object();
    for (const auto& [name, metrics] : model.cv) cv[name] = metrics.ToJson();
    k["cv"] = cv;
    nlohmann::json predictors = nlohmann::json::object();
    if (model.table) predictors["table"] = model.table->ToJson();
    for (const auto& [name, predictor] : model.fitted) predictors[name] = predictor->ToJson();
    k["predictors"] = predictors;
    kinds_json[kind] = k;
  }
  out["kinds"] = kinds_json;
  if (context) out["context"] = context->ToJson();
  if (adaptation) out["adaptation"] = adaptation->ToJson();
  if (interval) out["interval"] = interval->ToJson();
  if (transformer_context) out["transformer_context"] = transformer_context->ToJson();
  if (transformer_interval) out["transformer_interval"] = transformer_interval->ToJson();
  return out;
}

Expected<Pack> Pack::FromJson(const nlohmann::json& json) {
  Pack pack;
  try {
    if (!json.is_object() || json.value("format", "") != "latte-pack") return InvalidInput("not a Latte pack (no \"format\": \"latte-pack\")");
    LATTE_ASSIGN_OR_RETURN(const std::int64_t format, JsonInteger(json.at("format_version"), "format_version", 0, 1 << 30));
    if (format != kPackFormatVersion)
      return InvalidInput("pack format version " + std::to_string(format) + " is not the one this latte reads (" +
                          std::to_string(kPackFormatVersion) + ")");
    LATTE_ASSIGN_OR_RETURN(const std::int64_t features,
                           JsonInteger(json.at("feature_version"), "feature_version", 0, 1 << 30));
    // Older versions stay readable: each tree ensemble records the version it computes.
    if (features < 1 || features > kFeatureVersion)
      return InvalidInput("pack was fitted on feature version " + std::to_string(features) + ", this latte computes " +
                          "1 to " + std::to_string(kFeatureVersion) + ": refit the pack, or use a newer latte");
    pack.info.device = json.at("device");
    pack.info.backend = json.at("backend").at("name").get<std::string>();
    pack.info.backend_version = json.at("backend").at("version").get<std::string>();
    if (json.at("backend").contains("takes_nhwc")) {
      const nlohmann::json& nhwc = json.at("backend").at("takes_nhwc");
      if (!nhwc.is_boolean()) return InvalidInput("backend: takes_nhwc is not true or false");
      pack.info.backend_takes_nhwc = nhwc.get<bool>();
    }
    if (!pack.info.device.is_object()) return InvalidInput("device: not an object");
    // 0: unknown, as for a table imported from elsewhere.
    Expected<std::int64_t> threads = JsonInteger(json.at("threads"), "threads", 0, kMaxPackThreads);
    if (!threads.ok())
      return InvalidInput(fmt::format("threads: {} is not a thread count in 0..{}", json.at("threads").dump(), kMaxPackThreads));
    pack.info.threads = static_cast<int>(*threads);
    pack.info.precision = json.at("precision").get<std::string>();
    // The precisions measurements are stored with (fp16: imported TensorRT tables).
    if (Expected<DataType> dtype = DataTypeFromPrecision(pack.info.precision); !dtype.ok())
      return dtype.status().WithContext("precision");
    pack.info.fusion_rules = json.at("fusion_rules").get<std::vector<std::string>>();
    if (Expected<FusionRules> rules = FusionRules::FromKinds(pack.info.fusion_rules); !rules.ok())
      return rules.status().WithContext("fusion_rules");
    const nlohmann::json& provenance = json.at("provenance");
    pack.info.command = provenance.at("command").get<std::string>();
    pack.info.created = provenance.at("created").get<std::string>();
    pack.info.latte_version = provenance.at("latte_version").get<std::string>();
    if (json.contains("reference")) {  // optional: packs made before it was kept have none
      const nlohmann::json& reference = json.at("reference");
      pack.info.reference_kernel = reference.at("kernel").get<std::string>();
      LATTE_ASSIGN_OR_RETURN(pack.info.reference_p50_us, JsonNonNegative(reference, "p50_us"));
      Expected<std::size_t> readings = JsonCount(reference, "readings");
      if (!readings.ok()) return readings.status().WithContext("reference");
      pack.info.reference_readings = *readings;
      // Optional: packs made before it was kept have none (their intervals leave the machine out).
      pack.info.reference_spread = reference.value("spread", 0.0);
      if (!std::isfinite(pack.info.reference_spread) || pack.info.reference_spread < 0 ||
          pack.info.reference_spread > 1) {
        return InvalidInput("reference: spread must be a number in [0, 1]");
      }
      if (reference.contains("corrected")) {  // optional: packs made before measurements were drift-corrected
        Expected<std::size_t> corrected = JsonCount(reference, "corrected");
        if (!corrected.ok()) return corrected.status().WithContext("reference");
        pack.info.reference_corrected = *corrected;
      }
      if (reference.contains("follow")) {  // optional: absent when the measurements followed the reference in full
        Expected<double> follow = JsonNumber(reference, "follow");
        if (!follow.ok() || *follow < 0 || *follow > 1) return InvalidInput("reference: follow must be a number in [0, 1]");
        pack.info.reference_follow = *follow;
      }
    }
    if (!json.at("kinds").is_object()) return InvalidInput("kinds: not an object of kernel kinds");
    for (const auto& [kind, k] : json.at("kinds").items()) {
      KindModel model;
      model.kind = kind;
      LATTE_RETURN_IF_ERROR(ParseModelKind(kind));
      Expected<std::size_t> samples = JsonCount(k, "samples");
      if (!samples.ok()) return samples.status().WithContext("kind " + kind);
      model.samples = *samples;
      Expected<TrainingRanges> ranges = TrainingRanges::FromJson(k.at("ranges"));
      if (!ranges.ok()) return ranges.status().WithContext("kind " + kind);
      model.ranges = std::move(*ranges);
      model.order = k.at("order").get<std::vector<std::string>>();
      for (const auto& [name, metrics] : k.at("cv").items()) {
        Expected<AccuracyMetrics> m = AccuracyMetrics::FromJson(metrics);
        if (!m.ok()) return m.status().WithContext("kind " + kind + ": cv " + name);
        model.cv[name] = *m;
      }
      PredictorOptions options;
      for (const auto& [name, p] : k.at("predictors").items()) {
        Expected<std::unique_ptr<KernelPredictor>> predictor = MakePredictor(name, options);
        if (!predictor.ok()) return predictor.status().WithContext("kind " + kind);
        Status read = (*predictor)->FromJson(p);
        if (!read.ok()) return read.WithContext("kind " + kind);
        if (!FindPredictorType(name)->fitted) model.table = std::move(*predictor);
        else model.fitted[name] = std::move(*predictor);
      }
      for (const std::string& name : model.order)
        if (!model.fitted.count(name)) return InvalidInput("kind " + kind + ": order names '" + name + "' but it is not in predictors");
      if (k.contains("by_parts")) {  // optional: packs fitted before it have none
        if (!k.at("by_parts").is_boolean()) return InvalidInput("kind " + kind + ": by_parts is not true or false");
        model.by_parts = k.at("by_parts").get<bool>();
        if (model.by_parts && ParseModelKind(kind)->fused.empty())
          return InvalidInput("kind " + kind + ": by_parts, but the kind fuses nothing: it has no parts");
      }
      pack.kinds[kind] = std::move(model);
    }
    if (json.contains("context")) {  // optional: packs fitted without layers measured in context
      LATTE_ASSIGN_OR_RETURN(pack.context, ContextModel::FromJson(json.at("context")));
    }
    if (json.contains("adaptation")) {  // optional: only packs `latte adapt` wrote
      LATTE_ASSIGN_OR_RETURN(pack.adaptation, PackAdaptation::FromJson(json.at("adaptation")));
    }
    if (json.contains("interval")) {  // optional: packs fitted with enough networks measured in context
      LATTE_ASSIGN_OR_RETURN(pack.interval, NetworkInterval::FromJson(json.at("interval")));
    }
    // Optional: packs of backends that run attention, fitted with encoders measured in context.
    if (json.contains("transformer_context")) {
      Expected<ContextModel> context = ContextModel::FromJson(json.at("transformer_context"));
      if (!context.ok()) return context.status().WithContext("transformer_context");
      pack.transformer_context = *context;
    }
    if (json.contains("transformer_interval")) {
      Expected<NetworkInterval> interval = NetworkInterval::FromJson(json.at("transformer_interval"));
      if (!interval.ok()) return interval.status().WithContext("transformer_interval");
      pack.transformer_interval = *interval;
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput("malformed pack: " + JsonErrorText(e));
  }
  return pack;
}

// Compact: a calibrated pack holds hundreds of thousands of tree nodes, and indentation doubled
// its size. Still stable: the same pack always gives the same text.
std::string Pack::Dump() const { return ToJson().dump() + "\n"; }

Status Pack::Save(const std::string& path) const {
  std::string text = Dump();
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    Expected<std::string> compressed = Gzip(text);
    if (!compressed.ok()) return compressed.status().WithContext(path);
    text = std::move(*compressed);
  }
  return WriteFileAtomically(path, text).WithContext(path);
}

Expected<Pack> Pack::FromBytes(std::span<const std::uint8_t> bytes) {
  std::string expanded;
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (LooksGzipped(bytes)) {  // a .json.gz pack (the shipped ones)
    LATTE_ASSIGN_OR_RETURN(expanded, Gunzip(bytes, kMaxPackBytes));
    text = expanded;
  }
  // The trees' number arrays packed, not one JSON node per number: seconds less to load.
  LATTE_ASSIGN_OR_RETURN(const nlohmann::json json, ParsePackJson(text));
  return FromJson(json);
}

Expected<Pack> Pack::Load(const std::string& path) {
  Expected<std::vector<std::uint8_t>> bytes = ReadFileBytes(path, kMaxPackBytes);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  Expected<Pack> pack = FromBytes(*bytes);
  if (!pack.ok()) return pack.status().WithContext(path);
  return pack;
}

}  // namespace latte
