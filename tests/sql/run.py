#!/usr/bin/env python3
"""Golden SQL scripts: a statement, then `ok`, an error code, or the expected rows.

The same file runs against any MySQL-protocol server, so expectations are checked against
MariaDB 10.11 itself (`--record` rewrites them from the server's answers) and then held
against Quire:

    python3 tests/sql/run.py --port 3307 tests/sql/*.test          # check Quire
    python3 tests/sql/run.py --port 3310 --record tests/sql/*.test # re-record from MariaDB

The reference MariaDB runs with --no-defaults --character-set-server=utf8mb4
--collation-server=utf8mb4_general_ci (Debian's packaged defaults, and Quire's).

Format (blocks separated by blank lines; `#` starts a comment line):

    connection NAME                 switch to (or open) another session
    connection NAME USER PASSWORD   ... opened as USER (PASSWORD `-` for none), no database
    login USER PASSWORD [DB]        a login alone: after ----, `ok` or `error CODE: message`
    statement ok                    the next line(s) must succeed
    statement error CODE            ... must fail with MySQL error CODE
                                    (`statement ok` may end with ---- then `affected N`
                                    and `info TEXT`: the OK packet's counts and message,
                                    and `insert_id N` if given: its insert id)
    query [rowsort] [types] [names] the rows, tab-separated, NULL for NULL, after ----
                                    (a row that is one empty string is written (empty));
                                    with `types`, a first line `types: ...` gives each
                                    column's wire type, length and decimals (see col_type);
                                    with `names`, a line `names: ...` the columns' names
                                    (tab-separated, escaped as values are)

Each file runs in a fresh database named after it. The last line printed is
"N passed, N failed".
"""
import argparse
import os
import sys

import pymysql
from pymysql.constants import FIELD_TYPE, FLAG


def connect(args, db=None, user=None, password=None):
    c = pymysql.connect(host=args.host, port=args.port, user=user or args.user,
                        password=args.password if password is None else password,
                        database=db, autocommit=True, conv={}, charset="utf8mb4")
    return c


def pw_arg(p):
    return "" if p == "-" else p


def text(v):
    """A value as one line: NULL for NULL, newlines and tabs escaped."""
    if v is None:
        return "NULL"
    if isinstance(v, (bytes, bytearray)):
        v = v.decode("utf-8", "replace")
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


FIELD_TYPES = {v: k for k, v in vars(FIELD_TYPE).items() if isinstance(v, int)}


def col_type(f):
    """A result column's metadata as one word: TYPE:length[.decimals][u][z][b], `u` for
    UNSIGNED, `z` for ZEROFILL, `b` for a string column of the binary character set."""
    name = FIELD_TYPES.get(f.type_code, str(f.type_code))
    s = "%s:%d" % (name, f.length)
    if f.scale:
        s += ".%d" % f.scale
    if f.flags & FLAG.UNSIGNED:
        s += "u"
    if f.flags & FLAG.ZEROFILL:
        s += "z"
    if f.charsetnr == 63 and name in ("VAR_STRING", "STRING", "BLOB"):
        s += "b"
    return s


def parse(path):
    blocks, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if line.startswith("#"):
                continue
            if line.strip() == "":
                if cur:
                    blocks.append(cur)
                    cur = []
                continue
            cur.append(line)
    if cur:
        blocks.append(cur)
    return blocks


def run_block(conns, state, b, args):
    head = b[0].split()
    kind = head[0]
    if kind == "connection":
        name = head[1]
        if name not in conns:
            if len(head) >= 4:
                conns[name] = connect(args, None, head[2], pw_arg(head[3]))
            else:
                conns[name] = connect(args, state["db"])
        state["conn"] = name
        return None, b
    if kind == "login":
        try:
            i = b.index("----")
        except ValueError:
            i = len(b)
        want = b[i + 1:]
        try:
            c = connect(args, head[3] if len(head) > 3 else None, head[1], pw_arg(head[2]))
            c.close()
            got = ["ok"]
        except pymysql.err.MySQLError as e:
            got = ["error %d: %s" % (e.args[0], e.args[1] if len(e.args) > 1 else "")]
        rec = b[:i] + ["----"] + got
        return (None if got == want else "login: want %r, got %r" % (want, got)), rec
    c = conns[state["conn"]]
    if kind == "statement":
        # `statement ok` may end with ---- and the OK packet: `affected N` and `info TEXT`.
        try:
            i = b.index("----")
        except ValueError:
            i = len(b)
        sql = "\n".join(b[1:i])
        want = head[1]
        ok_want = b[i + 1:]
        ok_got = []
        try:
            with c.cursor() as cur:
                cur.execute(sql)
                msg = c._result.message if c._result is not None else b""
                # With session tracking the info is a length-encoded string; PyMySQL keeps
                # the length byte.
                if msg and msg[0] == len(msg) - 1:
                    msg = msg[1:]
                if isinstance(msg, (bytes, bytearray)):
                    msg = msg.decode("utf-8", "replace")
                ok_got = ["affected %d" % cur.rowcount, "info %s" % (msg or "")]
                # The insert id only where the expectation asks for it (most blocks do not).
                if any(w.startswith("insert_id ") for w in ok_want):
                    ok_got.append("insert_id %d" % c._result.insert_id)
            got = "ok"
        except pymysql.err.MySQLError as e:
            got = "error %d" % e.args[0]
            state["last_error"] = str(e.args[1]) if len(e.args) > 1 else ""
        expected = "ok" if want == "ok" else "error " + head[2]
        if i == len(b):
            rec = [("statement " + got)] + b[1:]
        else:
            rec = [("statement " + got)] + b[1:i] + ["----"] + ok_got
        if got != expected:
            return "expected %s, got %s (%s)" % (expected, got, state.get("last_error", "")), rec
        if i < len(b) and ok_got != ok_want:
            return "OK packet differs:\n  want %r\n  got  %r" % (ok_want, ok_got), rec
        return None, rec
    if kind == "query":
        sort = "rowsort" in head[1:]
        types = "types" in head[1:]
        names = "names" in head[1:]
        try:
            i = b.index("----")
        except ValueError:
            i = len(b)
        sql = "\n".join(b[1:i])
        want = b[i + 1:]
        try:
            with c.cursor() as cur:
                cur.execute(sql)
                rows = ["\t".join(text(v) for v in r) or "(empty)" for r in cur.fetchall()]
                if sort:
                    rows = sorted(rows)
                if names:
                    rows.insert(0, "names: " + "\t".join(text(f.name) for f in cur._result.fields))
                if types:
                    rows.insert(0, "types: " + " ".join(col_type(f) for f in cur._result.fields))
        except pymysql.err.MySQLError as e:
            rows = ["error %d: %s" % (e.args[0], e.args[1] if len(e.args) > 1 else "")]
        if sort:
            # Recorded rows are sorted already; the `types:` and `names:` lines stay first.
            head_lines = int(types) + int(names)
            want = want[:head_lines] + sorted(want[head_lines:])
        rec = b[:i] + ["----"] + rows
        if rows != want:
            return "rows differ:\n  want %r\n  got  %r" % (want, rows), rec
        return None, rec
    return "unknown block %r" % b[0], b


def run_file(path, args):
    name = os.path.splitext(os.path.basename(path))[0]
    db = "golden_" + name.replace("-", "_")
    admin = connect(args)
    with admin.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS %s" % db)
        cur.execute("CREATE DATABASE %s" % db)
    conns = {"default": connect(args, db)}
    state = {"conn": "default", "db": db}
    passed = failed = 0
    out = []
    for b in parse(path):
        err, rec = run_block(conns, state, b, args)
        out.append(rec)
        if b[0].startswith("connection"):
            continue
        if err:
            failed += 1
            print("FAIL %s: %s\n  %s" % (path, b[1] if len(b) > 1 else b[0], err))
        else:
            passed += 1
    for c in conns.values():
        try:
            c.close()
        except pymysql.err.Error:
            pass
    with admin.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS %s" % db)
    admin.close()
    if args.record:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(r) for r in out) + "\n")
    return passed, failed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3307)
    p.add_argument("--user", default="root")
    p.add_argument("--password", default="")
    p.add_argument("--record", action="store_true")
    p.add_argument("files", nargs="+")
    args = p.parse_args()
    tp = tf = 0
    for f in args.files:
        a, b = run_file(f, args)
        print("%s: %d passed, %d failed" % (f, a, b))
        tp += a
        tf += b
    print("%d passed, %d failed" % (tp, tf))
    sys.exit(1 if tf else 0)


if __name__ == "__main__":
    main()
