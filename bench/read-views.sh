#!/usr/bin/env bash
# Issue 15's read-only path: sysbench oltp_read_only against two Quire binaries, before
# and after a change, at 1 and 8 threads, runs alternating (order flipped each round) so
# drift and the neighbours' load hit both alike. Both servers run for the whole script,
# each on its own data directory, prepared once.
#   bench/read-views.sh BEFORE_BIN AFTER_BIN [SECONDS=30] [ROUNDS=3] [OUT=bench/results/read-views.md]
# Prints one line per run; appends the table to OUT (tps, p95 ms).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?before binary}
after=${2:?after binary}
secs=${3:-30}
rounds=${4:-3}
out=${5:-bench/results/read-views.md}
POOL=${POOL:-536870912}
LOG=${LOG:-268435456}
TABLES=4
SIZE=100000
WORK=$(mktemp -d /tmp/quire-views.XXXXXX)
BP=3411
AP=3412

start() { # bin port name: sets PID
  mkdir -p "$WORK/$3"
  "$1" serve --data-dir "$WORK/$3/data" --port "$2" \
    --set innodb_buffer_pool_size="$POOL" --set innodb_log_file_size="$LOG" \
    >>"$WORK/$3/serve.log" 2>&1 &
  PID=$!
}
wait_port() {
  for _ in $(seq 1 600); do
    mariadb -h 127.0.0.1 -P "$1" -u root -e "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server on port $1 did not start" >&2
  return 1
}
sql() { mariadb -h 127.0.0.1 -P "$1" -u root -N -e "$2"; }
opts() { # port
  echo --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables=$TABLES --table-size=$SIZE
}

start "$before" $BP before
BPID=$PID
start "$after" $AP after
APID=$PID
trap 'kill -TERM $BPID $APID 2>/dev/null; wait $BPID $APID 2>/dev/null || true; rm -rf "$WORK"' EXIT
wait_port $BP
wait_port $AP
for p in $BP $AP; do
  sql $p "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  # shellcheck disable=SC2046
  sysbench oltp_common $(opts $p) prepare >/dev/null
done

run() { # port threads -> "tps p95"
  # shellcheck disable=SC2046
  sysbench oltp_read_only $(opts "$1") --threads="$2" --time="$secs" --report-interval=0 \
    --percentile=95 run 2>&1 |
    awk '/transactions:/ {gsub(/\(/,"",$3); t=$3} /95th percentile:/ {p=$3}
         END {printf "%s %s\n", t, p}'
}

declare -A res
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for t in 1 8; do
  for r in $(seq 1 "$rounds"); do
    order="before after"
    [ $((r % 2)) -eq 0 ] && order="after before"
    for which in $order; do
      port=$BP
      [ "$which" = after ] && port=$AP
      x=$(run $port "$t")
      res[$which,$t,$r]=$x
      echo "threads=$t round=$r $which: tps p95 = $x (load $(cut -d' ' -f1 /proc/loadavg))"
    done
  done
done
mutex_uses=$(sql $AP "SHOW GLOBAL STATUS LIKE 'quire_read_view_mutex_uses'" | awk '{print $2}')
views_open=$(sql $AP "SHOW GLOBAL STATUS LIKE 'quire_read_views_open'" | awk '{print $2}')

{
  echo
  echo "## oltp_read_only, $TABLES × $SIZE rows, ${secs} s per run ($(date -u +%Y-%m-%d))"
  echo
  echo "Command: \`bench/read-views.sh $before $after $secs $rounds\`; $(nproc) cores shared with other"
  echo "work (load average before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)). Buffer pool"
  echo "$((POOL >> 20)) MiB, redo log $((LOG >> 20)) MiB; both servers up for the whole run, runs"
  echo "alternating. Each cell: tps (p95 ms) of one run."
  echo
  printf "| threads | binary |"
  for r in $(seq 1 "$rounds"); do printf " run %s |" "$r"; done
  echo " median tps |"
  printf "|---|---|"
  for _ in $(seq 1 "$rounds"); do printf -- "---|"; done
  echo "---|"
  for t in 1 8; do
    for which in before after; do
      printf "| %s | %s |" "$t" "$which"
      tps=()
      for r in $(seq 1 "$rounds"); do
        x=${res[$which,$t,$r]}
        printf " %s (%s) |" "${x% *}" "${x#* }"
        tps+=("${x% *}")
      done
      med=$(printf "%s\n" "${tps[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
      echo " $med |"
    done
  done
  echo
  echo "After the runs, the after-binary's \`quire_read_view_mutex_uses\` = $mutex_uses"
  echo "(views that took the mutex, whole server life, prepare included), \`quire_read_views_open\` = $views_open."
} | tee -a "$out"
