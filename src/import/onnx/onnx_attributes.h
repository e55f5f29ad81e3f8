#pragma once
// Typed access to an ONNX node's attributes. A present attribute of the wrong type is bad
// input (an error naming the attribute); an absent one gives the caller's fallback.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace latte::onnx_import {

class NodeAttributes {
 public:
  explicit NodeAttributes(const onnx::NodeProto& node) : node_(node) {}

  /// The attribute named `name`, or null.
  const onnx::AttributeProto* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  Expected<std::int64_t> Int(std::string_view name, std::int64_t fallback) const;
  /// FLOAT (an INT is accepted too: some exporters write whole numbers that way).
  Expected<double> Float(std::string_view name, double fallback) const;
  Expected<std::string> String(std::string_view name, const std::string& fallback) const;
  /// INTS (or a single INT); nullopt when absent.
  Expected<std::optional<std::vector<std::int64_t>>> Ints(std::string_view name) const;
  /// FLOATS (or INTS); nullopt when absent.
  Expected<std::optional<std::vector<double>>> Floats(std::string_view name) const;
  /// TENSOR; null when absent.
  Expected<const onnx::TensorProto*> Tensor(std::string_view name) const;

  /// The attribute's type, worked out from the fields set when the file leaves it undefined.
  static onnx::AttributeProto::AttributeType TypeOf(const onnx::AttributeProto& attr);

 private:
  Status WrongType(const onnx::AttributeProto& attr, const char* expected) const;
  const onnx::NodeProto& node_;
};

}  // namespace latte::onnx_import
