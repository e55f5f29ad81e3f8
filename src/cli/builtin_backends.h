#pragma once
// The backends built into latte, registered explicitly (no static initializers).

#include "run/backend_registry.h"

namespace latte::cli {

/// One line per backend; adding a backend adds a line here.
void RegisterBuiltinBackends(BackendRegistry& registry);

}  // namespace latte::cli
