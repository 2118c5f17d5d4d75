#!/usr/bin/env python3
"""MySQL's own clients against `quire serve`: Oracle's Connector/Python at 8.4 and 9.x, each
through its C extension (which bundles that release's libmysqlclient, the C client of the
mysql CLI) and in its pure-Python mode. Each one:

  - logs in as root, as a mysql_native_password account, and as a caching_sha2_password
    account over TLS (full authentication) and then again (the fast path from the cache);
  - is refused with 1045 for a wrong password;
  - runs a server-side prepared statement with parameters (C extension: the binary
    protocol), a transaction that commits and one that rolls back, and gets 1062 for a
    duplicate key;
  - round-trips DECIMAL, DATETIME(6) and a 1 MiB BLOB exactly;
  - sends TIME parameters (MYSQL_TYPE_TIME: sign, days, hours, …) and BIT values (a number,
    and raw bytes) into TIME(6) and BIT(12) columns, and reads them back through the binary
    protocol (MYSQL_TYPE_TIME and MYSQL_TYPE_BIT result rows) and the text protocol, as
    timedeltas and integers, exactly (the same session passes against MariaDB 10.11).

Each client version is installed with pip into target/clients/mysql-connector-VERSION (from
PyPI) the first time.

    python3 tests/server/mysql_clients.py --quire target/debug/quire [--versions 8.4.0 9.7.0]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from serverlib import free_port, start_quire

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VERSIONS = ["8.4.0", "9.7.0"]

# One client version and mode, in a child process (two versions of one package cannot
# share a Python process). Prints one JSON object: check name -> [ok, detail].
CHILD = r'''
import datetime, decimal, json, sys
import mysql.connector as m
port, ca, pure = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "pure"
out = {"version": m.__version__, "cext": bool(m.HAVE_CEXT) and not pure}
checks = {}

def check(name, fn):
    try:
        got = fn()
        checks[name] = [True, repr(got)]
    except AssertionError as e:
        checks[name] = [False, str(e)]
    except Exception as e:
        checks[name] = [False, "%s: %s" % (type(e).__name__, e)]

def connect(user, pw, **kw):
    return m.connect(host="127.0.0.1", port=port, user=user, password=pw, use_pure=pure,
                     connection_timeout=20, **kw)

def whoami(c):
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    r = cur.fetchone()[0]
    c.close()
    return r.decode() if isinstance(r, (bytes, bytearray)) else r

def expect(got, want):
    assert got == want, "got %r, want %r" % (got, want)
    return got

check("root logs in", lambda: expect(whoami(connect("root", "", ssl_disabled=True)), "root@localhost"))
check("mysql_native_password", lambda: expect(
    whoami(connect("nat", "natpw", ssl_disabled=True)), "nat@%"))
check("caching_sha2_password over TLS (full)", lambda: expect(
    whoami(connect("cs", "cspw", ssl_ca=ca, ssl_verify_cert=True)), "cs@%"))
check("caching_sha2_password again (fast path)", lambda: expect(
    whoami(connect("cs", "cspw", ssl_ca=ca, ssl_verify_cert=True)), "cs@%"))

def wrong():
    try:
        connect("nat", "nope", ssl_disabled=True)
    except m.Error as e:
        return expect(e.errno, 1045)
    raise AssertionError("a wrong password got in")
check("wrong password is 1045", wrong)

def session():
    c = connect("root", "", database="mc", ssl_disabled=True)
    c.cursor().execute("DELETE FROM t")
    c.autocommit = False
    cur = c.cursor(prepared=True)
    blob = bytes(range(256)) * 4096
    when = datetime.datetime(2024, 2, 29, 23, 59, 58, 123456)
    cur.execute("INSERT INTO t (id, amount, at, b) VALUES (?, ?, ?, ?)",
                (1, decimal.Decimal("12345.678901"), when, blob))
    c.commit()
    cur.execute("INSERT INTO t (id, amount) VALUES (?, ?)", (2, decimal.Decimal("1")))
    c.rollback()
    cur.execute("SELECT id, amount, at, b FROM t WHERE id >= ? ORDER BY id", (0,))
    rows = cur.fetchall()
    expect(len(rows), 1)
    r = rows[0]
    expect(decimal.Decimal(str(r[1])), decimal.Decimal("12345.678901"))
    expect(r[2], when)
    expect(bytes(r[3]), blob)
    try:
        cur.execute("INSERT INTO t (id, amount) VALUES (?, ?)", (1, decimal.Decimal("2")))
        raise AssertionError("a duplicate key went in")
    except m.Error as e:
        dup = "Duplicate entry '1' for key 'PRIMARY'"
        if out["cext"] and e.errno == -1:
            # The 8.4 and 9.0 C extensions' prepared-statement path drops the code (errno
            # -1) and keeps the text: against MariaDB 10.11 they say exactly the same.
            expect(e.msg, "Error while executing statement: " + dup)
        else:
            expect((e.errno, e.msg), (1062, dup))
    c.rollback()
    plain = c.cursor()
    plain.execute("DELETE FROM t")
    c.commit()
    c.close()
    return "ok"
check("prepared statements, transactions, 1062, exact values", session)

def time_and_bit():
    # The drivers' own limits, seen against MariaDB 10.11 as well: the C extension sends a
    # timedelta parameter as 00:00:00 (so it sends TIME values as strings here) and the
    # pure-Python mode reads a negative binary TIME with the wrong sign or hours, and a
    # BIT as its raw bytes. What each mode does right is checked exactly.
    c = connect("root", "", database="mc", ssl_disabled=True)
    c.autocommit = True
    c.cursor().execute("DELETE FROM tb")
    cur = c.cursor(prepared=True)
    td = datetime.timedelta
    times = [td(days=1, hours=2, minutes=3, seconds=4, microseconds=500000),
             -td(hours=838, minutes=59, seconds=59), td(0), -td(microseconds=1),
             td(hours=838, minutes=59, seconds=59, microseconds=999999)]
    texts = ["26:03:04.5", "-838:59:59", "00:00:00", "-00:00:00.000001", "838:59:59.999999"]
    bits = [0xABC, 0, 4095, 1, 0x800]
    for i, (t, text, b) in enumerate(zip(times, texts, bits)):
        # pure: MYSQL_TYPE_TIME parameters, for the durations it encodes right.
        param = t if pure and t >= td(0) else text
        cur.execute("INSERT INTO tb (id, t, b) VALUES (?, ?, ?)", (i, param, b))
    # A BIT from raw bytes: stored as the big-endian number they are.
    cur.execute("INSERT INTO tb (id, t, b) VALUES (?, ?, ?)", (9, None, b"\x0a\xbc"))
    want = [(i, t, b) for i, (t, b) in enumerate(zip(times, bits))] + [(9, None, 0xABC)]
    cur.execute("SELECT id, t, b FROM tb WHERE id >= ? ORDER BY id", (0,))
    raw = cur.fetchall()
    if pure:
        # MYSQL_TYPE_BIT: the big-endian bytes, ceil(12/8) of them.
        expect([len(bytes(r[2])) for r in raw], [2] * len(raw))
    got = [(r[0], r[1], r[2] if isinstance(r[2], int) else int.from_bytes(bytes(r[2]), "big"))
           for r in raw]
    if pure:
        keep = {w[0] for w in want if w[1] is None or w[1] >= td(0)}
        got = [g for g in got if g[0] in keep]
        want = [w for w in want if w[0] in keep]
    expect(got, want)
    # A TIME parameter compared with a TIME column; a BIT compared with a number.
    cur.execute("SELECT id FROM tb WHERE t = ? OR b = ? ORDER BY id",
                (times[0] if pure else texts[0], 4095))
    expect([r[0] for r in cur.fetchall()], [0, 2])
    plain = c.cursor()
    plain.execute("SELECT id, t, b, HEX(b) FROM tb ORDER BY id")
    rows = [(r[0], r[1], r[2], r[3]) for r in plain.fetchall()]
    hexes = ["ABC", "0", "FFF", "1", "800", "ABC"]
    want = [(i, t, b) for i, (t, b) in enumerate(zip(times, bits))] + [(9, None, 0xABC)]
    expect(rows, [w + (h,) for w, h in zip(want, hexes)])
    c.close()
    return "ok"
check("TIME and BIT through both protocols", time_and_bit)
out["checks"] = checks
print(json.dumps(out), flush=True)
# Skip the interpreter's teardown: 8.4.0's C extension aborts in it ("double free or
# corruption") after a run that mixed TLS and plain connections, every check done and
# printed (seen here; each part alone exits cleanly; not traced further).
import os
os._exit(0)
'''


def install(version):
    """target/clients/mysql-connector-VERSION, installed from PyPI if missing."""
    path = os.path.join(ROOT, "target", "clients", "mysql-connector-" + version)
    if not os.path.isdir(os.path.join(path, "mysql", "connector")):
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", path,
                            "mysql-connector-python==" + version],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError("pip install mysql-connector-python==%s: %s"
                               % (version, r.stderr.strip()[-500:]))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", default="target/debug/quire")
    ap.add_argument("--versions", nargs="*", default=VERSIONS)
    a = ap.parse_args()
    import pymysql
    work = tempfile.mkdtemp(prefix="quire-mysql-clients-")
    port = free_port()
    log = open(os.path.join(work, "serve.log"), "ab")
    server = start_quire(os.path.abspath(a.quire), os.path.join(work, "data"), port, log)
    passed = failed = 0
    try:
        root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with root.cursor() as cur:
            for sql in ["CREATE USER nat IDENTIFIED BY 'natpw'",
                        "CREATE USER cs IDENTIFIED WITH caching_sha2_password BY 'cspw'",
                        "CREATE DATABASE mc",
                        "CREATE TABLE mc.t (id INT PRIMARY KEY, amount DECIMAL(12,6),"
                        " at DATETIME(6), b LONGBLOB)",
                        "CREATE TABLE mc.tb (id INT PRIMARY KEY, t TIME(6), b BIT(12),"
                        " KEY (t))"]:
                cur.execute(sql)
        root.close()
        ca = os.path.join(work, "data", "ca.pem")
        for version in a.versions:
            try:
                path = install(version)
            except Exception as e:
                failed += 1
                print("FAIL mysql-connector-python %s (install): %s" % (version, e))
                continue
            for mode in ["cext", "pure"]:
                env = dict(os.environ, PYTHONPATH=path)
                r = subprocess.run([sys.executable, "-c", CHILD, str(port), ca, mode],
                                   capture_output=True, text=True, timeout=300, env=env)
                try:
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                except (ValueError, IndexError):
                    failed += 1
                    print("FAIL %s %s: no result\n%s%s" % (version, mode, r.stdout, r.stderr[-2000:]))
                    continue
                if mode == "cext" and not res["cext"]:
                    failed += 1
                    print("FAIL %s: the C extension did not load" % version)
                    continue
                for name, (ok, detail) in res["checks"].items():
                    label = "Connector/Python %s (%s): %s" % (res["version"], mode, name)
                    if ok:
                        passed += 1
                        print("ok   " + label)
                    else:
                        failed += 1
                        print("FAIL %s: %s" % (label, detail))
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    print("mysql clients: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
