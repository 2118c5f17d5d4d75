#!/usr/bin/env python3
"""Accounts with the real clients (docs/security.md): each authentication plugin through the
clients that speak it, and a GRANT that survives kill -9 right after its OK.

  - mysql_native_password: the mariadb CLI, PyMySQL, mysqlclient;
  - MariaDB's ed25519: the mariadb CLI and mysqlclient (libmariadb's client_ed25519);
  - caching_sha2_password: PyMySQL over plain TCP (full authentication with the server's
    RSA key, then the fast path from the cache), over TLS (the password in clear inside
    TLS), mysqlclient and the mariadb CLI;
  - wrong passwords refused with 1045, a locked account with 4151;
  - GRANT, then SIGKILL at once, then restart: the grant is there and works.

    python3 tests/server/accounts.py --quire target/debug/quire
"""
import argparse
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile

import MySQLdb
import pymysql

from serverlib import free_port, start_quire

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def pm(port, user, pw, **kw):
    """CURRENT_USER() through PyMySQL, or the error code."""
    try:
        c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, **kw)
        with c.cursor() as cur:
            cur.execute("SELECT CURRENT_USER()")
            r = cur.fetchone()[0]
        c.close()
        return r
    except pymysql.err.MySQLError as e:
        return e.args[0]


def md(port, user, pw):
    """CURRENT_USER() through mysqlclient, or the error code."""
    try:
        c = MySQLdb.connect(host="127.0.0.1", port=port, user=user, passwd=pw)
        cur = c.cursor()
        cur.execute("SELECT CURRENT_USER()")
        r = cur.fetchone()[0]
        c.close()
        return r if isinstance(r, str) else r.decode()
    except MySQLdb.MySQLError as e:
        return e.args[0]


def cli(port, user, pw, extra=()):
    """CURRENT_USER() through the mariadb CLI, or its error text."""
    r = subprocess.run(["mariadb", "-h", "127.0.0.1", "-P", str(port), "-u", user,
                        f"-p{pw}", "-N", "-B", *extra, "-e", "SELECT CURRENT_USER()"],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else r.stderr.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", default="target/debug/quire")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="quire-accounts-")
    port = free_port()
    log = open(f"{work}/serve.log", "ab")
    server = start_quire(a.quire, f"{work}/data", port, log)
    try:
        root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        cur = root.cursor()
        for sql in [
            "CREATE USER nat IDENTIFIED BY 'natpw'",
            "CREATE USER ed IDENTIFIED VIA ed25519 USING PASSWORD('edpw')",
            "CREATE USER cs IDENTIFIED WITH caching_sha2_password BY 'cspw'",
            "CREATE USER cs_tls IDENTIFIED WITH caching_sha2_password BY 'tlspw'",
            "CREATE USER locked IDENTIFIED BY 'lpw' ACCOUNT LOCK",
        ]:
            cur.execute(sql)

        check("native: mariadb CLI", cli(port, "nat", "natpw") == "nat@%", cli(port, "nat", "natpw"))
        check("native: PyMySQL", pm(port, "nat", "natpw") == "nat@%")
        check("native: mysqlclient", md(port, "nat", "natpw") == "nat@%")
        check("native: wrong password", pm(port, "nat", "x") == 1045)

        check("ed25519: mariadb CLI", cli(port, "ed", "edpw") == "ed@%", cli(port, "ed", "edpw"))
        check("ed25519: mysqlclient", md(port, "ed", "edpw") == "ed@%")
        check("ed25519: wrong password", md(port, "ed", "edpx") == 1045)

        # The cache is empty: PyMySQL asks for the RSA key and sends the password encrypted.
        check("caching_sha2: PyMySQL, RSA exchange", pm(port, "cs", "cspw") == "cs@%")
        check("caching_sha2: PyMySQL, fast path", pm(port, "cs", "cspw") == "cs@%")
        check("caching_sha2: wrong password", pm(port, "cs", "nope") == 1045)
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        check("caching_sha2: PyMySQL over TLS", pm(port, "cs_tls", "tlspw", ssl=ctx) == "cs_tls@%")
        check("caching_sha2: wrong password over TLS", pm(port, "cs_tls", "x", ssl=ctx) == 1045)
        check("caching_sha2: mysqlclient", md(port, "cs", "cspw") == "cs@%")
        check("caching_sha2: mariadb CLI", cli(port, "cs", "cspw") == "cs@%", cli(port, "cs", "cspw"))

        check("locked account: 4151", pm(port, "locked", "lpw") == 4151)

        # A GRANT acknowledged, then SIGKILL at once: recovery keeps it.
        cur.execute("CREATE DATABASE app")
        cur.execute("CREATE TABLE app.t (a INT)")
        cur.execute("INSERT INTO app.t VALUES (1)")
        check("before the grant: 1044 on connect",
              pm(port, "nat", "natpw", database="app") == 1044)
        cur.execute("GRANT SELECT ON app.t TO nat")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=60)
        server = start_quire(a.quire, f"{work}/data", port, log)
        c = pymysql.connect(host="127.0.0.1", port=port, user="nat", password="natpw",
                            database="app")
        with c.cursor() as k:
            k.execute("SELECT a FROM t")
            check("grant after kill -9", k.fetchall() == ((1,),))
            try:
                k.execute("INSERT INTO t VALUES (2)")
                check("insert still denied after kill -9", False, "insert allowed")
            except pymysql.err.MySQLError as e:
                check("insert still denied after kill -9", e.args[0] == 1142, e)
        c.close()
        check("ed25519 after kill -9", md(port, "ed", "edpw") == "ed@%")
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=60)
        log.close()
        if failed == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"server log: {work}/serve.log")
    print(f"accounts: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
