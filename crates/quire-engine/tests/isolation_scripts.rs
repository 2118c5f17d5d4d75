//! Isolation behaviour as data-driven scripts (in the spirit of Hermitage): each file in
//! `tests/isolation/` runs once per isolation level it names, against a table
//! `t (id INT PRIMARY KEY, v INT)` with an index `by_v` on v.
//!
//! Script syntax (one step per line, `#` starts a comment):
//! ```text
//! levels: rc rr ser            # the levels to run at (ru rc rr ser)
//! row 1 10                     # initial rows, committed before the sessions start
//! t1: begin                    # session t1 runs a command ...
//! t2: get 1 -> 10              # ... and its result must be `10`
//! t2: get 1 -> rc:11 rr:10     # a result per level
//! t2: update 1 12 -> blocks    # the step must still be waiting 300 ms later
//! t1: commit
//! t2: <- ok                    # the blocked step's result, once it finished
//! t2: <- ser:10                # … at the levels named (the others did not block)
//! ```
//! Commands: begin, commit, rollback, get ID, get_for_update ID, get_for_share ID, scan,
//! scan_for_update, scan_for_share, by_v V, insert ID V, update ID V, add ID D (v += D),
//! delete ID, savepoint S, rollback_to S. Results: `ok`, `none`, a value, rows as
//! `id=v id=v`, ids as `[id id]`, `duplicate`, `deadlock`, `timeout`, `not found`,
//! `aborted`, `blocks`.

use std::collections::HashMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, ReadLock, Table, TableSpec, Transaction};
use quire_engine::trx::Isolation;

const BLOCK_WAIT: Duration = Duration::from_millis(300);

fn level_name(l: Isolation) -> &'static str {
    match l {
        Isolation::ReadUncommitted => "ru",
        Isolation::ReadCommitted => "rc",
        Isolation::RepeatableRead => "rr",
        Isolation::Serializable => "ser",
    }
}

fn parse_level(s: &str) -> Isolation {
    match s {
        "ru" => Isolation::ReadUncommitted,
        "rc" => Isolation::ReadCommitted,
        "rr" => Isolation::RepeatableRead,
        "ser" => Isolation::Serializable,
        other => panic!("unknown level {other}"),
    }
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn v_of(row: &[Value]) -> String {
    match row.get(1) {
        Some(Value::Int(v)) => v.to_string(),
        other => format!("{other:?}"),
    }
}

fn rows_text(rows: &[Vec<Value>]) -> String {
    if rows.is_empty() {
        return "none".into();
    }
    rows.iter()
        .map(|r| match &r[0] {
            Value::Int(id) => format!("{id}={}", v_of(r)),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn err_text(e: &DbError) -> String {
    match e {
        DbError::DuplicateKey { .. } => "duplicate".into(),
        DbError::Deadlock => "deadlock".into(),
        DbError::LockWaitTimeout => "timeout".into(),
        DbError::RowNotFound => "not found".into(),
        DbError::TrxAborted => "aborted".into(),
        e => format!("error: {e}"),
    }
}

/// Runs one command in a session; the transaction is begun by `begin`.
fn run<'d>(
    cmd: &[&str],
    tx: &mut Option<Transaction<'d>>,
    db: &'d Db,
    t: &Table<'d>,
    level: Isolation,
) -> String {
    let num = |i: usize| -> i64 { cmd[i].parse().expect("a number") };
    let rows = |r: Result<Vec<Vec<Value>>, DbError>| match r {
        Ok(rows) => rows_text(&rows),
        Err(e) => err_text(&e),
    };
    let done = |r: Result<(), DbError>| match r {
        Ok(()) => "ok".to_string(),
        Err(e) => err_text(&e),
    };
    let one = |r: Result<Option<Vec<Value>>, DbError>| match r {
        Ok(Some(row)) => v_of(&row),
        Ok(None) => "none".into(),
        Err(e) => err_text(&e),
    };
    match cmd[0] {
        "begin" => {
            *tx = Some(db.begin(level).expect("begin"));
            return "ok".into();
        }
        "commit" => return done(tx.take().expect("no transaction").commit()),
        "rollback" => return done(tx.take().expect("no transaction").rollback()),
        _ => {}
    }
    let tx = tx.as_mut().expect("no transaction: begin first");
    match cmd[0] {
        "get" => one(tx.get(t, &[int(num(1))])),
        "get_for_update" => one(tx.get_locking(t, &[int(num(1))], ReadLock::Exclusive)),
        "get_for_share" => one(tx.get_locking(t, &[int(num(1))], ReadLock::Shared)),
        "scan" => rows(
            tx.scan(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                .and_then(|r| r.collect()),
        ),
        "scan_for_update" | "scan_for_share" => {
            let lock = if cmd[0] == "scan_for_update" {
                ReadLock::Exclusive
            } else {
                ReadLock::Shared
            };
            rows(tx.scan_locking(
                t,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
                lock,
            ))
        }
        "by_v" => match tx.lookup_index(t, "by_v", &[int(num(1))]) {
            Ok(pks) if pks.is_empty() => "none".into(),
            Ok(pks) => format!(
                "[{}]",
                pks.iter()
                    .map(|p| match &p[0] {
                        Value::Int(i) => i.to_string(),
                        o => format!("{o:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Err(e) => err_text(&e),
        },
        "insert" => match tx.insert(t, vec![int(num(1)), int(num(2))]) {
            Ok(_) => "ok".into(),
            Err(e) => err_text(&e),
        },
        "update" => done(
            tx.update(t, &[int(num(1))], vec![int(num(1)), int(num(2))])
                .map(|_| ()),
        ),
        "add" => {
            let d = num(2);
            match tx.update_with(t, &[int(num(1))], |row| {
                if let Value::Int(v) = &mut row[1] {
                    *v += d;
                }
            }) {
                Ok(Some(_)) => "ok".into(),
                Ok(None) => "not found".into(),
                Err(e) => err_text(&e),
            }
        }
        "delete" => done(tx.delete(t, &[int(num(1))])),
        "savepoint" => done(tx.savepoint(cmd[1])),
        "rollback_to" => done(tx.rollback_to_savepoint(cmd[1])),
        other => panic!("unknown command {other}"),
    }
}

struct Step {
    line: usize,
    session: String,
    cmd: String,
    expect: Option<String>,
}

/// The expectation for `level` out of `rc:11 rr:10`, or the whole text; `None` if the
/// text names other levels only.
fn expectation(text: &str, level: Isolation) -> Option<String> {
    let name = level_name(level);
    if !text.contains(':') {
        return Some(text.trim().to_string());
    }
    let mut out = None;
    let mut cur: Option<String> = None;
    let mut words: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        if let Some((l, rest)) = w.split_once(':') {
            if ["ru", "rc", "rr", "ser"].contains(&l) {
                if cur.as_deref() == Some(name) {
                    out = Some(words.join(" "));
                }
                cur = Some(l.to_string());
                words = if rest.is_empty() {
                    vec![]
                } else {
                    vec![rest.to_string()]
                };
                continue;
            }
        }
        words.push(w.to_string());
    }
    if cur.as_deref() == Some(name) {
        out = Some(words.join(" "));
    }
    out
}

fn run_script(path: &Path, level: Isolation) {
    let text = std::fs::read_to_string(path).expect("read script");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config::default();
    config
        .set_str("innodb_lock_wait_timeout=2")
        .expect("config");
    config.buffer_pool_size = 16 << 20;
    config.log_file_size = 16 << 20;
    let db = Db::open(dir.path(), config).expect("open");
    db.create_database("test").expect("create db");
    let int_ty = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(
        vec![Column::new("id", int_ty), Column::new("v", int_ty)],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("by_v", vec![1]));
    db.create_table("test", "t", spec).expect("create table");
    let mut steps = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with("levels:") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("row ") {
            let n: Vec<i64> = rest
                .split_whitespace()
                .map(|w| w.parse().expect("row numbers"))
                .collect();
            let t = db.table("test", "t").expect("table");
            t.insert(vec![int(n[0]), int(n[1])]).expect("initial row");
            continue;
        }
        let (session, rest) = line.split_once(':').expect("session: command");
        let (cmd, expect) = match rest.split_once("->") {
            Some((c, e)) => (c.trim().to_string(), Some(e.trim().to_string())),
            None => (rest.trim().to_string(), None),
        };
        steps.push(Step {
            line: i + 1,
            session: session.trim().to_string(),
            cmd,
            expect,
        });
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    std::thread::scope(|s| {
        let mut sessions: HashMap<String, (mpsc::Sender<String>, mpsc::Receiver<String>)> =
            HashMap::new();
        let mut blocked: HashMap<String, usize> = HashMap::new();
        for st in &steps {
            if !sessions.contains_key(&st.session) {
                let (to_tx, to_rx) = mpsc::channel::<String>();
                let (from_tx, from_rx) = mpsc::channel::<String>();
                let db = &db;
                s.spawn(move || {
                    let t = db.table("test", "t").expect("table");
                    let mut tx: Option<Transaction<'_>> = None;
                    for cmd in to_rx {
                        let words: Vec<&str> = cmd.split_whitespace().collect();
                        let out = run(&words, &mut tx, db, &t, level);
                        if from_tx.send(out).is_err() {
                            break;
                        }
                    }
                });
                sessions.insert(st.session.clone(), (to_tx, from_rx));
            }
            let (to, from) = &sessions[&st.session];
            let at = format!(
                "{name}:{} [{}] {}: {}",
                st.line,
                level_name(level),
                st.session,
                st.cmd
            );
            if let Some(stripped) = st.cmd.strip_prefix("<-") {
                // The result of this session's blocked step.
                // `<- ser:10`: only the levels named had a blocked step.
                let Some(want) = expectation(stripped, level) else {
                    continue;
                };
                assert!(
                    blocked.remove(&st.session).is_some(),
                    "{at}: nothing blocked"
                );
                let got = from
                    .recv_timeout(Duration::from_secs(10))
                    .unwrap_or_else(|_| "still blocked".into());
                assert_eq!(got, want, "{at}");
                continue;
            }
            assert!(
                !blocked.contains_key(&st.session),
                "{at}: the session is blocked"
            );
            to.send(st.cmd.clone()).expect("session alive");
            let want = st.expect.as_deref().map(|e| {
                expectation(e, level)
                    .unwrap_or_else(|| panic!("{at}: no expectation for this level"))
            });
            match from.recv_timeout(BLOCK_WAIT) {
                Ok(got) => {
                    if let Some(want) = want {
                        assert_eq!(got, want, "{at}");
                    } else {
                        assert!(
                            !got.starts_with("error") && got != "deadlock" && got != "timeout",
                            "{at}: unexpected {got}"
                        );
                    }
                }
                Err(_) => {
                    assert_eq!(want.as_deref(), Some("blocks"), "{at}: the step blocked");
                    blocked.insert(st.session.clone(), st.line);
                }
            }
        }
        assert!(
            blocked.is_empty(),
            "{name} [{}]: steps still blocked at the end: {blocked:?}",
            level_name(level)
        );
        // Closing the channels ends the sessions (open transactions roll back on drop).
        drop(sessions);
    });
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{name}: check: {problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn isolation_scripts_behave_as_each_level_promises() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/isolation");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/isolation")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the scripts are there");
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let levels = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("levels:"))
            .expect("a levels: line");
        for l in levels.split_whitespace() {
            run_script(&f, parse_level(l));
        }
    }
}
