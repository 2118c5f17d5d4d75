//! The one reaction to a failed write or sync: log it and abort.
//!
//! Retrying an fsync after a failure is unsafe: Linux may already have marked the dirty pages
//! clean, so a second fsync "succeeds" without the data ever reaching the disk. InnoDB and
//! PostgreSQL (since "fsyncgate") both crash instead; recovery then rebuilds from the redo log,
//! which is the only copy we can trust. A commit whose log write failed is never acknowledged
//! because this function does not return.

use crate::IoError;

/// Logs `err` and aborts the process. Never returns.
pub fn fatal_io(err: &IoError) -> ! {
    fatal(&format!(
        "fatal I/O error, aborting to protect your data: {err}"
    ))
}

/// Logs `msg` to the log and to stderr (the log may not be set up), then aborts.
pub fn fatal(msg: &str) -> ! {
    tracing::error!("{msg}");
    eprintln!("quire: {msg}");
    std::process::abort()
}
