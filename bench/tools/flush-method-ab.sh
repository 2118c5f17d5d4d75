#!/bin/bash
# A/B of innodb_flush_method (the default, a write then fdatasync, against O_DSYNC, one
# system call) on the durable single-thread commit row of bench/suite.sh: oltp_update_index,
# 1 × 1 row, 1 thread, flush 1, 3 alternating 15 s runs each, the fsync floor before and after.
#   bench/tools/flush-method-ab.sh [BIN]
BIN=${1:-target/release/quire}; PORT=${AB_PORT:-3448}
mkdir -p /tmp/ab
S="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest"
bash "$(dirname "$0")/../fio-durable-write.sh" /tmp 10
for i in 1 2 3; do
  for m in default O_DSYNC; do
    D=/tmp/ab/ds; rm -rf $D
    extra=""; [ $m = O_DSYNC ] && extra="--set innodb_flush_method=O_DSYNC"
    $BIN serve --data-dir $D --port $PORT --set innodb_buffer_pool_size=1073741824 --set innodb_log_file_size=1073741824 --set innodb_flush_log_at_trx_commit=1 $extra > /tmp/ab/ds.log 2>&1 &
    P=$!
    for j in $(seq 1 100); do mariadb -h 127.0.0.1 -P $PORT -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
    mariadb -h 127.0.0.1 -P $PORT -u root -e "create database sbtest"
    sysbench oltp_update_index $S --tables=1 --table-size=1 prepare >/dev/null
    echo "$m run $i: $(sysbench oltp_update_index $S --tables=1 --table-size=1 --threads=1 --time=15 run | awk '/transactions:/ {print $3}') tps"
    kill $P; wait $P 2>/dev/null
  done
done
bash "$(dirname "$0")/../fio-durable-write.sh" /tmp 10
