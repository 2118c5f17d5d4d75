#!/usr/bin/env bash
# The seeds in their own SQL form, Quire against MariaDB 10.11 in the same run:
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
QP=3327
MP=3328
. bench/lib-servers.sh
trap 'stop_quire; stop_mariadb' EXIT
ensure_tools

status() { # port name -> value
  sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'
}

writebench() { # port -> "seconds data_writes pages_written dblwr_writes"
  local p=$1
  sql "$p" "DROP DATABASE IF EXISTS wb; CREATE DATABASE wb"
  local d0 w0 g0 t0 t1
  d0=$(status "$p" Innodb_data_writes)
  g0=$(status "$p" Innodb_pages_written)
  w0=$(status "$p" Innodb_dblwr_writes)
  t0=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root wb <<SQL
CREATE TABLE t1 (
 a BIGINT PRIMARY KEY,
 b CHAR(255) NOT NULL DEFAULT '',
 c CHAR(255) NOT NULL DEFAULT '',
 d CHAR(255) NOT NULL DEFAULT '',
 e CHAR(255) NOT NULL DEFAULT '',
 f CHAR(255) NOT NULL DEFAULT '',
 g CHAR(255) NOT NULL DEFAULT '',
 h CHAR(255) NOT NULL DEFAULT ''
) ENGINE=InnoDB;
INSERT INTO t1 (a) SELECT seq FROM seq_1_to_$rows;
FLUSH TABLES t1 FOR EXPORT;
UNLOCK TABLES;
DROP TABLE t1;
SQL
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') $(( $(status "$p" Innodb_data_writes) - d0 )) $(( $(status "$p" Innodb_pages_written) - g0 )) $(( $(status "$p" Innodb_dblwr_writes) - w0 ))"
}

create_tables() { # port -> "create_seconds drop_seconds"
  local p=$1 c d t0 t1 t2
  sql "$p" "DROP DATABASE IF EXISTS ct; CREATE DATABASE ct"
  c=$(mktemp) d=$(mktemp)
  for i in $(seq 1 1000); do echo "CREATE TABLE t$i (a INT PRIMARY KEY, b INT, c VARCHAR(100), KEY(b));"; done >"$c"
  for i in $(seq 1 1000); do echo "DROP TABLE t$i;"; done >"$d"
  t0=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root ct <"$c"
  t1=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root ct <"$d"
  t2=$(date +%s.%N)
  rm -f "$c" "$d"
  awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "%.2f %.2f\n", b - a, c - b}'
}

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
