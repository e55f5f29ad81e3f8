# Sourced by bench scripts: the --input-shape a model in models/ needs (PaddleOCR's files leave
# their input's sides dynamic; these are the sizes the leave-models-out benchmark uses).
# model_shape_flags NAME: prints the flags, one word a line (nothing when the file fixes its shape).
model_shape_flags() {
  case "$1" in
    ch_PP-OCRv4_rec_infer.onnx) printf '%s\n' --input-shape x=1x3x48x320 ;;
    ch_PP-OCRv4_det_infer.onnx) printf '%s\n' --input-shape x=1x3x640x640 ;;
    ch_ppocr_mobile_v2.0_cls_infer.onnx) printf '%s\n' --input-shape x=1x3x48x192 ;;
  esac
}
