#include "import/onnx/onnx_attributes.h"

namespace latte::onnx_import {

using A = onnx::AttributeProto;

const onnx::AttributeProto* NodeAttributes::Find(std::string_view name) const {
  for (const auto& attr : node_.attribute())
    if (attr.name() == name) return &attr;
  return nullptr;
}

onnx::AttributeProto::AttributeType NodeAttributes::TypeOf(const onnx::AttributeProto& attr) {
  if (attr.type() != A::UNDEFINED) return attr.type();
  // Files from before the type field existed say it only through the field they fill.
  if (attr.has_f()) return A::FLOAT;
  if (attr.has_i()) return A::INT;
  if (attr.has_s()) return A::STRING;
  if (attr.has_t()) return A::TENSOR;
  if (attr.has_g()) return A::GRAPH;
  if (attr.floats_size() > 0) return A::FLOATS;
  if (attr.ints_size() > 0) return A::INTS;
  if (attr.strings_size() > 0) return A::STRINGS;
  if (attr.tensors_size() > 0) return A::TENSORS;
  if (attr.graphs_size() > 0) return A::GRAPHS;
  return A::UNDEFINED;
}

Status NodeAttributes::WrongType(const onnx::AttributeProto& attr, const char* expected) const {
  const auto type = TypeOf(attr);
  const std::string have = onnx::AttributeProto_AttributeType_IsValid(type) ? onnx::AttributeProto_AttributeType_Name(type)
                                                                           : "type " + std::to_string(type);
  return InvalidInput("attribute '" + attr.name() + "' is " + (have.empty() ? "UNDEFINED" : have) + ", expected " + expected);
}

Expected<std::int64_t> NodeAttributes::Int(std::string_view name, std::int64_t fallback) const {
  const A* attr = Find(name);
  if (!attr) return fallback;
  if (TypeOf(*attr) != A::INT) return WrongType(*attr, "INT");
  return attr->i();
}

Expected<double> NodeAttributes::Float(std::string_view name, double fallback) const {
  const A* attr = Find(name);
  if (!attr) return fallback;
  const auto type = TypeOf(*attr);
  if (type == A::FLOAT) return static_cast<double>(attr->f());
  if (type == A::INT) return static_cast<double>(attr->i());
  return WrongType(*attr, "FLOAT");
}

Expected<std::string> NodeAttributes::String(std::string_view name, const std::string& fallback) const {
  const A* attr = Find(name);
  if (!attr) return fallback;
  if (TypeOf(*attr) != A::STRING) return WrongType(*attr, "STRING");
  return attr->s();
}

Expected<std::optional<std::vector<std::int64_t>>> NodeAttributes::Ints(std::string_view name) const {
  const A* attr = Find(name);
  if (!attr) return std::optional<std::vector<std::int64_t>>();
  const auto type = TypeOf(*attr);
  if (type == A::INT) return std::optional(std::vector<std::int64_t>{attr->i()});
  // An empty list has no field set and so reads as UNDEFINED.
  if (type != A::INTS && type != A::UNDEFINED) return WrongType(*attr, "INTS");
  return std::optional(std::vector<std::int64_t>(attr->ints().begin(), attr->ints().end()));
}

Expected<std::optional<std::vector<double>>> NodeAttributes::Floats(std::string_view name) const {
  const A* attr = Find(name);
  if (!attr) return std::optional<std::vector<double>>();
  const auto type = TypeOf(*attr);
  if (type == A::FLOAT) return std::optional(std::vector<double>{attr->f()});
  if (type == A::INTS) return std::optional(std::vector<double>(attr->ints().begin(), attr->ints().end()));
  if (type != A::FLOATS && type != A::UNDEFINED) return WrongType(*attr, "FLOATS");
  return std::optional(std::vector<double>(attr->floats().begin(), attr->floats().end()));
}

Expected<const onnx::TensorProto*> NodeAttributes::Tensor(std::string_view name) const {
  const A* attr = Find(name);
  if (!attr) return static_cast<const onnx::TensorProto*>(nullptr);
  if (TypeOf(*attr) != A::TENSOR) return WrongType(*attr, "TENSOR");
  return &attr->t();
}

}  // namespace latte::onnx_import
