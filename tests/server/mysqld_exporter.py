#!/usr/bin/env python3
"""Prometheus's mysqld_exporter scrapes a running `quire serve` (issue 17, monitoring).

    python3 tests/server/mysqld_exporter.py --port PORT

Builds mysqld_exporter v0.16.0 from the Go module proxy into target/clients/ if it is not
there (about a minute, once), starts it against the server with its default collectors, runs
some writes and reads, scrapes it, and checks:
- `mysql_up` is 1 and every collector succeeded (global status and variables, the InnoDB
  compression tables, query_response_time, slave status);
- the InnoDB metrics it knows are there and moved with the workload: row operations,
  buffer pool pages, redo written, history list length, the query mix, bytes and threads.
Prints `ok` lines, then `mysqld_exporter: N passed, N failed`; exits 1 on the first failure.
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pymysql

VERSION = "v0.16.0"
MODULE = "github.com/prometheus/mysqld_exporter"
HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "..", "target", "clients")


def build_exporter():
    exe = os.path.join(BUILD, f"mysqld_exporter-{VERSION}")
    if os.path.exists(exe):
        return exe
    os.makedirs(BUILD, exist_ok=True)
    subprocess.run(["go", "mod", "download", f"{MODULE}@{VERSION}"], check=True, timeout=600)
    cache = subprocess.run(
        ["go", "env", "GOMODCACHE"], check=True, capture_output=True, text=True
    ).stdout.strip()
    # Built in the module's own directory, with its go.sum (the proxy refuses a version list
    # for this module, so `go install …@version` cannot resolve it).
    src = os.path.join(cache, *MODULE.split("/")[:-1], f"mysqld_exporter@{VERSION}")
    subprocess.run(["go", "build", "-o", exe, "."], cwd=src, check=True, timeout=900)
    return exe


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def samples(text):
    """{metric{labels}: value} of the exposition text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        out[name] = float(value)
    return out


PASSED = 0


def check(cond, what):
    global PASSED
    if not cond:
        print(f"FAIL {what}")
        print(f"mysqld_exporter: {PASSED} passed, 1 failed")
        sys.exit(1)
    PASSED += 1
    print(f"ok {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()

    exe = build_exporter()
    work = tempfile.mkdtemp(prefix="quire-exporter.")
    cnf = os.path.join(work, "my.cnf")
    with open(cnf, "w") as f:
        f.write(f"[client]\nuser=root\nhost={args.host}\nport={args.port}\n")
    listen = free_port()
    log = open(os.path.join(work, "exporter.log"), "w")
    exporter = subprocess.Popen(
        [exe, f"--config.my-cnf={cnf}", f"--web.listen-address=127.0.0.1:{listen}"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{listen}/metrics"
        for _ in range(100):
            try:
                scrape(url)
                break
            except OSError:
                time.sleep(0.1)

        c = pymysql.connect(host=args.host, port=args.port, user="root", autocommit=True)
        cur = c.cursor()
        cur.execute("DROP DATABASE IF EXISTS exporter_check")
        cur.execute("CREATE DATABASE exporter_check")
        cur.execute("CREATE TABLE exporter_check.t (id INT PRIMARY KEY, v INT)")
        before = samples(scrape(url))
        cur.executemany(
            "INSERT INTO exporter_check.t VALUES (%s, %s)", [(i, i) for i in range(200)]
        )
        cur.execute("UPDATE exporter_check.t SET v = v + 1 WHERE id < 50")
        cur.execute("DELETE FROM exporter_check.t WHERE id >= 150")
        cur.execute("SELECT COUNT(*) FROM exporter_check.t WHERE v > 10")
        after = samples(scrape(url))

        check(after.get("mysql_up") == 1, "mysql_up is 1")
        collectors = {k: v for k, v in after.items() if k.startswith("mysql_exporter_collector_success")}
        check(len(collectors) >= 6, f"{len(collectors)} collectors ran")
        for k, v in sorted(collectors.items()):
            check(v == 1, f"{k} succeeded")

        def grew(metric, by):
            return after.get(metric, 0) - before.get(metric, 0) >= by

        ops = 'mysql_global_status_innodb_row_ops_total{operation="%s"}'
        check(grew(ops % "inserted", 200), "row operations: inserted")
        check(grew(ops % "updated", 50), "row operations: updated")
        check(grew(ops % "deleted", 50), "row operations: deleted")
        check(grew(ops % "read", 150), "row operations: read")
        check(after.get('mysql_global_status_buffer_pool_pages{state="data"}', 0) > 0,
              "buffer pool pages holding data")
        check('mysql_global_status_buffer_pool_pages{state="free"}' in after,
              "buffer pool free pages")
        check("mysql_global_status_buffer_pool_dirty_pages" in after, "buffer pool dirty pages")
        check(grew("mysql_global_status_innodb_os_log_written", 1), "redo bytes written")
        check("mysql_global_status_innodb_history_list_length" in after, "history list length")
        # PyMySQL's executemany sends the 200 rows as one multi-row INSERT.
        check(grew('mysql_global_status_commands_total{command="insert"}', 1),
              "the query mix (Com_insert)")
        check(grew('mysql_global_status_commands_total{command="update"}', 1),
              "the query mix (Com_update)")
        check(grew("mysql_global_status_bytes_received", 1), "bytes received")
        check(after.get("mysql_global_status_threads_connected", 0) >= 1, "threads connected")
        check(after.get("mysql_global_variables_innodb_buffer_pool_size", 0) > 0,
              "innodb_buffer_pool_size from the variables")
        cur.execute("DROP DATABASE exporter_check")
        c.close()
    finally:
        exporter.terminate()
        exporter.wait(timeout=30)
        log.close()
    with open(os.path.join(work, "exporter.log")) as f:
        errors = [l for l in f if "level=ERROR" in l]
    check(not errors, "no scraper errors in the exporter's log" + ("".join(errors[:3]) and f": {errors[:3]}"))
    print(f"mysqld_exporter: {PASSED} passed, 0 failed")


if __name__ == "__main__":
    main()
