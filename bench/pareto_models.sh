#!/usr/bin/env bash
# The Pareto search on the six real models (`latte pareto`, xnnpack and oneDNN, name mode): search
# time, front size, and the front verified for real beside the all-xnnpack and all-oneDNN
# assignments, with the error of the predicted front. Prints Markdown tables for BENCHMARKS.md.
# Run it while nothing else runs (the verification runs are timed). Needs python3.
# BACKENDS=xnnpack,xnnpack@int8 with an fp32 and an int8 pack searches a precision per op instead
# (the two packs then in that order), and the tables add each point's estimated and measured drift.
#
# Usage: [BACKENDS=A,B] bench/pareto_models.sh PACK_A PACK_B [VERIFY=3] [NUM_RUNS=30] [MIN_SECS=0.5]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="$root/build/latte"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
[[ $# -ge 2 && -f "$1" && -f "$2" ]] || { echo "usage: bench/pareto_models.sh XNNPACK_PACK ONEDNN_PACK [VERIFY] [NUM_RUNS] [MIN_SECS]" >&2; exit 2; }
xnn="$1" dnn="$2" backends="${BACKENDS:-xnnpack,onednn}"
verify="${3:-3}" runs="${4:-30}" secs="${5:-0.5}"
source "$root/bench/six_models.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < ${#models[@]}; i += 2)); do
  m="${models[$i]}" shape="${models[$((i + 1))]}"
  args=(pareto "$root/models/$m" --backends "$backends" --packs "$xnn,$dnn" --verify "$verify"
        --num-runs "$runs" --min-secs "$secs" --format json)
  [[ -n "$shape" ]] && args+=(--input-shape "$shape")
  "$latte" "${args[@]}" >"$tmp/$i.json"
  echo "$m" >"$tmp/$i.name"
done
python3 - "$tmp" <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
runs = []
for path in sorted(glob.glob(os.path.join(d, "*.json")), key=lambda p: int(os.path.basename(p)[:-5])):
    runs.append((open(path[:-5] + ".name").read().strip(), json.load(open(path))))
print("| model | op list | search | evaluated | left out | search s | node memory s | front size |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for name, r in runs:
    print(f'| {name} | {len(r["oplist"])} | {r["search"]} | {len(r["solutions"])} | {r["left_out"]["assignments"]} | '
          f'{r["search_seconds"]:.2f} | {r["node_memory_seconds"]:.2f} | {len(r["front"])} |')
print()
drift = any(r.get("drift_per_op") for _, r in runs)
print("| model | assignment | predicted ms | measured ms | error | predicted KB | measured KB | error |" +
      (" int8 nodes | est. drift | measured drift |" if drift else ""))
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: | ---: |" if drift else ""))
terr, merr = [], []
for name, r in runs:
    for v in r["verify"]:
        if not v["ok"]:
            print(f'| {name} | {v["role"]} {v["id"]} | {v["predicted_time"]:.3f} | did not run: {v["why"]} | | | | |' +
                  (" | | |" if drift else ""))
            continue
        te = 100 * (v["predicted_time"] - v["measured_time"]) / v["measured_time"]
        me = 100 * (v["predicted_memory"] - v["measured_memory"]) / v["measured_memory"]
        if v["role"] == "front": terr.append(abs(te)); merr.append(abs(me))
        label = v["role"] if v["role"] != "front" else f'front {v["id"]}'
        print(f'| {name} | {label} | {v["predicted_time"]:.3f} | {v["measured_time"]:.3f}{" (noisy)" if v.get("noisy") else ""} | '
              f'{te:+.1f}% | {v["predicted_memory"]:,.0f} | {v["measured_memory"]:,.0f} | {me:+.1f}% |' +
              (f' {v["int8_nodes"]} | {v["predicted_drift"]:.2e} | {v["measured_drift"]:.2e} |' if drift else ""))
if terr:
    print(f"\nverified front points: {len(terr)}; median |error| time {statistics.median(terr):.1f}%, memory {statistics.median(merr):.1f}%")
PY
