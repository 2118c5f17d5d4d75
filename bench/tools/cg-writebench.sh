#!/bin/bash
# Instructions of server CPU per row of the writebench's INSERT … SELECT, counted by
# callgrind (repeatable on a noisy machine, unlike seconds): a release build creates the
# seed's table (BIGINT key, seven CHAR(255) NOT NULL DEFAULT ''), the counters are zeroed,
# then `INSERT INTO t1 (a) SELECT seq FROM seq_1_to_ROWS` runs and the total is divided by
# ROWS. Background threads (page cleaner, purge) during the statement are counted too.
#   bench/tools/cg-writebench.sh BIN LABEL [ROWS=200000]
# Leaves the profile in /tmp/ab/cg.LABEL.out.* for callgrind_annotate.
set -u
command -v valgrind >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
command -v mariadb >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-client >/dev/null; }
BIN=$1; L=$2; ROWS=${3:-200000}; P0=${CG_PORT:-3446}
D=/tmp/ab/cgwb-$L; rm -rf "$D" /tmp/ab/cg."$L".*; mkdir -p "$D"
valgrind --tool=callgrind --callgrind-out-file=/tmp/ab/cg."$L".out "$BIN" serve --data-dir "$D/data" --port "$P0" \
  --set innodb_buffer_pool_size=1073741824 >"$D/serve.log" 2>&1 &
P=$!
for _ in $(seq 1 200); do mariadb -h 127.0.0.1 -P "$P0" -u root -e "select 1" >/dev/null 2>&1 && break; sleep 1; done
cols=""
for c in b c d e f g h; do cols="$cols, $c CHAR(255) NOT NULL DEFAULT ''"; done
mariadb -h 127.0.0.1 -P "$P0" -u root -e "CREATE DATABASE wb; CREATE TABLE wb.t1 (a BIGINT PRIMARY KEY$cols)"
callgrind_control -z "$P" >/dev/null
mariadb -h 127.0.0.1 -P "$P0" -u root wb -e "INSERT INTO t1 (a) SELECT seq FROM seq_1_to_$ROWS"
callgrind_control -d "$P" >/dev/null
kill "$P"; wait "$P" 2>/dev/null
f=$(ls -t /tmp/ab/cg."$L".out.* | head -1)
t=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
echo "$L: $((t / ROWS)) instructions per row ($t in all, $ROWS rows)"
