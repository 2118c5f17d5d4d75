//! # `innodb_flush_log_at_trx_commit` and the once-a-second flush (lesson 3)
//!
//! | value | at commit ([`super::Log::commit_wait`]) | once a second (this thread) |
//! |---|---|---|
//! | 1 | write + sync | write + sync |
//! | 2 | write | write + sync |
//! | 0 | nothing | write + sync |
//!
//! With 2, a crash of the process loses nothing (the OS has the bytes); a crash of the
//! machine loses up to a second. With 0, either loses up to a second.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::writer::Shared;

/// `innodb_flush_log_at_trx_commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlushAtCommit {
    /// 0: write and sync once a second only.
    Lazy,
    /// 1: durable at commit.
    #[default]
    Durable,
    /// 2: written at commit, synced once a second.
    WriteOnly,
}

impl FlushAtCommit {
    /// From the InnoDB variable's value.
    pub fn from_innodb(v: u8) -> Option<FlushAtCommit> {
        match v {
            0 => Some(FlushAtCommit::Lazy),
            1 => Some(FlushAtCommit::Durable),
            2 => Some(FlushAtCommit::WriteOnly),
            _ => None,
        }
    }
    pub fn as_innodb(self) -> u8 {
        match self {
            FlushAtCommit::Lazy => 0,
            FlushAtCommit::Durable => 1,
            FlushAtCommit::WriteOnly => 2,
        }
    }
}

/// The stop signal of the background thread.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    pub fn stop(&self) {
        *self.stopped.lock() = true;
        self.cv.notify_all();
    }
    /// Sleeps up to `d`; returns true if stopped.
    fn sleep(&self, d: Duration) -> bool {
        let mut s = self.stopped.lock();
        if !*s {
            self.cv.wait_for(&mut s, d);
        }
        *s
    }
}

/// Starts the once-a-second thread: it writes and syncs everything filled so far.
pub(crate) fn spawn(shared: Arc<Shared>, stop: Arc<Stop>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("quire-log-flush".into())
        .spawn(move || {
            while !stop.sleep(Duration::from_secs(1)) {
                shared.flush_all();
            }
        })
}
