//! # Slotted index pages (docs/btree.md, "Page layout")
//!
//! ```text
//!  0            32                56                      heap_top        dir_start        page_size-8
//!  +-----------+-----------------+-----------------------+---------------+----------------+---------+
//!  | page hdr  | node header     | records (heap) ->     |     free      | <- slots       | trailer |
//!  +-----------+-----------------+-----------------------+---------------+----------------+---------+
//!    node header: level u16, n_recs u16, heap_top u16, garbage u16, index_id u64, reserved 8
//!    record:      flags u8, key_len u16, val_len u16, key, value   (internal: value = child u32)
//!    slot i:      u16 record offset at page_size - 8 - 2*(i+1); slots sorted by key
//! ```
//!
//! Invariants (checked by [`check`], which `BTree::verify` runs):
//! 1. Slots `0..n_recs` point at records inside `[HEAP_START, heap_top)`, in strictly
//!    ascending key order (memcmp), and records do not overlap.
//! 2. `heap_top <= dir_start = page_size - 8 - 2 * n_recs`.
//! 3. Bytes of live records plus `garbage` equal `heap_top - HEAP_START`: every heap byte is
//!    either in a live record or counted as garbage, so reorganization reclaims exactly
//!    `garbage` bytes.
//! 4. An internal record's value is exactly 4 bytes (a child page number).
//!
//! Every change goes through [`PageWriter`], so the same code runs on a plain buffer (unit
//! tests) and through a mini-transaction ([`MtrPage`]), where each write is a redo record.
//! Changes are kept small so redo stays compact: an insert is one WRITE of the record, one
//! MEMMOVE of the slots after it and two small WRITEs (slot, header).

use crate::mtr::{Mtr, Slot};
use crate::page::{PageNo, HEADER_SIZE, TRAILER_SIZE};

use super::BTreeError;

pub const OFF_LEVEL: usize = HEADER_SIZE; // 32
pub const OFF_N_RECS: usize = HEADER_SIZE + 2;
pub const OFF_HEAP_TOP: usize = HEADER_SIZE + 4;
pub const OFF_GARBAGE: usize = HEADER_SIZE + 6;
pub const OFF_INDEX_ID: usize = HEADER_SIZE + 8;
/// First byte of the record heap.
pub const HEAP_START: usize = HEADER_SIZE + 24; // 56
pub const REC_HEADER: usize = 5;
pub const SLOT_SIZE: usize = 2;
/// Record flag: delete-marked (kept for MVCC until purge removes it).
pub const FLAG_DELETED: u8 = 1;
/// Child page numbers are this many bytes.
pub const CHILD_SIZE: usize = 4;

const _: () = assert!(OFF_INDEX_ID + 8 <= HEAP_START);
const _: () = assert!(OFF_N_RECS + 2 == OFF_HEAP_TOP && OFF_HEAP_TOP + 2 == OFF_GARBAGE);

/// Byte access to one page: reads are direct, every change is a small logged operation.
pub trait PageWriter {
    fn bytes(&self) -> &[u8];
    fn write(&mut self, off: usize, data: &[u8]) -> Result<(), BTreeError>;
    fn memmove(&mut self, dst: usize, src: usize, len: usize) -> Result<(), BTreeError>;
}

/// A plain buffer (unit tests, building images in memory).
impl PageWriter for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn write(&mut self, off: usize, data: &[u8]) -> Result<(), BTreeError> {
        self[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn memmove(&mut self, dst: usize, src: usize, len: usize) -> Result<(), BTreeError> {
        self.copy_within(src..src + len, dst);
        Ok(())
    }
}

/// A page X-latched by a mini-transaction: each change is a redo record.
pub struct MtrPage<'m, 'a> {
    pub mtr: &'m mut Mtr<'a>,
    pub slot: Slot,
}

impl PageWriter for MtrPage<'_, '_> {
    fn bytes(&self) -> &[u8] {
        self.mtr.page(self.slot)
    }
    fn write(&mut self, off: usize, data: &[u8]) -> Result<(), BTreeError> {
        Ok(self.mtr.write(self.slot, off, data)?)
    }
    fn memmove(&mut self, dst: usize, src: usize, len: usize) -> Result<(), BTreeError> {
        Ok(self.mtr.memmove(self.slot, dst, src, len)?)
    }
}

pub fn get_u16(b: &[u8], off: usize) -> usize {
    usize::from(u16::from_le_bytes([b[off], b[off + 1]]))
}
fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

pub fn level(b: &[u8]) -> u16 {
    get_u16(b, OFF_LEVEL) as u16
}
pub fn n_recs(b: &[u8]) -> usize {
    get_u16(b, OFF_N_RECS)
}
pub fn heap_top(b: &[u8]) -> usize {
    get_u16(b, OFF_HEAP_TOP)
}
pub fn garbage(b: &[u8]) -> usize {
    get_u16(b, OFF_GARBAGE)
}
pub fn index_id(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[OFF_INDEX_ID..OFF_INDEX_ID + 8]);
    u64::from_le_bytes(a)
}
/// End of the slot directory (exclusive): the trailer starts here.
pub fn dir_end(b: &[u8]) -> usize {
    b.len() - TRAILER_SIZE
}
pub fn dir_start(b: &[u8]) -> usize {
    dir_end(b) - SLOT_SIZE * n_recs(b)
}
fn slot_off(b: &[u8], i: usize) -> usize {
    dir_end(b) - SLOT_SIZE * (i + 1)
}
/// Bytes available to records and slots on an empty page of this size.
pub fn capacity(page_size: usize) -> usize {
    page_size - TRAILER_SIZE - HEAP_START
}
/// The largest record (header, key, value) a page of this size accepts: at least four fit,
/// so a split always leaves both halves non-empty and below capacity.
pub fn max_record(page_size: usize) -> usize {
    capacity(page_size) / 4 - SLOT_SIZE
}
/// The longest key: its separator copy in an internal node must fit as well.
pub fn max_key(page_size: usize) -> usize {
    max_record(page_size) - REC_HEADER - CHILD_SIZE
}
pub fn rec_size(key_len: usize, val_len: usize) -> usize {
    REC_HEADER + key_len + val_len
}
/// Bytes in live records and slots.
pub fn used(b: &[u8]) -> usize {
    heap_top(b) - HEAP_START - garbage(b) + SLOT_SIZE * n_recs(b)
}
pub fn free_total(b: &[u8]) -> usize {
    capacity(b.len()) - used(b)
}
pub fn free_contiguous(b: &[u8]) -> usize {
    dir_start(b).saturating_sub(heap_top(b))
}

/// One record, borrowed from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec<'b> {
    pub off: usize,
    pub flags: u8,
    pub key: &'b [u8],
    pub value: &'b [u8],
}

impl Rec<'_> {
    pub fn size(&self) -> usize {
        rec_size(self.key.len(), self.value.len())
    }
    pub fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
    /// The child page of an internal record.
    pub fn child(&self) -> PageNo {
        debug_assert_eq!(self.value.len(), CHILD_SIZE);
        PageNo(get_u32(self.value, 0))
    }
    pub fn to_owned(self) -> OwnedRec {
        OwnedRec {
            flags: self.flags,
            key: self.key.to_vec(),
            value: self.value.to_vec(),
        }
    }
}

/// A record copied out of a page (splits, merges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRec {
    pub flags: u8,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

impl OwnedRec {
    pub fn size(&self) -> usize {
        rec_size(self.key.len(), self.value.len())
    }
    pub fn child(key: &[u8], child: PageNo) -> OwnedRec {
        OwnedRec {
            flags: 0,
            key: key.to_vec(),
            value: child.0.to_le_bytes().to_vec(),
        }
    }
}

/// The record in slot `i`. Bounds are checked by [`check`]; a page that passed it (or was
/// built by this module) never panics here.
pub fn rec(b: &[u8], i: usize) -> Rec<'_> {
    debug_assert!(i < n_recs(b));
    let off = get_u16(b, slot_off(b, i));
    let kl = get_u16(b, off + 1);
    let vl = get_u16(b, off + 3);
    let k = off + REC_HEADER;
    Rec {
        off,
        flags: b[off],
        key: &b[k..k + kl],
        value: &b[k + kl..k + kl + vl],
    }
}

/// Binary search by key (memcmp): `Ok(i)` if slot `i` holds `key`, else `Err(insert pos)`.
///
/// The hottest loop of every B-tree descent, so it reads only what it compares: the slot
/// directory is bounds-checked once as one slice, each probe decodes only its record's key
/// (not the value [`rec`] also slices), and [`cmp_keys`] settles most probes on a word.
pub fn search(b: &[u8], key: &[u8]) -> Result<usize, usize> {
    let n = n_recs(b);
    let end = dir_end(b);
    // Slot i is at `end - SLOT_SIZE * (i + 1)`: index `SLOT_SIZE * (n - 1 - i)` here.
    let dir = &b[end - SLOT_SIZE * n..end];
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let off = get_u16(dir, SLOT_SIZE * (n - 1 - mid));
        let kl = get_u16(b, off + 1);
        let k = off + REC_HEADER;
        match cmp_keys(&b[k..k + kl], key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// memcmp order of two keys, as `a.cmp(b)`. Keys of a binary search usually differ in their
/// first bytes: those are compared as one big-endian word (the same order), and only keys
/// that agree there go to the byte-wise compare (a libc `memcmp` call).
#[inline]
pub fn cmp_keys(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    } else if let (Some(x), Some(y)) = (a.first_chunk::<4>(), b.first_chunk::<4>()) {
        let (x, y) = (u32::from_be_bytes(*x), u32::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    }
    a.cmp(b)
}

/// The child slot an internal node routes `key` to: the last record whose key is `<= key`,
/// or the first (its key is the node's lower fence and is never compared; docs/btree.md).
pub fn child_index(b: &[u8], key: &[u8]) -> usize {
    match search(b, key) {
        Ok(i) => i,
        Err(0) => 0,
        Err(i) => i - 1,
    }
}

/// Like [`child_index`], for keys strictly below `key` (`inclusive`: at or below).
pub fn child_index_below(b: &[u8], key: &[u8], inclusive: bool) -> usize {
    match search(b, key) {
        Ok(i) if inclusive => i,
        Ok(i) | Err(i) => i.saturating_sub(1),
    }
}

fn write_header<P: PageWriter + ?Sized>(
    p: &mut P,
    n: usize,
    heap_top: usize,
    garbage: usize,
) -> Result<(), BTreeError> {
    let mut h = [0u8; 6];
    h[0..2].copy_from_slice(&(n as u16).to_le_bytes());
    h[2..4].copy_from_slice(&(heap_top as u16).to_le_bytes());
    h[4..6].copy_from_slice(&(garbage as u16).to_le_bytes());
    p.write(OFF_N_RECS, &h)
}

fn encode(flags: u8, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(flags);
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// Replaces the whole node with `recs` (sorted) at `level`: one WRITE each for the node
/// header, the heap and the slot directory. Used for new pages (splits) and for pages whose
/// content moves wholesale (merge, redistribution, root raise and collapse).
pub fn rebuild<P: PageWriter + ?Sized>(
    p: &mut P,
    level: u16,
    index_id: u64,
    recs: &[OwnedRec],
) -> Result<(), BTreeError> {
    let size = p.bytes().len();
    let mut heap = Vec::new();
    let mut slots = vec![0u8; SLOT_SIZE * recs.len()];
    let n = recs.len();
    for (i, r) in recs.iter().enumerate() {
        debug_assert!(
            i == 0 || recs[i - 1].key < r.key,
            "rebuild: keys out of order"
        );
        let off = (HEAP_START + heap.len()) as u16;
        // Slot i sits at dir_end - 2(i+1), i.e. index (n-1-i) of the directory block.
        let j = SLOT_SIZE * (n - 1 - i);
        slots[j..j + 2].copy_from_slice(&off.to_le_bytes());
        encode(r.flags, &r.key, &r.value, &mut heap);
    }
    let top = HEAP_START + heap.len();
    let dir_start = size - TRAILER_SIZE - slots.len();
    if top > dir_start {
        return Err(BTreeError::Invariant("rebuild: records exceed the page"));
    }
    let mut hdr = [0u8; HEAP_START - HEADER_SIZE];
    hdr[0..2].copy_from_slice(&level.to_le_bytes());
    hdr[2..4].copy_from_slice(&(n as u16).to_le_bytes());
    hdr[4..6].copy_from_slice(&(top as u16).to_le_bytes());
    hdr[8..16].copy_from_slice(&index_id.to_le_bytes());
    p.write(HEADER_SIZE, &hdr)?;
    if !heap.is_empty() {
        p.write(HEAP_START, &heap)?;
        p.write(dir_start, &slots)?;
    }
    Ok(())
}

/// Initializes an empty node (the page was just PAGE_INIT'd or is being reused).
pub fn init<P: PageWriter + ?Sized>(
    p: &mut P,
    level: u16,
    index_id: u64,
) -> Result<(), BTreeError> {
    rebuild(p, level, index_id, &[])
}

/// Whether a record of this size can be inserted, perhaps after reorganizing.
pub fn fits(b: &[u8], size: usize) -> bool {
    free_total(b) >= size + SLOT_SIZE
}

/// Inserts a record at slot `pos` (the caller found `pos` by [`search`]). Returns false,
/// changing nothing, if it does not fit even after reorganizing.
pub fn insert<P: PageWriter + ?Sized>(
    p: &mut P,
    pos: usize,
    flags: u8,
    key: &[u8],
    value: &[u8],
) -> Result<bool, BTreeError> {
    let size = rec_size(key.len(), value.len());
    if !fits(p.bytes(), size) {
        return Ok(false);
    }
    if free_contiguous(p.bytes()) < size + SLOT_SIZE {
        reorganize(p)?;
    }
    let b = p.bytes();
    let n = n_recs(b);
    debug_assert!(pos <= n);
    debug_assert!(pos == 0 || rec(b, pos - 1).key < key);
    debug_assert!(pos == n || rec(b, pos).key > key);
    let top = heap_top(b);
    let ds = dir_start(b);
    let g = garbage(b);
    let mut buf = Vec::with_capacity(size);
    encode(flags, key, value, &mut buf);
    p.write(top, &buf)?;
    // Slots pos..n sit in [ds, dir_end - 2*pos): shift them down by one slot.
    if pos < n {
        p.memmove(ds - SLOT_SIZE, ds, SLOT_SIZE * (n - pos))?;
    }
    let so = dir_end(p.bytes()) - SLOT_SIZE * (pos + 1);
    p.write(so, &(top as u16).to_le_bytes())?;
    write_header(p, n + 1, top + size, g)?;
    Ok(true)
}

/// Removes the record in slot `i`. Its bytes become garbage (or are given back to the free
/// space when it is the last record of the heap).
pub fn remove<P: PageWriter + ?Sized>(p: &mut P, i: usize) -> Result<(), BTreeError> {
    let b = p.bytes();
    let n = n_recs(b);
    debug_assert!(i < n);
    let r = rec(b, i);
    let (off, size) = (r.off, r.size());
    let (top, g, ds) = (heap_top(b), garbage(b), dir_start(b));
    // Slots i+1..n sit in [ds, dir_end - 2(i+1)): shift them up by one slot.
    if i + 1 < n {
        p.memmove(ds + SLOT_SIZE, ds, SLOT_SIZE * (n - 1 - i))?;
    }
    if off + size == top {
        write_header(p, n - 1, top - size, g)
    } else {
        write_header(p, n - 1, top, g + size)
    }
}

/// Keeps slots `0..m`; the records of the others become garbage (the left half of a split:
/// one small header write, the bytes are reclaimed by a later reorganization).
pub fn truncate<P: PageWriter + ?Sized>(p: &mut P, m: usize) -> Result<(), BTreeError> {
    let b = p.bytes();
    let n = n_recs(b);
    debug_assert!(m <= n);
    let dropped: usize = (m..n).map(|i| rec(b, i).size()).sum();
    let (top, g) = (heap_top(b), garbage(b));
    write_header(p, m, top, g + dropped)
}

/// Sets the flags byte of slot `i` (delete-mark and undelete: one 1-byte write).
pub fn set_flags<P: PageWriter + ?Sized>(p: &mut P, i: usize, flags: u8) -> Result<(), BTreeError> {
    let off = rec(p.bytes(), i).off;
    p.write(off, &[flags])
}

/// Overwrites the value of slot `i` with `value` of the same length, writing only the span
/// of bytes that differ (purge's DB_TRX_ID reset logs 13 bytes, not the whole record).
pub fn patch_value<P: PageWriter + ?Sized>(
    p: &mut P,
    i: usize,
    value: &[u8],
) -> Result<(), BTreeError> {
    let r = rec(p.bytes(), i);
    if r.value.len() != value.len() {
        return Err(BTreeError::Invariant(
            "a patch must keep the value's length",
        ));
    }
    let voff = r.off + REC_HEADER + r.key.len();
    let differs = |(a, b): (&u8, &u8)| a != b;
    let Some(first) = r.value.iter().zip(value).position(differs) else {
        return Ok(());
    };
    let last = r
        .value
        .iter()
        .zip(value)
        .rposition(differs)
        .unwrap_or(first);
    p.write(voff + first, &value[first..=last])
}

/// Replaces the value of slot `i`. In place when the new value is no longer than the old
/// one (a shorter value leaves its tail as garbage); otherwise the record is rewritten at the
/// heap top. Returns false, changing nothing, if the page has no room.
pub fn update_value<P: PageWriter + ?Sized>(
    p: &mut P,
    i: usize,
    value: &[u8],
) -> Result<bool, BTreeError> {
    let b = p.bytes();
    let r = rec(b, i);
    let (off, kl, vl, flags) = (r.off, r.key.len(), r.value.len(), r.flags);
    if value.len() <= vl {
        let voff = off + REC_HEADER + kl;
        if value.len() < vl {
            let (n, top, g) = (n_recs(b), heap_top(b), garbage(b));
            p.write(off + 3, &(value.len() as u16).to_le_bytes())?;
            write_header(p, n, top, g + (vl - value.len()))?;
        }
        p.write(voff, value)?;
        return Ok(true);
    }
    let grow = value.len() - vl;
    if free_total(b) < grow {
        return Ok(false);
    }
    let key = r.key.to_vec();
    remove(p, i)?;
    let ok = insert(p, i, flags, &key, value)?;
    debug_assert!(
        ok,
        "a record that fitted after removing the old one must insert"
    );
    Ok(ok)
}

/// Compacts the heap: slides live records down over the garbage, in offset order, with one
/// MEMMOVE per run of adjacent records, then rewrites the slot directory and the header.
pub fn reorganize<P: PageWriter + ?Sized>(p: &mut P) -> Result<(), BTreeError> {
    let b = p.bytes();
    let n = n_recs(b);
    let mut by_off: Vec<(usize, usize, usize)> = (0..n)
        .map(|i| {
            let r = rec(b, i);
            (r.off, r.size(), i)
        })
        .collect();
    by_off.sort_unstable();
    let mut new_off = vec![0usize; n];
    let mut cursor = HEAP_START;
    let mut moves: Vec<(usize, usize, usize)> = Vec::new(); // (dst, src, len)
    for &(off, size, i) in &by_off {
        new_off[i] = cursor;
        if off != cursor {
            match moves.last_mut() {
                // Extend the run when this record follows the previous one with the same shift.
                Some((d, s, l)) if *s + *l == off && *d + *l == cursor => *l += size,
                _ => moves.push((cursor, off, size)),
            }
        }
        cursor += size;
    }
    let ds = dir_start(b);
    let mut slots = vec![0u8; SLOT_SIZE * n];
    for (i, o) in new_off.iter().enumerate() {
        let j = SLOT_SIZE * (n - 1 - i);
        slots[j..j + 2].copy_from_slice(&(*o as u16).to_le_bytes());
    }
    for (d, s, l) in moves {
        p.memmove(d, s, l)?;
    }
    if n > 0 {
        p.write(ds, &slots)?;
    }
    write_header(p, n, cursor, 0)
}

/// All records of a node, copied.
pub fn records(b: &[u8]) -> Vec<OwnedRec> {
    (0..n_recs(b)).map(|i| rec(b, i).to_owned()).collect()
}

/// Checks invariants 1-4 of one node; returns the problems found (the page is not trusted:
/// every offset is bounds-checked before it is read).
/// The first broken invariant of an index page image (`None` for a sound one, and for any
/// other page type): the buffer pool's check of each page read from disk, so that no reader
/// indexes outside a page whose checksum holds but whose contents are damaged.
pub fn structure_error(b: &[u8]) -> Option<String> {
    if crate::page::Header::new(b).page_type() != Some(crate::page::PageType::Index) {
        return None;
    }
    check(b).into_iter().next()
}

pub fn check(b: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let size = b.len();
    let n = n_recs(b);
    let top = heap_top(b);
    if SLOT_SIZE * n > size - TRAILER_SIZE - HEAP_START {
        out.push(format!("record count {n} cannot fit the page"));
        return out;
    }
    let ds = dir_start(b);
    if top < HEAP_START || top > ds {
        out.push(format!("heap top {top} outside [{HEAP_START}, {ds}]"));
        return out;
    }
    let internal = level(b) > 0;
    let mut spans = Vec::with_capacity(n);
    let mut prev: Option<&[u8]> = None;
    let mut live = 0;
    for i in 0..n {
        let off = get_u16(b, slot_off(b, i));
        if off < HEAP_START || off + REC_HEADER > top {
            out.push(format!("slot {i} points at {off}, outside the heap"));
            return out;
        }
        let kl = get_u16(b, off + 1);
        let vl = get_u16(b, off + 3);
        let end = off + REC_HEADER + kl + vl;
        if end > top {
            out.push(format!("record {i} at {off} runs past the heap top {top}"));
            return out;
        }
        if internal && vl != CHILD_SIZE {
            out.push(format!("internal record {i} has a {vl}-byte child pointer"));
        }
        let key = &b[off + REC_HEADER..off + REC_HEADER + kl];
        if let Some(pk) = prev {
            if pk >= key {
                out.push(format!("record {i}: keys out of order within the page"));
            }
        }
        prev = Some(key);
        spans.push((off, end));
        live += end - off;
    }
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        out.push("records overlap".into());
    }
    if live + garbage(b) != top - HEAP_START {
        out.push(format!(
            "heap accounting: {live} live + {} garbage != {} heap bytes",
            garbage(b),
            top - HEAP_START
        ));
    }
    out
}
