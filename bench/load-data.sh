#!/usr/bin/env bash
# LOAD DATA LOCAL INFILE of a generated TSV of sysbench-shaped rows (id, k, c CHAR(120),
# pad CHAR(60)) into sbtest1 with its secondary index, Quire against MariaDB 10.11 in the
# same run, the same buffer pool and redo log sizes, each load timed by the mariadb client
# (wall clock, one statement, autocommit).
#
#   bench/load-data.sh [ROWS] [QUIRE_PORT] [MARIADB_PORT]     # 1000000 3422 3423
#
# Writes the table to stdout; bench/results/load-data.md keeps a run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
QPORT=${2:-3422}
MPORT=${3:-3423}
POOL=${POOL:-1073741824}
LOG=${LOG:-1073741824}
WORK=${WORK:-$(mktemp -d /tmp/quire-load-bench.XXXX)}
. bench/lib-servers.sh
ensure_tools
trap 'stop_quire; stop_mariadb' EXIT

file="$WORK/sbtest.tsv"
python3 - "$ROWS" "$file" <<'EOF'
import random, sys
rows, path = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(42)
def chunk(n):
    return "-".join("%011d" % rnd.randrange(10**11) for _ in range(n))
with open(path, "w") as f:
    for i in range(1, rows + 1):
        f.write(f"{i}\t{rnd.randrange(1, rows + 1)}\t{chunk(10)}\t{chunk(5)}\n")
EOF
bytes=$(stat -c %s "$file")

ddl="CREATE TABLE sbtest1 (id INT NOT NULL, k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '',
  PRIMARY KEY (id), KEY k_1 (k))"

load() { # port name
  sql "$1" "DROP DATABASE IF EXISTS loadbench; CREATE DATABASE loadbench"
  sql "$1" "USE loadbench; $ddl"
  local t0 t1 out
  t0=$(date +%s.%N)
  out=$(mariadb -h 127.0.0.1 -P "$1" -u root --local-infile=1 -vv loadbench \
    -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE sbtest1" 2>&1 | grep -E 'Records:|ERROR')
  t1=$(date +%s.%N)
  local secs count
  secs=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
  count=$(sql "$1" "SELECT COUNT(*) FROM loadbench.sbtest1")
  echo "| $2 | $ROWS | $count | $secs | $(python3 -c "print(int($ROWS / ($t1 - $t0)))") | $out |"
}

echo "file: $ROWS rows, $bytes bytes"
echo "| server | rows in file | rows loaded | seconds | rows/s | info |"
echo "|---|---|---|---|---|---|"
start_quire "$QPORT"
load "$QPORT" "Quire (release)"
stop_quire
start_mariadb "$MPORT"
load "$MPORT" "MariaDB 10.11"
stop_mariadb
rm -rf "$WORK"
