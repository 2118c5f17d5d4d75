//! # The page cleaner
//!
//! A background thread that writes dirty pages so that user threads rarely have to: it keeps
//! free frames ready (LRU batches) and the dirty share and checkpoint age in bounds
//! (flush-list batches). What to do each round is decided by [`plan_flush`], a pure function
//! of [`CleanerInputs`], so that the log step can change the policy (adaptive flushing by
//! checkpoint age, lesson 2) without touching the mechanism.
//!
//! Invariants:
//! 1. The thread runs until [`PageCleaner::shutdown`] or drop, which stop *and join* it: no
//!    cleaner outlives its handle.
//! 2. A failed batch is logged and retried on a later round; the pages stay dirty (pool
//!    invariant 2), so no error loses a change.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use super::pool::BufferPool;
use super::BufferConfig;
use crate::page::Lsn;

/// What the policy sees of the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanerInputs {
    pub frames: usize,
    pub free_frames: usize,
    /// Free frames the pool wants ready.
    pub free_target: usize,
    pub dirty_pages: usize,
    pub oldest_modification: Option<Lsn>,
    /// The highest LSN the log asked to have flushed up to (0: none).
    pub requested_lsn: Lsn,
}

/// One round of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CleanerPlan {
    /// Free frames to have after the LRU batch (0: no LRU batch).
    pub lru_free_target: usize,
    /// Pages to write from the flush list, oldest first.
    pub flush_pages: usize,
    /// Only pages whose oldest modification is at most this.
    pub flush_up_to: Option<Lsn>,
    /// Run the next round at once instead of sleeping.
    pub urgent: bool,
}

/// The flushing policy.
///
/// 1. Free frames below target: an LRU batch back up to the target, so reads rarely have to
///    evict (or write) themselves.
/// 2. The log asked for pages older than an LSN (checkpoint age): write them at
///    `io_capacity_max`, urgently.
/// 3. Dirty share at or above `max_dirty_pages_pct`: write at `io_capacity_max`, urgently.
/// 4. Dirty share above the low-water mark: write a share of `io_capacity` that grows
///    linearly to all of it at the maximum.
///
/// Rates are pages per second, scaled to the round length.
pub fn plan_flush(cfg: &BufferConfig, i: &CleanerInputs) -> CleanerPlan {
    let per_round = |per_sec: u32| {
        ((u64::from(per_sec) * cfg.cleaner_interval_ms.max(1)) / 1000).max(1) as usize
    };
    let mut plan = CleanerPlan {
        lru_free_target: if i.free_frames < i.free_target {
            i.free_target
        } else {
            0
        },
        ..CleanerPlan::default()
    };
    let dirty_pct = (i.dirty_pages * 100) / i.frames.max(1);
    match i.oldest_modification {
        None => {}
        Some(oldest) if i.requested_lsn != Lsn::ZERO && oldest <= i.requested_lsn => {
            plan.flush_pages = per_round(cfg.io_capacity_max);
            plan.flush_up_to = Some(i.requested_lsn);
            plan.urgent = true;
        }
        Some(_) if dirty_pct >= cfg.max_dirty_pages_pct as usize => {
            plan.flush_pages = per_round(cfg.io_capacity_max);
            plan.urgent = true;
        }
        Some(_)
            if cfg.max_dirty_pages_pct_lwm > 0
                && dirty_pct >= cfg.max_dirty_pages_pct_lwm as usize =>
        {
            let lwm = cfg.max_dirty_pages_pct_lwm as usize;
            let span = (cfg.max_dirty_pages_pct as usize)
                .saturating_sub(lwm)
                .max(1);
            let share = per_round(cfg.io_capacity) * (dirty_pct - lwm + 1) / span;
            plan.flush_pages = share.clamp(1, per_round(cfg.io_capacity));
        }
        Some(_) => {}
    }
    plan
}

/// Handle on the cleaner thread. Dropping it stops and joins the thread.
#[derive(Debug)]
pub struct PageCleaner {
    pool: Arc<BufferPool>,
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl PageCleaner {
    pub fn start(pool: Arc<BufferPool>) -> std::io::Result<PageCleaner> {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let handle = {
            let (pool, stop, rounds) = (pool.clone(), stop.clone(), rounds.clone());
            thread::Builder::new()
                .name("quire-page-cleaner".into())
                .spawn(move || run(&pool, &stop, &rounds))?
        };
        Ok(PageCleaner {
            pool,
            stop,
            rounds,
            handle: Some(handle),
        })
    }

    /// Rounds completed so far (tests wait on it).
    pub fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Acquire)
    }

    /// Stops the thread and waits for it (invariant 1).
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.pool.cleaner_signal.wake();
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::error!("page cleaner thread panicked");
            }
        }
    }
}

impl Drop for PageCleaner {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

fn run(pool: &BufferPool, stop: &AtomicBool, rounds: &AtomicU64) {
    let interval = Duration::from_millis(pool.config().cleaner_interval_ms.max(1));
    let mut urgent = false;
    while !stop.load(Ordering::Acquire) {
        if !urgent {
            pool.cleaner_signal.wait(interval);
            if stop.load(Ordering::Acquire) {
                break;
            }
        }
        // Read each round: SET GLOBAL changes the rates and limits while this runs.
        let plan = plan_flush(&pool.live_config(), &pool.cleaner_inputs());
        let mut done = 0;
        if plan.lru_free_target > 0 {
            match pool.lru_batch(plan.lru_free_target) {
                Ok(n) => done += n,
                Err(e) => tracing::error!(error = %e, "page cleaner: LRU batch failed"),
            }
        }
        if plan.flush_pages > 0 {
            match pool.flush_list_batch(plan.flush_pages, plan.flush_up_to) {
                Ok(n) => done += n,
                Err(e) => tracing::error!(error = %e, "page cleaner: flush batch failed"),
            }
        }
        // Go again at once only while urgent work makes progress; a page that stays latched
        // must not turn the cleaner into a spin loop.
        urgent = plan.urgent && done > 0;
        rounds.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> CleanerInputs {
        CleanerInputs {
            frames: 1000,
            free_frames: 100,
            free_target: 62,
            dirty_pages: 0,
            oldest_modification: None,
            requested_lsn: Lsn::ZERO,
        }
    }

    #[test]
    fn idle_pool_needs_no_work() {
        assert_eq!(
            plan_flush(&BufferConfig::default(), &inputs()),
            CleanerPlan::default()
        );
    }

    #[test]
    fn low_free_frames_start_an_lru_batch() {
        let i = CleanerInputs {
            free_frames: 3,
            ..inputs()
        };
        assert_eq!(plan_flush(&BufferConfig::default(), &i).lru_free_target, 62);
    }

    #[test]
    fn dirty_share_above_maximum_flushes_urgently() {
        let cfg = BufferConfig::default();
        let i = CleanerInputs {
            dirty_pages: 950,
            oldest_modification: Some(Lsn(5)),
            ..inputs()
        };
        let p = plan_flush(&cfg, &i);
        assert_eq!(p.flush_pages, cfg.io_capacity_max as usize);
        assert!(p.urgent);
        assert_eq!(p.flush_up_to, None);
    }

    #[test]
    fn dirty_share_between_watermarks_flushes_proportionally() {
        let cfg = BufferConfig::default(); // lwm 10, max 90, io_capacity 200
        let at = |pct: usize| {
            plan_flush(
                &cfg,
                &CleanerInputs {
                    dirty_pages: pct * 10,
                    oldest_modification: Some(Lsn(5)),
                    ..inputs()
                },
            )
            .flush_pages
        };
        assert_eq!(at(5), 0);
        assert!(at(20) > 0);
        assert!(at(20) < at(60));
        assert!(at(89) <= cfg.io_capacity as usize);
    }

    #[test]
    fn requested_lsn_flushes_older_pages_first() {
        let i = CleanerInputs {
            dirty_pages: 10,
            oldest_modification: Some(Lsn(100)),
            requested_lsn: Lsn(500),
            ..inputs()
        };
        let p = plan_flush(&BufferConfig::default(), &i);
        assert_eq!(p.flush_up_to, Some(Lsn(500)));
        assert!(p.urgent);
        // Once the oldest page is past the target, the request is satisfied.
        let done = CleanerInputs {
            oldest_modification: Some(Lsn(600)),
            ..i
        };
        assert_eq!(plan_flush(&BufferConfig::default(), &done).flush_pages, 0);
    }
}
