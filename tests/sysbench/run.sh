#!/usr/bin/env bash
# sysbench 1.0.20, unchanged, against a running server: every oltp_* workload at 1 and 8
# threads (prepare, run, cleanup). A workload passes if prepare, run and cleanup exit 0 and
# ignored errors (deadlocks, lock wait timeouts) stay at most 0.5% of transactions.
#
#   tests/sysbench/run.sh PORT [SECONDS] [TABLE_SIZE]
#
# Prints "N passed, N failed" last.
set -uo pipefail
port=${1:?port}
secs=${2:-3}
size=${3:-10000}
host=127.0.0.1
db=sbtest
mariadb -h "$host" -P "$port" -u root -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db" || exit 1
base_opts=(--db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user=root
           --mysql-db="$db" --table-size="$size")
workloads=(oltp_read_only oltp_read_write oltp_write_only oltp_point_select oltp_update_index
           oltp_update_non_index oltp_insert oltp_delete select_random_points select_random_ranges)
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for w in "${workloads[@]}"; do
  for t in 1 8; do
    name="$w threads=$t"
    # select_random_* support one table only.
    case $w in select_random_*) common=("${base_opts[@]}" --tables=1) ;; *) common=("${base_opts[@]}" --tables=2) ;; esac
    if ! sysbench "$w" "${common[@]}" prepare >"$log" 2>&1; then
      echo "FAIL $name: prepare"; tail -5 "$log" | cut -c1-400; fail=$((fail + 1))
      sysbench "$w" "${common[@]}" cleanup >/dev/null 2>&1
      continue
    fi
    if ! sysbench "$w" "${common[@]}" --threads="$t" --time="$secs" --report-interval=0 run >"$log" 2>&1; then
      echo "FAIL $name: run"; tail -8 "$log" | cut -c1-400; fail=$((fail + 1))
      sysbench "$w" "${common[@]}" cleanup >/dev/null 2>&1
      continue
    fi
    tx=$(awk '/transactions:/ {print $2; exit}' "$log")
    q=$(awk '/queries:/ && !/performed/ {print $2; exit}' "$log")
    ign=$(awk '/ignored errors:/ {print $3; exit}' "$log")
    tps=$(awk '/transactions:/ {gsub(/\(/,"",$3); print $3; exit}' "$log")
    # Workloads without transactions (point_select, ...) count events as queries.
    base=${tx:-0}
    [ "$base" -gt 0 ] 2>/dev/null || base=${q:-0}
    if [ "${base:-0}" -le 0 ]; then
      echo "FAIL $name: no transactions"; tail -20 "$log" | cut -c1-400; fail=$((fail + 1))
    elif [ $(( ${ign:-0} * 200 )) -gt "$base" ]; then
      echo "FAIL $name: $ign ignored errors in $base transactions (over 0.5%)"; fail=$((fail + 1))
    else
      echo "ok   $name: $base transactions, $tps per sec, ${ign:-0} ignored errors"; pass=$((pass + 1))
    fi
    if ! sysbench "$w" "${common[@]}" cleanup >"$log" 2>&1; then
      echo "FAIL $name: cleanup"; tail -5 "$log" | cut -c1-400; fail=$((fail + 1))
    fi
  done
done
echo "sysbench: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
