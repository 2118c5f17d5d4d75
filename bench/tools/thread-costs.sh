#!/bin/bash
# Where the CPU of one statement goes, by thread kind: a release build serves a sysbench
# workload on a fresh copy of the prepared data directory (bench/tools/ab-server.sh prepare
# BIN makes /tmp/ab/seed: sbtest, 4 × 100k rows), and for SECS seconds in the middle of the
# run this prints, per statement the server answered (Questions), the context switches and
# the user and system CPU of each kind of server thread (sessions, purge, page cleaner, …)
# and of the sysbench client. The machine's two cores bound tps at
# 2 / (all the CPU of one transaction), so this shows how much of a transaction's CPU the
# server's own code is, and how much the kernel and the client are.
#
#   bench/tools/thread-costs.sh BIN WORKLOAD THREADS FLUSH [SECS]
set -u
BIN=$1; W=$2; T=$3; F=$4; S=${5:-10}; PORT=${TC_PORT:-3447}
D=/tmp/ab/tc-run; rm -rf $D; cp -a /tmp/ab/seed $D
$BIN serve --data-dir $D --port $PORT --set innodb_buffer_pool_size=1073741824 \
  --set innodb_log_file_size=1073741824 --set innodb_flush_log_at_trx_commit=$F >/tmp/ab/tc-serve.log 2>&1 &
P=$!
for i in $(seq 1 100); do mariadb -h 127.0.0.1 -P $PORT -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
# Per thread name without its number: "kind switches utime stime" (clock ticks).
snap() {
  for d in /proc/$P/task/*; do
    n=$(cat $d/comm)
    echo "${n%%-[0-9]*} $(awk '/ctxt_switches/ {s+=$2} END {print s}' $d/status) $(awk '{print $14, $15}' $d/stat)"
  done
  for d in /proc/$SB/task/*; do
    echo "sysbench $(awk '/ctxt_switches/ {s+=$2} END {print s}' $d/status) $(awk '{print $14, $15}' $d/stat)"
  done
}
sum() { awk '{c[$1]+=$2; u[$1]+=$3; s[$1]+=$4} END {for (k in c) print k, c[k], u[k], s[k]}' | sort; }
questions() { mariadb -h 127.0.0.1 -P $PORT -u root -N -e "show global status like 'Questions'" | cut -f2; }
sysbench $W --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest \
  --tables=4 --table-size=100000 --threads=$T --time=$((S + 4)) run >/tmp/ab/tc-sb.txt 2>&1 &
SB=$!
sleep 2
snap | sum >/tmp/ab/tc.0; q0=$(questions)
sleep $S
snap | sum >/tmp/ab/tc.1; q1=$(questions)
wait $SB
kill $P; wait $P 2>/dev/null
n=$((q1 - q0 - 1))
tick=$(getconf CLK_TCK)
echo "$W threads=$T flush=$F: $(awk '/transactions:/ {gsub(/\(/,"",$3); print $3}' /tmp/ab/tc-sb.txt) tps, $n statements in ${S} s"
join /tmp/ab/tc.0 /tmp/ab/tc.1 | awk -v n=$n -v t=$tick '
  { cs = ($5 - $2) / n; u = ($6 - $3) * 1e6 / t / n; s = ($7 - $4) * 1e6 / t / n; U += u; Sy += s
    printf "%-16s switches/stmt %.3f  user us/stmt %6.2f  system us/stmt %6.2f\n", $1, cs, u, s }
  END { printf "%-16s                      user us/stmt %6.2f  system us/stmt %6.2f\n", "all", U, Sy }'
