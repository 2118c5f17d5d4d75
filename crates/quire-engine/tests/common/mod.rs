//! A seeded workload of mini-transactions on many pages, with a model of what each durable
//! prefix of its commits leaves on the pages. Shared by the crash tests.

#![allow(dead_code)]

pub mod online_ddl;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::page::{PageId, PageNo, PageType};
use quire_engine::Engine;
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Bytes of each page the workload writes and the model tracks.
pub const REGION: std::ops::Range<usize> = 64..1024;
pub const DIR: &str = "/data";

pub fn small_config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 64 * 4096, // 64 frames: evictions happen
        log_file_size: 256 << 10,
        log_buffer_size: 64 << 10,
        recovery_threads: 2,
        // Background purge would make the I/O sequence of a run depend on timing; crash
        // tests replay runs by I/O step, so they purge explicitly (`Db::purge_now`).
        purge_threads: 0,
        ..Config::default()
    }
}

pub fn open(vfs: &SimVfs, cfg: &Config) -> Result<Engine, quire_engine::EngineError> {
    Engine::open(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(DIR),
        cfg.clone(),
    )
}

/// The region of every page after k committed mtrs; `None` for pages not yet created.
pub type State = BTreeMap<u32, Vec<u8>>;

/// What a run acknowledged.
pub struct Run {
    /// states[k] = the pages after the first k mtrs.
    pub states: Vec<State>,
    /// Mtrs whose commit_wait returned (durable with flush_log_at_trx_commit=1).
    pub acked: usize,
    /// The space was durably created.
    pub space_created: bool,
    /// The end LSN of each model mtr: `ends[k - 1]` for states[k].
    pub ends: Vec<quire_engine::page::Lsn>,
}

/// Runs `mtrs` mini-transactions over `pages` pages of space "t": each creates a page or
/// writes a few random ranges of one to three pages, then waits for its commit. Every few
/// mtrs a checkpoint writes pages out. Stops early (without error) if the engine fails.
///
/// `alive` says whether the simulated machine still runs: a commit counts as acknowledged
/// only if `commit_wait` returned before the disk froze at the crash point (after that, the
/// process is dead in all but name and its acknowledgements never happened).
pub fn workload(
    engine: &Engine,
    seed: u64,
    mtrs: usize,
    pages: u32,
    checkpoint_every: usize,
    alive: &dyn Fn() -> bool,
) -> Run {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut run = Run {
        states: vec![State::new()],
        acked: 0,
        space_created: false,
        ends: Vec::new(),
    };
    let Ok(space) = engine.create_space("t") else {
        return run;
    };
    run.space_created = true;
    // Space pages: allocate `pages` pages up front (the allocation mtrs are not in the model:
    // they change only allocation metadata).
    let mut ids = Vec::new();
    for _ in 0..pages {
        let mut m = engine.mtr();
        let Ok(p) = engine.alloc_page(&mut m, space) else {
            return run;
        };
        let Ok(Some(lsn)) = m.commit() else {
            return run;
        };
        engine.commit_wait(lsn);
        ids.push(p);
    }
    let mut state = State::new();
    for i in 0..mtrs {
        let mut next = state.clone();
        let mut m = engine.mtr();
        let n = rng.gen_range(1..=3);
        let mut touched = Vec::new();
        for _ in 0..n {
            let p = ids[rng.gen_range(0..ids.len())];
            if touched.contains(&p) {
                continue;
            }
            touched.push(p);
            let id = PageId::new(space, p);
            let exists = next.contains_key(&p.0);
            let slot = if !exists || rng.gen_ratio(1, 10) {
                // PAGE_INIT: the page starts from nothing (also re-initializes live pages).
                let Ok(slot) = m.create_page(id, PageType::Raw) else {
                    return run;
                };
                next.insert(p.0, vec![0u8; REGION.len()]);
                slot
            } else {
                let Ok(slot) = m.x_latch(id) else { return run };
                slot
            };
            for _ in 0..rng.gen_range(1..4) {
                let len = rng.gen_range(1..64);
                let off = rng.gen_range(REGION.start..REGION.end - len);
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                if m.write(slot, off, &data).is_err() {
                    return run;
                }
                if let Some(region) = next.get_mut(&p.0) {
                    region[off - REGION.start..off - REGION.start + len].copy_from_slice(&data);
                }
            }
        }
        let lsn = match m.commit() {
            Ok(Some(lsn)) => lsn,
            _ => return run,
        };
        state = next;
        run.states.push(state.clone());
        run.ends.push(lsn);
        engine.commit_wait(lsn);
        if alive() {
            run.acked = run.states.len() - 1;
        }
        if checkpoint_every > 0 && i % checkpoint_every == checkpoint_every - 1 {
            let _ = engine.checkpoint_now();
        }
    }
    run
}

/// Reads the model region of every page the workload may have touched.
pub fn observe(engine: &Engine, pages: u32) -> Option<State> {
    let space = engine.space_id("t").ok()?;
    let mut s = State::new();
    // Workload pages are the first `pages` pages the allocator hands out: 1..=pages.
    for p in 1..=pages {
        let id = PageId::new(space, PageNo(p));
        if let Ok(g) = engine.pool().get_shared(id) {
            if quire_engine::page::Header::new(&g).page_type() == Some(PageType::Raw) {
                s.insert(p, g[REGION].to_vec());
            }
        }
    }
    Some(s)
}

/// The k such that `observed` equals states[k] with k >= acked, if any.
pub fn matching_prefix(run: &Run, observed: &State) -> Option<usize> {
    (run.acked..run.states.len()).find(|&k| run.states[k] == *observed)
}
