//! The pre-writer (docs/redo-log.md, "Pre-writing the first lap"): zeros written ahead of
//! the log during a file's first lap, on a real file system, never over a frame.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_engine::log::format::START_LSN;
use quire_engine::log::{FlushAtCommit, Log, LogConfig};
use quire_engine::page::Lsn;
use quire_io::os::OsVfs;
use quire_io::sim::SimVfs;
use quire_io::{OpenOptions, Vfs, VfsFile};
use rand::{Rng, SeedableRng};

fn config(file_size: u64, direct: bool, ahead: u64) -> LogConfig {
    LogConfig {
        file_size,
        buffer_size: 1 << 20,
        flush_at_commit: FlushAtCommit::Durable,
        direct,
        dsync: false,
        preallocate: true,
        background_flush: false,
        prewrite_ahead: ahead,
    }
}

fn os() -> Arc<dyn Vfs> {
    Arc::new(OsVfs::new())
}

/// The OS file system, except that a write of 64 KiB or more of zeros (the pre-writer's
/// chunks) sleeps 20 ms before it starts: a log write racing a chunk would
/// then land first and be overwritten by its zeros.
/// With `fail`, such writes fail instead, as on a full disk.
#[derive(Debug)]
struct SlowChunks {
    os: OsVfs,
    fail: bool,
}

#[derive(Debug)]
struct SlowFile(Arc<dyn VfsFile>, bool);

impl Vfs for SlowChunks {
    fn open(&self, path: &Path, opts: OpenOptions) -> quire_io::Result<Arc<dyn VfsFile>> {
        Ok(Arc::new(SlowFile(self.os.open(path, opts)?, self.fail)))
    }
    fn delete(&self, path: &Path) -> quire_io::Result<()> {
        self.os.delete(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> quire_io::Result<()> {
        self.os.rename(from, to)
    }
    fn exists(&self, path: &Path) -> quire_io::Result<bool> {
        self.os.exists(path)
    }
    fn list_dir(&self, dir: &Path) -> quire_io::Result<Vec<PathBuf>> {
        self.os.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> quire_io::Result<()> {
        self.os.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> quire_io::Result<()> {
        self.os.sync_dir(dir)
    }
    fn first_writes_cost_more(&self) -> bool {
        true
    }
}

impl VfsFile for SlowFile {
    fn path(&self) -> &Path {
        self.0.path()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> quire_io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> quire_io::Result<()> {
        if buf.len() >= 64 << 10 && buf.iter().all(|&b| b == 0) {
            if self.1 {
                return Err(quire_io::IoError::new(
                    "write",
                    self.0.path(),
                    quire_io::ErrorKind::NoSpace,
                    "no space left on device (injected)",
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.0.write_all_at(buf, offset)
    }
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> quire_io::Result<()> {
        self.0.write_vectored_at(bufs, offset)
    }
    fn sync_data(&self) -> quire_io::Result<()> {
        self.0.sync_data()
    }
    fn allocate(&self, offset: u64, len: u64) -> quire_io::Result<()> {
        self.0.allocate(offset, len)
    }
    fn set_len(&self, len: u64) -> quire_io::Result<()> {
        self.0.set_len(len)
    }
    fn len(&self) -> quire_io::Result<u64> {
        self.0.len()
    }
    fn direct_io(&self) -> Option<quire_io::DirectIo> {
        self.0.direct_io()
    }
}

fn payload(thread: usize, i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (thread * 101 + i * 31 + j * 7) as u8 | 1)
        .collect()
}

/// Appends `per_thread` frames from each of `threads` threads (random lengths, a durable
/// commit every few frames); returns every frame's start and payload.
fn append_concurrently(
    log: &Arc<Log>,
    threads: usize,
    per_thread: usize,
    seed: u64,
) -> Vec<(Lsn, Vec<u8>)> {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = Arc::clone(log);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed + t as u64);
                let mut out = Vec::with_capacity(per_thread);
                for i in 0..per_thread {
                    let p = payload(t, i, rng.gen_range(40..3000));
                    let r = log.append(&p).expect("append");
                    if rng.gen_range(0..4) == 0 {
                        log.commit_wait(r.end);
                    }
                    out.push((r.start, p));
                }
                out
            })
        })
        .collect();
    let mut all: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("appender"))
        .collect();
    all.sort_by_key(|(s, _)| *s);
    all
}

fn recovered(dir: &Path, cfg: &LogConfig) -> Vec<(Lsn, Vec<u8>)> {
    Log::open_for_recovery(os(), dir, cfg.clone())
        .expect("open for recovery")
        .map(|f| {
            let f = f.expect("frame");
            (f.start, f.payload)
        })
        .collect()
}

/// Reopens the log and checks that it holds exactly the frames `written`, intact and in order.
fn assert_read_back(dir: &Path, cfg: &LogConfig, written: &[(Lsn, Vec<u8>)], what: &str) {
    let got = recovered(dir, cfg);
    assert_eq!(
        got.len(),
        written.len(),
        "every frame is read back ({what})"
    );
    for ((ls, lp), (rs, rp)) in written.iter().zip(&got) {
        assert_eq!(ls, rs, "frame order ({what})");
        assert!(lp == rp, "the frame at {ls} is intact ({what})");
    }
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn zeros_written_ahead_never_land_on_a_frame() {
    // A window of 128 KiB and 1 MiB chunks that start 64 KiB past the log: the appenders
    // keep running into the chunk being written, so the writer must wait for it (or the
    // zeros would overwrite their frames), in both I/O modes.
    for direct in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(32 << 20, direct, 128 << 10);
        let slow: Arc<dyn Vfs> = Arc::new(SlowChunks {
            os: OsVfs::new(),
            fail: false,
        });
        let log = Arc::new(Log::create(slow, dir.path(), cfg.clone()).expect("create"));
        let written = append_concurrently(&log, 4, 2500, 7);
        let st = log.stats();
        assert!(
            st.prewritten_bytes >= 1 << 20,
            "the pre-writer ran ({} bytes)",
            st.prewritten_bytes
        );
        Arc::into_inner(log).expect("sole owner").shutdown();
        assert_read_back(dir.path(), &cfg, &written, &format!("direct {direct}"));
    }
}

#[test]
fn the_first_lap_is_prewritten_once_then_never_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cap: u64 = 2 << 20;
    let cfg = config(cap, true, 8 << 20);
    let log = Log::create(os(), dir.path(), cfg.clone()).expect("create");
    // From 64 KiB past the start to the end of the lap, in 4 KiB blocks.
    let first = (START_LSN.0 + (64 << 10)).div_ceil(4096) * 4096;
    let lap = START_LSN.0 + cap - first;
    wait_for("the lap to be prewritten", || {
        log.stats().prewritten_bytes == lap
    });
    // Round the circle twice, checkpointing as we go: nothing more is prewritten.
    let mut i = 0;
    while log.current_lsn().0 < START_LSN.0 + 2 * cap {
        let r = log.append(&payload(0, i, 2000)).expect("append");
        log.commit_wait(r.end);
        log.checkpoint(r.end).expect("checkpoint");
        i += 1;
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(log.stats().prewritten_bytes, lap);
    log.shutdown();

    // Reopened after the circle came round: the lap is over, nothing to write.
    let log = Log::open(os(), dir.path(), cfg).expect("reopen");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(log.stats().prewritten_bytes, 0);
    log.shutdown();
}

#[test]
fn a_reopened_or_resized_log_prewrites_from_its_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(16 << 20, true, 1 << 20);
    let log = Arc::new(Log::create(os(), dir.path(), cfg.clone()).expect("create"));
    let mut written = append_concurrently(&log, 2, 500, 11);
    Arc::into_inner(log).expect("sole owner").shutdown();

    // Reopened in the first lap: zeros ahead of the recovered end, none over it.
    let log = Arc::new(Log::open(os(), dir.path(), cfg.clone()).expect("reopen"));
    let end = log.current_lsn().0;
    wait_for("the window ahead of the reopened log", || {
        log.stats().prewritten_bytes >= 1 << 20
    });
    written.extend(append_concurrently(&log, 2, 500, 12));

    // A resize starts the new file's first lap, ahead of the copied log.
    let before = log.stats().prewritten_bytes;
    log.resize(24 << 20).expect("resize");
    wait_for("the window ahead of the resized log", || {
        log.stats().prewritten_bytes > before
    });
    written.extend(append_concurrently(&log, 2, 500, 13));
    Arc::into_inner(log).expect("sole owner").shutdown();

    let cfg = LogConfig {
        file_size: 24 << 20,
        ..cfg
    };
    assert!(end > START_LSN.0);
    assert_read_back(dir.path(), &cfg, &written, "reopened and resized");
}

#[test]
fn the_simulator_gets_no_prewriter() {
    // SimVfs models no extent conversion: zeros would only cost its memory.
    let v: Arc<dyn Vfs> = Arc::new(SimVfs::new(5));
    let dir = Path::new("/sim/log");
    v.create_dir_all(dir).expect("mkdir");
    let log = Log::create(v, dir, config(8 << 20, true, 4 << 20)).expect("create");
    let r = log.append(&payload(0, 0, 100)).expect("append");
    log.commit_wait(r.end);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(log.stats().prewritten_bytes, 0);
    log.shutdown();
}

#[test]
fn a_failed_zero_write_stops_the_prewriter_not_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(16 << 20, true, 1 << 20);
    let failing: Arc<dyn Vfs> = Arc::new(SlowChunks {
        os: OsVfs::new(),
        fail: true,
    });
    let log = Arc::new(Log::create(failing, dir.path(), cfg.clone()).expect("create"));
    let written = append_concurrently(&log, 2, 1000, 17);
    assert_eq!(log.stats().prewritten_bytes, 0, "no chunk was written");
    Arc::into_inner(log).expect("sole owner").shutdown();
    assert_read_back(dir.path(), &cfg, &written, "zero writes failing");
}
