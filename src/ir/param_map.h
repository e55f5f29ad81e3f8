#pragma once
// A kernel's integer parameters by name, kept sorted by name in one vector: what a std::map gave
// (sorted iteration, hence stable keys; find, count, operator[]), without a heap node per
// parameter. A kernel has 4 to 20 of them and is built, copied and read for every layer of every
// model predicted; with a map, building and describing them was a fifth of a prediction.
//
// Unlike a std::map, adding a key moves the others: a reference or iterator into a ParamMap is
// good only until the next key is added.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace latte {

class ParamMap {
 public:
  using value_type = std::pair<std::string, std::int64_t>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  ParamMap() = default;
  /// As a std::map is built from them: a repeated key keeps its first value.
  ParamMap(std::initializer_list<value_type> values) {
    entries_.reserve(values.size());
    for (const value_type& v : values) insert(v);
  }
  ParamMap(const std::map<std::string, std::int64_t>& values) : entries_(values.begin(), values.end()) {}  // NOLINT: a map is a ParamMap

  /// The value of `key`, added as 0 when absent.
  std::int64_t& operator[](std::string_view key) {
    auto it = LowerBound(key);
    if (it == entries_.end() || it->first != key) it = entries_.emplace(it, std::string(key), 0);
    return it->second;
  }
  /// Adds `value` unless its key is present; says where the key is and whether it was added.
  std::pair<iterator, bool> insert(const value_type& value) {
    auto it = LowerBound(value.first);
    if (it != entries_.end() && it->first == value.first) return {it, false};
    return {entries_.insert(it, value), true};
  }
  std::size_t erase(std::string_view key) {
    auto it = find(key);
    if (it == entries_.end()) return 0;
    entries_.erase(it);
    return 1;
  }

  iterator find(std::string_view key) {
    auto it = LowerBound(key);
    return it != entries_.end() && it->first == key ? it : entries_.end();
  }
  const_iterator find(std::string_view key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const value_type& e, std::string_view k) { return std::string_view(e.first) < k; });
    return it != entries_.end() && it->first == key ? it : entries_.end();
  }
  std::size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  bool contains(std::string_view key) const { return find(key) != end(); }

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }
  void reserve(std::size_t n) { entries_.reserve(n); }

  friend bool operator==(const ParamMap& a, const ParamMap& b) { return a.entries_ == b.entries_; }

 private:
  iterator LowerBound(std::string_view key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const value_type& e, std::string_view k) { return std::string_view(e.first) < k; });
  }
  std::vector<value_type> entries_;  // sorted by name, names unique
};

}  // namespace latte
