#!/usr/bin/env bash
# The durable-write floor of this machine: one 4 KiB O_DIRECT+O_DSYNC append at queue depth 1
# (the cost of one commit without group commit). Installs fio if it is missing.
# Usage: bench/fio-durable-write.sh [DIR] [SECONDS]
set -euo pipefail
dir=${1:-${TMPDIR:-/tmp}}
secs=${2:-10}
if ! command -v fio >/dev/null; then
  apt-get update -qq && apt-get install -y -qq fio >/dev/null
fi
f="$dir/quire-fio-durable.$$"
out=$(mktemp)
trap 'rm -f "$f" "$out"' EXIT
fio --name=durable-append --filename="$f" --size=256M --rw=write --bs=4k --direct=1 --sync=1 \
    --ioengine=psync --iodepth=1 --numjobs=1 --time_based --runtime="$secs" \
    --output-format=json >"$out"
python3 - "$out" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["jobs"][0]["write"]
c = w["clat_ns"]
print(f"fio durable 4KiB O_DIRECT+O_DSYNC append, QD1: {w['iops']:.0f} writes/s, "
      f"mean {c['mean']/1000:.0f} us, p99 {c['percentile']['99.000000']/1000:.0f} us")
PY
