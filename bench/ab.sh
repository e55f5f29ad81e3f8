#!/usr/bin/env bash
# Two latte binaries side by side (A = before, B = after a change): `latte bench` p50 of each
# model on one backend, A and B alternating ROUNDS times (so drift hits both alike); prints the
# median over rounds of each and B/A. Run it while nothing else runs. Needs python3.
#
# Usage: bench/ab.sh LATTE_A LATTE_B [BACKEND=xnnpack] [THREADS=1] [ROUNDS=3] [NUM_RUNS=100] [MIN_SECS=1]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 2 && -x "$1" && -x "$2" ]] || { echo "usage: bench/ab.sh LATTE_A LATTE_B [BACKEND] [THREADS] [ROUNDS] [NUM_RUNS] [MIN_SECS]" >&2; exit 2; }
a="$1" b="$2" backend="${3:-xnnpack}" threads="${4:-1}" rounds="${5:-3}" runs="${6:-100}" secs="${7:-1}"
source "$root/bench/six_models.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for ((i = 0; i < ${#models[@]}; i += 2)); do
    m="${models[$i]}" shape="${models[$((i + 1))]}"
    for side in a b; do
      bin="$a"; [[ $side == b ]] && bin="$b"
      args=(bench "$root/models/$m" --backend "$backend" --num-threads "$threads" --num-runs "$runs" --min-secs "$secs" --format json)
      [[ -n "$shape" ]] && args+=(--input-shape "$shape")
      "$bin" "${args[@]}" >"$tmp/$m.$side.$r.json"
    done
  done
done
python3 - "$tmp" "$rounds" "${models[@]}" <<'PY'
import json, statistics, sys
d, rounds, models = sys.argv[1], int(sys.argv[2]), sys.argv[3::2]
print("| model | A p50 ms | B p50 ms | B/A | A rounds | B rounds |")
print("| --- | ---: | ---: | ---: | --- | --- |")
for m in models:
    get = lambda side: [json.load(open(f"{d}/{m}.{side}.{r}.json"))["latency_us"]["p50"] / 1000 for r in range(rounds)]
    a, b = get("a"), get("b")
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {m} | {ma:.3f} | {mb:.3f} | {mb / ma:.2f} | {', '.join(f'{x:.3f}' for x in a)} | {', '.join(f'{x:.3f}' for x in b)} |")
PY
