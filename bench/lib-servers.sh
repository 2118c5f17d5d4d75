# Shared by the side-by-side scripts: start and stop Quire and MariaDB 10.11 on private
# data directories with the same buffer pool and redo log sizes, and the seed workloads in
# SQL that bench/seeds-sql.sh and bench/suite-seeds.sh both run.
#   POOL (bytes), LOG (bytes), WORK (a temporary folder) must be set by the caller.
#   NO_WAIT=1 makes start_quire / start_mariadb return at once instead of waiting for the
#   port (the recovery timing measures that wait itself).

quire_bin=${QUIRE_BIN:-target/release/quire}

ensure_tools() {
  local need=()
  command -v sysbench >/dev/null || need+=(sysbench)
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
  command -v mariadb >/dev/null || need+=(mariadb-client)
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  [ -x "$quire_bin" ] || cargo build --release -p quire
}

wait_port() {
  for _ in $(seq 1 600); do
    mariadb -h 127.0.0.1 -P "$1" -u root -e "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server on port $1 did not start" >&2
  return 1
}

# Refuses a port another server already listens on: the run would measure that server.
port_free() { # port
  if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
    echo "port $1 is already in use by another server: stop it first" >&2
    return 1
  fi
}

start_quire() { # port [extra --set ...]
  local port=$1; shift
  port_free "$port"
  mkdir -p "$WORK/quire"
  "$quire_bin" serve --data-dir "$WORK/quire/data" --port "$port" \
    --set innodb_buffer_pool_size="$POOL" --set innodb_log_file_size="$LOG" "$@" \
    >>"$WORK/quire/serve.log" 2>&1 &
  QUIRE_PID=$!
  [ "${NO_WAIT:-0}" = 1 ] || wait_port "$port"
}

stop_quire() {
  [ -n "${QUIRE_PID:-}" ] && kill -TERM "$QUIRE_PID" 2>/dev/null && wait "$QUIRE_PID" 2>/dev/null
  QUIRE_PID=
}

start_mariadb() { # port [extra mariadbd options]
  local port=$1; shift
  port_free "$port"
  local mdir="$WORK/mariadb"
  if [ ! -d "$mdir/data/mysql" ]; then
    mkdir -p "$mdir"
    mariadb-install-db --no-defaults --datadir="$mdir/data" --auth-root-authentication-method=normal \
      --user="$(id -un)" >"$mdir/install.log" 2>&1
  fi
  /usr/sbin/mariadbd --no-defaults --datadir="$mdir/data" --port="$port" --socket="$mdir/sock" \
    --user="$(id -un)" --innodb-buffer-pool-size="$POOL" --innodb-log-file-size="$LOG" \
    --max-connections=500 "$@" >>"$mdir/err.log" 2>&1 &
  MARIADB_PID=$!
  [ "${NO_WAIT:-0}" = 1 ] || wait_port "$port"
}

stop_mariadb() {
  [ -n "${MARIADB_PID:-}" ] && kill -TERM "$MARIADB_PID" 2>/dev/null && wait "$MARIADB_PID" 2>/dev/null
  MARIADB_PID=
}

sql() { # port statement...
  local port=$1; shift
  mariadb -h 127.0.0.1 -P "$port" -u root -N -B -e "$*"
}

# PostgreSQL 15 on a private data directory, run as the `postgres` user (it refuses root),
# with shared_buffers = POOL and max_wal_size = 2 × LOG (the brief's 1 GB / 2 GB), trust
# authentication on loopback only. sysbench connects as role `sbtest` to database `sbtest`.
pg_bin=/usr/lib/postgresql/15/bin

ensure_pg() {
  if [ ! -x "$pg_bin/postgres" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
  fi
}

start_pg() { # port [extra -c name=value ...]
  local port=$1; shift
  local pdir="$WORK/pg"
  if [ ! -f "$pdir/data/PG_VERSION" ]; then
    mkdir -p "$pdir"
    chown postgres "$pdir"
    runuser -u postgres -- "$pg_bin/initdb" -D "$pdir/data" --auth=trust -U postgres >"$pdir/initdb.log" 2>&1
  fi
  local opts="-p $port -k $pdir -c listen_addresses=127.0.0.1 -c shared_buffers=$((POOL >> 20))MB"
  opts="$opts -c max_wal_size=$((2 * LOG >> 20))MB -c max_connections=500"
  for o in "$@"; do opts="$opts $o"; done
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pdir/data" -l "$pdir/server.log" -w -t 120 -o "$opts" start >/dev/null
  runuser -u postgres -- "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qAt -c \
    "DO \$\$ BEGIN CREATE ROLE sbtest LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" >/dev/null
  PG_PORT=$port
}

stop_pg() {
  [ -n "${PG_PORT:-}" ] && runuser -u postgres -- "$pg_bin/pg_ctl" -D "$WORK/pg/data" -m fast -w stop >/dev/null 2>&1
  PG_PORT=
}

pgsql() { # port statement
  runuser -u postgres -- "$pg_bin/psql" -h 127.0.0.1 -p "$1" -U postgres -qAt -c "$2"
}

status() { # port name -> value of SHOW GLOBAL STATUS name
  sql "$1" "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'
}

# The writebench (lesson 1): CREATE TABLE t1 (8 × CHAR(255)); INSERT … SELECT seq FROM
# seq_1_to_ROWS; FLUSH TABLES t1 FOR EXPORT; UNLOCK TABLES; DROP TABLE, with the write
# counters before and after.
seed_writebench() { # port rows -> "seconds data_writes pages_written dblwr_writes"
  local p=$1 rows=$2
  sql "$p" "DROP DATABASE IF EXISTS wb; CREATE DATABASE wb"
  local d0 w0 g0 t0 t1
  d0=$(status "$p" Innodb_data_writes)
  g0=$(status "$p" Innodb_pages_written)
  w0=$(status "$p" Innodb_dblwr_writes)
  t0=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root wb <<SQL
CREATE TABLE t1 (
 a BIGINT PRIMARY KEY,
 b CHAR(255) NOT NULL DEFAULT '',
 c CHAR(255) NOT NULL DEFAULT '',
 d CHAR(255) NOT NULL DEFAULT '',
 e CHAR(255) NOT NULL DEFAULT '',
 f CHAR(255) NOT NULL DEFAULT '',
 g CHAR(255) NOT NULL DEFAULT '',
 h CHAR(255) NOT NULL DEFAULT ''
) ENGINE=InnoDB;
INSERT INTO t1 (a) SELECT seq FROM seq_1_to_$rows;
FLUSH TABLES t1 FOR EXPORT;
UNLOCK TABLES;
DROP TABLE t1;
SQL
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}') $(( $(status "$p" Innodb_data_writes) - d0 )) $(( $(status "$p" Innodb_pages_written) - g0 )) $(( $(status "$p" Innodb_dblwr_writes) - w0 ))"
}

# Lesson 5: N × CREATE TABLE, then N × DROP TABLE, in series through the mariadb client.
seed_create_tables() { # port [n=1000] -> "create_seconds drop_seconds"
  local p=$1 n=${2:-1000} c d t0 t1 t2
  sql "$p" "DROP DATABASE IF EXISTS ct; CREATE DATABASE ct"
  c=$(mktemp) d=$(mktemp)
  for i in $(seq 1 "$n"); do echo "CREATE TABLE t$i (a INT PRIMARY KEY, b INT, c VARCHAR(100), KEY(b));"; done >"$c"
  for i in $(seq 1 "$n"); do echo "DROP TABLE t$i;"; done >"$d"
  t0=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root ct <"$c"
  t1=$(date +%s.%N)
  mariadb -h 127.0.0.1 -P "$p" -u root ct <"$d"
  t2=$(date +%s.%N)
  rm -f "$c" "$d"
  awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "%.2f %.2f\n", b - a, c - b}'
}

# Samples a status variable once a second for SECONDS seconds into FILE as "second value"
# lines (bench/plot.py reads them). Run it in the background beside the workload.
sample_status() { # port name seconds file
  local t0 now
  t0=$(date +%s.%N)
  for _ in $(seq 1 "$3"); do
    sleep 1
    now=$(date +%s.%N)
    echo "$(awk -v a="$t0" -v b="$now" 'BEGIN {printf "%.0f", b - a}') $(status "$1" "$2" 2>/dev/null || echo -)" >>"$4"
  done
}
