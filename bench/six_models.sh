# The six real models the benchmarks run, with the --input-shape each needs ("" when its file
# fixes the shape), as pairs in one array. Sourced by the bench/*.sh scripts.
models=(face_detection_short_range.tflite "" selfie_segmentation.tflite "" hand_landmark_lite.tflite ""
        pose_landmark_lite.tflite "" ch_ppocr_mobile_v2.0_cls_infer.onnx x=1x3x48x192
        ch_PP-OCRv4_det_infer.onnx x=1x3x640x640)
