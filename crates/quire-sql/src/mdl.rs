//! # Metadata locks: DDL waits for the transactions that use a table
//!
//! MySQL's MDL, for one kind of object: a table name `(schema, table)`. A statement that
//! reads or changes a table takes a *shared* lock on its name and keeps it until its
//! transaction ends (MDL_SHARED_READ / MDL_SHARED_WRITE, held to transaction end), so the
//! definition it planned with stays the definition it runs against, and a table is never
//! dropped, renamed, truncated or re-indexed under a transaction that has used it. A DDL
//! takes an *exclusive* lock on every name it changes and waits for the shared holders.
//!
//! ```text
//!   statement ──► SessionLocks::shared ── entry cached in the session ──► one CAS on the
//!                 │                        (first use: one shard lock)    entry's state word
//!                 └─ exclusive held, or one waiting and we hold nothing ─► wait (condvar)
//!   COMMIT / ROLLBACK / DDL's implicit commit / end of an autocommit statement
//!              ──► SessionLocks::release_all: one atomic subtraction per lock
//!   DDL ───────► Mdl::exclusive: mark every name as waited for (new sessions queue behind),
//!                take them all at once when no one shares any, else wait and try again
//! ```
//!
//! Invariants (asserted where they are decided):
//! 1. A name is never shared and exclusively held at once: a shared grant requires the
//!    exclusive bit clear, an exclusive grant requires the shared count zero, each decided
//!    by one compare-and-swap of the entry's state word.
//! 2. Writer preference: while an exclusive request waits on a name, a shared request from a
//!    session that holds no metadata lock waits behind it, so a DDL is not starved by a
//!    stream of new transactions. A session that already holds locks is not made to wait
//!    behind a *waiting* DDL (only behind a granted one): it may be what the DDL waits for.
//! 3. A DDL is granted all its names at once or none: it never holds one name while waiting
//!    for another. With 2, no holder ever waits for a waiter, so metadata locks alone never
//!    deadlock; a wait that involves row locks or a client that never commits ends at
//!    `lock_wait_timeout`.
//! 4. Every wait ends: granted, at `lock_wait_timeout` ([`MdlError::Timeout`], 1205), or
//!    within [`POLL`] of the session's interrupt flag being set ([`MdlError::Interrupted`],
//!    1317: KILL, KILL QUERY).
//! 5. An entry leaves the manager's map only when nothing refers to it (no holder, no waiter,
//!    no session cache): otherwise two entries could exist for one name and exclude nothing.
//! 6. An online ALTER downgrades its exclusive lock to *upgradable* (MDL_SHARED_UPGRADABLE:
//!    shared holders come and go, no other exclusive or upgradable grant) and upgrades it
//!    back at its end, waiting as an exclusive request does (invariant 2 applies) for the
//!    shared count to reach 0; only the holder converts its upgradable bit, so no other
//!    DDL can be granted in between (docs/online-ddl.md, "Metadata locks").

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// How often a waiter looks at its interrupt flag (invariant 4).
pub(crate) const POLL: Duration = quire_engine::lock::INTERRUPT_POLL;

/// Shards of the name → entry map: only a session's first use of a name takes one.
const SHARDS: usize = 16;

/// Names a session keeps looked-up entries for; past it the cache starts over.
const SESSION_CACHE_MAX: usize = 1024;

// The state word of an entry: shared holders, the exclusive bit, exclusive waiters.
const SHARED_ONE: u64 = 1;
const SHARED_MASK: u64 = (1 << 32) - 1;
const X_HELD: u64 = 1 << 32;
/// Held upgradable (invariant 6): shared grants go on, exclusive ones wait.
const U_HELD: u64 = 1 << 33;
const X_WAIT_ONE: u64 = 1 << 40;
const X_WAIT_MASK: u64 = !((1 << 40) - 1);

/// Why a metadata lock was not granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MdlError {
    /// `lock_wait_timeout` passed (MySQL 1205).
    Timeout,
    /// The session was killed while it waited (MySQL 1317).
    Interrupted,
}

impl From<MdlError> for crate::SqlError {
    fn from(e: MdlError) -> Self {
        match e {
            MdlError::Timeout => crate::SqlError::LockWaitTimeout,
            MdlError::Interrupted => crate::SqlError::Interrupted,
        }
    }
}

/// How a wait may end early, and what to tell SHOW PROCESSLIST while it lasts.
pub(crate) struct Wait<'a> {
    /// `lock_wait_timeout`, asked for only when a request has to wait (it is a variable
    /// lookup, kept off the path of a lock granted at once).
    pub timeout: &'a dyn Fn() -> Duration,
    pub interrupt: &'a AtomicBool,
    /// Called with `true` when the request starts waiting and `false` when it stops.
    pub waiting: &'a dyn Fn(bool),
}

/// One name's lock.
#[derive(Default)]
pub(crate) struct Entry {
    state: AtomicU64,
    /// Waiters sleep on `cv` under `mutex`; a release that may unblock one takes `mutex`
    /// after changing `state`, so a waiter that saw the old state is already asleep.
    mutex: Mutex<()>,
    cv: Condvar,
}

impl Entry {
    fn shared_allowed(s: u64, behind_waiters: bool) -> bool {
        s & X_HELD == 0
            && (!behind_waiters || s & X_WAIT_MASK == 0)
            && s & SHARED_MASK < SHARED_MASK
    }

    /// One attempt at a shared grant (invariants 1 and 2).
    fn try_shared(&self, behind_waiters: bool) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        while Self::shared_allowed(s, behind_waiters) {
            match self.state.compare_exchange_weak(
                s,
                s + SHARED_ONE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// One attempt at the exclusive grant (invariant 1).
    fn try_exclusive(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        while s & (SHARED_MASK | X_HELD | U_HELD) == 0 {
            match self.state.compare_exchange_weak(
                s,
                s | X_HELD,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// One attempt to turn the upgradable bit this session holds into the exclusive one.
    fn try_convert(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        debug_assert!(s & U_HELD != 0, "upgrade of no upgradable lock");
        while s & SHARED_MASK == 0 {
            match self.state.compare_exchange_weak(
                s,
                (s & !U_HELD) | X_HELD,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    fn wake_all(&self) {
        let _g = self.mutex.lock();
        self.cv.notify_all();
    }

    fn release_shared(&self) {
        let prev = self.state.fetch_sub(SHARED_ONE, Ordering::AcqRel);
        debug_assert!(prev & SHARED_MASK > 0, "shared release without a holder");
        debug_assert!(
            prev & X_HELD == 0,
            "a shared holder under an exclusive lock"
        );
        // The last holder leaving is what a waiting DDL waits for.
        if prev & SHARED_MASK == SHARED_ONE && prev & X_WAIT_MASK != 0 {
            self.wake_all();
        }
    }

    fn release_exclusive(&self) {
        let prev = self.state.fetch_and(!X_HELD, Ordering::AcqRel);
        debug_assert!(prev & X_HELD != 0, "exclusive release without the lock");
        debug_assert!(
            prev & SHARED_MASK == 0,
            "shared holders under an exclusive lock"
        );
        self.wake_all();
    }

    /// Sleeps until `ready` holds (checked under the mutex), the deadline passes or the
    /// interrupt flag is set.
    fn wait_until(
        &self,
        ready: impl Fn(u64) -> bool,
        deadline: Option<Instant>,
        interrupt: &AtomicBool,
    ) -> Result<(), MdlError> {
        let mut g = self.mutex.lock();
        loop {
            if ready(self.state.load(Ordering::Acquire)) {
                return Ok(());
            }
            if interrupt.load(Ordering::Acquire) {
                return Err(MdlError::Interrupted);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(MdlError::Timeout);
            }
            let poll = now + POLL;
            let until = deadline.map_or(poll, |d| d.min(poll));
            self.cv.wait_until(&mut g, until);
        }
    }
}

/// A table's name as metadata locks key it: (schema, table).
pub(crate) type TableName = (String, String);

/// The instance's metadata locks.
pub(crate) struct Mdl {
    shards: Vec<Mutex<quire_engine::hash::Map<TableName, Arc<Entry>>>>,
}

impl Default for Mdl {
    fn default() -> Self {
        Mdl {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Default::default()))
                .collect(),
        }
    }
}

fn shard_of(db: &str, table: &str) -> usize {
    let mut h = DefaultHasher::new();
    (db, table).hash(&mut h);
    (h.finish() as usize) % SHARDS
}

impl Mdl {
    /// The entry of a name, made on first use.
    fn entry(&self, db: &str, table: &str) -> Arc<Entry> {
        let mut shard = self.shards[shard_of(db, table)].lock();
        if let Some(e) = shard.get(&(db.to_string(), table.to_string())) {
            return e.clone();
        }
        let e = Arc::new(Entry::default());
        shard.insert((db.to_string(), table.to_string()), e.clone());
        e
    }

    /// Removes a name's entry if nothing refers to it (invariant 5); a DDL calls it for
    /// the names it dropped or renamed away, so the map does not grow with them.
    fn forget(&self, db: &str, table: &str) {
        let mut shard = self.shards[shard_of(db, table)].lock();
        let key = (db.to_string(), table.to_string());
        // Under the shard lock no one can take a new reference: a count of one is ours.
        if shard
            .get(&key)
            .is_some_and(|e| Arc::strong_count(e) == 1 && e.state.load(Ordering::Acquire) == 0)
        {
            shard.remove(&key);
        }
    }

    /// Exclusive locks on every name in `names`, granted together (invariant 3): what a DDL
    /// holds while it changes those tables. Released when the guard drops.
    pub(crate) fn exclusive(
        &self,
        mut names: Vec<TableName>,
        wait: &Wait<'_>,
    ) -> Result<Exclusive<'_>, MdlError> {
        names.sort();
        names.dedup();
        let entries: Vec<(TableName, Arc<Entry>)> = names
            .into_iter()
            .map(|n| {
                let e = self.entry(&n.0, &n.1);
                (n, e)
            })
            .collect();
        // Waiting from now on: sessions that hold nothing queue behind us (invariant 2).
        for (_, e) in &entries {
            e.state.fetch_add(X_WAIT_ONE, Ordering::AcqRel);
        }
        let mut deadline = None;
        let mut waited = false;
        let start = Instant::now();
        let result = loop {
            let mut taken = 0;
            for (_, e) in &entries {
                if !e.try_exclusive() {
                    break;
                }
                taken += 1;
            }
            if taken == entries.len() {
                break Ok(());
            }
            // Hold none while waiting for one (invariant 3).
            for (_, e) in &entries[..taken] {
                e.release_exclusive();
            }
            if !waited {
                waited = true;
                deadline = Instant::now().checked_add((wait.timeout)());
                (wait.waiting)(true);
            }
            let blocker = &entries[taken].1;
            if let Err(e) = blocker.wait_until(
                |s| s & (SHARED_MASK | X_HELD | U_HELD) == 0,
                deadline,
                wait.interrupt,
            ) {
                break Err(e);
            }
        };
        if waited {
            quire_engine::lock::add_thread_wait(start.elapsed());
        }
        for (_, e) in &entries {
            let prev = e.state.fetch_sub(X_WAIT_ONE, Ordering::AcqRel);
            debug_assert!(prev & X_WAIT_MASK != 0, "waiter count underflow");
            if result.is_err() {
                // Shared requests queued behind this one may go now.
                e.wake_all();
            }
        }
        if waited {
            (wait.waiting)(false);
        }
        result.map(|()| Exclusive {
            mdl: self,
            entries,
            downgraded: false,
        })
    }
}

/// Exclusive locks a DDL holds; dropping it releases them.
pub(crate) struct Exclusive<'m> {
    mdl: &'m Mdl,
    entries: Vec<(TableName, Arc<Entry>)>,
    /// Downgraded to upgradable (invariant 6).
    downgraded: bool,
}

impl Exclusive<'_> {
    /// Lets shared requests in again while keeping every other DDL out (invariant 6).
    pub(crate) fn downgrade(&mut self) {
        if self.downgraded {
            return;
        }
        for (_, e) in &self.entries {
            // X_HELD → U_HELD in one step: no exclusive grant can slip in between.
            let prev = e.state.fetch_xor(X_HELD | U_HELD, Ordering::AcqRel);
            debug_assert!(
                prev & X_HELD != 0 && prev & U_HELD == 0,
                "downgrade of no lock"
            );
            e.wake_all();
        }
        self.downgraded = true;
    }

    /// Back to exclusive: waits, as an exclusive request (invariant 2), until no shared
    /// holder is left on any name, then converts them all at once (invariant 3: it never
    /// holds one exclusively while waiting for another). On a timeout or KILL the lock
    /// stays upgradable.
    pub(crate) fn upgrade(&mut self, wait: &Wait<'_>) -> Result<(), MdlError> {
        if !self.downgraded {
            return Ok(());
        }
        for (_, e) in &self.entries {
            e.state.fetch_add(X_WAIT_ONE, Ordering::AcqRel);
        }
        let mut deadline = None;
        let mut waited = false;
        let result = loop {
            let mut taken = 0;
            for (_, e) in &self.entries {
                if !e.try_convert() {
                    break;
                }
                taken += 1;
            }
            if taken == self.entries.len() {
                break Ok(());
            }
            for (_, e) in &self.entries[..taken] {
                e.state.fetch_xor(X_HELD | U_HELD, Ordering::AcqRel);
                e.wake_all();
            }
            if !waited {
                waited = true;
                deadline = Instant::now().checked_add((wait.timeout)());
                (wait.waiting)(true);
            }
            let blocker = &self.entries[taken].1;
            if let Err(e) = blocker.wait_until(|s| s & SHARED_MASK == 0, deadline, wait.interrupt) {
                break Err(e);
            }
        };
        for (_, e) in &self.entries {
            let prev = e.state.fetch_sub(X_WAIT_ONE, Ordering::AcqRel);
            debug_assert!(prev & X_WAIT_MASK != 0, "waiter count underflow");
            if result.is_err() {
                e.wake_all();
            }
        }
        if result.is_ok() {
            self.downgraded = false;
        }
        if waited {
            (wait.waiting)(false);
        }
        result
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        for (_, e) in &self.entries {
            if self.downgraded {
                e.state.fetch_and(!U_HELD, Ordering::AcqRel);
                e.wake_all();
                continue;
            }
            debug_assert!(
                e.state.load(Ordering::Acquire) & SHARED_MASK == 0,
                "a shared holder under an exclusive lock"
            );
            e.release_exclusive();
        }
        let names: Vec<TableName> = self.entries.drain(..).map(|(n, _)| n).collect();
        for (db, t) in names {
            self.mdl.forget(&db, &t);
        }
    }
}

/// A session's shared locks, and the entries it looked up before.
#[derive(Default)]
pub(crate) struct SessionLocks {
    /// Held until [`SessionLocks::release_all`]: the transaction's end, or the statement's
    /// outside a transaction (docs/sql.md, "Metadata locks").
    held: Vec<Arc<Entry>>,
    /// db → table → entry: a statement on a table this session used before takes no shard
    /// lock, only the entry's compare-and-swap.
    cache: quire_engine::hash::Map<String, quire_engine::hash::Map<String, Arc<Entry>>>,
    cached: usize,
}

impl SessionLocks {
    fn cached_entry(&mut self, mdl: &Mdl, db: &str, table: &str) -> Arc<Entry> {
        if let Some(e) = self.cache.get(db).and_then(|m| m.get(table)) {
            return e.clone();
        }
        if self.cached >= SESSION_CACHE_MAX {
            self.cache.clear();
            self.cached = 0;
        }
        let e = mdl.entry(db, table);
        self.cache
            .entry(db.to_string())
            .or_default()
            .insert(table.to_string(), e.clone());
        self.cached += 1;
        e
    }

    /// A shared lock on `db.table`, kept until [`SessionLocks::release_all`]. A lock this
    /// session holds already is not asked for again (a transaction's later statements cost
    /// one hash lookup).
    pub(crate) fn shared(
        &mut self,
        mdl: &Mdl,
        db: &str,
        table: &str,
        wait: &Wait<'_>,
    ) -> Result<(), MdlError> {
        let e = self.cached_entry(mdl, db, table);
        if self.held.iter().any(|h| Arc::ptr_eq(h, &e)) {
            return Ok(());
        }
        // Invariant 2: only a session that holds nothing queues behind a waiting DDL.
        let behind_waiters = self.held.is_empty();
        if !e.try_shared(behind_waiters) {
            (wait.waiting)(true);
            let start = Instant::now();
            let deadline = start.checked_add((wait.timeout)());
            let r = loop {
                if let Err(err) = e.wait_until(
                    |s| Entry::shared_allowed(s, behind_waiters),
                    deadline,
                    wait.interrupt,
                ) {
                    break Err(err);
                }
                // Allowed under the mutex; others may race us to it without the mutex.
                if e.try_shared(behind_waiters) {
                    break Ok(());
                }
            };
            (wait.waiting)(false);
            quire_engine::lock::add_thread_wait(start.elapsed());
            r?;
        }
        self.held.push(e);
        Ok(())
    }

    /// Releases every shared lock (the transaction ended).
    pub(crate) fn release_all(&mut self) {
        for e in self.held.drain(..) {
            e.release_shared();
        }
    }

    pub(crate) fn holds_any(&self) -> bool {
        !self.held.is_empty()
    }
}

impl Drop for SessionLocks {
    fn drop(&mut self) {
        self.release_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static NO_STATE: fn(bool) = |_| {};

    /// A wait of `timeout` (leaked: a test makes a handful).
    fn wait_for(timeout: Duration, flag: &AtomicBool) -> Wait<'_> {
        let timeout: &'static dyn Fn() -> Duration = Box::leak(Box::new(move || timeout));
        Wait {
            timeout,
            interrupt: flag,
            waiting: &NO_STATE,
        }
    }

    fn name(t: &str) -> TableName {
        ("d".into(), t.into())
    }

    #[test]
    fn shared_holders_share_and_an_exclusive_request_times_out_behind_them() {
        let mdl = Mdl::default();
        let flag = AtomicBool::new(false);
        let w = wait_for(Duration::from_millis(30), &flag);
        let mut a = SessionLocks::default();
        let mut b = SessionLocks::default();
        a.shared(&mdl, "d", "t", &w).expect("a");
        b.shared(&mdl, "d", "t", &w).expect("b");
        a.shared(&mdl, "d", "t", &w).expect("held already");
        assert_eq!(
            mdl.exclusive(vec![name("t")], &w).err(),
            Some(MdlError::Timeout)
        );
        a.release_all();
        b.release_all();
        let x = mdl.exclusive(vec![name("t")], &w).expect("free now");
        let mut c = SessionLocks::default();
        assert_eq!(c.shared(&mdl, "d", "t", &w), Err(MdlError::Timeout));
        drop(x);
        c.shared(&mdl, "d", "t", &w).expect("after the DDL");
    }

    #[test]
    fn a_downgraded_ddl_lets_sessions_in_keeps_ddl_out_and_upgrades_after_them() {
        let mdl = Mdl::default();
        let flag = AtomicBool::new(false);
        let w = wait_for(Duration::from_millis(30), &flag);
        let mut x = mdl.exclusive(vec![name("t")], &w).expect("x");
        let mut a = SessionLocks::default();
        assert_eq!(a.shared(&mdl, "d", "t", &w), Err(MdlError::Timeout));
        x.downgrade();
        a.shared(&mdl, "d", "t", &w)
            .expect("a session under the upgradable lock");
        assert!(
            matches!(mdl.exclusive(vec![name("t")], &w), Err(MdlError::Timeout)),
            "another DDL waits for the upgradable holder"
        );
        // The upgrade waits for the session's transaction; while it waits, new sessions
        // queue behind it.
        assert_eq!(x.upgrade(&w), Err(MdlError::Timeout));
        let mut b = SessionLocks::default();
        b.shared(&mdl, "d", "t", &w)
            .expect("still upgradable after a failed upgrade");
        b.release_all();
        std::thread::scope(|s| {
            let up = s.spawn(|| {
                let f = AtomicBool::new(false);
                x.upgrade(&wait_for(Duration::from_secs(10), &f))
            });
            let e = mdl.entry("d", "t");
            while e.state.load(Ordering::Acquire) & X_WAIT_MASK == 0 {
                std::thread::yield_now();
            }
            let mut fresh = SessionLocks::default();
            assert_eq!(fresh.shared(&mdl, "d", "t", &w), Err(MdlError::Timeout));
            a.release_all();
            assert_eq!(up.join().expect("upgrade"), Ok(()));
        });
        let mut c = SessionLocks::default();
        assert_eq!(c.shared(&mdl, "d", "t", &w), Err(MdlError::Timeout));
        drop(x);
        c.shared(&mdl, "d", "t", &w).expect("after the DDL");
        c.release_all();
        // Dropped while upgradable: released too.
        let mut y = mdl.exclusive(vec![name("t")], &w).expect("y");
        y.downgrade();
        drop(y);
        mdl.exclusive(vec![name("t")], &w)
            .expect("free")
            .downgrade();
    }

    #[test]
    fn a_waiting_ddl_queues_new_sessions_but_not_holders() {
        let mdl = Mdl::default();
        let flag = AtomicBool::new(false);
        let short = wait_for(Duration::from_millis(30), &flag);
        let mut holder = SessionLocks::default();
        holder.shared(&mdl, "d", "t", &short).expect("holder");
        holder.shared(&mdl, "d", "u", &short).expect("holder u");
        std::thread::scope(|s| {
            let ddl = s.spawn(|| {
                let f = AtomicBool::new(false);
                mdl.exclusive(vec![name("u")], &wait_for(Duration::from_secs(10), &f))
                    .map(drop)
            });
            // Wait until the DDL is queued on u.
            let e = mdl.entry("d", "u");
            while e.state.load(Ordering::Acquire) & X_WAIT_MASK == 0 {
                std::thread::yield_now();
            }
            let mut fresh = SessionLocks::default();
            assert_eq!(
                fresh.shared(&mdl, "d", "u", &short),
                Err(MdlError::Timeout),
                "a new session waits behind the DDL"
            );
            holder.release_all();
            assert_eq!(ddl.join().expect("ddl"), Ok(()));
        });
    }

    #[test]
    fn an_interrupted_wait_ends_and_lets_queued_sessions_go() {
        let mdl = Mdl::default();
        let mut holder = SessionLocks::default();
        let flag = AtomicBool::new(false);
        holder
            .shared(&mdl, "d", "t", &wait_for(Duration::ZERO, &flag))
            .expect("holder");
        let kill = AtomicBool::new(false);
        let waits = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let ddl = s.spawn(|| {
                let w = Wait {
                    timeout: &|| Duration::from_secs(30),
                    interrupt: &kill,
                    waiting: &|on| {
                        if on {
                            waits.fetch_add(1, Ordering::Relaxed);
                        }
                    },
                };
                mdl.exclusive(vec![name("t"), name("u")], &w).map(drop)
            });
            while waits.load(Ordering::Relaxed) == 0 {
                std::thread::yield_now();
            }
            kill.store(true, Ordering::Release);
            assert_eq!(ddl.join().expect("ddl"), Err(MdlError::Interrupted));
        });
        let mut fresh = SessionLocks::default();
        fresh
            .shared(&mdl, "d", "t", &wait_for(Duration::ZERO, &flag))
            .expect("no DDL waits any more");
        // u was never held: the DDL took nothing while it waited for t (invariant 3).
        let x = mdl
            .exclusive(vec![name("u")], &wait_for(Duration::ZERO, &flag))
            .expect("u is free");
        drop(x);
    }

    #[test]
    fn unused_entries_are_forgotten_after_a_ddl() {
        let mdl = Mdl::default();
        let flag = AtomicBool::new(false);
        drop(
            mdl.exclusive(vec![name("gone")], &wait_for(Duration::ZERO, &flag))
                .expect("x"),
        );
        let n: usize = mdl.shards.iter().map(|s| s.lock().len()).sum();
        assert_eq!(n, 0);
        let mut s = SessionLocks::default();
        s.shared(&mdl, "d", "kept", &wait_for(Duration::ZERO, &flag))
            .expect("s");
        s.release_all();
        mdl.forget("d", "kept");
        let n: usize = mdl.shards.iter().map(|s| s.lock().len()).sum();
        assert_eq!(n, 1, "a session cache still names it");
    }
}
