#!/bin/bash
# A/B of two server builds on one sysbench workload: per run, a fresh copy of a prepared
# data directory, then tps, and the server's context switches and CPU time (utime + stime)
# divided by the statements it answered (Questions), which move less than tps on a noisy
# machine. Alternate the builds: for i in 1 2 3; do ab-server.sh A a …; ab-server.sh B b …; done
#
#   bench/tools/ab-server.sh prepare BIN          # /tmp/ab/seed: sbtest, 4 × 100k rows
#   bench/tools/ab-server.sh BIN LABEL WORKLOAD THREADS FLUSH [SECS]
set -u
mkdir -p /tmp/ab
if [ "$1" = prepare ]; then
  rm -rf /tmp/ab/seed
  "$2" serve --data-dir /tmp/ab/seed --port ${AB_PORT:-3443} >/tmp/ab/prep.log 2>&1 &
  P=$!
  for i in $(seq 1 100); do mariadb -h 127.0.0.1 -P ${AB_PORT:-3443} -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb -h 127.0.0.1 -P ${AB_PORT:-3443} -u root -e "create database sbtest"
  sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=${AB_PORT:-3443} --mysql-user=root \
    --mysql-db=sbtest --tables=4 --table-size=100000 --threads=4 prepare >/dev/null
  kill $P; wait $P
  exit 0
fi
BIN=$1; L=$2; W=$3; T=$4; F=$5; S=${6:-20}
D=/tmp/ab/run; rm -rf $D; cp -a /tmp/ab/seed $D
$BIN serve --data-dir $D --port ${AB_PORT:-3443} --set innodb_buffer_pool_size=1073741824 --set innodb_log_file_size=1073741824 --set innodb_flush_log_at_trx_commit=$F > /tmp/ab/serve.log 2>&1 &
P=$!
for i in $(seq 1 100); do mariadb -h 127.0.0.1 -P ${AB_PORT:-3443} -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
cs() { t=0; for f in /proc/$P/task/*/status; do v=$(awk '/ctxt_switches/ {s+=$2} END {print s}' $f 2>/dev/null); t=$((t+${v:-0})); done; echo $t; }
cpu() { awk '{print $14+$15}' /proc/$P/stat; }
sysbench $W --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=${AB_PORT:-3443} --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000 --threads=$T --time=$((S+4)) run > /tmp/ab/sb.txt 2>&1 &
SB=$!
sleep 2; c0=$(cs); u0=$(cpu); q0=$(mariadb -h 127.0.0.1 -P ${AB_PORT:-3443} -u root -N -e "show global status like 'Questions'" | cut -f2)
sleep $S; c1=$(cs); u1=$(cpu); q1=$(mariadb -h 127.0.0.1 -P ${AB_PORT:-3443} -u root -N -e "show global status like 'Questions'" | cut -f2)
wait $SB
kill $P; wait $P 2>/dev/null
tps=$(awk '/transactions:/ {gsub(/\(/,"",$3); print $3}' /tmp/ab/sb.txt)
n=$((q1-q0-1))
echo "$L $W t=$T f=$F tps=$tps stmts=$n cs/stmt=$(echo "scale=2; ($c1-$c0)/$n" | bc) cpu_us/stmt=$(echo "scale=1; ($u1-$u0)*10000/$n" | bc) load=$(cut -d' ' -f1 /proc/loadavg)"
