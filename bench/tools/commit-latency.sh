#!/usr/bin/env bash
# Single-thread durable commits through the server on a fresh data directory: sysbench
# oltp_update_index, 1 table × 1 row, 1 thread, innodb_flush_log_at_trx_commit=1, RUNS runs
# of SECS seconds back to back (the first lap of a new redo log is what this shows; see
# docs/redo-log.md, "Pre-writing the first lap").
#   bench/tools/commit-latency.sh BIN [LOG_BYTES] [RUNS] [SECS]
set -euo pipefail
for t in mariadb:mariadb-client sysbench:sysbench; do
  command -v "${t%%:*}" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${t#*:}" >/dev/null; }
done
BIN=$1 LOG=${2:-1073741824} RUNS=${3:-3} SECS=${4:-8}
PORT=${PORT:-3461}
D=$(mktemp -d /tmp/quire-commit-latency.XXXXXX)
"$BIN" serve --data-dir "$D/data" --port "$PORT" --set innodb_buffer_pool_size=1073741824 \
  --set innodb_log_file_size="$LOG" --set innodb_flush_log_at_trx_commit=1 >"$D/serve.log" 2>&1 &
P=$!
trap 'kill $P 2>/dev/null; wait $P 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 1 100); do mariadb -h 127.0.0.1 -P "$PORT" -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h 127.0.0.1 -P "$PORT" -u root -e "create database sbtest"
SB="sysbench oltp_update_index --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=1"
$SB prepare >/dev/null
for _ in $(seq 1 "$RUNS"); do
  $SB --threads=1 --time="$SECS" run | awk '/transactions:/ {gsub("\\(","",$3); print $3 " tps"}'
done
