#!/usr/bin/env bash
# Issue 14, "purge must never make DML wait", on the purge seed's shape
# (../shared/seeds/purge-vs-dml-contention.txt): quire bench update-index on a table of 1
# row with a secondary index, 1 session, flush_log_at_trx_commit=2. One run of this script
# measures background purge off (the reference, before and after the others, since the
# machine is shared), then on at every innodb_purge_batch_size the seed tried, and checks
# the goal on each: Innodb_row_lock_waits stays 0, tps at least half of the purge-off tps,
# history below 10,000. It appends a dated section to bench/results/purge-seed.md (the
# older sections stay).
# Usage: bench/purge-no-wait.sh [SECONDS] [QUIRE_BINARY [LABEL]]
#   (default 15 s per run; the binary defaults to a fresh release build of this checkout;
#   LABEL, for another binary, names it in the section's title and text)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-15}
bin=${2:-}
label=${3:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p quire
  bin=${CARGO_TARGET_DIR:-target}/release/quire
fi
out=bench/results/purge-seed.md
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
run() { # tag, then extra quire bench arguments
  local tag=$1
  shift
  local line
  line=$("$bin" bench update-index --rows 1 --threads 1 --seconds "$secs" \
    --set innodb_flush_log_at_trx_commit=2 "$@" 2>/dev/null | tail -1)
  echo "tag=$tag $line" | tee -a "$raw"
}
run purge-off --set innodb_purge_threads=0
run batch-auto --set innodb_purge_threads=1
for b in 1 127 128 129 1000; do
  run "batch-$b" --set innodb_purge_threads=1 --set innodb_purge_batch_size=$b
done
run purge-off --set innodb_purge_threads=0
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$label" ]; then commit=$label; fi
python3 - "$raw" "$secs" "$commit" "$label" "$@" >> "$out" <<'PY'
import datetime, shlex, sys, textwrap
raw, secs, commit, label = sys.argv[1:5]
command = shlex.join(["bench/purge-no-wait.sh", *sys.argv[5:]])
runs = [dict(p.split("=", 1) for p in l.split() if "=" in p) for l in open(raw) if l.strip()]
off = [float(r["tps"]) for r in runs if r["tag"] == "purge-off"]
ref = sum(off) / len(off)
print()
if label:
    print(f"## The purge seed with one session: {label}, {datetime.date.today().isoformat()}")
    text = f"The same runs with another binary ({label})."
else:
    print(f"## No row locks in purge (issue 14), {datetime.date.today().isoformat()}")
    text = ("Purge takes no row lock any more: it decides every removal under the leaf latch, "
            "from the record itself (docs/purge.md).")
text += (f" One session, 1 row, flush_log_at_trx_commit=2, {secs} s per run, "
         + ("" if label else f"release build of {commit}, ")
         + "the 2-core shared machine. Purge off was run first and last, and \"vs off\" is "
         "tps over their mean. The goal: lock waits 0, at least half the purge-off tps, "
         "history max below 10,000, at every batch setting.")
print()
print(textwrap.fill(text, 90))
print()
print(f"Command: `{command}`")
print()
print("| run | innodb_purge_threads | innodb_purge_batch_size | tps | vs off | Innodb_row_lock_waits | history max | history at end | goal |")
print("|---|---|---|---|---|---|---|---|---|")
for r in runs:
    tps = float(r["tps"])
    on = r["purge_threads"] != "0"
    ok = (not on) or (r["lock_waits"] == "0" and tps >= ref / 2 and int(r["history_max"]) < 10000)
    goal = "met" if ok else "MISSED"
    if not on:
        goal = "reference"
    print(f"| {r['tag']} | {r['purge_threads']} | {r['purge_batch_size'] if on else '-'} | {r['tps']} | "
          f"{tps / ref:.2f} | {r['lock_waits']} | {r['history_max']} | {r['history_end']} | {goal} |")
print()
print("Raw summary lines:")
print()
print("```")
for l in open(raw):
    print(l.rstrip())
print("```")
PY
echo "appended to $out"
