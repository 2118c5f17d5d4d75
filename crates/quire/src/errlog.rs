//! Where the server's own messages go: standard error, or the file `log_error` names
//! (`--set log_error=PATH`, `log-error` in an option file), as MariaDB's error log.
//!
//! Everything is written through [`Target`]: the tracing subscriber's writer and the
//! lines `quire serve` prints itself (ready, shutting down). The file is opened once, at
//! start, before the data directory; until then (option-file warnings, a bad setting)
//! messages go to standard error.
//!
//! Invariants:
//! 1. Once a file is set, every message goes to it, whole: a line is written under the
//!    lock, so concurrent threads never interleave within a line.
//! 2. A failed write to the file is not retried elsewhere: the server does not stop
//!    because its log cannot be written (MariaDB neither).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use parking_lot::Mutex;

static FILE: Mutex<Option<File>> = Mutex::new(None);

/// Appends every message from now on to `path` (created if missing).
pub fn open(path: &Path) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let f = OpenOptions::new().create(true).append(true).open(path)?;
    *FILE.lock() = Some(f);
    Ok(())
}

/// One line from `quire serve` itself, timestamped as the tracing lines are not (it is
/// what an operator greps for: ready, shutting down).
pub fn say(line: &str) {
    let _ = Target.write_all(format!("{line}\n").as_bytes());
}

/// The writer: the log file when one is open, standard error otherwise.
#[derive(Clone, Copy, Default)]
pub struct Target;

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        // Invariant 1: the whole buffer under the lock.
        let mut f = FILE.lock();
        match f.as_mut() {
            Some(file) => file.write_all(buf),
            None => io::stderr().lock().write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match FILE.lock().as_mut() {
            Some(file) => file.flush(),
            None => io::stderr().flush(),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Target {
    type Writer = Target;

    fn make_writer(&'a self) -> Target {
        Target
    }
}
