#!/usr/bin/env bash
# The purge seed (../shared/seeds/purge-vs-dml-contention.txt), embedded: quire bench
# update-index on a table of 1 row with a secondary index, flush_log_at_trx_commit=2, at
# every purge batch setting, then with 8 threads and with 8 and 100 rows; then the time of
# a slow shutdown (innodb_fast_shutdown=0) after 1M transactions of history built with
# purge off. Writes bench/results/purge-seed.md and per-second series and plots (tps and
# history length) under bench/results/purge-seed-plots/.
# Usage: bench/purge-seed.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
cargo build --release -q -p quire
out=bench/results/purge-seed.md
plots=bench/results/purge-seed-plots
raw=$(mktemp)
err=$(mktemp)
trap 'rm -f "$raw" "$err"' EXIT
bin=./target/release/quire
# One run; a setting the engine rejects (or any failed run) becomes a "rejected: <error>"
# row instead of ending the script.
run() { # tag, then quire bench arguments
  local tag=$1
  shift
  local line
  if line=$("$bin" bench update-index --set innodb_flush_log_at_trx_commit=2 --out "$plots/$tag" "$@" 2>"$err" | tail -1); then
    echo "tag=$tag $line" | tee -a "$raw"
  else
    echo "tag=$tag rejected=$(tail -1 "$err" | tr '|' '/')" | tee -a "$raw"
  fi
}
for b in auto 1 127 128 129 1000; do
  if [ "$b" = auto ]; then
    run "batch-auto" --rows 1 --threads 1 --seconds "$secs"
  else
    run "batch-$b" --rows 1 --threads 1 --seconds "$secs" --set innodb_purge_batch_size=$b
  fi
done
run "8threads" --rows 1 --threads 8 --seconds "$secs"
for r in 8 100; do
  run "rows-$r" --rows "$r" --threads 1 --seconds "$secs"
  run "rows-$r-8threads" --rows "$r" --threads 8 --seconds "$secs"
done
# Slow shutdown: 1M transactions of history with purge off, then innodb_fast_shutdown=0.
run "slow-shutdown" --rows 1 --threads 1 --seconds 100000 --max-txns 1000000 \
  --set innodb_purge_threads=0 --set innodb_fast_shutdown=0
{
  echo "# The purge seed, embedded"
  echo
  echo "\`quire bench update-index --rows N\`: one table \`sbtest1\` with a secondary index on k;"
  echo "each transaction is \`UPDATE sbtest1 SET k = k + 1 WHERE id = ?\` (REPEATABLE READ),"
  echo "flush_log_at_trx_commit=2, background purge with 1 thread. The seed's InnoDB falls off a"
  echo "cliff at innodb_purge_batch_size=129 on a 1-row table; the question here is whether any"
  echo "setting makes history grow or tps sag. \"min tps\" is the slowest one-second interval."
  echo "Measured $(date -u +%F) on the 2-core shared machine, release build, ${secs} s per run."
  echo
  echo "Command: \`bench/purge-seed.sh $secs\`"
  echo
  echo "| run | rows | threads | innodb_purge_batch_size | tps | min tps (1 s) | p99 ms | history max | history at end |"
  echo "|---|---|---|---|---|---|---|---|---|"
  python3 - "$raw" <<'PY'
import sys
for line in open(sys.argv[1]):
    # "rejected=<error>" is the last field and may hold spaces and '='.
    line, _, rejected = line.partition(" rejected=")
    kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
    if rejected:
        kv["rejected"] = rejected.strip()
    if kv.get("tag") == "slow-shutdown":
        continue
    if "rejected" in kv:
        print(f"| {kv['tag']} | | | | rejected: {kv['rejected']} | | | | |")
        continue
    print(f"| {kv['tag']} | {kv['rows']} | {kv['threads']} | {kv['purge_batch_size']} | {kv['tps']} | "
          f"{kv['min_sec_tps']} | {kv['p99_ms']} | {kv['history_max']} | {kv['history_end']} |")
PY
  echo
  echo "## Slow shutdown"
  echo
  echo "1,000,000 update-index transactions on 1 row with \`innodb_purge_threads=0\` (no"
  echo "background purge, so all of it is history), then shutdown with \`innodb_fast_shutdown=0\`,"
  echo "which purges everything first."
  echo
  python3 - "$raw" <<'PY'
import sys
for line in open(sys.argv[1]):
    # "rejected=<error>" is the last field and may hold spaces and '='.
    line, _, rejected = line.partition(" rejected=")
    kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
    if rejected:
        kv["rejected"] = rejected.strip()
    if kv.get("tag") != "slow-shutdown":
        continue
    if "rejected" in kv:
        print(f"rejected: {kv['rejected']}")
        continue
    print(f"- transactions: {kv['commits']} in {kv['seconds']} s ({kv['tps']} tps)")
    print(f"- history at shutdown: {kv.get('shutdown_history', '?')}")
    print(f"- slow shutdown (purge of all of it, then the normal shutdown): **{kv.get('shutdown_s', '?')} s**")
PY
  echo
  echo "Per-second tps and history: \`purge-seed-plots/<run>/update-index-<threads>t.{csv,svg}\`."
  echo
  echo "Raw summary lines:"
  echo
  echo '```'
  cat "$raw"
  echo '```'
} > "$out"
echo "wrote $out"
