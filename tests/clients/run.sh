#!/usr/bin/env bash
# The common drivers against a running server (issue 17): one scripted session per driver
# and mode, each checking every result exactly (tests/clients/*/).
#
#   bash tests/clients/run.sh PORT [DRIVER...]
#
# DRIVER is pymysql, mysqlclient, go, node, java or rust-sqlx (default: all). go, node and
# java run twice: with server-side prepared statements and with client-side interpolation.
# Installs what each driver needs if it is missing (apt, PyPI, the Go module proxy, npm,
# Maven Central, crates.io), quietly; prints `ok` or `FAIL` per session (a failure with its
# log's last lines) and ends with `drivers: N passed, N failed`; exits 1 on any failure.
# CLIENTS_HOST (default 127.0.0.1) names the server's host; CLIENTS_TIMEOUT (default 600)
# bounds each install and each session, in seconds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=${1:?usage: run.sh PORT [DRIVER...]}
shift
host=${CLIENTS_HOST:-127.0.0.1}
limit=${CLIENTS_TIMEOUT:-600}
drivers=("$@")
[ ${#drivers[@]} -eq 0 ] && drivers=(pymysql mysqlclient go node java rust-sqlx)
build="$here/../../target/clients"
mkdir -p "$build"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0
failed=0

apt_install() { # packages...
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@") >/dev/null 2>&1
}

install_pymysql() {
  python3 -c "import pymysql" 2>/dev/null || python3 -m pip install -q pymysql
}

install_mysqlclient() {
  python3 -c "import MySQLdb" 2>/dev/null && return 0
  # The C client library and its headers, found through pkg-config by mysqlclient's build.
  pkg-config --exists libmariadb 2>/dev/null || apt_install libmariadb-dev pkg-config || return 1
  python3 -m pip install -q mysqlclient
}

install_go() {
  (cd "$here/go" && go build -o "$build/go-session" .)
}

install_node() {
  [ -f "$here/node/node_modules/mysql2/package.json" ] && return 0
  (cd "$here/node" && npm ci --no-audit --no-fund --silent)
}

install_java() {
  local j="$here/java"
  if [ -f "$j/target/classpath.txt" ] && [ "$j/target/classes/Session.class" -nt "$j/src/main/java/Session.java" ] &&
    [ "$j/target/classpath.txt" -nt "$j/pom.xml" ]; then
    return 0
  fi
  (cd "$j" && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
}

install_rust-sqlx() {
  (cd "$here/rust-sqlx" && cargo build -q --locked)
}

# The sessions of each driver: "label command..." lines.
sessions() {
  local p=(--host "$host" --port "$port")
  case $1 in
    pymysql | mysqlclient) echo "$1 python3 $here/python/session.py --driver $1 ${p[*]}" ;;
    go)
      echo "go/prepared $build/go-session ${p[*]}"
      echo "go/interpolated $build/go-session ${p[*]} -interpolate"
      ;;
    node)
      echo "node/execute node $here/node/session.js ${p[*]} --mode execute"
      echo "node/query node $here/node/session.js ${p[*]} --mode query"
      ;;
    java)
      local cp="$here/java/target/classes:$(cat "$here/java/target/classpath.txt" 2>/dev/null)"
      echo "java/server-prep java -cp $cp Session ${p[*]} --mode server"
      echo "java/client-prep java -cp $cp Session ${p[*]} --mode client"
      ;;
    rust-sqlx) echo "rust-sqlx $here/rust-sqlx/target/debug/quire-client-sqlx ${p[*]}" ;;
  esac
}

report() { # ok|FAIL label seconds
  printf '%-4s %-22s %4ss\n' "$1" "$2" "$3"
  if [ "$1" = FAIL ]; then
    failed=$((failed + 1))
    grep -av '^\[ WARN\]' "$log" | tail -5 | cut -c1-400 | sed 's/^/     /'
  else
    passed=$((passed + 1))
  fi
}

for d in "${drivers[@]}"; do
  if ! declare -F "install_$d" >/dev/null; then
    echo "FAIL $d: no such driver (pymysql mysqlclient go node java rust-sqlx)"
    failed=$((failed + 1))
    continue
  fi
  start=$SECONDS
  if ! timeout "$limit" bash -c "$(declare -f apt_install "install_$d"); here='$here' build='$build' install_$d" >"$log" 2>&1; then
    report FAIL "$d (install)" $((SECONDS - start))
    continue
  fi
  while read -r label cmd; do
    start=$SECONDS
    # shellcheck disable=SC2086 # cmd is a word list of paths without spaces
    if timeout "$limit" $cmd >"$log" 2>&1; then
      report ok "$label" $((SECONDS - start))
    else
      report FAIL "$label" $((SECONDS - start))
    fi
  done < <(sessions "$d")
done
# Prefixed, so scripts/test.sh counts it with the other suites' per-file lines.
echo "drivers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
