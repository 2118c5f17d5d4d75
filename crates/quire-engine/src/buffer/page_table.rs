//! # The page table: PageId → frame, sharded
//!
//! A page hit takes one shard's read lock, pins the frame, and lets go: no global mutex on
//! the hot path. Eviction takes the shard's write lock and checks that the pin count is zero;
//! since pins are taken only under the shard lock, that check cannot race with a new pin.
//!
//! Invariants:
//! 1. A frame is mapped by at most one PageId, and that PageId equals the frame's `page`
//!    field (both change together, under the pool mutex and this shard's write lock).
//! 2. Pins on a mapped frame are taken only while holding its shard lock (read or write).
//!    Hence "unmapped under the write lock with pin == 0" means nobody can reach the frame.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam::utils::CachePadded;
use parking_lot::RwLock;

use super::frame::Frame;
use crate::page::PageId;

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

#[derive(Default)]
pub(crate) struct Shard {
    pub(crate) map: RwLock<IdMap>,
    /// Page hits through this shard. Kept here, on the cache line the read lock already
    /// dirties, so counting hits adds no shared-line traffic.
    pub(crate) hits: AtomicU64,
}

pub(crate) struct PageTable {
    shards: Box<[CachePadded<Shard>]>,
    mask: u64,
}

impl PageTable {
    /// At least 64 shards, more for large pools (one per 256 frames, up to 4096).
    pub(crate) fn new(frames: usize) -> PageTable {
        let n = (frames / 256).clamp(64, 4096).next_power_of_two();
        PageTable {
            shards: (0..n).map(|_| CachePadded::new(Shard::default())).collect(),
            mask: n as u64 - 1,
        }
    }

    pub(crate) fn shard(&self, id: PageId) -> &Shard {
        // A different mix than the map's hasher, so that one shard's keys still spread over
        // its buckets. Adjacent pages land in different shards.
        let h = id.as_u64().wrapping_mul(0xff51_afd7_ed55_8ccd);
        &self.shards[((h >> 40) & self.mask) as usize]
    }

    /// The page hit: finds `id` and pins its frame (invariant 2). Counts a hit.
    pub(crate) fn pin(&self, id: PageId, frames: &[Frame]) -> Option<u32> {
        let shard = self.shard(id);
        let map = shard.map.read();
        let idx = *map.get(&id.as_u64())?;
        frames[idx as usize].pin.fetch_add(1, Ordering::Acquire);
        shard.hits.fetch_add(1, Ordering::Relaxed);
        drop(map);
        Some(idx)
    }

    /// Pins frame `idx` only if it still holds `id` (flushing: the frame may have been
    /// evicted and reused since `idx` was noted). Not counted as a hit.
    pub(crate) fn pin_if(&self, id: PageId, idx: u32, frames: &[Frame]) -> bool {
        let map = self.shard(id).map.read();
        if map.get(&id.as_u64()) != Some(&idx) {
            return false;
        }
        frames[idx as usize].pin.fetch_add(1, Ordering::Acquire);
        true
    }

    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.shard(id).map.read().contains_key(&id.as_u64())
    }

    pub(crate) fn hits(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.hits.load(Ordering::Relaxed))
            .sum()
    }
}
