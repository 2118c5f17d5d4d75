#!/usr/bin/env python3
"""Real clients over TLS against a running `quire serve` (docs/protocol.md, "TLS").

    python3 tests/server/tls_clients.py --port PORT --ca DATA_DIR/ca.pem

Each client verifies the server's self-signed certificate against the CA file the server
wrote at its first start, runs a query through TLS and checks Ssl_version / Ssl_cipher;
a plain connection still works and says so. Ends with "tls: N passed, N failed".
"""
import argparse
import subprocess
import sys


def check_pymysql(port, ca):
    import pymysql

    c = pymysql.connect(host="127.0.0.1", port=port, user="root",
                        ssl={"ca": ca, "check_hostname": True})
    cur = c.cursor()
    cur.execute("SHOW STATUS LIKE 'Ssl_%'")
    st = dict(cur.fetchall())
    assert st.get("Ssl_version", "").startswith("TLSv1."), st
    assert st.get("Ssl_cipher"), st
    # A result larger than one TLS record, both ways.
    big = "x" * 300000
    cur.execute("SELECT %s, LENGTH(%s)", (big, big))
    row = cur.fetchone()
    assert row[0] == big and row[1] == len(big), row[1]
    c.close()


def check_pymysql_wrong_ca_fails(port, ca):
    """A client that trusts another CA must refuse the server: the check really verifies."""
    import pymysql
    import ssl
    import tempfile

    # The system's CA bundle does not hold Quire's self-signed certificate.
    ctx = ssl.create_default_context()
    try:
        pymysql.connect(host="127.0.0.1", port=port, user="root", ssl=ctx)
    except pymysql.err.OperationalError as e:
        assert "CERTIFICATE_VERIFY_FAILED" in str(e) or "certificate verify failed" in str(e), e
        return
    raise AssertionError("connected while trusting the wrong CA")


def check_plain(port, ca):
    import pymysql

    # PyMySQL 2 takes TLS when the server offers it: ask for none.
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", ssl_disabled=True)
    cur = c.cursor()
    cur.execute("SHOW STATUS LIKE 'Ssl_cipher'")
    assert cur.fetchall() == (("Ssl_cipher", ""),)
    c.close()


def check_mysqlclient(port, ca):
    import MySQLdb

    c = MySQLdb.connect(host="127.0.0.1", port=port, user="root",
                        ssl={"ca": ca}, ssl_mode="VERIFY_CA")
    cur = c.cursor()
    cur.execute("SHOW STATUS LIKE 'Ssl_cipher'")
    (name, cipher), = cur.fetchall()
    assert cipher, cipher
    c.close()


def check_mariadb_cli(port, ca):
    out = subprocess.run(
        ["mariadb", "-h", "127.0.0.1", "-P", str(port), "-u", "root", "--ssl",
         f"--ssl-ca={ca}", "--ssl-verify-server-cert", "-N", "-e",
         "SHOW STATUS LIKE 'Ssl_version'"],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1].startswith("TLSv1."), out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ca", required=True)
    a = ap.parse_args()
    checks = [check_pymysql, check_pymysql_wrong_ca_fails, check_plain, check_mariadb_cli]
    try:
        import MySQLdb  # noqa: F401
        checks.append(check_mysqlclient)
    except ImportError:
        print("skip mysqlclient (not installed)")
    passed = failed = 0
    for check in checks:
        name = check.__name__.removeprefix("check_")
        try:
            check(a.port, a.ca)
            print(f"ok   {name}")
            passed += 1
        except Exception as e:  # noqa: BLE001 - a failed check is reported, the rest go on
            print(f"FAIL {name}: {e!r}")
            failed += 1
    print(f"tls: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
