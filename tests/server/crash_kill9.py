#!/usr/bin/env python3
"""Kill -9 `quire serve` under a write load, restart it, and check that nothing
acknowledged is lost and nothing half-done is visible.

Writers (autocommit inserts, and transactions that insert a pair of rows and move an
amount between two accounts) record what the server acknowledged. sysbench oltp_write_only
runs beside them when it is installed. At a random moment the server gets SIGKILL; after
recovery:
  - every acknowledged insert and pair is there, and no pair is half there;
  - the accounts' total is unchanged (transfers are atomic);
  - after a clean shutdown, `quire check` exits 0.

    python3 tests/server/crash_kill9.py --quire target/debug/quire [--iterations 3]
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pymysql

from serverlib import free_port, start_quire

ACCOUNTS = 20
TOTAL = ACCOUNTS * 1000


def conn(port, db=None):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", database=db,
                           autocommit=True, connect_timeout=5, read_timeout=30)


def writer(port, wid, acked, stop, problems):
    try:
        c = conn(port, "crash")
    except pymysql.err.MySQLError as e:
        problems.append("writer %d could not connect: %s" % (wid, e))
        return
    n = 0
    rnd = random.Random(wid)
    while not stop.is_set():
        n += 1
        key = wid * 10_000_000 + n
        try:
            with c.cursor() as cur:
                if n % 3 == 0:
                    cur.execute("BEGIN")
                    cur.execute("INSERT INTO pairs VALUES (%s, 'a', REPEAT('x', 200))", (key,))
                    cur.execute("INSERT INTO pairs VALUES (%s, 'b', REPEAT('y', 200))", (-key,))
                    a, b = rnd.sample(range(ACCOUNTS), 2)
                    amt = rnd.randint(1, 50)
                    cur.execute("UPDATE acct SET bal = bal - %s WHERE id = %s", (amt, a))
                    cur.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (amt, b))
                    cur.execute("COMMIT")
                    acked.append(("pair", key))
                else:
                    cur.execute("INSERT INTO ins VALUES (%s, %s)", (key, "v%d" % key))
                    acked.append(("ins", key))
        except pymysql.err.OperationalError as e:
            if e.args[0] in (1205, 1213):
                continue
            if e.args[0] in (2006, 2013, 2003):
                return  # the server is gone: the kill
            problems.append("writer %d: unexpected error %s" % (wid, e))
            return
        except (pymysql.err.InterfaceError, ConnectionError, OSError):
            return
        except pymysql.err.MySQLError as e:
            problems.append("writer %d: unexpected error %s" % (wid, e))
            return


def check_after(port, acked):
    c = conn(port, "crash")
    with c.cursor() as cur:
        cur.execute("SELECT id FROM ins")
        ins = {r[0] for r in cur.fetchall()}
        cur.execute("SELECT id FROM pairs")
        pairs = {r[0] for r in cur.fetchall()}
        cur.execute("SELECT SUM(bal), COUNT(*) FROM acct")
        total, n = cur.fetchone()
    c.close()
    errors = []
    for kind, key in acked:
        if kind == "ins" and key not in ins:
            errors.append("acknowledged insert %d lost" % key)
        if kind == "pair" and (key not in pairs or -key not in pairs):
            errors.append("acknowledged pair %d lost" % key)
    for k in pairs:
        if -k not in pairs:
            errors.append("half a transaction visible: pair %d without %d" % (k, -k))
    if int(total) != TOTAL or n != ACCOUNTS:
        errors.append("accounts total %s over %s rows, expected %d over %d" % (total, n, TOTAL, ACCOUNTS))
    return errors


def one(args, it, data):
    port = free_port()
    log = open(os.path.join(os.path.dirname(data), "serve-%d.log" % it), "w")
    p = start_quire(args.quire, data, port, log, sets=())
    if it == 0:
        c = conn(port)
        with c.cursor() as cur:
            cur.execute("CREATE DATABASE crash")
            cur.execute("USE crash")
            cur.execute("CREATE TABLE ins (id BIGINT PRIMARY KEY, v VARCHAR(40) NOT NULL)")
            cur.execute("CREATE TABLE pairs (id BIGINT PRIMARY KEY, side CHAR(1) NOT NULL, pad VARCHAR(300), KEY side (side))")
            cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
            cur.execute("INSERT INTO acct VALUES " + ",".join("(%d, 1000)" % i for i in range(ACCOUNTS)))
        c.close()
    stop = threading.Event()
    acked = []
    problems = []
    threads = [threading.Thread(target=writer, args=(port, it * 100 + w, acked, stop, problems)) for w in range(4)]
    for t in threads:
        t.start()
    sb = None
    if shutil.which("sysbench") and args.sysbench:
        opts = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=%d" % port,
                "--mysql-user=root", "--mysql-db=crash", "--tables=1", "--table-size=2000"]
        if it == 0:
            subprocess.run(["sysbench", "oltp_write_only"] + opts + ["prepare"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sb = subprocess.Popen(["sysbench", "oltp_write_only"] + opts + ["--threads=4", "--time=60", "run"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(args.min_secs, args.max_secs))
    p.send_signal(signal.SIGKILL)
    p.wait()
    stop.set()
    for t in threads:
        t.join()
    if sb:
        sb.kill()
        sb.wait()
    before = len(acked)
    # Recovery: restart on the same directory.
    p = start_quire(args.quire, data, port, log, sets=())
    errors = problems + check_after(port, list(acked))
    if len(acked) < 50:
        errors.append("only %d commits were acknowledged before the kill: the load did not run" % len(acked))
    p.send_signal(signal.SIGTERM)
    if p.wait(timeout=120) != 0:
        errors.append("quire serve did not shut down cleanly (exit %s)" % p.returncode)
    chk = subprocess.run([args.quire, "check", "--data-dir", data], capture_output=True, text=True)
    if chk.returncode != 0:
        errors.append("quire check failed:\n" + chk.stdout[-2000:] + chk.stderr[-2000:])
    log.close()
    return before, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--min-secs", type=float, default=1.0)
    ap.add_argument("--max-secs", type=float, default=4.0)
    ap.add_argument("--no-sysbench", dest="sysbench", action="store_false")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    random.seed(args.seed)
    tmp = tempfile.mkdtemp(prefix="quire-crash-")
    data = os.path.join(tmp, "data")
    passed = failed = 0
    for it in range(args.iterations):
        acked, errors = one(args, it, data)
        if errors:
            failed += 1
            print("FAIL iteration %d (%d acknowledged):" % (it, acked))
            for e in errors[:20]:
                print("  " + e)
        else:
            passed += 1
            print("ok   iteration %d: %d acknowledged commits survived kill -9" % (it, acked))
    if failed == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("data and logs kept in " + tmp)
    print("crash through the server: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
