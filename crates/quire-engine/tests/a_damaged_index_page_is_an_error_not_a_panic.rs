//! An index page whose checksum holds but whose slot directory or records are out of place
//! (damage re-sealed with a valid checksum, as the `pages` fuzz target makes) is refused
//! when it is read from disk: opening the database, reading the table and `quire check`
//! give an error naming the file and the page, never a panic. Found by the `pages` fuzz
//! target: a leaf of a table without a primary key, read at open to find its largest
//! DB_ROW_ID, sent `node::rec` out of the page.

mod common;

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_engine::btree::{node, Direction};
use quire_engine::page::{self, Header, PageType};
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::{OpenOptions, Vfs};

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        common::small_config(),
    )
}

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

/// A data directory with `d.np` (no primary key) and `d.t` (a primary key), each a few
/// leaf pages long, shut down cleanly.
fn build() -> SimVfs {
    let vfs = SimVfs::new(9);
    let db = open(&vfs).expect("open");
    db.create_database("d").expect("db");
    let cols = || vec![Column::new("a", int()), Column::new("b", int())];
    db.create_table("d", "np", TableSpec::new(cols(), vec![]))
        .expect("np");
    db.create_table("d", "t", TableSpec::new(cols(), vec![0]))
        .expect("t");
    for k in 0..600 {
        for name in ["np", "t"] {
            db.table("d", name)
                .and_then(|t| t.insert(vec![Value::Int(k), Value::Int(k * 7)]))
                .expect("insert");
        }
    }
    db.shutdown().expect("shutdown");
    vfs
}

/// A leaf page of `file` that holds records: its page number.
fn a_leaf(vfs: &SimVfs, file: &Path) -> u32 {
    let bytes = vfs.live_contents(file).expect("file");
    let ps = common::small_config().page_size as usize;
    bytes
        .chunks(ps)
        .enumerate()
        .find(|(_, p)| {
            Header::new(p).page_type() == Some(PageType::Index)
                && node::level(p) == 0
                && node::n_recs(p) > 2
        })
        .map(|(i, _)| i as u32)
        .expect("a leaf with records")
}

/// Points slot `slot` of page `page_no` of `file` at `offset`, and seals the page again so
/// that its checksum holds.
fn damage(vfs: &SimVfs, file: &Path, page_no: u32, slot: usize, offset: u16) {
    let ps = common::small_config().page_size as usize;
    let at = page_no as u64 * ps as u64;
    let f = vfs.open(file, OpenOptions::existing()).expect("open file");
    let mut p = vec![0u8; ps];
    f.read_exact_at(&mut p, at).expect("read");
    let s = ps - page::TRAILER_SIZE - 2 * (slot + 1);
    p[s..s + 2].copy_from_slice(&offset.to_le_bytes());
    page::stamp(&mut p);
    f.write_all_at(&p, at).expect("write");
    f.sync_data().expect("sync");
}

fn path(name: &str) -> PathBuf {
    Path::new(common::DIR).join(name)
}

#[test]
fn a_damaged_leaf_of_a_table_without_a_primary_key_fails_the_open_naming_it() {
    for offset in [0xfff0u16, 3, 0] {
        let vfs = build();
        let file = path("d.np.qsp");
        let leaf = a_leaf(&vfs, &file);
        damage(&vfs, &file, leaf, 1, offset);
        let msg = match open(&vfs) {
            Err(e) => e.to_string(),
            Ok(db) => {
                // Opened: the damage must surface on the first read of the page.
                let t = db.table("d", "np").expect("table");
                let r: Result<Vec<_>, _> = t
                    .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                    .expect("scan")
                    .collect();
                r.expect_err("a damaged page read as data").to_string()
            }
        };
        assert!(
            msg.contains("d.np.qsp") && msg.contains(&format!("page {leaf}")),
            "offset {offset}: the error names neither file nor page: {msg}"
        );
        // `quire check`'s open and table check name it too.
        let (db, problems) = Db::open_for_check(
            Arc::new(vfs.clone()) as Arc<dyn Vfs>,
            Path::new(common::DIR),
            common::small_config(),
        )
        .expect("open for check");
        let mut all = problems;
        if let Some(db) = db {
            all.extend(db.check().unwrap_or_else(|e| vec![e.to_string()]));
        }
        assert!(
            all.iter()
                .any(|p| p.contains("d.np.qsp") || p.contains("np")),
            "offset {offset}: check found nothing: {all:?}"
        );
    }
}

#[test]
fn a_damaged_leaf_of_a_table_with_a_primary_key_is_an_error_on_read() {
    let vfs = build();
    let file = path("d.t.qsp");
    let leaf = a_leaf(&vfs, &file);
    damage(&vfs, &file, leaf, 2, 0xff00);
    let db = open(&vfs).expect("the open reads no leaf of a table with a primary key");
    let t = db.table("d", "t").expect("table");
    let r: Result<Vec<_>, _> = t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .collect();
    let msg = r.expect_err("a damaged page read as data").to_string();
    assert!(
        msg.contains("d.t.qsp") && msg.contains(&format!("page {leaf}")),
        "the error names neither file nor page: {msg}"
    );
}
