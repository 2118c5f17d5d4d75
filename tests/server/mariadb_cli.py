#!/usr/bin/env python3
"""The mariadb command-line client against a running server, in batch mode and
interactively under tmux: create a table, insert, query, a transaction that commits and
one that rolls back, a duplicate key and a lock wait timeout with their error codes, and
`--safe-updates` (its SET at connect, 1175 for an unkeyed DELETE or UPDATE).

    python3 tests/server/mariadb_cli.py --port 3307

Runs the same against MariaDB itself (`--port` of a MariaDB), which is how the expected
lines were checked.
"""
import argparse
import shutil
import subprocess
import sys
import time

BATCH = """
DROP DATABASE IF EXISTS cli;
CREATE DATABASE cli;
USE cli;
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT);
INSERT INTO items VALUES (1, 'apple', 3), (2, 'pear', NULL);
SELECT id, name, qty FROM items ORDER BY id;
BEGIN;
UPDATE items SET qty = 10 WHERE id = 1;
COMMIT;
BEGIN;
DELETE FROM items WHERE id = 2;
ROLLBACK;
SELECT COUNT(*) AS n, SUM(qty) AS total FROM items;
INSERT INTO items VALUES (1, 'dup', 0);
SELECT 'after error' AS still_here;
"""

BATCH_EXPECT = [
    "id\tname\tqty",
    "1\tapple\t3",
    "2\tpear\tNULL",
    "n\ttotal",
    "2\t10",
    "ERROR 1062 (23000) at line 15: Duplicate entry '1' for key 'PRIMARY'",
    "still_here",
    "after error",
]


def mariadb(args, sql, extra=()):
    return subprocess.run(["mariadb", "-h", "127.0.0.1", "-P", str(args.port), "-u", "root", *extra],
                          input=sql, capture_output=True, text=True, timeout=60)


def batch(args):
    r = mariadb(args, BATCH, ["--force"])
    out = (r.stdout + r.stderr).splitlines()
    missing = [l for l in BATCH_EXPECT if l not in out]
    return ["batch: missing line %r; got:\n%s" % (l, "\n".join(out)) for l in missing]


SAFE_UPDATES = """
SELECT @@sql_safe_updates, @@sql_select_limit, @@max_join_size;
DELETE FROM items;
UPDATE items SET qty = 0;
DELETE FROM items WHERE id = 99;
SELECT COUNT(*) AS n FROM items;
"""

SAFE_UPDATES_EXPECT = [
    "@@sql_safe_updates\t@@sql_select_limit\t@@max_join_size",
    "1\t1000\t1000000",
    "ERROR 1175 (HY000) at line 3: You are using safe update mode and you tried to update a "
    "table without a WHERE that uses a KEY column",
    "ERROR 1175 (HY000) at line 4: You are using safe update mode and you tried to update a "
    "table without a WHERE that uses a KEY column",
    "n",
    "2",
]


def safe_updates(args):
    # --safe-updates (-U) sends SET SQL_SAFE_UPDATES=1,SQL_SELECT_LIMIT=1000,
    # MAX_JOIN_SIZE=1000000 at connect: the session must start, and refuse an unkeyed
    # DELETE or UPDATE with 1175 while a keyed one runs.
    r = mariadb(args, SAFE_UPDATES, ["--safe-updates", "--force", "cli"])
    out = (r.stdout + r.stderr).splitlines()
    missing = [l for l in SAFE_UPDATES_EXPECT if l not in out]
    return ["safe updates: missing line %r; got:\n%s" % (l, "\n".join(out)) for l in missing]


def lock_wait(args):
    # Session 1 holds a row lock for a few seconds; session 2 times out on it.
    holder = subprocess.Popen(
        ["mariadb", "-h", "127.0.0.1", "-P", str(args.port), "-u", "root", "cli", "-e",
         "BEGIN; SELECT qty FROM items WHERE id = 1 FOR UPDATE; SELECT SLEEP(4); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    r = mariadb(args, "SET SESSION innodb_lock_wait_timeout = 1;\nUPDATE items SET qty = 0 WHERE id = 1;\n", ["cli"])
    holder.wait(timeout=30)
    want = "ERROR 1205 (HY000) at line 2: Lock wait timeout exceeded; try restarting transaction"
    if want not in r.stderr:
        return ["lock wait: expected %r, got %r" % (want, r.stderr + r.stdout)]
    return []


def interactive(args):
    if not shutil.which("tmux"):
        print("skip interactive: tmux is not installed")
        return []
    s = "quirecli%d" % args.port
    subprocess.run(["tmux", "kill-session", "-t", s], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", s, "-x", "200", "-y", "50",
                    "mariadb -h 127.0.0.1 -P %d -u root cli" % args.port], check=True)
    time.sleep(1.5)

    def send(line, wait=0.8):
        # tmux reads a trailing ';' as its own command separator: escape it.
        if line.endswith(";"):
            line = line[:-1] + "\\;"
        subprocess.run(["tmux", "send-keys", "-t", s, "-l", line], check=True)
        subprocess.run(["tmux", "send-keys", "-t", s, "Enter"], check=True)
        time.sleep(wait)

    send("SELECT name, qty FROM items ORDER BY id;")
    send("BEGIN;")
    send("INSERT INTO items VALUES (7, 'fig', 1);")
    send("ROLLBACK;")
    send("SELECT COUNT(*) FROM items WHERE id = 7;")
    send("INSERT INTO items VALUES (2, 'again', 1);")
    screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", s, "-S", "-200"],
                            capture_output=True, text=True).stdout
    send("quit", 0.3)
    subprocess.run(["tmux", "kill-session", "-t", s], capture_output=True)
    errors = []
    shown = False
    for want in ["Welcome to the MariaDB monitor", "| apple | ", "Query OK, 1 row affected",
                 "ERROR 1062 (23000): Duplicate entry '2' for key 'PRIMARY'", "| COUNT(*) |", "|        0 |"]:
        if want not in screen:
            errors.append("interactive: %r not on screen%s" % (want, "" if shown else ":\n" + screen.rstrip()))
            shown = True
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=3307)
    args = ap.parse_args()
    passed = failed = 0
    for name, f in [("batch", batch), ("safe updates", safe_updates), ("lock wait timeout", lock_wait),
                    ("interactive", interactive)]:
        errs = f(args)
        if errs:
            failed += 1
            print("FAIL %s" % name)
            for e in errs:
                print("  " + e)
        else:
            passed += 1
            print("ok   %s" % name)
    print("mariadb client: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
