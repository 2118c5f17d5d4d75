#!/usr/bin/env bash
# Step 10's side-by-side: Quire, MariaDB 10.11 and PostgreSQL 15 in one run, identical
# sysbench 1.0.20 options, the same memory and log budget (POOL bytes of buffer pool /
# shared_buffers; LOG bytes of redo log, and max_wal_size = 2 × LOG for PostgreSQL), each on
# a private data directory (--no-defaults for MariaDB). Engines are interleaved run by run,
# so the machine's drift hits all three alike; each cell is run RUNS times (median, range).
#
#   bench/suite.sh [--quick] [--runs N] [--seconds S] [--only REGEX] [--io-bound] [--out FILE]
#                  [--seeds-only | --no-seeds]
#
#   --quick       each cell once for 10 s, the I/O-bound row left out, the seeds small
#                 (the estimated time is printed at the start)
#   --io-bound    include the I/O-bound row in --quick too (its prepare loads 8 × 1M rows)
#   --only RE     sysbench rows whose name matches RE (e.g. 'update_index')
#   --seeds-only  only the seed workloads (bench/suite-seeds.sh); --no-seeds: only the rows
#
# After the sysbench rows, the seed workloads through SQL, Quire against MariaDB, RUNS times
# per cell, interleaved (bench/suite-seeds.sh): the writebench with doublewrite ON and OFF,
# 1000 × CREATE/DROP TABLE, the purge cliff by innodb_purge_batch_size, crash recovery at
# 1.3 GB of checkpoint age, and a slow shutdown after a long history.
#
# Writes OUT (bench/results/suite.md by default): every cell with median, range and p95, the
# ratio of Quire against the better of the other two, the goal of the row, and the load
# average around each cell; and bench/results/suite-plots/ROW-flushF.svg (the folder is OUT
# without .md, then -plots), tps over time of the last run of each engine. The flush column
# is innodb_flush_log_at_trx_commit for Quire and MariaDB, and synchronous_commit on (1) /
# off (2) for PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

args="$*"
runs=3
secs=30
only=.
io_bound=1
quick=0
rows_on=1
seeds_on=1
out=bench/results/suite.md
while [ $# -gt 0 ]; do
  case $1 in
  --quick) runs=1 secs=10 io_bound=${io_bound_forced:-0} quick=1 ;;
  --io-bound) io_bound=1 io_bound_forced=1 ;;
  --runs) runs=$2; shift ;;
  --seconds) secs=$2; shift ;;
  --only) only=$2; shift ;;
  --out) out=$2; shift ;;
  --seeds-only) rows_on=0 ;;
  --no-seeds) seeds_on=0 ;;
  *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

POOL=${POOL:-1073741824}
# The rows change POOL (the I/O-bound row's is smaller); the seeds run with this one.
SUITE_POOL=$POOL
LOG=${LOG:-1073741824}
WORK=$(mktemp -d /tmp/quire-suite.XXXXXX)
chmod 755 "$WORK"
# SUITE_PORTS="QUIRE MARIADB PG" moves the servers off the usual ports.
read -r QP MP PP <<<"${SUITE_PORTS:-3361 3362 3363}"
plots=${out%.md}-plots
mkdir -p "$plots" "$WORK/series"
. bench/lib-servers.sh
. bench/suite-seeds.sh
trap 'stop_quire; stop_mariadb; stop_pg' EXIT
ensure_tools
[ "$rows_on" = 1 ] && ensure_pg

engines=(quire mariadb pg)
declare -A port=([quire]=$QP [mariadb]=$MP [pg]=$PP)
declare -A label=([quire]=Quire [mariadb]="MariaDB 10.11" [pg]="PostgreSQL 15")

sb_conn() { # engine -> sysbench connection options
  case $1 in
  pg) echo "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PP --pgsql-user=sbtest --pgsql-db=sbtest" ;;
  *) echo "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=${port[$1]} --mysql-user=root --mysql-db=sbtest" ;;
  esac
}

start_all() { # pool bytes
  POOL=$1
  start_quire $QP
  start_mariadb $MP
  start_pg $PP
}

stop_all() {
  stop_quire
  stop_mariadb
  stop_pg
}

prepare() { # engine tables size
  case $1 in
  pg)
    pgsql $PP "DROP DATABASE IF EXISTS sbtest" >/dev/null
    pgsql $PP "CREATE DATABASE sbtest OWNER sbtest" >/dev/null ;;
  *) sql "${port[$1]}" "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest" ;;
  esac
  # shellcheck disable=SC2046
  sysbench oltp_common $(sb_conn "$1") --tables="$2" --table-size="$3" --threads=4 prepare >"$WORK/prepare-$1.log" 2>&1 ||
    { echo "prepare failed on $1:"; tail -5 "$WORK/prepare-$1.log"; exit 1; }
}

set_flush() { # engine 1|2
  case $1 in
  pg)
    local v=on
    [ "$2" = 2 ] && v=off
    pgsql $PP "ALTER SYSTEM SET synchronous_commit = $v" >/dev/null
    pgsql $PP "SELECT pg_reload_conf()" >/dev/null ;;
  *) sql "${port[$1]}" "SET GLOBAL innodb_flush_log_at_trx_commit = $2" ;;
  esac
}

run_cell() { # engine workload tables size threads series-file -> "tps p95 errors"
  # shellcheck disable=SC2046
  sysbench "$2" $(sb_conn "$1") --tables="$3" --table-size="$4" --threads="$5" --time="$secs" \
    --report-interval=1 --percentile=95 run >"$6" 2>&1 || true
  awk '/transactions:/ {gsub(/\(/,"",$3); t=$3} /queries:/ && !/performed/ {gsub(/\(/,"",$3); q=$3}
       /95th percentile:/ {p=$3} /ignored errors:/ {e=$3}
       END {if (t=="" || t+0==0) t=q; if (t=="") t=0; if (p=="") p="-"; if (e=="") e=0; printf "%s %s %s\n", t, p, e}' "$6"
}

stats() { # values... -> "median min max"
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.0f %.0f %.0f\n", m, v[1], v[NR]}'
}

# name workload tables size threads pool goal
rows=(
  "update_index_1row_1t oltp_update_index 1 1 1 $POOL 2.0"
  "update_index_1row_8t oltp_update_index 1 1 8 $POOL 1.5"
  "update_non_index oltp_update_non_index 4 100000 16 $POOL 1.5"
  "point_select oltp_point_select 4 100000 4 $POOL 1.5"
  "read_only oltp_read_only 4 100000 8 $POOL 1.5"
  "read_write oltp_read_write 4 100000 8 $POOL 1.5"
  "write_only oltp_write_only 4 100000 8 $POOL 1.5"
  "insert oltp_insert 4 100000 8 $POOL 1.5"
)
# The I/O-bound row: 8 × 1M rows (about 2 GB in each engine) with a quarter of that as pool.
[ "$io_bound" = 1 ] && rows+=("io_bound_read_write oltp_read_write 8 1000000 16 536870912 1.5")

seeds_defaults
n_rows=0 est=0
if [ "$rows_on" = 1 ]; then
  for r in "${rows[@]}"; do
    [[ ${r%% *} =~ $only ]] || continue
    n_rows=$((n_rows + 1))
    # The I/O-bound row's prepare loads 8 × 1M rows in each engine: ~5 minutes each.
    [[ $r == io_bound* ]] && est=$((est + 900))
  done
fi
# A rough estimate: each cell plus ~3 s of start-up, a prepare of ~30 s per row and engine,
# and the seeds' own estimate.
est=$((est + n_rows * (2 * runs * 3 * (secs + 3) + 90)))
RUNS=$runs
[ "$seeds_on" = 1 ] && est=$((est + $(seeds_estimate)))
echo "bench/suite.sh: about $((est / 60)) minutes (sysbench rows: $n_rows, seeds: $([ "$seeds_on" = 1 ] && echo yes || echo no)); writing $out"

{
  echo "# The side-by-side suite: Quire, MariaDB 10.11, PostgreSQL 15"
  echo
  echo "Command: \`bench/suite.sh $args\` with runs=$runs, ${secs} s per run ($(date -u +%Y-%m-%d), $(nproc) cores,"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)). sysbench $(sysbench --version | awk '{print $2}'),"
  echo "MariaDB $(/usr/sbin/mariadbd --version | awk '{print $3}') (--no-defaults), PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}'),"
  echo "Quire \`$quire_bin\`. Buffer pool / shared_buffers $((POOL >> 20)) MiB (the I/O-bound row: 512 MiB),"
  echo "redo log $((LOG >> 20)) MiB, PostgreSQL max_wal_size $((2 * LOG >> 20)) MiB."
} >"$out"
if [ "$rows_on" = 1 ]; then
  {
    echo
    echo "Each cell: median tps [min–max over $runs runs] (p95 ms of the last run). Ratio: Quire's median over the"
    echo "better of the other two medians. Flush 1 / 2: innodb_flush_log_at_trx_commit, and for PostgreSQL"
    echo "synchronous_commit on / off. Plots of tps over time: $plots/."
    echo
    echo "| row | workload | tables × rows | threads | flush | Quire | MariaDB | PostgreSQL | ratio | goal | load |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
  } >>"$out"
else
  rows=()
fi

# The machine's fsync floor, in the same run (the goal of durable single-thread commits is
# measured against it): before the rows and after them, on the file system of the data
# directories. The higher of the two is the floor the ratio is taken against.
fsync_floor() { # -> writes/s
  bench/fio-durable-write.sh "$WORK" 10 | tee -a "$WORK/fio.txt" | awk '{for (i=1;i<=NF;i++) if ($i=="writes/s,") print $(i-1)}'
}
floor0=
q1t=
[ "$rows_on" = 1 ] && floor0=$(fsync_floor)
current_pool=
for r in "${rows[@]}"; do
  # shellcheck disable=SC2086
  set -- $r
  name=$1 w=$2 tables=$3 size=$4 threads=$5 pool=$6 goal=$7
  [[ $name =~ $only ]] || continue
  if [ "$pool" != "$current_pool" ]; then
    stop_all
    start_all "$pool"
    current_pool=$pool
  fi
  echo "== $name: prepare $tables × $size"
  for e in "${engines[@]}"; do prepare "$e" "$tables" "$size"; done
  for flush in 1 2; do
    for e in "${engines[@]}"; do set_flush "$e" "$flush"; done
    declare -A tps=() p95=() errs=()
    load0=$(cut -d' ' -f1 /proc/loadavg)
    for i in $(seq 1 "$runs"); do
      for e in "${engines[@]}"; do
        res=$(run_cell "$e" "$w" "$tables" "$size" "$threads" "$WORK/series/$name-$flush-$e.txt")
        # shellcheck disable=SC2086
        set -- $res
        tps[$e]="${tps[$e]:-} $1"
        p95[$e]=$2
        errs[$e]=$(( ${errs[$e]:-0} + ${3%%.*} ))
        echo "   $name flush=$flush run $i ${label[$e]}: $1 tps, p95 $2 ms, $3 errors"
      done
    done
    load1=$(cut -d' ' -f1 /proc/loadavg)
    declare -A med=()
    cells=()
    for e in "${engines[@]}"; do
      # shellcheck disable=SC2086
      read -r m lo hi <<<"$(stats ${tps[$e]})"
      med[$e]=$m
      cell="$m [$lo–$hi] (${p95[$e]})"
      [ "${errs[$e]}" -gt 0 ] && cell="$cell, ${errs[$e]} errors"
      cells+=("$cell")
    done
    [ "$name" = update_index_1row_1t ] && [ "$flush" = 1 ] && q1t=${med[quire]}
    ratio=$(awk -v q="${med[quire]}" -v a="${med[mariadb]}" -v b="${med[pg]}" \
      'BEGIN { best = (a > b) ? a : b; if (best > 0) printf "%.2f", q / best; else print "-" }')
    met=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r != "-" && r + 0 >= g + 0) ? "met" : "not met" }')
    echo "| $name | $w | $tables × $size | $threads | $flush | ${cells[0]} | ${cells[1]} | ${cells[2]} | $ratio | ≥ $goal: $met | $load0 → $load1 |" | tee -a "$out"
    python3 bench/plot.py "$plots/$name-flush$flush.svg" "$name ($w, $tables × $size, $threads threads, flush $flush)" \
      "Quire=$WORK/series/$name-$flush-quire.txt" "MariaDB=$WORK/series/$name-$flush-mariadb.txt" \
      "PostgreSQL=$WORK/series/$name-$flush-pg.txt"
  done
done
if [ "$rows_on" = 1 ]; then
  stop_all
  floor1=$(fsync_floor)
  {
    echo
    echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "**The fsync floor** (\`bench/fio-durable-write.sh $WORK 10\`: one 4 KiB O_DIRECT+O_DSYNC write at"
    echo "queue depth 1 over blocks written before, on the file system of the data directories): $floor0 writes/s before the rows,"
    echo "$floor1 after them."
    if [ -n "$q1t" ]; then
      awk -v q="$q1t" -v a="$floor0" -v b="$floor1" 'BEGIN { f = (a > b) ? a : b;
        r = q / f; printf "Durable single-thread commits (update_index_1row_1t, flush 1, Quire'"'"'s median) against the\nhigher floor: %.0f / %.0f = %.2f; goal ≥ 0.80: %s.\n", q, f, r, (r >= 0.80) ? "met" : "not met" }'
    fi
  } >>"$out"
fi
if [ "$seeds_on" = 1 ]; then
  OUT=$out PLOTS=$plots POOL=$SUITE_POOL
  run_seeds
fi
# The data directories take gigabytes; the logs and series stay in WORK.
rm -rf "$WORK/quire/data" "$WORK/mariadb/data" "$WORK/pg/data"
echo "wrote $out (logs and series in $WORK)"
