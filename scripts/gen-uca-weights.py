#!/usr/bin/env python3
"""Regenerates the UCA weight tables of utf8mb4_unicode_ci and utf8mb4_unicode_520_ci
(crates/quire-engine/src/row/uca/*.bin) by measuring a running MariaDB 10.11:

    python3 scripts/gen-uca-weights.py --host 127.0.0.1 --port 3306   # or --socket PATH

For every code point 0..0x10FFFF it asks
    SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4)
                                  COLLATE <collation>)) FROM seq_0_to_1114111
(the primary weights, 16 bits each, that MariaDB compares), encodes them in the format of
docs/collations.md ("The weight tables"), decodes the file again and checks every code point
against the measurement. It also checks that the collation has no contractions on a sample of
character pairs (a pair weighs its two characters' weights one after the other).
"""
import argparse
import struct
import subprocess
import sys

MAGIC = b"QUCA"
VERSION = 1
PAGES = 0x1100  # 256 code points a page, up to U+10FFFF
IGNORABLE = 0x0000
EXPANSION = 0xFFFF
IMPLICIT_BASES = (0xFB40, 0xFB80, 0xFBC0)
RESERVED = {IGNORABLE, EXPANSION, *IMPLICIT_BASES}
COLLATIONS = {
    "utf8mb4_unicode_ci": "utf8mb4_unicode_ci.bin",
    "utf8mb4_unicode_520_ci": "utf8mb4_unicode_520_ci.bin",
}


def query(args, sql):
    out = subprocess.run(
        ["mariadb", *(["-S", args.socket] if args.socket else ["-h", args.host, "-P", str(args.port)]),
         "-u", "root", "-N", "-B", "-D", "mysql", "-e", sql],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.split("\t") for line in out.splitlines()]


def implicit(base, cp):
    return [base + (cp >> 15), (cp & 0x7FFF) | 0x8000]


def measure(args, coll):
    rows = query(args, f"SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) "
                       f"COLLATE {coll})) FROM seq_0_to_1114111")
    assert len(rows) == 0x110000, len(rows)
    weights = []
    for i, (cp, h) in enumerate(rows):
        assert int(cp) == i and len(h) % 4 == 0, (cp, h)
        weights.append([int(h[j:j + 4], 16) for j in range(0, len(h), 4)])
    return weights


def encode(weights):
    entries, expansions = [], []
    for cp, ws in enumerate(weights):
        if not ws:
            entries.append(IGNORABLE)
        elif len(ws) == 1 and ws[0] not in RESERVED:
            entries.append(ws[0])
        else:
            base = next((b for b in IMPLICIT_BASES if ws == implicit(b, cp)), None)
            if base is not None:
                entries.append(base)
            else:
                assert len(ws) <= 255
                entries.append(EXPANSION)
                expansions.append((cp, ws))
    pages, index, seen = [], [], {}
    for p in range(PAGES):
        page = tuple(entries[p * 256:(p + 1) * 256])
        if page not in seen:
            seen[page] = len(pages)
            pages.append(page)
        index.append(seen[page])
    out = bytearray(MAGIC)
    out += struct.pack("<HH", VERSION, len(pages))
    out += struct.pack(f"<{PAGES}H", *index)
    for page in pages:
        out += struct.pack("<256H", *page)
    out += struct.pack("<I", len(expansions))
    for cp, ws in expansions:
        out += struct.pack(f"<IB{len(ws)}H", cp, len(ws), *ws)
    return bytes(out)


def decode(data):
    assert data[:4] == MAGIC
    version, n_pages = struct.unpack_from("<HH", data, 4)
    assert version == VERSION
    at = 8
    index = struct.unpack_from(f"<{PAGES}H", data, at)
    at += 2 * PAGES
    pages = [struct.unpack_from("<256H", data, at + 512 * i) for i in range(n_pages)]
    at += 512 * n_pages
    (n_exp,) = struct.unpack_from("<I", data, at)
    at += 4
    exp = {}
    for _ in range(n_exp):
        cp, n = struct.unpack_from("<IB", data, at)
        at += 5
        exp[cp] = list(struct.unpack_from(f"<{n}H", data, at))
        at += 2 * n
    assert at == len(data)

    def weights(cp):
        e = pages[index[cp >> 8]][cp & 0xFF]
        if e == IGNORABLE:
            return []
        if e == EXPANSION:
            return exp[cp]
        if e in IMPLICIT_BASES:
            return implicit(e, cp)
        return [e]
    return weights


def check_no_contractions(args, coll):
    # Pairs known to be contractions in some DUCET versions, then random BMP pairs and
    # letters followed by combining marks.
    pairs = [(0x0E40, 0x0E01), (0x0EC0, 0x0E81), (0x0418, 0x0306), (0x0438, 0x0306), (0x0B92, 0x0BD7),
             (0x0DD9, 0x0DCF), (0x1025, 0x102E), (0x0CC6, 0x0CC2), (0x6C, 0xB7), (0x4C, 0x387), (0x63, 0x68)]
    pairs = " UNION ALL ".join(f"SELECT {a} AS a, {b} AS b" for a, b in pairs)
    one = lambda x: f"WEIGHT_STRING(CONVERT(CHAR({x} USING utf32) USING utf8mb4) COLLATE {coll})"
    both = f"WEIGHT_STRING(CONVERT(CONCAT(CHAR(a USING utf32), CHAR(b USING utf32)) USING utf8mb4) COLLATE {coll})"
    rows = query(args, f"""SELECT COUNT(*), SUM({both} <> CONCAT({one('a')}, {one('b')})) FROM (
        {pairs}
        UNION ALL SELECT FLOOR(RAND(seq) * 65536), FLOOR(RAND(seq + 999999) * 65536) FROM seq_1_to_200000
        UNION ALL SELECT FLOOR(RAND(seq) * 0x250), 0x300 + FLOOR(RAND(seq + 999999) * 0x70) FROM seq_1_to_20000
        ) p WHERE a NOT BETWEEN 0xD800 AND 0xDFFF AND b NOT BETWEEN 0xD800 AND 0xDFFF""")
    n, bad = rows[0]
    assert bad == "0", f"{coll}: {bad} of {n} pairs are not the concatenation of their weights"
    print(f"{coll}: no contraction in {n} pairs", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=3306)
    ap.add_argument("--socket", help="connect through this Unix socket instead")
    ap.add_argument("--out", default="crates/quire-engine/src/row/uca")
    args = ap.parse_args()
    version = query(args, "SELECT VERSION()")[0][0]
    assert version.startswith("10.11."), version
    for coll, file in COLLATIONS.items():
        weights = measure(args, coll)
        data = encode(weights)
        get = decode(data)
        for cp, ws in enumerate(weights):
            assert get(cp) == ws, (coll, hex(cp))
        check_no_contractions(args, coll)
        with open(f"{args.out}/{file}", "wb") as f:
            f.write(data)
        print(f"{coll}: {len(data)} bytes from MariaDB {version}", file=sys.stderr)


if __name__ == "__main__":
    main()
