//! A gate for group commit: one thread does the log I/O, the others sleep until it is done
//! and are woken *together*.
//!
//! Why not a mutex: committers queued on a mutex are let in one at a time. After a sync,
//! the first waiter runs, sees its LSN covered, unlocks and wakes the second, and so on: a
//! chain of context switches, each waiting for the one before it, before the last committer
//! of the group can answer its client (a lock convoy), and parking_lot's mutex spins with
//! `sched_yield` before it sleeps. Here the thread leaving the gate wakes, at once, every
//! sleeper its work covered, and one sleeper it did not cover, to enter next (MariaDB's
//! `group_commit_lock` does the same). Waking them all would cost each uncovered sleeper a
//! second sleep.
//!
//! Invariants:
//! 1. At most one thread is inside (between a successful [`Gate::try_enter`] and its
//!    [`Gate::leave`]).
//! 2. No lost wake-up: a sleeper parks only after checking, under the parking lot's queue
//!    lock, that the gate is busy and its condition false; `leave` clears `busy` before it
//!    takes that lock. So a sleeper either saw the gate free (and does not park) or is in
//!    the queue when a later `leave` looks at it.
//! 3. Every `leave` that finds a sleeper its work did not cover wakes one such sleeper. That
//!    thread either enters (and so will `leave` in turn), finds the gate taken (whose
//!    holder will), or finds itself covered, which only an entry after this `leave` can
//!    do, whose own `leave` wakes the next. So no sleeper is left behind.
//!
//! A panic inside (a log invariant's assert: I/O errors are fatal before that) leaves the
//! gate shut, so commits stop rather than go on over a log whose invariants broke.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use parking_lot_core::{FilterOp, ParkToken, DEFAULT_UNPARK_TOKEN};

#[derive(Debug, Default)]
pub(crate) struct Gate {
    busy: AtomicBool,
}

impl Gate {
    /// Enters if nobody is inside.
    pub(crate) fn try_enter(&self) -> bool {
        self.busy
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_ok()
    }

    /// Leaves, waking every sleeper for which `covered(token)` holds (its wait is over) and
    /// one other (invariant 3).
    pub(crate) fn leave(&self, covered: impl Fn(usize) -> bool) {
        debug_assert!(self.busy.load(SeqCst), "invariant 1: leave without enter");
        self.busy.store(false, SeqCst);
        let mut next = false;
        // SAFETY: the key is this gate's address, only ever used as a key by this module;
        // the filter reads atomics and takes no lock.
        unsafe {
            parking_lot_core::unpark_filter(
                self.key(),
                |ParkToken(t)| {
                    if covered(t) {
                        FilterOp::Unpark
                    } else if !next {
                        next = true;
                        FilterOp::Unpark
                    } else {
                        FilterOp::Skip
                    }
                },
                |_| DEFAULT_UNPARK_TOKEN,
            );
        }
    }

    /// Sleeps while someone is inside and `done()` is false (it may return at once, or
    /// spuriously: callers loop). `token` is what `leave`'s `covered` is asked about; `done`
    /// must be cheap and take no lock.
    pub(crate) fn wait(&self, token: usize, done: impl Fn() -> bool) {
        // SAFETY: as in `leave`.
        unsafe {
            parking_lot_core::park(
                self.key(),
                || self.busy.load(SeqCst) && !done(),
                || {},
                |_, _| {},
                ParkToken(token),
                None,
            );
        }
    }

    fn key(&self) -> usize {
        self as *const Gate as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize};
    use std::sync::Arc;

    /// Many threads wait for a counter to pass their target while others advance it
    /// through the gate: every waiter returns (no lost wake-up), and never two inside.
    #[test]
    fn every_waiter_returns_and_one_is_inside_at_a_time() {
        let gate = Arc::new(Gate::default());
        let done = Arc::new(AtomicU64::new(0));
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8u64)
            .map(|t| {
                let (gate, done, inside) = (gate.clone(), done.clone(), inside.clone());
                std::thread::spawn(move || {
                    for i in 0..2000u64 {
                        let target = i * 8 + t + 1;
                        while done.load(SeqCst) < target {
                            if gate.try_enter() {
                                assert_eq!(inside.fetch_add(1, SeqCst), 0, "invariant 1");
                                // Advance to at least this thread's target.
                                done.fetch_max(target, SeqCst);
                                std::thread::yield_now();
                                inside.fetch_sub(1, SeqCst);
                                gate.leave(|t| done.load(SeqCst) >= t as u64);
                            } else {
                                gate.wait(target as usize, || done.load(SeqCst) >= target);
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a gate thread panicked");
        }
        assert!(done.load(SeqCst) >= 2000 * 8 - 7);
    }
}
