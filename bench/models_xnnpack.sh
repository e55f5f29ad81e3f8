#!/usr/bin/env bash
# bench/models_xnnpack.sh: p50 latency of the real TFLite models on Latte's xnnpack executor at
# 1 and 2 threads, interleaved (model by model, threads side by side) so drift hits both alike.
# Prints a Markdown table for BENCHMARKS.md. Run it while nothing else runs.
#
# Usage: bench/models_xnnpack.sh [NUM_RUNS] [MIN_SECS]   (defaults 100, 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="$root/build/latte"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
runs="${1:-100}"
secs="${2:-2}"
models=(face_detection_short_range.tflite selfie_segmentation.tflite hand_landmark_lite.tflite pose_landmark_lite.tflite)

field() {  # field JSON KEY.PATH
  python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k]
print(d)' "$1"
}

echo "| model | threads | p50 ms | p10 ms | p90 ms | runs | batch-median CV | attempts |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  for t in 1 2; do
    json="$("$latte" bench "$root/models/$m" --backend xnnpack --num_threads "$t" --num_runs "$runs" --min_secs "$secs" --format json)"
    p50=$(field latency_us.p50 <<<"$json"); p10=$(field latency_us.p10 <<<"$json"); p90=$(field latency_us.p90 <<<"$json")
    n=$(field latency_us.count <<<"$json"); cv=$(field noise.batch_median_cv <<<"$json"); att=$(field noise.attempts <<<"$json")
    printf '| %s | %d | %.3f | %.3f | %.3f | %d | %.1f%% | %d |\n' "$m" "$t" \
      "$(bc -l <<<"$p50/1000")" "$(bc -l <<<"$p10/1000")" "$(bc -l <<<"$p90/1000")" "$n" "$(bc -l <<<"$cv*100")" "$att"
  done
done
