#pragma once
// A document builder: what a view needs to write its JSON content (objects, arrays, text, numbers)
// without saying into what. A view that writes through one (PredictView::Build) has one
// description of its content; JsonDocument makes nlohmann::json of it for the CLI, and the Python
// module's builder makes dicts and lists directly, so the two cannot differ and Python does not
// pay for a JSON document it would only convert.
//
// A builder has a `Value` type (owning, movable) and these members:
//   Value Object();                         Value Array(std::size_t expected_size);
//   void Set(Value& object, std::string_view key, Value value);
//   void Push(Value& array, Value value);
//   Value Text(std::string_view);           Value Number(double);   (not finite: JSON's null)
//   Value Integer(std::int64_t);            Value Boolean(bool);    Value Null();
//   Value FromJson(const nlohmann::json&);  (a part some other code already has as JSON)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace latte {

/// The builder that makes nlohmann::json (by assignment and moves: nested initializer lists copy
/// every value they hold).
class JsonDocument {
 public:
  using Value = nlohmann::json;
  Value Object() { return nlohmann::json::object(); }
  Value Array(std::size_t expected_size) {
    Value array = nlohmann::json::array();
    array.get_ref<nlohmann::json::array_t&>().reserve(expected_size);
    return array;
  }
  void Set(Value& object, std::string_view key, Value value) { object[std::string(key)] = std::move(value); }
  void Push(Value& array, Value value) { array.push_back(std::move(value)); }
  Value Text(std::string_view text) { return std::string(text); }
  Value Number(double value) { return value; }
  Value Integer(std::int64_t value) { return value; }
  Value Boolean(bool value) { return value; }
  Value Null() { return nullptr; }
  Value FromJson(const nlohmann::json& json) { return json; }
};

/// `texts` as an array of text.
template <class Doc>
typename Doc::Value TextArray(Doc& doc, const std::vector<std::string>& texts) {
  typename Doc::Value array = doc.Array(texts.size());
  for (const std::string& text : texts) doc.Push(array, doc.Text(text));
  return array;
}

}  // namespace latte
