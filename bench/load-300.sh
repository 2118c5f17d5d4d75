#!/usr/bin/env bash
# Issue 17, item 5: 300 connections running a mixed workload for 10 minutes. sysbench
# oltp_read_write at 300 threads (each thread one connection) on 8 tables of 10k rows, so
# that the threads meet on the same rows: deadlocks (1213) and lock wait timeouts (1205)
# are what the workload provokes, and sysbench is told to retry them; any other error stops
# sysbench and fails the run. Every 10 s the script samples the server's resident memory
# (VmRSS) and its thread count. It reports the tps per minute (flat over time?), the
# memory at the start and the end of the run and its peak, and writes a plot of tps per
# 10 s and a table to bench/results/load-300.md (appended, dated, with this command).
#
# Usage: bench/load-300.sh [SECONDS=600] [QUIRE_BINARY]
#   (the binary defaults to a fresh release build of this checkout). Port 3431.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
bin=${2:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p quire
  bin=${CARGO_TARGET_DIR:-target}/release/quire
fi
export QUIRE_BIN=$bin
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
THREADS=${THREADS:-300}
WORK=$(mktemp -d /tmp/quire-load300.XXXXXX)
PORT=3431
. bench/lib-servers.sh
SB_PID=
SAMPLER=
trap 'for p in $SB_PID $SAMPLER; do kill "$p" 2>/dev/null || true; done; stop_quire; rm -rf "$WORK"' EXIT
ensure_tools
out=bench/results/load-300.md
plots=bench/results/load-300-plots
mkdir -p "$plots"
stamp=$(date -u +%Y%m%d-%H%M)

start_quire "$PORT" --set max_connections=$((THREADS + 20))
# sysbench prepares about 60 statements per connection: 300 of them pass the default
# max_prepared_stmt_count (16382, as MariaDB's), which MariaDB would need raised too.
sql "$PORT" "SET GLOBAL max_prepared_stmt_count = 1000000"
sql "$PORT" "CREATE DATABASE sbtest"
sb=(sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT"
    --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=10000)
"${sb[@]}" --threads=8 prepare >"$WORK/prepare.log" 2>&1

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$QUIRE_PID/status"; }
threads() { awk '/^Threads:/ { print $2 }' "/proc/$QUIRE_PID/status"; }
# The engine's state beside the memory, to explain a change of pace: checkpoint age,
# history length, dirty pages.
engine_state() {
  mariadb -h 127.0.0.1 -P "$PORT" -u root -N -B -e "SHOW GLOBAL STATUS WHERE Variable_name IN
    ('Innodb_checkpoint_age', 'Innodb_history_list_length', 'Innodb_buffer_pool_pages_dirty')" \
    2>/dev/null | awk '{ printf "%s=%s ", $1, $2 }'
}
(
  t=0
  while kill -0 "$QUIRE_PID" 2>/dev/null; do
    echo "$t $(rss_kib) $(threads) $(engine_state)"
    sleep 10
    t=$((t + 10))
  done
) >"$WORK/mem.txt" &
SAMPLER=$!

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
set +e
"${sb[@]}" --threads="$THREADS" --time="$secs" --report-interval=10 \
  --mysql-ignore-errors=1213,1205 --rand-type=uniform run >"$WORK/run.txt" 2>&1 &
SB_PID=$!
wait "$SB_PID"
sb_status=$?
SB_PID=
set -e
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
kill "$SAMPLER" 2>/dev/null || true
SAMPLER=
alive=yes
kill -0 "$QUIRE_PID" 2>/dev/null || alive=no
cp "$WORK/run.txt" "$plots/$stamp-sysbench.txt"
cp "$WORK/mem.txt" "$plots/$stamp-memory.txt"
python3 bench/plot.py "$plots/$stamp-tps.svg" \
  "oltp_read_write, $THREADS connections, tps per 10 s" "Quire=$WORK/run.txt"

python3 - "$WORK/run.txt" "$WORK/mem.txt" "$out" "$stamp" "$THREADS" "$secs" "$sb_status" \
  "$alive" "$load_before" "$load_after" "$bin" <<'EOF'
import re, statistics, subprocess, sys
run, mem, out, stamp, threads, secs, status, alive, lb, la, binary = sys.argv[1:]
text = open(run, errors="replace").read()
pts = [(int(t), float(v)) for t, v in re.findall(r"\[\s*(\d+)s\s*\].*?tps:\s*([\d.]+)", text)]
errs = re.findall(r"\[\s*\d+s\s*\].*?err/s:?\s*([\d.]+)", text)
fatal = [l for l in text.splitlines() if "FATAL" in l or "error" in l.lower() and "ignored" not in l.lower() and "err/s" not in l]
ignored = re.search(r"ignored errors:\s*(\d+)", text)
total_tps = re.search(r"transactions:\s*\d+\s*\(([\d.]+) per sec", text)
p95 = re.search(r"95th percentile:\s*([\d.]+)", text)
mins = {}
for t, v in pts:
    mins.setdefault((t - 1) // 60, []).append(v)
per_min = [statistics.mean(v) for _, v in sorted(mins.items())]
m = [l.split() for l in open(mem) if l.strip()]
rss = [int(x[1]) // 1024 for x in m if len(x) >= 2 and x[1].isdigit()]
thr = [int(x[2]) for x in m if len(x) >= 3 and x[2].isdigit()]
commit = subprocess.run(["git", "log", "-1", "--format=%h", "--", "crates"], capture_output=True, text=True).stdout.strip()
flat = ""
if len(per_min) >= 3:
    mid = per_min[1:]
    lo, hi, mean = min(mid), max(mid), statistics.mean(mid)
    flat = f"after the first minute, the per-minute means stay within {100 * (hi - lo) / mean:.1f}% of their mean ({lo:.0f} to {hi:.0f} tps)"
lines = [
    f"\n## {stamp} (source at {commit}; a binary given on the command line may be older)\n",
    f"Command: `bash bench/load-300.sh {secs} {binary}` (oltp_read_write, {threads} threads = connections, 8 tables × 10k rows, pool and log 1 GiB, 1213/1205 retried by sysbench)\n",
    f"- sysbench exit status: {status} ({'no error other than the ignored ones' if status == '0' else 'FAILED'}); server alive at the end: {alive}",
    f"- mean tps {total_tps.group(1) if total_tps else '?'}, p95 latency {p95.group(1) if p95 else '?'} ms, ignored errors (1213/1205): {ignored.group(1) if ignored else '?'}",
    f"- tps per minute: {', '.join(f'{v:.0f}' for v in per_min)}",
    f"- {flat}" if flat else "- (too short to judge flatness)",
    f"- resident memory (MiB): at 10 s {rss[1] if len(rss) > 1 else '?'}, at the end {rss[-1] if rss else '?'}, peak {max(rss) if rss else '?'}; server threads peak {max(thr) if thr else '?'}",
    f"- machine load (1/5/15 min) before: {lb}; after: {la}",
    f"- plot: `load-300-plots/{stamp}-tps.svg`; raw: `load-300-plots/{stamp}-sysbench.txt`, `{stamp}-memory.txt`",
]
if fatal and status != "0":
    lines.append("- sysbench said: " + " | ".join(fatal[:5]))
with open(out, "a") as f:
    if f.tell() == 0:
        f.write("# 300 connections, 10 minutes (issue 17, item 5)\n\nEach section is one run of `bench/load-300.sh`, newest last.\n")
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
[ "$sb_status" = 0 ] && [ "$alive" = yes ]
