#!/usr/bin/env bash
# bench/models.sh: p50 latency of the real TFLite models on Latte's executor, per backend at 1 and
# 2 threads, interleaved (model by model, backends and threads side by side) so drift hits all
# alike. Prints a Markdown table for BENCHMARKS.md, with what other processes used of the cores
# while each ran (the protocol's host check: "busy" when they took cores the run needed). Run it
# while nothing else runs.
# Needs python3 (for reading the JSON).
#
# Usage: bench/models.sh [BACKENDS=xnnpack,onednn,ort] [NUM_RUNS=100] [MIN_SECS=2]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="$root/build/latte"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
IFS=, read -r -a backends <<<"${1:-xnnpack,onednn,ort}"
runs="${2:-100}"
secs="${3:-2}"
models=(face_detection_short_range.tflite selfie_segmentation.tflite hand_landmark_lite.tflite pose_landmark_lite.tflite)

field() {  # field JSON KEY.PATH
  python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k]
print(d)' "$1"
}

echo "| model | backend | threads | p50 ms | p10 ms | p90 ms | runs | batch-median CV | attempts | others' cores |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  for t in 1 2; do
   for b in "${backends[@]}"; do
    json="$("$latte" bench "$root/models/$m" --backend "$b" --num-threads "$t" --num-runs "$runs" --min-secs "$secs" --format json)"
    p50=$(field latency_us.p50 <<<"$json"); p10=$(field latency_us.p10 <<<"$json"); p90=$(field latency_us.p90 <<<"$json")
    n=$(field latency_us.count <<<"$json"); cv=$(field noise.batch_median_cv <<<"$json"); att=$(field noise.attempts <<<"$json")
    others=$(field host.other_cores <<<"$json"); busy=$(field host.contended <<<"$json")
    printf '| %s | %s | %d | %.3f | %.3f | %.3f | %d | %.1f%% | %d | %.2f%s |\n' "$m" "$b" "$t" \
      "$(bc -l <<<"$p50/1000")" "$(bc -l <<<"$p10/1000")" "$(bc -l <<<"$p90/1000")" "$n" "$(bc -l <<<"$cv*100")" "$att" \
      "$others" "$([[ "$busy" == True ]] && echo " (busy)")"
   done
  done
done
