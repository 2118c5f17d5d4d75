//! A space file whose page 0 no longer names its space (the magic overwritten) is damage:
//! opening the directory, for `quire serve` or for `quire check`, fails naming the file and
//! page 0, and the file is still there. Found by the `pages` fuzz target (docs/fuzzing.md):
//! `Engine::open` took every unidentified file for one whose creation never committed and
//! deleted it, a committed table's rows with it. And a system.qsp whose page 0 names
//! another space id made the open fail with "a space named 'system' exists already". A
//! file whose page 0 was never written (all zeros) is still what an unfinished creation
//! leaves, and is still removed.

use std::path::Path;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::{OpenOptions, Vfs};

const DIR: &str = "/data";

fn config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 256 * 4096,
        log_file_size: 1 << 20,
        log_buffer_size: 64 << 10,
        purge_threads: 0,
        ..Config::default()
    }
}

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(DIR),
        config(),
    )
}

/// A directory with one committed table, shut down cleanly.
fn directory() -> SimVfs {
    let vfs = SimVfs::new(7);
    let db = open(&vfs).expect("open");
    db.create_database("d").expect("database");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let t = db
        .create_table(
            "d",
            "t",
            TableSpec::new(vec![Column::new("id", int), Column::new("v", int)], vec![0]),
        )
        .expect("table");
    for i in 0..10 {
        t.insert(vec![Value::Int(i), Value::Int(i * 10)])
            .expect("insert");
    }
    db.shutdown().expect("shutdown");
    vfs
}

fn write_at(vfs: &SimVfs, file: &str, offset: u64, bytes: &[u8]) {
    let f = vfs
        .open(&Path::new(DIR).join(file), OpenOptions::create_if_missing())
        .expect("open file");
    f.write_all_at(bytes, offset).expect("write");
}

/// The space header's magic is the 4 bytes after the 32-byte page header.
const MAGIC_AT: u64 = 32;

#[test]
fn a_table_file_with_a_damaged_page_0_is_named_and_not_deleted() {
    let vfs = directory();
    write_at(&vfs, "d.t.qsp", MAGIC_AT, &[0, 0, 0, 0]);
    for check in [false, true] {
        let e = if check {
            Db::open_for_check(Arc::new(vfs.clone()), Path::new(DIR), config()).map(|_| ())
        } else {
            open(&vfs).map(|_| ())
        }
        .expect_err("a damaged page 0 opens");
        let text = e.to_string();
        assert!(
            text.contains("/data/d.t.qsp") && text.contains("page 0"),
            "check={check}: {text}"
        );
        assert!(
            vfs.exists(&Path::new(DIR).join("d.t.qsp")).expect("exists"),
            "the damaged file was deleted"
        );
    }
}

#[test]
fn a_damaged_system_space_header_is_named() {
    let vfs = directory();
    write_at(&vfs, "system.qsp", MAGIC_AT, b"junk");
    let text = open(&vfs).map(|_| ()).expect_err("opens").to_string();
    assert!(
        text.contains("/data/system.qsp") && text.contains("page 0"),
        "{text}"
    );
}

#[test]
fn a_system_space_whose_page_0_names_another_space_is_named() {
    // The fuzz input: zeros over the checksum and a space id of 0x0a000000 in system.qsp.
    let vfs = directory();
    write_at(&vfs, "system.qsp", 0, &[0, 0, 0, 0, 0, 0, 0, 0x0a]);
    for check in [false, true] {
        let e = if check {
            Db::open_for_check(Arc::new(vfs.clone()), Path::new(DIR), config()).map(|_| ())
        } else {
            open(&vfs).map(|_| ())
        }
        .expect_err("opens");
        let text = e.to_string();
        assert!(
            text.contains("/data/system.qsp") && text.contains("page 0"),
            "check={check}: {text}"
        );
    }
}

#[test]
fn a_file_whose_page_0_was_never_written_is_still_removed() {
    let vfs = directory();
    // What a creation that never committed leaves: a file of zeros.
    write_at(&vfs, "d.unfinished.qsp", 0, &vec![0u8; 4 * 4096]);
    let db = open(&vfs).expect("open");
    assert!(!vfs
        .exists(&Path::new(DIR).join("d.unfinished.qsp"))
        .expect("exists"));
    let t = db.table("d", "t").expect("table");
    assert_eq!(
        t.get(&[Value::Int(3)]).expect("get"),
        Some(vec![Value::Int(3), Value::Int(30)])
    );
    db.shutdown().expect("shutdown");
}
