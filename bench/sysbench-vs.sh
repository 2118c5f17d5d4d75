#!/usr/bin/env bash
# A first side-by-side: Quire against MariaDB 10.11 in the same run, same sysbench options,
# same buffer pool and redo log sizes, rows interleaved so drift hits both alike.
#   bench/sysbench-vs.sh [SECONDS=30] [OUT=bench/results/sysbench-first-look.md]
# Rows: oltp_point_select, oltp_update_index, oltp_read_write at 1 and 8 threads, with
# innodb_flush_log_at_trx_commit 1 and 2 (SET GLOBAL on both). Tables: 4 × 100k rows
# (update_index also 1 table × 1 row, the purge seed's shape).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
out=${2:-bench/results/sysbench-first-look.md}
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
WORK=$(mktemp -d /tmp/quire-vs.XXXXXX)
QP=3317
MP=3318
. bench/lib-servers.sh
trap 'stop_quire; stop_mariadb' EXIT
ensure_tools
start_quire $QP
start_mariadb $MP

prepare() { # port tables size
  sql "$1" "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables="$2" --table-size="$3" prepare >/dev/null
}

run() { # port workload threads tables size -> "tps p95"
  sysbench "$2" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables="$4" --table-size="$5" --threads="$3" --time="$secs" \
    --report-interval=0 --percentile=95 run 2>&1 |
    awk '/transactions:/ {gsub(/\(/,"",$3); t=$3} /queries:/ && !/performed/ && t=="" {gsub(/\(/,"",$3); q=$3}
         /95th percentile:/ {p=$3} END {if (t=="" || t+0==0) t=q; printf "%s %s\n", t, p}'
}

{
  echo "# sysbench: Quire against MariaDB 10.11, first look"
  echo
  echo "Command: \`bench/sysbench-vs.sh $secs\` ($(date -u +%Y-%m-%d), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg))."
  echo "Same run, same sysbench 1.0.20 options, buffer pool $((POOL >> 20)) MiB and redo log $((LOG >> 20)) MiB on both;"
  echo "MariaDB $(/usr/sbin/mariadbd --version | awk '{print $3}') with --no-defaults; Quire \`$quire_bin\` (release)."
  echo "Each cell is one run of ${secs} s; tps (p95 ms). Ratio = Quire / MariaDB."
  echo
  echo "| workload | tables × rows | threads | flush | Quire tps (p95) | MariaDB tps (p95) | ratio |"
  echo "|---|---|---|---|---|---|---|"
} >"$out"

for shape in "oltp_point_select 4 100000" "oltp_update_index 4 100000" "oltp_update_index 1 1" "oltp_read_write 4 100000"; do
  set -- $shape
  w=$1 tables=$2 size=$3
  prepare $QP "$tables" "$size"
  prepare $MP "$tables" "$size"
  for flush in 1 2; do
    sql $QP "SET GLOBAL innodb_flush_log_at_trx_commit = $flush"
    sql $MP "SET GLOBAL innodb_flush_log_at_trx_commit = $flush"
    for t in 1 8; do
      q=$(run $QP "$w" "$t" "$tables" "$size")
      m=$(run $MP "$w" "$t" "$tables" "$size")
      qt=${q% *} qp=${q#* } mt=${m% *} mp=${m#* }
      ratio=$(awk -v a="$qt" -v b="$mt" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
      echo "| $w | $tables × $size | $t | $flush | $qt ($qp) | $mt ($mp) | $ratio |" | tee -a "$out"
    done
  done
done
echo >>"$out"
echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$out"
echo "wrote $out"
