#!/usr/bin/env python3
"""A latin1 client (docs/protocol.md, "Character sets"): PyMySQL with charset='latin1' names
collation 8 (latin1_swedish_ci) in its handshake, then sends latin1 bytes and reads latin1
bytes; SET NAMES latin1 does the same for a session that started in utf8mb4.

The expectations are MariaDB 10.11's answers (run this script with --port of a MariaDB to
check them): what the latin1 client stores reads back in UTF-8 for a utf8mb4 client, what
latin1 cannot hold reads as '?', BLOB parameters stay bytes, column metadata says latin1.

    python3 tests/server/latin1.py --port 3307
"""
import argparse
import sys

import pymysql

passed = failed = 0


def check(name, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}:\n  want {want!r}\n  got  {got!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3307)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="")
    args = ap.parse_args()

    def connect(charset, **kw):
        return pymysql.connect(host=args.host, port=args.port, user=args.user,
                               password=args.password, charset=charset, autocommit=True,
                               **kw)

    u = connect("utf8mb4")
    cu = u.cursor()
    cu.execute("DROP DATABASE IF EXISTS latin1_client")
    cu.execute("CREATE DATABASE latin1_client")
    cu.execute("USE latin1_client")
    cu.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(10))")

    # conv={}: every value as the bytes decoded by the connection's encoding (PyMySQL decodes
    # text columns with latin1 here, so a wrong byte shows as a wrong character).
    l = connect("latin1", database="latin1_client", conv={})
    cl = l.cursor()
    cl.execute("SELECT @@character_set_client, @@character_set_connection, "
               "@@character_set_results, @@collation_connection")
    check("handshake collation 8", cl.fetchall(),
          (("latin1", "latin1", "latin1", "latin1_swedish_ci"),))

    # Text in: literal bytes of the query (0x80 is the euro sign in MariaDB's latin1), and
    # PyMySQL's escaped parameters: a str in latin1, bytes as _binary'…'.
    cl.execute(b"INSERT INTO t VALUES (1, 'caf\xe9 \x80', 'x')")
    cl.execute("INSERT INTO t VALUES (2, %s, %s)", ("na\xefve", b"\xe9\xff"))
    cu.execute("INSERT INTO t VALUES (3, 'Ω ok é', 'y')")
    cu.execute("SELECT id, s, HEX(s), HEX(b) FROM t ORDER BY id")
    check("stored as UTF-8, read by a utf8mb4 client", cu.fetchall(),
          ((1, "café €", "636166C3A920E282AC", "78"),
           (2, "naïve", "6E61C3AF7665", "E9FF"),
           (3, "Ω ok é", "CEA9206F6B20C3A9", "79")))

    # Results out: latin1 bytes, '?' for what latin1 cannot hold; a binary column untouched;
    # a non-ASCII alias and literal converted both ways.
    cl.execute("SELECT id, s, b, 'lit\xe9' AS `n\xe9` FROM t ORDER BY id")
    check("latin1 results", cl.fetchall(),
          (("1", "café €", b"x", "lité"), ("2", "naïve", b"\xe9\xff", "lité"),
           ("3", "? ok é", b"y", "lité")))
    check("latin1 metadata",
          [(f.name, f.charsetnr, f.length, f.type_code) for f in l._result.fields],
          [("id", 63, 11, 3), ("s", 8, 10, 253), ("b", 63, 10, 253), ("né", 8, 4, 253)])
    cl.execute(b"SELECT COUNT(*) FROM t WHERE s = 'caf\xe9 \x80'")
    check("a latin1 literal compares with the stored text", cl.fetchall(), (("1",),))

    # An error message naming the client's text comes in latin1 (PyMySQL decodes messages
    # as UTF-8, so the latin1 byte of é reads as U+FFFD; a UTF-8 é would read as é).
    try:
        cl.execute("SELECT * FROM `t\xe9`")
        check("unknown table", "no error", 1146)
    except pymysql.MySQLError as e:
        check("error message in latin1", e.args,
              (1146, "Table 'latin1_client.t\ufffd' doesn't exist"))

    # SET NAMES latin1 in a utf8mb4 session, then back.
    r = connect("utf8mb4", database="latin1_client", conv={})
    r.encoding = "latin1"  # what PyMySQL would decode with after SET NAMES latin1
    cr = r.cursor()
    cr.execute("SET NAMES latin1")
    cr.execute(b"SELECT s, 'd\xe9j\xe0' FROM t WHERE id = 3")
    check("SET NAMES latin1", cr.fetchall(), (("? ok é", "déjà"),))
    check("SET NAMES latin1 metadata", [f.charsetnr for f in r._result.fields], [8, 8])
    cr.execute("SELECT @@collation_connection")
    check("SET NAMES latin1 collation", cr.fetchall(), (("latin1_swedish_ci",),))
    cr.execute("SET NAMES latin1 COLLATE latin1_bin")
    cr.execute("SELECT @@collation_connection")
    check("SET NAMES latin1 COLLATE", cr.fetchall(), (("latin1_bin",),))
    for bad, code in (("SET NAMES latin1 COLLATE utf8mb4_bin", 1253),
                      ("SET NAMES latin1 COLLATE latin1_nonesuch", 1273)):
        try:
            cr.execute(bad)
            check(bad, "no error", code)
        except pymysql.MySQLError as e:
            check(bad, e.args[0], code)
    cr.execute("SET NAMES utf8mb4")
    r.encoding = "utf8"
    cr.execute("SELECT s FROM t WHERE id = 3")
    check("back to utf8mb4", cr.fetchall(), (("Ω ok é",),))
    check("utf8mb4 metadata", [f.charsetnr for f in r._result.fields], [45])

    cu.execute("DROP DATABASE latin1_client")
    for c in (u, l, r):
        c.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
