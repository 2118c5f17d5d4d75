//! # Engine configuration, under InnoDB's variable names
//!
//! Users bring habits and dashboards from InnoDB, so every setting whose meaning is the same
//! keeps InnoDB's name (`innodb_buffer_pool_size`, `innodb_flush_log_at_trx_commit`, …); new
//! concepts get `quire_` names. [`Config::set`] parses `name=value` strings as given to
//! `--set`, with sizes like `64M` or `2G`, and rejects unknown names and out-of-range values
//! with a message that says what is allowed.

use std::fmt;

pub use crate::log::FlushAtCommit;

/// How the redo log reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMethod {
    /// O_DIRECT where the block size is known, buffered otherwise; fdatasync to make durable.
    ODirect,
    /// O_DIRECT plus O_DSYNC: every log write is durable when it returns.
    ODsync,
    /// Buffered writes plus fdatasync.
    Fsync,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub page_size: u32,
    pub buffer_pool_size: u64,
    pub log_file_size: u64,
    pub log_buffer_size: u64,
    pub flush_log_at_trx_commit: FlushAtCommit,
    pub flush_method: FlushMethod,
    /// `innodb_log_file_buffering`: write the redo log through the file system cache rather
    /// than with O_DIRECT. `None` (the default) decides as MariaDB does: ON when started with
    /// `innodb_flush_log_at_trx_commit=2`, whose commits write the log without syncing it, so
    /// a write into the page cache is all they need (an O_DIRECT write is a device round trip
    /// per commit group); OFF otherwise.
    pub log_file_buffering: Option<bool>,
    pub doublewrite: bool,
    /// `quire_doublewrite_slots`: batch slots of the doublewrite file (docs/doublewrite.md).
    pub doublewrite_slots: u32,
    pub max_dirty_pages_pct: f64,
    /// `innodb_max_dirty_pages_pct_lwm`: above this dirty share (and non-zero) the cleaner
    /// flushes a growing share of `innodb_io_capacity`.
    pub max_dirty_pages_pct_lwm: f64,
    pub io_capacity: u64,
    pub io_capacity_max: u64,
    /// `innodb_adaptive_flushing`: flush ahead of the checkpoint by checkpoint age (lesson
    /// 2); off, pages are flushed for the checkpoint only when the log asks (it is filling).
    pub adaptive_flushing: bool,
    /// `innodb_stats_auto_recalc`: a table's kept statistics are recomputed at their next
    /// use once its rows changed past 10 % (table/statistics.rs); off, only ANALYZE TABLE
    /// (or DDL, or a restart) recomputes them.
    pub stats_auto_recalc: bool,
    /// Checkpoint age (% of log capacity) where adaptive flushing starts.
    pub adaptive_flushing_lwm: f64,
    pub old_blocks_pct: u32,
    pub old_blocks_time_ms: u64,
    /// Threads that apply redo in parallel during recovery (0 = one per core).
    pub recovery_threads: usize,
    /// `innodb_lock_wait_timeout`, in milliseconds (set in seconds, like InnoDB).
    pub lock_wait_timeout_ms: u64,
    /// `innodb_purge_threads`: purge workers besides the coordinator's own work; 0 turns
    /// background purge off (history then grows until a slow shutdown or `Db::purge_now`).
    pub purge_threads: usize,
    /// `innodb_purge_batch_size`: `None` (0, the default) is automatic; a number is an upper
    /// bound on the undo logs one batch takes (docs/purge.md).
    pub purge_batch_size: Option<usize>,
    /// `innodb_max_purge_lag`: history length past which DML is delayed (0 = never).
    pub max_purge_lag: u64,
    /// `innodb_max_purge_lag_delay`: the longest such delay, in microseconds.
    pub max_purge_lag_delay_us: u64,
    /// `innodb_fast_shutdown`: 0 purges all history before shutting down; 1 does not.
    pub fast_shutdown: u8,
    /// `innodb_online_alter_log_max_size`: the most bytes of concurrent changes an online
    /// index build logs before it fails (1799; docs/online-ddl.md).
    pub online_alter_log_max_size: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            page_size: 16 * 1024,
            buffer_pool_size: 128 << 20,
            // Lesson 2: a big log makes checkpoints rare; fallocate makes it cheap to create.
            log_file_size: 1 << 30,
            log_buffer_size: 16 << 20,
            flush_log_at_trx_commit: FlushAtCommit::Durable,
            flush_method: FlushMethod::ODirect,
            log_file_buffering: None,
            doublewrite: true,
            doublewrite_slots: crate::doublewrite::DEFAULT_SLOTS,
            max_dirty_pages_pct: 90.0,
            max_dirty_pages_pct_lwm: 10.0,
            io_capacity: 2000,
            io_capacity_max: 20000,
            adaptive_flushing: true,
            stats_auto_recalc: true,
            adaptive_flushing_lwm: 10.0,
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            recovery_threads: 0,
            lock_wait_timeout_ms: 50_000,
            purge_threads: 1,
            purge_batch_size: None,
            max_purge_lag: 100_000,
            max_purge_lag_delay_us: 10_000,
            fast_shutdown: 1,
            online_alter_log_max_size: 128 << 20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown variable '{0}'")]
    Unknown(String),
    #[error("expected name=value, got '{0}'")]
    Syntax(String),
    #[error("{name}: '{value}' is not valid: {allowed}")]
    BadValue {
        name: String,
        value: String,
        allowed: String,
    },
}

fn bad(name: &str, value: &str, allowed: impl Into<String>) -> ConfigError {
    ConfigError::BadValue {
        name: name.into(),
        value: value.into(),
        allowed: allowed.into(),
    }
}

/// Parses `123`, `64K`, `16M`, `2G`, `1T` (binary units).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_uppercase().as_str() {
        "1" | "ON" | "TRUE" => Some(true),
        "0" | "OFF" | "FALSE" => Some(false),
        _ => None,
    }
}

fn size_in(name: &str, v: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    match parse_size(v) {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(bad(
            name,
            v,
            format!("a size from {min} to {max} bytes (K, M, G suffixes)"),
        )),
    }
}

fn num_in(name: &str, v: &str, min: f64, max: f64) -> Result<f64, ConfigError> {
    match v.trim().parse::<f64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(bad(name, v, format!("a number from {min} to {max}"))),
    }
}

impl Config {
    /// Whether the redo log goes through the file system cache (`innodb_log_file_buffering`,
    /// automatic unless set).
    pub fn log_file_buffering_effective(&self) -> bool {
        self.log_file_buffering
            .unwrap_or(self.flush_log_at_trx_commit == FlushAtCommit::WriteOnly)
    }

    /// The variables MariaDB 10.11 lets `SET GLOBAL` change while it runs; the others
    /// (`innodb_page_size`, `innodb_log_buffer_size`, `innodb_flush_method`,
    /// `innodb_doublewrite`, the `quire_` ones) are read-only after start (MySQL 1238).
    /// `DbInner::set_globals` applies them live. Two can be asked for but not always done:
    /// `innodb_buffer_pool_size` (the pool is not resized) and `innodb_log_file_buffering`
    /// (the open log file keeps its mode).
    pub const DYNAMIC: &'static [&'static str] = &[
        "innodb_buffer_pool_size",
        "innodb_log_file_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_log_file_buffering",
        "innodb_max_dirty_pages_pct",
        "innodb_max_dirty_pages_pct_lwm",
        "innodb_io_capacity",
        "innodb_io_capacity_max",
        "innodb_adaptive_flushing",
        "innodb_adaptive_flushing_lwm",
        "innodb_old_blocks_pct",
        "innodb_old_blocks_time",
        "innodb_lock_wait_timeout",
        "innodb_purge_threads",
        "innodb_purge_batch_size",
        "innodb_max_purge_lag",
        "innodb_max_purge_lag_delay",
        "innodb_fast_shutdown",
        "innodb_online_alter_log_max_size",
        "innodb_stats_auto_recalc",
    ];

    /// One variable's current value, as [`Config::list`] shows it.
    pub fn get(&self, name: &str) -> Option<String> {
        self.list()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Every variable name [`Config::set`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        "innodb_page_size",
        "innodb_buffer_pool_size",
        "innodb_log_file_size",
        "innodb_log_buffer_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_flush_method",
        "innodb_log_file_buffering",
        "innodb_doublewrite",
        "innodb_max_dirty_pages_pct",
        "innodb_max_dirty_pages_pct_lwm",
        "innodb_io_capacity",
        "innodb_io_capacity_max",
        "innodb_adaptive_flushing",
        "innodb_adaptive_flushing_lwm",
        "innodb_old_blocks_pct",
        "innodb_old_blocks_time",
        "quire_recovery_threads",
        "quire_doublewrite_slots",
        "innodb_lock_wait_timeout",
        "innodb_purge_threads",
        "innodb_purge_batch_size",
        "innodb_max_purge_lag",
        "innodb_max_purge_lag_delay",
        "innodb_fast_shutdown",
        "innodb_online_alter_log_max_size",
        "innodb_stats_auto_recalc",
    ];

    /// Applies one `name=value` setting.
    pub fn set_str(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::Syntax(assignment.into()))?;
        self.set(name.trim(), value.trim())
    }

    /// Sets variable `name` to `value`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        let lname = name.to_ascii_lowercase();
        let n = lname.as_str();
        match n {
            "innodb_page_size" => {
                let v = parse_size(value).unwrap_or(0);
                if !matches!(v, 4096 | 8192 | 16384 | 32768 | 65536) {
                    return Err(bad(n, value, "4K, 8K, 16K, 32K or 64K"));
                }
                self.page_size = v as u32;
            }
            "innodb_buffer_pool_size" => {
                self.buffer_pool_size = size_in(n, value, 1 << 20, 1 << 44)?
            }
            "innodb_log_file_size" => self.log_file_size = size_in(n, value, 1 << 20, 1 << 50)?,
            "innodb_log_buffer_size" => {
                self.log_buffer_size = size_in(n, value, 256 << 10, 1 << 32)?
            }
            "innodb_flush_log_at_trx_commit" => {
                self.flush_log_at_trx_commit = value
                    .trim()
                    .parse::<u8>()
                    .ok()
                    .and_then(FlushAtCommit::from_innodb)
                    .ok_or_else(|| bad(n, value, "0, 1 or 2"))?
            }
            "innodb_flush_method" => {
                self.flush_method = match value.to_ascii_uppercase().as_str() {
                    "O_DIRECT" => FlushMethod::ODirect,
                    "O_DSYNC" => FlushMethod::ODsync,
                    "FSYNC" => FlushMethod::Fsync,
                    _ => return Err(bad(n, value, "O_DIRECT, O_DSYNC or fsync")),
                }
            }
            "innodb_log_file_buffering" => {
                self.log_file_buffering =
                    Some(parse_bool(value).ok_or_else(|| bad(n, value, "ON or OFF"))?)
            }
            "innodb_doublewrite" => {
                self.doublewrite = parse_bool(value).ok_or_else(|| bad(n, value, "ON or OFF"))?
            }
            "innodb_max_dirty_pages_pct" => {
                self.max_dirty_pages_pct = num_in(n, value, 0.0, 99.999)?
            }
            "innodb_max_dirty_pages_pct_lwm" => {
                self.max_dirty_pages_pct_lwm = num_in(n, value, 0.0, 99.999)?
            }
            "innodb_adaptive_flushing" => {
                self.adaptive_flushing =
                    parse_bool(value).ok_or_else(|| bad(n, value, "ON or OFF"))?
            }
            "innodb_stats_auto_recalc" => {
                self.stats_auto_recalc =
                    parse_bool(value).ok_or_else(|| bad(n, value, "ON or OFF"))?
            }
            "innodb_io_capacity" => self.io_capacity = num_in(n, value, 100.0, 1e9)? as u64,
            "innodb_io_capacity_max" => self.io_capacity_max = num_in(n, value, 100.0, 1e9)? as u64,
            "innodb_adaptive_flushing_lwm" => {
                self.adaptive_flushing_lwm = num_in(n, value, 0.0, 70.0)?
            }
            "innodb_old_blocks_pct" => self.old_blocks_pct = num_in(n, value, 5.0, 95.0)? as u32,
            "innodb_old_blocks_time" => {
                self.old_blocks_time_ms = num_in(n, value, 0.0, u32::MAX as f64)? as u64
            }
            "quire_recovery_threads" => {
                self.recovery_threads = num_in(n, value, 0.0, 256.0)? as usize
            }
            "quire_doublewrite_slots" => {
                self.doublewrite_slots =
                    num_in(n, value, 1.0, f64::from(crate::doublewrite::MAX_SLOTS))? as u32
            }
            "innodb_lock_wait_timeout" => {
                self.lock_wait_timeout_ms =
                    (num_in(n, value, 0.0, 1_073_741_824.0)? * 1000.0) as u64
            }
            "innodb_purge_threads" => self.purge_threads = num_in(n, value, 0.0, 32.0)? as usize,
            "innodb_purge_batch_size" => {
                let v = num_in(n, value, 0.0, 5000.0)? as usize;
                self.purge_batch_size = (v != 0).then_some(v);
            }
            "innodb_max_purge_lag" => {
                self.max_purge_lag = num_in(n, value, 0.0, u32::MAX as f64)? as u64
            }
            "innodb_max_purge_lag_delay" => {
                self.max_purge_lag_delay_us = num_in(n, value, 0.0, 10_000_000.0)? as u64
            }
            "innodb_fast_shutdown" => self.fast_shutdown = num_in(n, value, 0.0, 1.0)? as u8,
            "innodb_online_alter_log_max_size" => {
                self.online_alter_log_max_size = size_in(n, value, 65536, u64::MAX)?
            }
            _ => return Err(ConfigError::Unknown(name.into())),
        }
        Ok(())
    }

    /// The current value of every variable, as (name, value) pairs in [`Config::NAMES`] order.
    pub fn list(&self) -> Vec<(&'static str, String)> {
        let on = |b: bool| if b { "ON" } else { "OFF" }.to_string();
        vec![
            ("innodb_page_size", self.page_size.to_string()),
            ("innodb_buffer_pool_size", self.buffer_pool_size.to_string()),
            ("innodb_log_file_size", self.log_file_size.to_string()),
            ("innodb_log_buffer_size", self.log_buffer_size.to_string()),
            (
                "innodb_flush_log_at_trx_commit",
                self.flush_log_at_trx_commit.as_innodb().to_string(),
            ),
            ("innodb_flush_method", self.flush_method.to_string()),
            (
                "innodb_log_file_buffering",
                on(self.log_file_buffering_effective()),
            ),
            ("innodb_doublewrite", on(self.doublewrite)),
            (
                "innodb_max_dirty_pages_pct",
                self.max_dirty_pages_pct.to_string(),
            ),
            (
                "innodb_max_dirty_pages_pct_lwm",
                self.max_dirty_pages_pct_lwm.to_string(),
            ),
            ("innodb_io_capacity", self.io_capacity.to_string()),
            ("innodb_io_capacity_max", self.io_capacity_max.to_string()),
            ("innodb_adaptive_flushing", on(self.adaptive_flushing)),
            ("innodb_stats_auto_recalc", on(self.stats_auto_recalc)),
            (
                "innodb_adaptive_flushing_lwm",
                self.adaptive_flushing_lwm.to_string(),
            ),
            ("innodb_old_blocks_pct", self.old_blocks_pct.to_string()),
            (
                "innodb_old_blocks_time",
                self.old_blocks_time_ms.to_string(),
            ),
            ("quire_recovery_threads", self.recovery_threads.to_string()),
            (
                "quire_doublewrite_slots",
                self.doublewrite_slots.to_string(),
            ),
            (
                "innodb_lock_wait_timeout",
                (self.lock_wait_timeout_ms as f64 / 1000.0).to_string(),
            ),
            ("innodb_purge_threads", self.purge_threads.to_string()),
            (
                "innodb_purge_batch_size",
                self.purge_batch_size.unwrap_or(0).to_string(),
            ),
            ("innodb_max_purge_lag", self.max_purge_lag.to_string()),
            (
                "innodb_max_purge_lag_delay",
                self.max_purge_lag_delay_us.to_string(),
            ),
            ("innodb_fast_shutdown", self.fast_shutdown.to_string()),
            (
                "innodb_online_alter_log_max_size",
                self.online_alter_log_max_size.to_string(),
            ),
        ]
    }
}

impl fmt::Display for FlushMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FlushMethod::ODirect => "O_DIRECT",
            FlushMethod::ODsync => "O_DSYNC",
            FlushMethod::Fsync => "fsync",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_file_buffering_follows_flush_at_commit_2_unless_set() {
        let mut c = Config::default();
        assert!(!c.log_file_buffering_effective());
        c.set_str("innodb_flush_log_at_trx_commit=2").expect("set");
        assert!(c.log_file_buffering_effective());
        c.set_str("innodb_log_file_buffering=OFF").expect("set");
        assert!(!c.log_file_buffering_effective());
        c.set_str("innodb_flush_log_at_trx_commit=1").expect("set");
        c.set_str("innodb_log_file_buffering=ON").expect("set");
        assert!(c.log_file_buffering_effective());
        let listed = c.list();
        assert!(listed.contains(&("innodb_log_file_buffering", "ON".to_string())));
        assert!(c.set_str("innodb_log_file_buffering=maybe").is_err());
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("16K"), Some(16384));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999T"), None, "overflow is an error");
    }

    #[test]
    fn settings_parse_and_list_round_trips() {
        let mut c = Config::default();
        c.set_str("innodb_log_file_size=8G").expect("set");
        c.set_str("INNODB_FLUSH_LOG_AT_TRX_COMMIT = 2")
            .expect("set");
        c.set_str("innodb_doublewrite=OFF").expect("set");
        assert_eq!(c.log_file_size, 8 << 30);
        assert_eq!(c.flush_log_at_trx_commit, FlushAtCommit::WriteOnly);
        let mut d = Config::default();
        for (name, value) in c.list() {
            d.set(name, &value).expect("listed value parses");
        }
        // innodb_log_file_buffering lists its effective value, which setting makes explicit.
        assert_eq!(d.log_file_buffering, Some(true));
        assert_eq!(c.list(), d.list());
        assert_eq!(
            c,
            Config {
                log_file_buffering: None,
                ..d
            }
        );
        assert_eq!(c.list().len(), Config::NAMES.len());
    }

    #[test]
    fn bad_settings_say_what_is_allowed() {
        let mut c = Config::default();
        let e = c
            .set_str("innodb_flush_log_at_trx_commit=3")
            .expect_err("accepted 3");
        assert!(e.to_string().contains("0, 1 or 2"), "{e}");
        let e = c.set_str("innodb_page_size=12K").expect_err("accepted 12K");
        assert!(e.to_string().contains("16K"), "{e}");
        assert_eq!(
            c.set_str("no_such=1"),
            Err(ConfigError::Unknown("no_such".into()))
        );
        assert!(matches!(c.set_str("novalue"), Err(ConfigError::Syntax(_))));
        assert_eq!(c, Config::default(), "failed settings change nothing");
    }
}
