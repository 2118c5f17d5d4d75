#!/usr/bin/env bash
# CPU per transaction of each engine and of the sysbench client, for one sysbench row of
# bench/suite.sh: Quire, MariaDB 10.11 and PostgreSQL 15 started as the suite starts them
# (bench/lib-servers.sh: private data directories, the same pool and log), the row run
# once per engine, and the user and system CPU time of the server's processes (all of
# PostgreSQL's backends) and of sysbench divided by the transactions. On this 2-core
# machine tps can be at most 2 s / (all the CPU of one transaction), so this says how much
# of the gap between two engines their own code can close: the client's share and the
# kernel's are paid by all three.
#
#   bench/tools/engine-cpu.sh WORKLOAD TABLES ROWS THREADS FLUSH [SECONDS]
#   e.g. bench/tools/engine-cpu.sh oltp_write_only 4 100000 8 2 20
set -euo pipefail
cd "$(dirname "$0")/../.."
W=$1 TABLES=$2 ROWS=$3 THREADS=$4 FLUSH=$5 SECS=${6:-20}
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
WORK=$(mktemp -d /tmp/quire-engine-cpu.XXXXXX)
chmod 755 "$WORK"
read -r QP MP PP <<<"${CPU_PORTS:-3371 3372 3373}"
. bench/lib-servers.sh
trap 'stop_quire; stop_mariadb; stop_pg; rm -rf "$WORK/quire/data" "$WORK/mariadb/data" "$WORK/pg/data"' EXIT
ensure_tools
ensure_pg
[ -x /usr/bin/time ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null; }
tick=$(getconf CLK_TCK)

# "utime stime" in clock ticks, summed over the given processes and their threads, with
# the children they have reaped (PostgreSQL's postmaster reaps each backend when its
# client leaves, and the backend's CPU is counted in the postmaster's cutime and cstime).
ticks() { for p in "$@"; do awk '{print $14 + $16, $15 + $17}' "/proc/$p/stat" 2>/dev/null || true; done |
  awk '{u += $1; s += $2} END {print u + 0, s + 0}'; }
server_pids() {
  case $1 in
  quire) echo "$QUIRE_PID" ;;
  mariadb) echo "$MARIADB_PID" ;;
  pg) pgrep -u postgres -f "postgres" | tr '\n' ' ' ;;
  esac
}
conn() {
  case $1 in
  pg) echo "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PP --pgsql-user=sbtest --pgsql-db=sbtest" ;;
  quire) echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$QP --mysql-user=root --mysql-db=sbtest" ;;
  mariadb) echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$MP --mysql-user=root --mysql-db=sbtest" ;;
  esac
}

echo "$W, $TABLES × $ROWS rows, $THREADS threads, flush $FLUSH, $SECS s per engine ($(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '| engine | tps | server user µs/trx | server system µs/trx | sysbench user+system µs/trx | all µs/trx | 2 cores / all |\n'
printf '|---|---|---|---|---|---|---|\n'
for e in quire mariadb pg; do
  case $e in
  quire)
    start_quire "$QP" --set innodb_flush_log_at_trx_commit="$FLUSH"
    sql "$QP" "CREATE DATABASE sbtest" ;;
  mariadb)
    start_mariadb "$MP" --innodb-flush-log-at-trx-commit="$FLUSH"
    sql "$MP" "CREATE DATABASE sbtest" ;;
  pg)
    sc=on
    [ "$FLUSH" = 2 ] && sc=off
    start_pg "$PP" -c synchronous_commit=$sc
    pgsql "$PP" "CREATE DATABASE sbtest OWNER sbtest" >/dev/null ;;
  esac
  # shellcheck disable=SC2046
  sysbench oltp_common $(conn $e) --tables="$TABLES" --table-size="$ROWS" --threads=4 prepare >"$WORK/prepare-$e.log" 2>&1
  sleep 5
  # shellcheck disable=SC2046
  read -r su0 ss0 <<<"$(ticks $(server_pids $e))"
  # shellcheck disable=SC2046
  /usr/bin/time -f "%U %S" -o "$WORK/time-$e" sysbench "$W" $(conn $e) --tables="$TABLES" --table-size="$ROWS" \
    --threads="$THREADS" --time="$SECS" run >"$WORK/run-$e.log" 2>&1
  sleep 1 # the backends of the run's connections exit and are reaped
  # shellcheck disable=SC2046
  read -r su1 ss1 <<<"$(ticks $(server_pids $e))"
  n=$(awk '/transactions:/ {print $2}' "$WORK/run-$e.log")
  tps=$(awk '/transactions:/ {gsub(/\(/,"",$3); print $3}' "$WORK/run-$e.log")
  read -r cu cs <"$WORK/time-$e"
  awk -v e="$e" -v n="$n" -v tps="$tps" -v t="$tick" -v su=$((su1 - su0)) -v ss=$((ss1 - ss0)) -v cu="$cu" -v cs="$cs" 'BEGIN {
    u = su / t * 1e6 / n; s = ss / t * 1e6 / n; c = (cu + cs) * 1e6 / n; a = u + s + c
    printf "| %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.0f |\n", e, tps, u, s, c, a, 2e6 / a }'
  case $e in
  quire) stop_quire ;;
  mariadb) stop_mariadb ;;
  pg) stop_pg ;;
  esac
done
