//! The row-lock manager between threads: waits and grants, fairness, deadlocks, timeouts,
//! inheritance on purge; a random multi-threaded stress run checked against an independent
//! model of what is held; and a proptest of the compatibility rules against a
//! single-threaded model.
//!
//! `QUIRE_LOCK_STRESS_TRX` sets the transactions per stress thread (default 300).
//!
//! Timing: waits use timeouts of 60 s where a grant is expected, and checks only bound
//! times from below (a loaded machine can always be slower), except "at once", which is
//! checked against a bound far below the timeout.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use proptest::prelude::*;
use quire_engine::lock::{LockError, LockKey, LockKind, LockManager, LockMode, TrxLocks};
use quire_engine::row::TrxId;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use LockKind::{Gap, InsertIntention as II, NextKey, Record};
use LockMode::{Exclusive as X, Shared as S};

const IDX: u64 = 1;
const LONG: Duration = Duration::from_secs(60);
/// "At once": far below LONG, far above any scheduling hiccup.
const AT_ONCE: Duration = Duration::from_secs(20);

fn k(n: u8) -> LockKey {
    LockKey::Key(vec![n])
}

fn trx(n: u64) -> TrxLocks {
    TrxLocks::new(TrxId(n))
}

type Waiter = JoinHandle<(TrxLocks, Result<(), LockError>, Duration)>;

/// Requests a lock on another thread; returns the transaction, the result and the time
/// the call took.
fn spawn_lock(
    m: &Arc<LockManager>,
    mut t: TrxLocks,
    key: LockKey,
    mode: LockMode,
    kind: LockKind,
    timeout: Duration,
) -> Waiter {
    let m = Arc::clone(m);
    thread::spawn(move || {
        let start = Instant::now();
        let r = m.lock(&mut t, IDX, &key, mode, kind, timeout);
        (t, r, start.elapsed())
    })
}

/// Polls until `n` requests are waiting.
fn waiting(m: &LockManager, n: u64) {
    let start = Instant::now();
    while m.stats().current_waits != n {
        assert!(
            start.elapsed() < AT_ONCE,
            "expected {n} waiters, have {}",
            m.stats().current_waits
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// Gives a waiter that should stay blocked time to (wrongly) finish, then checks it did not.
fn still_blocked(h: &Waiter) {
    thread::sleep(Duration::from_millis(50));
    assert!(!h.is_finished(), "the request should still be waiting");
}

fn granted(h: Waiter) -> TrxLocks {
    let (t, r, _) = h.join().expect("join");
    assert!(r.is_ok(), "{:?}: {r:?}", t.trx());
    t
}

#[test]
fn shared_locks_are_compatible() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    m.lock(&mut b, IDX, &k(1), S, NextKey, LONG).expect("b");
    assert_eq!(m.stats().waits, 0);
    assert_eq!(m.holders(IDX, &k(1)).len(), 2);
    m.release_all(&mut a);
    m.release_all(&mut b);
}

#[test]
fn exclusive_waits_for_shared_and_is_granted_on_release() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    let h = spawn_lock(&m, trx(2), k(1), X, Record, LONG);
    waiting(&m, 1);
    still_blocked(&h);
    m.release_all(&mut a);
    let mut b = granted(h);
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(2), X, Record)]);
    let st = m.stats();
    assert_eq!((st.waits, st.current_waits, st.timeouts), (1, 0, 0));
    assert!(st.wait_time_ms >= 50, "{st:?}");
    m.release_all(&mut b);
}

#[test]
fn gap_locks_never_conflict_with_each_other() {
    let m = LockManager::new();
    let mut ts: Vec<TrxLocks> = (1..=4).map(trx).collect();
    for (t, mode) in ts.iter_mut().zip([X, S, X, S]) {
        m.lock(t, IDX, &k(1), mode, Gap, LONG).expect("gap");
    }
    assert_eq!(m.stats().waits, 0);
    assert_eq!(m.holders(IDX, &k(1)).len(), 4);
    for t in &mut ts {
        m.release_all(t);
    }
}

#[test]
fn insert_intention_waits_for_a_gap_lock_but_not_for_a_record_lock() {
    let m = Arc::new(LockManager::new());
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(1), X, Record, LONG).expect("record");
    m.lock(&mut b, IDX, &k(1), X, II, LONG)
        .expect("a record lock leaves the gap before it open");
    m.lock(&mut a, IDX, &k(2), S, Gap, LONG).expect("gap");
    let h = spawn_lock(&m, b, k(2), X, II, LONG);
    waiting(&m, 1);
    still_blocked(&h);
    m.release_all(&mut a);
    let mut b = granted(h);
    // A granted insert intention is not kept.
    assert!(m.holders(IDX, &k(2)).is_empty());
    m.release_all(&mut b);
}

#[test]
fn next_key_lock_blocks_insert_into_the_gap_before_it() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(5), S, NextKey, LONG)
        .expect("next-key");
    let r = m.lock(&mut b, IDX, &k(5), X, II, Duration::from_millis(50));
    assert!(matches!(r, Err(LockError::Timeout { .. })), "{r:?}");
    // The gap before another record is open, and the record itself is only S-locked.
    m.lock(&mut b, IDX, &k(6), X, II, LONG).expect("other gap");
    m.lock(&mut b, IDX, &k(5), S, Record, LONG)
        .expect("S record");
    m.release_all(&mut a);
    m.release_all(&mut b);
}

#[test]
fn upgrade_shared_to_exclusive_waits_for_other_sharers() {
    let m = Arc::new(LockManager::new());
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    m.lock(&mut b, IDX, &k(1), S, Record, LONG).expect("b");
    let h = spawn_lock(&m, a, k(1), X, Record, LONG);
    waiting(&m, 1);
    still_blocked(&h);
    m.release_all(&mut b);
    let mut a = granted(h);
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, Record)]);
    assert_eq!(a.len(), 1);
    m.release_all(&mut a);
}

#[test]
fn two_trx_deadlock_is_detected_at_once() {
    let m = Arc::new(LockManager::new());
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(1), X, Record, LONG).expect("a");
    m.lock(&mut b, IDX, &k(2), X, Record, LONG).expect("b");
    let h = spawn_lock(&m, a, k(2), X, Record, LONG);
    waiting(&m, 1);
    let start = Instant::now();
    let r = m.lock(&mut b, IDX, &k(1), S, Record, LONG);
    assert!(matches!(r, Err(LockError::Deadlock)), "{r:?}");
    assert!(start.elapsed() < AT_ONCE, "took {:?}", start.elapsed());
    assert_eq!(m.stats().deadlocks, 1);
    // The victim rolls back; the other gets its lock.
    m.release_all(&mut b);
    let mut a = granted(h);
    assert_eq!(m.stats().deadlocks, 1);
    m.release_all(&mut a);
}

#[test]
fn three_trx_cycle_is_detected() {
    let m = Arc::new(LockManager::new());
    let mut ts: Vec<TrxLocks> = (1..=3).map(trx).collect();
    for (i, t) in ts.iter_mut().enumerate() {
        m.lock(t, IDX, &k(i as u8), X, NextKey, LONG)
            .expect("own key");
    }
    let mut c = ts.pop().expect("c");
    let b = ts.pop().expect("b");
    let a = ts.pop().expect("a");
    // a waits for b, b waits for c; c asking for a's key closes the cycle.
    let ha = spawn_lock(&m, a, k(1), S, Record, LONG);
    waiting(&m, 1);
    let hb = spawn_lock(&m, b, k(2), X, Record, LONG);
    waiting(&m, 2);
    let start = Instant::now();
    let r = m.lock(&mut c, IDX, &k(0), X, Record, LONG);
    assert!(matches!(r, Err(LockError::Deadlock)), "{r:?}");
    assert!(start.elapsed() < AT_ONCE);
    m.release_all(&mut c);
    let mut b = granted(hb);
    m.release_all(&mut b);
    let mut a = granted(ha);
    m.release_all(&mut a);
    assert_eq!(m.stats().deadlocks, 1);
}

#[test]
fn lock_wait_timeout_returns_timeout_after_the_timeout() {
    let m = LockManager::new();
    let (mut a, mut b) = (trx(1), trx(2));
    m.lock(&mut a, IDX, &k(1), X, Record, LONG).expect("a");
    m.lock(&mut b, IDX, &k(2), X, Record, LONG).expect("b");
    let timeout = Duration::from_millis(150);
    let start = Instant::now();
    let r = m.lock(&mut b, IDX, &k(1), X, Record, timeout);
    let elapsed = start.elapsed();
    match r {
        Err(LockError::Timeout { waited }) => assert!(waited >= timeout, "{waited:?}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(elapsed >= timeout);
    let st = m.stats();
    assert_eq!((st.waits, st.timeouts, st.current_waits), (1, 1, 0));
    assert!(st.wait_time_ms >= 150, "{st:?}");
    // The request is withdrawn; locks held before are kept (the statement failed, not the
    // transaction).
    assert_eq!(m.holders(IDX, &k(1)), vec![(TrxId(1), X, Record)]);
    assert_eq!(m.holders(IDX, &k(2)), vec![(TrxId(2), X, Record)]);
    m.release_all(&mut a);
    m.release_all(&mut b);
}

#[test]
fn release_all_wakes_every_waiter_it_blocked() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), X, NextKey, LONG).expect("a");
    let hs = vec![
        spawn_lock(&m, trx(2), k(1), S, Record, LONG),
        spawn_lock(&m, trx(3), k(1), S, NextKey, LONG),
        spawn_lock(&m, trx(4), k(1), X, II, LONG),
    ];
    waiting(&m, 3);
    for h in &hs {
        still_blocked(h);
    }
    m.release_all(&mut a);
    for h in hs {
        let mut t = granted(h);
        m.release_all(&mut t);
    }
    assert_eq!(m.stats().current_waits, 0);
}

#[test]
fn inherit_gap_makes_insert_into_merged_gap_wait() {
    let m = Arc::new(LockManager::new());
    let (mut a, mut b) = (trx(1), trx(2));
    // a scanned with next-key locks up to record 3; the gap before 5 is not locked.
    m.lock(&mut a, IDX, &k(3), S, NextKey, LONG).expect("a");
    m.lock(&mut b, IDX, &k(5), X, II, LONG)
        .expect("gap (3, 5) is open");
    // Purge removes record 3: the gap before it merges into the gap before 5.
    m.inherit_gap(IDX, &k(3), &k(5));
    assert_eq!(m.holders(IDX, &k(5)), vec![(TrxId(1), S, Gap)]);
    let h = spawn_lock(&m, b, k(5), X, II, LONG);
    waiting(&m, 1);
    still_blocked(&h);
    m.release_all(&mut a);
    let mut b = granted(h);
    m.release_all(&mut b);
}

#[test]
fn exclusive_waiter_is_not_starved_by_later_shared_requests() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    let hx = spawn_lock(&m, trx(2), k(1), X, Record, LONG);
    waiting(&m, 1);
    // Compatible with the granted S, but behind the waiting X.
    let hs = spawn_lock(&m, trx(3), k(1), S, Record, LONG);
    waiting(&m, 2);
    still_blocked(&hs);
    m.release_all(&mut a);
    let mut x = granted(hx);
    still_blocked(&hs);
    m.release_all(&mut x);
    let mut s = granted(hs);
    m.release_all(&mut s);
}

#[test]
fn holder_of_the_record_is_not_queued_behind_a_waiter() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    let hx = spawn_lock(&m, trx(2), k(1), X, Record, LONG);
    waiting(&m, 1);
    // The X waiter waits for a; queueing a behind it would be a deadlock.
    let start = Instant::now();
    m.lock(&mut a, IDX, &k(1), S, NextKey, LONG)
        .expect("granted");
    assert!(start.elapsed() < AT_ONCE);
    assert_eq!(m.stats().waits, 1);
    m.release_all(&mut a);
    let mut x = granted(hx);
    m.release_all(&mut x);
}

#[test]
fn timed_out_waiter_no_longer_blocks_requests_queued_behind_it() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), S, Record, LONG).expect("a");
    let hx = spawn_lock(&m, trx(2), k(1), X, Record, Duration::from_secs(2));
    waiting(&m, 1);
    let hs = spawn_lock(&m, trx(3), k(1), S, Record, LONG);
    waiting(&m, 2);
    // When the X request times out, the S request behind it is granted, with a still there.
    let (mut x, r, _) = hx.join().expect("join");
    assert!(matches!(r, Err(LockError::Timeout { .. })), "{r:?}");
    let mut s = granted(hs);
    assert_eq!(
        m.holders(IDX, &k(1)),
        vec![(TrxId(1), S, Record), (TrxId(3), S, Record)]
    );
    for t in [&mut a, &mut x, &mut s] {
        m.release_all(t);
    }
}

#[test]
fn insert_intention_waits_for_a_waiting_next_key_request() {
    let m = Arc::new(LockManager::new());
    let mut a = trx(1);
    m.lock(&mut a, IDX, &k(1), X, Record, LONG).expect("a");
    // b's scan waits to lock record 1 and the gap before it.
    let hb = spawn_lock(&m, trx(2), k(1), S, NextKey, LONG);
    waiting(&m, 1);
    // An insert into that gap by c waits for b: b must find the gap as it was.
    let hc = spawn_lock(&m, trx(3), k(1), X, II, LONG);
    waiting(&m, 2);
    m.release_all(&mut a);
    let mut b = granted(hb);
    still_blocked(&hc);
    m.release_all(&mut b);
    let mut c = granted(hc);
    m.release_all(&mut c);
}

// --- stress ---

/// Record parts each transaction was granted, per key, as the test threads saw them.
/// A transaction is entered after `lock` returns Ok and removed *before* `release_all`, so
/// the model never holds more than the lock table: two conflicting entries in it mean two
/// conflicting locks were really held at once.
#[derive(Default)]
struct Held {
    rec: HashMap<(u64, u8), HashMap<u64, LockMode>>,
}

fn stress_key(rng: &mut SmallRng) -> (u64, u8) {
    (rng.gen_range(1..=2), rng.gen_range(0..=6))
}

fn key_of(n: u8) -> LockKey {
    // 6 is the supremum: every lock there is a gap lock.
    if n == 6 {
        LockKey::Supremum
    } else {
        k(n)
    }
}

struct StressRun {
    threads: u64,
    trx_per_thread: u64,
    timeout_ms: (u64, u64),
    purge: bool,
    seed: u64,
}

#[derive(Debug, Default)]
struct StressOutcome {
    granted: u64,
    deadlocks: u64,
    timeouts: u64,
}

fn stress(run: StressRun) -> (StressOutcome, Vec<String>, Arc<LockManager>) {
    let m = Arc::new(LockManager::new());
    let model = Arc::new(Mutex::new(Held::default()));
    let violations = Arc::new(Mutex::new(Vec::<String>::new()));
    let (granted, deadlocks, timeouts) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let purge = run.purge.then(|| {
        let (m, stop) = (Arc::clone(&m), Arc::clone(&stop));
        let mut rng = SmallRng::seed_from_u64(run.seed ^ 0xfeed);
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let (index, n) = stress_key(&mut rng);
                if n < 6 {
                    m.inherit_gap(index, &k(n), &key_of(n + 1));
                }
                thread::sleep(Duration::from_micros(200));
            }
        })
    });
    let mut workers = Vec::new();
    for th in 0..run.threads {
        let (m, model, violations) = (Arc::clone(&m), Arc::clone(&model), Arc::clone(&violations));
        let (granted, deadlocks, timeouts) = (
            Arc::clone(&granted),
            Arc::clone(&deadlocks),
            Arc::clone(&timeouts),
        );
        let mut rng = SmallRng::seed_from_u64(run.seed.wrapping_add(th));
        let (lo, hi) = run.timeout_ms;
        let per = run.trx_per_thread;
        workers.push(thread::spawn(move || {
            for n in 0..per {
                let id = th * 1_000_000 + n + 1;
                let mut t = TrxLocks::new(TrxId(id));
                for _ in 0..rng.gen_range(1..=5) {
                    let (index, kn) = stress_key(&mut rng);
                    let key = key_of(kn);
                    let mode = if rng.gen_bool(0.5) { S } else { X };
                    let kind = match rng.gen_range(0..10) {
                        0..=3 => Record,
                        4..=6 => NextKey,
                        7 => Gap,
                        _ => II,
                    };
                    let timeout = Duration::from_millis(rng.gen_range(lo..=hi));
                    match m.lock(&mut t, index, &key, mode, kind, timeout) {
                        Ok(()) => {
                            granted.fetch_add(1, Ordering::Relaxed);
                            if kind == Record || kind == NextKey {
                                if key == LockKey::Supremum {
                                    continue;
                                }
                                let mut md = model.lock();
                                let holders = md.rec.entry((index, kn)).or_default();
                                let mine = holders.entry(id).or_insert(mode);
                                if mode == X {
                                    *mine = X;
                                }
                                let mine = *mine;
                                for (other, theirs) in holders.iter() {
                                    if *other != id && (mine == X || *theirs == X) {
                                        violations.lock().push(format!(
                                            "trx {id} granted {mine:?} on {index}/{kn} while trx {other} holds {theirs:?}"
                                        ));
                                    }
                                }
                            }
                            if rng.gen_bool(0.3) {
                                thread::yield_now();
                            }
                        }
                        Err(LockError::Deadlock) => {
                            deadlocks.fetch_add(1, Ordering::Relaxed);
                            break; // the victim rolls back
                        }
                        Err(LockError::Timeout { .. }) => {
                            timeouts.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        Err(LockError::Interrupted) => unreachable!("no interrupt flag"),
                    }
                }
                {
                    let mut md = model.lock();
                    for holders in md.rec.values_mut() {
                        holders.remove(&id);
                    }
                }
                m.release_all(&mut t);
            }
        }));
    }
    // Terminates: a lost wakeup would show as a timeout (checked by the caller) and a hang
    // as a missed deadline here.
    let (tx, rx) = mpsc::channel();
    let joiner = thread::spawn(move || {
        for w in workers {
            w.join().expect("worker panicked");
        }
        tx.send(()).expect("send");
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("stress run did not finish: a hang");
    joiner.join().expect("join");
    stop.store(true, Ordering::Relaxed);
    if let Some(p) = purge {
        p.join().expect("purge");
    }
    let out = StressOutcome {
        granted: granted.load(Ordering::Relaxed),
        deadlocks: deadlocks.load(Ordering::Relaxed),
        timeouts: timeouts.load(Ordering::Relaxed),
    };
    let v = violations.lock().clone();
    (out, v, m)
}

/// Transactions per thread; `QUIRE_LOCK_STRESS_TRX` raises it for a longer run.
fn trx_per_thread() -> u64 {
    std::env::var("QUIRE_LOCK_STRESS_TRX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn assert_table_empty(m: &LockManager) {
    for index in 1..=2 {
        for n in 0..=6 {
            assert!(
                m.holders(index, &key_of(n)).is_empty(),
                "{index}/{n} still locked"
            );
        }
    }
    assert_eq!(m.stats().current_waits, 0);
}

#[test]
fn concurrent_random_locking_never_grants_conflicting_locks_and_loses_no_wakeup() {
    // Long timeouts: every wait ends in a grant or a detected deadlock. A timeout here would
    // be a waiter nobody woke (or a missed cycle).
    let (out, violations, m) = stress(StressRun {
        threads: 8,
        trx_per_thread: trx_per_thread(),
        timeout_ms: (30_000, 30_000),
        purge: false,
        seed: 1,
    });
    eprintln!("long timeouts: {out:?} {:?}", m.stats());
    assert!(violations.is_empty(), "{violations:#?}");
    assert_eq!(out.timeouts, 0, "a waiter was never woken: {out:?}");
    assert_eq!(m.stats().deadlocks, out.deadlocks);
    assert!(
        m.stats().waits > 0,
        "the run made nobody wait: not a stress"
    );
    assert_table_empty(&m);
}

#[test]
fn concurrent_random_locking_with_short_timeouts_and_purge_stays_consistent() {
    let (out, violations, m) = stress(StressRun {
        threads: 8,
        trx_per_thread: trx_per_thread(),
        timeout_ms: (0, 20),
        purge: true,
        seed: 2,
    });
    eprintln!("short timeouts: {out:?} {:?}", m.stats());
    assert!(violations.is_empty(), "{violations:#?}");
    let st = m.stats();
    assert_eq!((st.deadlocks, st.timeouts), (out.deadlocks, out.timeouts));
    assert!(out.granted > 0);
    assert_table_empty(&m);
}

// --- proptest against a single-threaded model ---

#[derive(Debug, Clone)]
enum Op {
    Lock {
        trx: usize,
        key: u8,
        mode: LockMode,
        kind: LockKind,
    },
    Release {
        trx: usize,
    },
    /// Purge removes record `key`; its gap merges into the next one's.
    Purge {
        key: u8,
    },
}

const TRXS: usize = 3;
/// Keys 0..4 are records, 4 is the supremum.
const SUP: u8 = 4;

fn op() -> impl Strategy<Value = Op> {
    let mode = prop_oneof![Just(S), Just(X)];
    let kind = prop_oneof![Just(Record), Just(Gap), Just(NextKey), Just(II)];
    prop_oneof![
        8 => (0..TRXS, 0..=SUP, mode, kind).prop_map(|(trx, key, mode, kind)| Op::Lock { trx, key, mode, kind }),
        1 => (0..TRXS).prop_map(|trx| Op::Release { trx }),
        1 => (0..SUP).prop_map(|key| Op::Purge { key }),
    ]
}

fn pkey(n: u8) -> LockKey {
    if n == SUP {
        LockKey::Supremum
    } else {
        k(n)
    }
}

/// The compatibility rules, written out plainly: per (trx, key), the strongest record
/// and gap modes held.
#[derive(Default)]
struct Model {
    parts: HashMap<(usize, u8), (Option<LockMode>, Option<LockMode>)>,
    /// Keys each transaction locked itself (what `TrxLocks::len` counts).
    own: HashMap<usize, HashSet<u8>>,
}

fn max(a: Option<LockMode>, b: LockMode) -> LockMode {
    if a == Some(X) || b == X {
        X
    } else {
        S
    }
}

impl Model {
    fn grantable(&self, trx: usize, key: u8, mode: LockMode, kind: LockKind) -> bool {
        let others = self
            .parts
            .iter()
            .filter(|((t, kk), _)| *t != trx && *kk == key)
            .map(|(_, p)| *p);
        match kind {
            Gap => true,
            II => others.clone().all(|(_, gap)| gap.is_none()),
            Record | NextKey => others.clone().all(|(rec, _)| match rec {
                None => true,
                Some(r) => r == S && mode == S,
            }),
        }
    }

    fn grant(&mut self, trx: usize, key: u8, mode: LockMode, kind: LockKind) {
        if kind == II {
            return;
        }
        self.own.entry(trx).or_default().insert(key);
        let p = self.parts.entry((trx, key)).or_default();
        if matches!(kind, Record | NextKey) {
            p.0 = Some(max(p.0, mode));
        }
        if matches!(kind, Gap | NextKey) {
            p.1 = Some(max(p.1, mode));
        }
    }

    fn holders(&self, key: u8) -> Vec<(TrxId, LockMode, LockKind)> {
        let mut out = Vec::new();
        for t in 0..TRXS {
            match self.parts.get(&(t, key)).copied() {
                None => {}
                Some((Some(r), Some(g))) if r == g => out.push((TrxId(t as u64), r, NextKey)),
                Some((r, g)) => {
                    if let Some(r) = r {
                        out.push((TrxId(t as u64), r, Record));
                    }
                    if let Some(g) = g {
                        out.push((TrxId(t as u64), g, Gap));
                    }
                }
            }
        }
        out
    }
}

proptest! {
    #[test]
    fn zero_timeout_requests_match_the_compatibility_model(ops in prop::collection::vec(op(), 1..60)) {
        let m = LockManager::new();
        let mut ts: Vec<TrxLocks> = (0..TRXS).map(|t| trx(t as u64)).collect();
        let mut model = Model::default();
        // Run the ops in a closure so that the transactions are released even when a check
        // fails (a TrxLocks dropped holding locks is a bug of its own).
        let result = (|| -> Result<(), TestCaseError> {
            for op in ops {
                match op {
                    Op::Lock { trx, key, mode, kind } => {
                        // On the supremum everything is a gap lock.
                        let eff = if key == SUP && matches!(kind, Record | NextKey) { Gap } else { kind };
                        let expect = model.grantable(trx, key, mode, eff);
                        let r = m.lock(&mut ts[trx], IDX, &pkey(key), mode, kind, Duration::ZERO);
                        match r {
                            Ok(()) => {
                                prop_assert!(expect, "granted, model says wait: {:?}", op);
                                model.grant(trx, key, mode, eff);
                            }
                            Err(LockError::Timeout { .. }) => {
                                prop_assert!(!expect, "would wait, model says grant: {:?}", op);
                            }
                            Err(LockError::Deadlock | LockError::Interrupted) => {
                                prop_assert!(false, "no one waits, so no deadlock: {:?}", op);
                            }
                        }
                    }
                    Op::Release { trx } => {
                        m.release_all(&mut ts[trx]);
                        model.parts.retain(|(t, _), _| *t != trx);
                        model.own.remove(&trx);
                    }
                    Op::Purge { key } => {
                        m.inherit_gap(IDX, &pkey(key), &pkey(key + 1));
                        let heirs: Vec<(usize, LockMode)> = model
                            .parts
                            .iter()
                            .filter(|((_, kk), p)| *kk == key && p.1.is_some())
                            .filter_map(|((t, _), p)| p.1.map(|g| (*t, g)))
                            .collect();
                        for (t, g) in heirs {
                            let p = model.parts.entry((t, key + 1)).or_default();
                            p.1 = Some(max(p.1, g));
                        }
                    }
                }
                for key in 0..=SUP {
                    prop_assert_eq!(m.holders(IDX, &pkey(key)), model.holders(key), "key {}", key);
                }
                for (t, locks) in ts.iter().enumerate() {
                    prop_assert_eq!(locks.len(), model.own.get(&t).map_or(0, |s| s.len()));
                }
                prop_assert_eq!(m.stats().current_waits, 0);
            }
            Ok(())
        })();
        for t in &mut ts {
            m.release_all(t);
        }
        result?;
        for key in 0..=SUP {
            prop_assert!(m.holders(IDX, &pkey(key)).is_empty());
        }
    }
}
