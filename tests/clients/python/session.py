#!/usr/bin/env python3
"""A scripted session of a Python driver against a MySQL-protocol server (issue 17).

    python3 tests/clients/python/session.py --driver pymysql --port 3307
    python3 tests/clients/python/session.py --driver mysqlclient --port 3307

PyMySQL and mysqlclient (MySQLdb, over the C client library) have no server-side prepared
statements: `cursor.execute(sql, params)` interpolates on the client, so that is what runs
here (the Node, Go, Java and Rust sessions cover the binary protocol). Every result is checked exactly; the first mismatch exits 1 with what differed. Passes against
MariaDB 10.11, which is how the expectations were checked.
"""
import argparse
import datetime as dt
import sys
import time
import zlib
from decimal import Decimal

BLOB_LEN = 4 * 1024 * 1024
STREAM_ROWS = 100_000

TABLE = """CREATE TABLE t (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64),
  amount DECIMAL(20,6),
  big_dec DECIMAL(38,30),
  d DATE,
  dt DATETIME(6),
  ts TIMESTAMP NULL,
  dbl DOUBLE,
  u64 BIGINT UNSIGNED,
  data LONGBLOB,
  note TEXT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""

COLS = "name, amount, big_dec, d, dt, ts, dbl, u64, data, note"
SELECT = "SELECT id, " + COLS + " FROM t WHERE id = %s"

# The rows every driver's session writes and reads back (the same values in each language).
ROWS = [
    ("alpha", Decimal("12345678901234.123456"),
     Decimal("99999999.999999999999999999999999999999"),
     dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 34, 56, 789012),
     dt.datetime(2024, 2, 29, 23, 59, 59), 0.1, 18446744073709551615, bytes(range(256)),
     "Grüße, 日本語, emoji 🎉, ñ"),
    ("beta", Decimal("-99999999999999.999999"), Decimal("-0.000000000000000000000000000001"),
     dt.date(1000, 1, 1), dt.datetime(1000, 1, 1, 0, 0, 0, 0), dt.datetime(1970, 1, 1, 0, 0, 1),
     -1.7976931348623157e308, 0, b"", ""),
    ("gamma", Decimal("0.000001"), Decimal("3.141592653589793238462643383279"),
     dt.date(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
     dt.datetime(2038, 1, 19, 3, 14, 7), 5e-324, 9223372036854775808,
     b"\x00'\"\\\n\r\x1a%_", "it's \"quoted\" \\ back\nslash %s"),
    (None, None, None, None, None, None, None, None, None, None),
]


class Mismatch(Exception):
    pass


def check(what, got, want):
    if type(got) is not type(want) or got != want:
        raise Mismatch("%s: got %r (%s), want %r (%s)" % (what, shorten(got), type(got).__name__,
                                                          shorten(want), type(want).__name__))


def shorten(v):
    if isinstance(v, (bytes, str)) and len(v) > 80:
        return v[:40] + (b"..." if isinstance(v, bytes) else "...") + v[-20:]
    return v


def blob_bytes(n):
    """The 4 MiB test blob: bytes of a 32-bit LCG, the same in every language's session."""
    out = bytearray(n)
    state = 1
    for i in range(n):
        state = (state * 1103515245 + 12345) & 0xFFFFFFFF
        out[i] = (state >> 16) & 0xFF
    return bytes(out)


class Driver:
    def __init__(self, name, args):
        self.name = name
        self.args = args
        if name == "pymysql":
            import pymysql
            import pymysql.cursors
            self.mod = pymysql
            self.ss_cursor = pymysql.cursors.SSCursor
        else:
            import MySQLdb
            import MySQLdb.cursors
            self.mod = MySQLdb
            self.ss_cursor = MySQLdb.cursors.SSCursor

    def connect(self, db=None, autocommit=True, **extra):
        kw = dict(host=self.args.host, port=self.args.port, user=self.args.user,
                  password=self.args.password, charset="utf8mb4", autocommit=autocommit, **extra)
        if db:
            kw["database"] = db
        return self.mod.connect(**kw)

    def error_code(self, e):
        return e.args[0] if e.args else None


def query(conn, sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall() if cur.description else cur.rowcount


def conn_db(conn):
    return one(conn, "SELECT DATABASE()")[0]


def one(conn, sql, params=None):
    rows = query(conn, sql, params)
    if len(rows) != 1:
        raise Mismatch("%s: expected one row, got %d" % (sql, len(rows)))
    return rows[0]


def expect_error(drv, what, code, message, fn):
    try:
        fn()
    except drv.mod.MySQLError as e:
        check(what + " error code", drv.error_code(e), code)
        check(what + " error message", e.args[1], message)
        return
    raise Mismatch("%s: no error, want %d" % (what, code))


def check_row(what, got, want_id, want):
    check(what + " id", got[0], want_id)
    names = COLS.split(", ")
    for i, (g, w) in enumerate(zip(got[1:], want)):
        if isinstance(g, bytearray):
            g = bytes(g)
        check("%s column %s" % (what, names[i]), g, w)


def round_trip(drv, conn):
    """Rows written with client-side interpolation, read back with parameters."""
    query(conn, "DELETE FROM t")
    ids = []
    for row in ROWS:
        with conn.cursor() as cur:
            cur.execute("INSERT INTO t (" + COLS + ") VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        row)
            check("insert rowcount", cur.rowcount, 1)
            ids.append(cur.lastrowid)
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        raise Mismatch("auto-increment ids not increasing: %r" % ids)
    for i, row in zip(ids, ROWS):
        check_row("interpolated row %d" % i, one(conn, SELECT, (i,)), i, row)
    # By a temporal and a DECIMAL parameter, and NULL found with IS NULL / <=>.
    check("select by date", query(conn, "SELECT id FROM t WHERE d = %s", (dt.date(2024, 2, 29),)),
          ((ids[0],),))
    check("select by datetime(6)", query(conn, "SELECT id FROM t WHERE dt = %s",
                                         (dt.datetime(9999, 12, 31, 23, 59, 59, 999999),)), ((ids[2],),))
    check("select by decimal", query(conn, "SELECT id FROM t WHERE amount = %s",
                                     (Decimal("-99999999999999.999999"),)), ((ids[1],),))
    check("select by u64", query(conn, "SELECT id FROM t WHERE u64 = %s", (18446744073709551615,)),
          ((ids[0],),))
    check("select null-safe", query(conn, "SELECT id FROM t WHERE name <=> %s", (None,)),
          ((ids[3],),))
    # Exact text as the server sends it, through a connection that converts nothing.
    raw = drv.connect(conn_db(conn), conv={})
    try:
        got = one(raw, "SELECT amount, big_dec, d, dt, ts, dbl, u64 FROM t WHERE id = %s" % ids[0])
        check("text of row 1", tuple(v.decode() if isinstance(v, bytes) else v for v in got),
              ("12345678901234.123456", "99999999.999999999999999999999999999999", "2024-02-29",
               "2024-02-29 12:34:56.789012", "2024-02-29 23:59:59", "0.1", "18446744073709551615"))
        got = one(raw, "SELECT amount, big_dec, d, dt, dbl FROM t WHERE id = %s" % ids[2])
        check("text of row 3", tuple(v.decode() if isinstance(v, bytes) else v for v in got),
              ("0.000001", "3.141592653589793238462643383279", "9999-12-31",
               "9999-12-31 23:59:59.999999", "5e-324"))
    finally:
        raw.close()


def transactions(drv, db):
    a = drv.connect(db, autocommit=False)
    b = drv.connect(db)
    try:
        query(a, "INSERT INTO t (name) VALUES (%s)", ("txn-commit",))
        check("uncommitted row seen by another connection",
              one(b, "SELECT COUNT(*) FROM t WHERE name = %s", ("txn-commit",)), (0,))
        a.commit()
        check("committed row seen by another connection",
              one(b, "SELECT COUNT(*) FROM t WHERE name = %s", ("txn-commit",)), (1,))
        query(a, "INSERT INTO t (name) VALUES (%s)", ("txn-rollback",))
        check("own uncommitted row", one(a, "SELECT COUNT(*) FROM t WHERE name = %s", ("txn-rollback",)),
              (1,))
        a.rollback()
        check("rolled-back row, other connection",
              one(b, "SELECT COUNT(*) FROM t WHERE name = %s", ("txn-rollback",)), (0,))
        check("rolled-back row, own connection",
              one(a, "SELECT COUNT(*) FROM t WHERE name = %s", ("txn-rollback",)), (0,))
        a.commit()
    finally:
        a.close()
        b.close()


def found_rows(drv, db):
    """CLIENT_FOUND_ROWS (SQLAlchemy's dialects ask for it): an UPDATE's affected rows, and
    ROW_COUNT(), are the rows it matched; without it, the rows it changed."""
    flag = drv.mod.constants.CLIENT.FOUND_ROWS
    for label, extra, want in [("without CLIENT_FOUND_ROWS", {}, 0),
                               ("with CLIENT_FOUND_ROWS", {"client_flag": flag}, 2)]:
        conn = drv.connect(db, **extra)
        try:
            query(conn, "DELETE FROM t WHERE name IN ('fr1', 'fr2')")
            query(conn, "INSERT INTO t (name, note) VALUES ('fr1', 'same'), ('fr2', 'same')")
            with conn.cursor() as cur:
                cur.execute("UPDATE t SET note = 'same' WHERE name IN ('fr1', 'fr2')")
                check("UPDATE that changes nothing, rowcount " + label, cur.rowcount, want)
            check("ROW_COUNT() " + label, one(conn, "SELECT ROW_COUNT()"), (want,))
            with conn.cursor() as cur:
                cur.execute("UPDATE t SET note = 'other' WHERE name IN ('fr1', 'fr2', 'none')")
                check("UPDATE that changes two rows, rowcount " + label, cur.rowcount, 2)
            query(conn, "DELETE FROM t WHERE name IN ('fr1', 'fr2')")
        finally:
            conn.close()


def upserts(drv, db):
    """INSERT … ON DUPLICATE KEY UPDATE as ORMs send it: `executemany` (which both drivers
    rewrite into one multi-row INSERT), rowcount 1 per row inserted and 2 per row changed,
    the updated row's id through `id = LAST_INSERT_ID(id)` and lastrowid, and a row left
    as it was counted only with CLIENT_FOUND_ROWS."""
    conn = drv.connect(db)
    try:
        query(conn, "DROP TABLE IF EXISTS up")
        query(conn, "CREATE TABLE up (id INT AUTO_INCREMENT PRIMARY KEY, "
                    "sku VARCHAR(20) UNIQUE, qty INT NOT NULL)")
        sql = ("INSERT INTO up (sku, qty) VALUES (%s, %s) "
               "ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty)")
        with conn.cursor() as cur:
            cur.executemany(sql, [("a", 1), ("b", 2), ("a", 10)])
            check("upsert executemany rowcount", cur.rowcount, 4)
        # One statement: ROW_COUNT() is the whole batch's.
        check("upsert executemany ROW_COUNT()", one(conn, "SELECT ROW_COUNT()"), (4,))
        check("upsert rows", query(conn, "SELECT id, sku, qty FROM up ORDER BY id"),
              ((1, "a", 11), (2, "b", 2)))
        with conn.cursor() as cur:
            cur.execute("INSERT INTO up (sku, qty) VALUES (%s, %s) "
                        "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), qty = qty + 1", ("b", 5))
            check("upsert of b, rowcount", cur.rowcount, 2)
            check("upsert of b, lastrowid", cur.lastrowid, 2)
        check("upsert of b, LAST_INSERT_ID()", one(conn, "SELECT LAST_INSERT_ID()"), (2,))
        with conn.cursor() as cur:
            cur.execute(sql, ("c", 7))
            check("upsert inserting c, rowcount", cur.rowcount, 1)
            check("upsert inserting c, lastrowid", cur.lastrowid, 5)
        flag = drv.mod.constants.CLIENT.FOUND_ROWS
        for label, extra, want in [("without CLIENT_FOUND_ROWS", {}, 0),
                                   ("with CLIENT_FOUND_ROWS", {"client_flag": flag}, 1)]:
            c = drv.connect(db, **extra)
            try:
                with c.cursor() as cur:
                    cur.execute("INSERT INTO up (sku, qty) VALUES ('a', 0) "
                                "ON DUPLICATE KEY UPDATE qty = qty")
                    check("upsert that changes nothing, rowcount " + label, cur.rowcount, want)
            finally:
                c.close()
        check("upsert rows at the end", query(conn, "SELECT id, sku, qty FROM up ORDER BY id"),
              ((1, "a", 11), (2, "b", 3), (5, "c", 7)))
        query(conn, "DROP TABLE up")
    finally:
        conn.close()


def errors(drv, db, conn):
    query(conn, "INSERT INTO t (id, name) VALUES (%s, %s)", (1_000_000, "dup"))
    expect_error(drv, "duplicate key", 1062, "Duplicate entry '1000000' for key 'PRIMARY'",
                 lambda: query(conn, "INSERT INTO t (id, name) VALUES (%s, %s)", (1_000_000, "dup2")))
    check("connection usable after 1062", one(conn, "SELECT name FROM t WHERE id = %s", (1_000_000,)),
          ("dup",))
    a = drv.connect(db, autocommit=False)
    b = drv.connect(db, autocommit=False)
    try:
        check("lock holder", one(a, "SELECT name FROM t WHERE id = %s FOR UPDATE", (1_000_000,)), ("dup",))
        query(b, "SET innodb_lock_wait_timeout=1")
        start = time.monotonic()
        expect_error(drv, "lock wait timeout", 1205, "Lock wait timeout exceeded; try restarting transaction",
                     lambda: query(b, "UPDATE t SET name = %s WHERE id = %s", ("blocked", 1_000_000)))
        waited = time.monotonic() - start
        if not 0.9 <= waited < 10:
            raise Mismatch("lock wait lasted %.2f s, want about 1 s" % waited)
        b.rollback()
        a.rollback()
        check("row unchanged after timeout", one(conn, "SELECT name FROM t WHERE id = %s", (1_000_000,)),
              ("dup",))
    finally:
        a.close()
        b.close()


def big_blob(drv, db, conn):
    (limit,) = one(conn, "SELECT @@max_allowed_packet")
    if not isinstance(limit, int):
        raise Mismatch("@@max_allowed_packet: got %r (%s), want an integer" % (limit, type(limit).__name__))
    need = 2 * BLOB_LEN + 1024  # the interpolated statement escapes some bytes
    if limit < need:
        # What an application does: raise the global and reconnect (the session's value is
        # read-only and taken from the global at connect).
        query(conn, "SET GLOBAL max_allowed_packet = %s", (need,))
        conn.close()
        conn = drv.connect(db)
    data = blob_bytes(BLOB_LEN)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO t (name, data) VALUES (%s, %s)", ("blob", data))
        blob_id = cur.lastrowid
    check("blob length on the server", one(conn, "SELECT LENGTH(data) FROM t WHERE id = %s", (blob_id,)),
          (BLOB_LEN,))
    (got,) = one(conn, "SELECT data FROM t WHERE id = %s", (blob_id,))
    check("4 MiB blob", bytes(got), data)
    return conn


def stream(drv, db, conn):
    query(conn, "CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(32), v DECIMAL(12,2)) ENGINE=InnoDB")
    query(conn, "INSERT INTO big SELECT seq, CONCAT('row-', seq), seq / 100 FROM seq_1_to_%d" % STREAM_ROWS)
    s = drv.connect(db)
    try:
        cur = s.cursor(drv.ss_cursor)
        cur.execute("SELECT id, s, v FROM big WHERE id > %s ORDER BY id", (0,))
        n, crc, total = 0, 0, Decimal(0)
        for row in cur:  # an unbuffered cursor: rows are read off the socket as iterated
            n += 1
            if row != (n, "row-%d" % n, Decimal(n) / 100):
                raise Mismatch("streamed row %d: got %r" % (n, row))
            crc = zlib.crc32(row[1].encode(), crc)
            total += row[2]
        cur.close()
        check("streamed row count", n, STREAM_ROWS)
        check("streamed decimal sum", total, Decimal("50000500.00"))
        check("streamed crc32 of s", crc, expected_stream_crc())
    finally:
        s.close()


def multi_statements(drv, db):
    """CLIENT_MULTI_STATEMENTS: one query, a result per statement, the first error ends it."""
    flag = drv.mod.constants.CLIENT.MULTI_STATEMENTS
    conn = drv.connect(db, client_flag=flag)
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE m (a INT); INSERT INTO m VALUES (1),(2);"
                " SELECT a FROM m ORDER BY a; SELECT 'x;y' AS s, @v := 7 AS v")
    check("multi: CREATE", cur.description, None)
    check("multi: next", bool(cur.nextset()), True)
    check("multi: INSERT rowcount", cur.rowcount, 2)
    check("multi: next", bool(cur.nextset()), True)
    check("multi: SELECT", [tuple(r) for r in cur.fetchall()], [(1,), (2,)])
    check("multi: next", bool(cur.nextset()), True)
    check("multi: quoted ;", [tuple(r) for r in cur.fetchall()], [("x;y", 7)])
    check("multi: end", bool(cur.nextset()), False)
    cur.close()
    cur = conn.cursor()
    cur.execute("SELECT 1; SELECT * FROM no_such_table; SELECT 3")
    check("multi: first result", [tuple(r) for r in cur.fetchall()], [(1,)])
    try:
        cur.nextset()
        raise Mismatch("multi: no error for the missing table")
    except drv.mod.MySQLError as e:
        check("multi: error code", drv.error_code(e), 1146)
    cur.close()
    # The statement after the error did not run; the connection is usable.
    check("multi: after an error", one(conn, "SELECT @v"), (7,))
    conn.close()


def change_user(drv, db):
    """COM_CHANGE_USER (mysqlclient's change_user): the session starts over as the new
    user; a refused login keeps the old user, in a session that also started over."""
    root = drv.connect(db)
    query(root, "DROP USER IF EXISTS 'cu_one'@'localhost'")
    query(root, "CREATE USER 'cu_one'@'localhost' IDENTIFIED BY 'pw-one'")
    query(root, "GRANT SELECT ON " + db + ".* TO 'cu_one'@'localhost'")
    conn = drv.connect(db, autocommit=False)
    query(conn, "SET @x = 5")
    query(conn, "SET SESSION sql_mode = 'ANSI_QUOTES'")
    query(conn, "CREATE TEMPORARY TABLE cu_tmp (a INT)")
    query(conn, "INSERT INTO t (name) VALUES ('changed-away')")
    conn.change_user("cu_one", "pw-one", db)
    check("change_user: CURRENT_USER()", one(conn, "SELECT CURRENT_USER()"), ("cu_one@localhost",))
    check("change_user: database", one(conn, "SELECT DATABASE()"), (db,))
    check("change_user: user variables", one(conn, "SELECT @x"), (None,))
    check("change_user: sql_mode", one(conn, "SELECT @@session.sql_mode = @@global.sql_mode"),
          (1,))
    expect_error(drv, "change_user: temporary table", 1146,
                 "Table '%s.cu_tmp' doesn't exist" % db,
                 lambda: query(conn, "SELECT * FROM cu_tmp"))
    check("change_user: rolled back",
          one(root, "SELECT COUNT(*) FROM t WHERE name = 'changed-away'"), (0,))
    expect_error(drv, "change_user: privileges", 1142,
                 "INSERT command denied to user 'cu_one'@'localhost' for table `%s`.`t`" % db,
                 lambda: query(conn, "INSERT INTO t (name) VALUES ('no')"))
    try:
        conn.change_user("cu_one", "wrong", db)
        raise Mismatch("change_user: a wrong password was accepted")
    except drv.mod.MySQLError as e:
        check("change_user: refused", drv.error_code(e), 1045)
    check("change_user: still the old user", one(conn, "SELECT CURRENT_USER()"),
          ("cu_one@localhost",))
    conn.change_user(drv.args.user, drv.args.password, db)
    check("change_user: back", one(conn, "SELECT CURRENT_USER()"), ("root@localhost",))
    conn.close()
    query(root, "DROP USER 'cu_one'@'localhost'")
    root.close()


def expected_stream_crc():
    crc = 0
    for i in range(1, STREAM_ROWS + 1):
        crc = zlib.crc32(b"row-%d" % i, crc)
    return crc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", choices=["pymysql", "mysqlclient"], required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3307)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="")
    args = ap.parse_args()
    drv = Driver(args.driver, args)
    db = "drv_" + args.driver
    step = "connect"
    try:
        conn = drv.connect()
        query(conn, "DROP DATABASE IF EXISTS " + db)
        query(conn, "CREATE DATABASE " + db)
        query(conn, "USE " + db)
        query(conn, TABLE)
        for step, fn in [("round trip", lambda: round_trip(drv, conn)),
                         ("transactions", lambda: transactions(drv, db)),
                         ("CLIENT_FOUND_ROWS", lambda: found_rows(drv, db)),
                         ("upserts", lambda: upserts(drv, db)),
                         ("errors", lambda: errors(drv, db, conn)),
                         ("multi statements", lambda: multi_statements(drv, db))]:
            fn()
        if args.driver == "mysqlclient":
            step = "change_user"
            change_user(drv, db)
        step = "4 MiB blob"
        conn = big_blob(drv, db, conn)
        step = "stream"
        stream(drv, db, conn)
        query(conn, "DROP DATABASE " + db)
        conn.close()
    except Mismatch as e:
        print("%s: %s: %s" % (args.driver, step, e), file=sys.stderr)
        sys.exit(1)
    except drv.mod.MySQLError as e:
        print("%s: %s: unexpected error %r" % (args.driver, step, e.args), file=sys.stderr)
        sys.exit(1)
    print("%s: all checks passed" % args.driver)


if __name__ == "__main__":
    main()
