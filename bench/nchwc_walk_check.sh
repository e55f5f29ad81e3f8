#!/usr/bin/env bash
# Where ir/nchwc_layout's walk and ONNX Runtime disagree on the reorders between the plain and the
# blocked (NCHWc) layout: per model, the reorders Latte expects (build/bench/nchwc_reorders) beside
# the ones ORT's own profile shows in one run (`latte bench --backend ort --enable-op-profiling`
# with LATTE_ORT_PROFILE_DIR), matched by direction, channels and map; then each shape one side has
# more of. The in-graph context prices each layer's reorders by the walk's bytes, so a reorder the
# walk invents or misses is time put in the wrong place. Times are ORT's profile (not scaled).
# Needs python3. Usage: bench/nchwc_walk_check.sh [MODEL ...]   (default: every model in models/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/model_shapes.sh"
latte="${LATTE:-$root/build/latte}"
lister="$root/build/bench/nchwc_reorders"
[[ -x "$latte" && -x "$lister" ]] || { echo "bench: build/latte or build/bench/nchwc_reorders is missing: build first" >&2; exit 2; }
if [[ $# -eq 0 ]]; then set -- "$root"/models/*.tflite "$root"/models/*.onnx; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '| model | ORT reorders | ORT MiB | ORT ms | walk reorders | walk MiB | matched | walk only | ORT only |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for model in "$@"; do
  [[ -f "$model" ]] || continue
  mapfile -t flags < <(model_shape_flags "$(basename "$model")")
  rm -rf "$tmp/profiles" && mkdir -p "$tmp/profiles"
  LATTE_ORT_PROFILE_DIR="$tmp/profiles" "$latte" bench "$model" "${flags[@]}" --backend ort --num-threads 1 \
    --enable-op-profiling --num-runs 3 --warmup-runs 1 > /dev/null 2> "$tmp/bench.err" ||
    { echo "bench: $(basename "$model"): $(tail -1 "$tmp/bench.err")" >&2; continue; }
  "$lister" "$model" "${flags[@]}" > "$tmp/walk.tsv" 2> "$tmp/walk.err" ||
    { echo "bench: $(basename "$model"): $(tail -1 "$tmp/walk.err")" >&2; continue; }
  python3 - "$(basename "$model")" "$tmp/profiles" "$tmp/walk.tsv" <<'PY'
import collections, glob, json, os, sys
name, profiles, walk = sys.argv[1:4]
last = max(glob.glob(os.path.join(profiles, '*.json')), key=os.path.getmtime)
ort, ort_bytes, ort_us = collections.Counter(), 0, 0.0
for e in json.load(open(last)):
    if e.get('cat') != 'Node' or not e.get('name', '').endswith('_kernel_time'): continue
    op = e['args'].get('op_name', '')
    if op not in ('ReorderInput', 'ReorderOutput'): continue
    blocked = list(e['args']['input_type_shape' if op == 'ReorderOutput' else 'output_type_shape'][0].values())[0]
    logical = list(e['args']['output_type_shape' if op == 'ReorderOutput' else 'input_type_shape'][0].values())[0]
    if len(logical) != 4: continue
    ort[('out' if op == 'ReorderOutput' else 'in', logical[1], f'{logical[2]}x{logical[3]}')] += 1
    n = 4
    for d in blocked: n *= d
    ort_bytes += n
    ort_us += e['dur']
mine, mine_bytes = collections.Counter(), 0
for line in open(walk):
    f = line.rstrip('\n').split('\t')
    if f[0] == 'total' or len(f) < 5: continue
    mine[(f[1], int(f[2]), f[3])] += 1
    mine_bytes += int(f[4])
matched = sum((ort & mine).values())
print(f'| {name} | {sum(ort.values())} | {ort_bytes / 2**20:.2f} | {ort_us / 1000:.3f} | {sum(mine.values())} | '
      f'{mine_bytes / 2**20:.2f} | {matched} | {sum((mine - ort).values())} | {sum((ort - mine).values())} |')
for key in sorted(set(ort) | set(mine), key=lambda k: (k[2], k[1], k[0])):
    if ort[key] != mine[key]:
        print(f'  {name}: {key[0]} {key[1]}×{key[2]}: ORT {ort[key]}, walk {mine[key]}', file=sys.stderr)
PY
done
