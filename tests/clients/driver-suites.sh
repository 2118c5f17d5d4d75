#!/usr/bin/env bash
# The drivers' own test suites against a running server: what their maintainers run against
# MySQL and MariaDB, run against Quire. Not in CI (minutes each, and they fetch the suites);
# the last results are in docs/clients.md.
#
#   bash tests/clients/driver-suites.sh PORT [go] [node]...
#
# go: go-sql-driver/mysql (the version tests/clients/go uses), its `go test` from the module
#     the Go module proxy serves (test files included), in a private copy, against database
#     `gotest` (made here) as root without a password.
# node: mysql2 (Node), its own suite (`npx poku`: unit tests, then integration tests against
#     the server) in a private copy of its repository: MYSQL2_DIR names a checkout to copy
#     (the published npm package has no tests), else the tag of the version
#     tests/clients/node uses is cloned from GitHub. Database `test` (made here), root
#     without a password. Needs node and npm (npm ci fetches its dev dependencies).
#
# Prints each suite's failing tests and its summary line; exits 1 if a suite failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=${1:?usage: driver-suites.sh PORT [go] [node]...}
shift
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(go)
host=${CLIENTS_HOST:-127.0.0.1}
status=0

sql() {
  mariadb -h "$host" -P "$port" -u root -e "$1"
}

# TestConnectorReturnsTimeout dials 1.1.1.1 and wants a timeout: on a machine without a route
# out the dial fails at once, and the driver's logger dereferences a nil connection, which
# panics and ends the whole test binary. Nothing of it is about the server.
GO_SKIP=${GO_SKIP:-TestConnectorReturnsTimeout}

run_go() {
  local version dir log
  version=$(grep -o 'go-sql-driver/mysql v[0-9.]*' "$here/go/go.mod" | head -1 | awk '{print $2}')
  (cd "$here/go" && go mod download "github.com/go-sql-driver/mysql@$version") || return 1
  dir=$(mktemp -d)
  cp -r "$(go env GOMODCACHE)/github.com/go-sql-driver/mysql@$version/." "$dir"
  chmod -R u+w "$dir"
  sql "DROP DATABASE IF EXISTS gotest; CREATE DATABASE gotest" || return 1
  log=$(mktemp)
  (cd "$dir" && MYSQL_TEST_ADDR="$host:$port" MYSQL_TEST_USER=root MYSQL_TEST_PASS= \
    MYSQL_TEST_DBNAME=gotest go test -count=1 -v -skip "$GO_SKIP" . >"$log" 2>&1)
  local rc=$?
  grep -E '^--- FAIL' "$log" || true
  echo "go-sql-driver/mysql $version: $(grep -c '^--- PASS' "$log") passed, $(grep -c '^--- FAIL' "$log") failed, $(grep -c '^--- SKIP' "$log") skipped (log: $log)"
  rm -rf "$dir"
  return $rc
}

run_node() {
  local version dir log rc
  version=$(grep -o '"mysql2": *"[^"]*"' "$here/node/package.json" | grep -o '[0-9][0-9.]*')
  dir=$(mktemp -d)
  if [ -n "${MYSQL2_DIR:-}" ]; then
    # A checkout or an extracted archive of the repository (not the npm package).
    cp -r "$MYSQL2_DIR/." "$dir"
    rm -rf "$dir/node_modules"
  else
    git clone -q --depth 1 --branch "v$version" https://github.com/sidorares/node-mysql2 "$dir" ||
      { echo "node: could not clone mysql2 v$version; set MYSQL2_DIR" >&2; return 1; }
  fi
  [ -f "$dir/poku.config.js" ] || { echo "node: $dir has no poku.config.js (not mysql2's repository?)" >&2; return 1; }
  (cd "$dir" && npm ci --no-audit --no-fund >/dev/null 2>&1) || { echo "node: npm ci failed in $dir" >&2; return 1; }
  sql "CREATE DATABASE IF NOT EXISTS test" || return 1
  log=$(mktemp)
  # The suite reads MYSQL_HOST, MYSQL_PORT, MYSQL_USER, MYSQL_DATABASE (test/common.test.mts);
  # its password is only read under CI.
  (cd "$dir" && MYSQL_HOST="$host" MYSQL_PORT="$port" MYSQL_USER=root MYSQL_DATABASE=test \
    timeout 1800 npx poku 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log")
  rc=$?
  grep -E '^ *FAIL ' "$log" | grep -v '›' || true
  echo "mysql2 $(node -p "require('$dir/package.json').version") (repository $(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo "copy of $MYSQL2_DIR")): files $(grep -E 'PASS ›' "$log" | tail -1 | tr -s ' ') (log: $log)"
  rm -rf "$dir"
  return $rc
}

for s in "${suites[@]}"; do
  case $s in
  go) run_go || status=1 ;;
  node) run_node || status=1 ;;
  *) echo "unknown suite $s" >&2; exit 2 ;;
  esac
done
exit $status
