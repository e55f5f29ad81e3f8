#pragma once
// Argument helpers the probes share.
#include <string>

#include "import/import.h"

namespace latte {

/// "NAME=1x3x48x192" (latte's --input-shape) into `import`; fails on a shape that does not parse.
inline Status AddInputShapeArg(const std::string& arg, ImportOptions& import) {
  const std::size_t eq = arg.find('=');
  Expected<Shape> shape = ParseShape(eq == std::string::npos ? "" : arg.substr(eq + 1));
  if (!shape.ok()) return shape.status();
  import.input_shapes[arg.substr(0, eq)] = *shape;
  return Status::Ok();
}

}  // namespace latte
