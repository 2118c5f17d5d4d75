//! Four threads insert, update, delete and read overlapping keys of one table with a unique
//! and a non-unique secondary index, while a fifth creates and drops other tables; then every
//! index agrees with the clustered rows (`Db::check`) and AUTO_INCREMENT never repeated.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn concurrent_row_changes_keep_indexes_consistent() {
    let vfs = SimVfs::new(3);
    let db = Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        common::small_config(),
    )
    .expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Big,
        unsigned: false,
    };
    let mut spec = TableSpec::new(
        vec![
            Column::new("k", int),
            Column::new("a", int),
            Column::nullable("u", int),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("by_a", vec![1]));
    spec.indexes.push(IndexSpec::new("by_u", vec![2]).unique());
    db.create_table("d", "t", spec.clone()).expect("table");
    let mut auto = spec.clone();
    auto.auto_increment = Some(0);
    db.create_table("d", "auto", auto).expect("auto table");
    let ids = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for th in 0..4u64 {
            let (db, ids) = (&db, &ids);
            s.spawn(move || {
                let t = db.table("d", "t").expect("t");
                let a = db.table("d", "auto").expect("auto");
                let mut rng = StdRng::seed_from_u64(th);
                for _ in 0..400 {
                    let k = rng.gen_range(0..120i64);
                    let u = rng.gen_range(0..200i64);
                    let row = vec![Value::Int(k), Value::Int(k % 5), Value::Int(u)];
                    let r = match rng.gen_range(0..4) {
                        0 => t.insert(row).map(|_| ()),
                        1 => t.update(&[Value::Int(k)], row).map(|_| ()),
                        2 => t.delete(&[Value::Int(k)]),
                        _ => t.get(&[Value::Int(k)]).map(|_| ()),
                    };
                    match r {
                        Ok(()) | Err(DbError::DuplicateKey { .. }) | Err(DbError::RowNotFound) => {}
                        Err(e) => panic!("thread {th}: {e}"),
                    }
                    if rng.gen_range(0..8) == 0 {
                        let r = a
                            .insert(vec![Value::Null, Value::Int(0), Value::Null])
                            .expect("auto insert");
                        ids.lock().expect("ids").push(r[0].clone());
                    }
                }
            });
        }
        let db = &db;
        s.spawn(move || {
            for i in 0..20 {
                let name = format!("x{i}");
                db.create_table("d", &name, spec.clone()).expect("create");
                db.drop_table("d", &name).expect("drop");
            }
        });
    });
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    let ids = ids.into_inner().expect("ids");
    let distinct: BTreeSet<String> = ids.iter().map(|v| format!("{v:?}")).collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "AUTO_INCREMENT handed out a value twice"
    );
    db.shutdown().expect("shutdown");
}
