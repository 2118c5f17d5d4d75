//! Unit tests: the compatibility rules, one thread at a time (requests that would wait are
//! asked with `try_lock` or a zero timeout), and the internals: the covered fast path, the
//! queue rules, the deadlock search bound, inherited keys in release_all.
//! Waits between threads are in tests/lock_manager.rs.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::queue::{Queue, Waiting};
use super::*;

use LockKind::{Gap, InsertIntention as II, NextKey, Record};
use LockMode::{Exclusive as X, Shared as S};

const IDX: u64 = 7;

fn k(n: u8) -> LockKey {
    LockKey::Key(vec![n])
}

fn trx(n: u64) -> TrxLocks {
    TrxLocks::new(TrxId(n))
}

fn table_is_empty(m: &LockManager) -> bool {
    m.shards.iter().all(|s| s.0.lock().is_empty())
}

/// Would the request be granted now? (Grants it if so.)
fn now(m: &LockManager, t: &mut TrxLocks, key: &LockKey, mode: LockMode, kind: LockKind) -> bool {
    m.try_lock(t, IDX, key, mode, kind)
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn shared_record_locks_are_compatible() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(now(&m, &mut a, &k(1), S, Record));
    assert!(now(&m, &mut b, &k(1), S, NextKey));
    assert_eq!(
        m.holders(IDX, &k(1)),
        vec![(TrxId(1), S, Record), (TrxId(2), S, NextKey)]
    );
    m.release_all(&mut a);
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn exclusive_record_conflicts_with_shared_and_exclusive() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(now(&m, &mut a, &k(1), S, Record));
    assert!(!now(&m, &mut b, &k(1), X, Record));
    assert!(!now(&m, &mut b, &k(1), X, NextKey));
    assert!(now(&m, &mut a, &k(2), X, Record));
    assert!(!now(&m, &mut b, &k(2), S, Record));
    assert!(!now(&m, &mut b, &k(2), X, Record));
    // A refused try_lock leaves nothing behind.
    assert!(b.is_empty());
    assert_eq!(m.stats().waits, 0);
    m.release_all(&mut a);
    assert!(now(&m, &mut b, &k(2), X, Record));
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn gap_parts_never_conflict_with_each_other_or_with_records() {
    let m = LockManager::new();
    let (mut a, mut b, mut c) = (trx(1), trx(2), trx(3));
    assert!(now(&m, &mut a, &k(1), X, Gap));
    assert!(now(&m, &mut b, &k(1), X, Gap));
    assert!(now(&m, &mut c, &k(1), S, Gap));
    // A gap lock says nothing about the record.
    assert!(now(&m, &mut c, &k(1), X, Record));
    // X NextKey of b conflicts with c's record part only.
    assert!(!now(&m, &mut b, &k(1), X, NextKey));
    m.release_all(&mut a);
    m.release_all(&mut b);
    m.release_all(&mut c);
}

#[test]
fn insert_intention_waits_for_gap_parts_not_for_record_parts() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(now(&m, &mut a, &k(1), X, Record));
    assert!(
        now(&m, &mut b, &k(1), X, II),
        "a record lock leaves the gap open"
    );
    assert!(now(&m, &mut a, &k(2), S, Gap));
    assert!(!now(&m, &mut b, &k(2), X, II));
    assert!(now(&m, &mut a, &k(3), S, NextKey));
    assert!(!now(&m, &mut b, &k(3), S, II));
    // Its own gap lock never stops an insert.
    assert!(now(&m, &mut a, &k(3), X, II));
    m.release_all(&mut a);
    assert!(now(&m, &mut b, &k(2), X, II));
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn granted_insert_intention_is_not_kept() {
    let m = LockManager::new();
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), X, II));
    assert!(a.is_empty());
    assert!(m.holders(IDX, &k(1)).is_empty());
    assert!(table_is_empty(&m));
    // And it blocks nobody's gap lock.
    let mut b = trx(2);
    assert!(now(&m, &mut b, &k(1), X, Gap));
    m.release_all(&mut b);
}

#[test]
fn covered_requests_are_granted_by_what_is_held() {
    let m = LockManager::new();
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), X, NextKey));
    for (mode, kind) in [(S, Record), (X, Record), (S, Gap), (X, Gap), (S, NextKey)] {
        assert!(a.covers(IDX, &k(1), mode, kind), "{mode:?} {kind:?}");
    }
    assert!(now(&m, &mut a, &k(2), S, NextKey));
    assert!(a.covers(IDX, &k(2), S, Record));
    assert!(a.covers(IDX, &k(2), S, Gap));
    assert!(
        !a.covers(IDX, &k(2), X, Gap),
        "coverage follows the mode, as in InnoDB"
    );
    assert!(!a.covers(IDX, &k(2), X, Record));
    assert!(
        !a.covers(IDX, &k(2), X, II),
        "an insert is checked against others"
    );
    assert_eq!(a.len(), 2);
    m.release_all(&mut a);
    assert!(a.is_empty());
}

#[test]
fn covered_request_does_not_touch_the_lock_table() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), X, NextKey));
    // Hold the key's shard: a request that took it would block until we let go.
    let guard = m.shards[m.shard_of(IDX, &k(1))].0.lock();
    let (tx, rx) = mpsc::channel();
    let m2 = Arc::clone(&m);
    let h = thread::spawn(move || {
        let r = m2.lock(&mut a, IDX, &k(1), S, Record, Duration::from_secs(60));
        tx.send(r.is_ok()).expect("send");
        a
    });
    let got = rx.recv_timeout(Duration::from_secs(20));
    drop(guard);
    assert_eq!(got, Ok(true));
    let mut a = h.join().expect("join");
    m.release_all(&mut a);
}

#[test]
fn a_transaction_never_conflicts_with_itself() {
    let m = LockManager::new();
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), S, Gap));
    assert!(now(&m, &mut a, &k(1), S, Record));
    assert!(now(&m, &mut a, &k(1), X, Record));
    assert!(now(&m, &mut a, &k(1), X, NextKey));
    assert!(now(&m, &mut a, &k(1), X, II));
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, NextKey)]);
    assert_eq!(a.len(), 1);
    m.release_all(&mut a);
}

#[test]
fn record_and_gap_parts_of_different_modes_show_separately() {
    let m = LockManager::new();
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), X, Record));
    assert!(now(&m, &mut a, &k(1), S, Gap));
    assert_eq!(
        m.holders(IDX, &k(1)),
        vec![(TrxId(1), X, Record), (TrxId(1), S, Gap)]
    );
    m.release_all(&mut a);
}

#[test]
fn locks_on_the_supremum_are_gap_locks() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    let sup = LockKey::Supremum;
    assert!(now(&m, &mut a, &sup, X, NextKey));
    assert!(now(&m, &mut b, &sup, X, Record), "no record to conflict on");
    assert_eq!(
        m.holders(IDX, &sup),
        vec![(TrxId(1), X, Gap), (TrxId(2), X, Gap)]
    );
    assert!(!now(&m, &mut b, &sup, X, II));
    m.release_all(&mut a);
    m.release_all(&mut b);
    assert!(k(255) < sup);
}

#[test]
fn different_indexes_do_not_share_locks() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(m.try_lock(&mut a, 1, &k(1), X, Record));
    assert!(m.try_lock(&mut b, 2, &k(1), X, Record));
    m.release_all(&mut a);
    m.release_all(&mut b);
}

#[test]
fn zero_timeout_request_that_must_wait_times_out_and_is_counted() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(now(&m, &mut a, &k(1), X, Record));
    let r = m.lock(&mut b, IDX, &k(1), S, Record, Duration::ZERO);
    assert!(matches!(r, Err(LockError::Timeout { .. })), "{r:?}");
    let st = m.stats();
    assert_eq!((st.waits, st.timeouts, st.current_waits), (1, 1, 0));
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, Record)]);
    m.release_all(&mut a);
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn release_all_visits_keys_gained_by_inheritance() {
    let m = LockManager::new();
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), S, NextKey));
    m.inherit_gap(IDX, &k(1), &k(9));
    m.inherit_gap(IDX, &k(9), &LockKey::Supremum);
    assert_eq!(m.holders(IDX, &k(9)), vec![(TrxId(1), S, Gap)]);
    assert_eq!(m.holders(IDX, &LockKey::Supremum), vec![(TrxId(1), S, Gap)]);
    assert_eq!(
        a.len(),
        1,
        "inherited locks are the table's, not the owner's map"
    );
    m.release_all(&mut a);
    assert!(table_is_empty(&m));
}

#[test]
fn inheritance_copies_gap_parts_only_and_keeps_the_mode() {
    let m = LockManager::new();
    let (mut a, mut b, mut c) = (trx(1), trx(2), trx(3));
    assert!(now(&m, &mut a, &k(1), X, NextKey));
    assert!(now(&m, &mut b, &k(2), S, Gap));
    assert!(now(&m, &mut c, &k(2), S, Record));
    m.inherit_gap(IDX, &k(1), &k(5));
    m.inherit_gap(IDX, &k(2), &k(5));
    assert_eq!(
        m.holders(IDX, &k(5)),
        vec![(TrxId(1), X, Gap), (TrxId(2), S, Gap)]
    );
    // The removed key keeps its locks until their owners end.
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, NextKey)]);
    for t in [&mut a, &mut b, &mut c] {
        m.release_all(t);
    }
    assert!(table_is_empty(&m));
}

// --- the queue rules, on hand-built queues ---

fn shared(n: u64) -> (TrxLocks, Arc<TrxShared>) {
    let t = trx(n);
    let s = Arc::clone(&t.shared);
    (t, s)
}

fn ids<'a>(it: impl Iterator<Item = &'a Arc<TrxShared>>) -> Vec<u64> {
    let mut v: Vec<u64> = it.map(|t| t.id.0).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn new_record_request_queues_behind_a_conflicting_waiter_unless_it_holds_the_record() {
    let (_t1, s1) = shared(1);
    let (_t2, s2) = shared(2);
    let (_t3, s3) = shared(3);
    let (_t4, s4) = shared(4);
    let mut q = Queue::default();
    q.grant(&s1, S, Record);
    q.grant(&s3, S, Gap);
    q.grant(&s4, S, Record);
    q.waiting.push(Waiting {
        trx: Arc::clone(&s2),
        mode: X,
        kind: Record,
    });
    let end = q.waiting.len();
    // Compatible with the granted S, but not with the waiting X: behind it.
    assert_eq!(ids(q.blockers(TrxId(5), S, Record, end)), vec![2]);
    // A gap lock does not exempt: the waiter cannot be waiting for a gap part.
    assert_eq!(ids(q.blockers(TrxId(3), S, Record, end)), vec![2]);
    // Holding the record does: the waiter may be waiting for it.
    assert!(!q.is_blocked(TrxId(1), S, NextKey, end));
    assert_eq!(ids(q.blockers(TrxId(1), X, Record, end)), vec![4]);
    // Gap requests never wait; an insert waits for the gap holder only.
    assert!(!q.is_blocked(TrxId(5), X, Gap, end));
    assert_eq!(ids(q.blockers(TrxId(5), X, II, end)), vec![3]);
    // The waiter itself waits for the granted S holders, not for requests behind it.
    assert_eq!(ids(q.blockers(TrxId(2), X, Record, 0)), vec![1, 4]);
}

#[test]
fn insert_intention_waits_for_a_next_key_request_ahead() {
    let (_t1, s1) = shared(1);
    let (_t2, s2) = shared(2);
    let mut q = Queue::default();
    q.grant(&s1, X, Record);
    q.waiting.push(Waiting {
        trx: Arc::clone(&s2),
        mode: S,
        kind: NextKey,
    });
    assert_eq!(ids(q.blockers(TrxId(3), X, II, 1)), vec![2]);
}

#[test]
fn regrant_grants_in_arrival_order_and_stops_at_a_conflict() {
    let (_t1, s1) = shared(1);
    let (_t2, s2) = shared(2);
    let (_t3, s3) = shared(3);
    let (_t4, s4) = shared(4);
    let mut q = Queue::default();
    q.grant(&s1, X, Record);
    for (s, mode) in [(&s2, S), (&s3, S), (&s4, X)] {
        q.waiting.push(Waiting {
            trx: Arc::clone(s),
            mode,
            kind: Record,
        });
    }
    q.check();
    assert!(q.release(TrxId(1)));
    q.regrant();
    q.check();
    let granted: Vec<u64> = q.granted.iter().map(|g| g.trx.id.0).collect();
    assert_eq!(granted, vec![2, 3]);
    assert_eq!(q.waiting_pos(TrxId(4)), Some(0));
}

// --- the deadlock search bound ---

#[test]
fn deadlock_search_past_its_depth_bound_counts_as_a_deadlock() {
    let m = Arc::new(LockManager::with_limits(2, MAX_EDGES));
    let mut ts: Vec<TrxLocks> = (1..=4).map(trx).collect();
    // t_i holds key i.
    for (i, t) in ts.iter_mut().enumerate() {
        assert!(m.try_lock(t, IDX, &k(i as u8 + 1), X, Record));
    }
    let mut t4 = ts.pop().expect("t4");
    let mut handles = Vec::new();
    // t3 waits for t4, then t2 for t3: chains of depth 1 and 2 are searched in full.
    for (waiters, t) in [(1, ts.pop()), (2, ts.pop())] {
        let mut t = t.expect("trx");
        let want = k(t.trx().0 as u8 + 1);
        let m2 = Arc::clone(&m);
        handles.push(thread::spawn(move || {
            let r = m2.lock(&mut t, IDX, &want, X, Record, Duration::from_secs(60));
            (t, r.is_ok())
        }));
        wait_until("waiter queued", || m.stats().current_waits == waiters);
    }
    // t1 -> t2 -> t3 -> t4 is depth 3: past the bound, so a deadlock, at once.
    let mut t1 = ts.pop().expect("t1");
    let start = Instant::now();
    let r = m.lock(&mut t1, IDX, &k(2), X, Record, Duration::from_secs(60));
    assert!(matches!(r, Err(LockError::Deadlock)), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(m.stats().deadlocks, 1);
    m.release_all(&mut t1);
    m.release_all(&mut t4);
    for h in handles {
        let (mut t, ok) = h.join().expect("join");
        assert!(ok);
        m.release_all(&mut t);
    }
    assert!(table_is_empty(&m));
}

#[test]
fn a_new_records_lock_excludes_others_and_is_released_with_the_rest() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock_new_record(&mut a, IDX, k(1), Duration::ZERO, None)
        .expect("nobody holds k1");
    // Kept in the new-record list, not in `held`: the table alone says it is held.
    assert!(a.held.is_empty());
    assert_eq!(a.len(), 1);
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, Record)]);
    assert!(!now(&m, &mut b, &k(1), S, Record));
    assert!(!now(&m, &mut b, &k(1), X, NextKey));
    // Gaps and insert intentions are not record parts: they pass.
    assert!(now(&m, &mut b, &k(1), S, Gap));
    // The owner locks its key again through the ordinary path: its own granted entry is
    // found in the table (merged, never waited for), and noted in `held` too.
    assert!(now(&m, &mut a, &k(1), X, NextKey));
    assert_eq!(a.len(), 2);
    assert_eq!(m.stats().waits, 0);
    m.release_all(&mut a);
    assert!(a.is_empty() && a.new_records.is_empty());
    assert!(now(&m, &mut b, &k(1), X, Record));
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn a_new_records_lock_waits_for_another_holder_and_times_out() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    assert!(now(&m, &mut a, &k(1), S, Record));
    let r = m.lock_new_record(&mut b, IDX, k(1), Duration::from_millis(20), None);
    assert!(matches!(r, Err(LockError::Timeout { .. })), "{r:?}");
    assert!(b.is_empty(), "a refused request leaves nothing");
    assert_eq!(m.stats().timeouts, 1);
    m.release_all(&mut a);
    m.lock_new_record(&mut b, IDX, k(1), Duration::ZERO, None)
        .expect("free now");
    m.release_all(&mut b);
    assert!(table_is_empty(&m));
}

#[test]
fn a_new_records_lock_granted_after_a_wait_is_released() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    assert!(now(&m, &mut a, &k(1), X, Record));
    let (tx, rx) = mpsc::channel();
    let m2 = Arc::clone(&m);
    let h = thread::spawn(move || {
        let mut b = trx(2);
        let r = m2.lock_new_record(&mut b, IDX, k(1), Duration::from_secs(20), None);
        tx.send(()).expect("send");
        let held = m2.holders(IDX, &k(1));
        m2.release_all(&mut b);
        (r.is_ok(), held)
    });
    wait_until("b waits", || m.stats().current_waits == 1);
    assert!(rx.try_recv().is_err());
    m.release_all(&mut a);
    let (ok, held) = h.join().expect("thread");
    assert!(ok);
    assert_eq!(held, vec![(TrxId(2), X, Record)]);
    assert!(table_is_empty(&m));
}
