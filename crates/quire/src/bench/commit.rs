//! `quire bench commit`: each transaction is one mini-transaction that changes one page,
//! then a commit that waits as `innodb_flush_log_at_trx_commit` says. It measures the redo
//! path alone (lesson 3): concurrent appends, group commit, O_DIRECT writes.

use std::cell::RefCell;
use std::sync::Arc;

use quire_engine::page::{PageId, PageNo};
use quire_engine::Engine;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::Workload;

const SPACE: &str = "bench_commit";
/// Bytes each transaction writes.
const ROW_BYTES: usize = 16;

pub fn prepare(engine: &Engine, rows: u64) -> Result<Workload, String> {
    let pages = rows.clamp(1, 1 << 20) as u32;
    let space = match engine.space_id(SPACE) {
        Ok(s) => s,
        Err(_) => engine.create_space(SPACE).map_err(|e| e.to_string())?,
    };
    // The allocator hands out pages 1, 2, ... of a fresh space; reuse them on a resumed run.
    let size = engine
        .spaces()
        .get(space)
        .map_err(|e| e.to_string())?
        .size_pages();
    let mut have = 0u32;
    for p in 1..size.min(pages + 1) {
        if engine
            .pool()
            .get_shared(PageId::new(space, PageNo(p)))
            .is_ok()
        {
            have += 1;
        }
    }
    for _ in have..pages {
        let mut m = engine.mtr();
        let p = engine
            .alloc_page(&mut m, space)
            .map_err(|e| e.to_string())?;
        m.create_page(PageId::new(space, p), quire_engine::page::PageType::Raw)
            .map_err(|e| e.to_string())?;
        let lsn = m.commit().map_err(|e| e.to_string())?;
        if let Some(lsn) = lsn {
            engine.commit_wait(lsn);
        }
    }
    Ok(Workload { space, pages })
}

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_entropy());
}

pub fn txn(engine: &Arc<Engine>, w: &Workload) -> Result<(), String> {
    let (p, off, val) = RNG.with(|r| {
        let mut r = r.borrow_mut();
        (
            r.gen_range(1..=w.pages),
            r.gen_range(64..4000 - ROW_BYTES),
            r.gen::<u128>(),
        )
    });
    let mut m = engine.mtr();
    let s = m
        .x_latch(PageId::new(w.space, PageNo(p)))
        .map_err(|e| e.to_string())?;
    m.write(s, off, &val.to_le_bytes())
        .map_err(|e| e.to_string())?;
    let lsn = m.commit().map_err(|e| e.to_string())?;
    if let Some(lsn) = lsn {
        engine.commit_wait(lsn);
    }
    Ok(())
}
