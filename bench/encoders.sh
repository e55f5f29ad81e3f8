#!/usr/bin/env bash
# Transformer encoders on Latte's oneDNN executor beside ONNX Runtime: the encoders of
# build/bench/make_encoders (BERT-mini at 64/128/384 tokens, ViT-tiny at 160/224 pixels,
# MobileViT-xx-small at 192/256 pixels; opset 17, LayerNormalization whole, and opset 13, decomposed), each run by `latte bench` on each backend,
# one thread, models and backends alternating, ROUNDS rounds; prints each model's median p50 per
# backend over the rounds, the rounds' spread, the nodes that fell back, and oneDNN / ORT (≤ 1.0:
# Latte's executor as fast or faster). oneDNN runs the ViTs and MobileViTs whole and every node of the BERTs but
# one: the attention mask's Cast from int64 to float (oneDNN 2.6 has no 64-bit integer type), which
# falls back to ONNX Runtime (--fallback ort); the table says how many nodes fell back and the
# lines under it which and why. Run it while nothing else runs. Needs python3.
#
# Usage: bench/encoders.sh [ROUNDS=3] [NUM_RUNS=30] [MIN_SECS=1] [BACKENDS=onednn,ort] [MODELS=all|NAME,...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="${LATTE:-$root/build/latte}"
make_encoders="$root/build/bench/make_encoders"
[[ -x "$latte" && -x "$make_encoders" ]] || { echo "bench: build/latte or build/bench/make_encoders is missing: run scripts/setup" >&2; exit 2; }
rounds="${1:-3}" runs="${2:-30}" secs="${3:-1}" backends="${4:-onednn,ort}" wanted="${5:-all}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$make_encoders" "$tmp/models" >/dev/null
models=()
for f in "$tmp"/models/*.onnx; do
  name="$(basename "$f" .onnx)"
  [[ "$wanted" == all || ",$wanted," == *",$name,"* ]] && models+=("$f")
done
((${#models[@]})) || { echo "bench: no encoder named in '$wanted'" >&2; exit 2; }
IFS=, read -r -a backend_list <<<"$backends"
for ((r = 1; r <= rounds; r++)); do
  echo "round $r of $rounds at $(date -u +%H:%M:%S) UTC" >&2
  for model in "${models[@]}"; do
    for backend in "${backend_list[@]}"; do
      out="$tmp/$(basename "$model" .onnx).$backend.r$r"
      fallback=()
      [[ "$backend" != ort ]] && fallback=(--fallback ort)
      "$latte" bench "$model" --backend "$backend" "${fallback[@]}" --num-threads 1 --num-runs "$runs" --min-secs "$secs" \
        --format json >"$out.json" 2>"$out.err" || rm -f "$out.json"
    done
  done
done
python3 - "$tmp" <<'PY'
import glob, json, os, statistics, sys
tmp = sys.argv[1]
p50, fell, why, fell_why = {}, {}, {}, {}
for path in glob.glob(os.path.join(tmp, "*.r*.err")):
    model, backend, _ = os.path.basename(path)[:-len(".err")].rsplit(".", 2)
    result = path[:-4] + ".json"
    if os.path.exists(result):
        d = json.load(open(result))
        p50.setdefault((model, backend), []).append(d["latency_us"]["p50"] / 1000)
        fell[(model, backend)] = len(d["fallbacks"])
        for f in d["fallbacks"]:
            fell_why.setdefault((model, backend), set()).add(f"node {f['node']} on {f['backend']}: {f['why']}")
    else:
        why[(model, backend)] = open(path).read().strip().splitlines()[-1]
models = sorted({m for m, _ in list(p50) + list(why)})
backends = sorted({b for _, b in list(p50) + list(why)})
print("| model | " + " | ".join(f"{b} p50 ms (rounds max/min; nodes on ort)" for b in backends) + " | onednn / ort |")
print("| --- | " + " | ".join("---:" for _ in backends) + " | ---: |")
for m in models:
    cells, med = [], {}
    for b in backends:
        if (m, b) in p50:
            v = p50[(m, b)]
            med[b] = statistics.median(v)
            cells.append(f"{med[b]:.3f} ({max(v) / min(v):.2f}; {fell[(m, b)] if b != 'ort' else 'all'})")
        else:
            cells.append("cannot run: " + why.get((m, b), "?"))
    ratio = f"{med['onednn'] / med['ort']:.2f}" if "onednn" in med and "ort" in med else "n/a"
    print(f"| {m} | " + " | ".join(cells) + f" | {ratio} |")
if fell_why:
    print()
    for (m, b), lines in sorted(fell_why.items()):
        for line in sorted(lines):
            print(f"- {m} on {b}: {line}")
PY
