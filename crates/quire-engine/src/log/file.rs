//! # Positioned I/O on `redo.log`
//!
//! Maps LSNs to file offsets and does the aligned reads and writes O_DIRECT needs. With
//! O_DIRECT (the file reports [`quire_io::DirectIo`]), every data read and write is whole
//! `io_block`s from aligned memory; buffered files use an `io_block` of 1.

use std::sync::Arc;

use quire_io::{AlignedBuf, ErrorKind, FileHandle, VfsFile};

use super::format::{self, BLOCK};
use super::{LogError, Result};

/// One open log file and the geometry of its data area.
#[derive(Debug)]
pub(crate) struct LogFile {
    pub handle: FileHandle,
    /// Bytes in the circular data area (a multiple of [`BLOCK`]).
    pub capacity: u64,
    /// Alignment of data-area offsets and lengths: the O_DIRECT block, or 1.
    pub io_block: u64,
    /// Alignment of memory buffers.
    pub mem_align: usize,
}

impl LogFile {
    pub fn new(inner: Arc<dyn VfsFile>, capacity: u64) -> Result<LogFile> {
        let handle = FileHandle::new(inner);
        let (io_block, mem_align) = match handle.direct_io() {
            Some(d) => (u64::from(d.offset_align), d.mem_align.max(8) as usize),
            None => (1, 64),
        };
        // The data area and capacity are 4 KiB aligned; a larger O_DIRECT block would make a
        // block straddle the end of the circle.
        if !io_block.is_power_of_two() || io_block > BLOCK {
            return Err(LogError::BadConfig(format!(
                "{}: O_DIRECT block size {io_block} is not a power of two up to {BLOCK}",
                handle.path().display()
            )));
        }
        assert!(capacity.is_multiple_of(BLOCK) && capacity >= format::MIN_CAPACITY);
        Ok(LogFile {
            handle,
            capacity,
            io_block,
            mem_align,
        })
    }

    pub fn path(&self) -> &std::path::Path {
        self.handle.path()
    }

    pub fn buf(&self, len: usize) -> AlignedBuf {
        AlignedBuf::zeroed(len, self.mem_align.max(BLOCK as usize))
    }

    /// Reads the 4 KiB block at `offset` (header or checkpoint slot).
    pub fn read_block(&self, offset: u64) -> Result<AlignedBuf> {
        let mut b = self.buf(BLOCK as usize);
        self.handle.read_exact_at(&mut b, offset)?;
        Ok(b)
    }

    /// Writes a 4 KiB block at `offset`; does not sync.
    pub fn write_block(&self, offset: u64, block: &AlignedBuf) {
        assert_eq!(block.len() as u64, BLOCK);
        self.handle.write_all_at(block, offset);
    }

    /// Fills `out` with the data-area bytes at LSNs `[lsn, lsn + out.len())`, crossing the
    /// end of the circle if needed. `lsn` and `out.len()` must be `io_block` aligned and
    /// `out` aligned memory. Bytes past `file_len` (a truncated file) read as zeros, which
    /// a scan takes as the end of the log.
    pub fn read_data(&self, lsn: u64, out: &mut [u8], file_len: u64) -> Result<()> {
        debug_assert!(
            lsn.is_multiple_of(self.io_block) && (out.len() as u64).is_multiple_of(self.io_block)
        );
        let mut done = 0usize;
        while done < out.len() {
            let pos = lsn + done as u64;
            let to_wrap = self.capacity - pos % self.capacity;
            let n = (out.len() - done).min(to_wrap as usize);
            let off = format::file_offset(pos, self.capacity);
            let avail = file_len.saturating_sub(off).min(n as u64);
            let avail = (avail - avail % self.io_block) as usize;
            let piece = &mut out[done..done + n];
            if avail > 0 {
                match self.handle.read_exact_at(&mut piece[..avail], off) {
                    Ok(()) => {}
                    Err(e) if e.kind == ErrorKind::UnexpectedEof => piece[..avail].fill(0),
                    Err(e) => return Err(e.into()),
                }
            }
            piece[avail..].fill(0);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at the data-area position of `lsn`, which must not cross the end of
    /// the circle. With O_DIRECT, `lsn` and the length are `io_block` aligned. A failed write
    /// aborts the process (see `quire_io::fatal`).
    pub fn write_data(&self, lsn: u64, data: &[u8]) {
        debug_assert!(
            lsn.is_multiple_of(self.io_block) && (data.len() as u64).is_multiple_of(self.io_block)
        );
        assert!(
            lsn % self.capacity + data.len() as u64 <= self.capacity,
            "a log write may not cross the end of the circular area"
        );
        self.handle
            .write_all_at(data, format::file_offset(lsn, self.capacity));
    }
}
