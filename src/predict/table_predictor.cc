#include <algorithm>
#include <cmath>

#include "predict/predictors.h"

namespace latte {

std::string TableKey(const Kernel& kernel, int threads) { return kernel.Key() + "#" + std::to_string(threads); }

Status TablePredictor::Fit(std::span<const TrainingSample> samples) {
  if (samples.empty()) return InvalidInput("table: no samples to fit");
  std::map<std::string, std::vector<const TrainingSample*>> groups;
  for (const TrainingSample& s : samples) groups[TableKey(s.kernel, s.threads)].push_back(&s);
  entries_.clear();
  for (auto& [key, group] : groups) {
    // The median measurement (lower middle for an even count, so the value is one that was measured).
    std::sort(group.begin(), group.end(), [](auto* a, auto* b) { return a->p50_ms < b->p50_ms; });
    const TrainingSample* mid = group[(group.size() - 1) / 2];
    entries_[key] = Entry{mid->p50_ms, mid->spread_ms};
  }
  return Status::Ok();
}

Expected<Prediction> TablePredictor::Predict(const Kernel& kernel, int threads) const {
  auto it = entries_.find(TableKey(kernel, threads));
  if (it == entries_.end()) return NotFound("kernel " + kernel.Key() + " was not measured");
  return Prediction{it->second.ms, it->second.spread_ms, PredictionSource::kTableHit, false};
}

std::vector<std::string> TablePredictor::SortedKeys() const {
  std::vector<std::string> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<TrainingSample> TablePredictor::Entries() const {
  std::vector<TrainingSample> out;
  for (const std::string& key : SortedKeys()) {
    const Entry& entry = entries_.at(key);
    const std::size_t hash = key.rfind('#');
    if (hash == std::string::npos) continue;
    Expected<Kernel> kernel = ParseKernelKey(std::string_view(key).substr(0, hash));
    if (!kernel.ok()) continue;  // a key a pack from elsewhere wrote: it can be hit, not listed
    int threads = 0;
    const std::string digits = key.substr(hash + 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    threads = std::stoi(digits);
    out.push_back({std::move(*kernel), threads, entry.ms, entry.spread_ms});
  }
  return out;
}

nlohmann::json TablePredictor::ToJson() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const std::string& key : SortedKeys()) {
    const Entry& entry = entries_.at(key);
    entries.push_back({key, entry.ms, entry.spread_ms});
  }
  return {{"entries", entries}};
}

Status TablePredictor::FromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("entries") || !json["entries"].is_array())
    return InvalidInput("table: missing array 'entries'");
  entries_.clear();
  for (const nlohmann::json& e : json["entries"]) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_number() || !e[2].is_number())
      return InvalidInput("table: an entry is not [key, ms, spread_ms]");
    const double ms = e[1].get<double>(), spread_ms = e[2].get<double>();
    if (!(ms > 0) || !std::isfinite(ms) || !(spread_ms >= 0) || !std::isfinite(spread_ms))
      return InvalidInput("table: entry '" + e[0].get<std::string>() + "': ms must be > 0 and spread_ms ≥ 0 (finite)");
    entries_[e[0].get<std::string>()] = Entry{ms, spread_ms};
  }
  return Status::Ok();
}

}  // namespace latte
