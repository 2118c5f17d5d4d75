#!/usr/bin/env bash
# Lesson 2: flushing paced by checkpoint age keeps a small redo log from filling, so commits
# never stall in a burst of "furious flushing". Runs `quire bench commit` with a log much
# smaller than the redo written, once with adaptive flushing from 10% of the log (the default)
# and once from 70% (the maximum), and writes bench/results/adaptive-flushing.md.
# Usage: bench/adaptive-flushing.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
cargo build --release -q -p quire
out=bench/results/adaptive-flushing.md
plots=bench/results/adaptive-flushing-plots
common=(--threads 8 --seconds "$secs" --rows 20000 --set innodb_log_file_size=32M
        --set innodb_buffer_pool_size=512M --set innodb_flush_log_at_trx_commit=2)
{
  echo "# Adaptive flushing by checkpoint age (lesson 2)"
  echo
  echo "\`quire bench commit\` with 8 threads over 20,000 pages (320 MiB, all in a 512 MiB pool),"
  echo "flush_log_at_trx_commit=2, and a 32 MiB redo log: the workload writes several times the"
  echo "log's size per run, so the checkpoint must keep moving. Measured $(date -u +%F) on the"
  echo "2-core shared machine. Command: \`bench/adaptive-flushing.sh $secs\`."
  echo
  for lwm in 10 70; do
    echo "## innodb_adaptive_flushing_lwm=$lwm"
    echo
    echo '```'
    mkdir -p "$plots/lwm$lwm"
    ./target/release/quire bench commit "${common[@]}" --set innodb_adaptive_flushing_lwm=$lwm \
      --out "$plots/lwm$lwm" 2>/dev/null
    echo '```'
    echo
  done
} >"$out"
cat "$out"
