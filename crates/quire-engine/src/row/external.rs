//! Off-page values: the fixed-size reference a record holds, and the BLOB page body
//! (docs/row-format.md, "Off-page columns").

use super::{get_uint, RowError};
use crate::page::{PageNo, SpaceId};

/// Bytes of an external reference in a record, before its local prefix.
pub const EXTERN_REF_SIZE: usize = 20;
/// Bytes before the data in a BLOB page body: part length (u32) and a reserved u32.
pub const BLOB_PART_HEADER: usize = 8;

/// Where an off-page value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExternRef {
    pub space: SpaceId,
    pub first_page: PageNo,
    /// Total length of the value in bytes.
    pub len: u64,
    /// Bit 0: [`ExternRef::OWNER`].
    pub flags: u8,
}

const OFF_SPACE: usize = 0;
const OFF_PAGE: usize = 4;
const OFF_LEN: usize = 8;
const OFF_FLAGS: usize = 16;
const OFF_RESERVED: usize = 17;
const OFF_PREFIX_LEN: usize = 18;
const _: () = assert!(OFF_PAGE == OFF_SPACE + 4 && OFF_LEN == OFF_PAGE + 4);
const _: () = assert!(OFF_FLAGS == OFF_LEN + 8 && OFF_RESERVED == OFF_FLAGS + 1);
const _: () = assert!(OFF_PREFIX_LEN + 2 == EXTERN_REF_SIZE);

impl ExternRef {
    /// This record's version owns the chain: purge or rollback frees it.
    pub const OWNER: u8 = 1;

    pub fn new(space: SpaceId, first_page: PageNo, len: u64) -> Self {
        ExternRef {
            space,
            first_page,
            len,
            flags: Self::OWNER,
        }
    }

    /// Number of BLOB pages the chain has, with `part_max` bytes per page.
    pub fn pages(&self, part_max: usize) -> u64 {
        self.len.div_ceil(part_max.max(1) as u64)
    }

    /// Appends the reference and the local `prefix` (the value's first bytes).
    pub(crate) fn encode(&self, prefix: &[u8], out: &mut Vec<u8>) {
        debug_assert!(prefix.len() as u64 <= self.len && prefix.len() <= usize::from(u16::MAX));
        out.extend_from_slice(&self.space.0.to_le_bytes());
        out.extend_from_slice(&self.first_page.0.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.push(self.flags);
        out.push(0);
        out.extend_from_slice(&(prefix.len() as u16).to_le_bytes());
        out.extend_from_slice(prefix);
    }

    /// Parses a whole off-page field: the reference and its local prefix.
    pub(crate) fn decode(b: &[u8]) -> Result<(ExternRef, &[u8]), RowError> {
        if b.len() < EXTERN_REF_SIZE {
            return Err(RowError::Corrupt("external reference too short"));
        }
        let r = ExternRef {
            space: SpaceId(get_uint(b, OFF_SPACE, 4)? as u32),
            first_page: PageNo(get_uint(b, OFF_PAGE, 4)? as u32),
            len: get_uint(b, OFF_LEN, 8)?,
            flags: b[OFF_FLAGS],
        };
        let plen = get_uint(b, OFF_PREFIX_LEN, 2)? as usize;
        if b[OFF_RESERVED] != 0 || r.flags & !Self::OWNER != 0 {
            return Err(RowError::Corrupt("external reference has unknown flags"));
        }
        if EXTERN_REF_SIZE + plen != b.len() || plen as u64 > r.len {
            return Err(RowError::Corrupt("external reference prefix length"));
        }
        if r.first_page.is_null() {
            return Err(RowError::Corrupt("external reference to no page"));
        }
        Ok((r, &b[EXTERN_REF_SIZE..]))
    }
}

/// Offset of the part length in a BLOB page (right after the common page header).
const OFF_PART_LEN: usize = crate::page::HEADER_SIZE;
const OFF_PART_DATA: usize = OFF_PART_LEN + BLOB_PART_HEADER;

/// Writes one part of an off-page value into the body of a BLOB page (header and links are
/// the caller's). Returns how many bytes of `data` it took: at most the page's capacity.
pub fn write_blob_part(page: &mut [u8], data: &[u8]) -> usize {
    let cap = page.len() - OFF_PART_DATA - crate::page::TRAILER_SIZE;
    let n = data.len().min(cap);
    page[OFF_PART_LEN..OFF_PART_LEN + 4].copy_from_slice(&(n as u32).to_le_bytes());
    page[OFF_PART_LEN + 4..OFF_PART_DATA].fill(0);
    page[OFF_PART_DATA..OFF_PART_DATA + n].copy_from_slice(&data[..n]);
    n
}

/// The part of an off-page value a BLOB page holds; a length past the body is corruption.
pub fn read_blob_part(page: &[u8]) -> Result<&[u8], RowError> {
    let n = get_uint(page, OFF_PART_LEN, 4)? as usize;
    let cap = page
        .len()
        .checked_sub(OFF_PART_DATA + crate::page::TRAILER_SIZE)
        .ok_or(RowError::Corrupt("BLOB page too small"))?;
    if n > cap {
        return Err(RowError::Corrupt("BLOB part longer than its page"));
    }
    Ok(&page[OFF_PART_DATA..OFF_PART_DATA + n])
}
