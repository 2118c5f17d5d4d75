//! The on-disk decoders behind `quire check` and recovery, on a real data directory.
//!
//! Once per process a small directory is made in the simulated file system: the tables of
//! `quire_fuzz::SCHEMA` through SQL, a few changes, a clean shutdown (the *clean* image,
//! every page written); then more changes, a transaction left open, and a crash that keeps
//! every write (the *crashed* image: redo past the checkpoint, undo to roll back, dirty
//! pages never flushed). Each input copies one image, damages one file, then runs what
//! `quire check` runs on the clean one (`check::check_data_dir`, `Db::open_for_check` and
//! `Db::check`), or what `quire serve` runs at start on the crashed one (`Db::open_with`:
//! recovery, doublewrite restore, background rollback, DDL completion), then shuts down or
//! stops as a crash would.
//!
//! Input: `[file, mode, page lo, page hi, offset lo, offset hi, data…]`. `file` picks one of
//! the directory's files (spaces, `redo.log`, `dblwr.qdw`); the page is a page of a space
//! or doublewrite file, a 4 KiB block of the log. Modes (`mode % 4`):
//! 0. `data` written at `offset` in the page, as it is;
//! 1. the same, then the page sealed again (trailer LSN = header LSN and the page
//!    checksum; for the log's header and checkpoint blocks, the block crc), so that the
//!    decoders past the checksum see the damage;
//! 2. the page replaced by `data` (zero-padded), sealed again;
//! 3. the log: `data` written into the payload of redo frame number `page` (counting from
//!    the checkpoint), and the frame's crc made right, so that recovery parses and applies
//!    the damaged records. Other files: as mode 1.
//!
//! `mode & 4`: start as the server does (on the crashed image) instead of checking; `mode & 8`: shut down cleanly
//! (flushing what recovery made) instead of stopping as a crash would.
//!
//! Any outcome but a panic is fine, with one oracle: a space page changed without sealing
//! it again must be reported by `check_data_dir`, naming the file and the page.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use quire_engine::log::format::{file_offset, CheckpointSlot, FileHeader, BLOCK, PAD_FLAG};
use quire_engine::page::Lsn;
use quire_engine::table::Db;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

const PAGE: usize = 4096;

/// The two images inputs start from: after a clean shutdown (every page written: what
/// `quire check` is meant for) and after a crash (what recovery is for).
struct Templates {
    clean: SimVfs,
    crashed: SimVfs,
}

fn open(vfs: &SimVfs) -> Db {
    match Db::open_with(
        Arc::new(vfs.clone()),
        Path::new(quire_fuzz::DIR),
        quire_fuzz::tiny_config(),
    ) {
        Ok(db) => db,
        Err(e) => panic!("template: {e}"),
    }
}

fn run(db: &Db, statements: &[&str]) {
    let inst = quire_sql::Instance::new(db);
    let mut s = inst.session("root", "localhost");
    for sql in statements {
        if let Err(e) = s.query(sql, &mut quire_fuzz::Discard::default()) {
            panic!("template: {sql}: {e}");
        }
    }
}

fn templates() -> &'static Templates {
    static T: OnceLock<Templates> = OnceLock::new();
    T.get_or_init(|| {
        let vfs = SimVfs::new(0);
        let db = open(&vfs);
        quire_fuzz::make_schema(&db);
        run(
            &db,
            &[
                "USE fz",
                "UPDATE t1 SET c = REPEAT('y', 6000) WHERE id = 1",
                "DELETE FROM t1 WHERE id = 3",
            ],
        );
        if let Err(e) = db.shutdown() {
            panic!("template: shutdown: {e}");
        }
        let clean = vfs.crash_with(CrashMode::KeepAll).0;
        let db = open(&vfs);
        let crashed = {
            let inst = quire_sql::Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            for sql in [
                "USE fz",
                "INSERT INTO t1 (a, b) VALUES (5, 'five')",
                "BEGIN",
                "INSERT INTO t1 (a, b) VALUES (7, 'seven')",
                "UPDATE t1 SET b = 'zzz' WHERE id = 2",
                "INSERT INTO t2 (k) VALUES (8)",
            ] {
                if let Err(e) = s.query(sql, &mut quire_fuzz::Discard::default()) {
                    panic!("template: {sql}: {e}");
                }
            }
            // The crash, with the transaction open and the pages dirty.
            vfs.crash_with(CrashMode::KeepAll).0
        };
        db.kill();
        Templates { clean, crashed }
    })
}

fn files(vfs: &SimVfs) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = vfs
        .list_files()
        .into_iter()
        .filter(|p| p.extension().is_none_or(|x| x != "lock"))
        .collect();
    v.sort();
    v
}

fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Seals a space or doublewrite page: the trailer LSN is the header's, the checksum right.
fn seal_page(p: &mut [u8]) {
    let n = p.len();
    let (head, tail) = p.split_at_mut(n - 8);
    tail.copy_from_slice(&head[16..24]);
    let c = crc32c::crc32c(&p[4..]);
    p[..4].copy_from_slice(&c.to_le_bytes());
}

/// Seals a log header or checkpoint block: crc32c of all but its last 4 bytes, there.
fn seal_block(b: &mut [u8]) {
    let at = b.len() - 4;
    let c = crc32c::crc32c(&b[..at]);
    b[at..].copy_from_slice(&c.to_le_bytes());
}

/// The log's bytes at `lsn`..`lsn + n` on the circle.
fn circle(cap: u64, lsn: u64, n: usize) -> Vec<usize> {
    (0..n as u64)
        .map(|i| file_offset(lsn + i, cap) as usize)
        .collect()
}

/// Writes `data` into the payload of frame `k` (from the newest checkpoint) and makes its
/// crc right; `false` when the log has no such frame.
fn damage_frame(log: &mut [u8], k: usize, offset: usize, data: &[u8]) -> bool {
    let b = BLOCK as usize;
    if log.len() < 3 * b {
        return false;
    }
    let Ok(header) = FileHeader::decode(&log[..b]) else {
        return false;
    };
    let cap = header.capacity;
    if log.len() as u64 != 3 * BLOCK + cap {
        return false;
    }
    let slot = [1, 2]
        .iter()
        .filter_map(|&i| CheckpointSlot::decode(&log[i * b..(i + 1) * b]).ok())
        .max_by_key(|s| s.seq);
    let Some(slot) = slot else {
        return false;
    };
    let mut lsn = slot.checkpoint_lsn.0;
    for i in 0..=k.min(10_000) {
        let h = circle(cap, lsn, 8);
        let hb: Vec<u8> = h.iter().map(|&o| log[o]).collect();
        let (len_field, epoch) = (get_u32(&hb, 0), get_u32(&hb, 4));
        let body = (len_field & !PAD_FLAG) as usize;
        if body as u64 > cap / 4 {
            return false;
        }
        let body_at = circle(cap, lsn + 8, body);
        let crc_at = circle(cap, lsn + 8 + body as u64, 4);
        let mut bytes: Vec<u8> = body_at.iter().map(|&o| log[o]).collect();
        let crc: Vec<u8> = crc_at.iter().map(|&o| log[o]).collect();
        let ok = quire_engine::log::format::frame_crc_raw(Lsn(lsn), len_field, epoch, &bytes)
            == get_u32(&crc, 0);
        if !ok {
            return false;
        }
        if i == k || i == 10_000 {
            if body == 0 {
                return false;
            }
            for (j, &d) in data.iter().enumerate() {
                bytes[(offset + j) % body] = d;
            }
            for (&o, &v) in body_at.iter().zip(&bytes) {
                log[o] = v;
            }
            let c = quire_engine::log::format::frame_crc_raw(Lsn(lsn), len_field, epoch, &bytes);
            for (&o, v) in crc_at.iter().zip(c.to_le_bytes()) {
                log[o] = v;
            }
            return true;
        }
        lsn += 12 + body as u64;
    }
    false
}

/// What [`damage`] did.
struct Damage {
    mode: u8,
    /// A space page changed and not sealed again: `quire check` must name it.
    unsealed_space_page: Option<(PathBuf, usize)>,
}

fn damage(vfs: &SimVfs, data: &[u8]) -> Option<Damage> {
    let [f, mode, p0, p1, o0, o1, rest @ ..] = data else {
        return None;
    };
    let all = files(vfs);
    let path = all.get(usize::from(*f) % all.len().max(1))?;
    let file = vfs.open(path, OpenOptions::existing()).ok()?;
    let len = file.len().ok()? as usize;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, 0).ok()?;
    let is_log = path.file_name().is_some_and(|n| n == "redo.log");
    let page_no = usize::from(u16::from_le_bytes([*p0, *p1]));
    let offset = usize::from(u16::from_le_bytes([*o0, *o1]));
    let pages = len / PAGE;
    if pages == 0 {
        return None;
    }
    let at = (page_no % pages) * PAGE;
    let before = bytes[at..at + PAGE].to_vec();
    let mut framed = false;
    if mode % 4 == 3 && is_log {
        framed = damage_frame(&mut bytes, page_no, offset, rest);
    }
    if !framed {
        let page = &mut bytes[at..at + PAGE];
        if mode % 4 == 2 {
            page.fill(0);
            let n = rest.len().min(PAGE);
            page[..n].copy_from_slice(&rest[..n]);
        } else {
            for (j, &d) in rest.iter().enumerate() {
                page[(offset + j) % PAGE] = d;
            }
        }
        if mode % 4 != 0 {
            if !is_log {
                seal_page(page);
            } else if at < 3 * PAGE {
                seal_block(page);
            }
        }
    }
    file.write_all_at(&bytes, 0).ok()?;
    let is_space = path.extension().is_some_and(|x| x == "qsp");
    let changed = bytes[at..at + PAGE] != before[..];
    Some(Damage {
        mode: *mode,
        unsealed_space_page: (is_space && mode % 4 == 0 && changed)
            .then(|| (path.clone(), at / PAGE)),
    })
}

/// With QUIRE_FUZZ_VERBOSE set, what each input got is printed (to read the errors).
fn say(what: std::fmt::Arguments<'_>) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("QUIRE_FUZZ_VERBOSE").is_some()) {
        eprintln!("{what}");
    }
}

/// `text` has `named` ("page 7") not followed by another digit ("page 70").
fn names(text: &str, named: &str) -> bool {
    text.match_indices(named)
        .any(|(i, _)| !text[i + named.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

fuzz_target!(|data: &[u8]| {
    // Checks start from the clean image, server starts from the crashed one.
    let server_start = data.get(1).is_some_and(|m| m & 4 != 0);
    let t = templates();
    let image = if server_start { &t.crashed } else { &t.clean };
    let (vfs, _) = image.crash_with(CrashMode::KeepAll);
    let Some(Damage {
        mode,
        unsealed_space_page,
    }) = damage(&vfs, data)
    else {
        return;
    };
    let dir = Path::new(quire_fuzz::DIR);
    let arc: Arc<dyn Vfs> = Arc::new(vfs.clone());
    let db = if mode & 4 == 0 {
        let report = quire_engine::check::check_data_dir(&vfs, dir);
        // A page changed behind the checksum is a problem naming its file and page.
        if let Some((path, page)) = unsealed_space_page {
            let shown = path.display().to_string();
            let named = format!("page {page}");
            let found = report.as_ref().is_ok_and(|r| {
                r.problems()
                    .any(|p| p.starts_with(&shown) && names(p, &named))
            });
            assert!(found, "{shown} {named} damaged, not reported: {report:?}");
        }
        if let Ok(r) = &report {
            r.problems().for_each(|p| say(format_args!("check: {p}")));
        }
        match Db::open_for_check(arc, dir, quire_fuzz::tiny_config()) {
            Ok((Some(db), problems)) => {
                problems.iter().for_each(|p| say(format_args!("open: {p}")));
                match db.check() {
                    Ok(ps) => ps.iter().for_each(|p| say(format_args!("tables: {p}"))),
                    Err(e) => say(format_args!("tables: error: {e}")),
                }
                db
            }
            Ok((None, _)) => return,
            Err(e) => return say(format_args!("open for check: error: {e}")),
        }
    } else {
        match Db::open_with(arc, dir, quire_fuzz::tiny_config()) {
            Ok(db) => db,
            Err(e) => return say(format_args!("open: error: {e}")),
        }
    };
    if mode & 8 != 0 {
        if let Err(e) = db.shutdown() {
            say(format_args!("shutdown: error: {e}"));
        }
    } else {
        db.kill();
    }
});
