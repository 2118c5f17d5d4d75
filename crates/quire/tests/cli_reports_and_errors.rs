//! `quire check` exits 0 on a clean data directory, 1 with a message naming the file and the
//! page when a page is corrupt, and 2 with a clear message when the directory is missing.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::page::{PageId, PageType};
use quire_engine::Engine;
use quire_io::os::OsVfs;

fn quire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quire"))
}

fn make_data_dir(dir: &Path) -> PageId {
    let cfg = Config {
        log_file_size: 4 << 20,
        buffer_pool_size: 8 << 20,
        ..Config::default()
    };
    let engine = Engine::open(Arc::new(OsVfs::new()), dir, cfg).expect("open");
    let space = engine.create_space("t").expect("space");
    let mut last = None;
    for i in 0..10u32 {
        let mut m = engine.mtr();
        let p = engine.alloc_page(&mut m, space).expect("alloc");
        let s = m
            .create_page(PageId::new(space, p), PageType::Raw)
            .expect("create");
        m.write_u32(s, 64, i).expect("write");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
        last = Some(PageId::new(space, p));
    }
    engine.shutdown().expect("shutdown");
    last.expect("pages")
}

#[test]
fn check_passes_a_clean_directory_and_names_a_corrupt_page() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let page = make_data_dir(&dir);
    let out = quire()
        .args(["check", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("clean"), "{stdout}");

    // Flip one bit in the middle of the last page written.
    let path = dir.join("t.qsp");
    let mut bytes = std::fs::read(&path).expect("read");
    let off = page.page_no.0 as usize * 16384 + 5000;
    bytes[off] ^= 0x10;
    std::fs::write(&path, &bytes).expect("write");
    let out = quire()
        .args(["check", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("t.qsp") && stdout.contains(&format!("page {}", page.page_no)),
        "the report must name the file and the page:\n{stdout}"
    );
    assert!(stdout.contains("checksum"), "{stdout}");
}

#[test]
fn check_of_a_missing_directory_is_a_clear_error() {
    let out = quire()
        .args(["check", "--data-dir", "/nonexistent/quire"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/quire") && stderr.contains("no such"),
        "{stderr}"
    );
}

#[test]
fn bench_rejects_an_unknown_workload_and_bad_settings() {
    let out = quire()
        .args(["bench", "nope", "--seconds", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown workload 'nope'"));
    let out = quire()
        .args([
            "bench",
            "commit",
            "--seconds",
            "1",
            "--set",
            "innodb_flush_log_at_trx_commit=7",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0, 1 or 2"));
}

#[test]
fn bench_commit_prints_a_summary_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = quire()
        .args([
            "bench",
            "commit",
            "--threads",
            "2",
            "--seconds",
            "1",
            "--rows",
            "50",
            "--out",
        ])
        .arg(tmp.path().join("out"))
        .args(["--data-dir"])
        .arg(tmp.path().join("data"))
        .args([
            "--set",
            "innodb_log_file_size=4M",
            "--set",
            "innodb_buffer_pool_size=8M",
        ])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().expect("summary");
    for key in [
        "workload=commit",
        "threads=2",
        "tps=",
        "p95_ms=",
        "log_fsyncs=",
    ] {
        assert!(last.contains(key), "summary lacks {key}: {last}");
    }
    assert!(tmp.path().join("out/commit-2t.svg").exists());
}

#[test]
fn check_verifies_tables_and_names_an_orphan_space() {
    use quire_engine::row::{Column, ColumnType, IntWidth, Value};
    use quire_engine::table::{Db, IndexSpec, TableSpec};
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let cfg = Config {
        log_file_size: 4 << 20,
        buffer_pool_size: 8 << 20,
        ..Config::default()
    };
    let db = Db::open(&dir, cfg.clone()).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(vec![Column::new("k", int), Column::new("v", int)], vec![0]);
    spec.indexes.push(IndexSpec::new("by_v", vec![1]));
    let t = db.create_table("d", "t", spec).expect("table");
    for k in 0..100 {
        t.insert(vec![Value::Int(k), Value::Int(k % 7)])
            .expect("insert");
    }
    db.shutdown().expect("shutdown");
    let out = quire()
        .args(["check", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("tables: ok"), "{stdout}");

    // A space no table owns: what a crash inside CREATE TABLE leaves.
    let engine = Engine::open(Arc::new(OsVfs::new()), &dir, cfg).expect("engine");
    engine.create_space("d.orphan").expect("space");
    engine.shutdown().expect("shutdown");
    let out = quire()
        .args(["check", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("d.orphan.qsp"), "{stdout}");
}

/// Runs `quire bench` with a small log; returns (success, stdout, stderr).
fn bench(args: &[&str], data_dir: &Path, out: &Path) -> (bool, String, String) {
    let o = quire()
        .arg("bench")
        .args(args)
        .args(["--set", "innodb_log_file_size=4M", "--data-dir"])
        .arg(data_dir)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn summary(stdout: &str) -> std::collections::HashMap<String, String> {
    stdout
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn bench_insert_stops_when_every_key_is_in_and_a_rerun_starts_empty() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (data, out) = (tmp.path().join("data"), tmp.path().join("out"));
    let args = [
        "insert",
        "--rows",
        "300",
        "--threads",
        "2",
        "--seconds",
        "5",
        "--pool-mb",
        "2",
        "--set",
        "innodb_flush_log_at_trx_commit=0",
    ];
    for run in 0..2 {
        let (ok, stdout, stderr) = bench(&args, &data, &out);
        assert!(ok, "{stdout}\n{stderr}");
        let s = summary(&stdout);
        assert_eq!(s.get("workload").map(String::as_str), Some("insert"));
        assert_eq!(s.get("threads").map(String::as_str), Some("2"));
        assert_eq!(s.get("pool_mib").map(String::as_str), Some("2"));
        assert_eq!(
            s.get("flush_log_at_trx_commit").map(String::as_str),
            Some("0")
        );
        // 300 keys take far less than the 5 s limit: the run ends when they are all in,
        // and a second run on the same directory empties the table first.
        assert_eq!(
            s.get("inserted").map(String::as_str),
            Some("300"),
            "{stdout}"
        );
        assert_eq!(s.get("all_inserted").map(String::as_str), Some("1"));
        let secs: f64 = s
            .get("seconds")
            .and_then(|v| v.parse().ok())
            .expect("seconds");
        assert!(secs < 4.0, "the run did not stop early: {secs} s");
        for key in ["tps", "p50_ms", "p99_ms", "space_mib"] {
            assert!(s.contains_key(key), "summary lacks {key}: {stdout}");
        }
        if run == 1 {
            assert!(stderr.contains("emptying bench_kv.t"), "{stderr}");
        }
    }
    assert!(out.join("insert-2t.svg").exists());
    let check = quire()
        .args(["check", "--data-dir"])
        .arg(&data)
        .output()
        .expect("check");
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

#[test]
fn bench_point_select_loads_once_and_reads_every_key() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (data, out) = (tmp.path().join("data"), tmp.path().join("out"));
    let args = |threads: &'static str, rows: &'static str| {
        [
            "point-select",
            "--rows",
            rows,
            "--threads",
            threads,
            "--seconds",
            "1",
            "--pool-mb",
            "1",
        ]
    };
    let (ok, stdout, stderr) = bench(&args("1", "2000"), &data, &out);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stderr.contains("loading 2000 rows"), "{stderr}");
    let s = summary(&stdout);
    assert_eq!(s.get("workload").map(String::as_str), Some("point-select"));
    assert_eq!(s.get("rows").map(String::as_str), Some("2000"));
    assert_eq!(s.get("cold_start").map(String::as_str), Some("1"));
    let ops: u64 = s.get("ops").and_then(|v| v.parse().ok()).expect("ops");
    assert!(ops > 0, "{stdout}");
    for key in [
        "tps",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "table_pages",
        "pages_read_per_op",
    ] {
        assert!(s.contains_key(key), "summary lacks {key}: {stdout}");
    }
    assert!(
        stdout.lines().any(|l| l.starts_with("[   1s] tps=")),
        "no per-second line: {stdout}"
    );

    // The same directory again, 2 threads: no second load.
    let (ok, stdout, stderr) = bench(&args("2", "2000"), &data, &out);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("already holds 2000 rows: no load"),
        "{stderr}"
    );
    assert_eq!(
        summary(&stdout).get("threads").map(String::as_str),
        Some("2")
    );

    // Fewer rows than the table holds is a clear error, not a wrong benchmark.
    let (ok, _, stderr) = bench(&args("1", "100"), &data, &out);
    assert!(!ok);
    assert!(stderr.contains("more than --rows 100"), "{stderr}");
}

#[test]
fn bench_rejects_a_bad_pool_size_and_zero_rows() {
    let out = quire()
        .args(["bench", "point-select", "--pool-mb", "0", "--seconds", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--pool-mb 0"), "{stderr}");
    let out = quire()
        .args(["bench", "insert", "--rows", "0", "--seconds", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--rows must be positive"), "{stderr}");
}

#[test]
fn check_reclaims_leaked_pages_when_they_are_the_only_problem() {
    use quire_engine::row::{Column, ColumnType, IntWidth, Value};
    use quire_engine::table::{Db, TableSpec};
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let cfg = Config {
        log_file_size: 4 << 20,
        buffer_pool_size: 8 << 20,
        ..Config::default()
    };
    let db = Db::open(&dir, cfg).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let t = db
        .create_table(
            "d",
            "t",
            TableSpec::new(vec![Column::new("id", int)], vec![0]),
        )
        .expect("table");
    t.insert(vec![Value::Int(1)]).expect("row");
    // Two pages allocated in the table's space that nothing references.
    let space = t.definition().expect("def").space;
    for _ in 0..2 {
        let mut m = db.engine().mtr();
        let p = db.engine().alloc_page(&mut m, space).expect("alloc");
        m.create_page(PageId::new(space, p), PageType::Blob)
            .expect("create");
        let lsn = m.commit().expect("commit").expect("changed");
        db.engine().commit_wait(lsn);
    }
    drop(t);
    db.shutdown().expect("shutdown");
    let out = quire()
        .args(["check", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("leaked: 2 BLOB page(s)"), "{stdout}");
    let out = quire()
        .args(["check", "--reclaim-leaks", "--data-dir"])
        .arg(&dir)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("reclaimed 2 leaked pages"), "{stdout}");
    assert!(stdout.contains("clean"), "{stdout}");
    let db = Db::open(&dir, Config::default()).expect("reopen");
    let t = db.table("d", "t").expect("table");
    assert_eq!(
        t.get(&[Value::Int(1)]).expect("get"),
        Some(vec![Value::Int(1)])
    );
    db.shutdown().expect("shutdown");
}
