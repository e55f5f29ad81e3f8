#!/usr/bin/env bash
# bench/store_scale.sh: the store at a lab's size (issue 24: "1,000,000 measurements stored; fit
# reads one device's share of them in <= 10 s"). bench/store_scale fills a fresh database of a
# throwaway PostgreSQL server (Debian's initdb + pg_ctl, a Unix socket in a temporary folder, fsync
# off as in the tests, as `nobody` under root; stopped and removed at the end), then a fresh SQLite
# file for comparison, with ROWS measurements over DEVICES devices, and times READS times what
# `latte fit --device KEY` reads of one device. Prints figures; asserts nothing.
#
# Usage: bench/store_scale.sh [ROWS=1000000] [DEVICES=5] [READS=3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LATTE_BUILD_DIR:-$root/build}"
scale="$build/bench/store_scale"
[[ -x "$scale" ]] || { echo "bench: build first (cmake --build build --target store_scale), or set LATTE_BUILD_DIR" >&2; exit 2; }
rows="${1:-1000000}" devices="${2:-5}" reads="${3:-3}"

bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
[[ -x "$bin/initdb" ]] || { echo "bench: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 2; }
tmp="$(mktemp -d /tmp/latte-store-scale.XXXXXX)"
as=()
if [[ $EUID -eq 0 ]]; then chown nobody "$tmp"; as=(runuser -u nobody --); fi
stop() {
  "${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap stop EXIT
"${as[@]}" "$bin/initdb" -D "$tmp/data" -U latte --auth=trust -E UTF8 --no-locale --no-sync >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -o \
  "-c listen_addresses='' -k $tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
url() { echo "postgresql:///$1?host=$tmp&user=latte"; }
psql -q "$(url postgres)" -c "CREATE DATABASE scale" >/dev/null

echo "device: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
echo "PostgreSQL: $("$bin/postgres" --version), local Unix socket, fsync off; SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || true)"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
echo
"$scale" "$(url scale)" "$rows" "$devices" "$reads"
echo
mkdir -p "$tmp/sqlite"
"$scale" "$tmp/sqlite/scale.db" "$rows" "$devices" "$reads"
echo
echo "load after: $(uptime | sed 's/.*load average/load average/')"
