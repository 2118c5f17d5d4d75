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
#   bench/recovery-speed.sh time DIR ROUNDS BINARY...
#       for each round, each cache state and each binary: copy DIR to DIR.run, sync, drop the
#       page cache for "cold" (needs root), open it with `BINARY bench commit --seconds 1`
#       and print recovery's "done in" line and the process's maximum resident size.
set -euo pipefail

quire_flags=(--set innodb_log_file_size=4294967296 --set innodb_buffer_pool_size=4294967296
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
  sed -n '2,17p' "$0"
  exit 2
  ;;
esac
