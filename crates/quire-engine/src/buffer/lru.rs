//! # The LRU list, with midpoint insertion
//!
//! One intrusive doubly linked list over frame indexes, from the head (most recently made
//! young) to the tail (the next eviction candidate). The last `old_pct`% of it is the *old
//! sublist*, which starts at `old_head`:
//!
//! ```text
//!  head                                  old_head                         tail
//!   [young] <-> [young] <-> ... <-> [young] <-> [old] <-> ... <-> [old]
//!   ^ promoted pages enter here            ^ pages read from disk enter here   ^ evicted here
//! ```
//!
//! A page read from disk enters at `old_head`, not at the head: a table scan that reads each
//! page once only churns the old sublist, and the hot (young) set survives it. The pool
//! promotes an old page to the head only when it is accessed again after `old_blocks_time_ms`
//! (InnoDB's `innodb_old_blocks_pct` / `innodb_old_blocks_time`).
//!
//! Invariants (checked by [`Lru::check`] in tests and debug builds):
//! 1. The list holds exactly `len` frames, linked both ways; `linked[f]` iff `f` is on it.
//! 2. The old sublist is a suffix: every frame from `old_head` to the tail is old, every frame
//!    before it is young, and `old_len` counts the old ones. `old_head == NIL` iff `old_len == 0`.
//! 3. After every operation, `old_len` is within `tolerance(len)` of `len * old_pct / 100`.
//!    The boundary moves by one frame per step and only when the band is left, so an eviction
//!    followed by an insertion (the steady state of a full pool) does not move it at all.
//!
//! The old/young flag of each frame lives outside this struct ([`OldFlags`]), so that the hit
//! path can read it without the pool mutex (as a hint; the mutex holder re-checks it).

use std::sync::atomic::{AtomicBool, Ordering};

/// "No frame": the end of a list.
pub(crate) const NIL: u32 = u32::MAX;

/// Where the per-frame "in the old sublist" flags are kept.
pub(crate) trait OldFlags {
    fn set_old(&self, f: u32, old: bool);
    fn is_old(&self, f: u32) -> bool;
}

impl OldFlags for [AtomicBool] {
    fn set_old(&self, f: u32, old: bool) {
        self[f as usize].store(old, Ordering::Relaxed);
    }
    fn is_old(&self, f: u32) -> bool {
        self[f as usize].load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub(crate) struct Lru {
    prev: Box<[u32]>,
    next: Box<[u32]>,
    linked: Box<[bool]>,
    head: u32,
    tail: u32,
    old_head: u32,
    len: usize,
    old_len: usize,
    old_pct: usize,
}

/// How far `old_len` may stray from its target before the boundary moves (invariant 3).
fn tolerance(len: usize) -> usize {
    (len / 20).max(1)
}

impl Lru {
    pub(crate) fn new(frames: usize, old_pct: u32) -> Lru {
        debug_assert!((5..=95).contains(&old_pct));
        Lru {
            prev: vec![NIL; frames].into_boxed_slice(),
            next: vec![NIL; frames].into_boxed_slice(),
            linked: vec![false; frames].into_boxed_slice(),
            head: NIL,
            tail: NIL,
            old_head: NIL,
            len: 0,
            old_len: 0,
            old_pct: old_pct as usize,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
    pub(crate) fn old_len(&self) -> usize {
        self.old_len
    }
    pub(crate) fn old_pct(&self) -> u32 {
        self.old_pct as u32
    }
    pub(crate) fn contains(&self, f: u32) -> bool {
        self.linked[f as usize]
    }
    pub(crate) fn tail(&self) -> u32 {
        self.tail
    }
    /// The frame nearer the head than `f`, or NIL.
    pub(crate) fn prev(&self, f: u32) -> u32 {
        self.prev[f as usize]
    }

    /// Links `f` just before `at`, or at the tail when `at` is NIL.
    fn link_before(&mut self, f: u32, at: u32) {
        debug_assert!(!self.linked[f as usize], "frame {f} is already on the LRU");
        let p = if at == NIL {
            self.tail
        } else {
            self.prev[at as usize]
        };
        self.prev[f as usize] = p;
        self.next[f as usize] = at;
        if p == NIL {
            self.head = f;
        } else {
            self.next[p as usize] = f;
        }
        if at == NIL {
            self.tail = f;
        } else {
            self.prev[at as usize] = f;
        }
        self.linked[f as usize] = true;
        self.len += 1;
    }

    fn unlink(&mut self, f: u32) {
        debug_assert!(self.linked[f as usize], "frame {f} is not on the LRU");
        let (p, n) = (self.prev[f as usize], self.next[f as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[f as usize] = NIL;
        self.next[f as usize] = NIL;
        self.linked[f as usize] = false;
        self.len -= 1;
    }

    /// Inserts `f` at the head: a page that is wanted (created, or promoted).
    pub(crate) fn push_young(&mut self, f: u32, flags: &(impl OldFlags + ?Sized)) {
        flags.set_old(f, false);
        let head = self.head;
        self.link_before(f, head);
        self.rebalance(flags);
    }

    /// Inserts `f` at the head of the old sublist: a page just read from disk (midpoint
    /// insertion).
    pub(crate) fn push_old(&mut self, f: u32, flags: &(impl OldFlags + ?Sized)) {
        let at = self.old_head;
        self.link_before(f, at);
        flags.set_old(f, true);
        self.old_head = f;
        self.old_len += 1;
        self.rebalance(flags);
    }

    pub(crate) fn remove(&mut self, f: u32, flags: &(impl OldFlags + ?Sized)) {
        if flags.is_old(f) {
            if self.old_head == f {
                // The next frame is old too (invariant 2), or NIL.
                self.old_head = self.next[f as usize];
            }
            self.old_len -= 1;
            flags.set_old(f, false);
        }
        self.unlink(f);
        self.rebalance(flags);
    }

    /// Moves `f` to the head.
    pub(crate) fn make_young(&mut self, f: u32, flags: &(impl OldFlags + ?Sized)) {
        self.remove(f, flags);
        self.push_young(f, flags);
    }

    /// `SET GLOBAL innodb_old_blocks_pct`: a new share for the old sublist; the boundary
    /// moves at once, so invariant 3 holds for the new share when this returns.
    pub(crate) fn set_old_pct(&mut self, old_pct: u32, flags: &(impl OldFlags + ?Sized)) {
        debug_assert!((5..=95).contains(&old_pct));
        self.old_pct = old_pct as usize;
        self.rebalance(flags);
    }

    /// Moves the young/old boundary back into its band (invariant 3).
    fn rebalance(&mut self, flags: &(impl OldFlags + ?Sized)) {
        loop {
            let target = self.len * self.old_pct / 100;
            let tol = tolerance(self.len);
            if self.old_len + tol < target {
                let c = if self.old_head == NIL {
                    self.tail
                } else {
                    self.prev[self.old_head as usize]
                };
                if c == NIL {
                    break;
                }
                flags.set_old(c, true);
                self.old_head = c;
                self.old_len += 1;
            } else if self.old_len > target + tol {
                let h = self.old_head;
                debug_assert_ne!(h, NIL);
                flags.set_old(h, false);
                self.old_head = self.next[h as usize];
                self.old_len -= 1;
            } else {
                break;
            }
        }
    }

    /// Walks the whole list and asserts invariants 1–3. O(len): tests and debug checks only.
    pub(crate) fn check(&self, flags: &(impl OldFlags + ?Sized)) {
        let mut n = 0;
        let mut old = 0;
        let mut seen_old = false;
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL {
            assert!(
                self.linked[cur as usize],
                "inv 1: {cur} linked but not marked"
            );
            assert_eq!(self.prev[cur as usize], prev, "inv 1: back link of {cur}");
            if cur == self.old_head {
                seen_old = true;
            }
            assert_eq!(
                flags.is_old(cur),
                seen_old,
                "inv 2: frame {cur} on the wrong side"
            );
            old += usize::from(seen_old);
            n += 1;
            prev = cur;
            cur = self.next[cur as usize];
        }
        assert_eq!(prev, self.tail, "inv 1: tail");
        assert_eq!(n, self.len, "inv 1: len");
        assert_eq!(
            self.linked.iter().filter(|&&l| l).count(),
            self.len,
            "inv 1: stray linked flags"
        );
        assert_eq!(old, self.old_len, "inv 2: old_len");
        assert_eq!(self.old_head == NIL, self.old_len == 0, "inv 2: old_head");
        let target = self.len * self.old_pct / 100;
        assert!(
            self.old_len.abs_diff(target) <= tolerance(self.len),
            "inv 3: old_len {} target {target} len {}",
            self.old_len,
            self.len
        );
    }

    /// Frames from head to tail (tests).
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.len);
        let mut cur = self.head;
        while cur != NIL {
            v.push(cur);
            cur = self.next[cur as usize];
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn flags(n: usize) -> Vec<AtomicBool> {
        (0..n).map(|_| AtomicBool::new(false)).collect()
    }

    #[test]
    fn read_pages_enter_at_the_midpoint_not_the_head() {
        let fl = flags(100);
        let mut lru = Lru::new(100, 37);
        for f in 0..100 {
            lru.push_young(f, &fl[..]);
        }
        lru.check(&fl[..]);
        // Steady state of a full pool: evict the tail, insert the new page.
        for _ in 0..10 {
            let victim = lru.tail();
            lru.remove(victim, &fl[..]);
            lru.push_old(victim, &fl[..]);
            lru.check(&fl[..]);
            assert!(fl[victim as usize].load(Ordering::Relaxed));
            assert_ne!(lru.to_vec()[0], victim, "a read page went to the head");
        }
        // The young frames at the head (99 down to 45) never moved.
        assert_eq!(
            &lru.to_vec()[..55],
            &(45..100).rev().collect::<Vec<u32>>()[..]
        );
    }

    #[test]
    fn a_new_old_blocks_pct_moves_the_boundary_at_once() {
        let fl = flags(200);
        let mut lru = Lru::new(200, 37);
        for f in 0..200 {
            lru.push_young(f, &fl[..]);
        }
        for pct in [90, 5, 50] {
            lru.set_old_pct(pct, &fl[..]);
            lru.check(&fl[..]);
            assert!(lru.old_len().abs_diff(200 * pct as usize / 100) <= tolerance(200));
        }
    }

    #[test]
    fn make_young_moves_to_the_head() {
        let fl = flags(10);
        let mut lru = Lru::new(10, 37);
        for f in 0..10 {
            lru.push_old(f, &fl[..]);
        }
        lru.make_young(0, &fl[..]);
        assert_eq!(lru.to_vec()[0], 0);
        assert!(!fl[0].load(Ordering::Relaxed));
        lru.check(&fl[..]);
    }

    #[test]
    fn invariants_hold_under_random_operations() {
        let n = 64;
        let fl = flags(n);
        let mut lru = Lru::new(n, 37);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let f = rng.gen_range(0..n as u32);
            if lru.contains(f) {
                if rng.gen_bool(0.5) {
                    lru.remove(f, &fl[..]);
                } else {
                    lru.make_young(f, &fl[..]);
                }
            } else if rng.gen_bool(0.7) {
                lru.push_old(f, &fl[..]);
            } else {
                lru.push_young(f, &fl[..]);
            }
            lru.check(&fl[..]);
        }
    }
}
