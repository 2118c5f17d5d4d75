#!/usr/bin/env bash
# quire bench commit at 1, 4 and 16 threads, flush_log_at_trx_commit 1 and 2, plus the fio
# durable-write floor, into bench/results/commit.md. Usage: bench/commit.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
cargo build --release -q -p quire
out=bench/results/commit.md
raw=$(mktemp)
for flush in 1 2; do
  for t in 1 4 16; do
    ./target/release/quire bench commit --threads "$t" --seconds "$secs" --rows 1000 \
      --set innodb_flush_log_at_trx_commit=$flush --out bench/results/commit-plots \
      2>/dev/null | tail -1 | tee -a "$raw"
  done
done
floor=$(bench/fio-durable-write.sh "${TMPDIR:-/tmp}" "$secs")
{
  echo "# quire bench commit"
  echo
  echo "Each transaction is one mini-transaction changing 16 bytes of one of 1000 pages, then a"
  echo "commit that waits as innodb_flush_log_at_trx_commit says. Measured $(date -u +%F) on the"
  echo "2-core shared machine, release build, ext4 with O_DIRECT redo."
  echo
  echo "Command: \`bench/commit.sh $secs\`"
  echo
  echo "| flush_log_at_trx_commit | threads | tps | p95 ms | log fsyncs / commit |"
  echo "|---|---|---|---|---|"
  python3 - "$raw" <<'PY'
import sys
for line in open(sys.argv[1]):
    kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
    print(f"| {kv['flush_log_at_trx_commit']} | {kv['threads']} | {float(kv['tps']):.0f} | {kv['p95_ms']} | {kv['fsyncs_per_commit']} |")
PY
  echo
  echo "Durable-write floor on the same machine: $floor"
  echo
  echo "Raw summary lines:"
  echo
  echo '```'
  cat "$raw"
  echo '```'
} >"$out"
rm -f "$raw"
cat "$out"
