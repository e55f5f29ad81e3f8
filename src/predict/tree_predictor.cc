#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "predict/predictors.h"

namespace latte {
namespace {

// Owners of XGBoost handles, freed on every path.
struct DMatrixDeleter {
  void operator()(void* h) const { XGDMatrixFree(h); }
};
struct BoosterDeleter {
  void operator()(void* h) const { XGBoosterFree(h); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixDeleter>;
using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

Status XgbError(const char* what) { return Internal(std::string("xgboost: ") + what + ": " + XGBGetLastError()); }

Expected<DMatrixPtr> MakeMatrix(const FeatureSchema& schema, std::span<const TrainingSample> samples) {
  std::vector<float> data;
  data.reserve(samples.size() * schema.Size());
  std::vector<float> row;
  for (const TrainingSample& s : samples) {
    ComputeFeatures(schema, s.kernel, s.threads, row);
    data.insert(data.end(), row.begin(), row.end());
  }
  DMatrixHandle handle = nullptr;
  if (XGDMatrixCreateFromMat(data.data(), samples.size(), schema.Size(), NAN, &handle) != 0)
    return XgbError("creating the feature matrix");
  return DMatrixPtr(handle);
}

std::string Num(double v) { return std::to_string(v); }

}  // namespace

Status TreePredictor::Fit(std::span<const TrainingSample> samples) {
  if (samples.empty()) return InvalidInput(std::string(Name()) + ": no samples to fit");
  per_work_ = true;
  channel_tile_ = options_.channel_tile;
  std::vector<const Kernel*> kernels;
  std::vector<float> labels;
  double mean = 0;
  for (const TrainingSample& s : samples) {
    if (!(s.p50_ms > 0)) return InvalidInput(std::string(Name()) + ": sample " + s.kernel.Key() + " has latency <= 0");
    kernels.push_back(&s.kernel);
    labels.push_back(static_cast<float>(std::log(s.p50_ms) - std::log(WorkScaleMs(s.kernel, channel_tile_))));
    mean += labels.back();
  }
  mean /= static_cast<double>(labels.size());
  schema_ = FeatureSchema::FromKernels(kernels);
  LATTE_ASSIGN_OR_RETURN(DMatrixPtr matrix, MakeMatrix(schema_, samples));
  if (XGDMatrixSetFloatInfo(matrix.get(), "label", labels.data(), labels.size()) != 0) return XgbError("setting labels");
  DMatrixHandle train[] = {matrix.get()};
  BoosterHandle raw = nullptr;
  if (XGBoosterCreate(train, 1, &raw) != 0) return XgbError("creating the booster");
  BoosterPtr booster(raw);
  std::vector<std::pair<std::string, std::string>> params = {
      {"objective", "reg:squarederror"}, {"tree_method", "hist"}, {"seed", std::to_string(options_.seed)},
      {"base_score", Num(mean)},         {"verbosity", "0"}};
  if (options_.xgboost_threads > 0) params.push_back({"nthread", std::to_string(options_.xgboost_threads)});
  const bool boosted = mode_ == Mode::kBoosted;
  const TreeEnsembleOptions& e = boosted ? options_.gbdt : options_.forest;
  params.insert(params.end(), {{"max_depth", std::to_string(e.max_depth)},
                               {"eta", Num(e.eta)},
                               {"subsample", Num(e.subsample)},
                               {"min_child_weight", Num(e.min_child_weight)}});
  if (boosted) {
    params.push_back({"colsample_bytree", Num(e.colsample)});
  } else {  // a forest: leaves not shrunk toward 0 (lambda 0), features drawn per split
    params.insert(params.end(), {{"num_parallel_tree", std::to_string(e.trees)},
                                 {"lambda", "0"},
                                 {"colsample_bynode", Num(e.colsample)}});
  }
  const int rounds = boosted ? e.trees : 1;
  for (const auto& [name, value] : params)
    if (XGBoosterSetParam(booster.get(), name.c_str(), value.c_str()) != 0) return XgbError(("setting " + name).c_str());
  for (int i = 0; i < rounds; ++i)
    if (XGBoosterUpdateOneIter(booster.get(), i, matrix.get()) != 0) return XgbError("training");
  bst_ulong length = 0;
  const char* buffer = nullptr;
  if (XGBoosterSaveModelToBuffer(booster.get(), "{\"format\": \"json\"}", &length, &buffer) != 0)
    return XgbError("saving the model");
  model_text_.assign(buffer, length);
  return ParseModel();
}

Status TreePredictor::ParseModel() {
  trees_.clear();
  flat_.clear(), roots_.clear(), depth_.clear();
  try {
    nlohmann::json model = nlohmann::json::parse(model_text_);
    const nlohmann::json& learner = model.at("learner");
    base_score_ = std::stod(learner.at("learner_model_param").at("base_score").get<std::string>());
    for (const nlohmann::json& tree : learner.at("gradient_booster").at("model").at("trees")) {
      LATTE_RETURN_IF_ERROR(AddTree(tree.at("left_children").get<std::vector<std::int32_t>>(),
                                    tree.at("right_children").get<std::vector<std::int32_t>>(),
                                    tree.at("split_indices").get<std::vector<std::uint32_t>>(),
                                    tree.at("split_conditions").get<std::vector<float>>()));
    }
  } catch (const std::exception& e) {
    return InvalidInput(std::string(Name()) + ": XGBoost model: " + JsonErrorText(e));
  }
  if (trees_.empty()) return InvalidInput(std::string(Name()) + ": XGBoost model has no trees");
  return Status::Ok();
}

Status TreePredictor::AddTree(const std::vector<std::int32_t>& left, const std::vector<std::int32_t>& right,
                              const std::vector<std::uint32_t>& feature, const std::vector<float>& value) {
  const std::size_t n = left.size();
  if (right.size() != n || feature.size() != n || value.size() != n || n == 0)
    return InvalidInput(std::string(Name()) + ": a tree's node arrays differ in size");
  std::vector<Node> nodes(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool leaf = left[i] < 0;
    // Children come after their parent: a walk always ends, whatever the file says.
    if (!leaf && (left[i] >= static_cast<std::int32_t>(n) || right[i] < 0 || right[i] >= static_cast<std::int32_t>(n) ||
                  left[i] <= static_cast<std::int32_t>(i) || right[i] <= static_cast<std::int32_t>(i) ||
                  feature[i] >= schema_.Size()))
      return InvalidInput(std::string(Name()) + ": a tree node points outside its tree or features");
    nodes[i] = Node{leaf ? -1 : left[i], leaf ? -1 : right[i], leaf ? 0 : feature[i], value[i]};
  }
  LATTE_RETURN_IF_ERROR(AppendFlat(nodes));
  trees_.push_back(std::move(nodes));
  return Status::Ok();
}

Status TreePredictor::AppendFlat(const std::vector<Node>& tree) {
  const auto base = static_cast<std::uint32_t>(flat_.size());
  if (schema_.Size() >= std::numeric_limits<std::uint16_t>::max())
    return InvalidInput(std::string(Name()) + ": " + std::to_string(schema_.Size()) + " features are too many to walk");
  const auto zero_feature = static_cast<std::uint16_t>(schema_.Size());  // PredictLog appends a 0 there
  std::vector<std::uint32_t> new_index(tree.size(), 0);
  std::vector<bool> seen(tree.size(), false);
  std::vector<std::uint32_t> depth(tree.size(), 0);
  std::vector<std::size_t> order{0};  // breadth first, old indices
  seen[0] = true;
  std::vector<FlatNode> out(1);
  std::uint32_t deepest = 0;
  for (std::size_t q = 0; q < order.size(); ++q) {
    const std::size_t old = order[q];
    const Node& node = tree[old];
    const std::uint32_t at = new_index[old];
    if (node.left < 0) {
      // The walk compares 0 < value here and adds 1 when that fails: step back by the same.
      out[at] = FlatNode{node.value, zero_feature, static_cast<std::int16_t>(0.0f < node.value ? 0 : -1)};
      deepest = std::max(deepest, depth[old]);
      continue;
    }
    for (std::int32_t child : {node.left, node.right}) {
      // A node with two parents would be copied once per path (exponentially many for a hostile file).
      if (seen[static_cast<std::size_t>(child)])
        return InvalidInput(std::string(Name()) + ": a tree node has two parents");
      seen[static_cast<std::size_t>(child)] = true;
      new_index[static_cast<std::size_t>(child)] = static_cast<std::uint32_t>(out.size());
      depth[static_cast<std::size_t>(child)] = depth[old] + 1;
      out.emplace_back();
      order.push_back(static_cast<std::size_t>(child));
    }
    const std::uint32_t step = new_index[static_cast<std::size_t>(node.left)] - at;
    if (step > static_cast<std::uint32_t>(std::numeric_limits<std::int16_t>::max()))
      return InvalidInput(std::string(Name()) + ": a tree of " + std::to_string(tree.size()) +
                          " nodes is too wide to walk (a split's children must be within 32,767 nodes of it)");
    out[at] = FlatNode{node.value, static_cast<std::uint16_t>(node.feature), static_cast<std::int16_t>(step)};
  }
  roots_.push_back(base);
  depth_.push_back(deepest);
  flat_.insert(flat_.end(), out.begin(), out.end());
  return Status::Ok();
}

double TreePredictor::PredictLog(const std::vector<float>& features, double* tree_sd) const {
  thread_local std::vector<float> x;
  x.assign(features.begin(), features.end());
  x.resize(schema_.Size() + 1, 0.0f);  // the always-0 feature the leaves read
  double sum = 0, sum_sq = 0;
  constexpr std::size_t kLanes = 8;
  const FlatNode* nodes = flat_.data();
  for (std::size_t first = 0; first < roots_.size(); first += kLanes) {
    const std::size_t lanes = std::min(kLanes, roots_.size() - first);
    std::uint32_t at[kLanes] = {};
    std::uint32_t steps = 0;
    for (std::size_t l = 0; l < lanes; ++l) at[l] = roots_[first + l], steps = std::max(steps, depth_[first + l]);
    for (std::uint32_t level = 0; level < steps; ++level)
      for (std::size_t l = 0; l < lanes; ++l) {
        const FlatNode& n = nodes[at[l]];
        at[l] = static_cast<std::uint32_t>(static_cast<std::int64_t>(at[l]) + n.step + !(x[n.feature] < n.value));
      }
    for (std::size_t l = 0; l < lanes; ++l) {  // in tree order: the same sum as one tree at a time
      const double leaf = nodes[at[l]].value;
      sum += leaf;
      sum_sq += leaf * leaf;
    }
  }
  if (tree_sd != nullptr) {
    // XGBoost's forest mode divides each tree's leaves by the number of trees, so tree k alone
    // predicts base + T * leaf_k; their spread is T times the spread of the leaves.
    double t = static_cast<double>(trees_.size());
    double var = sum_sq / t - (sum / t) * (sum / t);
    *tree_sd = t * std::sqrt(std::max(0.0, var));
  }
  return base_score_ + sum;
}

Expected<Prediction> TreePredictor::Predict(const Kernel& kernel, int threads) const {
  if (trees_.empty()) return Internal(std::string(Name()) + ": predictor used before Fit");
  thread_local std::vector<float> features;
  double channels = 0;  // read once, for the lane tails and the channel tile alike
  const KernelCost cost = ComputeFeatures(schema_, kernel, threads, features, channel_tile_ > 1 ? &channels : nullptr);
  Prediction prediction;
  prediction.source = mode_ == Mode::kBoosted ? PredictionSource::kTrees : PredictionSource::kForest;
  double tree_sd = 0;
  prediction.ms = std::exp(PredictLog(features, mode_ == Mode::kForest ? &tree_sd : nullptr)) *
                  (per_work_ ? WorkScaleMs(cost, ChannelTileFactor(kernel.op, channels, channel_tile_)) : 1.0);
  prediction.spread_ms = prediction.ms * (mode_ == Mode::kForest ? tree_sd : relative_spread_);
  return prediction;
}

Expected<std::vector<float>> TreePredictor::PredictWithXgboost(std::span<const TrainingSample> samples) const {
  BoosterHandle raw = nullptr;
  if (model_text_.empty()) return Internal(std::string(Name()) + ": XGBoost's model is kept only after Fit");
  if (XGBoosterCreate(nullptr, 0, &raw) != 0) return XgbError("creating a booster");
  BoosterPtr booster(raw);
  if (XGBoosterLoadModelFromBuffer(booster.get(), model_text_.data(), model_text_.size()) != 0)
    return XgbError("loading the model");
  LATTE_ASSIGN_OR_RETURN(DMatrixPtr matrix, MakeMatrix(schema_, samples));
  bst_ulong length = 0;
  const float* result = nullptr;
  if (XGBoosterPredict(booster.get(), matrix.get(), 0, 0, 0, &length, &result) != 0) return XgbError("predicting");
  return std::vector<float>(result, result + length);
}

nlohmann::json TreePredictor::ToJson() const {
  // The trees as four arrays each (what the walk needs), not XGBoost's own JSON model, which
  // holds a dozen arrays per tree and made a calibrated pack ~50 MB. Values are written as the
  // shortest text that reads back as the same float.
  nlohmann::json trees = nlohmann::json::array();
  for (const std::vector<Node>& tree : trees_) {
    nlohmann::json left = nlohmann::json::array(), right = nlohmann::json::array(), feature = nlohmann::json::array(),
                   value = nlohmann::json::array();
    for (const Node& node : tree) {
      left.push_back(node.left);
      right.push_back(node.right);
      feature.push_back(node.feature);
      value.push_back(std::strtod(fmt::format("{}", node.value).c_str(), nullptr));
    }
    trees.push_back({{"left", std::move(left)}, {"right", std::move(right)}, {"feature", std::move(feature)},
                     {"value", std::move(value)}});
  }
  return {{"params", schema_.param_names}, {"feature_version", schema_.version},
          {"relative_spread", relative_spread_}, {"base_score", base_score_},
          {"target", per_work_ ? "log_ms_per_work" : "log_ms"}, {"channel_tile", channel_tile_},
          {"trees", std::move(trees)}};
}

Status TreePredictor::FromJson(const nlohmann::json& json) {
  auto WithName = [this]<typename T>(Expected<T> value) -> Expected<T> {
    if (!value.ok()) return value.status().WithContext(std::string(Name()));
    return value;
  };
  model_text_.clear();  // a loaded predictor walks its trees; XGBoost's model stays with the fit
  trees_.clear();
  flat_.clear(), roots_.clear(), depth_.clear();
  try {
    schema_.param_names = json.at("params").get<std::vector<std::string>>();
    // Ensembles written before they recorded it were fitted on version 1.
    schema_.version = 1;
    if (json.contains("feature_version")) {
      LATTE_ASSIGN_OR_RETURN(const std::int64_t version,
                             WithName(JsonInteger(json.at("feature_version"), "feature_version", 1, kFeatureVersion)));
      schema_.version = static_cast<int>(version);
    }
    LATTE_ASSIGN_OR_RETURN(relative_spread_, WithName(JsonNonNegative(json, "relative_spread")));
    LATTE_ASSIGN_OR_RETURN(base_score_, WithName(JsonNumber(json, "base_score")));
    // Packs written before the target was recorded predict log(ms).
    const std::string target = json.value("target", std::string("log_ms"));
    if (target != "log_ms" && target != "log_ms_per_work")
      return InvalidInput(std::string(Name()) + ": unknown target '" + target + "' (log_ms or log_ms_per_work)");
    per_work_ = target == "log_ms_per_work";
    LATTE_ASSIGN_OR_RETURN(channel_tile_, WithName(JsonChannelTile(json)));
    for (const nlohmann::json& tree : json.at("trees")) {
      // Read strictly: a float where an index belongs, or a value beyond a float, is refused here
      // (converting it would be undefined behaviour), and AddTree checks what the indices point at.
      LATTE_ASSIGN_OR_RETURN(const std::vector<float> value, WithName(JsonFloats(tree.at("value"), "a tree's values")));
      constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();
      LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> left,
                             WithName(JsonIntegers(tree.at("left"), "a tree's left children", -1, kMaxIndex)));
      LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> right,
                             WithName(JsonIntegers(tree.at("right"), "a tree's right children", -1, kMaxIndex)));
      LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> feature,
                             WithName(JsonIntegers(tree.at("feature"), "a tree's features", 0, kMaxIndex)));
      LATTE_RETURN_IF_ERROR(AddTree(std::vector<std::int32_t>(left.begin(), left.end()),
                                    std::vector<std::int32_t>(right.begin(), right.end()),
                                    std::vector<std::uint32_t>(feature.begin(), feature.end()), value));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput(std::string(Name()) + ": " + JsonErrorText(e));
  }
  if (trees_.empty()) return InvalidInput(std::string(Name()) + ": no trees");
  return Status::Ok();
}

}  // namespace latte
