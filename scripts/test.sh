#!/usr/bin/env bash
# The test command (README.md): formatting, lints, every cargo test, then the server suites
# against a real `quire serve`: golden SQL scripts, the mariadb client (batch and under
# tmux), the drivers, SQLAlchemy and alembic, sysbench's oltp_* workloads at 1 and 8
# threads, and kill -9 crashes under load.
# Installs what it needs on a fresh machine that has only the toolchains.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup component add rustfmt clippy >/dev/null 2>&1 || true

need=()
command -v sysbench >/dev/null || need+=(sysbench)
command -v mariadb >/dev/null || need+=(mariadb-client)
command -v tmux >/dev/null || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi
python3 -c "import pymysql" 2>/dev/null || python3 -m pip install -q pymysql >/dev/null 2>&1

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
log=$(mktemp)
work=$(mktemp -d /tmp/quire-ci.XXXXXX)
server=
cleanup() {
  [ -n "$server" ] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -f "$log"
  rm -rf "$work"
}
trap cleanup EXIT
status=0
# --no-fail-fast: every test binary runs, so one failure does not hide the others.
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?

echo "== server suites"
cargo build -p quire 2>&1 | tail -1
quire=target/debug/quire
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$quire" serve --data-dir "$work/data" --port "$port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  mariadb -h 127.0.0.1 -P "$port" -u root -e "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
suite() { # name command...
  echo "-- $1"
  "${@:2}" 2>&1 | tee -a "$log" || status=1
}
suite "golden SQL scripts" python3 tests/sql/run.py --port "$port" tests/sql/*.test
suite "mariadb client" python3 tests/server/mariadb_cli.py --port "$port"
suite "mariadb-dump load" python3 tests/server/dump_load.py --port "$port"
suite "drivers" bash tests/clients/run.sh "$port"
suite "TLS clients" python3 tests/server/tls_clients.py --port "$port" --ca "$work/data/ca.pem"
suite "mysqld_exporter" python3 tests/server/mysqld_exporter.py --port "$port"
suite "latin1 client" python3 tests/server/latin1.py --port "$port"
suite "LOAD DATA" python3 tests/server/load_data.py --port "$port"
suite "sysbench" bash tests/sysbench/run.sh "$port" "${QUIRE_SYSBENCH_SECS:-2}"
kill -TERM "$server" && wait "$server" || { echo "quire serve did not shut down cleanly"; status=1; }
server=
if ! "$quire" check --data-dir "$work/data" >>"$log" 2>&1; then
  echo "quire check after the server suites failed"; tail -20 "$log"; status=1
fi
suite "mariadb-admin" python3 tests/server/mariadb_admin.py --quire "$quire"
# caching_sha2_password's RSA exchange in PyMySQL needs `cryptography`.
python3 -c "import cryptography" 2>/dev/null || python3 -m pip install -q cryptography >/dev/null 2>&1
suite "accounts" python3 tests/server/accounts.py --quire "$quire"
suite "MySQL 8.4 and 9.x clients" python3 tests/server/mysql_clients.py --quire "$quire"
# SQLAlchemy (Core and ORM over PyMySQL and mysqlclient) and alembic's migrations, pinned in
# tests/clients/python/requirements-sqlalchemy.txt, against a quire serve of their own.
suite "SQLAlchemy and alembic" python3 tests/clients/sqlalchemy_session.py --quire "$quire"
suite "disk full" python3 tests/server/disk_full.py --quire "$quire"
suite "kill -9 under load" python3 tests/server/crash_kill9.py --quire "$quire" --iterations "${QUIRE_SERVER_CRASH_ITERS:-3}"

# One closing line for the whole run: cargo's test results plus the suites' own counts (a
# test binary that aborts prints no result line: its FAILED tests are counted instead).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     / [0-9]+ passed, [0-9]+ failed$/ && !/^[0-9]+ passed/ { n = split($0, a, " "); for (i = 1; i <= n; i++) { if (a[i] ~ /^passed/) p += a[i-1]; if (a[i] ~ /^failed$/) f += a[i-1] } }
     / \.\.\. FAILED$/ { ft++ }
     END { if (ft > f) f = ft; printf "%d passed, %d failed\n", p, f }' "$log"
exit "$status"
