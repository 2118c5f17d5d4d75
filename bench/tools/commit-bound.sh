#!/usr/bin/env bash
# What bounds durable single-thread commits on this machine: the fsync floor (fio), the
# round trip of the cheapest statement (sysbench oltp_point_select, 1 row, 1 thread), and
# oltp_update_index on 1 row at 1 thread with innodb_flush_log_at_trx_commit 1 and 2,
# alternating, RUNS runs of SECS seconds each, on one fresh `quire serve`.
# A commit costs about a round trip plus a durable write, so a server reaches about
# 1 / (1/point_select + 1/floor) commits per second (an estimate, not a strict bound: the
# floor is fio's 4 KiB write measured before the runs, a redo write may be smaller, and the
# machine's speed drifts between measurements).
#   bench/tools/commit-bound.sh BIN [RUNS=2] [SECS=10]
set -euo pipefail
for t in mariadb:mariadb-client sysbench:sysbench; do
  command -v "${t%%:*}" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${t#*:}" >/dev/null; }
done
BIN=$1 RUNS=${2:-2} SECS=${3:-10}
PORT=${PORT:-3465}
D=$(mktemp -d /tmp/quire-commit-bound.XXXXXX)
floor=$(bash "$(dirname "$0")/../fio-durable-write.sh" "$D" 10 | awk '{for (i=1;i<=NF;i++) if ($i=="writes/s,") print $(i-1)}')
"$BIN" serve --data-dir "$D/data" --port "$PORT" --set innodb_buffer_pool_size=1073741824 \
  --set innodb_log_file_size=1073741824 >"$D/serve.log" 2>&1 &
P=$!
trap 'kill $P 2>/dev/null; wait $P 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 1 100); do mariadb -h 127.0.0.1 -P "$PORT" -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h 127.0.0.1 -P "$PORT" -u root -e "create database sbtest"
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=1)
sysbench oltp_common "${SB[@]}" prepare >/dev/null
tps() { sysbench "$1" "${SB[@]}" --threads=1 --time="$SECS" run | awk '/transactions:/ {gsub("\\(","",$3); print $3}'; }
ps_all="" f1_all="" f2_all=""
for i in $(seq 1 "$RUNS"); do
  ps=$(tps oltp_point_select)
  mariadb -h 127.0.0.1 -P "$PORT" -u root -e "set global innodb_flush_log_at_trx_commit=1"
  f1=$(tps oltp_update_index)
  mariadb -h 127.0.0.1 -P "$PORT" -u root -e "set global innodb_flush_log_at_trx_commit=2"
  f2=$(tps oltp_update_index)
  echo "run $i: point_select $ps/s, update_index flush 1 $f1/s, flush 2 $f2/s"
  ps_all="$ps_all $ps" f1_all="$f1_all $f1" f2_all="$f2_all $f2"
done
python3 - "$floor" "$ps_all" "$f1_all" "$f2_all" <<'PY'
import statistics as st, sys
floor = float(sys.argv[1])
ps, f1, f2 = (st.median(map(float, a.split())) for a in sys.argv[2:5])
bound = 1 / (1 / ps + 1 / floor)
print(f"fsync floor {floor:.0f}/s ({1e6/floor:.0f} us); point_select {ps:.0f}/s ({1e6/ps:.0f} us a round trip)")
print(f"update_index flush 2 {f2:.0f}/s ({1e6/f2:.0f} us), flush 1 {f1:.0f}/s ({1e6/f1:.0f} us)")
print(f"estimate, a round trip + a durable write: {bound:.0f}/s = {bound/floor:.2f} of the floor; "
      f"flush 1 reaches {f1/floor:.2f} of the floor, {f1/bound:.2f} of the estimate")
print(f"0.80 of the floor leaves {1e6/(0.8*floor) - 1e6/floor:.0f} us a commit beyond the durable write; "
      f"the cheapest statement's round trip takes {1e6/ps:.0f} us")
PY
