//! # quire-io: every byte Quire reads or writes goes through here
//!
//! One small trait pair, [`Vfs`] (the namespace: open, delete, rename, directory sync) and
//! [`VfsFile`] (positioned reads and writes, sync, allocation), with two implementations:
//!
//! * [`os::OsVfs`]: the real disk. O_DIRECT where the file system reports an alignment,
//!   buffered I/O plus `fdatasync` otherwise; `fallocate(2)` for extension (lesson 5).
//! * [`sim::SimVfs`]: a deterministic, seeded simulator that keeps durable and pending writes
//!   apart and produces post-crash images with kept, dropped, torn and garbage writes.
//!
//! The engine never holds a `dyn VfsFile` directly for writing: it uses [`FileHandle`], which
//! turns a failed write or sync into [`fatal::fatal_io`] (log, then abort the process). After a
//! failed fsync the kernel may have dropped the dirty pages, so the only honest reaction is
//! to stop and let recovery rebuild from the redo log (PostgreSQL's "fsyncgate").

#![deny(clippy::unwrap_used)]
// A file's length is a fallible query, not a collection size.
#![allow(clippy::len_without_is_empty)]

mod aligned;
pub mod fatal;
pub mod os;
pub mod sim;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use aligned::AlignedBuf;

/// What went wrong, in the categories the layers above act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file or directory does not exist.
    NotFound,
    /// `create_new` found the file already there.
    AlreadyExists,
    /// ENOSPC or EDQUOT: the user can free space and retry.
    NoSpace,
    /// A read past the end of the file.
    UnexpectedEof,
    /// The request itself is wrong (for example a misaligned O_DIRECT buffer): a bug.
    InvalidInput,
    /// EIO and everything else the device or kernel reports.
    Io,
    /// Another holder has the lock ([`Vfs::lock_exclusive`]).
    Locked,
}

/// An I/O error, naming the operation and the file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{op} {}: {detail}", path.display())]
pub struct IoError {
    pub op: &'static str,
    pub path: PathBuf,
    pub kind: ErrorKind,
    pub detail: String,
}

impl IoError {
    pub fn new(op: &'static str, path: &Path, kind: ErrorKind, detail: impl Into<String>) -> Self {
        IoError {
            op,
            path: path.to_path_buf(),
            kind,
            detail: detail.into(),
        }
    }

    /// Converts an OS error, classifying it by errno.
    pub fn from_std(op: &'static str, path: &Path, err: &std::io::Error) -> Self {
        let kind = match err.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => ErrorKind::NoSpace,
            Some(libc::ENOENT) => ErrorKind::NotFound,
            Some(libc::EEXIST) => ErrorKind::AlreadyExists,
            Some(libc::EINVAL) => ErrorKind::InvalidInput,
            _ => match err.kind() {
                std::io::ErrorKind::NotFound => ErrorKind::NotFound,
                std::io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
                std::io::ErrorKind::UnexpectedEof => ErrorKind::UnexpectedEof,
                std::io::ErrorKind::InvalidInput => ErrorKind::InvalidInput,
                _ => ErrorKind::Io,
            },
        };
        IoError::new(op, path, kind, err.to_string())
    }
}

pub type Result<T> = std::result::Result<T, IoError>;

/// How to open a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Create {
    /// The file must exist.
    #[default]
    Existing,
    /// Create it if missing.
    IfMissing,
    /// It must not exist yet.
    New,
}

/// Options for [`Vfs::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenOptions {
    pub create: Create,
    /// Ask for O_DIRECT. Granted only when the file system reports a usable alignment; check
    /// [`VfsFile::direct_io`] for the outcome.
    pub direct: bool,
    /// O_DSYNC: every write is durable when it returns (an option for the redo log).
    pub dsync: bool,
    pub read_only: bool,
}

impl OpenOptions {
    pub fn existing() -> Self {
        OpenOptions::default()
    }
    pub fn create_new() -> Self {
        OpenOptions {
            create: Create::New,
            ..Default::default()
        }
    }
    pub fn create_if_missing() -> Self {
        OpenOptions {
            create: Create::IfMissing,
            ..Default::default()
        }
    }
    pub fn direct(mut self, on: bool) -> Self {
        self.direct = on;
        self
    }
    pub fn dsync(mut self, on: bool) -> Self {
        self.dsync = on;
        self
    }
}

/// The alignment that O_DIRECT requires of this file's reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectIo {
    /// Required alignment of the memory buffer, in bytes.
    pub mem_align: u32,
    /// Required alignment of file offsets and lengths, in bytes (the logical block size).
    pub offset_align: u32,
}

impl DirectIo {
    /// Checks one O_DIRECT request: the file offset, and every memory segment's address and
    /// length. A misaligned request is a bug in the caller, so it is refused with
    /// [`ErrorKind::InvalidInput`] rather than silently bounced through an aligned copy (which
    /// would hide the bug on the simulator and cost a copy on the real disk).
    ///
    /// `segments` are `(address, length)` pairs, as in an iovec. Linux checks each segment's
    /// address against the memory alignment and each segment's length against the logical
    /// block size, so this does the same.
    pub fn check(
        &self,
        op: &'static str,
        path: &Path,
        offset: u64,
        segments: &[(usize, usize)],
    ) -> Result<()> {
        debug_assert!(self.mem_align.is_power_of_two() && self.offset_align.is_power_of_two());
        let off_mask = u64::from(self.offset_align) - 1;
        if offset & off_mask != 0 {
            return Err(IoError::new(
                op,
                path,
                ErrorKind::InvalidInput,
                format!(
                    "O_DIRECT offset {offset} is not a multiple of {}",
                    self.offset_align
                ),
            ));
        }
        for &(addr, len) in segments {
            if addr % self.mem_align as usize != 0 {
                return Err(IoError::new(
                    op,
                    path,
                    ErrorKind::InvalidInput,
                    format!(
                        "O_DIRECT buffer address {addr:#x} is not aligned to {}",
                        self.mem_align
                    ),
                ));
            }
            if (len as u64) & off_mask != 0 {
                return Err(IoError::new(
                    op,
                    path,
                    ErrorKind::InvalidInput,
                    format!(
                        "O_DIRECT length {len} is not a multiple of {}",
                        self.offset_align
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The file namespace. Directory changes (create, delete, rename) are durable only after
/// [`Vfs::sync_dir`] on the parent directory.
pub trait Vfs: Send + Sync + fmt::Debug {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn VfsFile>>;
    fn delete(&self, path: &Path) -> Result<()>;
    /// Atomically replaces `to` if it exists.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    fn exists(&self, path: &Path) -> Result<bool>;
    /// Names of the files (not directories) directly inside `dir`, sorted.
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>>;
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Makes the directory's entries (creates, deletes, renames) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Takes an exclusive advisory lock on `path` (created if missing), held until the returned
    /// guard is dropped, so that two processes never open one data directory. Fails with
    /// [`ErrorKind::Locked`] if another holder has it. The simulator runs in one process and
    /// needs no lock: the default grants it.
    fn lock_exclusive(&self, path: &Path) -> Result<Box<dyn LockGuard>> {
        let _ = path;
        Ok(Box::new(NoLock))
    }
    /// Whether the first write into a block reserved by [`VfsFile::allocate`] costs more
    /// than later writes (a real file system converts the block's extent, and the next sync
    /// commits that to its journal). The redo log then writes its first lap ahead of
    /// time. The simulator models no such cost.
    fn first_writes_cost_more(&self) -> bool {
        false
    }
}

/// Holds a lock taken with [`Vfs::lock_exclusive`]; dropping it releases the lock.
pub trait LockGuard: Send + Sync + fmt::Debug {}

/// The lock of a file system that needs none.
#[derive(Debug)]
pub struct NoLock;

impl LockGuard for NoLock {}

/// One open file. All methods take `&self`: positioned I/O needs no cursor, so many threads
/// can share one file.
pub trait VfsFile: Send + Sync + fmt::Debug {
    fn path(&self) -> &Path;
    /// Fills `buf` from `offset`; a read past the end is [`ErrorKind::UnexpectedEof`].
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()>;
    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()>;
    /// Writes `bufs` back to back starting at `offset` (pwritev).
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> Result<()>;
    /// fdatasync: every completed write so far, and the file size, become durable.
    fn sync_data(&self) -> Result<()>;
    /// Reserves `[offset, offset + len)` on disk (fallocate), growing the file if needed.
    /// Never shrinks. Reads of the new range return zeros.
    fn allocate(&self, offset: u64, len: u64) -> Result<()>;
    /// Sets the file size, truncating or growing (sparse).
    fn set_len(&self, len: u64) -> Result<()>;
    fn len(&self) -> Result<u64>;
    /// `Some` when the file was opened with O_DIRECT, with its alignment rules. They stay
    /// in force while [`VfsFile::set_buffered`] has the writes go through the cache, so a
    /// caller writes the same way in either mode.
    fn direct_io(&self) -> Option<DirectIo>;
    /// For a file opened with O_DIRECT: `on` sends later reads and writes through the file
    /// system cache, `off` back to O_DIRECT (`innodb_log_file_buffering` switched live).
    /// Durability is unchanged: `sync_data` covers writes made in either mode. Returns
    /// whether the file can switch (false when it was not opened with O_DIRECT).
    fn set_buffered(&self, on: bool) -> Result<bool> {
        let _ = on;
        Ok(false)
    }
}

/// The engine's handle on a file: reads and allocation return errors, but a failed write or
/// sync aborts the process (see [`fatal`]).
#[derive(Debug, Clone)]
pub struct FileHandle {
    inner: Arc<dyn VfsFile>,
}

impl FileHandle {
    pub fn new(inner: Arc<dyn VfsFile>) -> Self {
        FileHandle { inner }
    }
    pub fn path(&self) -> &Path {
        self.inner.path()
    }
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    pub fn write_all_at(&self, buf: &[u8], offset: u64) {
        if let Err(e) = self.inner.write_all_at(buf, offset) {
            fatal::fatal_io(&e);
        }
    }
    pub fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) {
        if let Err(e) = self.inner.write_vectored_at(bufs, offset) {
            fatal::fatal_io(&e);
        }
    }
    pub fn sync_data(&self) {
        if let Err(e) = self.inner.sync_data() {
            fatal::fatal_io(&e);
        }
    }
    /// Allocation may fail with [`ErrorKind::NoSpace`]; that is the user's problem to solve,
    /// not a reason to abort: nothing durable depends on space that was never granted.
    pub fn allocate(&self, offset: u64, len: u64) -> Result<()> {
        self.inner.allocate(offset, len)
    }
    pub fn set_len(&self, len: u64) -> Result<()> {
        self.inner.set_len(len)
    }
    pub fn len(&self) -> Result<u64> {
        self.inner.len()
    }
    pub fn direct_io(&self) -> Option<DirectIo> {
        self.inner.direct_io()
    }
    pub fn inner(&self) -> &Arc<dyn VfsFile> {
        &self.inner
    }
}
