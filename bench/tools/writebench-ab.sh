#!/bin/bash
# The suite's writebench (1M rows, doublewrite ON, 1 GiB pool and log) on two Quire builds and
# MariaDB 10.11, all three servers up at once and the runs interleaved round by round, so the
# machine's drift hits them alike. Prints the seconds of each run.
#   bench/tools/writebench-ab.sh BIN_A BIN_B [ROUNDS=5]
set -u
[ -x /usr/sbin/mariadbd ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null; }
cd "$(dirname "$0")/../.."
source bench/lib-servers.sh
A=$1; B=$2; ROUNDS=${3:-5}
POOL=1073741824; LOG=1073741824
ROOT=${AB_ROOT:-/tmp/ab/writebench}
WORK=$ROOT/a; rm -rf "$WORK"; mkdir -p "$WORK"; quire_bin=$A; start_quire 3401; PA=$QUIRE_PID
WORK=$ROOT/b; rm -rf "$WORK"; mkdir -p "$WORK"; quire_bin=$B; start_quire 3402; PB=$QUIRE_PID
WORK=$ROOT/m; rm -rf "$WORK"; mkdir -p "$WORK"; start_mariadb 3403
for r in $(seq 1 "$ROUNDS"); do
  a=$(seed_writebench 3401 1000000 | cut -d' ' -f1)
  b=$(seed_writebench 3402 1000000 | cut -d' ' -f1)
  m=$(seed_writebench 3403 1000000 | cut -d' ' -f1)
  echo "round $r: A $a  B $b  MariaDB $m"
done
kill "$PA" "$PB"; stop_mariadb; wait "$PA" "$PB" 2>/dev/null
