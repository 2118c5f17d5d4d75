//! # The log buffer: reserve, copy and publish without a global mutex (lesson 3)
//!
//! ```text
//!            written          filled                         reserved
//!   ring: ....|=== filled ===|[a: copied][b: copying][c: copied]|........
//!   links:                    a.len       0           c.len
//! ```
//!
//! Log space is *claimed* before LSNs are reserved: `claimed` is the LSN up to which log is
//! spoken for, `reserved` plus what open reservations may still append (`writer`, invariant
//! 8). A claim is one compare-and-swap on `claimed`, bounded by the space the checkpoint
//! leaves; so reserving needs no bound, and a reserved range never waits for a checkpoint.
//! An appender reserves its LSN range with one fetch-add on `reserved`, copies its frame
//! into the ring at `lsn mod size` with no lock held, then *publishes* by storing the
//! frame length in `links[start mod LINKS]`. The tracker ([`LogBuffer::advance`]) turns those
//! out-of-order publications into `filled`, the LSN up to which the ring is contiguously
//! complete, consuming (zeroing) each slot as it passes it. This is MySQL 8's
//! `recent_written` link buffer; InnoDB before it copied under `log_sys.mutex`, the hot spot
//! the seeds complain about.
//!
//! Invariants:
//! 1. `filled ≤ reserved`; both only grow.
//! 2. A slot is non-zero only while a published range starting at that slot is not yet
//!    consumed. Appenders publish only when `start < filled + LINKS` ([`Self::window_ok`]),
//!    so two live ranges never share a slot.
//! 3. Ring bytes `[filled, reserved)` are owned by their appenders (or by the writer, for a
//!    padding frame) until published; the
//!    writer reads only below `filled`. Reuse of ring bytes is gated by the caller
//!    (`writer`): an appender copies only when `end ≤ written + size`.
//! 4. `reserved ≤ claimed` at every instant: LSNs are reserved only inside a claim made
//!    before (a padding claims its bytes before it reserves them). `claimed` goes down
//!    only when a reservation gives back bytes it did not use.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

use parking_lot::Mutex;

/// Completion slots. The window of concurrently copying appenders spans this many LSNs.
pub const LINKS: u64 = 1 << 16;

pub(crate) struct LogBuffer {
    ring: Box<[UnsafeCell<u8>]>,
    size: u64,
    links: Box<[AtomicU32]>,
    /// Log spoken for: `reserved` plus what open reservations may still append (invariant 4).
    claimed: AtomicU64,
    reserved: AtomicU64,
    filled: AtomicU64,
    /// Serializes the tracker; ordinary appenders never take it.
    advance: Mutex<()>,
}

// SAFETY: the ring's bytes are shared by disjoint ranges (invariant 3): an appender writes
// only its reserved range, which nobody else reads or writes until it is published (a SeqCst
// store that the tracker reads before the writer touches those bytes).
unsafe impl Sync for LogBuffer {}
unsafe impl Send for LogBuffer {}

impl std::fmt::Debug for LogBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogBuffer")
            .field("size", &self.size)
            .field("claimed", &self.claimed())
            .field("reserved", &self.reserved())
            .field("filled", &self.filled())
            .finish()
    }
}

impl LogBuffer {
    pub fn new(size: u64, start: u64) -> LogBuffer {
        assert!(size.is_power_of_two());
        LogBuffer {
            ring: (0..size).map(|_| UnsafeCell::new(0)).collect(),
            size,
            links: (0..LINKS).map(|_| AtomicU32::new(0)).collect(),
            claimed: AtomicU64::new(start),
            reserved: AtomicU64::new(start),
            filled: AtomicU64::new(start),
            advance: Mutex::new(()),
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }
    pub fn reserved(&self) -> u64 {
        self.reserved.load(SeqCst)
    }
    pub fn filled(&self) -> u64 {
        self.filled.load(SeqCst)
    }

    pub fn claimed(&self) -> u64 {
        self.claimed.load(SeqCst)
    }

    /// Claims `len` bytes of log if `claimed` stays at or below `limit`: the one shared
    /// atomic a reservation costs. `false` means the log is full; the caller waits (holding
    /// no latch) and tries again.
    pub fn try_claim(&self, len: u64, limit: u64) -> bool {
        let mut cur = self.claimed.load(SeqCst);
        loop {
            if cur + len > limit {
                return false;
            }
            match self
                .claimed
                .compare_exchange_weak(cur, cur + len, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Gives back `len` claimed bytes that no frame will use (invariant 4: they are above
    /// `reserved`).
    pub fn unclaim(&self, len: u64) {
        let before = self.claimed.fetch_sub(len, SeqCst);
        debug_assert!(before >= len, "claimed underflow");
    }

    /// Reserves `len` bytes of LSN space. The caller has claimed them (invariant 4), which
    /// is what keeps them ahead of the checkpoint; hence no bound here.
    pub fn reserve(&self, len: u64) -> u64 {
        debug_assert!(len > 0 && len <= u64::from(u32::MAX));
        self.reserved.fetch_add(len, SeqCst)
    }

    /// Claims and reserves `len` bytes at once (tests of the tracker).
    #[cfg(test)]
    pub fn claim_and_reserve(&self, len: u64) -> u64 {
        self.claimed.fetch_add(len, SeqCst);
        self.reserve(len)
    }

    /// Claims and reserves the padding that makes `reserved` a multiple of `block` (the
    /// writer, before an O_DIRECT sync): returns its start and length, which is 0 if
    /// `reserved` already is one. The claim has no bound: every reservation carries an
    /// allowance for one padding, and the limit keeps [`super::writer::SLACK`] free, so the
    /// padding never waits (`writer`, invariant 8).
    pub fn reserve_padding(&self, block: u64) -> (u64, u64) {
        let mut cur = self.reserved.load(SeqCst);
        loop {
            let len = super::format::padding_len(cur, block);
            if len == 0 {
                return (cur, 0);
            }
            // Claim first (invariant 4); give it back if another reservation moved first.
            self.claimed.fetch_add(len, SeqCst);
            match self
                .reserved
                .compare_exchange_weak(cur, cur + len, SeqCst, SeqCst)
            {
                Ok(_) => return (cur, len),
                Err(now) => {
                    self.unclaim(len);
                    cur = now;
                }
            }
        }
    }

    /// Whether a range starting at `start` may publish (invariant 2).
    pub fn window_ok(&self, start: u64) -> bool {
        start < self.filled() + LINKS
    }

    /// Whether the range at `filled` has been published but not consumed yet: used by a
    /// waiter to decide not to sleep.
    pub fn next_published(&self) -> bool {
        self.links[(self.filled() % LINKS) as usize].load(SeqCst) != 0
    }

    /// Copies `bytes` to the ring position of `lsn`, wrapping at the end of the ring.
    ///
    /// The caller must own `[lsn, lsn + bytes.len())` (reserved, not yet published) and have
    /// waited until that range is free in the ring.
    pub fn copy_in(&self, lsn: u64, bytes: &[u8]) {
        let pos = (lsn % self.size) as usize;
        let first = bytes.len().min(self.size as usize - pos);
        let base = UnsafeCell::raw_get(self.ring.as_ptr());
        // SAFETY: both pieces are inside the ring; the range is exclusively this appender's
        // (invariant 3), so no other reference reads or writes it concurrently.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(pos), first);
            std::ptr::copy_nonoverlapping(bytes.as_ptr().add(first), base, bytes.len() - first);
        }
    }

    /// Copies ring bytes at `[lsn, lsn + out.len())` out; the range must be below `filled`
    /// and not yet released for reuse (the writer's range).
    pub fn copy_out(&self, lsn: u64, out: &mut [u8]) {
        debug_assert!(lsn + out.len() as u64 <= self.filled());
        let pos = (lsn % self.size) as usize;
        let first = out.len().min(self.size as usize - pos);
        let base = UnsafeCell::raw_get(self.ring.as_ptr());
        // SAFETY: the bytes are published (below filled) and not reusable until `written`
        // passes them, which only the caller (the writer) does after this copy.
        unsafe {
            std::ptr::copy_nonoverlapping(base.add(pos), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(base, out.as_mut_ptr().add(first), out.len() - first);
        }
    }

    /// Marks `[start, start + len)` as copied.
    pub fn publish(&self, start: u64, len: u64) {
        debug_assert!(self.window_ok(start));
        let slot = &self.links[(start % LINKS) as usize];
        debug_assert_eq!(slot.load(SeqCst), 0, "invariant 2: slot {start} in use");
        slot.store(len as u32, SeqCst);
    }

    /// Moves `filled` over every contiguous published range and returns it.
    pub fn advance(&self) -> u64 {
        let _g = self.advance.lock();
        let mut filled = self.filled.load(SeqCst);
        loop {
            let len = self.links[(filled % LINKS) as usize].swap(0, SeqCst);
            if len == 0 {
                break;
            }
            filled += u64::from(len);
        }
        assert!(filled <= self.reserved(), "invariant 1: filled ≤ reserved");
        self.filled.store(filled, SeqCst);
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_publication_advances_only_contiguously() {
        let b = LogBuffer::new(1 << 16, 100);
        let a = b.claim_and_reserve(10);
        let c = b.claim_and_reserve(20);
        let d = b.claim_and_reserve(5);
        b.copy_in(c, &[2; 20]);
        b.publish(c, 20);
        b.copy_in(d, &[3; 5]);
        b.publish(d, 5);
        assert_eq!(b.advance(), 100, "a is not published yet");
        b.copy_in(a, &[1; 10]);
        b.publish(a, 10);
        assert_eq!(b.advance(), 135);
        let mut out = [0u8; 35];
        b.copy_out(100, &mut out);
        assert_eq!(&out[..10], &[1; 10]);
        assert_eq!(&out[30..], &[3; 5]);
    }

    #[test]
    fn bounded_claims_and_padding_reservations() {
        let b = LogBuffer::new(1 << 16, 1000);
        assert!(b.try_claim(100, 1100));
        assert!(!b.try_claim(1, 1100), "the limit is exclusive of more");
        assert_eq!(b.reserve(60), 1000);
        b.unclaim(40);
        assert_eq!(b.claimed(), 1060);
        assert_eq!(b.reserve_padding(512), (1060, 476));
        assert_eq!(b.reserve_padding(512), (1536, 0));
        assert_eq!(b.reserved(), 1536);
        assert_eq!(b.claimed(), 1536, "a padding claims what it reserves");
    }

    #[test]
    fn copies_wrap_around_the_ring() {
        let size = 1 << 16;
        let b = LogBuffer::new(size, size - 3);
        let s = b.claim_and_reserve(8);
        b.copy_in(s, &[1, 2, 3, 4, 5, 6, 7, 8]);
        b.publish(s, 8);
        assert_eq!(b.advance(), size + 5);
        let mut out = [0u8; 8];
        b.copy_out(s, &mut out);
        assert_eq!(out, [1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
