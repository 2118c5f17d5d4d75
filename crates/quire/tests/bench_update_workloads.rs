//! `quire bench update-index` / `update-non-index` run their transactions and report them:
//! with one row and `--max-txns N`, k ends exactly N above where it started (every
//! update-index transaction committed once), and the summary line says so.

use std::ops::Bound;
use std::process::Command;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::Value;
use quire_engine::table::Db;

fn summary(out: &std::process::Output) -> std::collections::HashMap<String, String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    last.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn k_of_row_1(dir: &std::path::Path) -> i64 {
    let db = Db::open(dir, Config::default()).expect("open");
    let t = db.table("sbtest", "sbtest1").expect("table");
    let rows: Vec<Vec<Value>> = t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(rows.len(), 1);
    let Value::Int(k) = rows[0][1] else {
        panic!("k is an INT")
    };
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
    k
}

fn bench(
    dir: &std::path::Path,
    workload: &str,
    extra: &[&str],
) -> std::collections::HashMap<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_quire"))
        .args([
            "bench",
            workload,
            "--rows",
            "1",
            "--seconds",
            "60",
            "--max-txns",
            "300",
        ])
        .args([
            "--set",
            "innodb_log_file_size=16M",
            "--set",
            "innodb_buffer_pool_size=16M",
        ])
        .args(extra)
        .arg("--data-dir")
        .arg(dir)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .expect("run quire bench");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    summary(&out)
}

#[test]
fn update_index_commits_every_transaction_once_and_reports_history() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let s = bench(&dir, "update-index", &["--threads", "2"]);
    assert_eq!(s.get("workload").map(String::as_str), Some("update-index"));
    assert_eq!(s.get("commits").map(String::as_str), Some("300"), "{s:?}");
    assert!(s.contains_key("history_max"), "{s:?}");
    assert!(s.contains_key("p95_ms") && s.contains_key("tps"), "{s:?}");
    // Deadlocks and lock wait timeouts are retried: whatever their number, k counts commits.
    assert!(
        s.get("errors").is_some_and(|e| e.parse::<u64>().is_ok()),
        "{s:?}"
    );
    let k0 = k_of_row_1(&dir);
    let s = bench(&dir, "update-index", &[]);
    assert_eq!(s.get("commits").map(String::as_str), Some("300"), "{s:?}");
    assert_eq!(k_of_row_1(&dir), k0 + 300);
}

#[test]
fn update_non_index_and_a_slow_shutdown_purge_everything() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let s = bench(
        &dir,
        "update-non-index",
        &[
            "--set",
            "innodb_purge_threads=0",
            "--set",
            "innodb_fast_shutdown=0",
        ],
    );
    assert_eq!(s.get("commits").map(String::as_str), Some("300"), "{s:?}");
    assert_eq!(
        s.get("shutdown_history").map(String::as_str),
        Some("300"),
        "{s:?}"
    );
    assert!(s.contains_key("shutdown_s"), "{s:?}");
    let db = Db::open(&dir, Config::default()).expect("open");
    assert_eq!(
        db.stat("Innodb_history_list_length"),
        Some(0),
        "the slow shutdown purged it all"
    );
    db.shutdown().expect("shutdown");
}
