#include "run/backend_registry.h"

#include <cassert>

namespace latte {

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
  }
  return "fp32";
}

Expected<Precision> ParsePrecision(std::string_view name) {
  std::string known;
  for (Precision p : kAllPrecisions) {
    if (PrecisionName(p) == name) return p;
    known += (known.empty() ? "" : ", ") + std::string(PrecisionName(p));
  }
  return InvalidInput("unknown precision '" + std::string(name) + "' (" + known + ")");
}

Status BackendRegistry::Register(BackendFactory info) {
  if (Find(info.name) != nullptr) return Internal("backend '" + info.name + "' registered twice");
  backends_.push_back(std::move(info));
  return Status::Ok();
}

void BackendRegistry::RegisterBuiltin(BackendFactory info) {
  [[maybe_unused]] const Status status = Register(std::move(info));
  assert(status.ok() && "a built-in backend registered twice");
}

const BackendFactory* BackendRegistry::Find(const std::string& name) const {
  for (const auto& b : backends_)
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string> BackendRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& b : backends_) names.push_back(b.name);
  return names;
}

NhwcBackends BackendRegistry::NhwcBackendNames() const {
  NhwcBackends names;
  for (const auto& b : backends_)
    if (b.takes_nhwc) names.insert(b.name);
  return names;
}

Status BackendRegistry::CheckKnown(const std::string& name) const {
  if (Find(name) != nullptr) return Status::Ok();
  std::string known;
  for (const auto& b : backends_) known += (known.empty() ? "" : ", ") + b.name;
  return InvalidInput("unknown backend '" + name + "' (known: " + (known.empty() ? "none" : known) + ")");
}

Expected<std::unique_ptr<Backend>> BackendRegistry::Create(const std::string& name, const RunOptions& options) const {
  LATTE_RETURN_IF_ERROR(CheckKnown(name));
  const BackendFactory* info = Find(name);
  if (options.num_threads < 1 || options.num_threads > 1024)
    return InvalidInput("--num-threads must be between 1 and 1024, not " + std::to_string(options.num_threads));
  return info->create(options);
}

}  // namespace latte
