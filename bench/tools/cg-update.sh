#!/bin/bash
# Instructions of server CPU per transaction, counted by callgrind (repeatable on a noisy
# machine, unlike tps): a release build serves 2,000 oltp_update_non_index transactions at
# 4 threads, 2 × 2,000 rows (or TEST: another sysbench OLTP test, e.g. oltp_insert). Prints
# the total and what malloc, free and realloc take.
#   bench/tools/cg-update.sh BIN LABEL [TEST]
for t in valgrind:valgrind mariadb:mariadb-client sysbench:sysbench; do
  command -v "${t%%:*}" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${t#*:}" >/dev/null; }
done
BIN=$1; L=$2; T=${3:-oltp_update_non_index}; P0=${CG_PORT:-3445}
D=/tmp/ab/cgrun; rm -rf $D /tmp/ab/cg.$L.*; mkdir -p $D
valgrind --tool=callgrind --callgrind-out-file=/tmp/ab/cg.$L.out $BIN serve --data-dir $D/data --port $P0 --set innodb_buffer_pool_size=268435456 > $D/serve.log 2>&1 &
P=$!
for i in $(seq 1 100); do mariadb -h 127.0.0.1 -P $P0 -u root -e "select 1" >/dev/null 2>&1 && break; sleep 1; done
mariadb -h 127.0.0.1 -P $P0 -u root -e "create database sbtest"
sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$P0 --mysql-user=root --mysql-db=sbtest --tables=2 --table-size=2000 --threads=1 prepare >/dev/null
callgrind_control -z $P >/dev/null
sysbench $T --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$P0 --mysql-user=root --mysql-db=sbtest --tables=2 --table-size=2000 --threads=4 --events=2000 --time=0 run >/dev/null
callgrind_control -d $P >/dev/null
kill $P; wait $P 2>/dev/null
f=$(ls -t /tmp/ab/cg.$L.out.* | head -1)
t=$(callgrind_annotate $f 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
m=$(callgrind_annotate --inclusive=yes $f 2>/dev/null | grep -E "(malloc.c:(malloc|free|realloc)|mi_malloc[a-z_]*|mi_free|mi_realloc[a-z_]*|mi_zalloc[a-z_]*) \[" | awk '{gsub(",","",$1); s+=$1} END {print s}')
echo "$L ($T): $((t/2000)) instructions per transaction, malloc+free+realloc inclusive $((m/2000))"
