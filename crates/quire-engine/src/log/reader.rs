//! # Scanning frames
//!
//! A [`LogReader`] walks the circular data area from an LSN and yields each complete,
//! checksummed frame in order. It stops, cleanly, at the first position that does not hold
//! a valid frame: torn, partial, zero, garbage, a stale lap (the crc covers the LSN), or a
//! stale tail of an earlier run (lower epoch). That position is the end of the log, not an
//! error; only an I/O error is an error. Recovery therefore applies only complete
//! mini-transactions.
//!
//! Padding frames (`len` with [`format::PAD_FLAG`], written before O_DIRECT syncs) are
//! checked exactly like payload frames (bounds, epoch, LSN-keyed crc) and then skipped: a
//! stale or garbage padding frame ends the log like any other bad frame.
//!
//! It reads through a window of about 1 MiB so that recovery scans the log once, in large
//! sequential reads (lesson 2: recovery must be fast).

use std::sync::Arc;

use quire_io::AlignedBuf;

use super::file::LogFile;
use super::format::{self, get_u32, FRAME_OVERHEAD, MAX_PADDING, MAX_PAYLOAD_BYTES, PAD_FLAG};
use super::Result;
use crate::page::Lsn;

const WINDOW: usize = 1 << 20;

/// One complete mini-transaction's redo, as appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The frame occupies LSNs `[start, end)`; `end` is the next frame's start.
    pub start: Lsn,
    pub end: Lsn,
    /// The run that wrote it.
    pub epoch: u32,
    pub payload: Vec<u8>,
}

/// A frame whose payload is borrowed from the reader's window: recovery copies each payload
/// once, into its own blocks, instead of allocating a vector per frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRef<'a> {
    pub start: Lsn,
    pub end: Lsn,
    pub epoch: u32,
    pub payload: &'a [u8],
}

/// Where a frame read into the window lies.
struct RawFrame {
    start: u64,
    end: u64,
    epoch: u32,
    /// The payload is `win[at..at + len]`.
    at: usize,
    len: usize,
}

/// An iterator over the frames from an LSN to the end of the log.
#[derive(Debug)]
pub struct LogReader {
    file: Arc<LogFile>,
    file_len: u64,
    next: u64,
    /// The last frame boundary (or the start) that is a multiple of the file's I/O block.
    stable: u64,
    prev_epoch: u32,
    /// Stop here even if more valid frames follow (a running log's written LSN).
    limit: Option<u64>,
    win: AlignedBuf,
    win_lsn: u64,
    win_len: usize,
    done: bool,
}

impl LogReader {
    pub(crate) fn new(file: Arc<LogFile>, from: Lsn, limit: Option<Lsn>) -> Result<LogReader> {
        let file_len = file.handle.len()?;
        let win = file.buf(WINDOW);
        Ok(LogReader {
            file,
            file_len,
            next: from.0,
            stable: from.0,
            prev_epoch: 0,
            limit: limit.map(|l| l.0),
            win,
            win_lsn: 0,
            win_len: 0,
            done: false,
        })
    }

    /// The LSN after the last frame returned: once the iterator is exhausted, the end of the
    /// log.
    pub fn position(&self) -> Lsn {
        Lsn(self.next)
    }

    /// The last position read so far that is both a frame boundary (or the start) and a
    /// multiple of the I/O block: a reopened log counts as durable only up to here, because
    /// the O_DIRECT writer rewrites the block after it (docs/redo-log.md, "Padding").
    pub(crate) fn stable_position(&self) -> Lsn {
        Lsn(self.stable)
    }

    /// The epoch of the last frame returned (0 before any).
    pub fn last_epoch(&self) -> u32 {
        self.prev_epoch
    }

    /// Makes the window cover `[lsn, lsn + n)` and returns those bytes.
    fn bytes(&mut self, lsn: u64, n: usize) -> Result<&[u8]> {
        let have = lsn >= self.win_lsn && lsn + n as u64 <= self.win_lsn + self.win_len as u64;
        if !have {
            let blk = self.file.io_block;
            let start = lsn - lsn % blk;
            let need = (lsn - start) as usize + n;
            let len = need.max(WINDOW);
            let len = len.div_ceil(blk as usize) * blk as usize;
            if self.win.len() < len {
                self.win = self.file.buf(len);
            }
            let file = Arc::clone(&self.file);
            file.read_data(start, &mut self.win[..len], self.file_len)?;
            self.win_lsn = start;
            self.win_len = len;
        }
        let at = (lsn - self.win_lsn) as usize;
        Ok(&self.win[at..at + n])
    }

    /// The next frame with its payload borrowed from the window (valid until the next
    /// call); `None` at the end of the log.
    pub fn next_ref(&mut self) -> Option<Result<FrameRef<'_>>> {
        if self.done {
            return None;
        }
        match self.read_frame() {
            Ok(Some(raw)) => Some(Ok(FrameRef {
                start: Lsn(raw.start),
                end: Lsn(raw.end),
                epoch: raw.epoch,
                payload: &self.win[raw.at..raw.at + raw.len],
            })),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn read_frame(&mut self) -> Result<Option<RawFrame>> {
        loop {
            match self.read_one()? {
                // Padding: checked, then skipped.
                Some(None) => continue,
                Some(Some(f)) => return Ok(Some(f)),
                None => return Ok(None),
            }
        }
    }

    /// Reads the frame at `next`: `None` at the end of the log, `Some(None)` for a valid
    /// padding frame, `Some(Some(frame))` for a payload.
    fn read_one(&mut self) -> Result<Option<Option<RawFrame>>> {
        let start = self.next;
        let capacity = self.file.capacity;
        let head = self.bytes(start, 8)?;
        let len_field = get_u32(head, 0);
        let epoch = get_u32(head, 4);
        let padding = len_field & PAD_FLAG != 0;
        let len = len_field & !PAD_FLAG;
        let len64 = u64::from(len);
        // Sanity bounds before trusting `len` for a read; the crc is the real check.
        let bad_len = if padding {
            len64 + FRAME_OVERHEAD > MAX_PADDING
        } else {
            len == 0 || len64 > MAX_PAYLOAD_BYTES
        };
        if bad_len || len64 + FRAME_OVERHEAD > capacity {
            return Ok(None);
        }
        if epoch < self.prev_epoch {
            return Ok(None);
        }
        let end = start + FRAME_OVERHEAD + len64;
        if let Some(limit) = self.limit {
            if end > limit {
                return Ok(None);
            }
        }
        let body = self.bytes(start + 8, len as usize + 4)?;
        let payload = &body[..len as usize];
        let crc = get_u32(body, len as usize);
        if crc != format::frame_crc_raw(Lsn(start), len_field, epoch, payload) {
            return Ok(None);
        }
        let at = (start + 8 - self.win_lsn) as usize;
        self.prev_epoch = epoch;
        self.next = end;
        if end.is_multiple_of(self.file.io_block) {
            self.stable = end;
        }
        Ok(Some((!padding).then_some(RawFrame {
            start,
            end,
            epoch,
            at,
            len: len as usize,
        })))
    }
}

impl Iterator for LogReader {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Result<Frame>> {
        self.next_ref().map(|f| {
            f.map(|f| Frame {
                start: f.start,
                end: f.end,
                epoch: f.epoch,
                payload: f.payload.to_vec(),
            })
        })
    }
}
