//! `quire bench create-tables --rows N`: the seed's table-creation test (lesson 5), through
//! the embedded API until the SQL layer exists: N × CREATE TABLE (a INT PRIMARY KEY, b INT,
//! c VARCHAR(100), KEY(b)) in series, then N × DROP TABLE. Each DDL is durable when it
//! returns (docs/catalog.md): the file is allocated with fallocate (no zeros) and made
//! crash-safe by FILE_CREATE redo, not by an fsync of the file.

use std::time::Instant;

use quire_engine::row::{Column, ColumnType, IntWidth};
use quire_engine::table::{Db, IndexSpec, TableSpec};

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut s = TableSpec::new(
        vec![
            Column::new("a", int),
            Column::nullable("b", int),
            Column::nullable("c", ColumnType::VarChar { max_chars: 100 }),
        ],
        vec![0],
    );
    s.indexes.push(IndexSpec::new("b", vec![1]));
    s
}

pub fn run(db: &Db, n: u64) -> Result<(), String> {
    let e = |e: quire_engine::table::DbError| e.to_string();
    const DB: &str = "bench_ct";
    if !db.databases().iter().any(|d| d == DB) {
        db.create_database(DB).map_err(e)?;
    }
    // Leftovers of a killed run.
    for t in db.tables(DB).map_err(e)? {
        db.drop_table(DB, &t).map_err(e)?;
    }
    let fsyncs0 = db.engine().stat("Innodb_os_log_fsyncs").unwrap_or(0);
    let start = Instant::now();
    for i in 0..n {
        db.create_table(DB, &format!("t{i}"), spec()).map_err(e)?;
    }
    let create_s = start.elapsed().as_secs_f64();
    let fsyncs1 = db.engine().stat("Innodb_os_log_fsyncs").unwrap_or(0);
    let start = Instant::now();
    for i in 0..n {
        db.drop_table(DB, &format!("t{i}")).map_err(e)?;
    }
    let drop_s = start.elapsed().as_secs_f64();
    let fsyncs2 = db.engine().stat("Innodb_os_log_fsyncs").unwrap_or(0);
    println!(
        "workload=create-tables tables={n} create_s={create_s:.3} drop_s={drop_s:.3} \
         create_log_fsyncs={} drop_log_fsyncs={}",
        fsyncs1 - fsyncs0,
        fsyncs2 - fsyncs1
    );
    Ok(())
}
