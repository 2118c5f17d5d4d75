//! A valid doublewrite copy whose page lies more than `MAX_LOST_EXTENSION_BYTES` past the end
//! of its space is damage that happens to pass its checksum, not a lost extension: recovery
//! skips it with a warning naming it and opens the directory with every row
//! (docs/doublewrite.md, "A copy far past its space's end"). Found by the `pages` fuzz target
//! (fuzz/crashes/pages/crash-1cc5…, -50fc…, -9648…, -cb48…, -be0a…): a block of dblwr.qdw
//! replaced by a sealed page naming a page terabytes past the end made restore extend the
//! space to it (the simulator now refuses files over 1 GiB with EFBIG). A copy just past the
//! end is still what a lost extension leaves, and is still restored.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::doublewrite::{DBLWR_FILE, MAX_LOST_EXTENSION_BYTES};
use quire_engine::log::format::{CheckpointSlot, BLOCK};
use quire_engine::log::LOG_FILE;
use quire_engine::page::{self, Header, Lsn, PageId, PageNo, PageType, SpaceId};
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, TableSpec};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

const DIR: &str = "/data";
const PS: usize = 4096;
const ROWS: i64 = 300;
const TIB: u64 = 1 << 40;

fn config() -> Config {
    Config {
        page_size: PS as u32,
        buffer_pool_size: 256 * PS as u64,
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

fn path(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

fn row(i: i64) -> Vec<Value> {
    vec![
        Value::Int(i),
        Value::Bytes(vec![b'a' + (i % 26) as u8; 100]),
    ]
}

/// A crashed directory with one table of `ROWS` rows, half of them inserted after a
/// checkpoint (some of those flushed through the doublewrite buffer, the rest only in redo),
/// and the LSN of its newest durable checkpoint: restore considers copies at or above it.
fn crashed() -> (SimVfs, Lsn) {
    let vfs = SimVfs::new(11);
    let db = open(&vfs).expect("open");
    db.create_database("d").expect("database");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let bytes = ColumnType::VarBinary { max_len: 200 };
    let t = db
        .create_table(
            "d",
            "t",
            TableSpec::new(
                vec![Column::new("id", int), Column::new("v", bytes)],
                vec![0],
            ),
        )
        .expect("table");
    for i in 0..ROWS / 2 {
        t.insert(row(i)).expect("insert");
    }
    db.engine().checkpoint_now().expect("checkpoint");
    for i in ROWS / 2..ROWS * 3 / 4 {
        t.insert(row(i)).expect("insert");
    }
    db.engine().pool().flush_all().expect("flush");
    for i in ROWS * 3 / 4..ROWS {
        t.insert(row(i)).expect("insert");
    }
    let image = vfs.crash_with(CrashMode::KeepAll).0;
    db.kill();
    // The checkpoint the image has, not the one taken above: the background checkpointer
    // may have written a newer one since.
    let log = image.live_contents(&path(LOG_FILE)).expect("redo.log");
    let b = BLOCK as usize;
    let checkpoint = [1, 2]
        .iter()
        .filter_map(|&i| CheckpointSlot::decode(&log[i * b..(i + 1) * b]).ok())
        .max_by_key(|s| s.seq)
        .expect("a checkpoint")
        .checkpoint_lsn;
    (image, checkpoint)
}

fn file_len(vfs: &SimVfs, name: &str) -> u64 {
    vfs.live_contents(&path(name)).expect("file").len() as u64
}

/// The space id a space file's page 0 names.
fn space_of(vfs: &SimVfs, name: &str) -> SpaceId {
    let bytes = vfs.live_contents(&path(name)).expect("file");
    Header::new(&bytes[..PS]).page_id().space
}

/// A valid page image of `id` at `lsn`: what a doublewrite copy is.
fn sealed(id: PageId, lsn: Lsn, fill: u8) -> Vec<u8> {
    let mut p = vec![fill; PS];
    page::init_header(&mut p, id, PageType::Raw);
    page::set_lsn(&mut p, lsn);
    page::stamp(&mut p);
    page::verify(&p, id).expect("the forged copy is valid");
    p
}

/// Writes `copies` over never-written blocks at the end of dblwr.qdw (a slot a single
/// flusher never uses), as the fuzz inputs did with whatever block they hit.
fn plant(vfs: &SimVfs, copies: &[Vec<u8>]) {
    let f = vfs
        .open(&path(DBLWR_FILE), OpenOptions::existing())
        .expect("open dblwr");
    let blocks = f.len().expect("len") / PS as u64;
    for (k, c) in copies.iter().enumerate() {
        let at = (blocks - 1 - k as u64) * PS as u64;
        let mut old = vec![0u8; PS];
        f.read_exact_at(&mut old, at).expect("read");
        assert!(old.iter().all(|&b| b == 0), "block at {at} was used");
        f.write_all_at(c, at).expect("write");
    }
    f.sync_data().expect("sync");
}

/// Opens the image with a subscriber recording the warnings recovery logs (restore runs on
/// the opening thread).
fn open_logged(vfs: &SimVfs) -> (Result<Db, quire_engine::table::DbError>, String) {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("sink").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let w = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || w.clone())
        .finish();
    let db = tracing::subscriber::with_default(subscriber, || open(vfs));
    let log = String::from_utf8_lossy(&sink.0.lock().expect("sink")).into_owned();
    (db, log)
}

/// Every row is there, `Db::check` finds nothing, and after a clean shutdown neither does
/// `quire check`'s file check.
fn all_rows_and_clean(db: Db, vfs: &SimVfs) {
    let t = db.table("d", "t").expect("table");
    for i in 0..ROWS {
        assert_eq!(
            t.get(&[Value::Int(i)]).expect("get"),
            Some(row(i)),
            "row {i}"
        );
    }
    let scanned: Vec<Vec<Value>> = t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("row");
    assert!(
        scanned == (0..ROWS).map(row).collect::<Vec<_>>(),
        "a scan differs"
    );
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
    let report = quire_engine::check::check_data_dir(vfs, Path::new(DIR)).expect("check dir");
    assert!(
        report.is_clean(),
        "{:?}",
        report.problems().collect::<Vec<_>>()
    );
}

#[test]
fn copies_8_tib_past_the_end_of_the_system_and_a_table_space_are_skipped() {
    let (vfs, checkpoint) = crashed();
    let far = (8 * TIB / PS as u64) as u32;
    assert!(u64::from(far) * PS as u64 > MAX_LOST_EXTENSION_BYTES);
    let mut copies = Vec::new();
    let mut planted = Vec::new();
    for name in ["system.qsp", "d.t.qsp"] {
        let len = file_len(&vfs, name);
        let page = PageNo((len / PS as u64) as u32 + far);
        copies.push(sealed(
            PageId::new(space_of(&vfs, name), page),
            checkpoint,
            0x5a,
        ));
        planted.push((name, len, page));
    }
    plant(&vfs, &copies);

    let (db, log) = open_logged(&vfs);
    let db = db.unwrap_or_else(|e| panic!("open failed: {e}\n{log}"));
    for (name, len, page) in &planted {
        // Skipped with a warning naming the file and the page, and the file not grown.
        assert!(
            log.lines()
                .any(|l| l.contains(&path(name).display().to_string())
                    && l.contains(&format!("page {page} "))
                    && l.contains("far beyond the end")),
            "no warning for {name} page {page}:\n{log}"
        );
        assert_eq!(file_len(&vfs, name), *len, "{name} grew");
    }
    all_rows_and_clean(db, &vfs);
}

#[test]
fn a_copy_just_past_the_end_is_a_lost_extension_and_is_restored() {
    let (vfs, checkpoint) = crashed();
    let mut planted = Vec::new();
    for (k, name) in ["system.qsp", "d.t.qsp"].into_iter().enumerate() {
        let len = file_len(&vfs, name);
        // A few pages past the end: within one extension step, far inside the bound.
        let page = PageNo((len / PS as u64) as u32 + 3);
        let copy = sealed(
            PageId::new(space_of(&vfs, name), page),
            checkpoint,
            0x30 + k as u8,
        );
        planted.push((name, len, page, copy));
    }
    plant(
        &vfs,
        &planted.iter().map(|p| p.3.clone()).collect::<Vec<_>>(),
    );

    let (db, log) = open_logged(&vfs);
    let db = db.unwrap_or_else(|e| panic!("open failed: {e}\n{log}"));
    for (name, len, page, copy) in &planted {
        let bytes = vfs.live_contents(&path(name)).expect("file");
        let at = page.0 as usize * PS;
        assert!(
            bytes.len() > at && bytes.len() as u64 > *len,
            "{name} of {len} bytes was not extended to page {page}: {} bytes",
            bytes.len()
        );
        assert!(
            bytes[at..at + PS] == copy[..],
            "{name} page {page} not restored"
        );
    }
    // At least these two (a flush in flight at the crash may have left others to restore).
    let restored = db.engine().stat("quire_dblwr_pages_restored");
    assert!(restored >= Some(2), "{restored:?}");
    all_rows_and_clean(db, &vfs);
}
