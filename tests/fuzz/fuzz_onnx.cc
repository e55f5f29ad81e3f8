// libFuzzer target: arbitrary bytes through the ONNX importer, validation, shape inference,
// cost and the inspect report. Run it with scripts/fuzz onnx SECONDS.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return latte::fuzz::ImportAndWalk(data, size, latte::ModelFormat::kOnnx);
}
