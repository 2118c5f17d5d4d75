#!/usr/bin/env bash
# Recovery speed (issue 14): make a crashed data directory with a lot of redo after its
# checkpoint, then time recovery of fresh copies of it with one or more quire binaries,
# alternating, with the OS page cache warm (as after kill -9) and cold (as after a reboot).
#
#   bench/recovery-speed.sh make DIR SECONDS [extra --set flags...]
#       runs `quire bench update-non-index --rows 400000 --threads 8` on DIR with a 4 GiB
#       log and a 4 GiB pool, flush_log_at_trx_commit=2, and kills it with SIGKILL after
#       SECONDS. The issue's run is 75 s with the default flushing (about 400 MiB of redo);
#       `--set innodb_adaptive_flushing=OFF --set innodb_io_capacity=100` lets the
#       checkpoint lag (about 2.3 GiB in 110 s).
#   bench/recovery-speed.sh make-server DIR [TARGET_BYTES]
#       the suite's recovery seed (bench/suite-seeds.sh) on Quire alone: `quire serve` with a
#       2 GiB log and a 1 GiB pool, flush 2, no adaptive flushing, 4 × 100,000 sysbench rows,
#       oltp_write_only at 16 threads until Innodb_checkpoint_age reaches TARGET_BYTES
#       (default 1300000000), then SIGKILL. Time it with LOG_BYTES=2147483648 (below).
#   [LOG_BYTES=N] bench/recovery-speed.sh time DIR ROUNDS BINARY...
#       for each round, each cache state and each binary: copy DIR to DIR.run, sync, drop the
#       page cache for "cold" (needs root), open it with `BINARY bench commit --seconds 1`
#       and print recovery's "done in" line and the process's maximum resident size.
set -euo pipefail

quire_flags=(--set innodb_log_file_size="${LOG_BYTES:-4294967296}" --set innodb_buffer_pool_size=4294967296
  --set innodb_flush_log_at_trx_commit=2)

case "${1:-}" in
make)
  dir=$2 secs=$3
  shift 3
  rm -rf "$dir"
  bin=${QUIRE:-target/release/quire}
  timeout -s KILL "$secs" "$bin" bench update-non-index --rows 400000 --threads 8 --seconds 100000 \
    --data-dir "$dir" "${quire_flags[@]}" "$@" >"$dir.make.log" 2>&1 || true
  tail -1 "$dir.make.log"
  du -sh "$dir"
  ;;
make-server)
  dir=$2 target=${3:-1300000000}
  bin=${QUIRE:-target/release/quire}
  port=${PORT:-3479}
  for t in mariadb:mariadb-client sysbench:sysbench; do
    command -v "${t%%:*}" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${t#*:}" >/dev/null; }
  done
  rm -rf "$dir"
  "$bin" serve --data-dir "$dir" --port "$port" --set innodb_buffer_pool_size=1073741824 \
    --set innodb_log_file_size=2147483648 --set innodb_flush_log_at_trx_commit=2 \
    --set innodb_adaptive_flushing=OFF --set innodb_max_dirty_pages_pct_lwm=0 >"$dir.make.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do mariadb -h 127.0.0.1 -P "$port" -u root -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb -h 127.0.0.1 -P "$port" -u root -e "create database sbtest"
  sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-db=sbtest
    --tables=4 --table-size=100000)
  sysbench oltp_common "${sb[@]}" --threads=4 prepare >/dev/null
  sysbench oltp_write_only "${sb[@]}" --threads=16 --time=0 run >"$dir.load.log" 2>&1 &
  load=$!
  t0=$SECONDS age=0
  while [ "${age:-0}" -lt "$target" ]; do
    sleep 1
    age=$(mariadb -h 127.0.0.1 -P "$port" -u root -N -e "show global status like 'Innodb_checkpoint_age'" | awk '{print $2}')
  done
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  kill "$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
  echo "killed at a checkpoint age of $age bytes after $((SECONDS - t0)) s of load"
  du -sh "$dir"
  ;;
time)
  dir=$2 rounds=$3
  shift 3
  for r in $(seq 1 "$rounds"); do
    for cache in warm cold; do
      for bin in "$@"; do
        rm -rf "$dir.run"
        cp -a --sparse=always "$dir" "$dir.run"
        sync
        if [ "$cache" = cold ]; then echo 3 >/proc/sys/vm/drop_caches; fi
        out=$( { /usr/bin/time -f "maxrss_kb=%M" "$bin" bench commit --seconds 1 --threads 1 \
          --data-dir "$dir.run" "${quire_flags[@]}" 2>&1; } | grep -a "recovery: \(done\|[0-9.]* MiB of redo\)\|maxrss_kb" || true)
        mib=$(grep -ao "recovery: [0-9.]* MiB" <<<"$out" | grep -o "[0-9.]*" | head -1 || true)
        done_s=$(grep -ao "done in [0-9.]* s" <<<"$out" | grep -o "[0-9.]*" | head -1 || true)
        phases=$(grep -ao "phases: .*" <<<"$out" | head -1 || true)
        rss=$(grep -ao "maxrss_kb=[0-9]*" <<<"$out" | cut -d= -f2 || true)
        echo "round=$r cache=$cache bin=$bin redo_mib=$mib done_s=$done_s maxrss_kb=$rss ${phases:-}"
      done
    done
  done
  rm -rf "$dir.run"
  ;;
*)
  sed -n '2,22p' "$0"
  exit 2
  ;;
esac
