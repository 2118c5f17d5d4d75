//! Lesson 3 under load: concurrent appenders, group commit, a full log blocking appends
//! until a checkpoint, reservations (`free_check`) and what appends inside them never wait
//! for, and `innodb_flush_log_at_trx_commit`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use quire_engine::log::format::{MAX_PADDING, START_LSN};
use quire_engine::log::{FlushAtCommit, Log, LogConfig, MTR_RESERVATION};
use quire_engine::page::Lsn;
use quire_io::os::OsVfs;
use quire_io::{Vfs, VfsFile};

fn config(file_size: u64, buffer_size: u64) -> LogConfig {
    LogConfig {
        file_size,
        buffer_size,
        flush_at_commit: FlushAtCommit::Durable,
        direct: true,
        dsync: false,
        preallocate: false,
        background_flush: false,
        prewrite_ahead: 0,
    }
}

fn vfs() -> Arc<dyn Vfs> {
    Arc::new(OsVfs::new())
}

fn tagged(thread: u64, seq: u64, len: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(len.max(16));
    p.extend_from_slice(&thread.to_le_bytes());
    p.extend_from_slice(&seq.to_le_bytes());
    p.resize(len.max(16), (thread * 7 + seq) as u8);
    p
}

#[test]
fn concurrent_appenders_every_payload_once_in_contiguous_ranges() {
    // A 64 KiB ring, so appenders wait for ring space and wrap it many times.
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(16 << 20, 64 << 10)).expect("create"));
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 3000;
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let log = Arc::clone(&log);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                for s in 0..PER_THREAD {
                    let len = 16 + ((t * 131 + s * 17) % 900) as usize;
                    let r = log.append(&tagged(t, s, len)).expect("append");
                    if s % 100 == 0 {
                        log.write_up_to(r.end, false);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("appender");
    }
    log.flush_all();
    let stats = log.stats();
    assert_eq!(stats.flushed_lsn, stats.current_lsn);
    let mut seen = HashSet::new();
    let mut next_seq = [0u64; THREADS as usize];
    let mut expect_start = START_LSN;
    let mut padding = 0;
    for f in log.scan(START_LSN).expect("scan") {
        let f = f.expect("frame");
        padding += assert_contiguous_or_padded(expect_start, f.start);
        expect_start = f.end;
        let t = u64::from_le_bytes(f.payload[..8].try_into().expect("8"));
        let s = u64::from_le_bytes(f.payload[8..16].try_into().expect("8"));
        let len = 16 + ((t * 131 + s * 17) % 900) as usize;
        assert_eq!(f.payload, tagged(t, s, len), "payload intact");
        assert!(seen.insert((t, s)), "({t}, {s}) read twice");
        assert_eq!(next_seq[t as usize], s, "each thread's frames in its order");
        next_seq[t as usize] += 1;
    }
    assert_eq!(
        seen.len() as u64,
        THREADS * PER_THREAD,
        "every payload once"
    );
    // The final durable flush padded the O_DIRECT tail to a block boundary.
    padding += assert_contiguous_or_padded(expect_start, stats.current_lsn);
    assert_eq!(padding, stats.padding_bytes, "every gap is a padding frame");
    assert!(stats.log_waits > 0, "the small ring made appenders wait");
}

/// Frames are contiguous, except where a padding frame ends the log on an O_DIRECT block
/// boundary (at least a frame header, at most a block plus a header, ending 512-aligned).
/// Returns the gap.
fn assert_contiguous_or_padded(prev_end: Lsn, next_start: Lsn) -> u64 {
    assert!(next_start >= prev_end, "ranges are disjoint");
    let gap = next_start.0 - prev_end.0;
    assert!(
        gap == 0 || ((12..=MAX_PADDING).contains(&gap) && next_start.0.is_multiple_of(512)),
        "ranges are contiguous but for padding: {prev_end} .. {next_start}"
    );
    gap
}

#[test]
fn group_commit_syncs_fewer_than_commits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(64 << 20, 1 << 20)).expect("create"));
    const THREADS: usize = 8;
    const COMMITS: u64 = 150;
    let before = log.stats();
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS as u64)
        .map(|t| {
            let log = Arc::clone(&log);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                for s in 0..COMMITS {
                    let r = log.append(&tagged(t, s, 120)).expect("append");
                    log.commit_wait(r.end);
                    // Acknowledged only when durable.
                    assert!(log.flushed_lsn() >= r.end);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("committer");
    }
    let after = log.stats();
    let commits = after.commits - before.commits;
    let syncs = after.os_log_fsyncs - before.os_log_fsyncs;
    let padding = after.padding_bytes - before.padding_bytes;
    let log_bytes = after.current_lsn.0 - before.current_lsn.0;
    eprintln!(
        "group commit: {commits} commits, {syncs} syncs, {} writes; O_DIRECT={}: padding \
         {padding} bytes = {:.0} per commit, {:.1}% of {log_bytes} log bytes",
        after.log_writes,
        log.direct_io(),
        padding as f64 / commits as f64,
        100.0 * padding as f64 / log_bytes as f64
    );
    // At most one padding frame per write of a durable group.
    assert!(padding <= (after.log_writes - before.log_writes) * MAX_PADDING);
    assert_eq!(commits, THREADS as u64 * COMMITS);
    assert!(
        syncs < commits,
        "{syncs} syncs for {commits} commits: no group commit"
    );
}

/// A file whose syncs are slow (2 ms) and that counts writes issued while a sync runs.
#[derive(Debug)]
struct SlowSyncFile {
    inner: Arc<dyn VfsFile>,
    syncing: Arc<AtomicU64>,
    overlapped: Arc<AtomicU64>,
}

impl VfsFile for SlowSyncFile {
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> quire_io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> quire_io::Result<()> {
        if self.syncing.load(Ordering::SeqCst) > 0 {
            self.overlapped.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.write_all_at(buf, offset)
    }
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> quire_io::Result<()> {
        if self.syncing.load(Ordering::SeqCst) > 0 {
            self.overlapped.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.write_vectored_at(bufs, offset)
    }
    fn sync_data(&self) -> quire_io::Result<()> {
        self.syncing.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(2));
        let r = self.inner.sync_data();
        self.syncing.fetch_sub(1, Ordering::SeqCst);
        r
    }
    fn allocate(&self, offset: u64, len: u64) -> quire_io::Result<()> {
        self.inner.allocate(offset, len)
    }
    fn set_len(&self, len: u64) -> quire_io::Result<()> {
        self.inner.set_len(len)
    }
    fn len(&self) -> quire_io::Result<u64> {
        self.inner.len()
    }
    fn direct_io(&self) -> Option<quire_io::DirectIo> {
        self.inner.direct_io()
    }
}

#[derive(Debug, Default)]
struct SlowSyncVfs {
    os: OsVfs,
    syncing: Arc<AtomicU64>,
    overlapped: Arc<AtomicU64>,
}

impl Vfs for SlowSyncVfs {
    fn open(
        &self,
        path: &std::path::Path,
        opts: quire_io::OpenOptions,
    ) -> quire_io::Result<Arc<dyn VfsFile>> {
        Ok(Arc::new(SlowSyncFile {
            inner: self.os.open(path, opts)?,
            syncing: Arc::clone(&self.syncing),
            overlapped: Arc::clone(&self.overlapped),
        }))
    }
    fn delete(&self, path: &std::path::Path) -> quire_io::Result<()> {
        self.os.delete(path)
    }
    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> quire_io::Result<()> {
        self.os.rename(from, to)
    }
    fn exists(&self, path: &std::path::Path) -> quire_io::Result<bool> {
        self.os.exists(path)
    }
    fn list_dir(&self, dir: &std::path::Path) -> quire_io::Result<Vec<std::path::PathBuf>> {
        self.os.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &std::path::Path) -> quire_io::Result<()> {
        self.os.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &std::path::Path) -> quire_io::Result<()> {
        self.os.sync_dir(dir)
    }
}

#[test]
fn the_next_group_writes_while_the_previous_group_syncs() {
    // Write lock and flush lock are separate (as InnoDB's): with 2 ms syncs and 8
    // committers, some log writes must be issued while a sync is running, and one sync
    // still serves many commits.
    let dir = tempfile::tempdir().expect("tempdir");
    let slow = Arc::new(SlowSyncVfs::default());
    let v: Arc<dyn Vfs> = slow.clone();
    let log = Arc::new(Log::create(v, dir.path(), config(16 << 20, 1 << 20)).expect("create"));
    const THREADS: usize = 8;
    const COMMITS: u64 = 25;
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS as u64)
        .map(|t| {
            let log = Arc::clone(&log);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                for s in 0..COMMITS {
                    let r = log.append(&tagged(t, s, 100)).expect("append");
                    log.commit_wait(r.end);
                    assert!(log.flushed_lsn() >= r.end);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("committer");
    }
    let st = log.stats();
    let overlapped = slow.overlapped.load(Ordering::SeqCst);
    eprintln!(
        "{} commits, {} syncs, {} writes, {overlapped} of them during a sync",
        st.commits, st.os_log_fsyncs, st.log_writes
    );
    assert!(overlapped > 0, "no write overlapped a sync");
    assert!(st.os_log_fsyncs < st.commits, "group commit");
    // Everything committed is in the log, in order.
    let n = log.scan(START_LSN).expect("scan").count();
    assert_eq!(n as u64, THREADS as u64 * COMMITS);
}

#[test]
fn an_append_that_would_overwrite_unckeckpointed_log_blocks_until_a_checkpoint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(64 << 10, 64 << 10)).expect("create"));
    let asked = Arc::new(AtomicU64::new(0));
    {
        let asked = Arc::clone(&asked);
        log.set_pressure_hook(move |lsn| asked.store(lsn.0, Ordering::SeqCst));
    }
    let mut last = START_LSN;
    let p = vec![5u8; 1000];
    while log.free_space() > 2000 {
        last = log.append(&p).expect("append").end;
    }
    let ratio = log.fill_ratio();
    assert!(ratio > 0.9, "fill ratio {ratio}");
    let done = Arc::new(AtomicBool::new(false));
    let h = {
        let log = Arc::clone(&log);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            for _ in 0..3 {
                log.append(&[9u8; 1000]).expect("append");
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !done.load(Ordering::SeqCst),
        "the append must wait for a checkpoint"
    );
    assert!(
        asked.load(Ordering::SeqCst) > START_LSN.0,
        "the pressure hook rang"
    );
    assert!(log.stats().log_waits > 0);
    log.checkpoint(last).expect("checkpoint");
    let t0 = Instant::now();
    while !done.load(Ordering::SeqCst) {
        assert!(t0.elapsed() < Duration::from_secs(5), "still blocked");
        std::thread::sleep(Duration::from_millis(1));
    }
    h.join().expect("appender");
    assert!(log.checkpoint_age() <= log.capacity());
}

/// `n` threads that each take an ordinary reservation, report it, and wait for `go`; then
/// each appends a frame of `payload` bytes inside it (if any) and gives it back.
fn hold_reservations(
    log: &Arc<Log>,
    n: usize,
    payload: usize,
) -> (Arc<Barrier>, Vec<std::thread::JoinHandle<Lsn>>) {
    let granted = Arc::new(Barrier::new(n + 1));
    let go = Arc::new(Barrier::new(n + 1));
    let handles = (0..n)
        .map(|t| {
            let (log, granted, go) = (Arc::clone(log), Arc::clone(&granted), Arc::clone(&go));
            std::thread::spawn(move || {
                let mut r = log.free_check(MTR_RESERVATION);
                granted.wait();
                go.wait();
                let end = if payload > 0 {
                    let p = tagged(t as u64, 0, payload);
                    log.append_reserved(&p, &mut r).expect("append").end
                } else {
                    log.current_lsn()
                };
                drop(r);
                end
            })
        })
        .collect();
    granted.wait();
    (go, handles)
}

/// A thread that takes an ordinary reservation and then sets `done`.
fn try_reservation(log: &Arc<Log>, done: &Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let (log, done) = (Arc::clone(log), Arc::clone(done));
    std::thread::spawn(move || {
        let r = log.free_check(MTR_RESERVATION);
        done.store(true, Ordering::SeqCst);
        drop(r);
    })
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Issue 14: `free_check` reserves, so mini-transactions that pass it together cannot
/// overrun the log; appends inside their reservations then finish with no checkpoint at
/// all, and a reservation given back lets a waiting one through, again with no checkpoint.
#[test]
fn reservations_are_granted_only_while_they_fit_and_appends_inside_them_never_wait() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(1 << 20, 1 << 20)).expect("create"));
    // Grants stop at capacity − 8 KiB of slack − the overdraft (a largest frame beyond one
    // reservation); each takes a reservation plus a padding allowance.
    let max_frame = log.max_payload() + 12;
    let grant_room = log.capacity() - 8192 - (max_frame - MTR_RESERVATION);
    let n = (grant_room / (MTR_RESERVATION + MAX_PADDING)) as usize;
    assert!(n >= 4, "{n} reservations fit");
    let (go, holders) = hold_reservations(&log, n, 60 << 10);
    let done = Arc::new(AtomicBool::new(false));
    let waiter = try_reservation(&log, &done);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !done.load(Ordering::SeqCst),
        "reservation {} past the limit",
        n + 1
    );
    assert!(log.stats().log_waits > 0);
    let ckpt = log.checkpoint_lsn();
    // The frames fill most of the log, and none waits for a checkpoint: their space was
    // reserved before the log filled.
    go.wait();
    for h in holders {
        h.join().expect("holder");
    }
    wait_until("a reservation given back lets the waiter through", || {
        done.load(Ordering::SeqCst)
    });
    waiter.join().expect("waiter");
    assert_eq!(log.checkpoint_lsn(), ckpt, "nothing needed a checkpoint");
    assert_eq!(log.stats().reservation_overruns, 0);
    assert!(log.checkpoint_age() <= log.capacity());
}

/// A frame larger than its reservation (an mtr that asked `free_check` for too little) is
/// not left waiting for a checkpoint while its latches hold the checkpoint back: it takes
/// the excess from the overdraft the grants keep free, and is counted.
#[test]
fn an_append_past_its_reservation_draws_on_the_overdraft_without_waiting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(1 << 20, 1 << 20)).expect("create"));
    let max_frame = log.max_payload() + 12;
    let grant_room = log.capacity() - 8192 - (max_frame - MTR_RESERVATION);
    let n = (grant_room / (MTR_RESERVATION + MAX_PADDING)) as usize;
    // Every reservation the log grants is taken: n − 1 by helpers, one here.
    let (go, holders) = hold_reservations(&log, n - 1, 0);
    let mut mine = log.free_check(MTR_RESERVATION);
    let done = Arc::new(AtomicBool::new(false));
    let waiter = try_reservation(&log, &done);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!done.load(Ordering::SeqCst), "the log is full for grants");
    let ckpt = log.checkpoint_lsn();
    let big = vec![7u8; log.max_payload() as usize];
    let t0 = Instant::now();
    let r = log.append_reserved(&big, &mut mine).expect("append");
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(r.end.0 - r.start.0, max_frame);
    assert_eq!(log.stats().reservation_overruns, 1);
    assert_eq!(log.checkpoint_lsn(), ckpt, "nothing needed a checkpoint");
    assert!(log.checkpoint_age() <= log.capacity());
    drop(mine);
    go.wait();
    for h in holders {
        h.join().expect("holder");
    }
    wait_until("reservations given back let the waiter through", || {
        done.load(Ordering::SeqCst)
    });
    waiter.join().expect("waiter");
}

#[test]
fn appenders_and_a_checkpointer_cycle_a_small_log_many_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(Log::create(vfs(), dir.path(), config(64 << 10, 64 << 10)).expect("create"));
    let stop = Arc::new(AtomicBool::new(false));
    let ckpt = {
        let log = Arc::clone(&log);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                // Nothing is dirty in this test: the written LSN is a frame boundary.
                log.flush_all();
                log.checkpoint(log.written_lsn()).expect("checkpoint");
                std::thread::sleep(Duration::from_micros(300));
            }
        })
    };
    let handles: Vec<_> = (0..3u64)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for s in 0..2000 {
                    log.append(&tagged(t, s, 200)).expect("append");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("appender");
    }
    stop.store(true, Ordering::SeqCst);
    ckpt.join().expect("checkpointer");
    let cap = log.capacity();
    assert!(log.current_lsn().0 > START_LSN.0 + 10 * cap, "many laps");
    let from = log.checkpoint_lsn();
    log.flush_all();
    let n = log.scan(from).expect("scan").filter(|f| f.is_ok()).count();
    let end = log.current_lsn();
    drop(log);
    let log = Log::open(vfs(), dir.path(), config(64 << 10, 64 << 10)).expect("reopen");
    assert_eq!(log.current_lsn(), end);
    let m = log.scan(from).expect("scan").count();
    assert_eq!(n, m);
}

#[test]
fn flush_at_commit_policies_and_the_once_a_second_thread() {
    for (policy, written_at_commit) in [
        (FlushAtCommit::WriteOnly, true),
        (FlushAtCommit::Lazy, false),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = config(1 << 20, 64 << 10);
        cfg.flush_at_commit = policy;
        cfg.background_flush = true;
        let log = Log::create(vfs(), dir.path(), cfg).expect("create");
        assert_eq!(log.flush_at_commit(), policy);
        let r = log.append(b"commit").expect("append");
        log.commit_wait(r.end);
        assert_eq!(log.written_lsn() >= r.end, written_at_commit, "{policy:?}");
        assert!(
            log.flushed_lsn() < r.end,
            "{policy:?}: not synced at commit"
        );
        let t0 = Instant::now();
        while log.flushed_lsn() < r.end {
            assert!(
                t0.elapsed() < Duration::from_secs(3),
                "{policy:?}: never synced"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        log.set_flush_at_commit(FlushAtCommit::Durable);
        let r = log.append(b"durable").expect("append");
        log.commit_wait(r.end);
        assert!(log.flushed_lsn() >= r.end);
        // Shutdown stops and joins the thread.
        let t0 = Instant::now();
        log.shutdown();
        assert!(t0.elapsed() < Duration::from_millis(900));
    }
    assert_eq!(
        FlushAtCommit::from_innodb(2),
        Some(FlushAtCommit::WriteOnly)
    );
    assert_eq!(FlushAtCommit::from_innodb(3), None);
    let _ = Lsn::ZERO;
}
