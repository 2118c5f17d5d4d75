#!/usr/bin/env bash
# Issue 16, item 5, the proof: online ALTER TABLE under load. sysbench oltp_read_write runs
# at 8 threads on one table; in the middle, `ALTER TABLE sbtest1 ADD INDEX …`, then
# `ALTER TABLE sbtest1 ADD COLUMN …`, then `ALTER TABLE sbtest1 FORCE, LOCK=NONE` (a
# whole-table rebuild) run from another connection. The same run against MariaDB 10.11.
# For each ALTER it reports how long it took, the tps before it (the mean of the seconds
# before), the tps while it ran, and the goal: zero sysbench errors and tps during the
# ALTER at least half the tps before it. A plot of tps per second, with the
# ALTERs marked in the text, goes to bench/results/online-ddl-plots/.
#
# Usage: bench/online-ddl.sh [ROWS=1000000] [SECONDS=150] [QUIRE_BINARY]
#   (the binary defaults to a fresh release build of this checkout). Ports 3421 and 3422.
# It appends a dated section to bench/results/online-ddl.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
secs=${2:-150}
bin=${3:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p quire
  bin=${CARGO_TARGET_DIR:-target}/release/quire
fi
export QUIRE_BIN=$bin
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
WORK=$(mktemp -d /tmp/quire-online.XXXXXX)
QP=3421
MP=3422
. bench/lib-servers.sh
SB_PID=
trap 'if [ -n "$SB_PID" ]; then kill "$SB_PID" 2>/dev/null || true; fi; stop_quire; stop_mariadb' EXIT
ensure_tools
out=bench/results/online-ddl.md
plots=bench/results/online-ddl-plots
mkdir -p "$plots"
stamp=$(date -u +%Y%m%d-%H%M)

now() { date +%s.%N; }

one() { # name port
  local name=$1 port=$2
  sql "$port" "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
    --mysql-user=root --mysql-db=sbtest --tables=1 --table-size="$rows" prepare >/dev/null
  sql "$port" "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
  local series="$WORK/$name.series" events="$WORK/$name.events"
  : >"$events"
  local t0
  t0=$(now)
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
    --mysql-user=root --mysql-db=sbtest --tables=1 --table-size="$rows" --threads=8 \
    --time="$secs" --report-interval=1 run >"$series" 2>&1 &
  SB_PID=$!
  sleep $((secs / 4))
  local a b
  a=$(now)
  sql "$port" "ALTER TABLE sbtest.sbtest1 ADD INDEX ix_pad (pad), ALGORITHM=INPLACE, LOCK=NONE" \
    >"$WORK/$name.alter1" 2>&1 && r1=ok || r1="error: $(tr '\n' ' ' <"$WORK/$name.alter1")"
  b=$(now)
  echo "add_index $a $b $r1" >>"$events"
  sleep $((secs / 6))
  a=$(now)
  # Both run this instantly (a catalog change); LOCK is left to the server.
  sql "$port" "ALTER TABLE sbtest.sbtest1 ADD COLUMN extra INT" \
    >"$WORK/$name.alter2" 2>&1 && r2=ok || r2="error: $(tr '\n' ' ' <"$WORK/$name.alter2")"
  b=$(now)
  echo "add_column $a $b $r2" >>"$events"
  sleep $((secs / 8))
  a=$(now)
  # A whole-table rebuild, online in both (InnoDB's INPLACE rebuild; Quire's online
  # rebuild: docs/online-ddl.md, "Table rebuilds").
  sql "$port" "ALTER TABLE sbtest.sbtest1 FORCE, LOCK=NONE" \
    >"$WORK/$name.alter3" 2>&1 && r3=ok || r3="error: $(tr '\n' ' ' <"$WORK/$name.alter3")"
  b=$(now)
  echo "rebuild $a $b $r3" >>"$events"
  wait "$SB_PID" || true
  SB_PID=
  echo "t0 $t0" >>"$events"
  cp "$series" "$plots/$stamp-$name.txt"
}

start_quire $QP
one quire $QP
stop_quire
start_mariadb $MP
one mariadb $MP
stop_mariadb

python3 bench/plot.py "$plots/$stamp.svg" "oltp_read_write, 8 threads, ALTER TABLE in the middle" \
  "Quire=$WORK/quire.series" "MariaDB=$WORK/mariadb.series"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$WORK" "$rows" "$secs" "$commit" "$plots/$stamp.svg" "$(nproc)" >>"$out" <<'PY'
import datetime, re, sys
work, rows, secs, commit, svg, cores = sys.argv[1:7]
LINE = re.compile(r"\[\s*(\d+)s\s*\].*?tps:\s*([\d.]+)")
print()
print(f"## Online ALTER TABLE under oltp_read_write, {datetime.date.today().isoformat()}")
print()
print(f"sysbench oltp_read_write, 8 threads, 1 table x {rows} rows, {secs} s, "
      f"flush_log_at_trx_commit=2, release build of {commit}, {cores} cores (shared). "
      f"Plot: `{svg}`. Goal per ALTER: zero sysbench errors, tps during >= half the tps before.")
print()
print("| server | ALTER | result | seconds | tps before | tps during | during/before | sysbench errors | goal |")
print("|---|---|---|---|---|---|---|---|---|")
for name in ("quire", "mariadb"):
    pts = []
    text = open(f"{work}/{name}.series", errors="replace").read()
    for line in text.splitlines():
        m = LINE.search(line)
        if m:
            pts.append((int(m.group(1)), float(m.group(2))))
    errs = re.search(r"ignored errors:\s+(\d+)", text)
    errors = int(errs.group(1)) if errs else -1
    fatal = "FATAL" in text
    events = {}
    t0 = 0.0
    for line in open(f"{work}/{name}.events"):
        parts = line.split(None, 3)
        if parts[0] == "t0":
            t0 = float(parts[1])
        else:
            events[parts[0]] = (float(parts[1]), float(parts[2]), parts[3].strip() if len(parts) > 3 else "")
    for what, (a, b, result) in events.items():
        a, b = a - t0, b - t0
        before = [t for s, t in pts if s <= a and s > a - 10]
        during = [t for s, t in pts if a < s <= b + 1]
        tb = sum(before) / len(before) if before else 0.0
        td = sum(during) / len(during) if during else 0.0
        ratio = td / tb if tb else 0.0
        ok = result == "ok" and errors == 0 and not fatal and ratio >= 0.5
        print(f"| {name} | {what} | {result} | {b - a:.1f} | {tb:.1f} | {td:.1f} | {ratio:.2f} | "
              f"{'FATAL' if fatal else errors} | {'met' if ok else 'MISSED'} |")
PY
echo "wrote $out"
