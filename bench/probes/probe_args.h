#pragma once
// What the probes share: argument parsing and how they run a model.
#include <string>

#include "import/import.h"
#include "run/benchmark.h"

namespace latte {

/// "NAME=1x3x48x192" (latte's --input-shape) into `import`; fails on a shape that does not parse.
inline Status AddInputShapeArg(const std::string& arg, ImportOptions& import) {
  const std::size_t eq = arg.find('=');
  Expected<Shape> shape = ParseShape(eq == std::string::npos ? "" : arg.substr(eq + 1));
  if (!shape.ok()) return shape.status();
  import.input_shapes[arg.substr(0, eq)] = *shape;
  return Status::Ok();
}

/// How the probes run a whole model: xnnpack's 1 thread, 50 runs and at least 1 s.
inline BenchOptions ProbeBenchOptions() {
  BenchOptions bench;
  bench.run.num_threads = 1;
  bench.measure.num_runs = 50;
  bench.measure.min_secs = 1;
  return bench;
}

}  // namespace latte
