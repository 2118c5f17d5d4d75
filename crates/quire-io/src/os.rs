//! The real file system.
//!
//! TODO(io helper): O_DIRECT detection (statx STATX_DIOALIGN, then BLKSSZGET), pwritev.
//! This first version is buffered I/O with fallocate.

use std::fs;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Create, DirectIo, ErrorKind, IoError, OpenOptions, Result, Vfs, VfsFile};

/// The operating system's file system.
#[derive(Debug, Default, Clone)]
pub struct OsVfs;

impl OsVfs {
    pub fn new() -> Self {
        OsVfs
    }
}

#[derive(Debug)]
pub struct OsFile {
    file: fs::File,
    path: PathBuf,
}

impl Vfs for OsVfs {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn VfsFile>> {
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
        let file = o
            .open(path)
            .map_err(|e| IoError::from_std("open", path, &e))?;
        Ok(Arc::new(OsFile {
            file,
            path: path.to_path_buf(),
        }))
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

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = fs::File::open(dir).map_err(|e| IoError::from_std("open dir", dir, &e))?;
        d.sync_all()
            .map_err(|e| IoError::from_std("fsync dir", dir, &e))
    }
}

impl VfsFile for OsFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| IoError::from_std("read", &self.path, &e))
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| IoError::from_std("write", &self.path, &e))
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> Result<()> {
        let mut off = offset;
        for b in bufs {
            self.write_all_at(b, off)?;
            off += b.len() as u64;
        }
        Ok(())
    }

    fn sync_data(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| IoError::from_std("fdatasync", &self.path, &e))
    }

    fn allocate(&self, offset: u64, len: u64) -> Result<()> {
        // SAFETY: plain syscall on an fd we own.
        let r = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                0,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                // Fallback: write zeros where the file system cannot allocate.
                let cur = self.len()?;
                let end = offset + len;
                if end > cur {
                    let zeros = vec![0u8; 1 << 20];
                    let mut pos = cur.max(offset).min(cur);
                    while pos < end {
                        let n = ((end - pos) as usize).min(zeros.len());
                        self.write_all_at(&zeros[..n], pos)?;
                        pos += n as u64;
                    }
                }
                Ok(())
            }
            _ => Err(IoError::from_std("fallocate", &self.path, &err)),
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
        None
    }
}

#[allow(dead_code)]
fn unsupported(op: &'static str, path: &Path) -> IoError {
    IoError::new(op, path, ErrorKind::InvalidInput, "unsupported")
}
