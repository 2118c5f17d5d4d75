//! # Transaction ids, commit numbers and read views
//!
//! [`TrxSys`] hands out transaction ids (DB_TRX_ID) and commit numbers (trx_no, the order
//! in which update-undo logs enter the history list), keeps the set of active
//! transactions, and creates [`ReadView`]s: the snapshot a consistent read sees
//! (docs/transactions.md). Purge asks it for the oldest commit number an open view may
//! still need ([`TrxSys::purge_limit`]).
//!
//! ```text
//!   begin ──► assign(): id = next_id++, active += id
//!             cover(id): an id at or above the durable mark waits for (or persists) a
//!             mark above it before it is used                  (about once per 256 ids)
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
//!    An id is used (written anywhere) only after `cover` returned for it: a mark above it
//!    is then in the log, ahead of every mtr that writes the id. Not only the thread whose
//!    id reached the mark waits for the mark: every id at or above the last mark *in the
//!    log* does, so a thread that persists slowly cannot let another use an id the log
//!    does not cover yet (a crash would then restart numbering below ids that committed
//!    rows carry, once purge has removed their history, and hide those rows).
//! 2. A transaction is in `active` from `assign` until `finish`; its changes are visible
//!    to a view iff it finished before the view was created (or it is the view's creator).
//! 3. A commit number is in `committing` from `commit_no` until `finish`, so a view created
//!    in between has `low_limit_no` at or below it: purge never removes history a view
//!    created before the commit was visible may need.
//! 4. `purge_limit()` is at most every open view's `low_limit_no`.
//!
//! ## Read-only views without the mutex
//!
//! A reader with no id (an autocommit SELECT, a transaction that has only read: InnoDB's
//! read-only optimization) normally takes no mutex, neither for its view nor to give it
//! back (issue 15: oltp_read_only must not serialize on BEGIN). `version` counts the
//! changes of what a view is built from. The newest read-only view is cached with the
//! version it was built at (`cache`); while the version has not moved, it is the view the
//! reader would build, and readers share it. A reader registers the view it uses (purge
//! and `seen_by_all` must count it) in one of `VIEW_SLOTS` slots, by that version `w`:
//!
//! ```text
//!   free 0 ──CAS──► w|PENDING ──version still w? CAS──► w (in use) ──drop: store──► 0
//!                      │ no: store 0, mutex path
//!                      └─ seen_by_all: CAS ──► w|CANCELLED ── the reader's CAS fails: 0
//! ```
//!
//! The view a slot names stays in `State::published` (version → view). The mutex path
//! (a reader that found the cache stale, or no free slot, and every view with a creator)
//! builds under the mutex as before; a read-only one refreshes the cache.
//!
//! 5. `version` changes only under the mutex, with every change of `next_id`, `active`,
//!    `next_no` or `committing` (`bump`). So while it is still `w`, the view built at `w`
//!    is the view a reader would build now; and a reader that starts after `finish`
//!    returned loads a version past it (SeqCst) and misses any older cached view.
//! 6. The state's purge limit, `min(committing ∪ {next_no})`, never decreases: `commit_no`
//!    adds `next_no` (not below the minimum) and raises `next_no`; `finish` only removes.
//! 7. A reader uses a slot view only after re-checking: the slot holds `w|PENDING`, then
//!    the version, loaded again, is still `w` (all slot and version accesses are SeqCst).
//!    `purge_limit` reads the state under the mutex, then loads every slot. If its load
//!    missed the slot store, it precedes that store in the single SeqCst order, and the
//!    re-check follows the store and still read `w`: no bump past `w` came before the
//!    scan, so neither before the state was read (under the mutex, before the scan). That
//!    state was at version ≤ `w`, and by 6 its limit is ≤ the view's `low_limit_no`. If the
//!    load saw the slot, the view counts itself. Either way invariant 4 holds.
//! 8. `published` holds the view of every version a slot may validly name: a version
//!    leaves it (under the mutex) only when it is not the current one and no slot names
//!    it, and a slot stored after that scan fails its re-check (the argument of 7). So a
//!    slot whose version is missing from `published` is a registration that fails, and is
//!    ignored.
//! 9. A PENDING slot is a registration not decided yet. `purge_limit` counts it (the safe
//!    side for purge); `seen_by_all` must be exact for rollback (docs/purge.md) and
//!    cancels it: the reader's confirming CAS fails and it builds its view on the mutex
//!    path, after the check. A confirmed slot is a view in use.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use crossbeam::utils::CachePadded;
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

/// How many read-only views can be registered without the mutex at once; more fall back
/// to the mutex path. 1024 padded slots: 128 KiB, one load each per `purge_limit`.
pub const VIEW_SLOTS: usize = 1024;

/// A slot whose reader has not re-checked the version yet (invariant 9).
const SLOT_PENDING: u64 = 1 << 63;
/// A pending slot `seen_by_all` cancelled: its reader gives it back unused.
const SLOT_CANCELLED: u64 = 1 << 62;
/// The version a slot names (0: free). Versions start at 1 and never reach the flags.
const SLOT_VERSION: u64 = SLOT_CANCELLED - 1;

/// `published` is pruned when it grows past this (one scan of the slots).
const PUBLISHED_PRUNE_AT: usize = 64;

const _: () = assert!(VIEW_SLOTS.is_power_of_two() && VIEW_SLOTS >= 64);
const _: () = assert!(SLOT_VERSION & (SLOT_PENDING | SLOT_CANCELLED) == 0);

thread_local! {
    /// The slot this thread used last: it is usually free again, and no other thread's.
    static SLOT_HINT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Spreads the threads' first slots apart.
static NEXT_SLOT_HINT: AtomicUsize = AtomicUsize::new(0);

/// Debug builds: readers sleep between finding the cached view current and storing their
/// slot, so a test meets, often, the race the re-check closes (invariant 7).
#[cfg(debug_assertions)]
static PAUSE_BEFORE_SLOT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tests only: makes read-only readers pause where a commit and a purge may slip in
/// before their slot is stored (invariant 7). Does nothing in release builds.
#[doc(hidden)]
pub fn pause_before_slot_for_tests(on: bool) {
    #[cfg(debug_assertions)]
    PAUSE_BEFORE_SLOT.store(on, Ordering::Relaxed);
    #[cfg(not(debug_assertions))]
    let _ = on;
}

/// Tests only: makes the thread that must persist the next id high-water mark wait, before
/// it persists, while this is on (`PAUSED_BEFORE_MARK` tells the test it got there), so a
/// test can run other transactions meanwhile (invariant 1). Does nothing in release builds.
#[cfg(debug_assertions)]
static PAUSE_BEFORE_MARK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
#[cfg(debug_assertions)]
static PAUSED_BEFORE_MARK: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

#[doc(hidden)]
pub fn pause_before_persisting_the_id_mark_for_tests(on: bool) {
    #[cfg(debug_assertions)]
    {
        PAUSED_BEFORE_MARK.store(false, Ordering::SeqCst);
        PAUSE_BEFORE_MARK.store(on, Ordering::SeqCst);
    }
    #[cfg(not(debug_assertions))]
    let _ = on;
}

/// Tests only: whether a thread is waiting at the pause of
/// [`pause_before_persisting_the_id_mark_for_tests`].
#[doc(hidden)]
pub fn paused_before_persisting_the_id_mark() -> bool {
    #[cfg(debug_assertions)]
    return PAUSED_BEFORE_MARK.load(Ordering::SeqCst);
    #[cfg(not(debug_assertions))]
    false
}

fn pause_before_mark() {
    #[cfg(debug_assertions)]
    while PAUSE_BEFORE_MARK.load(Ordering::SeqCst) {
        PAUSED_BEFORE_MARK.store(true, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Where a view is registered.
#[derive(Debug)]
enum Registration {
    /// In `State::views` under this key (mutex to remove).
    Locked((u64, u64)),
    /// In this slot (a store to free).
    Slot(usize),
}

/// A registered view: unregisters itself when dropped, so purge can go past it.
pub struct ViewHandle {
    view: Arc<ReadView>,
    reg: Registration,
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
        match self.reg {
            Registration::Locked(key) => {
                self.sys.view_mutex_uses.fetch_add(1, Ordering::Relaxed);
                self.sys.state.lock().views.remove(&key);
            }
            // Release: the reads through this view happen before a purge that sees the
            // slot free (its scan loads are SeqCst, so acquire).
            Registration::Slot(i) => self.sys.slots[i].store(0, Ordering::Release),
        }
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    next_no: u64,
    active: BTreeSet<TrxId>,
    committing: BTreeSet<u64>,
    /// Views registered under the mutex, by (low_limit_no, serial); the views themselves
    /// for `seen_by_all`.
    views: BTreeMap<(u64, u64), Arc<ReadView>>,
    view_serial: u64,
    /// Read-only views slots may name, by the version they were built at (invariant 8).
    published: BTreeMap<u64, Arc<ReadView>>,
}

impl State {
    /// Commit numbers below it are seen by every view built from this state (invariant 6).
    fn limit_no(&self) -> u64 {
        self.committing.first().copied().unwrap_or(self.next_no)
    }

    fn build(&self, creator: TrxId) -> ReadView {
        let low_limit = TrxId(self.next_id);
        let active: Vec<TrxId> = self.active.iter().copied().collect();
        let up_limit = active.first().copied().unwrap_or(low_limit);
        ReadView {
            creator,
            low_limit,
            up_limit,
            active,
            low_limit_no: self.limit_no(),
        }
    }
}

/// The newest read-only view and the version it was built at.
struct Cached {
    version: u64,
    view: Arc<ReadView>,
}

struct TrxSysInner {
    state: Mutex<State>,
    /// Ids below it are covered by a high-water mark in the log (invariant 1).
    durable_mark: AtomicU64,
    /// Held while a mark is persisted, so that one mtr covers everyone waiting.
    mark_lock: Mutex<()>,
    /// Bumped under `state` with every change a view depends on (invariant 5).
    version: AtomicU64,
    cache: ArcSwapOption<Cached>,
    /// Read-only views registered without the mutex: a version, with flags (invariant 7).
    slots: Box<[CachePadded<AtomicU64>]>,
    /// Times a view took the mutex, to be made or given back: stays put while read-only
    /// readers find the cache fresh and a free slot.
    view_mutex_uses: AtomicU64,
    commits: AtomicU64,
    rollbacks: AtomicU64,
}

impl TrxSysInner {
    /// Marks a change of what views are built from; `_held` proves the mutex is held.
    fn bump(&self, _held: &mut State) {
        self.version.fetch_add(1, Ordering::SeqCst);
    }

    /// Claims a free slot, storing `value`; `None` when all are taken.
    fn claim_slot(&self, value: u64) -> Option<usize> {
        debug_assert!(value != 0);
        let start = SLOT_HINT.with(|h| {
            let mut s = h.get();
            if s == usize::MAX {
                s = NEXT_SLOT_HINT
                    .fetch_add(1, Ordering::Relaxed)
                    .wrapping_mul(4);
            }
            s
        });
        for i in 0..VIEW_SLOTS {
            let at = (start + i) % VIEW_SLOTS;
            let slot = &self.slots[at];
            if slot.load(Ordering::Relaxed) == 0
                && slot
                    .compare_exchange(0, value, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
            {
                SLOT_HINT.with(|h| h.set(at));
                return Some(at);
            }
        }
        None
    }

    /// Each slot's value, in order (SeqCst loads: invariant 7).
    fn slot_values(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(|s| s.load(Ordering::SeqCst))
    }
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
                    next_no: max_no + 1,
                    ..State::default()
                }),
                // Ids up to `max_id` are on disk already; the first new one needs a mark.
                durable_mark: AtomicU64::new(next_id),
                mark_lock: Mutex::new(()),
                version: AtomicU64::new(1),
                cache: ArcSwapOption::empty(),
                slots: (0..VIEW_SLOTS)
                    .map(|_| CachePadded::new(AtomicU64::new(0)))
                    .collect(),
                view_mutex_uses: AtomicU64::new(0),
                commits: AtomicU64::new(0),
                rollbacks: AtomicU64::new(0),
            }),
        }
    }

    /// A new transaction id, registered as active. `persist` is `Some` when no mark in the
    /// log covers the id yet: the caller must call [`TrxSys::cover`] before writing the id
    /// anywhere (invariant 1), so that a restart starts above every id ever used.
    pub fn assign(&self) -> Assigned {
        let mut st = self.inner.state.lock();
        let id = TrxId(st.next_id);
        st.next_id += 1;
        let persist = (id.0 >= self.inner.durable_mark.load(Ordering::SeqCst))
            .then_some(TrxId(id.0 + ID_PERSIST_EVERY));
        st.active.insert(id);
        self.inner.bump(&mut st);
        Assigned { id, persist }
    }

    /// Returns once a high-water mark above `id` is in the log, calling `persist(mark)` to
    /// put one there unless another thread already has (invariant 1). One mark covers
    /// every id handed out so far, plus `ID_PERSIST_EVERY` more. On an error nothing is
    /// covered: the next caller tries again.
    pub fn cover<E>(
        &self,
        id: TrxId,
        persist: impl FnOnce(TrxId) -> Result<(), E>,
    ) -> Result<(), E> {
        let _g = self.inner.mark_lock.lock();
        if self.inner.durable_mark.load(Ordering::SeqCst) > id.0 {
            return Ok(());
        }
        pause_before_mark();
        let mark = TrxId(self.inner.state.lock().next_id + ID_PERSIST_EVERY);
        persist(mark)?;
        self.inner.durable_mark.fetch_max(mark.0, Ordering::SeqCst);
        Ok(())
    }

    /// Consumes an id that no transaction gets: views made before it do not see it, views
    /// made after do (invariant 2, with an id that is never active). CREATE INDEX marks
    /// with it when an index becomes usable. The id is written nowhere durable, so the
    /// high-water mark need not cover it; the next `assign` still persists when due.
    pub fn reserve_id(&self) -> TrxId {
        let mut st = self.inner.state.lock();
        let id = TrxId(st.next_id);
        st.next_id += 1;
        self.inner.bump(&mut st);
        id
    }

    /// Registers a transaction found active in the undo logs at startup (its rollback
    /// runs in the background; until it ends its changes stay invisible).
    pub fn register_recovered(&self, id: TrxId) {
        let mut st = self.inner.state.lock();
        st.next_id = st.next_id.max(id.0 + 1);
        // The id is on disk already (its undo log): covered.
        self.inner
            .durable_mark
            .fetch_max(st.next_id, Ordering::SeqCst);
        st.active.insert(id);
        self.inner.bump(&mut st);
    }

    /// The commit number for a committing transaction (invariant 3).
    pub fn commit_no(&self) -> u64 {
        let mut st = self.inner.state.lock();
        let no = st.next_no;
        st.next_no += 1;
        st.committing.insert(no);
        self.inner.bump(&mut st);
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
        self.inner.bump(&mut st);
        drop(st);
        if committed {
            self.inner.commits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.inner.rollbacks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A snapshot for `creator` (TrxId(0): a read-only reader with no id), registered until
    /// the handle is dropped. A read-only one normally takes no mutex (module docs).
    pub fn view(&self, creator: TrxId) -> ViewHandle {
        if creator == TrxId(0) {
            if let Some(h) = self.shared_view() {
                return h;
            }
        }
        self.locked_view(creator)
    }

    /// The cached read-only view, registered in a slot, if it is still current and a slot
    /// is free (invariants 5 and 7). No mutex.
    fn shared_view(&self) -> Option<ViewHandle> {
        let inner = &self.inner;
        let cached = inner.cache.load();
        let c = cached.as_ref()?;
        if inner.version.load(Ordering::SeqCst) != c.version {
            return None;
        }
        #[cfg(debug_assertions)]
        if PAUSE_BEFORE_SLOT.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        self.register_shared(c)
    }

    /// Registers the cached view `c` in a slot, if it is still current once the slot is
    /// stored (invariant 7).
    fn register_shared(&self, c: &Cached) -> Option<ViewHandle> {
        let inner = &self.inner;
        let at = inner.claim_slot(c.version | SLOT_PENDING)?;
        let slot = &inner.slots[at];
        // The re-check (invariant 7): no change since the view was built, now that the
        // slot makes it visible to purge.
        let confirmed = inner.version.load(Ordering::SeqCst) == c.version
            && slot
                .compare_exchange(
                    c.version | SLOT_PENDING,
                    c.version,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok();
        if !confirmed {
            // Stale, or cancelled by `seen_by_all` (invariant 9): the slot is still ours.
            slot.store(0, Ordering::SeqCst);
            return None;
        }
        Some(ViewHandle {
            view: Arc::clone(&c.view),
            reg: Registration::Slot(at),
            sys: Arc::clone(inner),
        })
    }

    /// A view built (or, read-only, taken from a fresh cache) under the mutex.
    fn locked_view(&self, creator: TrxId) -> ViewHandle {
        let inner = &self.inner;
        inner.view_mutex_uses.fetch_add(1, Ordering::Relaxed);
        let mut st = inner.state.lock();
        if creator == TrxId(0) {
            let (version, view) = self.publish(&mut st);
            // The mutex holds the version still: no re-check needed.
            if let Some(at) = inner.claim_slot(version) {
                return ViewHandle {
                    view,
                    reg: Registration::Slot(at),
                    sys: Arc::clone(inner),
                };
            }
            return Self::register_locked(inner, &mut st, view);
        }
        let view = Arc::new(st.build(creator));
        Self::register_locked(inner, &mut st, view)
    }

    /// The read-only view of the current version: the cached one, or a new one, then
    /// cached and published (invariant 8).
    fn publish(&self, st: &mut State) -> (u64, Arc<ReadView>) {
        let inner = &self.inner;
        let version = inner.version.load(Ordering::SeqCst);
        if let Some(c) = inner.cache.load().as_ref() {
            if c.version == version {
                return (version, Arc::clone(&c.view));
            }
        }
        let view = Arc::new(st.build(TrxId(0)));
        if st.published.len() >= PUBLISHED_PRUNE_AT {
            let named: BTreeSet<u64> = inner
                .slot_values()
                .filter(|&s| s != 0)
                .map(|s| s & SLOT_VERSION)
                .collect();
            st.published
                .retain(|w, _| *w == version || named.contains(w));
        }
        st.published.insert(version, Arc::clone(&view));
        inner.cache.store(Some(Arc::new(Cached {
            version,
            view: Arc::clone(&view),
        })));
        (version, view)
    }

    fn register_locked(
        inner: &Arc<TrxSysInner>,
        st: &mut State,
        view: Arc<ReadView>,
    ) -> ViewHandle {
        st.view_serial += 1;
        let key = (view.low_limit_no, st.view_serial);
        st.views.insert(key, Arc::clone(&view));
        ViewHandle {
            view,
            reg: Registration::Locked(key),
            sys: Arc::clone(inner),
        }
    }

    /// The snapshot `v` for `creator`: a transaction that read with no id (InnoDB's
    /// read-only optimization) keeps its snapshot when its first write gives it one, and
    /// sees its own changes. Registered before `v`'s handle can be dropped, with `v`'s
    /// commit-number limit, so purge never passes what either needs (invariant 4).
    pub fn rebind(&self, v: &ReadView, creator: TrxId) -> ViewHandle {
        self.inner.view_mutex_uses.fetch_add(1, Ordering::Relaxed);
        let mut st = self.inner.state.lock();
        let view = Arc::new(ReadView {
            creator,
            ..v.clone()
        });
        Self::register_locked(&self.inner, &mut st, view)
    }

    /// Commit numbers below this are seen by every open and future view: their history
    /// can be purged (invariant 4; slot views by invariants 7 and 8).
    pub fn purge_limit(&self) -> u64 {
        let st = self.inner.state.lock();
        let mut limit = st.limit_no();
        if let Some((&(no, _), _)) = st.views.first_key_value() {
            limit = limit.min(no);
        }
        for s in self.inner.slot_values() {
            if s == 0 || s & SLOT_CANCELLED != 0 {
                continue;
            }
            // Pending ones too: the safe side (invariant 9). A version missing from
            // `published` names a registration that fails (invariant 8).
            if let Some(v) = st.published.get(&(s & SLOT_VERSION)) {
                limit = limit.min(v.low_limit_no);
            }
        }
        limit
    }

    /// Whether every open read view, and every future one, sees the changes of `trx`: it
    /// has ended, and each open view sees it. A purged transaction is always seen by all
    /// (invariant 4); rollback asks it before marking a revived secondary entry again
    /// (docs/purge.md), and needs the exact answer: `false` makes it mark the entry for
    /// `trx`'s purge, which may have gone by; `true` removes an entry a view may need. So
    /// a slot registration not decided yet is cancelled (invariant 9). It walks the open
    /// views and the slots: meant for rare calls.
    pub fn seen_by_all(&self, trx: TrxId) -> bool {
        let st = self.inner.state.lock();
        if st.active.contains(&trx)
            || trx >= TrxId(st.next_id)
            || !st.views.values().all(|v| v.sees(trx))
        {
            return false;
        }
        for slot in self.inner.slots.iter() {
            loop {
                let s = slot.load(Ordering::SeqCst);
                if s == 0 || s & SLOT_CANCELLED != 0 {
                    break;
                }
                if s & SLOT_PENDING != 0 {
                    // Its reader then builds a view after this call, seeing `trx`. A
                    // failed CAS: the slot changed (confirmed, freed, claimed): look again.
                    if slot
                        .compare_exchange(s, s | SLOT_CANCELLED, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        break;
                    }
                    continue;
                }
                match st.published.get(&s) {
                    Some(v) if v.sees(trx) => break,
                    Some(_) => return false,
                    None => {
                        // Cannot be (invariant 8: a confirmed slot's view is published).
                        debug_assert!(false, "slot names unpublished version {s}");
                        return false;
                    }
                }
            }
        }
        true
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

    /// Open views: those registered under the mutex and the slots in use (a moment's
    /// count: slots change without the mutex).
    pub fn views_open(&self) -> u64 {
        let locked = self.inner.state.lock().views.len() as u64;
        let slotted = self
            .inner
            .slot_values()
            .filter(|&s| s != 0 && s & (SLOT_PENDING | SLOT_CANCELLED) == 0)
            .count() as u64;
        locked + slotted
    }

    /// How many times a view took the transaction system's mutex, to be made or given
    /// back (`quire_read_view_mutex_uses`): read-only readers that find the cached view
    /// fresh and a free slot leave it unchanged.
    pub fn view_mutex_uses(&self) -> u64 {
        self.inner.view_mutex_uses.load(Ordering::Relaxed)
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
        assert!(first.persist.is_some());
        // Until a mark is in the log, every new id needs one too (invariant 1).
        let second = sys.assign();
        assert!(second.persist.is_some());
        let mut marks = Vec::new();
        sys.cover(first.id, |m| {
            marks.push(m);
            Ok::<(), ()>(())
        })
        .expect("cover");
        // One mark covers both ids handed out so far: the second waits for nothing.
        assert_eq!(marks, [TrxId(13 + ID_PERSIST_EVERY)]);
        sys.cover(second.id, |_| Err(()))
            .expect("covered without persisting");
        for _ in 0..ID_PERSIST_EVERY {
            assert!(sys.assign().persist.is_none());
        }
        let next = sys.assign();
        assert_eq!(next.id, TrxId(13 + ID_PERSIST_EVERY));
        assert!(next.persist.is_some());
        // A failed persist covers nothing: the next caller persists.
        assert_eq!(sys.cover(next.id, |_| Err("disk")), Err("disk"));
        assert!(sys.cover(next.id, |_| Ok::<(), ()>(())).is_ok());
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

    fn slotted(v: &ViewHandle) -> bool {
        matches!(v.reg, Registration::Slot(_))
    }

    #[test]
    fn a_read_only_view_is_shared_without_the_mutex_while_nothing_changes() {
        let sys = TrxSys::new(TrxId(0), 0);
        let first = sys.view(TrxId(0));
        let uses = sys.view_mutex_uses();
        let again = sys.view(TrxId(0));
        assert!(Arc::ptr_eq(&first.view, &again.view), "the cached view");
        assert!(slotted(&first) && slotted(&again));
        drop(first);
        drop(again);
        for _ in 0..100 {
            let v = sys.view(TrxId(0));
            assert!(slotted(&v));
        }
        assert_eq!(sys.view_mutex_uses(), uses, "no mutex to take or give back");
        assert_eq!(sys.views_open(), 0, "drop releases the slot");
    }

    #[test]
    fn every_change_a_view_depends_on_makes_the_cached_view_stale() {
        let sys = TrxSys::new(TrxId(0), 0);
        /// A change of the state views are built from, by name.
        type Change = (&'static str, fn(&TrxSys));
        let changes: [Change; 5] = [
            ("assign", |s| {
                s.assign();
            }),
            ("commit_no", |s| {
                s.commit_no();
            }),
            ("finish", |s| {
                let id = *s.inner.state.lock().active.first().expect("active");
                let no = s.inner.state.lock().committing.first().copied();
                s.finish(id, true, no);
            }),
            ("reserve_id", |s| {
                s.reserve_id();
            }),
            ("register_recovered", |s| s.register_recovered(TrxId(500))),
        ];
        for (name, change) in &changes {
            let before = sys.view(TrxId(0));
            let shared = sys.view(TrxId(0));
            assert!(
                Arc::ptr_eq(&before.view, &shared.view),
                "{name}: cached before"
            );
            change(&sys);
            let uses = sys.view_mutex_uses();
            let after = sys.view(TrxId(0));
            assert!(
                !Arc::ptr_eq(&before.view, &after.view),
                "{name}: stale after"
            );
            assert_eq!(
                sys.view_mutex_uses(),
                uses + 1,
                "{name}: built under the mutex"
            );
            let fresh = sys.inner.state.lock().build(TrxId(0));
            assert_eq!(after.low_limit, fresh.low_limit, "{name}");
            assert_eq!(after.active, fresh.active, "{name}");
            assert_eq!(after.low_limit_no, fresh.low_limit_no, "{name}");
        }
        // The changes, seen: the finished transaction by later views, not earlier ones.
        let id = sys.assign().id;
        let no = sys.commit_no();
        let old = sys.view(TrxId(0));
        sys.finish(id, true, Some(no));
        assert!(!old.sees(id));
        assert!(
            sys.view(TrxId(0)).sees(id),
            "a view after the commit sees it"
        );
    }

    #[test]
    fn purge_stops_at_a_view_registered_in_a_slot() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        let warm = sys.view(TrxId(0));
        let uses = sys.view_mutex_uses();
        let shared = sys.view(TrxId(0));
        assert_eq!(sys.view_mutex_uses(), uses, "taken without the mutex");
        drop(warm);
        sys.finish(a, true, Some(no_a));
        assert!(!shared.sees(a));
        assert_eq!(
            sys.purge_limit(),
            no_a,
            "the slot view may need a's history"
        );
        assert!(!sys.seen_by_all(a), "the slot view does not see a");
        assert_eq!(sys.views_open(), 1);
        drop(shared);
        assert_eq!(sys.purge_limit(), no_a + 1);
        assert!(sys.seen_by_all(a));
        assert_eq!(sys.views_open(), 0);
    }

    #[test]
    fn a_slot_keeps_its_view_published_while_many_newer_ones_come_and_go() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        let old = sys.view(TrxId(0));
        sys.finish(a, true, Some(no_a));
        for _ in 0..3 * PUBLISHED_PRUNE_AT {
            let b = sys.assign().id;
            let no = sys.commit_no();
            sys.finish(b, true, Some(no));
            drop(sys.view(TrxId(0)));
        }
        assert!(
            sys.inner.state.lock().published.len() <= PUBLISHED_PRUNE_AT,
            "pruned"
        );
        assert_eq!(sys.purge_limit(), no_a, "the old slot view still counts");
        assert!(!sys.seen_by_all(a));
        drop(old);
        assert!(sys.purge_limit() > no_a);
        assert!(sys.seen_by_all(a));
    }

    #[test]
    fn with_every_slot_taken_views_register_under_the_mutex() {
        let sys = TrxSys::new(TrxId(0), 0);
        let held: Vec<ViewHandle> = (0..VIEW_SLOTS).map(|_| sys.view(TrxId(0))).collect();
        assert!(held.iter().all(slotted));
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        let uses = sys.view_mutex_uses();
        let extra = sys.view(TrxId(0));
        assert!(!slotted(&extra), "no free slot");
        assert_eq!(sys.view_mutex_uses(), uses + 1);
        assert_eq!(sys.views_open(), VIEW_SLOTS as u64 + 1);
        drop(held);
        sys.finish(a, true, Some(no_a));
        assert_eq!(sys.purge_limit(), no_a, "the mutex-registered view counts");
        assert!(!sys.seen_by_all(a));
        drop(extra);
        assert_eq!(
            sys.view_mutex_uses(),
            uses + 2,
            "given back under the mutex"
        );
        assert_eq!(sys.purge_limit(), no_a + 1);
        assert_eq!(sys.views_open(), 0, "every slot released");
        assert!(slotted(&sys.view(TrxId(0))), "slots are free again");
    }

    #[test]
    fn a_view_cached_before_a_change_fails_its_recheck() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        drop(sys.view(TrxId(0)));
        // A reader loaded the cache and found it current, then a commit ended before it
        // stored its slot.
        let cached = sys.inner.cache.load_full().expect("cached");
        sys.finish(a, true, Some(no_a));
        assert_eq!(
            sys.purge_limit(),
            no_a + 1,
            "purge may pass the cached view"
        );
        assert!(sys.register_shared(&cached).is_none(), "the re-check fails");
        assert_eq!(sys.views_open(), 0, "and gives its slot back");
        assert_eq!(sys.purge_limit(), no_a + 1);
        let v = sys.view(TrxId(0));
        assert!(v.sees(a), "the view it gets instead is current");
    }

    #[test]
    fn seen_by_all_cancels_a_registration_not_yet_checked() {
        let sys = TrxSys::new(TrxId(0), 0);
        let a = sys.assign().id;
        let no_a = sys.commit_no();
        let old = sys.view(TrxId(0));
        let w = sys.inner.version.load(Ordering::SeqCst);
        sys.finish(a, true, Some(no_a));
        // A reader that loaded the old cached view and stored its slot, but has not
        // re-checked the version yet.
        let at = sys.inner.claim_slot(w | SLOT_PENDING).expect("a free slot");
        drop(old);
        assert_eq!(sys.purge_limit(), no_a, "purge counts it, to be safe");
        assert!(
            sys.seen_by_all(a),
            "a registration that cannot succeed any more"
        );
        let slot = &sys.inner.slots[at];
        assert_eq!(
            slot.load(Ordering::SeqCst),
            w | SLOT_PENDING | SLOT_CANCELLED
        );
        assert!(
            slot.compare_exchange(w | SLOT_PENDING, w, Ordering::SeqCst, Ordering::SeqCst)
                .is_err(),
            "the reader's confirmation fails"
        );
        slot.store(0, Ordering::SeqCst);
        assert_eq!(sys.purge_limit(), no_a + 1);
    }

    #[test]
    fn views_with_a_creator_and_rebound_views_take_the_mutex() {
        let sys = TrxSys::new(TrxId(0), 0);
        let snap = sys.view(TrxId(0));
        let uses = sys.view_mutex_uses();
        let a = sys.assign().id;
        let own = sys.view(a);
        assert!(!slotted(&own));
        let rebound = sys.rebind(&snap, a);
        assert!(!slotted(&rebound));
        assert_eq!(rebound.low_limit_no, snap.low_limit_no);
        assert_eq!(sys.view_mutex_uses(), uses + 2);
        assert_eq!(sys.views_open(), 3);
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
