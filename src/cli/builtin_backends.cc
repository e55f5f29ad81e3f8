#include "cli/builtin_backends.h"

#include "run/xnnpack/xnnpack_backend.h"

namespace latte::cli {

void RegisterBuiltinBackends(BackendRegistry& registry) {
  RegisterXnnpackBackend(registry);
}

}  // namespace latte::cli
