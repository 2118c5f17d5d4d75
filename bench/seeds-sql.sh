#!/usr/bin/env bash
# The seeds in their own SQL form, Quire against MariaDB 10.11 in the same run (one run per
# cell; bench/suite.sh runs the same seeds RUNS times, interleaved, into suite.md):
#   1. the writebench (lesson 1): CREATE TABLE t1 (8 × CHAR(255)); INSERT … SELECT seq FROM
#      seq_1_to_N; FLUSH TABLES t1 FOR EXPORT; UNLOCK TABLES; DROP TABLE, doublewrite ON and
#      OFF, with SHOW GLOBAL STATUS LIKE 'Innodb_d%_writes' before and after;
#   2. 1000 × CREATE TABLE and DROP TABLE through the mariadb client (lesson 5);
#   3. the purge seed (lesson 4): oltp_update_index, 1 table × 1 row, 1 thread, flush 2, at
#      innodb_purge_batch_size 127, 129 and 1000, Innodb_history_list_length every second.
#   bench/seeds-sql.sh [ROWS=1000000] [PURGE_SECONDS=30] [OUT=bench/results/seeds-sql.md]
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
psecs=${2:-30}
out=${3:-bench/results/seeds-sql.md}
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
WORK=$(mktemp -d /tmp/quire-seeds.XXXXXX)
# SEEDS_PORTS="QUIRE MARIADB" moves the servers off the usual ports.
read -r QP MP <<<"${SEEDS_PORTS:-3327 3328}"
. bench/lib-servers.sh
trap 'stop_quire; stop_mariadb' EXIT
ensure_tools

writebench() { seed_writebench "$1" "$rows"; }
create_tables() { seed_create_tables "$1" 1000; }

purge_seed() { # port -> "tps history_max"
  local p=$1 opts hist
  opts=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$p" --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=1)
  sql "$p" "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  sysbench oltp_update_index "${opts[@]}" prepare >/dev/null
  hist=$(mktemp)
  ( for _ in $(seq 1 "$psecs"); do status "$p" Innodb_history_list_length >>"$hist" 2>/dev/null || true; sleep 1; done ) &
  local sampler=$!
  local tps
  tps=$(sysbench oltp_update_index "${opts[@]}" --threads=1 --time="$psecs" run |
        awk '/transactions:/ {gsub(/\(/,"",$3); print $3}')
  wait $sampler || true
  echo "$tps $(sort -n "$hist" | tail -1)"
  rm -f "$hist"
}

{
  echo "# The seeds in SQL: Quire against MariaDB 10.11"
  echo
  echo "Command: \`bench/seeds-sql.sh $rows $psecs\` ($(date -u +%Y-%m-%d), $(nproc) cores). Same run, buffer pool"
  echo "$((POOL >> 20)) MiB and redo log $((LOG >> 20)) MiB on both; MariaDB with --no-defaults; one run per cell."
  echo
  echo "## Writebench, $rows rows (lesson 1)"
  echo
  echo "Counters: Quire's Innodb_data_writes counts write system calls (adjacent pages go in one"
  echo "pwritev), MariaDB's counts page writes; Innodb_pages_written counts pages on both. Row sizes"
  echo "differ: Quire stores CHAR values without their trailing spaces (variable length), InnoDB"
  echo "stores a utf8mb4 CHAR(255) in at least 255 bytes, so MariaDB writes far more pages here."
  echo
  echo "| engine | doublewrite | seconds | Innodb_data_writes | Innodb_pages_written | Innodb_dblwr_writes |"
  echo "|---|---|---|---|---|---|"
} >"$out"
for dw in ON OFF; do
  if [ $dw = ON ]; then
    start_quire $QP; start_mariadb $MP
  else
    start_quire $QP --set innodb_doublewrite=OFF; start_mariadb $MP --skip-innodb-doublewrite
  fi
  read -r s d g w <<<"$(writebench $QP)"; echo "| Quire | $dw | $s | $d | $g | $w |" | tee -a "$out"
  read -r s d g w <<<"$(writebench $MP)"; echo "| MariaDB | $dw | $s | $d | $g | $w |" | tee -a "$out"
  stop_quire; stop_mariadb
done
{
  echo
  echo "## 1000 × CREATE TABLE and DROP TABLE through the mariadb client (lesson 5)"
  echo
  echo "| engine | create s | drop s |"
  echo "|---|---|---|"
} >>"$out"
start_quire $QP; start_mariadb $MP
read -r c d <<<"$(create_tables $QP)"; echo "| Quire | $c | $d |" | tee -a "$out"
read -r c d <<<"$(create_tables $MP)"; echo "| MariaDB | $c | $d |" | tee -a "$out"
stop_quire; stop_mariadb
{
  echo
  echo "## The purge seed: oltp_update_index, 1 row, 1 thread, flush 2, ${psecs} s (lesson 4)"
  echo
  echo "| innodb_purge_batch_size | Quire tps | Quire history max | MariaDB tps | MariaDB history max |"
  echo "|---|---|---|---|---|"
} >>"$out"
for b in 127 129 1000; do
  start_quire $QP --set innodb_flush_log_at_trx_commit=2 --set innodb_purge_batch_size=$b
  start_mariadb $MP --innodb-flush-log-at-trx-commit=2 --innodb-purge-batch-size=$b
  read -r qt qh <<<"$(purge_seed $QP)"
  read -r mt mh <<<"$(purge_seed $MP)"
  echo "| $b | $qt | $qh | $mt | $mh |" | tee -a "$out"
  stop_quire; stop_mariadb
done
echo "wrote $out"
