#!/usr/bin/env python3
"""Random subqueries and UNIONs, run on MariaDB 10.11 and on Quire, results compared.

The four small tables of fuzz_joins.py (NULLs, duplicates, case-different strings, random
indexes); queries put scalar, IN / NOT IN, EXISTS / NOT EXISTS and ANY / ALL subqueries,
uncorrelated or correlated (also two levels deep), in WHERE, the select list and HAVING,
over derived tables and UNIONs. Rows are compared as sorted multisets (or the error code).

    python3 tests/sql/fuzz_subqueries.py --maria 3410 --quire 3411 --seed 1 --queries 400

Not run by scripts/test.sh (it needs a MariaDB). Exits 1 if any query differs.
"""
import argparse
import random
import sys

from fuzz_joins import connect, rows, setup_statements


class Gen:
    def __init__(self, rnd):
        self.r = rnd

    def num_col(self, t):
        return f"{t}.{self.r.choice(['id', 'a', 'b'])}"

    def lit(self):
        return self.r.choice(["0", "1", "2", "3", "NULL"])

    def inner(self, outer, depth, scalar=False):
        """A one-column subquery over a fresh alias, maybe correlated with `outer`."""
        t = self.r.choice("pqrs")
        al = f"i{depth}"
        col = self.r.choice(["a", "b", "id"])
        conds = []
        if self.r.random() < 0.5:
            conds.append(f"{al}.{self.r.choice(['a', 'b'])} {self.r.choice(['=', '<', '>', '<>'])} {self.lit()}")
        if outer and self.r.random() < 0.5:
            conds.append(f"{al}.{self.r.choice(['a', 'b', 'id'])} {self.r.choice(['=', '<', '>='])} {self.num_col(self.r.choice(outer))}")
        if depth < 2 and self.r.random() < 0.2:
            conds.append(self.pred(outer + [al], depth + 1))
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        agg = 0.0 if scalar else self.r.random()
        if agg < 0.2:
            return f"SELECT {self.r.choice(['MAX', 'MIN', 'COUNT', 'SUM'])}({al}.{col}) FROM {t} {al}{where}"
        if agg < 0.3:
            # Not NULL: MariaDB 10.11 answers `x NOT IN (correlated … UNION SELECT NULL)`
            # TRUE for some rows (its IN-to-EXISTS rewrite), where NULL is right.
            return f"SELECT {al}.{col} FROM {t} {al}{where} UNION SELECT {self.r.choice(['0', '1', '2'])}"
        return f"SELECT {al}.{col} FROM {t} {al}{where}"

    def pred(self, outer, depth=0):
        k = self.r.random()
        x = self.num_col(self.r.choice(outer))
        if k < 0.3:
            return f"{x} {self.r.choice(['', 'NOT '])}IN ({self.inner(outer, depth)})"
        if k < 0.5:
            return f"{self.r.choice(['', 'NOT '])}EXISTS ({self.inner(outer, depth)})"
        if k < 0.7:
            return f"{x} {self.r.choice(['=', '<', '>', '<>', '>=', '<='])} {self.r.choice(['ANY', 'SOME', 'ALL'])} ({self.inner(outer, depth)})"
        # A scalar: an aggregate keeps it to one row (when MariaDB raises 1242 for a
        # subquery of several rows depends on its evaluation order, which differs).
        return f"{x} {self.r.choice(['=', '<', '>'])} ({self.inner(outer, depth, True)})"

    def query(self):
        t = self.r.choice("pqrs")
        src = self.r.random()
        if src < 0.15:
            frm = f"(SELECT id, a, b FROM {t} UNION ALL SELECT id, b, a FROM {self.r.choice('pqrs')}) o"
        elif src < 0.3:
            frm = f"(SELECT id, a, b FROM {t} WHERE a IS NOT NULL) o"
        else:
            frm = f"{t} o"
        where = f" WHERE {self.pred(['o'])}"
        if self.r.random() < 0.3:
            where += f" {self.r.choice(['AND', 'OR'])} {self.pred(['o'])}"
        if self.r.random() < 0.25:
            return f"SELECT o.a, COUNT(*) FROM {frm}{where} GROUP BY o.a HAVING COUNT(*) > ({self.inner([], 1, True)})"
        if self.r.random() < 0.3:
            return f"SELECT o.id, ({self.pred(['o'])}) FROM {frm}"
        return f"SELECT o.id FROM {frm}{where}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--maria", type=int, required=True)
    p.add_argument("--quire", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--queries", type=int, default=400)
    args = p.parse_args()
    rnd = random.Random(args.seed)
    setup = setup_statements(rnd)
    m = connect(args.maria, setup, 0)
    q = connect(args.quire, setup, 0)
    gen = Gen(rnd)
    bad = 0
    for _ in range(args.queries):
        sql = gen.query()
        a, b = rows(m, sql), rows(q, sql)
        if a != b:
            bad += 1
            print("DIFF", sql)
            print("  mariadb", a if isinstance(a, str) else a[:10])
            print("  quire  ", b if isinstance(b, str) else b[:10])
    for c in (m, q):
        with c.cursor() as cur:
            cur.execute("DROP DATABASE fuzz_joins")
        c.close()
    print(f"seed {args.seed}: {args.queries} queries, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
