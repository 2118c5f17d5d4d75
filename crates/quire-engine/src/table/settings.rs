//! # Settings that change while the database runs (`SET GLOBAL`)
//!
//! [`Config`] is read once at open. The settings in [`Config::DYNAMIC`] are also kept where
//! they are used, as atomics read at use: [`Live`] here for the transaction layer and
//! purge, the buffer pool's and the checkpointer's for the engine
//! ([`Engine::apply_settings`](crate::engine::Engine::apply_settings)).
//! [`DbInner::set_globals`] changes them; [`DbInner::settings`] is the current value of
//! every setting (SHOW VARIABLES).
//!
//! ```text
//!   set_globals ── settings mutex (one SET GLOBAL at a time) ── Config::set on a copy
//!        ├─ refuse: read-only name (1238), bad value, a buffer pool resize
//!        ├─ Engine::apply_settings: log size first (can fail), then commit mode, cleaner,
//!        │                          LRU, adaptive flushing
//!        ├─ Live::store: lock wait timeout, purge batch / threads / lag, fast shutdown,
//!        │               statistics auto-recalculation
//!        └─ the copy becomes the current settings
//! ```
//!
//! Invariants:
//! 1. After `set_globals` returns, [`DbInner::settings`] shows what the engine uses: a
//!    change is applied before it is recorded, a refused one records nothing, and
//!    `innodb_log_file_buffering` shows ON when the log cannot be O_DIRECT.
//! 2. Readers never lock: they load an atomic that `set_globals` stored.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use super::DbInner;
use crate::config::{Config, ConfigError};
use crate::engine::EngineError;

/// Why a `SET GLOBAL` was refused.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// MySQL 1238: the setting is read only while the database runs.
    #[error("Variable '{0}' is a read only variable")]
    ReadOnly(String),
    #[error(transparent)]
    Invalid(#[from] ConfigError),
    /// A dynamic setting whose change this engine cannot make live.
    #[error("Cannot update {name}: {reason}")]
    NotLive { name: String, reason: String },
    /// Applying it failed (a log resize that could not be done).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The transaction layer's and purge's dynamic settings, read at use.
#[derive(Debug)]
pub(crate) struct Live {
    /// `innodb_lock_wait_timeout`: the default of transactions begun from now on.
    pub lock_wait_timeout_ms: AtomicU64,
    /// `innodb_purge_threads`: workers of the next purge batch.
    pub purge_threads: AtomicUsize,
    /// `innodb_purge_batch_size`: 0 is automatic.
    pub purge_batch_size: AtomicUsize,
    pub max_purge_lag: AtomicU64,
    pub max_purge_lag_delay_us: AtomicU64,
    pub fast_shutdown: AtomicU8,
    /// `innodb_stats_auto_recalc` (`statistics.rs`).
    pub stats_auto_recalc: std::sync::atomic::AtomicBool,
    /// Background purge runs (`innodb_purge_threads` > 0 at open); fixed for the run.
    pub purge_running: bool,
}

impl Live {
    pub(crate) fn new(c: &Config, purge_running: bool) -> Live {
        let live = Live {
            lock_wait_timeout_ms: AtomicU64::new(0),
            purge_threads: AtomicUsize::new(0),
            purge_batch_size: AtomicUsize::new(0),
            max_purge_lag: AtomicU64::new(0),
            max_purge_lag_delay_us: AtomicU64::new(0),
            fast_shutdown: AtomicU8::new(0),
            stats_auto_recalc: std::sync::atomic::AtomicBool::new(true),
            purge_running,
        };
        live.store(c);
        live
    }

    fn store(&self, c: &Config) {
        let r = Ordering::Relaxed;
        self.lock_wait_timeout_ms.store(c.lock_wait_timeout_ms, r);
        self.purge_threads.store(c.purge_threads, r);
        self.purge_batch_size
            .store(c.purge_batch_size.unwrap_or(0), r);
        self.max_purge_lag.store(c.max_purge_lag, r);
        self.max_purge_lag_delay_us
            .store(c.max_purge_lag_delay_us, r);
        self.fast_shutdown.store(c.fast_shutdown, r);
        self.stats_auto_recalc.store(c.stats_auto_recalc, r);
    }
}

/// The settings as shown at open: `innodb_log_file_buffering` shows the mode the log is
/// in. It stays automatic (following `innodb_flush_log_at_trx_commit`) unless the file
/// cannot be in the mode that would pick (no O_DIRECT here), which then holds for good.
pub(crate) fn as_opened(c: &Config, log_direct: bool) -> Config {
    let mut c = c.clone();
    if c.log_file_buffering_effective() == log_direct {
        c.log_file_buffering = Some(!log_direct);
    }
    c
}

impl DbInner {
    /// The current value of every setting (the start-up ones, changed by `SET GLOBAL`).
    pub fn settings(&self) -> Config {
        self.settings.lock().clone()
    }

    /// `innodb_lock_wait_timeout` now: what a transaction begun now waits at most.
    pub fn default_lock_wait_timeout(&self) -> Duration {
        Duration::from_millis(self.live.lock_wait_timeout_ms.load(Ordering::Relaxed))
    }

    /// `SET GLOBAL name = value` for each pair, together: all are checked, then applied,
    /// then recorded (invariant 1). Values are [`Config::set`]'s text. Returns notes for
    /// the client (a change accepted but not made).
    pub fn set_globals(&self, changes: &[(&str, &str)]) -> Result<Vec<String>, SetError> {
        let mut cur = self.settings.lock();
        let mut next = cur.clone();
        for (name, value) in changes {
            let lname = name.to_ascii_lowercase();
            if !Config::DYNAMIC.contains(&lname.as_str()) {
                if Config::NAMES.contains(&lname.as_str()) {
                    return Err(SetError::ReadOnly(lname));
                }
                return Err(ConfigError::Unknown(lname).into());
            }
            next.set(&lname, value)?;
        }
        if next.buffer_pool_size != cur.buffer_pool_size {
            return Err(SetError::NotLive {
                name: "innodb_buffer_pool_size".into(),
                reason: "Quire does not resize the buffer pool while it runs; \
                         restart with innodb_buffer_pool_size set"
                    .into(),
            });
        }
        let mut notes = Vec::new();
        if !next.log_file_buffering_effective() && !self.engine.log().can_be_direct() {
            // MariaDB, too, leaves it as it is when it cannot change it.
            notes.push(
                "innodb_log_file_buffering stays ON: the redo log's file system does not \
                 take O_DIRECT (or innodb_flush_method=fsync)"
                    .into(),
            );
            next.log_file_buffering = Some(true);
        }
        if !self.live.purge_running && next.purge_threads != cur.purge_threads {
            notes.push(
                "background purge is off (innodb_purge_threads=0 at start): \
                 innodb_purge_threads applies from the next start"
                    .into(),
            );
        }
        self.engine.apply_settings(&cur, &next)?;
        self.live.store(&next);
        *cur = next;
        Ok(notes)
    }
}
