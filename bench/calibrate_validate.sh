#!/usr/bin/env bash
# The six-model accuracy with calibration and validation in one run: calibrates a fresh store on
# this machine (`latte calibrate`, BUDGET, the four MediaPipe models' kernels first; the two
# PaddleOCR models stay unseen), then validates the six right after (bench/predict_models.sh,
# REPEATS interleaved rounds). A shipped pack is validated hours or days after it was made, and
# this host's speed moves by more than ±10% over that; here the two are minutes apart. Run it
# while nothing else runs. Writes its store and pack into a temporary directory (removed after;
# KEEP=DIR copies the store, pack and calibrate log there first).
#
# Usage: [KEEP=DIR] bench/calibrate_validate.sh [BUDGET=5m] [REPEATS=3] [SEED=0]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="${LATTE:-$root/build/latte}"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
budget="${1:-5m}"
repeats="${2:-3}"
seed="${3:-0}"
tmp="$(mktemp -d)"
keep="${KEEP:-}"
trap '[[ -n "$keep" ]] && mkdir -p "$keep" && cp "$tmp"/* "$keep"/; rm -rf "$tmp"' EXIT
started="$(date -u +%H:%M)"
"$latte" calibrate --backend xnnpack --num-threads 1 --budget "$budget" --seed "$seed" --db "$tmp/store.db" \
  -o "$tmp/pack.json.gz" --models "$root/models/face_detection_short_range.tflite" \
  "$root/models/selfie_segmentation.tflite" "$root/models/hand_landmark_lite.tflite" \
  "$root/models/pose_landmark_lite.tflite" >"$tmp/calibrate.log" 2>&1 ||
  { cat "$tmp/calibrate.log" >&2; exit 1; }
echo "calibrated at $started UTC ($budget, seed $seed): $(tail -1 "$tmp/calibrate.log")"
grep -E "^(phase random networks|in-graph context|no in-graph context|no layers measured)" "$tmp/calibrate.log" || true
echo "validated at $(date -u +%H:%M) UTC, $repeats rounds:"
LATTE="$latte" "$root/bench/predict_models.sh" "$tmp/pack.json.gz" 50 1 "$repeats"
