//! A rollback or a commit that fails part way is fatal: the process aborts with a message
//! naming the transaction, and recovery rolls the transaction back from its undo log, as in
//! InnoDB. Going on would leave half a transaction visible to everyone, with its locks
//! released, and permanent. Each scenario runs in a child process (this test binary,
//! re-executed) so the abort can be observed; the failure is an injected read error on a
//! page the rollback or commit needs, evicted from a small buffer pool.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, Table, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::{Fault, FaultOp, SimVfs};
use quire_io::Vfs;

const CHILD: &str = "QUIRE_TRX_FAILURE_CHILD";
const SIGABRT: i32 = 6;
const ROWS: i64 = 300;

fn run_child(test: &str) -> std::process::Output {
    let exe = std::env::current_exe().expect("current exe");
    Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("spawn child")
}

fn assert_aborted(out: &std::process::Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("updated every row"),
        "setup did not run:\n{stdout}\n{stderr}"
    );
    assert_eq!(
        out.status.signal(),
        Some(SIGABRT),
        "child did not abort.\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(what) && stderr.contains("recovery"),
        "the abort does not say what failed:\n{stderr}"
    );
}

fn config() -> Config {
    Config {
        log_buffer_size: 1 << 20,
        log_file_size: 8 << 20,
        ..common::small_config()
    }
}

fn pad(k: i64) -> Value {
    Value::Str(format!("{k:0>900}"))
}

/// A table whose rows fill several times the 64-frame pool, and an open transaction that
/// changed every row: its undo and data pages are not all resident.
fn setup(vfs: &SimVfs) -> Db {
    let db = Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        config(),
    )
    .expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let spec = TableSpec::new(
        vec![
            Column::new("k", int),
            Column::new("v", int),
            Column::new("pad", ColumnType::VarChar { max_chars: 1000 }),
        ],
        vec![0],
    );
    let t = db.create_table("d", "t", spec).expect("table");
    for k in 0..ROWS {
        t.insert(vec![Value::Int(k), Value::Int(0), pad(k)])
            .expect("insert");
    }
    db
}

fn changed_rows(t: &Table<'_>) -> usize {
    (0..ROWS)
        .filter(|k| {
            t.get(&[Value::Int(*k)])
                .ok()
                .flatten()
                .is_some_and(|r| r[1] == Value::Int(1))
        })
        .count()
}

#[test]
fn a_rollback_that_fails_part_way_aborts() {
    if std::env::var_os(CHILD).is_none() {
        let out = run_child("a_rollback_that_fails_part_way_aborts");
        assert_aborted(&out, "rolling back");
        return;
    }
    let vfs = SimVfs::new(5);
    let db = setup(&vfs);
    let t = db.table("d", "t").expect("table");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    for k in 0..ROWS {
        tx.update(
            &t,
            &[Value::Int(k)],
            vec![Value::Int(k), Value::Int(1), pad(k)],
        )
        .expect("update");
    }
    println!("updated every row");
    vfs.inject(Fault::eio(FaultOp::Read, 1).on_path(".qsp"));
    let r = tx.rollback();
    vfs.clear_faults();
    println!(
        "ROLLBACK RETURNED {r:?}; rows still changed, now visible to all: {}",
        changed_rows(&t)
    );
}

#[test]
fn a_commit_that_fails_aborts() {
    if std::env::var_os(CHILD).is_none() {
        let out = run_child("a_commit_that_fails_aborts");
        assert_aborted(&out, "committing");
        return;
    }
    let vfs = SimVfs::new(6);
    let db = setup(&vfs);
    let t = db.table("d", "t").expect("table");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    for k in 0..ROWS {
        tx.update(
            &t,
            &[Value::Int(k)],
            vec![Value::Int(k), Value::Int(1), pad(k)],
        )
        .expect("update");
    }
    // Evict the undo log's header page: the commit has to read it back.
    for k in 0..ROWS {
        let _ = t.get(&[Value::Int(k)]);
    }
    println!("updated every row");
    vfs.inject(Fault::eio(FaultOp::Read, 1).on_path("system.qsp"));
    let r = tx.commit();
    vfs.clear_faults();
    println!(
        "COMMIT RETURNED {r:?}; rows changed, locks released: {}",
        changed_rows(&t)
    );
}
