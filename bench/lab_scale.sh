#!/usr/bin/env bash
# bench/lab_scale.sh: the device lab (issue 24) against one local throwaway PostgreSQL server.
#  1. the measurement rate of `latte lab work` with 1, 2 and 3 workers at once, each pretending to
#     be another device (--device-name): one campaign submitted afresh for each count (conv2d and
#     depthwise conv2d kernels drawn at random, jobs of 4, the default kernel protocol), the wall
#     time from the workers' start until the last one stops (every job done);
#  2. N simulated workers (bench/lab_claims, threads with a connection each) claiming and
#     completing empty jobs: the queue's own throughput.
# The server is Debian's (initdb + pg_ctl, as `nobody` under root), on a Unix socket in a temporary
# folder, fsync off as in the tests, stopped and removed at the end. Prints figures; asserts nothing.
#
# Usage: bench/lab_scale.sh [KERNELS=60] [SIM_WORKERS=50] [SIM_JOBS=20000]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LATTE_BUILD_DIR:-$root/build}"
latte="${LATTE:-$build/latte}"
claims="$build/bench/lab_claims"
[[ -x "$latte" && -x "$claims" ]] || { echo "bench: build first (cmake --build build), or set LATTE_BUILD_DIR" >&2; exit 2; }
kernels="${1:-60}" sim_workers="${2:-50}" sim_jobs="${3:-20000}"

bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
[[ -x "$bin/initdb" ]] || { echo "bench: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 2; }
tmp="$(mktemp -d /tmp/latte-lab-bench.XXXXXX)"
as=()
if [[ $EUID -eq 0 ]]; then chown nobody "$tmp"; as=(runuser -u nobody --); fi
stop() {
  "${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap stop EXIT
"${as[@]}" "$bin/initdb" -D "$tmp/data" -U latte --auth=trust -E UTF8 --no-locale --no-sync >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -o \
  "-c listen_addresses='' -k $tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
  start >/dev/null
url() { echo "postgresql:///$1?host=$tmp&user=latte"; }
newdb() { psql -q "$(url postgres)" -c "CREATE DATABASE $1" >/dev/null; }
now() { date +%s.%N; }

echo "device: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
echo "PostgreSQL: $("$bin/postgres" --version), local Unix socket, fsync off"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
echo

for workers in 1 2 3; do
  db="rate$workers"
  newdb "$db"
  "$latte" lab submit --db "$(url "$db")" --device-class bench --strategy random --kernels conv2d,dwconv2d \
    --max-kernels "$kernels" --seed 1 --job-size 4 >/dev/null
  start="$(now)"
  pids=()
  for ((w = 1; w <= workers; w++)); do
    "$latte" lab work --db "$(url "$db")" --device-name "bench-dev-$w" >"$tmp/w$w.out" 2>"$tmp/w$w.err" &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end="$(now)"
  stored="$(psql -qtA "$(url "$db")" -c "SELECT count(*) FROM measurements")"
  share="$(psql -qtA "$(url "$db")" -c "SELECT string_agg(d.key || ' ' || n, ', ' ORDER BY d.key) FROM (SELECT device_id, count(*) n FROM measurements GROUP BY device_id) m JOIN devices d ON d.id = m.device_id")"
  awk -v w="$workers" -v n="$stored" -v s="$start" -v e="$end" -v share="$share" 'BEGIN {
    t = e - s
    printf "%d worker%s: %d kernels measured in %.1f s = %.2f kernels/s (%s)\n", w, w == 1 ? " " : "s", n, t, n / t, share
  }'
done
echo
newdb claims
"$claims" "$(url claims)" "$sim_workers" "$sim_jobs"
echo
echo "load after: $(uptime | sed 's/.*load average/load average/')"
