#pragma once
// Where tests find the real models (fetched by scripts/setup) and the shared data.

#include <filesystem>
#include <string>

namespace latte::testing {

inline std::string SourceDir() { return LATTE_SOURCE_DIR; }
inline std::string ModelPath(const std::string& file) { return SourceDir() + "/models/" + file; }
inline bool HaveModel(const std::string& file) { return std::filesystem::exists(ModelPath(file)); }
/// The six models of the foundation issue (scripts/setup fetches them).
inline const char* const kRealModels[] = {
    "face_detection_short_range.tflite", "selfie_segmentation.tflite", "hand_landmark_lite.tflite",
    "pose_landmark_lite.tflite",         "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_det_infer.onnx",
};

}  // namespace latte::testing

/// Fails (not skips) when a model scripts/setup should have fetched is missing: a test suite
/// that silently skips its real-model checks proves nothing.
#define LATTE_REQUIRE_MODEL(file)                                                              \
  if (!::latte::testing::HaveModel(file)) {                                                    \
    FAIL() << "missing " << ::latte::testing::ModelPath(file) << ": run scripts/setup first"; \
  }
