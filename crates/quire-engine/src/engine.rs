//! # The engine: one data directory, opened, recovered and run
//!
//! `Engine` ties the layers together: the redo log, the tablespaces, the buffer pool with its
//! page cleaner, and a checkpointer thread that flushes adaptively by checkpoint age
//! (lesson 2) and moves the checkpoint. It is the API the layers above (tables, transactions,
//! SQL) and embedding applications use.
//!
//! Data directory layout (docs/data-dir.md):
//!
//! ```text
//! quire-data/
//!   redo.log        the redo log
//!   dblwr.qdw       the doublewrite buffer (docs/doublewrite.md)
//!   system.qsp      space 0
//!   <name>.qsp      other spaces
//! ```
//!
//! Invariants:
//! 1. Nothing touches a page before recovery has finished.
//! 2. A checkpoint at LSN c is written only after every page change below c is on disk, the
//!    files created, renamed or deleted below c are durable in their directory, and every
//!    file extended below c has its size synced (so recovery never needs a file operation from
//!    before the checkpoint).
//! 3. A file is created before the mtr that logs its FILE_CREATE commits (a crash in between
//!    leaves an unformatted file, page 0 all zeros, that the next open removes; a file
//!    whose page 0 was written but names no space is damage, never removed), and deleted
//!    only after the mtr that logs its FILE_DELETE is durable.
//! 4. An id that must never be reused (space id, table id) is below the high-water mark in
//!    the dictionary header (system space page 0, docs/space-format.md) before it is written
//!    anywhere: the mark is raised by an mtr that commits before the first mtr that writes
//!    the id, so redo makes the mark durable no later than any use of the id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use quire_io::{OpenOptions, Vfs};

use crate::alloc::format::{DictHeader, SpaceHeader, OFF_DICT_HEADER};
use crate::alloc::{AllocError, Allocator, MtrPages};
use crate::buffer::{BufferConfig, BufferError, BufferPool, PageCleaner, WalGate};
use crate::config::{Config, FlushMethod};
use crate::doublewrite::{Doublewrite, DoublewriteStats};
use crate::log::{Log, LogConfig, LogError, LOG_FILE, MTR_RESERVATION};
use crate::mtr::record::Record;
use crate::mtr::{Mtr, MtrError};
use crate::page::{Lsn, PageId, PageNo, PageSize, PageType, SpaceId};
use crate::recovery::{self, RecoveryError, RecoveryStats, SpaceFiles};
use crate::space::{Space, SpaceError, Spaces};

/// File name suffix of tablespace files.
pub const SPACE_SUFFIX: &str = "qsp";
/// The system space's file.
pub const SYSTEM_FILE: &str = "system.qsp";
/// Initial size of a new space, in pages (one extent).
pub const INITIAL_SPACE_PAGES: u32 = 64;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error(transparent)]
    Space(#[from] SpaceError),
    #[error(transparent)]
    Mtr(#[from] MtrError),
    #[error(transparent)]
    Alloc(#[from] AllocError),
    #[error("recovery failed: {0}")]
    Recovery(#[from] RecoveryError),
    #[error(transparent)]
    Io(#[from] quire_io::IoError),
    #[error("{}: {what}", path.display())]
    DataDir { path: PathBuf, what: String },
    #[error("no space named '{0}'")]
    NoSuchSpace(String),
    #[error("a space named '{0}' exists already")]
    SpaceExists(String),
    #[error("invalid configuration: {0}")]
    Config(String),
}

pub type Result<T> = std::result::Result<T, EngineError>;

impl EngineError {
    /// A file could not grow: the disk is full (or a space reached its largest size).
    pub fn is_disk_full(&self) -> bool {
        match self {
            EngineError::Log(e) => e.is_disk_full(),
            EngineError::Buffer(e) => e.is_disk_full(),
            EngineError::Space(e) => e.is_disk_full(),
            EngineError::Mtr(e) => e.is_disk_full(),
            EngineError::Alloc(e) => e.is_disk_full(),
            EngineError::Io(e) => e.kind == quire_io::ErrorKind::NoSpace,
            _ => false,
        }
    }
}

/// The write-ahead rule for the buffer pool, once the log exists. During recovery there is
/// no log object yet, and nothing to wait for: every redo being applied was read from disk.
#[derive(Default)]
struct LogGate {
    log: OnceLock<Arc<Log>>,
}

impl WalGate for LogGate {
    fn flush_up_to(&self, lsn: Lsn) {
        if let Some(log) = self.log.get() {
            log.write_up_to(lsn, true);
        }
    }
    fn durable_lsn(&self) -> Option<Lsn> {
        self.log.get().map(|l| l.flushed_lsn())
    }
}

/// File operations since the last checkpoint that must be made durable before the next one
/// (invariant 2). A created file is counted *before* the mtr that logs FILE_CREATE commits,
/// so a checkpoint that reads a current LSN past that mtr also sees the count. A delete or
/// rename happens after its mtr commits: from before that commit until the change is made
/// and counted it is *in flight*, with a lower bound of its LSN, and no checkpoint passes
/// that bound. A count is marked synced only after a directory sync that began after it
/// succeeded.
#[derive(Default)]
struct PendingFileSync {
    /// Directory changes so far, and how many of them a successful sync covered.
    dir_changes: u64,
    dir_synced: u64,
    /// Deletes and renames whose mtr may have committed but whose directory change is not
    /// yet counted: token → the current LSN before their mtr committed.
    in_flight: HashMap<u64, Lsn>,
    next_token: u64,
    extended: Vec<SpaceId>,
}

struct Shared {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    page_size: PageSize,
    spaces: Arc<Spaces>,
    pool: Arc<BufferPool>,
    dblwr: Arc<Doublewrite>,
    log: Arc<Log>,
    names: Mutex<HashMap<String, SpaceId>>,
    next_space: AtomicU32,
    file_sync: Mutex<PendingFileSync>,
    /// Held for a whole checkpoint: the checkpointer thread and `checkpoint_now` may both
    /// run one, and each syncs and then forgets the extensions it read (a prefix of
    /// `PendingFileSync::extended`), which is right only if no other checkpoint forgets
    /// them in between.
    checkpointing: Mutex<()>,
    stop: AtomicBool,
    wake: (Mutex<bool>, Condvar),
    checkpoints: AtomicU64,
    /// `innodb_adaptive_flushing` and its low-water mark (a fraction of the log, as f64
    /// bits): SET GLOBAL changes them while the checkpointer runs.
    adaptive: AtomicBool,
    adaptive_lwm: AtomicU64,
    btree: crate::btree::BTreeCounters,
}

/// An open data directory.
pub struct Engine {
    shared: Arc<Shared>,
    cleaner: Option<PageCleaner>,
    checkpointer: Option<JoinHandle<()>>,
    recovery: RecoveryStats,
    config: Config,
    /// The data directory's lock, released when the engine is dropped (after its shutdown).
    _lock: Box<dyn quire_io::LockGuard>,
}

/// The lock file that keeps two processes from opening one data directory.
pub const LOCK_FILE: &str = "quire.lock";

fn log_config(c: &Config) -> LogConfig {
    LogConfig {
        file_size: c.log_file_size,
        buffer_size: c.log_buffer_size,
        flush_at_commit: c.flush_log_at_trx_commit,
        // Lesson 3: O_DIRECT where it pays; innodb_log_file_buffering where it does not.
        // The file is opened O_DIRECT whenever it can be, so that the mode can change live
        // (`Log::set_buffered`, applied right after the open and on `SET GLOBAL`).
        direct: c.flush_method != FlushMethod::Fsync,
        dsync: c.flush_method == FlushMethod::ODsync,
        // Enough for a second of log at ~8 MB/s of commits, rewritten at most once per open.
        prewrite_ahead: 8 << 20,
        ..LogConfig::default()
    }
}

/// Refuses a log whose largest frame cannot hold the smallest B-tree structure change: every
/// table would stop growing at its first split. (Larger structure changes that do not fit
/// are refused one by one, and rolled back whole: docs/btree.md.)
fn check_log_frame(c: &Config, page_size: PageSize) -> Result<()> {
    let frame = log_config(c).max_payload();
    let need = crate::btree::root_split_redo_max(page_size.bytes());
    if frame < need {
        return Err(EngineError::Config(format!(
            "innodb_log_buffer_size={} with innodb_log_file_size={} gives mini-transactions \
             of at most {frame} bytes of redo, but a B-tree split of {}-byte pages may write \
             {need}: set both to at least {}",
            c.log_buffer_size,
            c.log_file_size,
            page_size.bytes(),
            LogConfig::size_for_payload(need)
        )));
    }
    Ok(())
}

fn buffer_config(c: &Config, page_size: PageSize) -> BufferConfig {
    BufferConfig {
        size_bytes: c.buffer_pool_size,
        page_size,
        old_blocks_pct: c.old_blocks_pct,
        old_blocks_time_ms: c.old_blocks_time_ms,
        max_dirty_pages_pct: c.max_dirty_pages_pct.round() as u32,
        max_dirty_pages_pct_lwm: dirty_lwm(c),
        io_capacity: c.io_capacity.min(u64::from(u32::MAX)) as u32,
        io_capacity_max: c.io_capacity_max.min(u64::from(u32::MAX)) as u32,
        ..BufferConfig::default()
    }
}

/// `innodb_max_dirty_pages_pct_lwm` as the pool takes it: whole percents, at most the
/// maximum (both are rounded).
fn dirty_lwm(c: &Config) -> u32 {
    (c.max_dirty_pages_pct_lwm.round() as u32).min(c.max_dirty_pages_pct.round() as u32)
}

/// Reads the space id and page size from the first sector of a space file's page 0. Every
/// version of that sector names the same space, so a torn page 0 still identifies its file.
fn peek_space(vfs: &dyn Vfs, path: &Path) -> Option<(SpaceId, PageSize)> {
    let f = vfs
        .open(
            path,
            OpenOptions {
                read_only: true,
                ..OpenOptions::existing()
            },
        )
        .ok()?;
    let mut head = [0u8; 64];
    f.read_exact_at(&mut head, 0).ok()?;
    let ps = SpaceHeader::peek_page_size(&head)?;
    Some((crate::page::Header::new(&head).page_id().space, ps))
}

/// Whether page 0 of the file at `path` holds only zeros (or is not there at all): what a
/// creation whose FILE_CREATE never became durable leaves (`fallocate`, no write).
fn page0_never_written(vfs: &dyn Vfs, path: &Path, page_size: PageSize) -> Result<bool> {
    let f = vfs.open(
        path,
        OpenOptions {
            read_only: true,
            ..OpenOptions::existing()
        },
    )?;
    let n = f.len()?.min(page_size.bytes() as u64);
    let mut page = vec![0u8; n as usize];
    f.read_exact_at(&mut page, 0)?;
    Ok(page.iter().all(|&b| b == 0))
}

impl Engine {
    /// Opens the data directory `dir`, creating it if it holds no redo log yet, and running
    /// recovery otherwise. Pages are checked as they are read by their checksum and header
    /// only: the engine alone also serves pages of any content (its own tests write raw
    /// index-typed pages); `Db` opens with the B-tree's structure check ([`Engine::open_checked`]).
    pub fn open(vfs: Arc<dyn Vfs>, dir: &Path, config: Config) -> Result<Engine> {
        Engine::open_checked(vfs, dir, config, None)
    }

    /// [`Engine::open`], with `check` run on every page read from disk from the start,
    /// recovery included (`BufferPool::set_structure_check`).
    pub fn open_checked(
        vfs: Arc<dyn Vfs>,
        dir: &Path,
        config: Config,
        check: Option<crate::buffer::StructureCheck>,
    ) -> Result<Engine> {
        vfs.create_dir_all(dir)?;
        // Before anything is read: a second process must not recover or write underneath us.
        let lock = vfs.lock_exclusive(&dir.join(LOCK_FILE))?;
        let mut fresh = !vfs.exists(&dir.join(LOG_FILE))?;
        // Find the spaces on disk and the data directory's page size.
        let mut files: SpaceFiles = HashMap::new();
        let mut orphans = Vec::new();
        let mut page_size = None;
        for name in vfs.list_dir(dir)? {
            if name.extension().is_none_or(|x| x != SPACE_SUFFIX) {
                continue;
            }
            match peek_space(vfs.as_ref(), &dir.join(&name)) {
                Some((id, ps)) => {
                    if let Some(prev) = files.insert(id, name.clone()) {
                        return Err(EngineError::DataDir {
                            path: dir.to_path_buf(),
                            what: format!(
                                "{} and {} both claim space {id}",
                                prev.display(),
                                name.display()
                            ),
                        });
                    }
                    page_size.get_or_insert(ps);
                }
                None => orphans.push(name),
            }
        }
        if !fresh && files.is_empty() {
            // No identified space: if the log is unreadable too, creating this data directory
            // never finished (the log's header is synced before any space file is made), so
            // nothing can have been committed. Start again instead of refusing to open.
            if let Err(e @ LogError::Corrupt { .. }) =
                Log::open_for_recovery(vfs.clone(), dir, log_config(&config)).map(|_| ())
            {
                tracing::warn!(
                    "{e}: the data directory was never fully created; creating it again"
                );
                vfs.delete(&dir.join(LOG_FILE))?;
                fresh = true;
            }
        }
        if fresh && !files.is_empty() {
            return Err(EngineError::DataDir {
                path: dir.join(LOG_FILE),
                what: "missing: the data directory has tablespaces but no redo log".into(),
            });
        }
        // No space file names the page size (all lost or unreadable): the doublewrite file's
        // header may still know it.
        let page_size = page_size.or_else(|| {
            (!fresh)
                .then(|| Doublewrite::peek_page_size(vfs.as_ref(), dir))
                .flatten()
        });
        let page_size = match (page_size, PageSize::new(config.page_size)) {
            (Some(p), _) => p,
            (None, Some(p)) => p,
            (None, None) => {
                return Err(EngineError::Config(format!(
                    "bad page size {}",
                    config.page_size
                )))
            }
        };
        check_log_frame(&config, page_size)?;
        let spaces = Arc::new(Spaces::new());
        let gate = Arc::new(LogGate::default());
        let bcfg = buffer_config(&config, page_size);
        // Every page write, recovery's included, goes through the doublewrite layer.
        let dblwr = Arc::new(Doublewrite::open(
            vfs.as_ref(),
            dir,
            page_size,
            config.doublewrite_slots,
            bcfg.flush_batch_pages,
            config.doublewrite,
            spaces.clone(),
            fresh,
        )?);
        let pool = BufferPool::with_writer(bcfg, spaces.clone(), gate.clone(), dblwr.clone())?;
        // Before recovery reads anything: e.g. an index page whose checksum holds but whose
        // slots or records are out of place is refused on the way in (docs/btree.md).
        if let Some(check) = check {
            pool.set_structure_check(check);
        }
        let threads = if config.recovery_threads == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        } else {
            config.recovery_threads
        };
        let (log, recovery) = if fresh {
            let log = Log::create(vfs.clone(), dir, log_config(&config))?;
            vfs.sync_dir(dir)?;
            (log, RecoveryStats::default())
        } else {
            recovery::recover(
                &vfs,
                dir,
                log_config(&config),
                page_size,
                &mut files,
                &mut orphans,
                &spaces,
                &pool,
                Some(&dblwr),
                threads,
            )?
        };
        // Pages recovery changed in memory were checked only as they came from disk: check
        // them again before any reader sees them (found by the `pages` fuzz target: a redo
        // record damaged behind a valid checksum made a page that panicked a reader).
        pool.check_resident()?;
        // Files that recovery did not identify were created by an mtr that never became
        // durable (invariant 3): they hold nothing, and their page 0 was never written (the
        // cleaner writes it only once FILE_CREATE is durable, and then recovery or the
        // doublewrite file names the space). A page 0 that was written and names no space
        // is damage: the file may hold committed rows, so it is kept and the open fails
        // naming it (found by the `pages` fuzz target: such a file used to be deleted).
        for name in orphans {
            let path = dir.join(&name);
            // Recovery may have renamed or deleted it meanwhile.
            if !files.values().any(|f| *f == name) && vfs.exists(&path)? {
                if !page0_never_written(vfs.as_ref(), &path, page_size)? {
                    return Err(EngineError::DataDir {
                        path,
                        what: "page 0: not a space header, and neither the redo log nor the \
                               doublewrite file names its space: the page is damaged (the \
                               file is left as it is)"
                            .into(),
                    });
                }
                tracing::warn!(file = %path.display(), "removing a space file whose creation never committed");
                vfs.delete(&path)?;
            }
        }
        for (id, rel) in &files {
            if spaces.get(*id).is_err() {
                spaces.insert(Arc::new(Space::open(
                    vfs.as_ref(),
                    &dir.join(rel),
                    *id,
                    page_size,
                )?));
            }
        }
        let log = Arc::new(log);
        log.set_buffered(config.log_file_buffering_effective())?;
        if gate.log.set(log.clone()).is_err() {
            unreachable!("the gate is set once");
        }
        let names = files
            .iter()
            .filter_map(|(id, p)| {
                let stem = p.file_stem()?.to_str()?.to_string();
                Some((stem, *id))
            })
            .collect::<HashMap<_, _>>();
        let next = files.keys().map(|s| s.0 + 1).max().unwrap_or(0);
        let shared = Arc::new(Shared {
            vfs,
            dir: dir.to_path_buf(),
            page_size,
            spaces,
            pool: pool.clone(),
            dblwr,
            log: log.clone(),
            names: Mutex::new(names),
            next_space: AtomicU32::new(next),
            file_sync: Mutex::new(PendingFileSync::default()),
            checkpointing: Mutex::new(()),
            stop: AtomicBool::new(false),
            wake: (Mutex::new(false), Condvar::new()),
            checkpoints: AtomicU64::new(0),
            adaptive: AtomicBool::new(config.adaptive_flushing),
            adaptive_lwm: AtomicU64::new((config.adaptive_flushing_lwm / 100.0).to_bits()),
            btree: Default::default(),
        });
        {
            let weak = Arc::downgrade(&shared);
            log.set_pressure_hook(move |lsn| {
                if let Some(s) = weak.upgrade() {
                    s.pool.request_flush_up_to(lsn);
                    s.wake_checkpointer();
                }
            });
        }
        let cleaner = PageCleaner::start(pool).map_err(|e| EngineError::DataDir {
            path: dir.to_path_buf(),
            what: format!("cannot start the page cleaner: {e}"),
        })?;
        let ck = shared.clone();
        let checkpointer = std::thread::Builder::new()
            .name("quire-checkpoint".into())
            .spawn(move || ck.checkpoint_loop())
            .map_err(|e| EngineError::DataDir {
                path: dir.to_path_buf(),
                what: format!("cannot start the checkpointer: {e}"),
            })?;
        let engine = Engine {
            shared,
            cleaner: Some(cleaner),
            checkpointer: Some(checkpointer),
            recovery,
            config,
            _lock: lock,
        };
        if fresh || engine.shared.spaces.get(SpaceId::SYSTEM).is_err() {
            // system.qsp there under another space id: its page 0 is damaged (found by the
            // `pages` fuzz target: this used to fail as "a space named 'system' exists").
            let claimed = engine.shared.names.lock().get("system").copied();
            if let Some(id) = claimed {
                return Err(EngineError::DataDir {
                    path: dir.join(format!("system.{SPACE_SUFFIX}")),
                    what: format!(
                        "page 0: names space {id}, not the system space {}: the page is damaged",
                        SpaceId::SYSTEM
                    ),
                });
            }
            engine.create_space_with_id(SpaceId::SYSTEM, "system")?;
            engine.shared.next_space.fetch_max(1, Ordering::SeqCst);
        }
        Ok(engine)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
    pub fn page_size(&self) -> PageSize {
        self.shared.page_size
    }
    pub fn pool(&self) -> &BufferPool {
        &self.shared.pool
    }
    pub fn log(&self) -> &Log {
        &self.shared.log
    }
    pub fn spaces(&self) -> &Spaces {
        &self.shared.spaces
    }
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }
    /// The doublewrite buffer.
    pub fn doublewrite(&self) -> &Doublewrite {
        &self.shared.dblwr
    }
    /// `SET GLOBAL innodb_doublewrite = ON|OFF`, at run time. OFF is unsafe unless page
    /// writes are atomic: a torn page is then repaired only if redo re-initializes it.
    pub fn set_doublewrite(&self, on: bool) {
        self.shared.dblwr.set_enabled(on);
    }
    /// Switches redo logging of a space on or off. No feature writes without redo yet; the
    /// doublewrite skip rule never applies while it is off (lesson 1, docs/doublewrite.md).
    pub fn set_redo_logging(&self, space: SpaceId, on: bool) -> Result<()> {
        Ok(self.shared.spaces.set_redo_logging(space, on)?)
    }
    /// What recovery did when this engine was opened.
    pub fn recovery_stats(&self) -> &RecoveryStats {
        &self.recovery
    }

    /// Starts a mini-transaction. Reserves its log space first, waiting with no latch held
    /// until the log has room (InnoDB's log_free_check, made a reservation), so that commit
    /// never blocks on a full log while holding latches the page cleaner needs.
    pub fn mtr(&self) -> Mtr<'_> {
        let log = &self.shared.log;
        Mtr::new(&self.shared.pool, log, log.free_check(MTR_RESERVATION))
    }

    /// Starts a mini-transaction that may write up to `redo_bytes` more than an ordinary one
    /// (B-tree structure changes, BLOB pages): reserves that much more log space first
    /// (capped at one frame), for the same reason as [`Engine::mtr`].
    pub fn mtr_with_room(&self, redo_bytes: u64) -> Mtr<'_> {
        let log = &self.shared.log;
        let reservation = log.free_check(MTR_RESERVATION.saturating_add(redo_bytes));
        Mtr::new(&self.shared.pool, log, reservation)
    }

    /// Waits for a commit at `lsn` per `innodb_flush_log_at_trx_commit`.
    pub fn commit_wait(&self, lsn: Lsn) {
        self.shared.log.commit_wait(lsn);
    }

    /// The id of the space called `name`.
    pub fn space_id(&self, name: &str) -> Result<SpaceId> {
        self.shared
            .names
            .lock()
            .get(name)
            .copied()
            .ok_or_else(|| EngineError::NoSuchSpace(name.into()))
    }

    /// Creates a space `<name>.qsp`: the file is allocated (no zeros, no sync: lesson 5), and
    /// one mtr logs FILE_CREATE and formats page 0. Returns once that mtr is durable.
    pub fn create_space(&self, name: &str) -> Result<SpaceId> {
        if name.is_empty() || name.contains(['/', '\\', '\0']) || name.starts_with('.') {
            return Err(EngineError::Config(format!("bad space name '{name}'")));
        }
        if self.shared.names.lock().contains_key(name) {
            return Err(EngineError::SpaceExists(name.into()));
        }
        let id = self.reserve_space_id()?;
        self.create_space_with_id(id, name)
    }

    fn create_space_with_id(&self, id: SpaceId, name: &str) -> Result<SpaceId> {
        if name.is_empty() || name.contains(['/', '\\', '\0']) || name.starts_with('.') {
            return Err(EngineError::Config(format!("bad space name '{name}'")));
        }
        {
            let mut names = self.shared.names.lock();
            if names.contains_key(name) {
                return Err(EngineError::SpaceExists(name.into()));
            }
            names.insert(name.to_string(), id);
        }
        let rel = format!("{name}.{SPACE_SUFFIX}");
        let path = self.shared.dir.join(&rel);
        let mut file_made = false;
        let created = (|| -> Result<Lsn> {
            let space = Arc::new(Space::create(
                self.shared.vfs.as_ref(),
                &path,
                id,
                self.shared.page_size,
                INITIAL_SPACE_PAGES,
            )?);
            file_made = true;
            self.shared.spaces.insert(space.clone());
            let mut mtr = self.mtr();
            // Counted before FILE_CREATE commits: a checkpoint that can pass it syncs the
            // directory first (invariant 2).
            self.shared.file_sync.lock().dir_changes += 1;
            mtr.log_file_op(Record::FileCreate {
                space: id,
                page_size: self.shared.page_size.get(),
                initial_pages: INITIAL_SPACE_PAGES,
                path: &rel,
            })?;
            mtr.create_page(PageId::new(id, PageNo(0)), PageType::SpaceHeader)?;
            {
                let mut pages = MtrPages::new(&mut mtr, space.clone());
                Allocator::new(&mut pages, self.shared.page_size).format(space.size_pages())?;
            }
            let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
            Ok(lsn)
        })();
        match created {
            Ok(lsn) => {
                self.shared.log.write_up_to(lsn, true);
                Ok(id)
            }
            Err(e) => {
                self.shared.names.lock().remove(name);
                self.shared.spaces.remove(id);
                // Nothing was logged (the mtr did not commit), so the file this call made
                // is nobody's: remove it rather than leave it on a disk that is likely full.
                if file_made {
                    if let Err(d) = self.shared.vfs.delete(&path) {
                        tracing::warn!(path = %path.display(), error = %d, "could not remove the file of a failed space creation");
                    }
                }
                Err(e)
            }
        }
    }

    /// Hands out a space id: the next one under the mark in the dictionary header, which one
    /// mtr raises past it (invariant 4). A data directory from before the header gets one
    /// here, starting past every space id on disk or in the recovered log's file records.
    fn reserve_space_id(&self) -> Result<SpaceId> {
        let floor = self
            .recovery
            .max_space_id
            .map_or(0, |s| s.0 + 1)
            .max(self.shared.next_space.load(Ordering::SeqCst))
            .max(1);
        let mut id = 0;
        let mut mtr = self.mtr();
        raise_dict_header(&mut mtr, |h| {
            if h.next_space_id == 0 {
                tracing::info!("creating the dictionary header: new space ids start at {floor}");
            }
            id = h.next_space_id.max(floor);
            h.next_space_id = id + 1;
        })?;
        mtr.commit()?;
        self.shared.next_space.fetch_max(id + 1, Ordering::SeqCst);
        Ok(SpaceId(id))
    }

    /// The persisted table id high-water mark: every table id handed out is below it. 0:
    /// never set (a data directory from before the dictionary header; the catalog then
    /// sets it from the largest id it knows, once).
    pub fn table_id_mark(&self) -> Result<u64> {
        let mut mtr = self.mtr();
        let s = mtr.s_latch(PageId::new(SpaceId::SYSTEM, PageNo(0)))?;
        let mark = DictHeader::decode(mtr.page(s)).map_or(0, |h| h.next_table_id);
        mtr.commit()?;
        Ok(mark)
    }

    /// Raises the table id high-water mark to at least `next`, in one mtr. Call it before a
    /// table id below `next` is written anywhere (invariant 4); it does not wait for the
    /// log, since every later mtr that writes the id is durable only after this one.
    pub fn raise_table_id_mark(&self, next: u64) -> Result<()> {
        let mut mtr = self.mtr();
        raise_dict_header(&mut mtr, |h| h.next_table_id = h.next_table_id.max(next))?;
        mtr.commit()?;
        Ok(())
    }

    /// Allocates a page in `space` within `mtr`.
    pub fn alloc_page(&self, mtr: &mut Mtr<'_>, space: SpaceId) -> Result<PageNo> {
        let sp = self.shared.spaces.get(space)?;
        let size_before = sp.size_pages();
        let page = {
            let mut pages = MtrPages::new(mtr, sp.clone());
            Allocator::new(&mut pages, self.shared.page_size).alloc_page()?
        };
        if sp.size_pages() != size_before {
            self.shared.file_sync.lock().extended.push(space);
        }
        Ok(page)
    }

    /// Is `id` allocated in its space? (The catalog uses it to find whether its fixed root
    /// page was ever created.) Reads the allocation metadata under a read-only mtr.
    pub fn page_is_used(&self, id: PageId) -> Result<bool> {
        let sp = self.shared.spaces.get(id.space)?;
        let mut mtr = self.mtr();
        let used = {
            let mut pages = MtrPages::new(&mut mtr, sp);
            Allocator::new(&mut pages, self.shared.page_size).is_used(id.page_no)?
        };
        mtr.commit()?;
        Ok(used)
    }

    /// Every page in use in `space`, ascending (the page accounting of `Db::check`). Reads
    /// the allocation metadata under a read-only mtr, as [`Engine::page_is_used`] does.
    pub fn used_pages(&self, space: SpaceId) -> Result<Vec<PageNo>> {
        let sp = self.shared.spaces.get(space)?;
        let mut mtr = self.mtr();
        let pages = {
            let mut pages = MtrPages::new(&mut mtr, sp);
            Allocator::new(&mut pages, self.shared.page_size).used_pages()?
        };
        mtr.commit()?;
        Ok(pages)
    }

    /// The names and ids of every space, the system space included.
    pub fn space_names(&self) -> Vec<(String, SpaceId)> {
        let mut v: Vec<_> = self
            .shared
            .names
            .lock()
            .iter()
            .map(|(n, id)| (n.clone(), *id))
            .collect();
        v.sort_by_key(|(_, id)| *id);
        v
    }

    /// Frees a page of `space` within `mtr`.
    pub fn free_page(&self, mtr: &mut Mtr<'_>, id: PageId) -> Result<()> {
        let sp = self.shared.spaces.get(id.space)?;
        let mut pages = MtrPages::new(mtr, sp);
        Allocator::new(&mut pages, self.shared.page_size).free_page(id.page_no)?;
        Ok(())
    }

    /// Resizes the redo log online (`innodb_log_file_size`), crash-safely: commits go on
    /// while the new file is built, and a crash at any point leaves one valid log
    /// (docs/redo-log.md). Shrinking below the current checkpoint age first checkpoints.
    pub fn resize_log(&self, new_size: u64) -> Result<()> {
        if new_size < self.shared.log.checkpoint_age() + (1 << 20) {
            self.checkpoint_now()?;
        }
        self.shared.log.resize(new_size)?;
        Ok(())
    }

    /// Applies the engine's settings among [`Config::DYNAMIC`] that differ between `old`
    /// and `new` (`SET GLOBAL`): the log's commit mode and size, the cleaner's rates and
    /// limits, the LRU's old sublist, adaptive flushing, the log's buffering.
    /// `innodb_buffer_pool_size` is not changed here (the caller refuses it).
    /// Only the log resize can fail for values `Config::set` accepted; it runs first.
    pub fn apply_settings(&self, old: &Config, new: &Config) -> Result<()> {
        // The one step that can fail for a valid value goes first: a failed resize leaves
        // everything as it was.
        if new.log_file_size != old.log_file_size {
            self.resize_log(new.log_file_size)?;
        }
        if new.flush_log_at_trx_commit != old.flush_log_at_trx_commit {
            self.shared
                .log
                .set_flush_at_commit(new.flush_log_at_trx_commit);
        }
        // Automatic buffering follows the commit mode: `SET GLOBAL
        // innodb_flush_log_at_trx_commit=2` gets the cached writes a start at 2 gets.
        if new.log_file_buffering_effective() != old.log_file_buffering_effective() {
            self.shared
                .log
                .set_buffered(new.log_file_buffering_effective())?;
        }
        let to_u32 = |v: u64| v.min(u64::from(u32::MAX)) as u32;
        if (new.io_capacity, new.io_capacity_max) != (old.io_capacity, old.io_capacity_max)
            || new.max_dirty_pages_pct != old.max_dirty_pages_pct
            || new.max_dirty_pages_pct_lwm != old.max_dirty_pages_pct_lwm
        {
            self.shared.pool.set_flushing(
                to_u32(new.io_capacity),
                to_u32(new.io_capacity_max),
                new.max_dirty_pages_pct.round() as u32,
                dirty_lwm(new),
            )?;
        }
        if (new.old_blocks_pct, new.old_blocks_time_ms)
            != (old.old_blocks_pct, old.old_blocks_time_ms)
        {
            self.shared
                .pool
                .set_old_blocks(new.old_blocks_pct, new.old_blocks_time_ms)?;
        }
        self.shared
            .adaptive
            .store(new.adaptive_flushing, Ordering::Relaxed);
        self.shared.adaptive_lwm.store(
            (new.adaptive_flushing_lwm / 100.0).to_bits(),
            Ordering::Relaxed,
        );
        Ok(())
    }

    /// Writes every dirty page and takes a checkpoint at the current LSN.
    pub fn checkpoint_now(&self) -> Result<Lsn> {
        self.shared.log.flush_all();
        self.shared.pool.flush_all()?;
        self.shared.checkpoint()
    }

    /// Counters under InnoDB's status names (and `quire_` names for new concepts).
    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let l = self.shared.log.stats();
        let b = self.shared.pool.stats();
        let d: DoublewriteStats = self.shared.dblwr.stats();
        vec![
            ("Innodb_data_writes", d.data_writes),
            ("Innodb_data_written", d.data_written),
            ("Innodb_dblwr_writes", d.dblwr_writes),
            ("Innodb_dblwr_pages_written", d.dblwr_pages_written),
            ("quire_dblwr_pages_skipped", d.pages_skipped),
            ("quire_dblwr_pages_restored", d.pages_restored),
            ("Innodb_os_log_written", l.os_log_written),
            ("Innodb_log_writes", l.log_writes),
            ("Innodb_os_log_fsyncs", l.os_log_fsyncs),
            ("Innodb_log_waits", l.log_waits),
            ("quire_log_reservation_overruns", l.reservation_overruns),
            ("Innodb_checkpoint_age", l.checkpoint_age),
            ("Innodb_lsn_current", l.current_lsn.0),
            ("Innodb_lsn_flushed", l.flushed_lsn.0),
            ("Innodb_lsn_last_checkpoint", l.checkpoint_lsn.0),
            ("Innodb_buffer_pool_pages_total", b.frames as u64),
            ("Innodb_buffer_pool_pages_free", b.free_frames as u64),
            // Frames holding a page: every frame that is not free.
            (
                "Innodb_buffer_pool_pages_data",
                b.frames.saturating_sub(b.free_frames) as u64,
            ),
            ("Innodb_buffer_pool_pages_dirty", b.dirty_pages as u64),
            ("Innodb_buffer_pool_reads", b.misses),
            ("Innodb_buffer_pool_read_requests", b.hits + b.misses),
            ("Innodb_pages_read", b.pages_read),
            ("Innodb_pages_created", b.pages_created),
            ("Innodb_pages_written", b.pages_written),
            (
                "quire_checkpoints",
                self.shared.checkpoints.load(Ordering::Relaxed),
            ),
            ("quire_commits", l.commits),
            ("quire_btree_smo_root_sx", load(&self.shared.btree.root_sx)),
            ("quire_btree_smo_root_x", load(&self.shared.btree.root_x)),
            ("quire_btree_smo_retries", load(&self.shared.btree.retries)),
            (
                "quire_btree_smo_rolled_back",
                load(&self.shared.btree.rolled_back),
            ),
        ]
    }

    /// The value of one counter from [`Engine::stats`].
    pub fn stat(&self, name: &str) -> Option<u64> {
        self.stats()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    fn stop_threads(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake_checkpointer();
        if let Some(h) = self.checkpointer.take() {
            let _ = h.join();
        }
        if let Some(c) = self.cleaner.take() {
            c.shutdown();
        }
    }

    /// Deletes space `name` and its file. The caller guarantees nobody uses the space (the
    /// catalog's locks will). Order (invariant 3): FILE_DELETE is made durable first, which
    /// logically removes the space (recovery drops its redo and deletes the file); only then
    /// are its pages dropped from the buffer pool, without writing them, and the file deleted.
    /// The pool visits only this space's pages: no scan of the whole pool (lesson 5's DROP).
    pub fn delete_space(&self, name: &str) -> Result<()> {
        let id = self.space_id(name)?;
        if id == SpaceId::SYSTEM {
            return Err(EngineError::Config(
                "the system space cannot be deleted".into(),
            ));
        }
        let rel = format!("{name}.{SPACE_SUFFIX}");
        let mut mtr = self.mtr();
        mtr.log_file_op(Record::FileDelete {
            space: id,
            path: &rel,
        })?;
        let op = self.shared.begin_dir_op();
        let done = (|| -> Result<()> {
            if let Some(lsn) = mtr.commit()? {
                self.shared.log.write_up_to(lsn, true);
            }
            self.shared.pool.discard_space(id)?;
            self.shared.spaces.remove(id);
            self.shared.names.lock().remove(name);
            self.shared.vfs.delete(&self.shared.dir.join(&rel))?;
            Ok(())
        })();
        self.shared.end_dir_op(op);
        done
    }

    /// Renames space `from` to `to`: FILE_RENAME is made durable, then the file is renamed
    /// (recovery replays the rename if the directory change was lost).
    pub fn rename_space(&self, from: &str, to: &str) -> Result<()> {
        if to.is_empty() || to.contains(['/', '\\', '\0']) || to.starts_with('.') {
            return Err(EngineError::Config(format!("bad space name '{to}'")));
        }
        let id = self.space_id(from)?;
        {
            let mut names = self.shared.names.lock();
            if names.contains_key(to) {
                return Err(EngineError::SpaceExists(to.into()));
            }
            names.remove(from);
            names.insert(to.to_string(), id);
        }
        let (old, new) = (
            format!("{from}.{SPACE_SUFFIX}"),
            format!("{to}.{SPACE_SUFFIX}"),
        );
        let mut mtr = self.mtr();
        mtr.log_file_op(Record::FileRename {
            space: id,
            from: &old,
            to: &new,
        })?;
        let op = self.shared.begin_dir_op();
        let new_path = self.shared.dir.join(&new);
        let renamed = (|| -> Result<()> {
            if let Some(lsn) = mtr.commit()? {
                self.shared.log.write_up_to(lsn, true);
            }
            self.shared
                .vfs
                .rename(&self.shared.dir.join(&old), &new_path)?;
            Ok(())
        })();
        self.shared.end_dir_op(op);
        renamed?;
        // Reopen under the new name so messages name the right file; the old handle (same
        // file) stays valid for writes already in flight.
        let sp = Space::open(
            self.shared.vfs.as_ref(),
            &new_path,
            id,
            self.shared.page_size,
        )?;
        self.shared.spaces.insert(Arc::new(sp));
        Ok(())
    }

    /// A clean shutdown: every dirty page written, a final checkpoint, threads joined.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop_threads();
        let r = self.checkpoint_now().map(|_| ());
        self.shared.log.flush_all();
        r
    }

    /// Stops the engine as a crash would: threads stop, nothing more is written. The next
    /// open recovers. For tests and for `quire bench` kill-and-resume runs.
    pub fn kill(mut self) {
        // With the threads stopped, Drop skips the clean shutdown; the log's own Drop writes
        // nothing either.
        self.stop_threads();
    }
}

/// Changes the dictionary header (on the system space's page 0) with `change`, under that
/// page's X latch in `mtr`, so concurrent raises serialize and a mark never goes down.
/// Writes only if something changed. Returns the header as it now is.
fn raise_dict_header(
    mtr: &mut Mtr<'_>,
    change: impl FnOnce(&mut DictHeader),
) -> Result<DictHeader> {
    let s = mtr.x_latch(PageId::new(SpaceId::SYSTEM, PageNo(0)))?;
    let before = DictHeader::decode(mtr.page(s));
    let mut h = before.unwrap_or(DictHeader {
        next_space_id: 0,
        next_table_id: 0,
    });
    change(&mut h);
    if before != Some(h) {
        mtr.write(s, OFF_DICT_HEADER, &h.encode())?;
    }
    Ok(h)
}

/// B-trees allocate and free pages through the engine (the btree layer sits below it).
impl crate::btree::BTreeStore for Engine {
    fn pool(&self) -> &BufferPool {
        Engine::pool(self)
    }
    fn mtr(&self) -> Mtr<'_> {
        Engine::mtr(self)
    }
    fn mtr_with_room(&self, redo_bytes: u64) -> Mtr<'_> {
        Engine::mtr_with_room(self, redo_bytes)
    }
    fn mtr_redo_max(&self) -> u64 {
        self.shared.log.max_payload()
    }
    fn alloc_page(&self, mtr: &mut Mtr<'_>, space: SpaceId) -> crate::btree::AllocResult<PageNo> {
        Engine::alloc_page(self, mtr, space).map_err(Into::into)
    }
    fn free_page(&self, mtr: &mut Mtr<'_>, page: PageId) -> crate::btree::AllocResult<()> {
        Engine::free_page(self, mtr, page).map_err(Into::into)
    }
    fn btree_counters(&self) -> &crate::btree::BTreeCounters {
        &self.shared.btree
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if self.checkpointer.is_none() && self.cleaner.is_none() {
            return;
        }
        self.stop_threads();
        if let Err(e) = self.checkpoint_now() {
            tracing::error!("shutdown checkpoint failed: {e}; the next open will recover");
        }
        self.shared.log.flush_all();
    }
}

impl Shared {
    fn wake_checkpointer(&self) {
        let (m, cv) = &self.wake;
        *m.lock() = true;
        cv.notify_one();
    }

    /// Registers a delete or rename about to commit its mtr (see [`PendingFileSync`]).
    fn begin_dir_op(&self) -> u64 {
        let mut p = self.file_sync.lock();
        let token = p.next_token;
        p.next_token += 1;
        // Read under the lock: a checkpoint that sees no entry read its current LSN before.
        p.in_flight.insert(token, self.log.current_lsn());
        token
    }

    /// The delete or rename registered as `token` has changed the directory (or failed):
    /// count the change, for the next checkpoint's directory sync.
    fn end_dir_op(&self, token: u64) {
        let mut p = self.file_sync.lock();
        p.in_flight.remove(&token);
        p.dir_changes += 1;
    }

    /// Makes durable every file operation a checkpoint would otherwise cover (invariant 2).
    /// A failed directory sync is fatal like any failed fsync (quire_io::fatal): the entries
    /// it should have made durable may be lost, and a retry could "succeed" without them.
    fn sync_files_before_checkpoint(&self) {
        let (changes, synced, mut ext) = {
            let p = self.file_sync.lock();
            (p.dir_changes, p.dir_synced, p.extended.clone())
        };
        let n_ext = ext.len();
        if changes > synced {
            if let Err(e) = self.vfs.sync_dir(&self.dir) {
                quire_io::fatal::fatal_io(&e);
            }
            let mut p = self.file_sync.lock();
            p.dir_synced = p.dir_synced.max(changes);
        }
        ext.sort();
        ext.dedup();
        for id in &ext {
            if let Ok(sp) = self.spaces.get(*id) {
                sp.sync();
            }
        }
        // Only the extensions just synced: one counted meanwhile (appended) stays pending.
        // Checkpoints are serialized (`checkpointing`), so the prefix read is still there.
        let mut p = self.file_sync.lock();
        debug_assert!(
            p.extended.len() >= n_ext,
            "a concurrent checkpoint forgot extensions"
        );
        let n = n_ext.min(p.extended.len());
        p.extended.drain(..n);
    }

    /// Moves the checkpoint to the oldest change not yet on disk. The current LSN is read
    /// *before* the flush list (see `Mtr::commit`): a change missing from the flush list that
    /// was read belongs to an mtr that reserved its LSN after the current LSN that was read.
    fn checkpoint(&self) -> Result<Lsn> {
        let _one_at_a_time = self.checkpointing.lock();
        let current = self.log.current_lsn();
        let oldest = self.pool.flush_list_oldest().unwrap_or(current);
        // Read after `current`: a delete or rename not in flight now registers later, so its
        // FILE_DELETE or FILE_RENAME is at or past `current` (see PendingFileSync).
        let in_flight = self.file_sync.lock().in_flight.values().min().copied();
        let target = current.min(oldest).min(in_flight.unwrap_or(current));
        if target <= self.log.checkpoint_lsn() {
            return Ok(self.log.checkpoint_lsn());
        }
        self.sync_files_before_checkpoint();
        self.log.checkpoint(target)?;
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(target)
    }

    /// Adaptive flushing by checkpoint age (lesson 2): above the low-water mark, ask the page
    /// cleaner to write the pages whose changes hold the checkpoint back, reaching further the
    /// fuller the log is, so the log never fills and commits never stall all at once.
    fn adaptive_flush(&self) {
        if !self.adaptive.load(Ordering::Relaxed) {
            // The log's pressure hook still asks for flushing as it fills.
            return;
        }
        let lwm = f64::from_bits(self.adaptive_lwm.load(Ordering::Relaxed));
        let fill = self.log.fill_ratio();
        if fill <= lwm {
            return;
        }
        let ckpt = self.log.checkpoint_lsn().0;
        let current = self.log.current_lsn().0;
        // From the low-water mark to a full log, the target moves from the checkpoint to
        // halfway to the current LSN: the share grows with the square root of the excess.
        let excess = ((fill - lwm) / (1.0 - lwm)).clamp(0.0, 1.0);
        let share = (0.5 * excess.sqrt()).max(0.05);
        let target = ckpt + ((current - ckpt) as f64 * share) as u64;
        self.pool.request_flush_up_to(Lsn(target));
    }

    fn checkpoint_loop(&self) {
        let (m, cv) = &self.wake;
        while !self.stop.load(Ordering::SeqCst) {
            {
                let mut woken = m.lock();
                if !*woken {
                    cv.wait_for(&mut woken, Duration::from_millis(100));
                }
                *woken = false;
            }
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            self.adaptive_flush();
            if let Err(e) = self.checkpoint() {
                tracing::error!("checkpoint failed: {e}");
            }
        }
    }
}
