use std::path::Path;
use std::sync::Arc;

use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

use super::*;
use crate::config::Config;

fn config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 256 * 4096,
        log_file_size: 1 << 20,
        log_buffer_size: 64 << 10,
        ..Config::default()
    }
}

/// An engine whose system space has page 1 in use, as the catalog leaves it.
fn engine(vfs: &SimVfs) -> Engine {
    let e = Engine::open(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new("/d"),
        config(),
    )
    .expect("open engine");
    if !e.page_is_used(sys(PageNo(1))).expect("used") {
        let mut mtr = e.mtr();
        let p = e.alloc_page(&mut mtr, SpaceId::SYSTEM).expect("alloc");
        assert_eq!(p, PageNo(1));
        mtr.create_page(sys(p), PageType::Raw).expect("create");
        mtr.commit().expect("commit");
    }
    e
}

fn used(e: &Engine) -> usize {
    e.used_pages(SpaceId::SYSTEM).expect("used pages").len()
}

#[test]
fn records_round_trip_across_pages_and_come_back_newest_first() {
    let vfs = SimVfs::new(1);
    let e = engine(&vfs);
    let (u, rec) = UndoSys::open(&e).expect("undo");
    assert!(rec.active.is_empty());
    let base = used(&e);
    let mut t = TrxUndo::new(TrxId(7));
    let mut ptrs = Vec::new();
    for i in 0..200u64 {
        let kind = if i % 3 == 0 {
            UndoKind::Insert
        } else {
            UndoKind::Update
        };
        let payload = vec![i as u8; (i as usize * 7) % 900];
        let (p, _) = u
            .append(&e, &mut t, kind, 40 + i, &payload)
            .expect("append");
        assert_eq!(p.is_insert(), kind == UndoKind::Insert);
        ptrs.push((p, kind, i, payload));
    }
    for (p, kind, i, payload) in &ptrs {
        let r = u.read(&e, *p).expect("read");
        assert_eq!(
            (r.kind, r.undo_no, r.table_id, &r.payload),
            (*kind, *i, 40 + i, payload)
        );
    }
    let rev = u.records_rev(&e, &t).expect("records");
    assert_eq!(rev.len(), 200);
    assert!(rev.windows(2).all(|w| w[0].1.undo_no > w[1].1.undo_no));
    assert_eq!(rev[0].0, ptrs[199].0);
    assert!(used(&e) > base + 10, "the logs span pages");
    assert!(u.verify(&e).expect("verify").is_empty());
    u.discard(&e, t).expect("discard");
    assert_eq!(
        used(&e),
        base + 2,
        "everything but the rseg header and its spare page is free again"
    );
    assert!(u.verify(&e).expect("verify").is_empty());
}

#[test]
fn truncate_drops_the_later_records_and_appends_reuse_the_space() {
    let vfs = SimVfs::new(2);
    let e = engine(&vfs);
    let (u, _) = UndoSys::open(&e).expect("undo");
    let mut t = TrxUndo::new(TrxId(9));
    for i in 0..60u64 {
        u.append(&e, &mut t, UndoKind::Update, 1, &vec![1u8; 300])
            .expect("append");
        assert_eq!(t.next_undo_no(), i + 1);
    }
    u.truncate(&e, &mut t, 10).expect("truncate");
    assert_eq!(t.next_undo_no(), 10);
    let recs = u.records_rev(&e, &t).expect("records");
    assert_eq!(recs.len(), 10);
    assert_eq!(recs[0].1.undo_no, 9);
    u.append(&e, &mut t, UndoKind::Update, 2, b"after")
        .expect("append");
    let recs = u.records_rev(&e, &t).expect("records");
    assert_eq!((recs[0].1.undo_no, recs[0].1.table_id), (10, 2));
    assert!(u.verify(&e).expect("verify").is_empty());
    u.truncate(&e, &mut t, 0).expect("truncate all");
    assert!(u.records_rev(&e, &t).expect("records").is_empty());
    u.discard(&e, t).expect("discard");
}

#[test]
fn commit_frees_insert_logs_and_queues_update_logs_in_history_order() {
    let vfs = SimVfs::new(3);
    let e = engine(&vfs);
    let (u, _) = UndoSys::open(&e).expect("undo");
    let mut t = TrxUndo::new(TrxId(1));
    u.append(&e, &mut t, UndoKind::Insert, 1, b"k")
        .expect("append");
    u.commit(&e, t, 1).expect("commit");
    assert_eq!(
        u.history_len(),
        0,
        "an insert-only transaction leaves no history"
    );
    // Two rsegs, commit numbers interleaved.
    for (id, no) in [(2u64, 2u64), (130, 3), (258, 4), (3, 5)] {
        let mut t = TrxUndo::new(TrxId(id));
        u.append(&e, &mut t, UndoKind::Update, 1, &id.to_le_bytes())
            .expect("append");
        u.append(&e, &mut t, UndoKind::Insert, 1, b"x")
            .expect("append");
        u.commit(&e, t, no).expect("commit");
    }
    assert_eq!(u.history_len(), 4);
    let all = u.history_batch(&e, 10, u64::MAX).expect("batch");
    assert_eq!(
        all.iter().map(|h| h.trx_no).collect::<Vec<_>>(),
        vec![2, 3, 4, 5]
    );
    let below = u.history_batch(&e, 10, 4).expect("batch");
    assert_eq!(below.len(), 2);
    let recs = u.history_records(&e, &all[0]).expect("records");
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].1.payload, 2u64.to_le_bytes());
    let before = used(&e);
    for h in &all {
        u.history_remove(&e, h).expect("remove");
    }
    assert_eq!(u.history_len(), 0);
    // Logs 2, 130 and 258 shared one header page of rseg 2 (each committed log's page
    // went to the next transaction of the rseg); log 3 had its own in rseg 3.
    assert_eq!(used(&e), before - 2);
    assert!(u.verify(&e).expect("verify").is_empty());
}

#[test]
fn active_logs_and_history_survive_a_restart() {
    let vfs = SimVfs::new(4);
    let e = engine(&vfs);
    let (u, _) = UndoSys::open(&e).expect("undo");
    u.persist_max_trx_id(&e, TrxId(500)).expect("persist");
    let mut done = TrxUndo::new(TrxId(11));
    u.append(&e, &mut done, UndoKind::Update, 3, b"old")
        .expect("append");
    let lsn = u.commit(&e, done, 1).expect("commit").expect("lsn");
    e.commit_wait(lsn);
    let mut open = TrxUndo::new(TrxId(12));
    for i in 0..30u8 {
        let kind = if i % 2 == 0 {
            UndoKind::Insert
        } else {
            UndoKind::Update
        };
        u.append(&e, &mut open, kind, 3, &[i; 200]).expect("append");
    }
    let (p, l) = u
        .append(&e, &mut open, UndoKind::Update, 3, b"last")
        .expect("append");
    e.commit_wait(l);
    e.kill();
    let img = vfs.crash_with(CrashMode::DropAll).0;
    let e = engine(&img);
    let (u, rec) = UndoSys::open(&e).expect("reopen");
    assert!(rec.max_trx_id >= TrxId(500));
    assert_eq!(rec.max_trx_no, 1);
    assert_eq!(u.history_len(), 1);
    assert_eq!(rec.active.len(), 1);
    let t = &rec.active[0].undo;
    assert_eq!(t.trx(), TrxId(12));
    assert_eq!(t.next_undo_no(), 31);
    let recs = u.records_rev(&e, t).expect("records");
    assert_eq!(recs.len(), 31);
    assert_eq!(recs[0].0, p);
    assert_eq!(recs[0].1.payload, b"last");
    assert!(u.verify(&e).expect("verify").is_empty());
}

#[test]
fn a_crash_at_any_step_leaves_the_undo_system_consistent() {
    // Twelve rsegs, one transaction each.
    crash_at_any_step(8, |id| id);
}

#[test]
fn a_crash_at_any_step_with_spare_pages_reused_leaves_the_undo_system_consistent() {
    // Two rsegs (ids alternate between rseg 0 and 1): each transaction's first log starts
    // in the page the one before it in its rseg left as a spare (invariant 7).
    crash_at_any_step(9, |id| id % 2 + 128 * id);
}

/// A run of appends, commits and history removals of transactions `trx_of(1..=12)`
/// (increasing); crash at every I/O step.
fn crash_at_any_step(seed: u64, trx_of: fn(u64) -> u64) {
    let run = |e: &Engine, u: &UndoSys, alive: &dyn Fn() -> bool| -> u64 {
        let mut committed = 0;
        for id in 1..=12u64 {
            let mut t = TrxUndo::new(TrxId(trx_of(id)));
            for i in 0..(id % 4 + 1) {
                let kind = if i % 2 == 0 {
                    UndoKind::Update
                } else {
                    UndoKind::Insert
                };
                if u.append(e, &mut t, kind, id, &vec![id as u8; 700]).is_err() {
                    return committed;
                }
            }
            match u.commit(e, t, id) {
                Ok(Some(l)) => e.commit_wait(l),
                Ok(None) => {}
                Err(_) => return committed,
            }
            if !alive() {
                return committed;
            }
            committed = id;
            if id % 3 == 0 {
                if let Ok(b) = u.history_batch(e, 1, u64::MAX) {
                    if let Some(h) = b.first() {
                        if u.history_remove(e, h).is_err() {
                            return committed;
                        }
                    }
                }
            }
        }
        committed
    };
    let vfs = SimVfs::new(seed);
    let e = engine(&vfs);
    let (u, _) = UndoSys::open(&e).expect("undo");
    let start = vfs.op_count();
    run(&e, &u, &|| true);
    e.kill();
    let end = vfs.op_count();
    let step = ((end - start) / 80).max(1);
    let mut point = start;
    let modes = [
        CrashMode::Random,
        CrashMode::DropAll,
        CrashMode::TearAll,
        CrashMode::KeepAll,
    ];
    let mut i = 0;
    while point <= end {
        let vfs = SimVfs::new(seed);
        let e = engine(&vfs);
        let (u, _) = UndoSys::open(&e).expect("undo");
        vfs.set_crash_point(point);
        let committed = run(&e, &u, &|| !vfs.is_frozen());
        e.kill();
        let img = vfs.crash_with(modes[i % 4]).0;
        i += 1;
        let e = engine(&img);
        let (u, rec) = UndoSys::open(&e).unwrap_or_else(|err| panic!("point {point}: {err}"));
        let problems = u.verify(&e).expect("verify");
        assert!(problems.is_empty(), "point {point}: {problems:?}");
        // Every acknowledged commit is in the history (or was purged: ids 3, 6, ...
        // removed in order), and no log is both active and in the history.
        let hist: Vec<u64> = u
            .history_batch(&e, 100, u64::MAX)
            .expect("batch")
            .iter()
            .map(|h| h.trx_id.0)
            .collect();
        // At most one log was purged per third commit acknowledged, oldest first: every
        // later acknowledged commit must still be in the history.
        for id in committed / 3 + 1..=committed {
            assert!(
                hist.contains(&trx_of(id)),
                "point {point}: commit {id} lost ({hist:?})"
            );
        }
        assert!(
            rec.active
                .iter()
                .all(|a| committed == 0 || a.undo.trx().0 > trx_of(committed)),
            "point {point}"
        );
        // Each page is used exactly once: undo pages are all reachable.
        let undo_pages = u.pages(&e).expect("pages");
        let mut sorted = undo_pages.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), undo_pages.len(), "point {point}");
        let used = e.used_pages(SpaceId::SYSTEM).expect("used");
        for p in &undo_pages {
            assert!(used.contains(p), "point {point}: undo page {p} is free");
        }
        // Page 0 (space header) and 1 (the stand-in catalog) are the only others.
        assert_eq!(
            used.len(),
            undo_pages.len() + 2,
            "point {point}: leaked or lost pages"
        );
        e.kill();
        point += step;
    }
}

#[test]
fn a_freed_header_page_is_kept_as_the_rsegs_spare_and_survives_a_restart() {
    let vfs = SimVfs::new(10);
    let e = engine(&vfs);
    let (u, _) = UndoSys::open(&e).expect("undo");
    let base = used(&e);
    // Rseg 5: an insert-only transaction takes a page and leaves it as the spare.
    let mut t = TrxUndo::new(TrxId(5));
    let (first, _) = u
        .append(&e, &mut t, UndoKind::Insert, 1, b"a")
        .expect("append");
    u.commit(&e, t, 1).expect("commit");
    assert_eq!(used(&e), base + 2, "the rseg header and the spare");
    // Every later transaction of the rseg, of either kind, starts in that page; purge
    // gives it back. No page is allocated.
    for k in 1..50u64 {
        let mut t = TrxUndo::new(TrxId(5 + 128 * k));
        let kind = if k % 2 == 0 {
            UndoKind::Insert
        } else {
            UndoKind::Update
        };
        let (p, _) = u.append(&e, &mut t, kind, 1, b"b").expect("append");
        assert_eq!(p.page_no(), first.page_no(), "transaction {k}");
        u.commit(&e, t, 1 + k).expect("commit");
        for h in u.history_batch(&e, 10, u64::MAX).expect("batch") {
            u.history_remove(&e, &h).expect("remove");
        }
        assert_eq!(used(&e), base + 2, "transaction {k}");
        assert!(u.verify(&e).expect("verify").is_empty());
    }
    // A rollback leaves it as the spare too.
    let mut t = TrxUndo::new(TrxId(5 + 128 * 50));
    u.append(&e, &mut t, UndoKind::Update, 1, b"c")
        .expect("append");
    let lsn = u.discard(&e, t).expect("discard").expect("lsn");
    e.commit_wait(lsn);
    assert_eq!(used(&e), base + 2);
    // After a crash the spare is still named, so it is neither leaked nor lost.
    e.kill();
    let img = vfs.crash_with(CrashMode::DropAll).0;
    let e = engine(&img);
    let (u, rec) = UndoSys::open(&e).expect("reopen");
    assert!(rec.active.is_empty());
    assert!(u.verify(&e).expect("verify").is_empty());
    assert!(u.pages(&e).expect("pages").contains(&first.page_no()));
    assert_eq!(used(&e), base + 2);
    let mut t = TrxUndo::new(TrxId(5 + 128 * 51));
    let (p, _) = u
        .append(&e, &mut t, UndoKind::Insert, 1, b"d")
        .expect("append");
    assert_eq!(p.page_no(), first.page_no());
    assert_eq!(used(&e), base + 2);
    // Meanwhile the page is an active log's, not a spare: a second insert-only
    // transaction of the rseg takes a new page and, at its commit, the rseg keeps one
    // spare and frees the other.
    let mut t2 = TrxUndo::new(TrxId(5 + 128 * 52));
    u.append(&e, &mut t2, UndoKind::Insert, 1, b"e")
        .expect("append");
    assert_eq!(used(&e), base + 3);
    u.commit(&e, t, 100).expect("commit");
    u.commit(&e, t2, 101).expect("commit");
    assert_eq!(used(&e), base + 2);
    assert!(u.verify(&e).expect("verify").is_empty());
}
