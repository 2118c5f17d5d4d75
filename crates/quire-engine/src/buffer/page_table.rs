//! # The page table: PageId → frame, sharded, with a lock-free hit path
//!
//! Each shard has two views of its part of the mapping, both changed only under the shard's
//! write lock (and the pool mutex):
//! - `map`, a HashMap behind a parking_lot RwLock: the authoritative mapping, used by
//!   misses, by the flusher (`pin_if`), by `contains`, and by hits that lost a race;
//! - the *index*, a small open-addressing table of atomics (key → frame) that a hit reads
//!   without taking any lock. It is only a hint: the frame it names is validated against the
//!   frame itself, and an entry it lacks costs the locked path, never a wrong answer.
//!
//! A hit therefore writes no line that threads hitting other pages also write: the shard
//! lock word is not touched, and the only writes are to the frame (pin, hit count, latch).
//! InnoDB gets the same effect from its page-hash latches plus `buf_fix_count` validation.
//!
//! ```text
//!   hit (no lock)                            unmap (evict / discard; shard write lock held)
//!   idx = index[id]                          pin: CAS 0 → UNMAPPING      (else: in use, keep)
//!   prev = pin.fetch_add(1)      Acquire     page = NO_PAGE; remove from map and index
//!   prev & UNMAPPING == 0 and                pin.fetch_sub(UNMAPPING)    Release
//!     frame.page == id ?         Acquire
//!   yes: hit.  no: unpin, take the locked path
//! ```
//! The decision is made on one word, `pin`, so its modification order settles every race: a
//! hit's increment comes before the unmapper's CAS (which then fails), or between the CAS and
//! the clearing (the hit sees the bit), or after the clearing (the hit's Acquire reads from
//! the Release clearing, so it sees `page == NO_PAGE` or a newer mapping). This replaces
//! Dekker's two-variable handshake (unmapper writes `page` then reads `pin`, reader the
//! reverse, both SeqCst), which would have to write the sentinel into `page` before knowing
//! whether someone holds the page, and so show holders a `page` that is briefly wrong.
//!
//! Invariants:
//! 1. A frame is mapped by at most one PageId, and while it is mapped its `page` field equals
//!    that PageId. `page` is set before the mapping is inserted and cleared before it is
//!    removed, under the pool mutex and this shard's write lock, and only when the frame has
//!    no holding pin (it is FREE, or its pin word was claimed, invariant 3). The one exception
//!    is a failed read ([`ShardWrite::remove_orphan`]): its pinned waiters find ORPHAN under
//!    the latch and let go without using `page`. Hence at most one frame has `page == id`, and
//!    a holder's `page` does not change under it.
//! 2. A *holding* pin (one that may latch the frame) is taken either under the shard lock,
//!    from the map (the locked path of [`PageTable::pin`], and [`PageTable::pin_if`]), or
//!    optimistically without a lock: `pin.fetch_add(1)` whose previous value lacks
//!    [`UNMAPPING`], followed by a read of `page` equal to the PageId asked for. An optimistic
//!    pin that fails either check is *transient*: it is given back at once and is never used
//!    to latch or read the frame.
//! 3. A mapped frame is unmapped by eviction or discard only under the shard write lock, and
//!    only after `pin.compare_exchange(0, UNMAPPING)` succeeded; `page` is cleared and the
//!    entry removed before the bit is cleared with Release ([`ShardWrite::try_unmap`]). With
//!    2, an unmapped frame has no holding pin and can get none for its old page: "unmapped
//!    with pin 0" still means unreachable (pool invariant 4). `UNMAPPING` is never seen
//!    outside a shard write lock section, so under the pool mutex or a shard lock `pin`
//!    is a plain count.
//! 4. The index holds only entries that are also in the map (outside write-locked sections),
//!    at most half of each shard's slots (so every probe ends at an empty slot), and, by
//!    backward-shift deletion, no empty slot between an entry's home slot and the entry. It
//!    may lack map entries (when a shard's half is full): those pages are hit on the locked
//!    path. Readers may see it mid-change (a torn or moved entry): invariant 2's check makes
//!    that harmless.
//! 5. Any frame — FREE, ORPHAN, or holding another page — may carry transient pins (2). So a
//!    free frame's pin count need not be zero, and several threads may each see their unpin
//!    take an ORPHAN's count to zero: whether to free it is decided under the pool mutex
//!    (`BufferPool::unpin`).
//! 6. Hits are counted on the frame that was hit (`Frame::hits`, on the line the pin has just
//!    written), never on a shared line; [`PageTable::hits`] sums them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crossbeam::utils::CachePadded;
use parking_lot::{RwLock, RwLockWriteGuard};

use super::frame::{Frame, NO_PAGE};
use crate::page::PageId;

/// Set in a frame's `pin` word while an unmapper that found the count at zero removes the
/// frame's mapping (invariant 3). Pin counts stay far below it.
pub(crate) const UNMAPPING: u32 = 1 << 31;

/// The key of an empty index slot. No page has this id (its page number is FIL_NULL).
const EMPTY: u64 = NO_PAGE;

/// Multiplicative hashing of the dense 64-bit PageId: SipHash is ~4× slower and the keys are
/// not attacker-chosen.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn finish(&self) -> u64 {
        // Fold the high bits down: hashbrown picks buckets from the low bits.
        self.0 ^ (self.0 >> 29)
    }
}

pub(crate) type IdMap = HashMap<u64, u32, BuildHasherDefault<IdHasher>>;

/// What a shard's lock protects.
#[derive(Default)]
pub(crate) struct Mapped {
    map: IdMap,
    /// Entries in this shard's index (invariant 4: at most half its slots).
    indexed: usize,
}

pub(crate) struct PageTable {
    shards: Box<[CachePadded<RwLock<Mapped>>]>,
    mask: u64,
    /// The index (invariant 4): shard `s` owns slots `s << slot_bits ..(s + 1) << slot_bits`
    /// of both arrays. Separate arrays, so a probe scans packed keys.
    keys: Box<[AtomicU64]>,
    slots: Box<[AtomicU32]>,
    slot_bits: u32,
}

impl PageTable {
    /// At least 64 shards, more for large pools (one per 256 frames, up to 4096). Each
    /// shard's index has room for four times its fair share of frames (at least 16 slots), so
    /// that uneven shards still fit their half.
    pub(crate) fn new(frames: usize) -> PageTable {
        let n = (frames / 256).clamp(64, 4096).next_power_of_two();
        let per_shard = (4 * frames).div_ceil(n).max(16).next_power_of_two();
        let slot_bits = per_shard.trailing_zeros();
        PageTable {
            shards: (0..n)
                .map(|_| CachePadded::new(RwLock::new(Mapped::default())))
                .collect(),
            mask: n as u64 - 1,
            keys: (0..n * per_shard).map(|_| AtomicU64::new(EMPTY)).collect(),
            slots: (0..n * per_shard).map(|_| AtomicU32::new(0)).collect(),
            slot_bits,
        }
    }

    fn shard_of(&self, id: PageId) -> usize {
        // A different mix than the map's hasher, so that one shard's keys still spread over
        // its buckets. Adjacent pages land in different shards.
        let h = id.as_u64().wrapping_mul(0xff51_afd7_ed55_8ccd);
        ((h >> 40) & self.mask) as usize
    }

    /// Takes `id`'s shard write lock: the only way to change the mapping.
    pub(crate) fn write(&self, id: PageId) -> ShardWrite<'_> {
        let shard = self.shard_of(id);
        ShardWrite {
            table: self,
            shard,
            m: self.shards[shard].write(),
        }
    }

    /// The page hit: finds `id` and takes a holding pin on its frame (invariant 2), without
    /// any lock unless the lock-free attempt loses a race. Counts a hit (invariant 6).
    /// `unpin` gives back a transient pin (it may free an ORPHAN, invariant 5).
    pub(crate) fn pin(&self, id: PageId, frames: &[Frame], unpin: impl FnOnce(u32)) -> Option<u32> {
        let key = id.as_u64();
        let shard = self.shard_of(id);
        if let Some((idx, f)) = self.find(shard, key, frames) {
            // Cheap filter on the line we are about to write anyway: a stale index entry
            // rarely costs a transient pin.
            if f.page.load(Ordering::Relaxed) == key {
                let prev = f.pin.fetch_add(1, Ordering::Acquire);
                debug_assert!(prev & !UNMAPPING < UNMAPPING - 1, "pin count overflow");
                // Invariant 2; the Acquire pairs with an unmapper's Release (invariant 3).
                if prev & UNMAPPING == 0 && f.page.load(Ordering::Acquire) == key {
                    f.hits.fetch_add(1, Ordering::Relaxed);
                    return Some(idx);
                }
                unpin(idx);
            }
        }
        // Not indexed, a miss, or a race with an unmapper: ask the map under the lock.
        let m = self.shards[shard].read();
        let idx = *m.map.get(&key)?;
        let f = &frames[idx as usize];
        f.pin.fetch_add(1, Ordering::Acquire);
        f.hits.fetch_add(1, Ordering::Relaxed);
        drop(m);
        Some(idx)
    }

    /// The frame the index names for `key`, if any: a hint (invariant 4).
    fn find<'f>(&self, shard: usize, key: u64, frames: &'f [Frame]) -> Option<(u32, &'f Frame)> {
        let cap = 1usize << self.slot_bits;
        let base = shard << self.slot_bits;
        let mut i = self.home(key);
        // Bounded even if a writer is moving entries under us; invariant 4 ends it sooner.
        for _ in 0..cap {
            let k = self.keys[base + i].load(Ordering::Acquire);
            if k == key {
                let idx = self.slots[base + i].load(Ordering::Relaxed);
                return frames.get(idx as usize).map(|f| (idx, f));
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & (cap - 1);
        }
        None
    }

    /// The home slot of `key` within its shard's part of the index.
    fn home(&self, key: u64) -> usize {
        // Top bits of a Fibonacci hash. The shard was picked with another multiplier, so the
        // keys of one shard still spread over its slots.
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.slot_bits)) as usize
    }

    /// Pins frame `idx` only if it still holds `id` (flushing: the frame may have been
    /// evicted and reused since `idx` was noted). Not counted as a hit.
    pub(crate) fn pin_if(&self, id: PageId, idx: u32, frames: &[Frame]) -> bool {
        let m = self.shards[self.shard_of(id)].read();
        if m.map.get(&id.as_u64()) != Some(&idx) {
            return false;
        }
        frames[idx as usize].pin.fetch_add(1, Ordering::Acquire);
        true
    }

    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.shards[self.shard_of(id)]
            .read()
            .map
            .contains_key(&id.as_u64())
    }

    /// The frame `id` is mapped to, from the map (tests and checks).
    pub(crate) fn get(&self, id: PageId) -> Option<u32> {
        self.shards[self.shard_of(id)]
            .read()
            .map
            .get(&id.as_u64())
            .copied()
    }

    /// Hits so far, all frames (invariant 6). O(frames): for stats.
    pub(crate) fn hits(&self, frames: &[Frame]) -> u64 {
        frames.iter().map(|f| f.hits.load(Ordering::Relaxed)).sum()
    }

    /// Asserts invariant 4 on a quiescent table: every index entry is in the map, each
    /// shard's count is right, and every entry is reachable from its home slot.
    pub(crate) fn check(&self) {
        let cap = 1usize << self.slot_bits;
        for (s, shard) in self.shards.iter().enumerate() {
            let m = shard.read();
            let base = s << self.slot_bits;
            let mut n = 0;
            for i in 0..cap {
                let k = self.keys[base + i].load(Ordering::Relaxed);
                if k == EMPTY {
                    continue;
                }
                n += 1;
                let idx = self.slots[base + i].load(Ordering::Relaxed);
                assert_eq!(
                    m.map.get(&k),
                    Some(&idx),
                    "page-table inv 4: index entry {} → {idx} not in the map",
                    PageId::from_u64(k)
                );
                let mut j = self.home(k);
                while j != i {
                    assert_ne!(
                        self.keys[base + j].load(Ordering::Relaxed),
                        EMPTY,
                        "page-table inv 4: hole before {}",
                        PageId::from_u64(k)
                    );
                    j = (j + 1) & (cap - 1);
                }
            }
            assert_eq!(n, m.indexed, "page-table inv 4: shard {s} count");
            assert!(2 * n <= cap, "page-table inv 4: shard {s} over half full");
        }
    }
}

/// A shard's write lock: the mapping of the pages in this shard changes only through it.
pub(crate) struct ShardWrite<'a> {
    table: &'a PageTable,
    shard: usize,
    m: RwLockWriteGuard<'a, Mapped>,
}

impl ShardWrite<'_> {
    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.m.map.contains_key(&id.as_u64())
    }

    /// Maps `id` to frame `idx`, which the caller (holding the pool mutex) took FREE and
    /// holds X-latched. Sets `page` first (invariant 1).
    pub(crate) fn insert(&mut self, id: PageId, idx: u32, f: &Frame) {
        let key = id.as_u64();
        debug_assert_ne!(key, EMPTY, "page id {id} is the empty key");
        debug_assert_eq!(
            f.page.load(Ordering::Relaxed),
            NO_PAGE,
            "frame {idx} not free"
        );
        f.page.store(key, Ordering::Release);
        let old = self.m.map.insert(key, idx);
        debug_assert_eq!(old, None, "page {id} mapped twice");
        self.index_insert(key, idx);
    }

    /// Unmaps `id` from frame `idx` if nobody holds a pin and, once that is known,
    /// `may_go()` agrees (invariant 3). Returns whether it did. The claim's Acquire pairs with
    /// the last holder's unpin, so `may_go` sees everything the holders did (a dirtied page).
    pub(crate) fn try_unmap(
        &mut self,
        id: PageId,
        idx: u32,
        f: &Frame,
        may_go: impl FnOnce() -> bool,
    ) -> bool {
        let key = id.as_u64();
        debug_assert_eq!(self.m.map.get(&key), Some(&idx));
        if f.pin
            .compare_exchange(0, UNMAPPING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if !may_go() {
            f.pin.fetch_sub(UNMAPPING, Ordering::Release);
            return false;
        }
        debug_assert_eq!(f.page.load(Ordering::Relaxed), key, "page-table inv 1");
        f.page.store(NO_PAGE, Ordering::Relaxed);
        self.m.map.remove(&key);
        self.index_remove(key);
        // Release: a hit whose pin comes after this sees `page == NO_PAGE` (invariant 3).
        let prev = f.pin.fetch_sub(UNMAPPING, Ordering::Release);
        debug_assert!(prev & UNMAPPING != 0);
        true
    }

    /// Unmaps the frame of a failed read, which its reader and waiters still pin: they see
    /// ORPHAN under the latch (invariant 1's exception; pool invariant 6).
    pub(crate) fn remove_orphan(&mut self, id: PageId, idx: u32, f: &Frame) {
        let key = id.as_u64();
        f.page.store(NO_PAGE, Ordering::Release);
        let removed = self.m.map.remove(&key);
        debug_assert_eq!(removed, Some(idx));
        self.index_remove(key);
    }

    fn index_insert(&mut self, key: u64, idx: u32) {
        let t = self.table;
        let cap = 1usize << t.slot_bits;
        if 2 * (self.m.indexed + 1) > cap {
            // Invariant 4: this page will be hit on the locked path.
            return;
        }
        let base = self.shard << t.slot_bits;
        let mut i = t.home(key);
        // At most half the slots are taken, so an empty one is found.
        for _ in 0..cap {
            if t.keys[base + i].load(Ordering::Relaxed) == EMPTY {
                t.slots[base + i].store(idx, Ordering::Relaxed);
                // Release: a reader that finds the key finds the frame with it.
                t.keys[base + i].store(key, Ordering::Release);
                self.m.indexed += 1;
                return;
            }
            i = (i + 1) & (cap - 1);
        }
        debug_assert!(false, "page-table inv 4: no empty slot");
    }

    /// Removes `key` if indexed, shifting later entries of its run back into the hole
    /// (invariant 4: no tombstones, no holes). Concurrent readers may miss an entry while it
    /// moves; they fall back to the map.
    fn index_remove(&mut self, key: u64) {
        let t = self.table;
        let cap = 1usize << t.slot_bits;
        let base = self.shard << t.slot_bits;
        let mut hole = t.home(key);
        let mut found = false;
        for _ in 0..cap {
            let k = t.keys[base + hole].load(Ordering::Relaxed);
            if k == key {
                found = true;
                break;
            }
            if k == EMPTY {
                break;
            }
            hole = (hole + 1) & (cap - 1);
        }
        if !found {
            return; // was never indexed (invariant 4)
        }
        let mut j = hole;
        for _ in 0..cap {
            j = (j + 1) & (cap - 1);
            let k = t.keys[base + j].load(Ordering::Relaxed);
            if k == EMPTY {
                break;
            }
            // The entry at j may move back into the hole unless its home lies cyclically
            // in (hole, j]: then the hole is before its home and a probe would not find it.
            let h = t.home(k);
            if j.wrapping_sub(h) & (cap - 1) >= j.wrapping_sub(hole) & (cap - 1) {
                t.slots[base + hole]
                    .store(t.slots[base + j].load(Ordering::Relaxed), Ordering::Relaxed);
                t.keys[base + hole].store(k, Ordering::Release);
                hole = j;
            }
        }
        t.keys[base + hole].store(EMPTY, Ordering::Release);
        self.m.indexed -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{PageNo, SpaceId};
    use rand::{Rng, SeedableRng};

    fn frames(n: usize) -> Vec<Frame> {
        (0..n).map(|_| Frame::new()).collect()
    }

    /// The index agrees with the map through random inserts and removals, including shards
    /// that overflow their half (those pages are still found, through the map).
    #[test]
    fn index_follows_the_map_under_random_changes() {
        let n = 512;
        let fr = frames(n);
        let pt = PageTable::new(64); // 64 shards of 16 slots: many overflow
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut held: Vec<Option<PageId>> = vec![None; n];
        for _ in 0..20_000 {
            let idx = rng.gen_range(0..n as u32);
            let f = &fr[idx as usize];
            match held[idx as usize] {
                Some(id) => {
                    let mut w = pt.write(id);
                    assert!(w.try_unmap(id, idx, f, || true));
                    held[idx as usize] = None;
                }
                None => {
                    let id =
                        PageId::new(SpaceId(rng.gen_range(0..3)), PageNo(rng.gen_range(0..4000)));
                    let mut w = pt.write(id);
                    if !w.contains(id) {
                        w.insert(id, idx, f);
                        held[idx as usize] = Some(id);
                    }
                }
            }
            if rng.gen_range(0..500) == 0 {
                pt.check();
            }
        }
        pt.check();
        for (idx, id) in held.iter().enumerate() {
            if let Some(id) = *id {
                let got = pt.pin(id, &fr, |_| panic!("no race here"));
                assert_eq!(got, Some(idx as u32), "{id}");
                fr[idx].pin.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// A pin on a frame being unmapped fails the claim; a hit during the claim backs off.
    #[test]
    fn unmapping_and_hits_exclude_each_other() {
        let fr = frames(2);
        let pt = PageTable::new(8);
        let id = PageId::new(SpaceId(1), PageNo(7));
        pt.write(id).insert(id, 1, &fr[1]);
        let hit = pt.pin(id, &fr, |_| panic!("no race here"));
        assert_eq!(hit, Some(1));
        assert!(
            !pt.write(id).try_unmap(id, 1, &fr[1], || true),
            "pinned frame unmapped"
        );
        fr[1].pin.fetch_sub(1, Ordering::Release);
        // Claimed but not let go (`may_go` refuses): the word is restored.
        assert!(!pt.write(id).try_unmap(id, 1, &fr[1], || false));
        assert_eq!(fr[1].pin.load(Ordering::Relaxed), 0);
        assert!(pt.write(id).try_unmap(id, 1, &fr[1], || true));
        let mut unpinned = None;
        assert_eq!(pt.pin(id, &fr, |i| unpinned = Some(i)), None);
        assert_eq!(
            unpinned, None,
            "the stale entry was removed: no transient pin"
        );
        assert_eq!(fr[1].page.load(Ordering::Relaxed), NO_PAGE);
        assert_eq!(pt.hits(&fr), 1);
    }
}
