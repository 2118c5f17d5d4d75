//! `quire bench writebench --rows N`: the seed's writebench (lesson 1, MDEV-19738) before
//! tables exist. The seed inserts N rows of `(a BIGINT, b..h CHAR(255))` into a new table and
//! runs `FLUSH TABLES t1 FOR EXPORT`. Here each row is 8 × 255 = 2040 bytes written straight
//! into pages: as many rows per page as fit, one mini-transaction per row, every page
//! allocated with `Engine::alloc_page` and started with PAGE_INIT; then every dirty page of
//! the space is written (`BufferPool::flush_space`, what FLUSH … FOR EXPORT does).
//!
//! Freshly initialized pages never need the doublewrite buffer: recovery rebuilds them from
//! redo alone. So the counters should show almost no doublewrite pages (only page 0, which
//! the allocator changes in place), and the time with `innodb_doublewrite=ON` should be
//! within a few percent of OFF.

use std::time::Instant;

use quire_engine::page::{PageId, PageType};
use quire_engine::Engine;

/// Bytes of one row: 8 columns of CHAR(255) (the BIGINT key is stored in the first 8).
pub const ROW_BYTES: usize = 8 * 255;
const SPACE: &str = "writebench";
/// Page header and trailer bytes (docs/page-format.md).
const PAGE_OVERHEAD: usize = 32 + 8;

pub struct Report {
    pub rows: u64,
    pub pages: u64,
    pub fill_s: f64,
    pub flush_s: f64,
    pub flushed: usize,
}

pub fn run(engine: &Engine, rows: u64) -> Result<Report, String> {
    let err = |e: quire_engine::EngineError| e.to_string();
    let ps = engine.page_size().bytes();
    let per_page = ((ps - PAGE_OVERHEAD) / ROW_BYTES).max(1) as u64;
    let space = match engine.space_id(SPACE) {
        Ok(s) => s,
        Err(_) => engine.create_space(SPACE).map_err(err)?,
    };
    let mut row = vec![b' '; ROW_BYTES];
    let start = Instant::now();
    let mut last_report = Instant::now();
    let mut page = None;
    let mut pages = 0u64;
    let mut last_lsn = None;
    for seq in 1..=rows {
        let slot_in_page = (seq - 1) % per_page;
        row[..8].copy_from_slice(&seq.to_le_bytes());
        let mut m = engine.mtr();
        let slot = if slot_in_page == 0 {
            let p = engine.alloc_page(&mut m, space).map_err(err)?;
            let id = PageId::new(space, p);
            page = Some(id);
            pages += 1;
            m.create_page(id, PageType::Index)
                .map_err(|e| e.to_string())?
        } else {
            let id = page.ok_or("no current page")?;
            m.x_latch(id).map_err(|e| e.to_string())?
        };
        let off = 32 + slot_in_page as usize * ROW_BYTES;
        m.write(slot, off, &row).map_err(|e| e.to_string())?;
        last_lsn = m.commit().map_err(|e| e.to_string())?.or(last_lsn);
        if last_report.elapsed().as_secs_f64() >= 1.0 {
            last_report = Instant::now();
            eprintln!(
                "{:>6.1} s  {seq} rows  {:.0} rows/s",
                start.elapsed().as_secs_f64(),
                seq as f64 / start.elapsed().as_secs_f64()
            );
        }
    }
    // One transaction: it commits once, at the end.
    if let Some(lsn) = last_lsn {
        engine.commit_wait(lsn);
    }
    let fill_s = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let flushed = engine
        .pool()
        .flush_space(space)
        .map_err(|e| e.to_string())?;
    let flush_s = t.elapsed().as_secs_f64();
    Ok(Report {
        rows,
        pages,
        fill_s,
        flush_s,
        flushed,
    })
}
