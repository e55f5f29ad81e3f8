#include "cli/builtin_backends.h"

#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte::cli {

void RegisterBuiltinBackends(BackendRegistry& registry) {
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RegisterOrtBackend(registry);
}

}  // namespace latte::cli
