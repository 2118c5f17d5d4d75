//! # The flush list: dirty frames ordered by oldest modification
//!
//! Invariants (the pool keeps the frame side of them; see `pool.rs`):
//! 1. A frame is on the flush list iff its `oldest_modification` is non-zero, and its key is
//!    `(oldest_modification, frame)`. Both change only under the flush-list mutex.
//! 2. `oldest_modification` is the start LSN of the first change to the page that is not yet
//!    on disk. The checkpoint may advance to [`FlushList::oldest`] and no further: redo from
//!    there rebuilds every change that is only in memory.
//! 3. Keys are unique: a frame is on the list at most once.
//!
//! A `BTreeMap` rather than InnoDB's append-only list: mtrs may commit (and dirty pages) in a
//! slightly different order than their LSNs, and an ordered map keeps `oldest` exact anyway.

use std::collections::BTreeMap;

use crate::page::{Lsn, PageId};

#[derive(Debug, Default)]
pub(crate) struct FlushList {
    map: BTreeMap<(Lsn, u32), PageId>,
}

impl FlushList {
    pub(crate) fn insert(&mut self, oldest: Lsn, frame: u32, id: PageId) {
        debug_assert_ne!(oldest, Lsn::ZERO, "inv 1: zero means clean");
        let prev = self.map.insert((oldest, frame), id);
        debug_assert!(
            prev.is_none(),
            "inv 3: frame {frame} twice on the flush list"
        );
    }

    pub(crate) fn remove(&mut self, oldest: Lsn, frame: u32) -> Option<PageId> {
        self.map.remove(&(oldest, frame))
    }

    /// Moves `frame` from key `from` to key `to`.
    pub(crate) fn rekey(&mut self, from: Lsn, to: Lsn, frame: u32) {
        let id = self.map.remove(&(from, frame));
        debug_assert!(id.is_some(), "inv 1: frame {frame} not at {from}");
        if let Some(id) = id {
            self.map.insert((to, frame), id);
        }
    }

    pub(crate) fn get(&self, oldest: Lsn, frame: u32) -> Option<PageId> {
        self.map.get(&(oldest, frame)).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// The smallest oldest_modification: how far a checkpoint may go (invariant 2).
    pub(crate) fn oldest(&self) -> Option<Lsn> {
        self.map.keys().next().map(|&(l, _)| l)
    }

    /// The largest oldest_modification: a bound for "everything dirty now".
    pub(crate) fn newest_oldest(&self) -> Option<Lsn> {
        self.map.keys().next_back().map(|&(l, _)| l)
    }

    /// Up to `max` frames, oldest first, whose oldest_modification is at most `up_to`.
    pub(crate) fn oldest_n(&self, max: usize, up_to: Option<Lsn>) -> Vec<(PageId, u32)> {
        let bound = up_to.unwrap_or(Lsn(u64::MAX));
        self.map
            .iter()
            .take_while(|((l, _), _)| *l <= bound)
            .take(max)
            .map(|(&(_, f), &id)| (id, f))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{PageNo, SpaceId};

    fn id(n: u32) -> PageId {
        PageId::new(SpaceId(1), PageNo(n))
    }

    #[test]
    fn frames_come_out_oldest_first_whatever_the_insertion_order() {
        let mut fl = FlushList::default();
        fl.insert(Lsn(30), 0, id(0));
        fl.insert(Lsn(10), 1, id(1));
        fl.insert(Lsn(20), 2, id(2));
        fl.insert(Lsn(10), 3, id(3));
        assert_eq!(fl.oldest(), Some(Lsn(10)));
        assert_eq!(fl.newest_oldest(), Some(Lsn(30)));
        let order: Vec<u32> = fl.oldest_n(10, None).iter().map(|&(_, f)| f).collect();
        assert_eq!(order, vec![1, 3, 2, 0]);
        let bounded: Vec<u32> = fl
            .oldest_n(10, Some(Lsn(20)))
            .iter()
            .map(|&(_, f)| f)
            .collect();
        assert_eq!(bounded, vec![1, 3, 2]);
        fl.rekey(Lsn(10), Lsn(25), 1);
        assert_eq!(fl.oldest_n(1, None), vec![(id(3), 3)]);
        assert_eq!(fl.remove(Lsn(10), 3), Some(id(3)));
        assert_eq!(fl.oldest(), Some(Lsn(20)));
        assert_eq!(fl.len(), 3);
    }
}
