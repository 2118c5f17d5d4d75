#!/usr/bin/env python3
"""mariadb-admin against its own `quire serve`: ping, status, processlist, kill,
flush-tables, refresh, variables, extended-status, then shutdown (the server exits
cleanly, and what was committed is there after a restart).

    python3 tests/server/mariadb_admin.py --quire target/debug/quire

Ends with "mariadb-admin: N passed, N failed".
"""
import argparse
import shutil
import subprocess
import sys
import tempfile

import pymysql

from serverlib import free_port, start_quire


def admin(port, *args):
    return subprocess.run(["mariadb-admin", "-h", "127.0.0.1", "-P", str(port), "-u", "root",
                           *args], capture_output=True, text=True, timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="quire-admin-")
    port = free_port()
    log = open(f"{work}/serve.log", "w")
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok   {name}")
        else:
            failed += 1
            print(f"FAIL {name}: {detail}")

    server = start_quire(a.quire, f"{work}/data", port, log)
    try:
        r = admin(port, "ping")
        check("ping", r.returncode == 0 and "alive" in r.stdout, r.stdout + r.stderr)
        r = admin(port, "status")
        check("status", r.returncode == 0 and "Uptime:" in r.stdout and "Threads:" in r.stdout,
              r.stdout + r.stderr)
        idle = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        cur = idle.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        idle_id = cur.fetchone()[0]
        r = admin(port, "processlist")
        check("processlist", r.returncode == 0 and f"| {idle_id} " in r.stdout,
              r.stdout + r.stderr)
        r = admin(port, "kill", str(idle_id))
        killed = False
        try:
            cur.execute("SELECT 1")
        except pymysql.err.MySQLError:
            killed = True
        check("kill", r.returncode == 0 and killed, r.stdout + r.stderr)
        r = admin(port, "kill", "999999")
        check("kill of an unknown id", r.returncode != 0 and "Unknown thread id" in r.stderr,
              r.stdout + r.stderr)
        for cmd in ["flush-tables", "refresh", "flush-status", "flush-logs", "reload"]:
            r = admin(port, cmd)
            check(cmd, r.returncode == 0, r.stdout + r.stderr)
        r = admin(port, "variables")
        check("variables", r.returncode == 0 and "innodb_buffer_pool_size" in r.stdout,
              r.stderr)
        r = admin(port, "extended-status")
        check("extended-status", r.returncode == 0 and "Uptime" in r.stdout, r.stderr)
        c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        c.cursor().execute("CREATE DATABASE a")
        c.cursor().execute("CREATE TABLE a.t (id INT PRIMARY KEY)")
        c.cursor().execute("INSERT INTO a.t VALUES (1), (2), (3)")
        c.close()
        r = admin(port, "shutdown")
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code = None
        check("shutdown", r.returncode == 0 and code == 0, f"{r.stderr} exit={code}")
        server = start_quire(a.quire, f"{work}/data", port, log)
        c = pymysql.connect(host="127.0.0.1", port=port, user="root")
        cur = c.cursor()
        cur.execute("SELECT COUNT(*) FROM a.t")
        n = cur.fetchone()[0]
        check("committed rows after shutdown and restart", n == 3, n)
        c.close()
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=60)
        log.close()
        if failed == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"server log: {work}/serve.log")
    print(f"mariadb-admin: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
