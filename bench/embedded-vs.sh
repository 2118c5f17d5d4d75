#!/usr/bin/env bash
# Quire against RocksDB (db_bench from Debian's rocksdb-tools) and SQLite (bench/sqlite-bench,
# rusqlite with SQLite bundled), embedded, in the same run: insert and point-select, 1 and 2
# threads, a cache that holds the data ("in memory") and one a tenth of the raw data size.
# Inserts are compared at "no fsync per commit" (Quire flush_log_at_trx_commit=2, db_bench
# sync=0 with its WAL, SQLite WAL + synchronous=NORMAL) and durable (Quire 1, db_bench
# --sync=1, SQLite synchronous=FULL; in-memory cache only). Each engine runs in a fresh private
# directory under one temporary directory; the cells of one row run back to back.
# Writes bench/results/embedded-vs.md (+ per-second series and Quire's plots). The committed
# file's "Reading" section was written by hand after its run; a rerun replaces the file.
# Usage: bench/embedded-vs.sh [SECONDS] [ROWS]      (defaults: 10 s, 1000000 rows)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
rows=${2:-1000000}
case "$secs$rows" in *[!0-9]*) echo "usage: $0 [SECONDS] [ROWS] (whole numbers)" >&2; exit 2 ;; esac
t_start=$(date +%s)

echo "== building quire and sqlite-bench (release)" >&2
cargo build --release -q -p quire
cargo build --release -q --manifest-path bench/sqlite-bench/Cargo.toml
if ! command -v db_bench >/dev/null; then
  echo "== installing rocksdb-tools (db_bench)" >&2
  apt-get update -qq && apt-get install -y -qq rocksdb-tools >/dev/null
fi
QUIRE=$PWD/target/release/quire
SQLITE=$PWD/bench/sqlite-bench/target/release/sqlite-bench

# Raw data: 8-byte key + 100-byte value per row. The small cache is a tenth of it.
raw_bytes=$((rows * 108))
small_mb=$(((raw_bytes / 10 + (1 << 20) - 1) >> 20))
big_mb=$(((raw_bytes * 3 + (1 << 20) - 1) >> 20))
[ "$big_mb" -lt 256 ] && big_mb=256

work=$(mktemp -d "${TMPDIR:-/tmp}/embedded-vs.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs"
plots=bench/results/embedded-vs-plots
rm -rf "$plots"
manifest="$work/manifest.tsv" # workload threads memory durability engine logfile
uptime >"$work/load-before"

rocks_common=(--key_size=8 --value_size=100 --compression_ratio=1 --num="$rows" --seed=1
  --histogram=1 --report_interval_seconds=1)

# run ENGINE WORKLOAD THREADS MEMORY(big|small) DURABILITY(nosync|sync|commit0|direct)
run() {
  local engine=$1 wl=$2 t=$3 mem=$4 dur=$5
  local mb=$big_mb; [ "$mem" = small ] && mb=$small_mb
  local name="$engine-$wl-${t}t-$mem-$dur" rc=0
  local log="$work/logs/$name"
  echo "== $name (cache ${mb} MiB, ${secs} s)" >&2
  case "$engine" in
    quire)
      local flush=2
      [ "$dur" = sync ] && flush=1
      [ "$dur" = commit0 ] && flush=0
      if [ "$wl" = insert ]; then
        local dir="$work/quire-insert"; rm -rf "$dir"
      else
        local dir="$work/quire-ps"
      fi
      "$QUIRE" bench "$wl" --rows "$rows" --threads "$t" --seconds "$secs" --pool-mb "$mb" \
        --set innodb_flush_log_at_trx_commit=$flush --data-dir "$dir" \
        --out "$plots/$mem-$dur" >"$log.out" 2>"$log.err" || rc=$?
      [ "$wl" = insert ] && rm -rf "$dir"
      ;;
    sqlite)
      local sync=NORMAL; [ "$dur" = sync ] && sync=FULL
      if [ "$wl" = insert ]; then
        local db="$work/sqlite-insert/db.sqlite"; rm -rf "$work/sqlite-insert"; mkdir -p "$work/sqlite-insert"
      else
        local db="$work/sqlite-ps/db.sqlite"; mkdir -p "$work/sqlite-ps"
      fi
      "$SQLITE" "$wl" --rows "$rows" --threads "$t" --seconds "$secs" --cache-mb "$mb" \
        --synchronous $sync --db "$db" >"$log.out" 2>"$log.err" || rc=$?
      [ "$wl" = insert ] && rm -rf "$work/sqlite-insert"
      ;;
    rocksdb)
      local extra=()
      [ "$dur" = sync ] && extra+=(--sync=1)
      [ "$dur" = direct ] && extra+=(--use_direct_reads=true)
      if [ "$wl" = insert ]; then
        rm -rf "$work/rocksdb-insert"
        db_bench --benchmarks=fillrandom --db="$work/rocksdb-insert" "${rocks_common[@]}" \
          --threads="$t" --cache_size=$((mb << 20)) --duration="$secs" "${extra[@]}" \
          --report_file="$log.csv" >"$log.out" 2>"$log.err" || rc=$?
        rm -rf "$work/rocksdb-insert"
      else
        # readseq warms the block cache (as the others' scan does), then readrandom is timed.
        db_bench --benchmarks=readseq,readrandom --use_existing_db=1 --db="$work/rocksdb-ps" \
          "${rocks_common[@]}" --threads="$t" --cache_size=$((mb << 20)) --reads=1000000000 \
          --duration="$secs" "${extra[@]}" --report_file="$log.csv" >"$log.out" 2>"$log.err" || rc=$?
      fi
      ;;
  esac
  if [ "$rc" != 0 ]; then
    echo "$name failed (exit $rc):" >&2; tail -5 "$log.err" >&2; tail -3 "$log.out" >&2
    exit 1
  fi
  if [ "$engine" = rocksdb ]; then grep -E '^(fillrandom|readrandom) ' "$log.out" >&2 || true
  else tail -1 "$log.out" | cut -c1-200 >&2; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$t" "$mem" "$dur" "$engine" "$mb" "$log" >>"$manifest"
}

echo "== loading $rows rows for point-select into each engine" >&2
mkdir -p "$work/sqlite-ps"
# Quire and SQLite load inside their first point-select run (ascending keys, progress on
# stderr); RocksDB loads with fillseq here.
db_bench --benchmarks=fillseq --db="$work/rocksdb-ps" "${rocks_common[@]}" --threads=1 \
  --report_interval_seconds=0 >"$work/logs/rocksdb-load.out" 2>&1
grep -E '^fillseq' "$work/logs/rocksdb-load.out" >&2

for t in 1 2; do
  for mem in big small; do
    for e in quire rocksdb sqlite; do run $e point-select $t $mem nosync; done
  done
done
for t in 1 2; do run rocksdb point-select $t small direct; done
rocks_ps_mib=$(du -sm "$work/rocksdb-ps" | cut -f1)
for t in 1 2; do
  for mem in big small; do
    for e in quire rocksdb sqlite; do run $e insert $t $mem nosync; done
  done
  run quire insert $t big commit0
  for e in quire rocksdb sqlite; do run $e insert $t big sync; done
done
uptime >"$work/load-after"
elapsed=$(($(date +%s) - t_start))

python3 - "$work" "$secs" "$rows" "$small_mb" "$big_mb" "$rocks_ps_mib" "$elapsed" <<'PY' >bench/results/embedded-vs.md
import csv, os, re, subprocess, sys, datetime
work, secs, rows, small_mb, big_mb, rocks_mib, elapsed = sys.argv[1:8]
rows = int(rows)

def kv(line):
    return dict(p.split("=", 1) for p in line.split() if "=" in p)

def per_second(path):
    out = []
    for line in open(path, errors="replace"):
        m = re.match(r"\[\s*(\d+)s\] tps=(\d+)", line)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out

def rocks(log, wl):
    bench = "fillrandom" if wl == "insert" else "readrandom"
    text = open(log + ".out", errors="replace").read()
    m = re.search(rf"^{bench}\s*:\s*([\d.]+) micros/op (\d+) ops/sec ([\d.]+) seconds (\d+) operations;.*$", text, re.M)
    if not m:
        sys.exit(f"no {bench} result in {log}.out")
    rest = text[m.end():]
    p = re.search(r"Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+)", rest)
    found = re.search(r"\((\d+) of (\d+) found\)", m.group(0))
    s = {"tps": m.group(2), "seconds": m.group(3), "ops": m.group(4),
         "p50_ms": f"{float(p.group(1))/1000:.3f}" if p else "?",
         "p99_ms": f"{float(p.group(3))/1000:.3f}" if p else "?"}
    line = (f"workload={wl} engine=rocksdb bench={bench} seconds={s['seconds']} tps={s['tps']} "
            f"p50_ms={s['p50_ms']} p99_ms={s['p99_ms']} ops={s['ops']}")
    if found:
        line += f" found={found.group(1)}_of_{found.group(2)}"
    series = []
    if os.path.exists(log + ".csv"):
        for r in csv.DictReader(open(log + ".csv")):
            try:
                series.append((int(r["secs_elapsed"]), int(r["interval_qps"])))
            except (KeyError, ValueError):
                pass
    return s, line, series

cells, raw, series = {}, [], []
for row in open(os.path.join(work, "manifest.tsv")):
    wl, t, mem, dur, engine, mb, log = row.rstrip("\n").split("\t")
    if engine == "rocksdb":
        s, line, ser = rocks(log, wl)
    else:
        lines = [l for l in open(log + ".out") if l.startswith("workload=")]
        line = lines[-1].strip()
        s = kv(line)
        ser = per_second(log + ".out")
    cells[(wl, t, mem, dur, engine)] = s
    raw.append(f"[{engine} {wl} threads={t} cache={mb}MiB {dur}] {line}")
    for ts, v in ser:
        series.append((engine, wl, t, mem, dur, ts, v))

with open("bench/results/embedded-vs-series.csv", "w") as f:
    f.write("engine,workload,threads,cache,durability,t_s,ops_per_s\n")
    for r in series:
        f.write(",".join(map(str, r)) + "\n")

def num(s):
    return float(s["tps"]) if s else None

def fmt(v):
    if v is None: return "–"
    return f"{v/1000:.1f}k" if v >= 1000 else f"{v:.0f}"

def ratio(a, b):
    return f"{a/b:.2f}" if a and b else "–"

def first(pred):
    for k, s in cells.items():
        if pred(k, s): return s
    return {}

q_ps = first(lambda k, s: k[0] == "point-select" and k[4] == "quire")
s_ps = first(lambda k, s: k[0] == "point-select" and k[4] == "sqlite")
dbv = subprocess.run(["db_bench", "--version"], capture_output=True, text=True).stdout.strip()
sqlv = s_ps.get("sqlite_version", "?")
head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
fs = subprocess.run(["df", "-T", work], capture_output=True, text=True).stdout.splitlines()[-1].split()[1]
load_b = open(os.path.join(work, "load-before")).read().strip().split("load average:")[-1].strip()
load_a = open(os.path.join(work, "load-after")).read().strip().split("load average:")[-1].strip()
mem_name = {"big": f"in memory ({big_mb} MiB)", "small": f"cache = data/10 ({small_mb} MiB)"}
dur_name = {"nosync": "no fsync per commit", "sync": "durable (fsync per commit)"}

print("# Embedded: Quire against RocksDB and SQLite, same run")
print()
print(f"Measured {datetime.date.today()} on the project's **2-core shared machine** (load "
      "averages under Setup): the numbers are noisy (one run per cell, "
      f"{secs} s each), so read the ratios, and not to two digits. Release builds; the whole "
      f"script took {int(elapsed)//60} min {int(elapsed)%60} s.")
print()
print("Command:")
print()
print("```sh")
print(f"bench/embedded-vs.sh {secs} {rows}")
print("```")
print()
print("| workload | threads | cache | durability | Quire | RocksDB | SQLite | Quire / RocksDB | Quire / SQLite |")
print("|---|---|---|---|---|---|---|---|---|")
order = []
for wl in ("point-select", "insert"):
    for dur in ("nosync", "sync"):
        for mem in ("big", "small"):
            for t in ("1", "2"):
                order.append((wl, t, mem, dur))
for wl, t, mem, dur in order:
    q, r, s = (cells.get((wl, t, mem, dur, e)) for e in ("quire", "rocksdb", "sqlite"))
    if not (q or r or s):
        continue
    d = "reads only" if wl == "point-select" else dur_name[dur]
    print(f"| {wl} | {t} | {mem_name[mem]} | {d} | {fmt(num(q))} | {fmt(num(r))} | {fmt(num(s))} "
          f"| {ratio(num(q), num(r))} | {ratio(num(q), num(s))} |")
print()
print("Ops/s (`k` = thousands): lookups for point-select, inserted rows for insert. Extra cells,")
print("outside the like-for-like table:")
print()
print("| cell | ops/s | against |")
print("|---|---|---|")
for t in ("1", "2"):
    c = cells.get(("insert", t, "big", "commit0", "quire"))
    if c:
        r = cells.get(("insert", t, "big", "nosync", "rocksdb"))
        s = cells.get(("insert", t, "big", "nosync", "sqlite"))
        print(f"| Quire insert, {t} thread(s), in memory, flush_log_at_trx_commit=0 (weaker: a process "
              f"crash loses up to 1 s) | {fmt(num(c))} | {ratio(num(c), num(r))} × RocksDB, "
              f"{ratio(num(c), num(s))} × SQLite (their no-fsync cells) |")
for t in ("1", "2"):
    c = cells.get(("point-select", t, "small", "direct", "rocksdb"))
    if c:
        q = cells.get(("point-select", t, "small", "nosync", "quire"))
        print(f"| RocksDB point-select, {t} thread(s), {small_mb} MiB cache, `--use_direct_reads` "
              f"(no OS page cache, as Quire) | {fmt(num(c))} | Quire / RocksDB = {ratio(num(q), num(c))} |")
print()
print("## Latency (p50 / p99, ms)")
print()
print("| workload | threads | cache | durability | Quire | RocksDB | SQLite |")
print("|---|---|---|---|---|---|---|")
for wl, t, mem, dur in order:
    q, r, s = (cells.get((wl, t, mem, dur, e)) for e in ("quire", "rocksdb", "sqlite"))
    if not (q or r or s):
        continue
    lat = lambda c: f"{c.get('p50_ms','?')} / {c.get('p99_ms','?')}" if c else "–"
    d = "reads only" if wl == "point-select" else dur_name[dur]
    print(f"| {wl} | {t} | {mem_name[mem]} | {d} | {lat(q)} | {lat(r)} | {lat(s)} |")
print()
print("## Setup")
print()
print(f"- Versions: Quire {head} (`quire bench`, embedded table API); {dbv} (Debian "
      f"rocksdb-tools); SQLite {sqlv} (bundled by rusqlite, bench/sqlite-bench/Cargo.lock).")
print(f"- Machine: {cpu}, {os.cpu_count()} cores, {fs} on a virtual disk; load average "
      f"{load_b} before, {load_a} after.")
print(f"- Data: {rows} rows, 8-byte keys, 100-byte random values: {rows*108/2**20:.0f} MiB raw. "
      f"Loaded for point-select in ascending key order: Quire's table {q_ps.get('table_mib','?')} MiB "
      f"of B-tree pages, RocksDB {rocks_mib} MiB on disk after fillseq, SQLite "
      f"{s_ps.get('db_mib','?')} MiB file.")
print(f"- Caches: Quire `--pool-mb`, RocksDB `--cache_size` (block cache; memtables come on top), "
      f"SQLite `PRAGMA cache_size` per connection (each of the 2 connections gets the whole amount): "
      f"{big_mb} MiB (in memory) or {small_mb} MiB (a tenth of the raw data).")
print("- Quire: `quire bench insert|point-select --rows N --threads T --pool-mb M --seconds S "
      "--set innodb_flush_log_at_trx_commit=F`; table (id BIGINT PRIMARY KEY, v VARBINARY(100)), "
      "one `Table::insert` / `Table::get` per operation, data files with O_DIRECT, the redo log "
      "with O_DIRECT at flush_log_at_trx_commit=0 and 1 and through the page cache at 2 "
      "(`innodb_log_file_buffering`, ON at 2 as in MariaDB), doublewrite ON, 1 GiB redo log "
      "(the defaults).")
print("- RocksDB: `db_bench --key_size=8 --value_size=100 --compression_ratio=1 --num=N "
      "--threads=T --cache_size=BYTES --duration=S`, all else default (snappy, WAL on, buffered "
      "I/O). insert = `fillrandom` (random keys *with* repeats in [0, N), so a few writes "
      "overwrite); point-select = a `fillseq` load, then `readseq,readrandom --use_existing_db=1` "
      "in one process (readseq warms the block cache; only readrandom is reported).")
print("- SQLite: `bench/sqlite-bench` (rusqlite): table t(id INTEGER PRIMARY KEY, v BLOB), WAL, "
      "one connection per thread, one autocommit INSERT per row, `SELECT v FROM t WHERE id=?` "
      "for point-select, busy_timeout 10 s, default page size and autocheckpoint.")
print("- Keys: Quire and SQLite insert the keys 1..N shuffled (same seed, no repeats) and stop "
      "after S seconds or N rows; all three read uniformly random keys of 1..N, every one present.")
print("- Point-select: each engine is loaded once (Quire and SQLite in their first run, "
      "flush_log_at_trx_commit=0 / 10,000-row transactions), then every run restarts it with a cold "
      "cache and warms it with one full scan before the timed reads. Quire's data files use "
      "O_DIRECT, so its cache is the pool alone; RocksDB and SQLite read through the OS page "
      "cache, which holds their whole files here (24 GiB of RAM): in the data/10 cells their "
      "misses are memory copies while Quire's are disk reads. The RocksDB `--use_direct_reads` "
      "cells above are the equal-memory comparison.")
print("- Durability: *no fsync per commit* = Quire flush_log_at_trx_commit=2 (the log is written "
      "at every commit, synced once a second), db_bench sync=0 (WAL written per write, never "
      "synced by the write), SQLite synchronous=NORMAL in WAL mode (WAL written per commit, "
      "synced at checkpoints): all three survive a process crash, none a power loss. "
      "*Durable* = Quire 1, db_bench `--sync=1`, SQLite synchronous=FULL (run with the "
      "in-memory cache only).")
print("- RocksDB caveat: Debian's librocksdb 7.8.3 is built with assertions enabled (db_bench "
      "prints \"Assertions are enabled; benchmarks unnecessarily slow\"; the library calls "
      "`__assert_fail`), so its numbers understate an optimized build by an unknown amount.")
print()
print("Per-second series of every cell: [embedded-vs-series.csv](embedded-vs-series.csv); "
      "Quire's plots: [embedded-vs-plots/](embedded-vs-plots/).")
print()
print("## Raw summary lines")
print()
print("```")
for l in raw:
    print(l)
print("```")
PY
echo "wrote bench/results/embedded-vs.md in ${elapsed} s" >&2
cat bench/results/embedded-vs.md
