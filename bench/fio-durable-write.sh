#!/usr/bin/env bash
# The durable-write floor of this machine: one 4 KiB O_DIRECT+O_DSYNC write at queue depth 1
# (the cost of one commit without group commit), over blocks that have been written before.
# Installs fio if it is missing.
#
# Two measurements, one after the other on the same file system:
# - "append": fio's default, a file it fallocates and then writes for the first time. Each
#   durable write into an unwritten extent also commits the extent's conversion to the file
#   system's journal, so on ext4 this is the slow case (docs/redo-log.md, "Pre-writing the
#   first lap"). Until 2026-11-30 this was the only measurement, and the floor.
# - "overwrite": the same writes over a file fio has written in full first (--overwrite=1).
#   A database log writes like this once its file has been written (Quire pre-writes its
#   log's first lap; PostgreSQL zero-fills its WAL segments), so this is the floor: the
#   first line, the one other scripts parse, reports it.
# Usage: bench/fio-durable-write.sh [DIR] [SECONDS]
set -euo pipefail
dir=${1:-${TMPDIR:-/tmp}}
secs=${2:-10}
if ! command -v fio >/dev/null; then
  apt-get update -qq && apt-get install -y -qq fio >/dev/null
fi
f="$dir/quire-fio-durable.$$"
out=$(mktemp)
trap 'rm -f "$f" "$out" "$out.append"' EXIT
run() { # overwrite(0|1) output
  rm -f "$f"
  fio --name=durable-write --filename="$f" --size=256M --rw=write --bs=4k --direct=1 --sync=1 \
      --overwrite="$1" --ioengine=psync --iodepth=1 --numjobs=1 --time_based --runtime="$secs" \
      --output-format=json >"$2"
}
run 1 "$out"
run 0 "$out.append"
python3 - "$out" "$out.append" <<'PY'
import json, sys
def job(path):
    w = json.load(open(path))["jobs"][0]["write"]
    return w["iops"], w["clat_ns"]["mean"] / 1000, w["clat_ns"]["percentile"]["99.000000"] / 1000
iops, mean, p99 = job(sys.argv[1])
print(f"fio durable 4KiB O_DIRECT+O_DSYNC overwrite, QD1: {iops:.0f} writes/s, "
      f"mean {mean:.0f} us, p99 {p99:.0f} us")
iops, mean, p99 = job(sys.argv[2])
print(f"  (the same as appends into fresh fallocated blocks: {iops:.0f} per second, "
      f"mean {mean:.0f} us, p99 {p99:.0f} us)")
PY
