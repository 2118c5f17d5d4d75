#!/usr/bin/env bash
# quire bench update-index and update-non-index (sysbench's oltp_update_index and
# oltp_update_non_index shapes through the embedded API) at 1, 4 and 16 threads, at
# innodb_flush_log_at_trx_commit 1 and 2, 10000 rows, into bench/results/update.md.
# Usage: bench/update.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
cargo build --release -q -p quire
out=bench/results/update.md
plots=bench/results/update-plots
raw=$(mktemp)
err=$(mktemp)
trap 'rm -f "$raw" "$err"' EXIT
for w in update-index update-non-index; do
  for flush in 1 2; do
    for t in 1 4 16; do
      # A setting the engine rejects (or any failed run) becomes a "rejected: <error>" row.
      if line=$(./target/release/quire bench "$w" --threads "$t" --seconds "$secs" --rows 10000 \
        --set innodb_flush_log_at_trx_commit=$flush --out "$plots/flush$flush" \
        2>"$err" | tail -1); then
        echo "$line" | tee -a "$raw"
      else
        echo "workload=$w threads=$t flush_log_at_trx_commit=$flush rejected=$(tail -1 "$err" | tr '|' '/')" | tee -a "$raw"
      fi
    done
  done
done
{
  echo "# quire bench update-index / update-non-index"
  echo
  echo "sysbench's shapes through the embedded transaction API: one REPEATABLE READ transaction"
  echo "per UPDATE by primary key of a random row of 10000 (update-index: k = k + 1, k indexed;"
  echo "update-non-index: c = a new 120-character string). Background purge on (1 thread,"
  echo "automatic batch size). Measured $(date -u +%F) on the 2-core shared machine, release build."
  echo
  echo "Command: \`bench/update.sh $secs\`"
  echo
  echo "| workload | flush_log_at_trx_commit | threads | tps | p95 ms | p99 ms | history max | errors | deadlocks | lock timeouts |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  python3 - "$raw" <<'PY'
import sys
for line in open(sys.argv[1]):
    # "rejected=<error>" is the last field and may hold spaces and '='.
    line, _, rejected = line.partition(" rejected=")
    kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
    if rejected:
        kv["rejected"] = rejected.strip()
    if "workload" not in kv:
        continue
    if "rejected" in kv:
        print(f"| {kv['workload']} | {kv['flush_log_at_trx_commit']} | {kv['threads']} | "
              f"rejected: {kv['rejected']} | | | | | | |")
        continue
    print(f"| {kv['workload']} | {kv['flush_log_at_trx_commit']} | {kv['threads']} | {kv['tps']} | "
          f"{kv['p95_ms']} | {kv['p99_ms']} | {kv['history_max']} | {kv.get('errors', '')} | {kv['deadlocks']} | {kv['lock_timeouts']} |")
PY
  echo
  echo "Per-second tps and history length: \`update-plots/flush{1,2}/<workload>-<threads>t.{csv,svg}\`."
  echo
  echo "Raw summary lines:"
  echo
  echo '```'
  cat "$raw"
  echo '```'
} > "$out"
echo "wrote $out"
