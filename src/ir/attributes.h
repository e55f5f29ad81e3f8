#pragma once
// Typed node attributes (strides, padding, fused activation, ...). The names each op kind
// uses are listed in op_kinds.def.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace latte {

using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

/// A name → value map with typed getters. Getters with a default return it when the
/// attribute is absent or of another type.
class Attributes {
 public:
  void Set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  void Erase(const std::string& name) { values_.erase(name); }

  std::int64_t GetInt(const std::string& name, std::int64_t fallback) const {
    if (auto* v = Find<std::int64_t>(name)) return *v;
    return fallback;
  }
  double GetFloat(const std::string& name, double fallback) const {
    if (auto* v = Find<double>(name)) return *v;
    if (auto* v = Find<std::int64_t>(name)) return static_cast<double>(*v);
    return fallback;
  }
  std::string GetString(const std::string& name, const std::string& fallback) const {
    if (auto* v = Find<std::string>(name)) return *v;
    return fallback;
  }
  std::optional<std::vector<std::int64_t>> GetInts(const std::string& name) const {
    if (auto* v = Find<std::vector<std::int64_t>>(name)) return *v;
    return std::nullopt;
  }
  std::optional<std::vector<double>> GetFloats(const std::string& name) const {
    if (auto* v = Find<std::vector<double>>(name)) return *v;
    if (auto* v = Find<std::vector<std::int64_t>>(name)) return std::vector<double>(v->begin(), v->end());
    return std::nullopt;
  }

  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool operator==(const Attributes& other) const = default;

 private:
  template <typename T>
  const T* Find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : std::get_if<T>(&it->second);
  }
  std::map<std::string, AttrValue> values_;
};

}  // namespace latte
