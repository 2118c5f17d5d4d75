//! The real file system (Linux).
//!
//! * **O_DIRECT** when asked for and the file system reports an alignment: `statx` with
//!   `STATX_DIOALIGN` for regular files, `BLKSSZGET` for block devices. The flag is switched
//!   on with `fcntl(F_SETFL)` after the open, so the file is created exactly once whatever
//!   happens. If no alignment is reported, or the kernel refuses the flag (EINVAL), the file
//!   stays buffered and durability comes from `fdatasync`; one log line per process says so
//!   (lesson 3: "O_DIRECT where the physical block size can be detected").
//! * With O_DIRECT in effect, a misaligned buffer, offset or length is refused with
//!   [`ErrorKind::InvalidInput`]: it is a bug in the caller, never bounced through a copy.
//! * `dsync` is O_DSYNC.
//! * Vectored writes are `pwritev`, looping on short writes; reads and writes retry EINTR.
//! * `allocate` is `fallocate(2)` mode 0; only where that is unsupported (EOPNOTSUPP,
//!   ENOSYS) does it write zeros, and only past the current end of file (lesson 5).
//!
//! What this machine does (kernel 6.18, measured by the tests in this file): `/work` and
//! `/tmp` are ext4 and report a DIO alignment via statx, so O_DIRECT is granted there;
//! see docs/io.md for the numbers.

use std::ffi::CStr;
use std::fs;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::{Create, DirectIo, ErrorKind, IoError, OpenOptions, Result, Vfs, VfsFile};

/// At most this many iovecs per `pwritev` call (Linux's IOV_MAX).
const IOV_MAX: usize = 1024;

/// The zero-fill fallback writes in chunks of this size, so it needs no more memory than this
/// however large the extension.
const ZERO_CHUNK_BYTES: usize = 1 << 20;

/// Set once the "O_DIRECT unavailable" line has been logged: once per process is enough.
static LOGGED_NO_DIRECT: AtomicBool = AtomicBool::new(false);
/// Set once the "fallocate unsupported" line has been logged.
static LOGGED_NO_FALLOCATE: AtomicBool = AtomicBool::new(false);

/// The operating system's file system.
#[derive(Debug, Default, Clone)]
pub struct OsVfs;

impl OsVfs {
    pub fn new() -> Self {
        OsVfs
    }

    /// [`Vfs::open`] returning the concrete type (for tests and tools that need the fd).
    pub fn open_file(&self, path: &Path, opts: OpenOptions) -> Result<OsFile> {
        let mut o = fs::OpenOptions::new();
        o.read(true).write(!opts.read_only);
        match opts.create {
            Create::Existing => {}
            Create::IfMissing => {
                o.create(true);
            }
            Create::New => {
                o.create_new(true);
            }
        }
        if opts.dsync {
            o.custom_flags(libc::O_DSYNC);
        }
        let file = o
            .open(path)
            .map_err(|e| IoError::from_std("open", path, &e))?;
        let direct = if opts.direct {
            enable_direct(&file, path)?
        } else {
            None
        };
        Ok(OsFile {
            file,
            path: path.to_path_buf(),
            direct,
            buffered: parking_lot::Mutex::new(false),
        })
    }
}

#[derive(Debug)]
pub struct OsFile {
    // Invariant: `direct` is `Some` exactly when the file was opened with O_DIRECT granted,
    // and O_DIRECT is set on `file` exactly when `direct` is `Some` and `buffered` holds
    // false (checked by `direct_flag_matches_direct_io` and
    // `set_buffered_switches_o_direct_and_keeps_the_data`). The mutex also makes each
    // switch one F_GETFL/F_SETFL pair.
    file: fs::File,
    path: PathBuf,
    direct: Option<DirectIo>,
    buffered: parking_lot::Mutex<bool>,
}

impl Vfs for OsVfs {
    fn first_writes_cost_more(&self) -> bool {
        true
    }
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn VfsFile>> {
        Ok(Arc::new(self.open_file(path, opts)?))
    }

    fn delete(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| IoError::from_std("delete", path, &e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| IoError::from_std("rename", from, &e))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        path.try_exists()
            .map_err(|e| IoError::from_std("stat", path, &e))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| IoError::from_std("readdir", dir, &e))? {
            let entry = entry.map_err(|e| IoError::from_std("readdir", dir, &e))?;
            let ft = entry
                .file_type()
                .map_err(|e| IoError::from_std("stat", dir, &e))?;
            if ft.is_file() {
                out.push(PathBuf::from(entry.file_name()));
            }
        }
        out.sort();
        Ok(out)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| IoError::from_std("mkdir", dir, &e))
    }

    fn lock_exclusive(&self, path: &Path) -> Result<Box<dyn crate::LockGuard>> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| IoError::from_std("open lock file", path, &e))?;
        // SAFETY: plain syscall on an fd we own.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(IoError::new(
                    "lock",
                    path,
                    ErrorKind::Locked,
                    "held by another process: is another Quire using this data directory?",
                ));
            }
            return Err(IoError::from_std("lock", path, &err));
        }
        Ok(Box::new(OsLock { _file: file }))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = fs::File::open(dir).map_err(|e| IoError::from_std("open dir", dir, &e))?;
        d.sync_all()
            .map_err(|e| IoError::from_std("fsync dir", dir, &e))
    }
}

/// The alignment O_DIRECT would need on this file, or `None` when the file system reports
/// none (then O_DIRECT is not worth trying: we could not obey its rules).
pub fn detect_direct_alignment(file: &fs::File, path: &Path) -> Result<Option<DirectIo>> {
    let meta = file
        .metadata()
        .map_err(|e| IoError::from_std("stat", path, &e))?;
    let found = if meta.file_type().is_block_device() {
        block_device_alignment(file)
    } else {
        statx_dio_alignment(file)
    };
    // An alignment that is not a power of two would break every mask computation; treat it
    // as "no alignment reported" rather than trust it.
    Ok(found.filter(|d| d.mem_align.is_power_of_two() && d.offset_align.is_power_of_two()))
}

fn statx_dio_alignment(file: &fs::File) -> Option<DirectIo> {
    const EMPTY: &CStr = c"";
    // SAFETY: statx is plain data; all-zero is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the fd is open for the duration of the call; the path is a valid C string and
    // AT_EMPTY_PATH makes the kernel stat the fd itself; stx is a valid out pointer.
    let r = unsafe {
        libc::statx(
            file.as_raw_fd(),
            EMPTY.as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    // ENOSYS (old kernel) or any other failure: no alignment known, so no O_DIRECT.
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    if stx.stx_dio_mem_align == 0 || stx.stx_dio_offset_align == 0 {
        // The file system does not support O_DIRECT on this file.
        return None;
    }
    Some(DirectIo {
        mem_align: stx.stx_dio_mem_align,
        offset_align: stx.stx_dio_offset_align,
    })
}

fn block_device_alignment(file: &fs::File) -> Option<DirectIo> {
    let mut ssz: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET, &mut ssz) };
    if r != 0 || ssz <= 0 {
        return None;
    }
    // The logical block size bounds both rules; memory alignment may be laxer on some
    // devices, but the logical block size is always accepted.
    let align = u32::try_from(ssz).ok()?;
    Some(DirectIo {
        mem_align: align,
        offset_align: align,
    })
}

/// Turns on O_DIRECT if the file system supports it; `None` means buffered I/O is in effect.
fn enable_direct(file: &fs::File, path: &Path) -> Result<Option<DirectIo>> {
    let Some(dio) = detect_direct_alignment(file, path)? else {
        log_no_direct(path, "the file system reports no O_DIRECT alignment");
        return Ok(None);
    };
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL on an fd we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        let e = std::io::Error::last_os_error();
        return Err(IoError::from_std("fcntl(F_GETFL)", path, &e));
    }
    // SAFETY: as above.
    let r = unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_DIRECT) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            log_no_direct(path, "the kernel refused O_DIRECT (EINVAL)");
            return Ok(None);
        }
        return Err(IoError::from_std("fcntl(O_DIRECT)", path, &e));
    }
    Ok(Some(dio))
}

fn log_no_direct(path: &Path, why: &str) {
    if !LOGGED_NO_DIRECT.swap(true, Ordering::Relaxed) {
        tracing::info!(
            "O_DIRECT unavailable for {} ({why}): using buffered I/O plus fdatasync",
            path.display()
        );
    }
}

fn is_eintr(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINTR)
}

impl OsFile {
    /// The open file description's status flags (F_GETFL), for tests and diagnostics.
    pub fn status_flags(&self) -> Result<i32> {
        // SAFETY: F_GETFL on an fd we own.
        let flags = unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_GETFL) };
        if flags < 0 {
            let e = std::io::Error::last_os_error();
            return Err(IoError::from_std("fcntl(F_GETFL)", &self.path, &e));
        }
        Ok(flags)
    }

    /// pwritev of `bufs` at `offset`, looping until every byte is written.
    fn pwritev_all(&self, bufs: &[&[u8]], offset: u64) -> Result<()> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let mut done = 0usize; // bytes written so far, across all buffers
        let mut first = 0usize; // index of the first buffer not fully written
        let mut skip = 0usize; // bytes of bufs[first] already written
        while done < total {
            let iov: Vec<libc::iovec> = bufs[first..]
                .iter()
                .enumerate()
                .filter(|(_, b)| !b.is_empty())
                .take(IOV_MAX)
                .map(|(i, b)| {
                    let b = if i == 0 { &b[skip..] } else { b };
                    libc::iovec {
                        iov_base: b.as_ptr() as *mut libc::c_void,
                        iov_len: b.len(),
                    }
                })
                .collect();
            let pos = offset + done as u64;
            let pos_off = libc::off_t::try_from(pos).map_err(|_| {
                IoError::new(
                    "pwritev",
                    &self.path,
                    ErrorKind::InvalidInput,
                    "offset too large",
                )
            })?;
            // SAFETY: every iovec points into a live borrowed slice; iovcnt <= IOV_MAX.
            let n = unsafe {
                libc::pwritev(
                    self.file.as_raw_fd(),
                    iov.as_ptr(),
                    iov.len() as libc::c_int,
                    pos_off,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if is_eintr(&e) {
                    continue;
                }
                return Err(IoError::from_std("pwritev", &self.path, &e));
            }
            if n == 0 {
                return Err(IoError::new(
                    "pwritev",
                    &self.path,
                    ErrorKind::Io,
                    "wrote zero bytes",
                ));
            }
            // Advance (first, skip) past n bytes.
            let mut n = n as usize;
            done += n;
            while n > 0 {
                let left = bufs[first].len() - skip;
                if n >= left {
                    n -= left;
                    first += 1;
                    skip = 0;
                } else {
                    skip += n;
                    n = 0;
                }
            }
            // Skip empty buffers so `skip` always refers to a non-empty one.
            while first < bufs.len() && bufs[first].len() == skip {
                first += 1;
                skip = 0;
            }
        }
        Ok(())
    }

    fn check_direct(&self, op: &'static str, offset: u64, segs: &[(usize, usize)]) -> Result<()> {
        match self.direct {
            Some(d) => d.check(op, &self.path, offset, segs),
            None => Ok(()),
        }
    }

    /// The fallback for file systems without fallocate: writes zeros over
    /// `[max(offset, EOF), offset + len)`. Bytes below the end of file already exist and
    /// must not be overwritten (they may hold data); a gap between EOF and `offset` reads as
    /// zeros anyway.
    pub(crate) fn fill_zeros(&self, offset: u64, len: u64) -> Result<()> {
        let end = offset.checked_add(len).ok_or_else(|| {
            IoError::new(
                "fallocate",
                &self.path,
                ErrorKind::InvalidInput,
                "range overflows",
            )
        })?;
        let cur = self.len()?;
        let mut pos = offset.max(cur);
        if pos >= end {
            return Ok(());
        }
        // O_DIRECT would demand aligned offsets, and EOF need not be aligned: write the zeros
        // through a second, buffered descriptor of the same inode. fdatasync on either
        // descriptor flushes the inode, so durability is unchanged.
        let buffered;
        let file = if self.direct.is_some() {
            let fd_path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
            buffered = fs::OpenOptions::new()
                .write(true)
                .open(&fd_path)
                .map_err(|e| IoError::from_std("reopen for zero fill", &self.path, &e))?;
            &buffered
        } else {
            &self.file
        };
        let zeros = vec![0u8; ZERO_CHUNK_BYTES];
        while pos < end {
            let n = usize::try_from(end - pos)
                .unwrap_or(usize::MAX)
                .min(zeros.len());
            write_all_at_fd(file, &zeros[..n], pos)
                .map_err(|e| IoError::from_std("write zeros", &self.path, &e))?;
            pos += n as u64;
        }
        debug_assert!(self.len()? >= end, "zero fill must reach the requested end");
        Ok(())
    }
}

fn write_all_at_fd(file: &fs::File, mut buf: &[u8], mut pos: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    while !buf.is_empty() {
        match file.write_at(buf, pos) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                pos += n as u64;
            }
            Err(e) if is_eintr(&e) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl VfsFile for OsFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.check_direct("read", offset, &[(buf.as_ptr() as usize, buf.len())])?;
        let mut done = 0usize;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(IoError::new(
                        "read",
                        &self.path,
                        ErrorKind::UnexpectedEof,
                        format!(
                            "{} bytes at offset {offset}: end of file after {done}",
                            buf.len()
                        ),
                    ))
                }
                Ok(n) => done += n,
                Err(e) if is_eintr(&e) => continue,
                Err(e) => return Err(IoError::from_std("read", &self.path, &e)),
            }
        }
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.write_vectored_at(&[buf], offset)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> Result<()> {
        if self.direct.is_some() {
            let segs: Vec<(usize, usize)> = bufs
                .iter()
                .map(|b| (b.as_ptr() as usize, b.len()))
                .collect();
            self.check_direct("write", offset, &segs)?;
        }
        self.pwritev_all(bufs, offset)
    }

    fn sync_data(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| IoError::from_std("fdatasync", &self.path, &e))
    }

    fn allocate(&self, offset: u64, len: u64) -> Result<()> {
        if len == 0 {
            // fallocate rejects len 0 with EINVAL; reserving nothing is trivially done.
            return Ok(());
        }
        let (Ok(off), Ok(l)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return Err(IoError::new(
                "fallocate",
                &self.path,
                ErrorKind::InvalidInput,
                "range too large",
            ));
        };
        loop {
            // SAFETY: plain syscall on an fd we own.
            let r = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, off, l) };
            if r == 0 {
                return Ok(());
            }
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                    if !LOGGED_NO_FALLOCATE.swap(true, Ordering::Relaxed) {
                        tracing::info!(
                            "fallocate unsupported for {}: extending files by writing zeros",
                            self.path.display()
                        );
                    }
                    return self.fill_zeros(offset, len);
                }
                // ENOSPC and EDQUOT become ErrorKind::NoSpace here.
                _ => return Err(IoError::from_std("fallocate", &self.path, &err)),
            }
        }
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| IoError::from_std("ftruncate", &self.path, &e))
    }

    fn len(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| IoError::from_std("stat", &self.path, &e))
    }

    fn direct_io(&self) -> Option<DirectIo> {
        self.direct
    }

    fn set_buffered(&self, on: bool) -> Result<bool> {
        if self.direct.is_none() {
            return Ok(false);
        }
        let mut buffered = self.buffered.lock();
        if *buffered == on {
            return Ok(true);
        }
        let fd = self.file.as_raw_fd();
        // SAFETY: F_GETFL/F_SETFL on an fd we own.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            let e = std::io::Error::last_os_error();
            return Err(IoError::from_std("fcntl(F_GETFL)", &self.path, &e));
        }
        let flags = if on {
            flags & !libc::O_DIRECT
        } else {
            flags | libc::O_DIRECT
        };
        // SAFETY: as above. The kernel granted O_DIRECT on this file at open, so setting it
        // again cannot fail for lack of support.
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(IoError::from_std("fcntl(F_SETFL)", &self.path, &e));
        }
        *buffered = on;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlignedBuf;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    fn open(dir: &Path, name: &str, opts: OpenOptions) -> Arc<dyn VfsFile> {
        OsVfs::new().open(&dir.join(name), opts).expect("open")
    }

    fn read_all(f: &dyn VfsFile) -> Vec<u8> {
        let mut v = vec![0u8; f.len().expect("len") as usize];
        f.read_exact_at(&mut v, 0).expect("read");
        v
    }

    #[test]
    fn direct_open_on_tmp_reports_statx_alignment_or_falls_back() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new().direct(true));
        let std_file = fs::File::open(d.path().join("f")).expect("open");
        let detected = detect_direct_alignment(&std_file, d.path()).expect("detect");
        // direct_io reports exactly what statx says: granted iff an alignment is reported
        // (EINVAL from the kernel would be the only other reason, not expected on ext4).
        assert_eq!(f.direct_io(), detected);
        eprintln!("{}: direct_io = {:?}", d.path().display(), f.direct_io());
    }

    #[test]
    fn direct_open_on_tmpfs_matches_detection() {
        // tmpfs is the usual file system without (or with trivial) O_DIRECT: whichever it is
        // on this kernel, direct_io must report what detection found, and I/O must work.
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            return;
        }
        let d = tempfile::tempdir_in(shm).expect("tempdir in /dev/shm");
        let f = open(d.path(), "f", OpenOptions::create_new().direct(true));
        let std_file = fs::File::open(d.path().join("f")).expect("open");
        assert_eq!(
            f.direct_io(),
            detect_direct_alignment(&std_file, d.path()).expect("detect")
        );
        eprintln!("/dev/shm: direct_io = {:?}", f.direct_io());
        let buf = AlignedBuf::zeroed(4096, 4096);
        f.write_all_at(&buf, 0).expect("write");
        f.sync_data().expect("sync");
    }

    #[test]
    fn direct_io_rejects_misaligned_buffers_offsets_and_lengths() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new().direct(true));
        let Some(dio) = f.direct_io() else {
            eprintln!("O_DIRECT not available here; nothing to check");
            return;
        };
        let a = dio.offset_align.max(dio.mem_align) as usize;
        let mut buf = AlignedBuf::zeroed(4 * a, a);
        buf.fill(7);
        f.write_all_at(&buf[..2 * a], 0).expect("aligned write");
        let kind = |r: Result<()>| r.expect_err("must be refused").kind;
        // Misaligned memory (offset by one byte inside an aligned buffer).
        assert_eq!(
            kind(f.write_all_at(&buf[1..1 + a], 0)),
            ErrorKind::InvalidInput
        );
        // Misaligned offset.
        assert_eq!(kind(f.write_all_at(&buf[..a], 1)), ErrorKind::InvalidInput);
        // Misaligned length.
        assert_eq!(
            kind(f.write_all_at(&buf[..a - 1], 0)),
            ErrorKind::InvalidInput
        );
        // Vectored: one bad segment spoils the request.
        assert_eq!(
            kind(f.write_vectored_at(&[&buf[..a], &buf[a..a + 100]], 0)),
            ErrorKind::InvalidInput
        );
        let mut rbuf = AlignedBuf::zeroed(2 * a, a);
        assert_eq!(
            kind(f.read_exact_at(&mut rbuf[1..1 + a], 0)),
            ErrorKind::InvalidInput
        );
        // Aligned read sees the aligned write; the refused writes changed nothing.
        f.read_exact_at(&mut rbuf, 0).expect("aligned read");
        assert!(rbuf.iter().all(|&b| b == 7));
        assert_eq!(f.len().expect("len"), 2 * a as u64);
    }

    #[test]
    fn buffered_file_accepts_any_alignment() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new());
        assert_eq!(f.direct_io(), None);
        f.write_all_at(b"hello", 3).expect("write");
        let mut b = [0u8; 8];
        f.read_exact_at(&mut b, 0).expect("read");
        assert_eq!(&b, b"\0\0\0hello");
    }

    #[test]
    fn dsync_open_sets_o_dsync_and_direct_flag_matches_direct_io() {
        let d = tmp();
        let v = OsVfs::new();
        let f = v
            .open_file(&d.path().join("f"), OpenOptions::create_new().dsync(true))
            .expect("open");
        assert_ne!(f.status_flags().expect("flags") & libc::O_DSYNC, 0);
        assert_eq!(f.status_flags().expect("flags") & libc::O_DIRECT, 0);
        f.write_all_at(b"x", 0).expect("write");
        assert_eq!(read_all(&f), b"x");
        let g = v
            .open_file(&d.path().join("f"), OpenOptions::existing().direct(true))
            .expect("open");
        assert_eq!(g.status_flags().expect("flags") & libc::O_DSYNC, 0);
        let has_direct = g.status_flags().expect("flags") & libc::O_DIRECT != 0;
        assert_eq!(has_direct, g.direct_io().is_some());
    }

    #[test]
    fn set_buffered_switches_o_direct_and_keeps_the_data() {
        let d = tmp();
        let v = OsVfs::new();
        let f = v
            .open_file(&d.path().join("f"), OpenOptions::create_new().direct(true))
            .expect("open");
        let direct_flag = |f: &OsFile| f.status_flags().expect("flags") & libc::O_DIRECT != 0;
        let Some(dio) = f.direct_io() else {
            // Not opened O_DIRECT: nothing to switch, and the file says so.
            assert!(!f.set_buffered(true).expect("set_buffered"));
            assert!(!direct_flag(&f));
            return;
        };
        let a = dio.offset_align.max(dio.mem_align) as usize;
        let mut buf = AlignedBuf::zeroed(3 * a, a);
        buf[..a].fill(1);
        f.write_all_at(&buf[..a], 0).expect("direct write");
        assert!(f.set_buffered(true).expect("to buffered"));
        assert!(!direct_flag(&f));
        // The alignment rules stay in force while buffered.
        assert_eq!(f.direct_io(), Some(dio));
        buf[a..2 * a].fill(2);
        f.write_all_at(&buf[a..2 * a], a as u64)
            .expect("buffered write");
        assert!(f.set_buffered(false).expect("back to direct"));
        assert!(direct_flag(&f));
        // A direct read sees the buffered write (the kernel writes the cache back first),
        // and a direct write over cached bytes replaces them.
        buf[2 * a..].fill(3);
        f.write_all_at(&buf[2 * a..], a as u64)
            .expect("direct write over cached bytes");
        f.sync_data().expect("sync");
        let mut r = AlignedBuf::zeroed(2 * a, a);
        f.read_exact_at(&mut r, 0).expect("read");
        assert!(r[..a].iter().all(|&b| b == 1));
        assert!(r[a..].iter().all(|&b| b == 3));
        // Asking for the mode in force is a no-op.
        assert!(f.set_buffered(false).expect("again"));
        assert!(direct_flag(&f));
    }

    #[test]
    fn vectored_write_puts_buffers_back_to_back() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new());
        let parts: Vec<Vec<u8>> = (0..2000u32).map(|i| vec![(i % 251) as u8; 3]).collect();
        let mut bufs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
        bufs.insert(5, &[]); // empty segments are allowed
                             // 2000 segments: more than IOV_MAX, so the loop must split the call.
        f.write_vectored_at(&bufs, 10).expect("pwritev");
        let all = read_all(f.as_ref());
        assert_eq!(all.len(), 10 + 6000);
        assert!(all[..10].iter().all(|&b| b == 0));
        let expect: Vec<u8> = parts.concat();
        assert_eq!(&all[10..], &expect[..]);
    }

    #[test]
    fn read_past_end_is_unexpected_eof() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new());
        f.write_all_at(&[1; 100], 0).expect("write");
        let mut b = [0u8; 50];
        let e = f.read_exact_at(&mut b, 80).expect_err("past end");
        assert_eq!(e.kind, ErrorKind::UnexpectedEof);
    }

    #[test]
    fn allocate_grows_with_zeros_and_never_shrinks() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new());
        f.write_all_at(&[9; 1000], 0).expect("write");
        f.allocate(0, 1 << 20).expect("fallocate");
        assert_eq!(f.len().expect("len"), 1 << 20);
        let all = read_all(f.as_ref());
        assert!(all[..1000].iter().all(|&b| b == 9));
        assert!(all[1000..].iter().all(|&b| b == 0));
        f.allocate(0, 10).expect("inside");
        assert_eq!(f.len().expect("len"), 1 << 20);
        f.allocate(5, 0).expect("zero length is a no-op");
        // The blocks are really reserved, not a sparse hole.
        let blocks = {
            use std::os::unix::fs::MetadataExt;
            fs::metadata(d.path().join("f")).expect("stat").blocks()
        };
        assert!(
            blocks * 512 >= 1 << 20,
            "fallocate reserved {blocks} blocks"
        );
    }

    #[test]
    fn zero_fill_fallback_writes_only_past_eof() {
        let d = tmp();
        let f = OsVfs::new()
            .open(&d.path().join("f"), OpenOptions::create_new())
            .expect("open");
        f.write_all_at(&[5; 3000], 0).expect("write");
        let os = OsFile {
            file: fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(d.path().join("f"))
                .expect("open"),
            path: d.path().join("f"),
            direct: None,
            buffered: parking_lot::Mutex::new(false),
        };
        // Range that starts inside the data: the data must survive.
        os.fill_zeros(1000, 4000).expect("fill");
        assert_eq!(os.len().expect("len"), 5000);
        let all = read_all(&os);
        assert!(all[..3000].iter().all(|&b| b == 5));
        assert!(all[3000..].iter().all(|&b| b == 0));
        // Range entirely inside: nothing changes.
        os.fill_zeros(0, 10).expect("fill");
        assert_eq!(os.len().expect("len"), 5000);
        // Range beyond EOF with a gap.
        os.fill_zeros(8000, 100).expect("fill");
        assert_eq!(os.len().expect("len"), 8100);
        let all = read_all(&os);
        assert!(all[..3000].iter().all(|&b| b == 5));
        assert!(all[3000..].iter().all(|&b| b == 0));
    }

    #[test]
    fn zero_fill_fallback_works_on_a_direct_file_with_unaligned_eof() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new().direct(true));
        let direct = f.direct_io();
        if direct.is_none() {
            return;
        }
        f.set_len(1000).expect("set_len"); // EOF not aligned
        let os = OsFile {
            file: fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(d.path().join("f"))
                .expect("open"),
            path: d.path().join("f"),
            direct,
            buffered: parking_lot::Mutex::new(false),
        };
        os.fill_zeros(0, 3000).expect("fill through a buffered fd");
        assert_eq!(os.len().expect("len"), 3000);
    }

    #[test]
    fn enospc_and_edquot_map_to_no_space() {
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let e = std::io::Error::from_raw_os_error(errno);
            assert_eq!(
                IoError::from_std("fallocate", Path::new("x"), &e).kind,
                ErrorKind::NoSpace
            );
        }
        let e = std::io::Error::from_raw_os_error(libc::EIO);
        assert_eq!(
            IoError::from_std("fsync", Path::new("x"), &e).kind,
            ErrorKind::Io
        );
    }

    #[test]
    fn set_len_truncates_and_sync_succeeds() {
        let d = tmp();
        let f = open(d.path(), "f", OpenOptions::create_new());
        f.write_all_at(&[1; 4096], 0).expect("write");
        f.set_len(100).expect("truncate");
        f.sync_data().expect("fdatasync");
        assert_eq!(f.len().expect("len"), 100);
        OsVfs::new().sync_dir(d.path()).expect("sync dir");
    }

    #[test]
    fn namespace_ops_work() {
        let d = tmp();
        let v = OsVfs::new();
        let a = d.path().join("a");
        let b = d.path().join("b");
        v.open(&a, OpenOptions::create_new()).expect("create");
        assert_eq!(
            v.open(&a, OpenOptions::create_new())
                .expect_err("exists")
                .kind,
            ErrorKind::AlreadyExists
        );
        v.rename(&a, &b).expect("rename");
        assert!(!v.exists(&a).expect("exists"));
        assert_eq!(v.list_dir(d.path()).expect("ls"), vec![PathBuf::from("b")]);
        v.delete(&b).expect("delete");
        assert_eq!(
            v.open(&b, OpenOptions::existing()).expect_err("gone").kind,
            ErrorKind::NotFound
        );
    }
}

/// An flock held for as long as the file stays open.
#[derive(Debug)]
struct OsLock {
    _file: fs::File,
}

impl crate::LockGuard for OsLock {}
