//! # Transaction ids, commit numbers and read views
//!
//! [`TrxSys`] hands out transaction ids (DB_TRX_ID) and commit numbers (trx_no, the order
//! in which update-undo logs enter the history list), keeps the set of active
//! transactions, and creates [`ReadView`]s: the snapshot a consistent read sees
//! (docs/transactions.md). Purge asks it for the oldest commit number an open view may
//! still need ([`TrxSys::purge_limit`]).
//!
//! ```text
//!   begin ──► assign(): id = next_id++, active += id      (persist high-water mark / 256)
//!   read  ──► view(): low_limit = next_id, up_limit = min(active), active list,
//!             low_limit_no = min(next_no, committing)
//!   commit ─► commit_no(): no = next_no++, committing += no
//!             … update undo enters the history list with `no` …
//!             finish(id, no): active -= id, committing -= no
//! ```
//!
//! Invariants (asserted in debug builds where cheap):
//! 1. Ids and commit numbers only grow; after a restart both start above every value any
//!    durable page holds (the undo headers and the persisted high-water mark: `UndoSys`).
//! 2. A transaction is in `active` from `assign` until `finish`; its changes are visible
//!    to a view iff it finished before the view was created (or it is the view's creator).
//! 3. A commit number is in `committing` from `commit_no` until `finish`, so a view created
//!    in between has `low_limit_no` at or below it: purge never removes history a view
//!    created before the commit was visible may need.
//! 4. `purge_limit()` is at most every open view's `low_limit_no`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::row::TrxId;

/// How often the id high-water mark is persisted: a restart skips at most this many ids.
pub const ID_PERSIST_EVERY: u64 = 256;

/// The SQL isolation levels, with InnoDB's behaviour (docs/transactions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// Reads see the newest version, committed or not (dirty reads).
    ReadUncommitted,
    /// Each statement reads a fresh snapshot.
    ReadCommitted,
    /// One snapshot, taken at the first consistent read; locking reads take next-key locks.
    RepeatableRead,
    /// Like REPEATABLE READ, but every plain read is a shared locking read.
    Serializable,
}

impl Isolation {
    /// Parses MySQL's spellings (`REPEATABLE-READ`, `repeatable read`, …).
    pub fn parse(s: &str) -> Option<Isolation> {
        let s = s.trim().to_ascii_uppercase().replace(['-', '_'], " ");
        Some(match s.as_str() {
            "READ UNCOMMITTED" => Isolation::ReadUncommitted,
            "READ COMMITTED" => Isolation::ReadCommitted,
            "REPEATABLE READ" => Isolation::RepeatableRead,
            "SERIALIZABLE" => Isolation::Serializable,
            _ => return None,
        })
    }
}

/// A consistent-read snapshot.
#[derive(Debug, Clone)]
pub struct ReadView {
    /// The transaction that created it: its own changes are visible.
    pub creator: TrxId,
    /// Ids at or above it started after the view: invisible.
    pub low_limit: TrxId,
    /// Ids below it had finished when the view was made: visible.
    pub up_limit: TrxId,
    /// Ids in [up_limit, low_limit) that were active: invisible. Sorted.
    pub active: Vec<TrxId>,
    /// Commit numbers below it belong to transactions this view sees: their history may
    /// be purged as far as this view is concerned.
    pub low_limit_no: u64,
}

impl ReadView {
    /// Whether changes by `trx` are visible in this snapshot.
    pub fn sees(&self, trx: TrxId) -> bool {
        if trx == self.creator || trx < self.up_limit {
            return true;
        }
        if trx >= self.low_limit {
            return false;
        }
        self.active.binary_search(&trx).is_err()
    }
}

/// A registered view: unregisters itself when dropped, so purge can go past it.
pub struct ViewHandle {
    view: Arc<ReadView>,
    key: (u64, u64),
    sys: Arc<TrxSysInner>,
}

impl std::ops::Deref for ViewHandle {
    type Target = ReadView;
    fn deref(&self) -> &ReadView {
        &self.view
    }
}

impl Drop for ViewHandle {
    fn drop(&mut self) {
        self.sys.state.lock().views.remove(&self.key);
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// Ids below it may be handed out without persisting first.
    persisted_below: u64,
    next_no: u64,
    active: BTreeSet<TrxId>,
    committing: BTreeSet<u64>,
    /// Open views by (low_limit_no, serial); the views themselves for `seen_by_all`.
    views: BTreeMap<(u64, u64), Arc<ReadView>>,
    view_serial: u64,
}

struct TrxSysInner {
    state: Mutex<State>,
    commits: AtomicU64,
    rollbacks: AtomicU64,
}

/// The transaction system. Cheap to clone (shared).
#[derive(Clone)]
pub struct TrxSys {
    inner: Arc<TrxSysInner>,
}

/// What [`TrxSys::assign`] needs persisted before the id may be used.
pub struct Assigned {
    pub id: TrxId,
    /// `Some(mark)`: persist `mark` as the new high-water mark before using the id.
    pub persist: Option<TrxId>,
}

impl TrxSys {
    /// Starts numbering above `max_id` and `max_no` (what recovery found on disk).
    pub fn new(max_id: TrxId, max_no: u64) -> TrxSys {
        let next_id = max_id.0 + 1;
        TrxSys {
            inner: Arc::new(TrxSysInner {
                state: Mutex::new(State {
                    next_id,
                    persisted_below: next_id,
                    next_no: max_no + 1,
                    ..State::default()
                }),
                commits: AtomicU64::new(0),
                rollbacks: AtomicU64::new(0),
            }),
        }
    }

    /// A new transaction id, registered as active. When the id reaches the persisted
    /// high-water mark, the caller must persist `persist` before writing the id anywhere
    /// (invariant 1): a restart then starts above every id ever used.
    pub fn assign(&self) -> Assigned {
        let mut st = self.inner.state.lock();
        let id = TrxId(st.next_id);
        st.next_id += 1;
        let persist = if id.0 >= st.persisted_below {
            st.persisted_below = id.0 + ID_PERSIST_EVERY;
            Some(TrxId(st.persisted_below))
        } else {
            None
        };
        st.active.insert(id);
        Assigned { id, persist }
    }

    /// Registers a transaction found active in the undo logs at startup (its rollback
    /// runs in the background; until it ends its changes stay invisible).
    pub fn register_recovered(&self, id: TrxId) {
        let mut st = self.inner.state.lock();
        st.next_id = st.next_id.max(id.0 + 1);
        st.persisted_below = st.persisted_below.max(st.next_id);
        st.active.insert(id);
    }

    /// The commit number for a committing transaction (invariant 3).
    pub fn commit_no(&self) -> u64 {
        let mut st = self.inner.state.lock();
        let no = st.next_no;
        st.next_no += 1;
        st.committing.insert(no);
        no
    }

    /// The transaction ended: committed with `no`, or rolled back (`no` as given by
    /// `commit_no` when its undo was moved to the history, or `None`).
    pub fn finish(&self, id: TrxId, committed: bool, no: Option<u64>) {
        let mut st = self.inner.state.lock();
        let was = st.active.remove(&id);
        debug_assert!(was, "finish of a transaction that is not active");
        if let Some(no) = no {
            st.committing.remove(&no);
        }
        drop(st);
        if committed {
            self.inner.commits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.inner.rollbacks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A snapshot for `creator` (TrxId(0): a read-only reader with no id), registered until
    /// the handle is dropped.
    pub fn view(&self, creator: TrxId) -> ViewHandle {
        let mut st = self.inner.state.lock();
        let low_limit = TrxId(st.next_id);
        let active: Vec<TrxId> = st.active.iter().copied().collect();
        let up_limit = active.first().copied().unwrap_or(low_limit);
        let low_limit_no = st.committing.first().copied().unwrap_or(st.next_no);
        st.view_serial += 1;
        let key = (low_limit_no, st.view_serial);
        let view = Arc::new(ReadView {
            creator,
            low_limit,
            up_limit,
            active,
            low_limit_no,
        });
        st.views.insert(key, Arc::clone(&view));
        ViewHandle {
            view,
            key,
            sys: self.inner.clone(),
        }
    }

    /// Commit numbers below this are seen by every open and future view: their history
    /// can be purged (invariant 4).
    pub fn purge_limit(&self) -> u64 {
        let st = self.inner.state.lock();
        let mut limit = st.committing.first().copied().unwrap_or(st.next_no);
        if let Some((&(no, _), _)) = st.views.first_key_value() {
            limit = limit.min(no);
        }
        limit
    }

    /// Whether every open read view, and every future one, sees the changes of `trx`: it
    /// has ended, and each open view sees it. A purged transaction is always seen by all
    /// (invariant 4); rollback asks it before marking a revived secondary entry again
    /// (docs/purge.md). It walks the open views: meant for rare calls.
    pub fn seen_by_all(&self, trx: TrxId) -> bool {
        let st = self.inner.state.lock();
        !st.active.contains(&trx)
            && trx < TrxId(st.next_id)
            && st.views.values().all(|v| v.sees(trx))
    }

    /// Whether `id` is still active (not committed or rolled back).
    pub fn is_active(&self, id: TrxId) -> bool {
        self.inner.state.lock().active.contains(&id)
    }

    /// The next id to be handed out (ids below it were assigned).
    pub fn next_id(&self) -> TrxId {
        TrxId(self.inner.state.lock().next_id)
    }

    pub fn active_count(&self) -> u64 {
        self.inner.state.lock().active.len() as u64
    }

    pub fn views_open(&self) -> u64 {
        self.inner.state.lock().views.len() as u64
    }

    pub fn commits(&self) -> u64 {
        self.inner.commits.load(Ordering::Relaxed)
    }

    pub fn rollbacks(&self) -> u64 {
        self.inner.rollbacks.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_sees_what_finished_before_it_and_its_own_changes() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let b = sys.assign().id;
        let no = sys.commit_no();
        sys.finish(a, true, Some(no));
        let v = sys.view(b);
        assert!(v.sees(a), "committed before the view");
        assert!(v.sees(b), "its own changes");
        let c = sys.assign().id;
        assert!(!v.sees(c), "started after the view");
        let d = sys.view(TrxId(0));
        assert!(!d.sees(b), "b is active for another view");
        assert!(!d.sees(c));
    }

    #[test]
    fn the_high_water_mark_is_persisted_ahead_of_use() {
        let sys = TrxSys::new(TrxId(10), 0);
        let first = sys.assign();
        assert_eq!(first.id, TrxId(11));
        assert_eq!(first.persist, Some(TrxId(11 + ID_PERSIST_EVERY)));
        for _ in 0..ID_PERSIST_EVERY - 1 {
            assert!(sys.assign().persist.is_none());
        }
        assert!(sys.assign().persist.is_some());
    }

    #[test]
    fn purge_stops_at_the_oldest_view_and_at_commits_in_flight() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        assert_eq!(sys.purge_limit(), no_a, "a commit in flight");
        let v = sys.view(TrxId(0));
        assert!(!v.sees(a), "a has not finished");
        sys.finish(a, true, Some(no_a));
        assert_eq!(sys.purge_limit(), no_a, "the view may need a's history");
        drop(v);
        assert_eq!(sys.purge_limit(), no_a + 1);
        assert_eq!(sys.views_open(), 0);
    }

    #[test]
    fn isolation_levels_parse_mysql_spellings() {
        assert_eq!(
            Isolation::parse("REPEATABLE-READ"),
            Some(Isolation::RepeatableRead)
        );
        assert_eq!(
            Isolation::parse("read committed"),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(Isolation::parse("snapshot"), None);
    }
}
