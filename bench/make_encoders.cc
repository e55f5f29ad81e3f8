// Writes the transformer encoders of profile/encoder_models (BERT-mini at 64, 128 and 384 tokens, ViT-tiny
// at 160 and 224 pixels, MobileViT-xx-small at 192 and 256 pixels, each with LayerNormalization whole
// at opset 17 and decomposed at opset 13) as ONNX files into a folder, for `latte inspect / bench / predict / validate` to read.
// Usage: make_encoders OUTDIR
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "profile/encoder_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_encoders OUTDIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "error: %s: %s\n", dir.c_str(), error.message().c_str());
    return 2;
  }
  try {
    for (const latte::encoders::EncoderConfig& config : latte::encoders::PublishedShapes()) {
      const std::filesystem::path path = dir / (config.name + ".onnx");
      const std::string bytes = latte::encoders::ModelBytes(config);
      std::ofstream out(path, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out.flush()) {
        std::fprintf(stderr, "error: %s: cannot write\n", path.c_str());
        return 2;
      }
      std::printf("%s (%.1f MB)\n", path.c_str(), static_cast<double>(bytes.size()) / 1e6);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
