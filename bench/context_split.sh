#!/usr/bin/env bash
# Where a pack's error on a model comes from: its kernels or their in-graph context. Per model,
# ROUNDS times in turn: the model's own kernels profiled alone into a fresh store (`latte profile
# --strategy from-models --no-neighbours`, grouped as the backend runs them), then the model run
# whole (`latte bench`). Each round's measured context is the model's p50 over the sum of its
# kernels alone, both measured minutes apart on the same host, so the ratio holds through the
# slow and fast phases of a shared machine that move both. Beside them, the pack's prediction:
# its kernels alone and its context ("of which in graph"). A layer whose kernel the profile did
# not form (the pack's fusion rules group it otherwise) is counted at the pack's own prediction
# and listed. Medians over the rounds. Several packs (PACK=A,B) are judged against the same
# measurements, one row each: the way to compare two calibrations' contexts side by side.
# Needs python3. Usage: PACK=P.json.gz[,Q.json.gz...] [BACKEND=ort] [ROUNDS=3]
#   bench/context_split.sh [MODEL ...]   (default: every model in models/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/model_shapes.sh"
latte="${LATTE:-$root/build/latte}"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: build first" >&2; exit 2; }
[[ -n "${PACK:-}" ]] || { echo "bench: PACK=FILE[,FILE...] (the packs to split) is required" >&2; exit 2; }
IFS=, read -r -a packs <<< "$PACK"
for pack in "${packs[@]}"; do
  [[ -f "$pack" ]] || { echo "bench: $pack: no such pack" >&2; exit 2; }
done
backend="${BACKEND:-ort}"
rounds="${ROUNDS:-3}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2; }
if [[ $# -eq 0 ]]; then set -- "$root"/models/*.tflite "$root"/models/*.onnx; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for i in "${!packs[@]}"; do printf 'pack #%d: %s\n' "$((i + 1))" "${packs[$i]}"; done
printf '\n| model | pack | predicted: kernels + context ms | kernels alone ms (rounds) | model p50 ms (rounds) | context measured | context predicted | kernels: predicted / alone | not formed by the profile |\n'
printf '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n'
for model in "$@"; do
  [[ -f "$model" ]] || continue
  name="$(basename "$model")"
  mapfile -t flags < <(model_shape_flags "$(basename "$model")")
  for i in "${!packs[@]}"; do
    "$latte" predict "$model" "${flags[@]}" --pack "${packs[$i]}" --format json > "$tmp/pred.$((i + 1)).json" \
      2> "$tmp/err" || { echo "bench: $name: pack #$((i + 1)): $(tail -1 "$tmp/err")" >&2; continue 2; }
  done
  : > "$tmp/rounds.txt"
  for ((r = 1; r <= rounds; ++r)); do
    rm -f "$tmp/alone.db"
    "$latte" profile --backend "$backend" --strategy from-models --models "$model" "${flags[@]}" --no-neighbours \
      --db "$tmp/alone.db" > /dev/null 2> "$tmp/err" || { echo "bench: $name: $(tail -1 "$tmp/err")" >&2; continue 2; }
    "$latte" export --format jsonl --db "$tmp/alone.db" --backend "$backend" > "$tmp/alone.$r.jsonl" 2> "$tmp/err" ||
      { echo "bench: $name: $(tail -1 "$tmp/err")" >&2; continue 2; }
    "$latte" bench "$model" "${flags[@]}" --backend "$backend" --num-threads 1 > "$tmp/bench.txt" 2> "$tmp/err" ||
      { echo "bench: $name: $(tail -1 "$tmp/err")" >&2; continue 2; }
    p50="$(sed -n 's/.* p50=\([0-9.]*\).*/\1/p' "$tmp/bench.txt" | head -1)"
    [[ -n "$p50" ]] || { echo "bench: $name: no p50 in latte bench's output" >&2; continue 2; }
    echo "$r $p50" >> "$tmp/rounds.txt"
  done
  python3 - "$name" "${#packs[@]}" "$tmp/rounds.txt" "$tmp" <<'PY'
import collections, json, statistics, sys
name, npacks, rounds_path, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rounds = [line.split() for line in open(rounds_path)]
if not rounds:
    sys.exit(0)
alone_p50 = {}  # round -> kernel key -> p50 ms alone
for r, _ in rounds:
    alone_p50[r] = {}
    for row in open(f'{tmp}/alone.{r}.jsonl'):
        m = json.loads(row)
        alone_p50[r][m['kernel']['key']] = m['stats']['p50_us'] / 1000
model = [float(p50_us) / 1000 for _, p50_us in rounds]
for i in range(1, npacks + 1):
    layers = json.load(open(f'{tmp}/pred.{i}.json'))['layers']
    kernels_ms = sum(l['kernel_ms'] for l in layers)
    context_ms = sum(l['context_ms'] for l in layers)
    alone = []
    missing = collections.Counter()
    for r, _ in rounds:
        total = 0.0
        missing.clear()
        for l in layers:
            if l['key'] in alone_p50[r]:
                total += alone_p50[r][l['key']]
            else:  # not formed by the profile's grouping: the pack's own prediction stands in
                total += l['kernel_ms']
                missing[l['kernel']] += 1
        alone.append(total)
    a, m = statistics.median(alone), statistics.median(model)
    ctx = statistics.median(x / y - 1 for x, y in zip(model, alone))
    cells = [name, f'#{i}', f'{kernels_ms:.3f} + {context_ms:.3f}',
             f'{a:.3f} ({", ".join(f"{x:.2f}" for x in alone)})', f'{m:.3f} ({", ".join(f"{x:.2f}" for x in model)})',
             f'{100 * ctx:+.1f}%', f'{100 * context_ms / kernels_ms:+.1f}%', f'{kernels_ms / a:.3f}',
             ', '.join(f'{k} ×{n}' for k, n in sorted(missing.items())) or 'none']
    print('| ' + ' | '.join(cells) + ' |')
PY
done
