#!/usr/bin/env bash
# bench/conv_efficiency.sh: achieved GFLOP/s of each model's three heaviest conv layers on the
# xnnpack executor (FLOPs from `latte inspect`, per-node times from `latte bench
# --enable-op-profiling`), against the 1-thread fp32 peak that build/bench/peak_flops measures.
# Prints a Markdown table for BENCHMARKS.md. Needs python3 (for reading the JSON).
#
# Usage: bench/conv_efficiency.sh [NUM_RUNS=200]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="$root/build/latte"
peak_bin="$root/build/bench/peak_flops"
[[ -x "$latte" && -x "$peak_bin" ]] || { echo "bench: build first (scripts/setup --tests)" >&2; exit 2; }
runs="${1:-200}"
# The widest ISA comes first in peak_flops' table: its 1-thread row is the peak.
peak="$("$peak_bin" 1 1 | awk -F'|' '$3+0 == 1 {print $4+0; exit}')"
echo "1-thread fp32 peak (FMA loop): $peak GFLOP/s"
echo
echo "| model | node | op | geometry | GFLOP | avg ms | GFLOP/s | % of peak |"
echo "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: |"
for m in face_detection_short_range.tflite selfie_segmentation.tflite hand_landmark_lite.tflite pose_landmark_lite.tflite; do
  inspect="$("$latte" inspect "$root/models/$m" --format json)"
  bench="$("$latte" bench "$root/models/$m" --backend xnnpack --num-threads 1 --num-runs "$runs" --min-secs 1 \
           --enable-op-profiling --format json)"
  python3 - "$m" "$peak" <<PY
import json, sys
model, peak = sys.argv[1], float(sys.argv[2])
inspect = json.loads('''$inspect''')
bench = json.loads('''$bench''')
times = {n["index"]: n["avg_us"] for n in bench["op_profile"]}
convs = [n for n in inspect["nodes"] if n["op"] in ("conv2d", "depthwise_conv2d", "transpose_conv2d")]
for n in sorted(convs, key=lambda n: -n["flops"])[:3]:
    us = times[n["index"]]
    gflops = n["flops"] / us / 1e3
    print(f"| {model} | {n['index']} | {n['op']} | {n.get('geometry','')} | {n['flops']/1e9:.3f} | {us/1000:.3f} | {gflops:.1f} | {100*gflops/peak:.0f}% |")
PY
done
