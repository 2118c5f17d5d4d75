#!/usr/bin/env bash
# MariaDB 10.11 side of the seed workloads that Quire can already run embedded, in the same
# run: 1000 x CREATE TABLE then 1000 x DROP TABLE (lesson 5), and the seed's writebench
# (1M rows of 8 x CHAR(255), then FLUSH TABLES ... FOR EXPORT; lesson 1) with doublewrite ON
# and OFF. Private datadir, --no-defaults. Installs mariadb-server if missing.
# Usage: bench/mariadb-seed.sh [ROWS]
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
  apt-get update -qq && apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
work=$(mktemp -d)
sock="$work/sock"
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start() { # $1 = doublewrite ON|OFF
  rm -rf "$work/data"; mkdir -p "$work/data"
  mariadb-install-db --no-defaults --datadir="$work/data" --auth-root-authentication-method=normal \
    --skip-test-db --user=root >/dev/null 2>&1
  "$MARIADBD" --no-defaults --datadir="$work/data" --socket="$sock" --skip-networking \
    --user=root --innodb-doublewrite="$1" --innodb-buffer-pool-size=1G \
    --innodb-log-file-size=1G --innodb-flush-log-at-trx-commit=1 >"$work/err.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do mariadb --no-defaults -S "$sock" -u root -e 'select 1' >/dev/null 2>&1 && return; sleep 0.2; done
  cat "$work/err.log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
sql() { mariadb --no-defaults -S "$sock" -u root "$@"; }
now() { date +%s.%N; }

start ON
sql -e 'create database t'
{ for i in $(seq 1000); do echo "create table t$i (a int primary key, b int, c varchar(100), key(b)) engine=InnoDB;"; done; } >"$work/create.sql"
{ for i in $(seq 1000); do echo "drop table t$i;"; done; } >"$work/drop.sql"
t0=$(now); sql t <"$work/create.sql"; t1=$(now); sql t <"$work/drop.sql"; t2=$(now)
echo "mariadb create-tables: create_s=$(echo "$t1 - $t0" | bc) drop_s=$(echo "$t2 - $t1" | bc)"
stop

for dw in ON OFF; do
  start "$dw"
  sql -e "create database w; create table w.t (a char(255), b char(255), c char(255), d char(255), e char(255), f char(255), g char(255), h char(255)) engine=InnoDB"
  w0=$(sql -N -e "show global status like 'Innodb_data_writes'" | awk '{print $2}')
  d0=$(sql -N -e "show global status like 'Innodb_dblwr_writes'" | awk '{print $2}')
  t0=$(now)
  sql w -e "insert into t select 'a','b','c','d','e','f','g','h' from seq_1_to_$rows; flush tables t for export; unlock tables;"
  t1=$(now)
  w1=$(sql -N -e "show global status like 'Innodb_data_writes'" | awk '{print $2}')
  d1=$(sql -N -e "show global status like 'Innodb_dblwr_writes'" | awk '{print $2}')
  echo "mariadb writebench doublewrite=$dw rows=$rows seconds=$(echo "$t1 - $t0" | bc) data_writes=$((w1 - w0)) dblwr_writes=$((d1 - d0))"
  stop
done
