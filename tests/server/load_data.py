#!/usr/bin/env python3
"""LOAD DATA [LOCAL] INFILE against MariaDB 10.11's answers (docs/sql.md, "LOAD DATA").

Each case creates a table, writes a file, runs one LOAD DATA through PyMySQL with
local_infile=True (or the mariadb client with --local-infile), and keeps what came back:
the OK's affected rows, info text (`Records: N  Deleted: D  Skipped: S  Warnings: W`) and
SHOW WARNINGS, or the error; then the table's rows. The expectations are MariaDB's,
recorded into load_data.expected.json by running this script against a private MariaDB
with --record (never written by hand):

    python3 tests/server/load_data.py --port 3307
    python3 tests/server/load_data.py --port 3421 --record   # a MariaDB 10.11

MariaDB must run with --secure-file-priv naming a directory other than this script's
temporary one, so that the server-side cases get 1290 from both servers (Quire's default
secure_file_priv refuses every server file).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "load_data.expected.json")

T3 = "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(5) NOT NULL DEFAULT 'dflt', c INT NOT NULL)"
TN = "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(5) NOT NULL, c INT NULL DEFAULT 7, d INT NULL)"
TA = "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(20), n DECIMAL(6,2))"
TU = "CREATE TABLE t (a INT PRIMARY KEY, u INT, UNIQUE KEY u (u), v VARCHAR(10))"
TL = "CREATE TABLE t (a INT PRIMARY KEY, s VARCHAR(10)) DEFAULT CHARSET=latin1"
TU3 = "CREATE TABLE t (a INT PRIMARY KEY, s VARCHAR(10)) DEFAULT CHARSET=utf8"
TI = "CREATE TABLE t (a INT, b INT)"

L = "LOAD DATA LOCAL INFILE '{f}'"

# (name, table, file bytes, statement, sql_mode or None)
CASES = [
    ("defaults tab newline", T3, b"1\tx\t5\n2\ty\t6\n", L + " INTO TABLE t", None),
    ("short long null and bad rows, non-strict", T3,
     b"1\tx\t5\n2\n3\ty\t7\t9\n4\t\\N\t\\N\n5\tz\tabc\n\t\t\n", L + " INTO TABLE t", ""),
    ("short long null and bad rows, strict LOCAL is IGNORE", T3,
     b"1\tx\t5\n2\n3\ty\t7\t9\n4\t\\N\t\\N\n5\tz\tabc\n", L + " INTO TABLE t", None),
    ("strict REPLACE stops at a short row", T3, b"1\tx\t5\n2\n", L + " REPLACE INTO TABLE t", None),
    ("strict REPLACE stops at a bad value", T3, b"1\tx\t5\n2\ty\tzz\n", L + " REPLACE INTO TABLE t",
     None),
    ("missing fields reset, nullable keep NULL", TN, b"1\n2\t\\N\t\\N\t\\N\n",
     L + " INTO TABLE t", ""),
    ("csv enclosed escaped crlf ignore header", T3,
     b"a,b,c\r\n1,\"x,y\",5\r\n2,\"q\"\"r\",6\r\n3,NULL,7\r\n4,\"NULL\",8\r\n",
     L + " INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' "
     "LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES", None),
    ("escapes in fields", TA, b"1\ta\\tb\\\\c\t1.5\n2\t\\N\t\\N\n3\tx\\\ny\t2\n",
     L + " INTO TABLE t", None),
    ("no escape character", TA, b"1\ta\\tb\t1\n2\t\\N\t2\n", L + " INTO TABLE t ESCAPED BY ''",
     None),
    ("fields escaped by empty", TA, b"1\ta\\tb\t1\n2\t\\N\t2\n",
     L + " INTO TABLE t FIELDS ESCAPED BY ''", None),
    ("lines starting by", T3, b"xx1\ta\t1\nskipped\nzzxx2\tb\t2\n",
     L + " INTO TABLE t LINES STARTING BY 'xx'", None),
    ("ignore 2 rows", T3, b"h\nh\n1\ta\t1\n", L + " INTO TABLE t IGNORE 2 ROWS", None),
    ("column list and user variables with SET", T3, b"1\tAA\t3\n2\tBB\t4\n",
     L + " INTO TABLE t (a, @skip, @x) SET c = @x * 10, b = lower(@skip)", None),
    ("SET reads a loaded column", T3, b"1\tx\n2\ty\n", L + " INTO TABLE t (a, b) SET c = a * 100",
     None),
    ("auto increment generated", TA, b"\\N\tone\t1.25\n0\ttwo\t2\n\\N\tthree\t3\n",
     L + " INTO TABLE t", None),
    ("auto increment by column list", TA, b"one\ntwo\n", L + " INTO TABLE t (s)", None),
    ("duplicates skipped with LOCAL", TU, b"1\t10\ta\n2\t10\tb\n1\t30\tc\n3\t30\td\n",
     L + " INTO TABLE t", None),
    ("duplicates replaced", TU, b"1\t10\ta\n2\t10\tb\n3\t30\tc\n1\t30\td\n",
     L + " REPLACE INTO TABLE t", None),
    ("explicit IGNORE", TU, b"1\t10\ta\n1\t11\tb\n", L + " IGNORE INTO TABLE t", None),
    ("latin1 file", TA, b"1\tcaf\xe9\t1\n", L + " INTO TABLE t CHARACTER SET latin1", None),
    ("utf8mb4 file", TA, "1\tcafé ☕\t1\n".encode(), L + " INTO TABLE t CHARACTER SET utf8mb4",
     None),
    ("no trailing newline", T3, b"1\ta\t1\n2\tb\t2", L + " INTO TABLE t", None),
    ("empty file", T3, b"", L + " INTO TABLE t", None),
    ("unknown column", T3, b"1\n", L + " INTO TABLE t (nope)", None),
    ("unknown table", T3, b"1\n", L + " INTO TABLE nope", None),
    ("server file outside secure_file_priv", T3, b"1\ta\t1\n",
     "LOAD DATA INFILE '{f}' INTO TABLE t", None),
    ("too long string truncated, non-strict", T3, b"1\tabcdefgh\t1\n", L + " INTO TABLE t", ""),
    ("too long string, strict REPLACE", T3, b"1\tabcdefgh\t1\n", L + " REPLACE INTO TABLE t",
     None),
    ("into latin1 columns: what latin1 lacks is ?", TL,
     "1\tcafé\n2\t日本\n3\t€ 😀 x\n".encode(), L + " INTO TABLE t CHARACTER SET utf8mb4", None),
    ("into latin1 columns, strict REPLACE stops", TL, "1\tok\n2\t日本\n".encode(),
     L + " REPLACE INTO TABLE t CHARACTER SET utf8mb4", None),
    ("latin1 file into latin1 columns", TL, b"1\tcaf\xe9 \x80\n",
     L + " INTO TABLE t CHARACTER SET latin1", None),
    ("into utf8mb3 columns: above the BMP is ?", TU3, "1\ta😀b\n2\t中文\n".encode(),
     L + " INTO TABLE t CHARACTER SET utf8mb4", ""),
    # PyMySQL's own test: a line ending with the field terminator has no extra field.
    # All columns of a temporary table (no column list): the session's table, not a base
    # table lookup that finds none (1146 before; mysql2's backpressure test loads one).
    ("into a temporary table, all columns",
     "CREATE TEMPORARY TABLE t (a INT PRIMARY KEY, s VARCHAR(10))", b"1\tx\n2\ty\n",
     L + " INTO TABLE t", None),
    ("a trailing field terminator is no extra field", TI, b"1,2,\n3,4,5\n6,7,,\n8,9, \n,8,\n",
     L + " INTO TABLE t FIELDS TERMINATED BY ','", ""),
]


def connect(args, **kw):
    return pymysql.connect(host=args.host, port=args.port, user=args.user,
                           password=args.password, autocommit=True, local_infile=True,
                           charset="utf8mb4", **kw)


def show(v):
    return None if v is None else (v.hex() if isinstance(v, bytes) else str(v))


def run_case(args, c, tmp, case):
    name, ddl, data, stmt, mode = case
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS t")
    cur.execute(ddl)
    cur.execute("SET sql_mode = DEFAULT" if mode is None else f"SET sql_mode = '{mode}'")
    path = os.path.join(tmp, "f.txt")
    with open(path, "wb") as f:
        f.write(data)
    out = {}
    try:
        affected = cur.execute(stmt.format(f=path))
        res = c._result
        msg = res.message
        out["ok"] = [affected, msg.decode() if isinstance(msg, bytes) else msg,
                     res.warning_count, c.insert_id()]
        cur.execute("SHOW WARNINGS")
        out["warnings"] = [list(map(show, r)) for r in cur.fetchall()]
    except pymysql.MySQLError as e:
        out["error"] = [e.args[0], e.args[1]]
    cur.execute("SELECT * FROM t ORDER BY 1")
    out["rows"] = [list(map(show, r)) for r in cur.fetchall()]
    return out


def cli(args, db, sql, path, local=True):
    cmd = ["mariadb", "-h", args.host, "-P", str(args.port), "-u", args.user, "-B", "-vv",
           f"--local-infile={1 if local else 0}", db, "-e", sql]
    if args.password:
        cmd.insert(1, f"-p{args.password}")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    # Timings differ: keep the statements' answers without them.
    text = (p.stdout + p.stderr).replace(path, "{f}")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("--")]
    return [ln.split(" (")[0] if ln.startswith(("Query OK", "Empty set")) or "in set" in ln
            else ln for ln in lines]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3307)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()

    got = {}
    with tempfile.TemporaryDirectory(prefix="quire-load-") as tmp:
        os.chmod(tmp, 0o755)
        c = connect(args)
        cur = c.cursor()
        cur.execute("DROP DATABASE IF EXISTS load_data_test")
        cur.execute("CREATE DATABASE load_data_test")
        cur.execute("USE load_data_test")
        for case in CASES:
            got[case[0]] = run_case(args, c, tmp, case)

        # The mariadb client: its own LOCAL INFILE, and --local-infile=0 (no
        # CLIENT_LOCAL_FILES).
        path = os.path.join(tmp, "cli.tsv")
        with open(path, "wb") as f:
            f.write(b"1\tx\t5\n2\n3\ty\t7\n")
        cur.execute("SET sql_mode = DEFAULT")
        cur.execute("DROP TABLE IF EXISTS t")
        cur.execute(T3)
        got["mariadb client"] = cli(
            args, "load_data_test",
            f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t; SHOW WARNINGS; SELECT * FROM t", path)
        got["mariadb client without --local-infile"] = cli(
            args, "load_data_test", f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t", path, local=False)

        # local_infile OFF: 4166 for LOCAL.
        cur.execute("SET GLOBAL local_infile = 0")
        try:
            cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t")
            got["local_infile OFF"] = ["ok"]
        except pymysql.MySQLError as e:
            got["local_infile OFF"] = [e.args[0], e.args[1]]
        finally:
            cur.execute("SET GLOBAL local_infile = 1")

        # Privileges: INSERT alone loads a LOCAL file; REPLACE needs DELETE; a server file
        # needs FILE.
        cur.execute("DROP USER IF EXISTS 'ld_user'@'%'")
        cur.execute("CREATE USER 'ld_user'@'%' IDENTIFIED BY 'pw'")
        cur.execute("GRANT SELECT, INSERT ON load_data_test.t TO 'ld_user'@'%'")
        cur.execute("DELETE FROM t")
        u = pymysql.connect(host=args.host, port=args.port, user="ld_user", password="pw",
                            database="load_data_test", autocommit=True, local_infile=True)
        uc = u.cursor()
        privs = []
        for stmt in [f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t",
                     f"LOAD DATA LOCAL INFILE '{path}' REPLACE INTO TABLE t",
                     f"LOAD DATA INFILE '{path}' INTO TABLE t"]:
            try:
                privs.append(["ok", uc.execute(stmt)])
            except pymysql.MySQLError as e:
                # The host in 1045's text is the client's address as each server names it.
                privs.append([e.args[0], e.args[1].split("@")[0]])
        u.close()
        got["privileges"] = privs

        # TIMESTAMPs are read in the session's zone and kept as instants (docs/sql.md,
        # "Time zones"): loaded under +05:30, read back under +00:00.
        path = os.path.join(tmp, "zoned.tsv")
        with open(path, "wb") as f:
            f.write(b"1\t2024-03-10 12:00:00\t2024-03-10 12:00:00\n"
                    b"2\t1970-01-01 05:30:01\t\\N\n3\t1970-01-01 05:30:00\t\\N\n")
        cur.execute("SET sql_mode = DEFAULT")
        cur.execute("DROP TABLE IF EXISTS tz")
        cur.execute("CREATE TABLE tz (id INT PRIMARY KEY, ts TIMESTAMP NULL, dt DATETIME NULL)")
        cur.execute("SET time_zone = '+05:30'")
        zoned = {}
        try:
            cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE tz")
            zoned["warnings"] = [list(map(show, r)) for r in (cur.execute("SHOW WARNINGS"),
                                                             cur.fetchall())[1]]
        except pymysql.MySQLError as e:
            zoned["error"] = [e.args[0], e.args[1]]
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT id, ts, UNIX_TIMESTAMP(ts), dt FROM tz ORDER BY id")
        zoned["rows"] = [list(map(show, r)) for r in cur.fetchall()]
        cur.execute("SET time_zone = DEFAULT")
        got["TIMESTAMPs in the session's time zone"] = zoned

        cur.execute("DROP USER 'ld_user'@'%'")
        cur.execute("DROP DATABASE load_data_test")
        c.close()

    if args.record:
        with open(EXPECTED, "w") as f:
            json.dump(got, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"recorded {len(got)} cases into {EXPECTED}")
        return 0
    with open(EXPECTED) as f:
        want = json.load(f)
    passed = failed = 0
    for name, w in want.items():
        g = json.loads(json.dumps(got.get(name)))
        if g == w:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {name}:\n  want {json.dumps(w, ensure_ascii=False)}\n"
                  f"  got  {json.dumps(g, ensure_ascii=False)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
