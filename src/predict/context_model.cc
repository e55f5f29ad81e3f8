#include "predict/context_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "predict/predictor.h"

namespace latte {
namespace {

constexpr double kMiB = 1 << 20;
// L3 sizes tried, as shares of the machine's: other tenants of a shared L3 leave a layer less.
constexpr double kL3Shares[] = {0.25, 0.5, 0.75, 1.0};
// Networks are few (a 5-minute calibration measures a few dozen) and differ a lot: hold each out
// in turn, up to this many folds.
constexpr std::size_t kMaxFolds = 20;
// Layers are weighted by their relative error, floored so a microsecond-long layer does not
// outweigh the rest.
constexpr double kWeightFloorMs = 0.01;

}  // namespace

namespace {

// A layer's features and target (extra ms in the graph). Features: its time alone in its class's
// slot (the first kContextClasses), then the MiB it loses from L2 and from L3, in the next two
// slots if it has weights and in the two after if not, then the MiB a layout pass reorders around
// it (zero on a backend without one: the fit then leaves that coefficient at zero), then those of
// them that alias in the L1 (NchwcReorderAliases), then 1 for a layer with a kernel (its cost in
// a graph whatever its size).
constexpr std::size_t kAloneSlots = kContextClasses;
constexpr std::size_t kLayoutSlot = kAloneSlots + 4;
constexpr std::size_t kPagedLayoutSlot = kAloneSlots + 5;
constexpr std::size_t kLayerSlot = kAloneSlots + 6;
constexpr std::size_t kFeatures = kAloneSlots + 7;
using Features = std::array<double, kFeatures>;
struct Row {
  Features x;
  double y = 0, weight = 0;
};

Features LayerFeatures(const LayerTraffic& traffic, double alone_ms, OpKind op, double lost2_bytes, double lost3_bytes) {
  const bool weights = traffic.weight_bytes > 0;
  const double l2 = lost2_bytes / kMiB, l3 = lost3_bytes / kMiB;
  Features x{};
  x[static_cast<std::size_t>(ContextClassOf(op))] = alone_ms;
  x[kAloneSlots] = weights ? l2 : 0;
  x[kAloneSlots + 1] = weights ? l3 : 0;
  x[kAloneSlots + 2] = weights ? 0 : l2;
  x[kAloneSlots + 3] = weights ? 0 : l3;
  x[kLayoutSlot] = static_cast<double>(traffic.layout_bytes) / kMiB;
  x[kPagedLayoutSlot] = static_cast<double>(traffic.layout_paged_bytes) / kMiB;
  x[kLayerSlot] = op == OpKind::kOpaque ? 0 : 1;
  return x;
}

double AloneOf(const Features& x) {
  double alone = 0;
  for (std::size_t i = 0; i < kAloneSlots; ++i) alone += x[i];
  return alone;
}

// The extra ms of a layer given its features: what ExtraMs and the fit's scoring both use. A layer
// never comes out below half its time alone.
double LayerExtraMs(const Features& coef, const Features& x) {
  double e = 0;
  for (std::size_t i = 0; i < kFeatures; ++i) e += coef[i] * x[i];
  return std::max(e, -0.5 * AloneOf(x));
}

// One share for every class: each row's time alone moved to the first slot, so the fit gives the
// other slots nothing (their columns are zero); Spread gives the first slot's share to every class.
std::vector<std::vector<Row>> OneShare(std::vector<std::vector<Row>> rows) {
  for (std::vector<Row>& network : rows)
    for (Row& r : network) {
      r.x[0] = AloneOf(r.x);
      for (std::size_t i = 1; i < kAloneSlots; ++i) r.x[i] = 0;
    }
  return rows;
}
Features Spread(Features coef) {
  for (std::size_t i = 1; i < kAloneSlots; ++i) coef[i] = coef[0];
  return coef;
}

// The networks' rows for one L3 size and memory; `lost2` (per network, per layer, bytes lost from
// L2 in that memory) does not depend on the L3 size and is simulated once by the caller.
std::vector<std::vector<Row>> Rows(const std::vector<MeasuredNetwork>& networks, const std::vector<std::vector<double>>& lost2,
                                   std::int64_t l3, TensorMemory memory) {
  std::vector<std::vector<Row>> rows;
  for (std::size_t g = 0; g < networks.size(); ++g) {
    const MeasuredNetwork& network = networks[g];
    const std::vector<double> lost3 = ExtraMissBytes(network.traffic, l3, memory);
    std::vector<Row>& out = rows.emplace_back();
    for (std::size_t i = 0; i < network.traffic.size(); ++i) {
      const double alone = network.alone_ms[i];
      const double w = 1 / std::pow(std::max(alone, kWeightFloorMs), 2);
      out.push_back({LayerFeatures(network.traffic[i], alone, network.kernels[i].op, lost2[g][i], lost3[i]),
                     network.in_graph_ms[i] - alone, w});
    }
  }
  return rows;
}

// The layout changes' cost, known: per MiB reordered, and added per MiB of those on whole pages
// (the layout slot's and the paged slot's coefficients).
struct LayoutRates {
  double ms_per_mib = 0, paged_ms_per_mib = 0;
};

// Weighted least squares with non-negative coefficients, exactly: every subset of coefficients
// allowed to be non-zero is solved, and the best whose solution is non-negative wins. A known
// `fixed_layout` gives the layout slots' coefficients: the others are fitted to what they leave.
Features FitNonNegative(const std::vector<std::vector<Row>>& rows, const std::vector<bool>& use,
                        const std::optional<LayoutRates>& fixed_layout) {
  const bool fixed = fixed_layout.has_value();
  const auto known = [&](const Row& r) {
    return fixed ? fixed_layout->ms_per_mib * r.x[kLayoutSlot] + fixed_layout->paged_ms_per_mib * r.x[kPagedLayoutSlot] : 0.0;
  };
  const auto set_known = [&](Features& coef) {
    if (!fixed) return;
    coef[kLayoutSlot] = fixed_layout->ms_per_mib;
    coef[kPagedLayoutSlot] = fixed_layout->paged_ms_per_mib;
  };
  constexpr unsigned kLayoutMask = (1u << kLayoutSlot) | (1u << kPagedLayoutSlot);
  std::array<Features, kFeatures> a{};
  Features b{};
  double yy = 0;
  for (std::size_t g = 0; g < rows.size(); ++g) {
    if (!use[g]) continue;
    for (const Row& r : rows[g]) {
      const double y = r.y - known(r);
      for (std::size_t i = 0; i < kFeatures; ++i) {
        b[i] += r.weight * r.x[i] * y;
        for (std::size_t j = 0; j < kFeatures; ++j) a[i][j] += r.weight * r.x[i] * r.x[j];
      }
      yy += r.weight * y * y;
    }
  }
  Features best{};
  set_known(best);
  double best_loss = yy;  // all coefficients zero (but the known ones)
  for (unsigned mask = 1; mask < (1u << kFeatures); ++mask) {
    if (fixed && (mask & kLayoutMask)) continue;
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < kFeatures; ++i)
      if (mask & (1u << i)) free.push_back(i);
    const std::size_t n = free.size();
    // Gaussian elimination with partial pivoting on the free coefficients' normal equations.
    std::vector<std::vector<double>> m(n, std::vector<double>(n + 1));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) m[i][j] = a[free[i]][free[j]];
      m[i][n] = b[free[i]];
    }
    bool singular = false;
    for (std::size_t col = 0; col < n && !singular; ++col) {
      std::size_t pivot = col;
      for (std::size_t r = col + 1; r < n; ++r)
        if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
      if (std::abs(m[pivot][col]) < 1e-12 * (1 + std::abs(a[free[col]][free[col]]))) {
        singular = true;
        break;
      }
      std::swap(m[col], m[pivot]);
      for (std::size_t r = 0; r < n; ++r) {
        if (r == col) continue;
        const double f = m[r][col] / m[col][col];
        for (std::size_t c = col; c <= n; ++c) m[r][c] -= f * m[col][c];
      }
    }
    if (singular) continue;
    Features coef{};
    bool negative = false;
    for (std::size_t i = 0; i < n; ++i) {
      coef[free[i]] = m[i][n] / m[i][i];
      negative |= coef[free[i]] < 0;
    }
    if (negative) continue;
    double loss = yy;
    for (std::size_t i = 0; i < kFeatures; ++i) {
      loss -= 2 * coef[i] * b[i];
      for (std::size_t j = 0; j < kFeatures; ++j) loss += coef[i] * a[i][j] * coef[j];
    }
    if (loss < best_loss) {
      best_loss = loss;
      best = coef;
      set_known(best);
    }
  }
  return best;
}

ContextModel WithCoefficients(const Features& coef, bool per_class, std::int64_t l2, std::int64_t l3, TensorMemory memory) {
  ContextModel model;
  model.memory = memory;
  model.share = per_class ? 0 : coef[0];
  if (per_class) {
    model.class_shares.emplace();
    for (std::size_t i = 0; i < kAloneSlots; ++i) (*model.class_shares)[i] = coef[i];
  }
  model.l2_ms_per_mib = coef[kAloneSlots];
  model.l3_ms_per_mib = coef[kAloneSlots + 1];
  model.weightless_l2_ms_per_mib = coef[kAloneSlots + 2];
  model.weightless_l3_ms_per_mib = coef[kAloneSlots + 3];
  model.layout_ms_per_mib = coef[kLayoutSlot];
  model.layout_paged_ms_per_mib = coef[kPagedLayoutSlot];
  model.layer_ms = coef[kLayerSlot];
  model.l2_bytes = l2;
  model.l3_bytes = l3;
  return model;
}

// One row per network: its layers' features and extra time summed, weighted by the network's
// relative error. The extra time is linear in the coefficients (all non-negative, so the floor in
// LayerExtraMs never applies), so fitting these rows minimises the error of each network's sum of
// layers, the figure a model's total needs; the per-layer rows weigh a microsecond-long reshape as
// much as a conv that takes a third of the network.
std::vector<std::vector<Row>> PerNetwork(const std::vector<std::vector<Row>>& rows) {
  std::vector<std::vector<Row>> networks;
  for (const std::vector<Row>& layers : rows) {
    Row sum{};
    double measured = 0;
    for (const Row& r : layers) {
      for (std::size_t i = 0; i < kFeatures; ++i) sum.x[i] += r.x[i];
      sum.y += r.y;
      measured += AloneOf(r.x) + r.y;
    }
    sum.weight = measured > 0 ? 1 / (measured * measured) : 0;
    networks.push_back({sum});
  }
  return networks;
}

// Relative error of a network's summed layers against their sum in the graph: alone (no `coef`),
// or with the extra time of `coef`.
double NetworkError(const std::vector<Row>& rows, const Features* coef) {
  double measured = 0, predicted = 0;
  for (const Row& r : rows) {
    measured += AloneOf(r.x) + r.y;
    predicted += AloneOf(r.x) + (coef != nullptr ? LayerExtraMs(*coef, r.x) : 0);
  }
  return measured > 0 ? (predicted - measured) / measured : 0;
}

// How many standard errors the second set of held-out errors is better than the first, paired by
// network: each network's |error| with the first less with the second (absolute, not squared: one
// network's large error squared would swamp the spread). A gain a few networks make and the rest
// do not is noise, not a class.
double PairedGainZ(const std::vector<double>& first, const std::vector<double>& second) {
  const std::size_t n = first.size();
  if (n < 2 || second.size() != n) return 0;
  std::vector<double> gain(n);
  double mean = 0;
  for (std::size_t g = 0; g < n; ++g) mean += gain[g] = std::abs(first[g]) - std::abs(second[g]);
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double d : gain) ss += (d - mean) * (d - mean);
  const double se = std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
  if (se == 0) return mean > 0 ? std::numeric_limits<double>::infinity() : 0;
  return mean / se;
}

double Rms(const std::vector<double>& errors) {
  double sum = 0;
  for (double e : errors) sum += e * e;
  return errors.empty() ? 0 : 100 * std::sqrt(sum / static_cast<double>(errors.size()));
}

}  // namespace

const char* ContextObjectiveName(ContextObjective objective) {
  return objective == ContextObjective::kNetworks ? "networks" : "layers";
}

ContextClass ContextClassOf(OpKind op) {
  switch (op) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv2D: return ContextClass::kConv;
    case OpKind::kFullyConnected:
    case OpKind::kMatMul: return ContextClass::kDense;
    default: return OpCategoryOf(op) == OpCategory::kDataMovement ? ContextClass::kDataMovement : ContextClass::kOther;
  }
}

const char* ContextClassName(ContextClass cls) {
  switch (cls) {
    case ContextClass::kConv: return "conv";
    case ContextClass::kDense: return "dense";
    case ContextClass::kDataMovement: return "data_movement";
    case ContextClass::kOther: break;
  }
  return "other";
}

std::vector<OpKind> MeasuredNetwork::Ops() const {
  std::vector<OpKind> ops;
  for (const Kernel& kernel : kernels) ops.push_back(kernel.op);
  return ops;
}

double ContextModel::ShareOf(OpKind op) const {
  return class_shares ? (*class_shares)[static_cast<std::size_t>(ContextClassOf(op))] : share;
}

std::string ContextModel::ShareText() const {
  if (!class_shares) return fmt::format("{:.1f}% of the time alone", 100 * share);
  std::string text;
  for (std::size_t i = 0; i < kContextClasses; ++i)
    text += fmt::format("{}{} {:.1f}%", i == 0 ? "" : ", ", ContextClassName(static_cast<ContextClass>(i)),
                        100 * (*class_shares)[i]);
  return text + " of the time alone";
}

void SetLayoutBytes(const std::vector<std::vector<NchwcReorder>>& reorders, std::vector<LayerTraffic>& traffic) {
  for (std::size_t i = 0; i < traffic.size(); ++i) {
    traffic[i].layout_bytes = traffic[i].layout_paged_bytes = 0;
    if (i >= reorders.size()) continue;
    for (const NchwcReorder& r : reorders[i]) {
      traffic[i].layout_bytes += r.bytes;
      if (NchwcReorderAliases(r)) traffic[i].layout_paged_bytes += r.bytes;
    }
  }
}

std::vector<double> ContextModel::ExtraMs(const std::vector<LayerTraffic>& traffic, const std::vector<double>& alone_ms,
                                          const std::vector<OpKind>& ops) const {
  std::vector<double> extra(traffic.size(), 0.0);
  if (traffic.empty()) return extra;
  const std::vector<double> lost2 = ExtraMissBytes(traffic, l2_bytes, memory);
  const std::vector<double> lost3 = ExtraMissBytes(traffic, l3_bytes, memory);
  Features coef{};
  for (std::size_t i = 0; i < kAloneSlots; ++i) coef[i] = class_shares ? (*class_shares)[i] : share;
  coef[kAloneSlots] = l2_ms_per_mib;
  coef[kAloneSlots + 1] = l3_ms_per_mib;
  coef[kAloneSlots + 2] = weightless_l2_ms_per_mib;
  coef[kAloneSlots + 3] = weightless_l3_ms_per_mib;
  coef[kLayoutSlot] = layout_ms_per_mib;
  coef[kPagedLayoutSlot] = layout_paged_ms_per_mib;
  coef[kLayerSlot] = layer_ms;
  for (std::size_t i = 0; i < traffic.size(); ++i) {
    const double alone = i < alone_ms.size() ? alone_ms[i] : 0;
    const OpKind op = i < ops.size() ? ops[i] : OpKind::kOpaque;
    extra[i] = LayerExtraMs(coef, LayerFeatures(traffic[i], alone, op, lost2[i], lost3[i]));
  }
  return extra;
}

nlohmann::json ContextModel::ToJson() const {
  nlohmann::json json = {{"layer_ms", layer_ms},
          {"l2_ms_per_mib", l2_ms_per_mib},
          {"l3_ms_per_mib", l3_ms_per_mib},
          {"l2_bytes", l2_bytes},
          {"l3_bytes", l3_bytes},
          {"weightless", {{"l2_ms_per_mib", weightless_l2_ms_per_mib}, {"l3_ms_per_mib", weightless_l3_ms_per_mib}}},
          {"memory", TensorMemoryName(memory)},
          {"objective", ContextObjectiveName(objective)},
          {"graphs", graphs},
          {"layers", layers},
          {"cv",
           {{"folds", folds},
            {"alone_rmspe_pct", cv_alone_rmspe_pct},
            {"rmspe_pct", cv_rmspe_pct},
            {"one_share_rmspe_pct", cv_one_share_rmspe_pct},
            {"class_shares_rmspe_pct", cv_class_shares_rmspe_pct}}}};
  if (layout_block > 0)
    json["layout"] = {{"nchwc_block", layout_block},
                      {"ms_per_mib", layout_ms_per_mib},
                      {"paged_ms_per_mib", layout_paged_ms_per_mib},
                      {"measured", layout_measured}};
  if (class_shares) {
    nlohmann::json& shares = json["class_shares"];
    for (std::size_t i = 0; i < kContextClasses; ++i) shares[ContextClassName(static_cast<ContextClass>(i))] = (*class_shares)[i];
  } else {
    json["share"] = share;
  }
  return json;
}

Expected<ContextModel> ContextModel::FromJson(const nlohmann::json& json) {
  ContextModel model;
  try {
    auto number = [](const nlohmann::json& from, const char* name) -> Expected<double> {
      Expected<double> value = JsonNonNegative(from, name);
      if (!value.ok()) return value.status().WithContext("context");
      return value;
    };
    // One share, or one per class of kernel (and then no "share": a reader that knows only one
    // refuses the pack rather than misreading it).
    if (json.contains("class_shares")) {
      const nlohmann::json& shares = json.at("class_shares");
      model.class_shares.emplace();
      for (std::size_t i = 0; i < kContextClasses; ++i) {
        Expected<double> value = JsonNonNegative(shares, ContextClassName(static_cast<ContextClass>(i)));
        if (!value.ok()) return value.status().WithContext("context: class_shares");
        (*model.class_shares)[i] = *value;
      }
    } else {
      LATTE_ASSIGN_OR_RETURN(model.share, number(json, "share"));
    }
    // Packs before the per-layer term do not say: none.
    if (json.contains("layer_ms")) {
      LATTE_ASSIGN_OR_RETURN(model.layer_ms, number(json, "layer_ms"));
    }
    LATTE_ASSIGN_OR_RETURN(model.l2_ms_per_mib, number(json, "l2_ms_per_mib"));
    LATTE_ASSIGN_OR_RETURN(model.l3_ms_per_mib, number(json, "l3_ms_per_mib"));
    // Packs before the split do not say: every layer had the coefficients above.
    model.weightless_l2_ms_per_mib = model.l2_ms_per_mib;
    model.weightless_l3_ms_per_mib = model.l3_ms_per_mib;
    if (json.contains("weightless")) {
      const nlohmann::json& weightless = json.at("weightless");
      auto field = [&](const char* name) -> Expected<double> {
        Expected<double> value = JsonNonNegative(weightless, name);
        if (!value.ok()) return value.status().WithContext("context: weightless");
        return value;
      };
      LATTE_ASSIGN_OR_RETURN(model.weightless_l2_ms_per_mib, field("l2_ms_per_mib"));
      LATTE_ASSIGN_OR_RETURN(model.weightless_l3_ms_per_mib, field("l3_ms_per_mib"));
    }
    // Packs before the layout term do not say: no layout changes counted.
    if (json.contains("layout")) {
      const nlohmann::json& layout = json.at("layout");
      LATTE_ASSIGN_OR_RETURN(const std::int64_t block, JsonInteger(layout.at("nchwc_block"), "context: layout nchwc_block", 8, 16));
      if (block != 8 && block != 16) return InvalidInput("context: layout nchwc_block is " + std::to_string(block) + ", not 8 or 16");
      model.layout_block = static_cast<int>(block);
      Expected<double> value = JsonNonNegative(layout, "ms_per_mib");
      if (!value.ok()) return value.status().WithContext("context: layout");
      model.layout_ms_per_mib = *value;
      // Packs before the split do not say: no reorder cost apart for whole-page planes.
      if (layout.contains("paged_ms_per_mib")) {
        Expected<double> paged = JsonNonNegative(layout, "paged_ms_per_mib");
        if (!paged.ok()) return paged.status().WithContext("context: layout");
        model.layout_paged_ms_per_mib = *paged;
      }
      if (layout.contains("measured")) {
        if (!layout.at("measured").is_boolean()) return InvalidInput("context: layout measured is not true or false");
        model.layout_measured = layout.at("measured").get<bool>();
      }
    }
    constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;
    LATTE_ASSIGN_OR_RETURN(model.l2_bytes, JsonInteger(json.at("l2_bytes"), "context: l2_bytes", 1, kMaxBytes));
    LATTE_ASSIGN_OR_RETURN(model.l3_bytes, JsonInteger(json.at("l3_bytes"), "context: l3_bytes", 1, kMaxBytes));
    // Packs before the arena simulation do not say: their tensors each had memory of their own,
    // the default.
    if (json.contains("memory")) {
      const nlohmann::json& memory = json.at("memory");
      if (memory == TensorMemoryName(TensorMemory::kArena)) {
        model.memory = TensorMemory::kArena;
      } else if (memory != TensorMemoryName(TensorMemory::kOwnBuffers)) {
        return InvalidInput("context: memory is " + memory.dump() + ", not \"arena\" or \"own-buffers\"");
      }
    }
    // Packs before the choice do not say: their coefficients minimised each layer's error.
    if (json.contains("objective")) {
      const nlohmann::json& objective = json.at("objective");
      if (objective == ContextObjectiveName(ContextObjective::kNetworks)) {
        model.objective = ContextObjective::kNetworks;
      } else if (objective != ContextObjectiveName(ContextObjective::kLayers)) {
        return InvalidInput("context: objective is " + objective.dump() + ", not \"layers\" or \"networks\"");
      }
    }
    for (auto [name, count] : {std::pair{"graphs", &model.graphs}, std::pair{"layers", &model.layers}}) {
      Expected<std::size_t> read = JsonCount(json, name);
      if (!read.ok()) return read.status().WithContext("context");
      *count = *read;
    }
    const nlohmann::json& cv = json.at("cv");
    LATTE_ASSIGN_OR_RETURN(const std::int64_t folds, JsonInteger(cv.at("folds"), "context: cv folds", 0, 1 << 20));
    model.folds = static_cast<int>(folds);
    LATTE_ASSIGN_OR_RETURN(model.cv_alone_rmspe_pct, number(cv, "alone_rmspe_pct"));
    LATTE_ASSIGN_OR_RETURN(model.cv_rmspe_pct, number(cv, "rmspe_pct"));
    // Packs before the choice was recorded do not say.
    if (cv.contains("one_share_rmspe_pct") || cv.contains("class_shares_rmspe_pct")) {
      LATTE_ASSIGN_OR_RETURN(model.cv_one_share_rmspe_pct, number(cv, "one_share_rmspe_pct"));
      LATTE_ASSIGN_OR_RETURN(model.cv_class_shares_rmspe_pct, number(cv, "class_shares_rmspe_pct"));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput("context: " + JsonErrorText(e));
  }
  return model;
}

namespace {

// The layout changes' rates as the networks' profiles timed them: each network's reorder time
// against the MiB it reorders and those of them on whole pages, least squares weighted by the
// network's time (an error in a network's layout time counts as that share of its whole), the
// rates non-negative. Reorders of whole-page channel planes alias in the L1 and run at several
// times the rate of the others (ONNX Runtime 1.29: about 0.13 ms a MiB against 0.03), so one
// rate for both overprices most and underprices those. Nothing when a network that reorders did
// not record its time, or none reorders.
std::optional<LayoutRates> MeasuredLayoutRates(const std::vector<MeasuredNetwork>& networks) {
  double uu = 0, uv = 0, vv = 0, uy = 0, vy = 0;
  for (const MeasuredNetwork& network : networks) {
    double mib = 0, paged_mib = 0, total_ms = 0;
    for (const LayerTraffic& t : network.traffic) {
      mib += static_cast<double>(t.layout_bytes) / kMiB;
      paged_mib += static_cast<double>(t.layout_paged_bytes) / kMiB;
    }
    if (mib <= 0) continue;
    if (!std::isfinite(network.layout_ms)) return std::nullopt;
    for (double ms : network.in_graph_ms) total_ms += ms;
    const double w = 1 / std::pow(std::max(total_ms, kWeightFloorMs), 2);
    uu += w * mib * mib;
    uv += w * mib * paged_mib;
    vv += w * paged_mib * paged_mib;
    uy += w * mib * network.layout_ms;
    vy += w * paged_mib * network.layout_ms;
  }
  if (uu <= 0) return std::nullopt;  // no network reorders
  // Both rates where the solution is non-negative, else the plain rate alone (every paged MiB is
  // a MiB too, so the plain rate alone is always defined).
  const double det = uu * vv - uv * uv;
  if (det > 1e-12 * uu * vv) {
    const LayoutRates both{(uy * vv - vy * uv) / det, (vy * uu - uy * uv) / det};
    if (both.ms_per_mib >= 0 && both.paged_ms_per_mib >= 0) return both;
  }
  return LayoutRates{std::max(0.0, uy / uu), 0};
}

}  // namespace

Expected<ContextModel> FitContextModel(const std::vector<MeasuredNetwork>& networks, const ContextCaches& caches,
                                       const std::vector<TensorMemory>& memories, int layout_block) {
  if (caches.l2_bytes <= 0 || caches.l3_bytes <= 0) {
    return InvalidInput("the graph-context measurements do not say the machine's L2 and L3 sizes");
  }
  if (memories.empty()) return InvalidInput("no memory to simulate the activations in");
  if (networks.size() < kMinContextNetworks) {
    return InvalidInput(fmt::format("{} networks measured in context; at least {} are needed", networks.size(), kMinContextNetworks));
  }
  const std::size_t folds = std::min(kMaxFolds, networks.size());
  // The layout changes' cost, measured: every network that reorders recorded its time. Whether
  // to take it or to fit the cost with the rest is the held-out networks' choice; where they
  // cannot tell the two apart, the measured rates are kept (tried first).
  std::vector<std::optional<LayoutRates>> layouts;
  if (layout_block > 0)
    if (std::optional<LayoutRates> measured = MeasuredLayoutRates(networks)) layouts.push_back(measured);
  layouts.push_back(std::nullopt);  // fitted with the rest
  // Choose the memory, the L3 size and what is minimised by the held-out networks' error, for one
  // share and for shares per class apart.
  struct Choice {
    double rmspe = 0;
    std::vector<double> errors;  // each held-out network's, in network order
    std::int64_t l3 = 0;
    TensorMemory memory = TensorMemory::kArena;
    ContextObjective objective = ContextObjective::kLayers;
    std::optional<LayoutRates> fixed_layout;
    std::vector<std::vector<Row>> rows, fitted;
  };
  std::array<Choice, 2> best;  // [0]: one share, [1]: per class
  for (TensorMemory memory : memories) {
    std::vector<std::vector<double>> lost2;
    for (const MeasuredNetwork& network : networks) lost2.push_back(ExtraMissBytes(network.traffic, caches.l2_bytes, memory));
    for (double l3_share : kL3Shares) {
      const auto l3 = static_cast<std::int64_t>(l3_share * static_cast<double>(caches.l3_bytes));
      if (l3 <= caches.l2_bytes) continue;
      std::vector<std::vector<Row>> rows = Rows(networks, lost2, l3, memory);
      for (ContextObjective objective : {ContextObjective::kLayers, ContextObjective::kNetworks}) {
        for (int per_class = 0; per_class < 2; ++per_class) {
          std::vector<std::vector<Row>> fitted = objective == ContextObjective::kNetworks ? PerNetwork(rows) : rows;
          if (per_class == 0) fitted = OneShare(std::move(fitted));
          for (const std::optional<LayoutRates>& fixed_layout : layouts) {
            std::vector<double> errors(networks.size());
            for (std::size_t fold = 0; fold < folds; ++fold) {
              std::vector<bool> train(networks.size());
              for (std::size_t g = 0; g < networks.size(); ++g) train[g] = g % folds != fold;
              Features coef = FitNonNegative(fitted, train, fixed_layout);
              if (per_class == 0) coef = Spread(coef);
              for (std::size_t g = 0; g < networks.size(); ++g)
                if (!train[g]) errors[g] = NetworkError(rows[g], &coef);
            }
            const double rmspe = Rms(errors);
            Choice& choice = best[static_cast<std::size_t>(per_class)];
            if (choice.l3 == 0 || rmspe < choice.rmspe)
              choice = {rmspe, std::move(errors), l3, memory, objective, fixed_layout, rows, fitted};
          }
        }
      }
    }
  }
  if (best[0].l3 == 0) return InvalidInput("the machine's L3 is not larger than its L2: no L3 size to simulate");
  const bool per_class = best[1].rmspe < best[0].rmspe - kClassSharesMinGainPct &&
                         PairedGainZ(best[0].errors, best[1].errors) > kClassSharesMinZ;
  const Choice& chosen = best[per_class ? 1 : 0];
  Features coef = FitNonNegative(chosen.fitted, std::vector<bool>(networks.size(), true), chosen.fixed_layout);
  if (!per_class) coef = Spread(coef);
  ContextModel model = WithCoefficients(coef, per_class, caches.l2_bytes, chosen.l3, chosen.memory);
  model.objective = chosen.objective;
  model.layout_block = layout_block;
  model.layout_measured = chosen.fixed_layout.has_value();
  model.graphs = networks.size();
  for (const MeasuredNetwork& network : networks) model.layers += network.kernels.size();
  model.folds = static_cast<int>(folds);
  std::vector<double> alone;
  for (const std::vector<Row>& rows : chosen.rows) alone.push_back(NetworkError(rows, nullptr));
  model.cv_alone_rmspe_pct = Rms(alone);
  model.cv_rmspe_pct = chosen.rmspe;
  model.cv_one_share_rmspe_pct = best[0].rmspe;
  model.cv_class_shares_rmspe_pct = best[1].rmspe;
  return model;
}

}  // namespace latte
