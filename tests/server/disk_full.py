#!/usr/bin/env python3
"""A full disk under a real `quire serve`, on a small real file system.

The data directory lives on a 160 MiB ext4 file system in a loop-mounted image (tmpfs if
loop devices are refused); a ballast file takes the free space but a few MiB. Then:
  - inserts go on until one fails with MariaDB's error 1114 ("The table 't' is full");
  - the server is still up, reads work, and every acknowledged insert is there;
  - inside a transaction the failure rolls back the statement only;
  - CREATE TABLE, ALTER TABLE (in place and by rebuild), a redo log resize and a temporary
    table fail with 1021 ("Disk full (...)") and leave no file behind, while an instant
    ADD COLUMN (a catalog change) works;
  - once the ballast is removed, writes work again;
  - after a clean restart, and after a kill -9 taken while the disk was full and a
    recovery on the still-full disk, every acknowledged row is there and `quire check` is
    clean.
Mounting needs root; where this machine refuses it, the script says SKIP and why.

    python3 tests/server/disk_full.py --quire target/debug/quire
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pymysql

from serverlib import free_port, start_quire

FS_MIB = 160
LEFT_MIB = 6  # free space left beside the ballast


def sh(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True)


def mount_small_fs(root):
    """Mounts a small file system at root/mnt; returns (mountpoint, kind) or (None, why)."""
    mnt = os.path.join(root, "mnt")
    os.makedirs(mnt)
    img = os.path.join(root, "fs.img")
    if shutil.which("mkfs.ext4"):
        with open(img, "wb") as f:
            f.truncate(FS_MIB << 20)
        r = sh("mkfs.ext4", "-q", "-F", "-m", "0", img)
        if r.returncode == 0:
            r = sh("mount", "-o", "loop", img, mnt)
            if r.returncode == 0:
                return mnt, "ext4 on a loop device"
        why = r.stderr.strip()
    else:
        why = "no mkfs.ext4"
    r = sh("mount", "-t", "tmpfs", "-o", "size=%dm" % FS_MIB, "tmpfs", mnt)
    if r.returncode == 0:
        return mnt, "tmpfs"
    return None, "%s; tmpfs: %s" % (why, r.stderr.strip())


def start(quire, data, port, log):
    return start_quire(quire, data, port, log,
                       ("innodb_log_file_size=16M", "innodb_buffer_pool_size=32M"))


def conn(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", database="d",
                           autocommit=True, connect_timeout=5, read_timeout=60)


def one(c, sql):
    with c.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def batch(first):
    rows = ",".join("(%d, REPEAT('%s', 900))" % (k, chr(97 + k % 26))
                    for k in range(first, first + 20))
    return "INSERT INTO t (id, pad) VALUES " + rows


def fill(c, first):
    """Inserts batches until one fails; returns (next key, the error)."""
    k = first
    while True:
        try:
            with c.cursor() as cur:
                cur.execute(batch(k))
            k += 20
        except pymysql.err.MySQLError as e:
            return k, e
        if k - first > 2_000_000:
            raise RuntimeError("the disk never filled")


def ballast(path, mnt):
    """A file that takes the free space of mnt but LEFT_MIB."""
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    size = max(free - (LEFT_MIB << 20), 0)
    r = sh("fallocate", "-l", str(size), path)
    if r.returncode != 0:  # tmpfs before fallocate support: write it
        with open(path, "wb") as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
    return size


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
            print("ok   %s" % what)
        else:
            self.failed += 1
            print("FAIL %s" % what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    args = ap.parse_args()
    quire = os.path.abspath(args.quire)

    root = tempfile.mkdtemp(prefix="quire-diskfull.")
    mnt, kind = mount_small_fs(root)
    if mnt is None:
        print("SKIP: cannot mount a small file system here (%s)" % kind)
        print("0 passed, 0 failed")
        shutil.rmtree(root, ignore_errors=True)
        return 0
    print("-- data directory on %d MiB of %s" % (FS_MIB, kind))
    data = os.path.join(mnt, "data")
    port = free_port()
    log = open(os.path.join(root, "serve.log"), "w")
    t = Checks()
    server = None
    try:
        server = start(quire, data, port, log)
        c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with c.cursor() as cur:
            cur.execute("CREATE DATABASE d")
            cur.execute("USE d")
            cur.execute("CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(1000),"
                        " KEY by_pad (pad(50)))")
        # A transaction that changed a row before the disk filled, left open meanwhile.
        with c.cursor() as cur:
            cur.execute(batch(0))
        c2 = conn(port)
        with c2.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("UPDATE t SET pad = 'short' WHERE id = 0")
        blob = os.path.join(mnt, "ballast")
        size = ballast(blob, mnt)
        print("-- ballast of %d MiB, %d MiB left" % (size >> 20, LEFT_MIB))

        acked, e = fill(c, 20)
        code = e.args[0] if e.args else None
        msg = e.args[1] if len(e.args) > 1 else str(e)
        t.check(code == 1114 and msg == "The table 't' is full",
                "a full disk fails the insert with 1114: got %s %r" % (code, msg))
        t.check(acked > 20, "rows went in before the disk filled (%d)" % acked)
        t.check(server.poll() is None, "the server is still up")
        r = conn(port)
        t.check(one(r, "SELECT COUNT(*) FROM t") == acked,
                "every acknowledged row is there (%d)" % acked)
        t.check(one(r, "SELECT COUNT(*) FROM t FORCE INDEX (by_pad) WHERE pad >= ''") == acked,
                "and in the secondary index")
        t.check(one(r, "SELECT 1") == 1, "a new connection reads")

        # In the open transaction: the statement is rolled back, the transaction goes on.
        k2, e = fill(c2, 10_000_000)
        t.check(e.args and e.args[0] == 1114, "in a transaction too: %s" % (e,))
        with c2.cursor() as cur:
            cur.execute("COMMIT")
        c2.close()
        in_trx = one(r, "SELECT COUNT(*) FROM t")
        t.check(in_trx == acked + (k2 - 10_000_000),
                "the transaction kept its statements before the failed one (%d)" % in_trx)
        t.check(one(r, "SELECT pad FROM t WHERE id = 0") == "short",
                "and its change made before the disk filled")

        # DDL and a log resize on the full disk (no transaction holds the table now): an
        # error, never a crash, and the server goes on. The new index is larger than what
        # the table's space can have free when an insert of 20 rows no longer fits (its
        # entries for the 2,000-odd rows take 20 or more pages): a 20-byte prefix needed only
        # a handful, and fitted whenever the last extension had left that many free.
        for sql in ["CREATE TABLE t2 (id INT PRIMARY KEY, v VARCHAR(100))",
                    "ALTER TABLE t ADD INDEX by_pad2 (pad(150))",
                    "ALTER TABLE t FORCE",
                    "SET GLOBAL innodb_log_file_size = 64 * 1024 * 1024",
                    "CREATE TEMPORARY TABLE tmp AS SELECT * FROM t"]:
            try:
                with r.cursor() as cur:
                    cur.execute(sql)
                got = "ok"
            except pymysql.err.MySQLError as e3:
                got = e3.args
            print("   %s -> %s" % (sql, got))
            t.check(got != "ok" and got[0] == 1021,
                    "%s fails with 1021 (disk full)" % sql.split("(")[0])
            t.check(server.poll() is None and one(r, "SELECT COUNT(*) FROM t") == in_trx,
                    "the server is up and the table whole after %s" % sql.split("(")[0])

        # ADD COLUMN is a catalog change (instant): it needs no new space.
        try:
            with r.cursor() as cur:
                cur.execute("ALTER TABLE t ADD COLUMN later INT NOT NULL DEFAULT 3")
            t.check(one(r, "SELECT COUNT(*) FROM t WHERE later = 3") == in_trx,
                    "an instant ADD COLUMN works on the full disk")
        except pymysql.err.MySQLError as e4:
            t.check(False, "an instant ADD COLUMN works on the full disk: %s" % (e4,))
        left = [f for f in os.listdir(data)
                if "~" in f or f.startswith("#sql") or "t2" in f or f.endswith(".new")]
        t.check(not left, "the failed DDL left no file behind: %s" % left)

        # Space freed: writes work again.
        os.unlink(blob)
        try:
            with c.cursor() as cur:
                cur.execute(batch(20_000_000))
            ok = True
        except pymysql.err.MySQLError as e2:
            ok = False
            print("   %s" % (e2,))
        t.check(ok, "after the ballast is removed, an insert works")
        total = one(r, "SELECT COUNT(*) FROM t")
        t.check(total == in_trx + 20, "and is counted (%d)" % total)
        r.close()
        c.close()

        # Clean restart.
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
        server = start(quire, data, port, log)
        r = conn(port)
        t.check(one(r, "SELECT COUNT(*) FROM t") == total, "after a restart, every row")

        # Full again, then kill -9 while full.
        ballast(blob, mnt)
        acked2, e = fill(r, 30_000_000)
        t.check(e.args and e.args[0] == 1114, "full again after the restart")
        expect = total + (acked2 - 30_000_000)
        server.send_signal(signal.SIGKILL)
        server.wait()
        # Recovery on the disk that is still full: it writes pages in place and needs no
        # new space.
        server = start(quire, data, port, log)
        r = conn(port)
        t.check(one(r, "SELECT COUNT(*) FROM t") == expect,
                "after kill -9, recovered on the still-full disk: every acknowledged row (%d)"
                % expect)
        os.unlink(blob)
        with r.cursor() as cur:
            cur.execute(batch(40_000_000))
        t.check(one(r, "SELECT COUNT(*) FROM t") == expect + 20, "space freed: writes again")
        with r.cursor() as cur:
            cur.execute("CHECK TABLE t")
            t.check(cur.fetchone()[3] == "OK", "CHECK TABLE is OK")
        r.close()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
        server = None
        out = sh(quire, "check", "--data-dir", data)
        t.check(out.returncode == 0, "quire check is clean")
        if out.returncode != 0:
            print(out.stdout + out.stderr)
    except Exception as e:  # a failure of the harness or the server: counted, shown
        t.check(False, "unexpected: %r" % (e,))
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.wait()
        log.close()
        if t.failed:
            with open(os.path.join(root, "serve.log")) as f:
                print("--- serve.log (tail)\n" + "".join(f.readlines()[-30:]))
        sh("umount", mnt)
        shutil.rmtree(root, ignore_errors=True)
    print("disk full: %d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
