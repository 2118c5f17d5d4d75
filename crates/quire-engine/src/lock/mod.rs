//! # Row locks: the lock table, lock waits, deadlock detection
//!
//! Transactions lock index keys (a record, the gap before it, or both) in shared or
//! exclusive mode, with InnoDB's rules: docs/locking.md has the compatibility matrix, the
//! fairness rule, deadlock handling and what the transaction layer must lock. Pure
//! in-memory: row locks do not survive a crash, and nothing here is redo-logged.
//!
//! ```text
//!   lock(owner, index, key) ── covered by owner's TrxLocks? ──► Ok   (no lock taken at all)
//!        │ no
//!        ▼
//!   shard[hash(index, key)] (Mutex) ── queue: grantable? ──► grant, Ok   (no global lock)
//!        │ must wait: enqueue the request, drop the shard
//!        ▼
//!   detector (Mutex) ── walk the wait-for graph from the requester ──► cycle: Deadlock
//!        │ no cycle
//!        ▼
//!   owner's condvar, with the shard mutex, until granted or `timeout` ──► Ok / Timeout
//!   (or, with an interrupt flag, in slices of INTERRUPT_POLL until it is set ──► Interrupted)
//!
//!   release_all(owner) ── each key the owner locked: remove its entry, grant the waiters
//!                         nothing blocks any more, notify their condvars
//! ```
//!
//! The wait-for graph is not stored: its edges are read from the queues when the detector
//! visits a waiting transaction (each waits for one request at a time, and
//! `TrxShared::wait` says where). So releasing and granting never touch the detector, and
//! the graph is never stale.
//!
//! Invariants (asserted by `Queue::check` after every queue change in debug builds):
//! 1. In one queue a transaction has at most one granted entry (its locks on the key merged)
//!    and at most one waiting request; in the whole table, at most one waiting request (its
//!    thread is blocked in [`LockManager::lock`]).
//! 2. Granted record parts of different transactions on one key are compatible (S with S).
//!    Gap parts are never checked against each other; they only make InsertIntention wait.
//! 3. When a queue change ends, no waiting request in it is grantable: the change that
//!    removed its last blocker granted it and notified its owner (no lost wakeups). A gap
//!    request never waits.
//! 4. Every key where a transaction has a queue entry is in its [`TrxLocks`] map, its
//!    list of new records' keys, or its inherited list, so [`LockManager::release_all`]
//!    finds every one.
//! 5. An empty queue is not kept.
//! 6. Lock order: detector → a transaction's `wait` → shard; two shards only in
//!    `inherit_gap`, in ascending shard number; a transaction's `inherited` list is a leaf.
//!    Nobody waits for a row lock holding a shard or the detector (the condvar releases
//!    the shard it waits with).
//!
//! Layering: above `row` (for [`TrxId`]) and nothing else; the transaction layer (step 5)
//! and purge (step 6) call it.

mod queue;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::row::TrxId;
use queue::{Parts, Queue};

/// Lock table shards: requests on keys in different shards never contend.
const SHARDS: usize = 64;
/// InnoDB's LOCK_MAX_DEPTH_IN_DEADLOCK_CHECK: a longer wait chain counts as a deadlock.
const MAX_DEPTH: u32 = 200;
/// Bounds one search (InnoDB caps its steps too): edges examined. Hitting it counts as a
/// deadlock, with the requester as the victim.
const MAX_EDGES: u32 = 100_000;

const _: () = assert!(SHARDS.is_power_of_two());
const _: () = assert!(MAX_DEPTH as u64 <= MAX_EDGES as u64);

/// The mode of a lock's record and gap parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    Shared,
    Exclusive,
}

/// What a lock on key K covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// The record K only (InnoDB's LOCK_REC_NOT_GAP).
    Record,
    /// The gap before K only (LOCK_GAP).
    Gap,
    /// The record K and the gap before it (LOCK_ORDINARY).
    NextKey,
    /// An insert into the gap before K asks whether it may (LOCK_INSERT_INTENTION). Once
    /// granted it is not kept: nothing waits for it.
    InsertIntention,
}

/// A record's index key bytes; [`LockKey::Supremum`] is the gap after the last record of an
/// index. `Key(_) < Supremum`, as in the index. On Supremum every lock is a gap lock (there
/// is no record to lock): Record and NextKey requests are taken as Gap.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockKey {
    Key(Vec<u8>),
    Supremum,
}

/// Why a lock was not granted. The caller maps them to MySQL errors 1205 and 1213.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Waited `innodb_lock_wait_timeout`; the request was withdrawn, held locks are kept.
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    Timeout { waited: Duration },
    /// Waiting would have closed a cycle (or a too long chain): the requester is the victim
    /// and must roll back, then call [`LockManager::release_all`].
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// The interrupt flag was set while waiting (KILL QUERY, a client gone); the request
    /// was withdrawn, held locks are kept.
    #[error("Query execution was interrupted")]
    Interrupted,
}

/// How often a wait looks at its interrupt flag: an interrupted wait ends within this.
pub const INTERRUPT_POLL: Duration = Duration::from_millis(50);

thread_local! {
    /// Microseconds this thread has spent waiting for locks: row locks here, and the SQL
    /// layer's metadata locks through [`add_thread_wait`]. Only grows; a statement's lock
    /// time is the difference across it (the slow query log's `Lock_time`).
    static THREAD_WAITED_US: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How long this thread has waited for locks, in µs, since it started (see
/// `THREAD_WAITED_US`).
pub fn thread_wait_us() -> u64 {
    THREAD_WAITED_US.with(|w| w.get())
}

/// Adds a lock wait of another layer (metadata locks) to this thread's lock time.
pub fn add_thread_wait(waited: Duration) {
    THREAD_WAITED_US.with(|w| w.set(w.get().saturating_add(waited.as_micros() as u64)));
}

/// Counters under InnoDB's status names.
#[derive(Debug, Default, Clone, Copy)]
pub struct LockStats {
    /// `Innodb_row_lock_waits`: requests that had to wait.
    pub waits: u64,
    /// `Innodb_row_lock_current_waits`.
    pub current_waits: u64,
    /// `Innodb_row_lock_time`: total time spent waiting, in milliseconds.
    pub wait_time_ms: u64,
    /// `Innodb_deadlocks`.
    pub deadlocks: u64,
    /// `quire_lock_timeouts`.
    pub timeouts: u64,
}

/// What the lock table knows of a transaction; queue entries point to it.
pub(crate) struct TrxShared {
    id: TrxId,
    /// Its thread waits here, with the shard mutex of the key it waits for.
    cv: Condvar,
    /// Where its waiting request is, while it has one: the deadlock search reads it.
    wait: Mutex<Option<WaitSite>>,
    /// Keys where `inherit_gap` gave it a gap lock (invariant 4): its `TrxLocks` map belongs
    /// to its own thread, which purge cannot touch.
    inherited: Mutex<Vec<(u64, LockKey)>>,
}

/// How long a lock wait may last.
#[derive(Clone, Copy)]
struct Wait<'a> {
    timeout: Duration,
    /// Ends the wait early when set.
    interrupt: Option<&'a AtomicBool>,
}

struct WaitSite {
    shard: usize,
    index: u64,
    key: LockKey,
}

/// The locks one transaction holds. Owned by the transaction; pass it to every call.
pub struct TrxLocks {
    shared: Arc<TrxShared>,
    /// What it was granted, per index and key: a covered request is answered from here
    /// without touching the lock table. Nested so that a lookup by `&LockKey` allocates
    /// nothing. May be weaker than the table's entry (inherited gaps are not here).
    held: crate::hash::Map<u64, crate::hash::Map<LockKey, Parts>>,
    /// Keys of records this transaction inserted, X-locked by
    /// [`LockManager::lock_new_record`] and not noted in `held`: a bulk insert's million
    /// keys would otherwise be hashed, cloned and stored twice. Later requests on such a
    /// key find the transaction's own granted entry in the table (a request never waits for
    /// its own locks) and are noted in `held` then, so a key may be in both.
    new_records: Vec<(u64, LockKey)>,
    /// Keys in `held` plus entries of `new_records` (a key in both counts twice).
    keys: usize,
}

impl TrxLocks {
    pub fn new(trx: TrxId) -> Self {
        TrxLocks {
            shared: Arc::new(TrxShared {
                id: trx,
                cv: Condvar::new(),
                wait: Mutex::new(None),
                inherited: Mutex::new(Vec::new()),
            }),
            held: crate::hash::Map::default(),
            new_records: Vec::new(),
            keys: 0,
        }
    }

    pub fn trx(&self) -> TrxId {
        self.shared.id
    }

    /// Number of keys on which the transaction was granted locks (inherited gap locks not
    /// counted; a new record's key locked again later may count twice).
    pub fn len(&self) -> usize {
        self.keys
    }

    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    fn covers(&self, index: u64, key: &LockKey, mode: LockMode, kind: LockKind) -> bool {
        self.held
            .get(&index)
            .and_then(|m| m.get(key))
            .is_some_and(|p| p.covers(mode, kind))
    }

    fn note(&mut self, index: u64, key: &LockKey, mode: LockMode, kind: LockKind) {
        if kind == LockKind::InsertIntention {
            return;
        }
        let keys = self.held.entry(index).or_default();
        if let Some(p) = keys.get_mut(key) {
            p.add(mode, kind);
        } else {
            let mut p = Parts::default();
            p.add(mode, kind);
            keys.insert(key.clone(), p);
            self.keys += 1;
        }
    }
}

impl fmt::Debug for TrxLocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrxLocks")
            .field("trx", &self.shared.id)
            .field("keys", &self.keys)
            .finish()
    }
}

impl Drop for TrxLocks {
    fn drop(&mut self) {
        // Locks left in the table would block others forever.
        if !std::thread::panicking() {
            debug_assert!(
                self.is_empty(),
                "{:?} dropped holding locks: call release_all first",
                self.shared.id
            );
        }
    }
}

type Table = crate::hash::Map<u64, crate::hash::Map<LockKey, Queue>>;

/// One shard of the lock table, on its own cache lines.
#[repr(align(128))]
struct Shard(Mutex<Table>);

fn queue<'a>(t: &'a Table, index: u64, key: &LockKey) -> Option<&'a Queue> {
    t.get(&index).and_then(|m| m.get(key))
}

fn queue_mut<'a>(t: &'a mut Table, index: u64, key: &LockKey) -> Option<&'a mut Queue> {
    t.get_mut(&index).and_then(|m| m.get_mut(key))
}

fn queue_or_new<'a>(t: &'a mut Table, index: u64, key: &LockKey) -> &'a mut Queue {
    t.entry(index).or_default().entry(key.clone()).or_default()
}

/// After a change to (index, key): checks the queue (debug) and drops it if empty (inv. 5).
fn settle(t: &mut Table, index: u64, key: &LockKey) {
    let Some(m) = t.get_mut(&index) else { return };
    if let Some(q) = m.get(key) {
        if cfg!(debug_assertions) {
            q.check();
        }
        if q.is_empty() {
            m.remove(key);
        }
    }
    if m.is_empty() {
        t.remove(&index);
    }
}

/// Where a granted request is recorded in its owner's [`TrxLocks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    /// In `held`, which is asked first whether the request is covered.
    Held,
    /// By the caller, in `new_records` ([`LockManager::lock_new_record`]).
    NewRecord,
}

/// A request on the supremum is a gap request: there is no record to lock.
fn effective(key: &LockKey, kind: LockKind) -> LockKind {
    match (key, kind) {
        (LockKey::Supremum, LockKind::Record | LockKind::NextKey) => LockKind::Gap,
        _ => kind,
    }
}

#[derive(Default)]
struct Counters {
    waits: AtomicU64,
    current_waits: AtomicU64,
    wait_time_us: AtomicU64,
    deadlocks: AtomicU64,
    timeouts: AtomicU64,
}

/// Scratch space of the deadlock search, reused under the detector mutex.
#[derive(Default)]
struct Detector {
    visited: HashSet<TrxId>,
    stack: Vec<(Arc<TrxShared>, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    NoCycle,
    Cycle,
    TooLong,
}

/// The lock table, shared by all sessions.
pub struct LockManager {
    shards: Box<[Shard]>,
    /// Picks a key's shard: foldhash, seeded per process, so that keys a client chooses
    /// cannot be aimed at one shard without knowing the seed (a collision would only cost
    /// contention), at a fraction of SipHash's cost.
    shard_hash: foldhash::fast::RandomState,
    /// Serializes deadlock searches: of the transactions closing a cycle, the last one to
    /// start waiting finds it and withdraws before the next search, so there is one victim.
    detector: Mutex<Detector>,
    max_depth: u32,
    max_edges: u32,
    counters: Counters,
}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<LockManager>();
    send_sync::<TrxLocks>();
};

impl Default for LockManager {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LockManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockManager")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl LockManager {
    pub fn new() -> Self {
        Self::with_limits(MAX_DEPTH, MAX_EDGES)
    }

    /// With other deadlock-search bounds (tests reach them with a few transactions).
    fn with_limits(max_depth: u32, max_edges: u32) -> Self {
        LockManager {
            shards: (0..SHARDS)
                .map(|_| Shard(Mutex::new(Table::default())))
                .collect(),
            shard_hash: foldhash::fast::RandomState::default(),
            detector: Mutex::new(Detector::default()),
            max_depth,
            max_edges,
            counters: Counters::default(),
        }
    }

    fn shard_of(&self, index: u64, key: &LockKey) -> usize {
        (self.shard_hash.hash_one((index, key)) as usize) & (SHARDS - 1)
    }

    /// Grants at once or waits (up to `timeout`); returns Deadlock at once, without waiting,
    /// if waiting would close a cycle.
    pub fn lock(
        &self,
        owner: &mut TrxLocks,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
        timeout: Duration,
    ) -> Result<(), LockError> {
        self.lock_interruptible(owner, index, key, mode, kind, timeout, None)
    }

    /// [`LockManager::lock`], whose wait also ends, with [`LockError::Interrupted`], within
    /// [`INTERRUPT_POLL`] of `interrupt` being set.
    #[allow(clippy::too_many_arguments)]
    pub fn lock_interruptible(
        &self,
        owner: &mut TrxLocks,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<(), LockError> {
        let kind = effective(key, kind);
        match self.grant_or_enqueue(owner, index, key, mode, kind, true, Note::Held) {
            Some(shard) => {
                let wait = Wait { timeout, interrupt };
                self.wait(owner, shard, index, key, mode, kind, wait)
            }
            None => Ok(()),
        }
    }

    /// The X `Record` lock an insert takes on the key of the record it is about to create,
    /// as [`LockManager::lock_interruptible`] would take it, but cheaper for the common case
    /// of a key nobody has locked: the owner's `held` map is neither searched nor grown, and
    /// the key is moved into its `new_records` list (a bulk insert holds one such lock per
    /// row). Granting follows the same queue rules; a request that must wait is noted in
    /// `held` as any other.
    pub fn lock_new_record(
        &self,
        owner: &mut TrxLocks,
        index: u64,
        key: LockKey,
        timeout: Duration,
        interrupt: Option<&AtomicBool>,
    ) -> Result<(), LockError> {
        let (mode, kind) = (LockMode::Exclusive, effective(&key, LockKind::Record));
        match self.grant_or_enqueue(owner, index, &key, mode, kind, true, Note::NewRecord) {
            Some(shard) => {
                let wait = Wait { timeout, interrupt };
                self.wait(owner, shard, index, &key, mode, kind, wait)
            }
            None => {
                owner.new_records.push((index, key));
                owner.keys += 1;
                Ok(())
            }
        }
    }

    /// Grants at once, or returns false and changes nothing (no wait, no counter). For a
    /// caller holding a page latch, which must not wait for a row lock: on false it releases
    /// its latches, calls [`LockManager::lock`], then re-latches and re-checks.
    pub fn try_lock(
        &self,
        owner: &mut TrxLocks,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
    ) -> bool {
        let kind = effective(key, kind);
        self.grant_or_enqueue(owner, index, key, mode, kind, false, Note::Held)
            .is_none()
    }

    /// The no-wait path: grants and returns None, or (if `enqueue`) queues a waiting request
    /// and returns its shard, or (if not) returns Some and changes nothing. With
    /// `Note::NewRecord` a grant is not noted in `held` (the caller records the key in
    /// `new_records`) and `held` is not asked first.
    #[allow(clippy::too_many_arguments)]
    fn grant_or_enqueue(
        &self,
        owner: &mut TrxLocks,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
        enqueue: bool,
        note: Note,
    ) -> Option<usize> {
        if note == Note::Held && owner.covers(index, key, mode, kind) {
            return None;
        }
        let me = &owner.shared;
        debug_assert!(me.wait.lock().is_none(), "{:?} is already waiting", me.id);
        let shard = self.shard_of(index, key);
        let mut table = self.shards[shard].0.lock();
        match queue_mut(&mut table, index, key) {
            Some(q) if q.is_blocked(me.id, mode, kind, q.waiting.len()) => {
                if !enqueue {
                    return Some(shard);
                }
                q.waiting.push(queue::Waiting {
                    trx: Arc::clone(me),
                    mode,
                    kind,
                });
                settle(&mut table, index, key);
                drop(table);
                // After the shard is dropped (lock order, invariant 6). Until it is set, a
                // search does not follow this transaction: it has not searched yet either,
                // and its own search will see the others.
                *me.wait.lock() = Some(WaitSite {
                    shard,
                    index,
                    key: key.clone(),
                });
                return Some(shard);
            }
            Some(q) => q.grant(me, mode, kind),
            // Nothing to check an insert against and nothing to keep.
            None if kind == LockKind::InsertIntention => return None,
            None => queue_or_new(&mut table, index, key).grant(me, mode, kind),
        }
        settle(&mut table, index, key);
        drop(table);
        if note == Note::Held {
            owner.note(index, key, mode, kind);
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn wait(
        &self,
        owner: &mut TrxLocks,
        shard: usize,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
        wait: Wait<'_>,
    ) -> Result<(), LockError> {
        let me = Arc::clone(&owner.shared);
        let verdict = {
            let mut det = self.detector.lock();
            let verdict = self.search(&mut det, &me);
            if verdict != Verdict::NoCycle {
                // Withdraw before the next search runs, so that the others in the cycle
                // do not see this edge and become victims too.
                let mut table = self.shards[shard].0.lock();
                let withdrawn = queue_mut(&mut table, index, key).is_some_and(|q| {
                    let w = q.remove_waiting(me.id);
                    // Requests queued behind it for fairness may be free now.
                    q.regrant();
                    w
                });
                settle(&mut table, index, key);
                drop(table);
                // Not withdrawn: granted meanwhile, so the cycle is gone.
                if withdrawn {
                    Verdict::Cycle
                } else {
                    Verdict::NoCycle
                }
            } else {
                verdict
            }
        };
        if verdict == Verdict::Cycle {
            *me.wait.lock() = None;
            self.counters.deadlocks.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(trx = me.id.0, index, "deadlock: requester rolled back");
            return Err(LockError::Deadlock);
        }

        self.counters.waits.fetch_add(1, Ordering::Relaxed);
        self.counters.current_waits.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let deadline = start.checked_add(wait.timeout);
        let interrupted = || wait.interrupt.is_some_and(|f| f.load(Ordering::Acquire));
        let mut table = self.shards[shard].0.lock();
        let outcome = loop {
            let Some(q) = queue_mut(&mut table, index, key) else {
                // Granted InsertIntention, and the queue emptied since.
                break Ok(());
            };
            if q.waiting_pos(me.id).is_none() {
                break Ok(());
            }
            let now = Instant::now();
            let timed_out = deadline.is_some_and(|d| now >= d);
            if timed_out || interrupted() {
                // Withdrawn exactly as on a timeout (invariant 3 holds after `regrant`).
                q.remove_waiting(me.id);
                q.regrant();
                settle(&mut table, index, key);
                break Err(timed_out);
            }
            // With a flag to watch, wake at least every INTERRUPT_POLL to look at it.
            let until = match (deadline, wait.interrupt.is_some()) {
                (Some(d), true) => Some(d.min(now + INTERRUPT_POLL)),
                (None, true) => Some(now + INTERRUPT_POLL),
                (d, false) => d,
            };
            match until {
                Some(d) => {
                    me.cv.wait_until(&mut table, d);
                }
                None => me.cv.wait(&mut table),
            }
        };
        drop(table);
        *me.wait.lock() = None;
        let waited = start.elapsed();
        add_thread_wait(waited);
        self.counters
            .wait_time_us
            .fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
        self.counters.current_waits.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            Ok(()) => {
                owner.note(index, key, mode, kind);
                Ok(())
            }
            Err(true) => {
                self.counters.timeouts.fetch_add(1, Ordering::Relaxed);
                Err(LockError::Timeout { waited })
            }
            Err(false) => Err(LockError::Interrupted),
        }
    }

    /// Depth-first search of the wait-for graph from `me`, whose request is queued.
    fn search(&self, det: &mut Detector, me: &Arc<TrxShared>) -> Verdict {
        let Detector { visited, stack } = det;
        visited.clear();
        stack.clear();
        let mut edges = 0u32;
        self.blockers_of(me, |b| stack.push((Arc::clone(b), 1)));
        while let Some((t, depth)) = stack.pop() {
            edges += 1;
            if t.id == me.id {
                stack.clear();
                return Verdict::Cycle;
            }
            if edges > self.max_edges || depth > self.max_depth {
                stack.clear();
                return Verdict::TooLong;
            }
            if !visited.insert(t.id) {
                continue;
            }
            self.blockers_of(&t, |b| stack.push((Arc::clone(b), depth + 1)));
        }
        Verdict::NoCycle
    }

    /// Calls `f` for each transaction `t`'s waiting request waits for (none if `t` is not
    /// waiting). Holds `t.wait`, then the shard (invariant 6).
    fn blockers_of(&self, t: &TrxShared, mut f: impl FnMut(&Arc<TrxShared>)) {
        let site = t.wait.lock();
        let Some(site) = site.as_ref() else { return };
        let table = self.shards[site.shard].0.lock();
        let Some(q) = queue(&table, site.index, &site.key) else {
            return;
        };
        let Some(pos) = q.waiting_pos(t.id) else {
            return;
        };
        let w = &q.waiting[pos];
        q.blockers(t.id, w.mode, w.kind, pos).for_each(&mut f);
    }

    /// Releases every lock of the transaction (commit or rollback) and wakes the waiters it
    /// blocked.
    pub fn release_all(&self, owner: &mut TrxLocks) {
        let me = Arc::clone(&owner.shared);
        debug_assert!(me.wait.lock().is_none());
        let mut keys: Vec<(usize, u64, LockKey)> = Vec::with_capacity(owner.keys);
        for (index, m) in owner.held.drain() {
            for (key, _) in m {
                keys.push((self.shard_of(index, &key), index, key));
            }
        }
        // A key in both lists is visited twice: the second visit finds no entry of ours.
        for (index, key) in owner.new_records.drain(..) {
            keys.push((self.shard_of(index, &key), index, key));
        }
        owner.keys = 0;
        loop {
            self.release_keys(&me, &mut keys);
            // Inherited keys may keep arriving while purge runs; a lock can only be
            // inherited from a key still in the table, so this ends (invariant 4).
            keys.extend(
                std::mem::take(&mut *me.inherited.lock())
                    .into_iter()
                    .map(|(index, key)| (self.shard_of(index, &key), index, key)),
            );
            if keys.is_empty() {
                break;
            }
        }
    }

    /// Removes `me` from the queues of `keys`, one shard lock per shard.
    fn release_keys(&self, me: &TrxShared, keys: &mut Vec<(usize, u64, LockKey)>) {
        keys.sort_unstable_by_key(|k| k.0);
        let mut i = 0;
        while i < keys.len() {
            let shard = keys[i].0;
            let mut table = self.shards[shard].0.lock();
            while i < keys.len() && keys[i].0 == shard {
                let (_, index, key) = &keys[i];
                if let Some(q) = queue_mut(&mut table, *index, key) {
                    if q.release(me.id) {
                        q.regrant();
                    }
                }
                settle(&mut table, *index, key);
                i += 1;
            }
        }
        keys.clear();
    }

    /// Purge physically removed the record `removed`; the gap before it merged into the gap
    /// before `next`: every Gap/NextKey lock on `removed` is inherited as a Gap lock (same
    /// mode, same owner) on `next`. Must not wait.
    ///
    /// The same call serves an insert that splits a gap: `inherit_gap(index, next, inserted)`
    /// gives the new record the gap locks of the next one, so the half of the gap now before
    /// the new record stays locked for their holders (InnoDB's lock_update_insert).
    ///
    /// The locks on `removed` stay until their owners end: a key value once locked stays
    /// locked. Waiting requests on `removed` are not inherited: their owners re-position
    /// after the wait and lock `next` themselves.
    pub fn inherit_gap(&self, index: u64, removed: &LockKey, next: &LockKey) {
        if removed == next {
            return;
        }
        let (a, b) = (self.shard_of(index, removed), self.shard_of(index, next));
        // Both shards at once, so that no owner's release_all can run between reading its
        // lock on `removed` and recording the inherited one (invariant 4).
        if a == b {
            let mut t = self.shards[a].0.lock();
            let heirs = heirs(&t, index, removed);
            bequeath(&mut t, index, next, heirs);
        } else {
            let (mut ta, mut tb);
            if a < b {
                ta = self.shards[a].0.lock();
                tb = self.shards[b].0.lock();
            } else {
                tb = self.shards[b].0.lock();
                ta = self.shards[a].0.lock();
            }
            let heirs = heirs(&ta, index, removed);
            bequeath(&mut tb, index, next, heirs);
            settle(&mut ta, index, removed);
        }
    }

    pub fn stats(&self) -> LockStats {
        let c = &self.counters;
        LockStats {
            waits: c.waits.load(Ordering::Relaxed),
            current_waits: c.current_waits.load(Ordering::Relaxed),
            wait_time_ms: c.wait_time_us.load(Ordering::Relaxed) / 1000,
            deadlocks: c.deadlocks.load(Ordering::Relaxed),
            timeouts: c.timeouts.load(Ordering::Relaxed),
        }
    }

    /// Whether some transaction holds a lock with a record part on (index, key). It never
    /// waits and takes no lock: purge asks it under the X latch of the leaf holding a
    /// delete-marked record, before removing it. A writer locks a record before it reads
    /// it, so a writer that has not locked it yet will read it only after purge's latch is
    /// released, and one that has is seen here (docs/purge.md). Gap parts do not count:
    /// removing the record passes them on (`inherit_gap`).
    pub fn has_record_lock(&self, index: u64, key: &LockKey) -> bool {
        let table = self.shards[self.shard_of(index, key)].0.lock();
        queue(&table, index, key).is_some_and(|q| q.granted.iter().any(|g| g.parts.rec.is_some()))
    }

    /// The granted locks on (index, key), by transaction: a record and a gap part of the
    /// same mode show as one NextKey lock, otherwise as a Record and a Gap lock. For tests
    /// and diagnostics.
    pub fn holders(&self, index: u64, key: &LockKey) -> Vec<(TrxId, LockMode, LockKind)> {
        let table = self.shards[self.shard_of(index, key)].0.lock();
        let mut out = Vec::new();
        if let Some(q) = queue(&table, index, key) {
            for g in &q.granted {
                let id = g.trx.id;
                match (g.parts.rec, g.parts.gap) {
                    (Some(r), Some(p)) if r == p => out.push((id, r, LockKind::NextKey)),
                    (r, p) => {
                        if let Some(r) = r {
                            out.push((id, r, LockKind::Record));
                        }
                        if let Some(p) = p {
                            out.push((id, p, LockKind::Gap));
                        }
                    }
                }
            }
        }
        out.sort_by_key(|h| (h.0, h.2 as u8));
        out
    }
}

/// The granted gap parts on (index, removed), with their owners.
fn heirs(t: &Table, index: u64, removed: &LockKey) -> Vec<(Arc<TrxShared>, LockMode)> {
    queue(t, index, removed).map_or(Vec::new(), |q| {
        q.granted
            .iter()
            .filter_map(|g| g.parts.gap.map(|m| (Arc::clone(&g.trx), m)))
            .collect()
    })
}

/// Gives each heir a granted gap lock on (index, next). Gap requests never wait, so this is
/// always allowed; it can only make insert intentions on `next` wait longer.
fn bequeath(t: &mut Table, index: u64, next: &LockKey, heirs: Vec<(Arc<TrxShared>, LockMode)>) {
    if heirs.is_empty() {
        return;
    }
    let q = queue_or_new(t, index, next);
    for (trx, mode) in heirs {
        if q.parts_of(trx.id).is_empty() {
            // A new key for this transaction: release_all must visit it.
            trx.inherited.lock().push((index, next.clone()));
        }
        q.grant(&trx, mode, LockKind::Gap);
    }
    q.regrant();
    settle(t, index, next);
}
