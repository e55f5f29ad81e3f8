#!/usr/bin/env bash
# bench/profile_rate.sh: how fast `latte profile` measures (issue 4's performance figures).
#  1. measurements per minute for small kernels (relu, add: the protocol's overhead dominates)
#     on xnnpack, 1 thread, with the default kernel protocol (2 warmups, >= 20 runs, >= 0.1 s);
#  2. the wall time of a full profile of the TFLite estimator's conv2d grid (720 kernels) on
#     xnnpack, 1 thread.
# Prints figures; asserts nothing. Run it on a quiet machine. Each part uses a fresh store in a
# temporary folder.
#
# Usage: bench/profile_rate.sh [SMALL_KERNELS=60] [--skip-grid]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="${LATTE:-$root/build/latte}"
[[ -x "$latte" ]] || { echo "bench: build first (scripts/setup), or set LATTE=path/to/latte" >&2; exit 2; }
small="${1:-60}"
skip_grid=0
for arg in "$@"; do [[ "$arg" == "--skip-grid" ]] && skip_grid=1; done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

echo "device: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
echo

start="$(now)"
"$latte" profile --backend xnnpack --num-threads 1 --kernels relu,add --max-kernels "$small" \
  --db "$tmp/small.db" > "$tmp/small.out" 2> "$tmp/small.err"
end="$(now)"
measured="$(sed -n 's/^measured \([0-9]*\).*/\1/p' "$tmp/small.out")"
awk -v n="$measured" -v s="$start" -v e="$end" 'BEGIN {
  t = e - s
  printf "small kernels (relu, add), xnnpack, 1 thread: %d measurements in %.1f s = %.0f per minute\n", n, t, 60 * n / t
}'

if [[ "$skip_grid" == 1 ]]; then exit 0; fi
start="$(now)"
"$latte" profile --backend xnnpack --num-threads 1 --kernels conv2d --grid tflite \
  --db "$tmp/grid.db" > "$tmp/grid.out" 2> "$tmp/grid.err"
end="$(now)"
measured="$(sed -n 's/^measured \([0-9]*\).*/\1/p' "$tmp/grid.out")"
unsupported="$(sed -n 's/^measured [0-9]*, unsupported \([0-9]*\).*/\1/p' "$tmp/grid.out")"
awk -v n="$measured" -v u="$unsupported" -v s="$start" -v e="$end" 'BEGIN {
  t = e - s
  printf "TFLite estimator grid (conv2d, 720 kernels), xnnpack, 1 thread: %.1f s wall (%d measured, %d unsupported)\n", t, n, u
}'
