//! Table ids and space ids are never handed out twice, across restarts and crashes: they come
//! from high-water marks persisted through redo (docs/space-format.md, "The dictionary
//! header"), not from "the largest id on disk + 1", which forgets a dropped table's id while
//! its history still names it.

mod common;

use std::sync::Arc;

use quire_engine::page::SpaceId;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
use quire_engine::table::{Db, TableSpec};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

fn open_db(vfs: &SimVfs) -> Db {
    let cfg = quire_engine::config::Config {
        log_buffer_size: 1 << 20,
        log_file_size: 4 << 20,
        ..common::small_config()
    };
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        cfg,
    )
    .expect("open")
}

fn spec() -> TableSpec {
    TableSpec::new(
        vec![
            Column::new(
                "k",
                ColumnType::Int {
                    width: IntWidth::Int,
                    unsigned: false,
                },
            ),
            Column::nullable("body", ColumnType::Text(LobSize::Medium)),
        ],
        vec![0],
    )
}

/// A TEXT value long enough to go off-page, different for every `seed`.
fn text(seed: u64) -> String {
    (0..9000)
        .map(|i| char::from(b'a' + ((i + seed * 7) % 26) as u8))
        .collect()
}

fn row(k: i64, seed: u64) -> Vec<Value> {
    vec![Value::Int(k), Value::Str(text(seed))]
}

#[test]
fn a_table_created_after_a_restart_does_not_inherit_a_dropped_tables_history() {
    let vfs = SimVfs::new(41);
    let db = open_db(&vfs);
    db.create_database("d").expect("db");
    let old = db.create_table("d", "old", spec()).expect("table");
    let old_id = old.definition().expect("def").id;
    let old_space = old.definition().expect("def").space;
    for k in 0..8 {
        old.insert(row(k, k as u64)).expect("insert");
    }
    for k in 0..8 {
        old.update(&[Value::Int(k)], row(k, 100 + k as u64))
            .expect("update");
    }
    drop(old);
    db.drop_table("d", "old").expect("drop");
    // purge_threads = 0 and a fast shutdown: the updates' history (naming the old table's
    // BLOB chains by its table id) outlives the table.
    db.shutdown().expect("shutdown");

    let db = open_db(&vfs);
    let new = db.create_table("d", "new", spec()).expect("table");
    let def = new.definition().expect("def");
    assert_ne!(
        def.id, old_id,
        "the dropped table's id was handed out again"
    );
    assert_ne!(
        def.space, old_space,
        "the dropped table's space id was reused"
    );
    for k in 0..8 {
        new.insert(row(k, 500 + k as u64)).expect("insert");
    }
    db.purge_now().expect("purge");
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    for k in 0..8 {
        assert_eq!(
            new.get(&[Value::Int(k)]).expect("get"),
            Some(row(k, 500 + k as u64)),
            "row {k}"
        );
    }
    drop(new);
    db.shutdown().expect("shutdown");
}

#[test]
fn a_space_created_after_a_crash_does_not_reuse_a_dropped_spaces_id() {
    let cfg = common::small_config();
    let vfs = SimVfs::new(42);
    let engine = common::open(&vfs, &cfg).expect("open");
    let a = engine.create_space("a").expect("create a");
    engine.delete_space("a").expect("delete a");
    engine.kill();
    let (vfs, _) = vfs.crash_with(CrashMode::DropAll);

    let engine = common::open(&vfs, &cfg).expect("recover after the drop");
    let b = engine.create_space("b").expect("create b");
    assert_ne!(a, b, "space id {a} handed out twice");
    engine.kill();
    let (vfs, _) = vfs.crash_with(CrashMode::DropAll);

    let engine = common::open(&vfs, &cfg).expect("recover after the second create");
    assert_eq!(engine.space_id("b").expect("b exists"), b);
    let c = engine.create_space("c").expect("create c");
    assert!(c != a && c != b && c != SpaceId::SYSTEM, "{c}");
    engine.shutdown().expect("shutdown");
}

/// Zeroes the dictionary header on the system space's page 0, as a data directory made
/// before it has it (the page's checksum restamped). Only after a clean shutdown: no redo.
fn remove_dict_header(vfs: &SimVfs) {
    let path = std::path::Path::new(common::DIR).join("system.qsp");
    let f = vfs
        .open(&path, quire_io::OpenOptions::existing())
        .expect("open system.qsp");
    let mut page = vec![0u8; 4096];
    f.read_exact_at(&mut page, 0).expect("read page 0");
    assert_eq!(&page[96..100], b"QDIC", "the header is at offset 96");
    page[96..128].fill(0);
    quire_engine::page::stamp(&mut page);
    f.write_all_at(&page, 0).expect("write page 0");
    f.sync_data().expect("sync");
}

#[test]
fn a_data_directory_from_before_the_dictionary_header_gets_one_from_its_largest_ids() {
    let vfs = SimVfs::new(43);
    let db = open_db(&vfs);
    db.create_database("d").expect("db");
    let t1 = db
        .create_table("d", "t1", spec())
        .expect("t1")
        .definition()
        .expect("def");
    let t2 = db
        .create_table("d", "t2", spec())
        .expect("t2")
        .definition()
        .expect("def");
    db.shutdown().expect("shutdown");
    remove_dict_header(&vfs);

    let db = open_db(&vfs);
    assert_eq!(db.engine().table_id_mark().expect("mark"), t2.id + 1);
    let t3 = db
        .create_table("d", "t3", spec())
        .expect("t3")
        .definition()
        .expect("def");
    assert!(
        t3.id > t2.id && t3.space > t2.space && t3.space > t1.space,
        "{t3:?}"
    );
    db.drop_table("d", "t3").expect("drop");
    db.kill();
    let (vfs, _) = vfs.crash_with(CrashMode::DropAll);

    let db = open_db(&vfs);
    let t4 = db
        .create_table("d", "t4", spec())
        .expect("t4")
        .definition()
        .expect("def");
    assert!(t4.id > t3.id && t4.space > t3.space, "{t4:?} after {t3:?}");
    db.shutdown().expect("shutdown");
}
