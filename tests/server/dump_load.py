#!/usr/bin/env python3
"""A real mariadb-dump output loaded into a server with the mariadb client, then checked.

`tests/server/dump/dumptest.sql` was written by mariadb-dump 10.11 (`--databases
dumptest`, default options: LOCK TABLES … WRITE around each table's rows) from a MariaDB
database of six tables: every kind of value a dump
quotes (escapes, NULLs, UTF-8, DECIMAL, DOUBLE, DATETIME(3), binary strings, BIGINT
UNSIGNED's maximum), 1500 rows written as extended INSERTs, and TIME and BIT columns
(`clock`: TIMEs as quoted text, BITs as their raw bytes in quotes, which is how
mariadb-dump 10.11 writes them by default), and the column attributes a dump carries
(`attrs`: column, index and table COMMENTs, `ON UPDATE current_timestamp()`, a JSON
column written as a LONGTEXT with its `CHECK (json_valid(…))`), and CHECK constraints
(`checked`: column checks and named and unnamed table checks). Its header and footer are
the `/*!40101 SET @OLD_…=@@…, …=… */` lines that save and restore the session's variables
in user variables. The script:

1. loads the file with `mariadb` (the client stops at the first error) and, in the same
   session, reads back the variables the footer restores;
2. checks the loaded rows with SELECTs (counts, sums, a CRC32 of every row, whole rows);
3. checks that user variables belong to their session: another connection does not see
   them, and they are gone after a reconnect;
4. dumps the loaded database from the server itself with mariadb-dump (default options),
   loads that dump into a new database of the same server, and compares CHECKSUM TABLE and
   SHOW CREATE TABLE of every table in the two;
5. does the same for a table of TIMESTAMPs while the global time zone is +05:30: the dump
   sets `TIME_ZONE='+00:00'` and must write UTC, and the copy must hold the same instants
   (`zone_round_trip`).
6. does 1, 2 and 4 for `dump/charsets.sql`, a mariadb-dump 10.11 of a database `dumpcs` of a
   `DEFAULT CHARSET=latin1` table (ascii, latin1_bin and utf8mb4 columns, text with
   characters in cp1252's 0x80..0x9F) and a `DEFAULT CHARSET=utf8` one (utf8mb3_bin UNIQUE
   key), and also compares the server's own dump of it, its header and footer aside, with
   the one MariaDB wrote.

The expected answers come from MariaDB: `--record` rewrites `dump/expected.json` from a
MariaDB (the dump re-creates its database there too).

    python3 tests/server/dump_load.py --port 3307
    python3 tests/server/dump_load.py --port 3310 --record
"""
import argparse
import json
import os
import subprocess
import sys

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
DUMP = os.path.join(HERE, "dump", "dumptest.sql")
CHARSETS_DUMP = os.path.join(HERE, "dump", "charsets.sql")
EXPECTED = os.path.join(HERE, "dump", "expected.json")

# The variables the dump's footer restores, read in the loading session.
AFTER_LOAD = ("SELECT @@sql_mode, @@unique_checks, @@foreign_key_checks, @@sql_notes, "
              "@@character_set_client, @@collation_connection, @@time_zone, "
              "@OLD_SQL_MODE IS NOT NULL;\n")

QUERIES = [
    "SELECT COUNT(*), SUM(k), SUM(CRC32(CONCAT_WS('|', k, v, HEX(b), c))), SUM(c IS NULL) FROM bulk",
    "SELECT id, name, email, born, balance, score, bio, updated FROM people ORDER BY id",
    "SELECT k, v, HEX(b), c FROM bulk WHERE k < 30 OR k > 4490 ORDER BY k",
    "SELECT COUNT(*) FROM empty_one",
    "SELECT v FROM bulk WHERE v = 'row-777'",
    "SELECT name FROM people WHERE email = 'kanji@example.com'",
    "SELECT MAX(id) FROM people",
    "SELECT id, t, t3, t6, HEX(b), b1 + 0, HEX(b12), b64 + 0 FROM clock ORDER BY id",
    "SELECT id FROM clock WHERE t < '00:00:01' ORDER BY t",
    "SELECT id FROM clock WHERE b = 15 OR b64 = 127 ORDER BY id",
    "SHOW CREATE TABLE attrs",
    "SELECT id, doc, note, hits, created, changed, seen FROM attrs ORDER BY id",
    "SELECT COLUMN_NAME, EXTRA, COLUMN_COMMENT FROM information_schema.COLUMNS "
    "WHERE TABLE_SCHEMA = 'dumptest' AND TABLE_NAME = 'attrs' ORDER BY ORDINAL_POSITION",
    "UPDATE attrs SET hits = hits + 1 WHERE id = 1",
    "SELECT id, hits, created, changed > '2025-01-01', seen > '2025-01-01' FROM attrs ORDER BY id",
    "SHOW CREATE TABLE checked",
    "SELECT * FROM checked ORDER BY id",
    "SELECT CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
    "WHERE CONSTRAINT_SCHEMA = 'dumptest' AND TABLE_NAME = 'checked' ORDER BY CONSTRAINT_NAME",
]


def text(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return str(v)


def connect(args, db=None):
    return pymysql.connect(host="127.0.0.1", port=args.port, user="root", database=db,
                           autocommit=True, conv={}, charset="utf8mb4")


def query(conn, sql):
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return [[text(v) for v in row] for row in cur.fetchall()]
    except pymysql.err.MySQLError as e:
        return ["error %d" % e.args[0]]


CHARSET_QUERIES = [
    "SELECT id, name, note, code, nick, modern, LENGTH(name), HEX(nick) FROM legacy ORDER BY id",
    "SELECT id FROM legacy ORDER BY name, id",
    "SELECT id FROM legacy WHERE name = 'MULLER' OR name = 'müller'",
    "SELECT id, title, body, slug FROM app ORDER BY id",
    "SELECT TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME, CHARACTER_OCTET_LENGTH "
    "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dumpcs' AND CHARACTER_SET_NAME IS NOT NULL "
    "ORDER BY TABLE_NAME, ORDINAL_POSITION",
    "INSERT INTO app VALUES (4, 'x', 'y', 'GRUESSE')",
    "INSERT INTO app VALUES (5, 'x', 'y', 'gruesse')",
]


def table_sections(dump):
    """A dump's statements from the first DROP TABLE to the last UNLOCK TABLES: what does
    not depend on the server's version or the time."""
    lines = dump.decode("utf-8", "replace").split("\n")
    body = [l for l in lines if not l.startswith("--") and not l.startswith("/*!40")]
    start = next((i for i, l in enumerate(body) if l.startswith("DROP TABLE")), 0)
    end = max((i for i, l in enumerate(body) if l.startswith("UNLOCK TABLES")), default=0)
    return body[start:end + 1]


def charsets_case(args):
    """The latin1 / utf8mb3 dump: loaded, queried, dumped back (the same table sections as
    MariaDB's), and reloaded."""
    with open(CHARSETS_DUMP, "rb") as f:
        sql = f.read()
    r = subprocess.run(["mariadb", "-h", "127.0.0.1", "-P", str(args.port), "-u", "root",
                        "--default-character-set=utf8mb4"], input=sql, capture_output=True,
                       timeout=300)
    out = {"load": [r.returncode, r.stderr.decode("utf-8", "replace").strip()]}
    conn = connect(args, "dumpcs")
    out["queries"] = {q: query(conn, q) for q in CHARSET_QUERIES}
    query(conn, "DELETE FROM app WHERE id > 3")
    conn.close()
    dump = subprocess.run(["mariadb-dump", "-h", "127.0.0.1", "-P", str(args.port), "-u", "root",
                           "--databases", "dumpcs"], capture_output=True, timeout=300)
    out["dump back is the same"] = table_sections(dump.stdout) == table_sections(sql)
    out["round trip"] = round_trip(args, "dumpcs", ("legacy", "app"))
    return out


def load(args):
    """Loads the dump and reads the session's variables after its footer, in the same
    client session."""
    # Bytes: the dump quotes binary strings raw, which is not UTF-8.
    with open(DUMP, "rb") as f:
        sql = f.read()
    # utf8mb4 at connect: Quire does not take the handshake's character set (docs/protocol.md),
    # and the footer restores what the session had then.
    r = subprocess.run(["mariadb", "-h", "127.0.0.1", "-P", str(args.port), "-u", "root",
                        "-N", "-B", "--default-character-set=utf8mb4"], input=sql + AFTER_LOAD.encode(), capture_output=True,
                       timeout=300)
    out = r.stdout.decode("utf-8", "replace").strip().split("\n")
    return r.returncode, r.stderr.decode("utf-8", "replace").strip(), out[-1:]


def session_checks(args):
    """User variables are per session and end with it."""
    out = []
    a, b = connect(args), connect(args)
    query(a, "SET @mine = 42, @s = 'a'")
    out.append(query(a, "SELECT @mine, @s"))
    out.append(query(b, "SELECT @mine, @s"))
    query(b, "SET @mine = 7")
    out.append(query(a, "SELECT @mine"))
    a.close()
    c = connect(args)
    out.append(query(c, "SELECT @mine, @OLD_SQL_MODE"))
    b.close()
    c.close()
    return out


TABLES = ("attrs", "bulk", "people", "empty_one", "clock", "checked")


def round_trip(args, db="dumptest", tables=TABLES):
    """mariadb-dump of the server's own `db`, loaded into `<db>_copy`: both tools' exit
    codes, then whether each table's CHECKSUM TABLE is the same in both."""
    base = ["-h", "127.0.0.1", "-P", str(args.port), "-u", "root"]
    dump = subprocess.run(["mariadb-dump"] + base + [db], capture_output=True,
                          timeout=300)
    conn = connect(args)
    query(conn, "DROP DATABASE IF EXISTS %s_copy" % db)
    query(conn, "CREATE DATABASE %s_copy" % db)
    load = subprocess.run(["mariadb"] + base + ["%s_copy" % db], input=dump.stdout,
                          capture_output=True, timeout=300)
    same, same_ddl = [], []
    for t in tables:
        rows = query(conn, "CHECKSUM TABLE %s.%s, %s_copy.%s" % (db, t, db, t))
        same.append([t, len(rows) == 2 and rows[0][1] is not None and rows[0][1] == rows[1][1]])
        a = query(conn, "SHOW CREATE TABLE %s.%s" % (db, t))
        b = query(conn, "SHOW CREATE TABLE %s_copy.%s" % (db, t))
        same_ddl.append([t, a == b and len(a) == 1])
    query(conn, "DROP DATABASE %s_copy" % db)
    conn.close()
    return {"dump exit": dump.returncode, "dump stderr": dump.stderr.decode("utf-8", "replace").strip(),
            "load exit": load.returncode, "load stderr": load.stderr.decode("utf-8", "replace").strip(),
            "same checksums": same, "same SHOW CREATE TABLE": same_ddl}


ZONE_ROWS = ("SELECT id, UNIX_TIMESTAMP(ts), dt, UNIX_TIMESTAMP(fixed), ts, fixed "
             "FROM %s.zoned ORDER BY id")


def zone_round_trip(args):
    """Time zones: a table of TIMESTAMPs written under +05:30, dumped by mariadb-dump while
    the server's global zone is +05:30 (the dump's session starts in it; the dump sets
    `TIME_ZONE='+00:00'` and writes UTC), loaded back into another database: the dump's
    INSERT as written, and the same instants, DATETIMEs, CHECKSUM TABLE and SHOW CREATE
    TABLE in both, read under +05:30."""
    conn = connect(args)
    query(conn, "SET GLOBAL time_zone = '+05:30'")
    try:
        conn.close()
        conn = connect(args)
        for q in ("DROP DATABASE IF EXISTS tzdump", "CREATE DATABASE tzdump",
                  "CREATE TABLE tzdump.zoned (id INT PRIMARY KEY, ts TIMESTAMP NULL, "
                  "dt DATETIME NULL, fixed TIMESTAMP NOT NULL DEFAULT '2001-01-01 05:30:00', "
                  "KEY (ts))",
                  "INSERT INTO tzdump.zoned (id, ts, dt) VALUES "
                  "(1, '2024-03-10 12:00:00', '2024-03-10 12:00:00'), "
                  "(2, '1970-01-01 05:30:01', '1970-01-01 05:30:01'), "
                  "(3, 0, NULL), (4, NULL, '2038-01-19 08:44:07')"):
            query(conn, q)
        base = ["-h", "127.0.0.1", "-P", str(args.port), "-u", "root"]
        dump = subprocess.run(["mariadb-dump"] + base + ["tzdump"], capture_output=True,
                              timeout=300)
        text_out = dump.stdout.decode("utf-8", "replace")
        header = [l for l in text_out.split("\n") if "TIME_ZONE" in l]
        # The INSERT and its rows, one a line, to its `;`.
        lines = text_out.split("\n")
        start = next((i for i, l in enumerate(lines) if l.startswith("INSERT INTO `zoned`")),
                     len(lines))
        end = next((i for i in range(start, len(lines)) if lines[i].endswith(";")), start)
        inserts = lines[start:end + 1]
        query(conn, "DROP DATABASE IF EXISTS tzdump_copy")
        query(conn, "CREATE DATABASE tzdump_copy")
        load = subprocess.run(["mariadb"] + base + ["tzdump_copy"], input=dump.stdout,
                              capture_output=True, timeout=300)
        out = {"dump exit": dump.returncode, "load exit": load.returncode,
               "load stderr": load.stderr.decode("utf-8", "replace").strip(),
               "time zone lines": header, "inserts": inserts,
               "session zone": query(conn, "SELECT @@time_zone"),
               "rows": query(conn, ZONE_ROWS % "tzdump"),
               "copied rows": query(conn, ZONE_ROWS % "tzdump_copy")}
        sums = query(conn, "CHECKSUM TABLE tzdump.zoned, tzdump_copy.zoned")
        out["same checksum"] = len(sums) == 2 and sums[0][1] == sums[1][1]
        out["same SHOW CREATE TABLE"] = (
            query(conn, "SHOW CREATE TABLE tzdump.zoned")[0][1:]
            == query(conn, "SHOW CREATE TABLE tzdump_copy.zoned")[0][1:])
        query(conn, "DROP DATABASE tzdump")
        query(conn, "DROP DATABASE tzdump_copy")
        return out
    finally:
        query(conn, "SET GLOBAL time_zone = DEFAULT")
        conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=3307)
    p.add_argument("--record", action="store_true")
    args = p.parse_args()
    got = {}
    rc, err, after = load(args)
    got["load"] = {"exit": rc, "stderr": err, "after": after}
    conn = connect(args)
    query(conn, "USE dumptest")
    got["queries"] = {q: query(conn, q) for q in QUERIES}
    conn.close()
    got["sessions"] = session_checks(args)
    got["round trip"] = round_trip(args)
    got["time zones"] = zone_round_trip(args)
    got["charsets"] = charsets_case(args)
    if args.record:
        with open(EXPECTED, "w", encoding="utf-8") as f:
            json.dump(got, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print("recorded %s" % EXPECTED)
        return
    with open(EXPECTED, encoding="utf-8") as f:
        want = json.load(f)
    passed = failed = 0

    def check(name, w, g):
        nonlocal passed, failed
        if w == g:
            passed += 1
        else:
            failed += 1
            print("FAIL %s:\n  want %r\n  got  %r" % (name, w, g))

    check("load", want["load"], got["load"])
    for q in QUERIES:
        check(q, want["queries"].get(q), got["queries"][q])
    check("user variables per session", want["sessions"], got["sessions"])
    check("dump of the loaded database, reloaded: same checksums", want["round trip"],
          got["round trip"])
    check("a dump taken under +05:30 reloads to the same instants", want.get("time zones"),
          got["time zones"])
    for k in ("load", "dump back is the same", "round trip"):
        check("charsets: " + k, want["charsets"][k], got["charsets"][k])
    for q in CHARSET_QUERIES:
        check("charsets: " + q, want["charsets"]["queries"].get(q), got["charsets"]["queries"][q])
    print("mariadb-dump load: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
