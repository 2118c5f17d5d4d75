//! # The bytes of `redo.log`: header block, checkpoint slots, frames
//!
//! Pure encoding and decoding, no I/O (layout diagrams in `docs/redo-log.md`). Every block
//! and every frame carries a crc32c that is computed when it is encoded and checked when it
//! is decoded ("check it when it is written and when it is read").

use crate::page::Lsn;

/// Header and checkpoint blocks are this size, and the data area starts on this boundary.
pub const BLOCK: u64 = 4096;
/// File offset of the header block.
pub const HEADER_OFFSET: u64 = 0;
/// File offsets of the two checkpoint slots.
pub const SLOT_OFFSETS: [u64; 2] = [BLOCK, 2 * BLOCK];
/// File offset of the circular data area.
pub const DATA_START: u64 = 3 * BLOCK;
/// The first LSN of a new log. LSN 0 stays free to mean "none".
pub const START_LSN: Lsn = Lsn(8192);
/// The format this code writes and reads. Version 2 added padding frames: a version-1 reader
/// would take one for the end of the log, so it must refuse the file instead.
pub const FORMAT_VERSION: u32 = 2;
/// Frame header (`len`, `epoch`) plus trailer (`crc32c`).
pub const FRAME_OVERHEAD: u64 = 12;
/// The largest payload whatever the configuration (a limit on everything).
pub const MAX_PAYLOAD_BYTES: u64 = 4 << 20;
/// Smallest data area: a few maximal frames of the smallest buffer must fit.
pub const MIN_CAPACITY: u64 = 64 << 10;
/// Set in a frame's `len` field: a *padding frame*, which the reader checks and skips. The
/// writer appends one before an O_DIRECT sync so that the sync ends on a block boundary and
/// no durable byte is ever rewritten (docs/redo-log.md, "Padding").
pub const PAD_FLAG: u32 = 1 << 31;
/// The largest padding frame, header and crc included: a gap smaller than a frame header is
/// padded to the block after, so up to one block plus `FRAME_OVERHEAD − 1` bytes.
pub const MAX_PADDING: u64 = BLOCK + FRAME_OVERHEAD - 1;

const HEADER_MAGIC: &[u8; 8] = b"QUIRELOG";
const SLOT_MAGIC: &[u8; 8] = b"QUIRECKP";
const CRC_AT: usize = BLOCK as usize - 4;
const CREATOR: &str = concat!("quire-engine ", env!("CARGO_PKG_VERSION"));

// The layout relations the rest of the module relies on.
const _: () = assert!(DATA_START.is_multiple_of(BLOCK));
const _: () = assert!(MIN_CAPACITY.is_multiple_of(BLOCK));
const _: () = assert!(MAX_PAYLOAD_BYTES < u32::MAX as u64);
// A payload length never has the padding flag set, and padding never looks like a payload.
const _: () = assert!(MAX_PAYLOAD_BYTES < PAD_FLAG as u64);
const _: () = assert!(MAX_PADDING < MIN_CAPACITY / 4);

/// File offset of the byte at `lsn` in a data area of `capacity` bytes.
pub fn file_offset(lsn: u64, capacity: u64) -> u64 {
    debug_assert!(capacity.is_multiple_of(BLOCK) && capacity > 0);
    DATA_START + lsn % capacity
}

/// The largest payload for this buffer and capacity (see `docs/redo-log.md`): a frame is at
/// most a quarter of the buffer and of the circle, which the progress argument needs.
pub fn max_payload(buffer_size: u64, capacity: u64) -> u64 {
    MAX_PAYLOAD_BYTES
        .min(buffer_size / 4)
        .min(capacity / 4)
        .saturating_sub(FRAME_OVERHEAD)
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn seal(block: &mut [u8]) {
    let crc = crc32c::crc32c(&block[..CRC_AT]);
    put_u32(block, CRC_AT, crc);
}
fn sealed(block: &[u8]) -> bool {
    get_u32(block, CRC_AT) == crc32c::crc32c(&block[..CRC_AT])
}

/// The header block's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    pub capacity: u64,
    pub created_lsn: Lsn,
    pub created_unix_secs: u64,
    pub creator: String,
}

impl FileHeader {
    pub fn new(capacity: u64, created_lsn: Lsn) -> Self {
        let created_unix_secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        FileHeader {
            capacity,
            created_lsn,
            created_unix_secs,
            creator: CREATOR.to_string(),
        }
    }

    /// Encodes into a whole block (`block.len() == BLOCK`).
    pub fn encode(&self, block: &mut [u8]) {
        assert_eq!(block.len() as u64, BLOCK);
        block.fill(0);
        block[0..8].copy_from_slice(HEADER_MAGIC);
        put_u32(block, 8, FORMAT_VERSION);
        put_u64(block, 16, self.capacity);
        put_u64(block, 24, self.created_lsn.0);
        put_u64(block, 32, self.created_unix_secs);
        let c = self.creator.as_bytes();
        let n = c.len().min(32);
        block[40..40 + n].copy_from_slice(&c[..n]);
        seal(block);
        debug_assert_eq!(FileHeader::decode(block).as_ref(), Ok(self));
    }

    /// Decodes and checks a header block; the error says what is wrong.
    pub fn decode(block: &[u8]) -> Result<FileHeader, String> {
        if &block[0..8] != HEADER_MAGIC {
            return Err("not a Quire redo log (bad magic in the header block)".into());
        }
        if !sealed(block) {
            return Err("header block checksum mismatch (torn or corrupt)".into());
        }
        let version = get_u32(block, 8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "unsupported log format version {version} (this build reads {FORMAT_VERSION})"
            ));
        }
        let capacity = get_u64(block, 16);
        if capacity < MIN_CAPACITY || !capacity.is_multiple_of(BLOCK) {
            return Err(format!("invalid capacity {capacity} in the header"));
        }
        let creator = String::from_utf8_lossy(&block[40..72])
            .trim_end_matches('\0')
            .to_string();
        Ok(FileHeader {
            capacity,
            created_lsn: Lsn(get_u64(block, 24)),
            created_unix_secs: get_u64(block, 32),
            creator,
        })
    }
}

/// One checkpoint slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSlot {
    pub checkpoint_lsn: Lsn,
    pub capacity: u64,
    pub seq: u64,
    pub epoch: u32,
    pub durable_lsn: Lsn,
}

impl CheckpointSlot {
    pub fn encode(&self, block: &mut [u8]) {
        assert_eq!(block.len() as u64, BLOCK);
        block.fill(0);
        block[0..8].copy_from_slice(SLOT_MAGIC);
        put_u64(block, 8, self.checkpoint_lsn.0);
        put_u64(block, 16, self.capacity);
        put_u64(block, 24, self.seq);
        put_u32(block, 32, self.epoch);
        put_u64(block, 40, self.durable_lsn.0);
        seal(block);
        debug_assert_eq!(CheckpointSlot::decode(block), Ok(*self));
    }

    pub fn decode(block: &[u8]) -> Result<CheckpointSlot, String> {
        if &block[0..8] != SLOT_MAGIC {
            return Err("bad magic (never written, or overwritten)".into());
        }
        if !sealed(block) {
            return Err("checksum mismatch (torn or corrupt)".into());
        }
        Ok(CheckpointSlot {
            checkpoint_lsn: Lsn(get_u64(block, 8)),
            capacity: get_u64(block, 16),
            seq: get_u64(block, 24),
            epoch: get_u32(block, 32),
            durable_lsn: Lsn(get_u64(block, 40)),
        })
    }
}

/// The crc32c that ends a frame: over the start LSN, the length, the epoch and the payload.
/// The LSN makes bytes left from an earlier lap of the circle fail the check.
pub fn frame_crc(start: Lsn, epoch: u32, payload: &[u8]) -> u32 {
    frame_crc_raw(start, payload.len() as u32, epoch, payload)
}

/// [`frame_crc`] with the `len` field as stored (with [`PAD_FLAG`] for padding).
pub fn frame_crc_raw(start: Lsn, len_field: u32, epoch: u32, body: &[u8]) -> u32 {
    let mut head = [0u8; 16];
    put_u64(&mut head, 0, start.0);
    put_u32(&mut head, 8, len_field);
    put_u32(&mut head, 12, epoch);
    let crc = crc32c::crc32c(&head);
    crc32c::crc32c_append(crc, body)
}

/// How many bytes of padding end the log at a multiple of `block` if it is now at `at`: 0 if
/// it is already there; a gap too small for a frame header is padded to the block after.
pub fn padding_len(at: u64, block: u64) -> u64 {
    debug_assert!(block.is_power_of_two() && block <= BLOCK);
    let gap = (block - at % block) % block;
    let len = if gap == 0 || gap >= FRAME_OVERHEAD {
        gap
    } else {
        gap + block
    };
    debug_assert!(len <= MAX_PADDING && (at + len).is_multiple_of(block));
    len
}

/// Encodes a padding frame of `len` bytes in all (`FRAME_OVERHEAD ≤ len ≤ MAX_PADDING`)
/// starting at `start`: a header with [`PAD_FLAG`], zeros, and a crc like any frame's, so
/// a stale or garbage padding frame fails the check exactly as a stale payload would.
pub fn encode_padding(start: Lsn, epoch: u32, len: u64) -> Vec<u8> {
    assert!((FRAME_OVERHEAD..=MAX_PADDING).contains(&len));
    let body = (len - FRAME_OVERHEAD) as usize;
    let len_field = PAD_FLAG | body as u32;
    let mut f = vec![0u8; len as usize];
    f[..8].copy_from_slice(&frame_header(len_field, epoch));
    let crc = frame_crc_raw(start, len_field, epoch, &f[8..8 + body]);
    f[8 + body..].copy_from_slice(&crc.to_le_bytes());
    f
}

/// The 8-byte frame header (`len`, `epoch`).
pub fn frame_header(len: u32, epoch: u32) -> [u8; 8] {
    let mut h = [0u8; 8];
    put_u32(&mut h, 0, len);
    put_u32(&mut h, 4, epoch);
    h
}

/// Encodes a whole frame starting at `start` (used by tests and by the appender).
pub fn encode_frame(start: Lsn, epoch: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + FRAME_OVERHEAD as usize);
    f.extend_from_slice(&frame_header(payload.len() as u32, epoch));
    f.extend_from_slice(payload);
    f.extend_from_slice(&frame_crc(start, epoch, payload).to_le_bytes());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_slot_round_trip_and_reject_a_flipped_bit() {
        let mut b = vec![0u8; BLOCK as usize];
        let h = FileHeader::new(1 << 20, START_LSN);
        h.encode(&mut b);
        assert_eq!(FileHeader::decode(&b), Ok(h));
        b[17] ^= 1;
        assert!(FileHeader::decode(&b).is_err());

        let s = CheckpointSlot {
            checkpoint_lsn: Lsn(12345),
            capacity: 1 << 20,
            seq: 7,
            epoch: 3,
            durable_lsn: Lsn(20000),
        };
        s.encode(&mut b);
        assert_eq!(CheckpointSlot::decode(&b), Ok(s));
        b[100] ^= 0x80;
        assert!(CheckpointSlot::decode(&b).is_err());
    }

    #[test]
    fn frame_crc_depends_on_the_lsn() {
        let p = b"payload";
        assert_ne!(
            frame_crc(Lsn(100), 1, p),
            frame_crc(Lsn(100 + (1 << 20)), 1, p)
        );
        assert_ne!(frame_crc(Lsn(100), 1, p), frame_crc(Lsn(100), 2, p));
    }

    #[test]
    fn padding_reaches_the_next_block_and_is_never_shorter_than_a_header() {
        for block in [512, 4096] {
            assert_eq!(padding_len(8192, block), 0);
            assert_eq!(padding_len(8192 + 1, block), block - 1);
            assert_eq!(padding_len(8192 + block - 12, block), 12);
            assert_eq!(padding_len(8192 + block - 11, block), block + 11);
            assert_eq!(padding_len(8192 + block - 1, block), block + 1);
        }
        assert_eq!(padding_len(12345, 1), 0, "buffered I/O never pads");
        let p = encode_padding(Lsn(100), 3, 40);
        assert_eq!(p.len(), 40);
        assert_eq!(get_u32(&p, 0), PAD_FLAG | 28);
        assert_eq!(
            get_u32(&p, 36),
            frame_crc_raw(Lsn(100), PAD_FLAG | 28, 3, &p[8..36])
        );
    }

    #[test]
    fn max_payload_is_a_quarter_of_the_smaller_area() {
        assert_eq!(
            max_payload(16 << 20, 1 << 30),
            MAX_PAYLOAD_BYTES - FRAME_OVERHEAD
        );
        assert_eq!(max_payload(64 << 10, 1 << 30), (16 << 10) - FRAME_OVERHEAD);
    }
}
