//! Redo record encoding, parsing and application (docs/redo-records.md).
//!
//! The parser is total: any byte string gives records or a [`RecordError`], never a panic and
//! never a record that reaches outside its page. It is fed by the redo log reader, which has
//! already checked the frame's crc32c, so an error here means a bug or a forged log.

use crate::page::{self, PageId, PageNo, PageSize, PageType, SpaceId, OFF_PREV, TRAILER_SIZE};

/// First byte a page record may change: the list links onward. Checksum, identity, type and
/// LSN belong to the page and mtr layers.
pub const FIRST_WRITABLE: usize = OFF_PREV;

pub const PAGE_INIT: u8 = 0x01;
pub const WRITE: u8 = 0x02;
pub const MEMSET: u8 = 0x03;
pub const MEMMOVE: u8 = 0x04;
pub const FILE_CREATE: u8 = 0x10;
pub const FILE_DELETE: u8 = 0x11;
pub const FILE_RENAME: u8 = 0x12;
pub const FILE_EXTEND: u8 = 0x13;
/// Bit 7 of a page record's type: same page as the previous record.
pub const SAME_PAGE: u8 = 0x80;
/// Longest path a file record may carry.
pub const MAX_PATH: usize = 4096;

/// One redo record, borrowing its bytes from the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    PageInit {
        page: PageId,
        page_type: PageType,
    },
    Write {
        page: PageId,
        offset: u32,
        data: &'a [u8],
    },
    Memset {
        page: PageId,
        offset: u32,
        len: u32,
        byte: u8,
    },
    Memmove {
        page: PageId,
        dst: u32,
        src: u32,
        len: u32,
    },
    FileCreate {
        space: SpaceId,
        page_size: u32,
        initial_pages: u32,
        path: &'a str,
    },
    FileDelete {
        space: SpaceId,
        path: &'a str,
    },
    FileRename {
        space: SpaceId,
        from: &'a str,
        to: &'a str,
    },
    FileExtend {
        space: SpaceId,
        size_pages: u32,
    },
}

impl Record<'_> {
    /// The page a page record changes; `None` for file records.
    pub fn page(&self) -> Option<PageId> {
        match *self {
            Record::PageInit { page, .. }
            | Record::Write { page, .. }
            | Record::Memset { page, .. }
            | Record::Memmove { page, .. } => Some(page),
            _ => None,
        }
    }

    /// The space a file record names; `None` for page records.
    pub fn file_space(&self) -> Option<SpaceId> {
        match *self {
            Record::FileCreate { space, .. }
            | Record::FileDelete { space, .. }
            | Record::FileRename { space, .. }
            | Record::FileExtend { space, .. } => Some(space),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad redo record at byte {at}: {what}")]
pub struct RecordError {
    pub at: usize,
    pub what: &'static str,
}

/// Appends records to an mtr's payload, eliding repeated page ids.
#[derive(Debug, Default, Clone)]
pub struct RecordWriter {
    buf: Vec<u8>,
    last_page: Option<PageId>,
}

pub(crate) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

thread_local! {
    /// The redo buffer of this thread's last mini-transaction, kept for its next one. A fresh
    /// Vec grew by doubling, five or six reallocations for an ordinary mtr. Keeping it takes
    /// 6 % off the server's instructions per sysbench update (134,600 → 126,000, callgrind;
    /// bench/results/suite.md).
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}
/// A buffer larger than this (a big mtr's) is freed rather than kept.
const SPARE_MAX: usize = 64 << 10;
/// The first buffer a thread makes: room for most mtrs without growing.
const FIRST_CAPACITY: usize = 1024;

impl Drop for RecordWriter {
    fn drop(&mut self) {
        if self.buf.capacity() == 0 || self.buf.capacity() > SPARE_MAX {
            return;
        }
        let buf = std::mem::take(&mut self.buf);
        // At thread exit the slot may be gone: then the buffer is simply freed.
        let _ = SPARE.try_with(|s| s.set(buf));
    }
}

impl RecordWriter {
    pub fn new() -> Self {
        let mut buf = SPARE.try_with(|s| s.take()).unwrap_or_default();
        buf.clear();
        if buf.capacity() == 0 {
            buf.reserve(FIRST_CAPACITY);
        }
        RecordWriter {
            buf,
            last_page: None,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
    pub fn into_bytes(mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
    /// A point to [`RecordWriter::rollback`] to.
    pub fn mark(&self) -> (usize, Option<PageId>) {
        (self.buf.len(), self.last_page)
    }

    /// Forgets every record pushed since `mark`.
    pub fn rollback(&mut self, mark: (usize, Option<PageId>)) {
        self.buf.truncate(mark.0);
        self.last_page = mark.1;
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.last_page = None;
    }

    fn page_head(&mut self, ty: u8, page: PageId) {
        if self.last_page == Some(page) {
            self.buf.push(ty | SAME_PAGE);
        } else {
            self.buf.push(ty);
            put_varint(&mut self.buf, u64::from(page.space.0));
            put_varint(&mut self.buf, u64::from(page.page_no.0));
            self.last_page = Some(page);
        }
    }

    fn put_str(&mut self, s: &str) {
        put_varint(&mut self.buf, s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Appends the encoding of `rec`.
    pub fn push(&mut self, rec: &Record<'_>) {
        match *rec {
            Record::PageInit { page, page_type } => {
                self.page_head(PAGE_INIT, page);
                self.buf
                    .extend_from_slice(&(page_type as u16).to_le_bytes());
            }
            Record::Write { page, offset, data } => {
                self.page_head(WRITE, page);
                put_varint(&mut self.buf, u64::from(offset));
                put_varint(&mut self.buf, data.len() as u64);
                self.buf.extend_from_slice(data);
            }
            Record::Memset {
                page,
                offset,
                len,
                byte,
            } => {
                self.page_head(MEMSET, page);
                put_varint(&mut self.buf, u64::from(offset));
                put_varint(&mut self.buf, u64::from(len));
                self.buf.push(byte);
            }
            Record::Memmove {
                page,
                dst,
                src,
                len,
            } => {
                self.page_head(MEMMOVE, page);
                put_varint(&mut self.buf, u64::from(dst));
                put_varint(&mut self.buf, u64::from(src));
                put_varint(&mut self.buf, u64::from(len));
            }
            Record::FileCreate {
                space,
                page_size,
                initial_pages,
                path,
            } => {
                self.buf.push(FILE_CREATE);
                put_varint(&mut self.buf, u64::from(space.0));
                self.buf.extend_from_slice(&page_size.to_le_bytes());
                put_varint(&mut self.buf, u64::from(initial_pages));
                self.put_str(path);
            }
            Record::FileDelete { space, path } => {
                self.buf.push(FILE_DELETE);
                put_varint(&mut self.buf, u64::from(space.0));
                self.put_str(path);
            }
            Record::FileRename { space, from, to } => {
                self.buf.push(FILE_RENAME);
                put_varint(&mut self.buf, u64::from(space.0));
                self.put_str(from);
                self.put_str(to);
            }
            Record::FileExtend { space, size_pages } => {
                self.buf.push(FILE_EXTEND);
                put_varint(&mut self.buf, u64::from(space.0));
                put_varint(&mut self.buf, u64::from(size_pages));
            }
        }
    }
}

/// A cursor over one mtr payload.
pub struct Parser<'a> {
    buf: &'a [u8],
    pos: usize,
    page_size: PageSize,
    last_page: Option<PageId>,
}

impl<'a> Parser<'a> {
    pub fn new(payload: &'a [u8], page_size: PageSize) -> Self {
        Parser {
            buf: payload,
            pos: 0,
            page_size,
            last_page: None,
        }
    }

    /// A parser that resumes at byte `pos` of `payload`, where the record before changed
    /// `page`: recovery re-reads one page's records from where grouping found them, and a
    /// record there may elide its page id (SAME_PAGE).
    pub fn resume(payload: &'a [u8], page_size: PageSize, pos: usize, page: PageId) -> Self {
        Parser {
            buf: payload,
            pos,
            page_size,
            last_page: Some(page),
        }
    }

    /// The offset of the next record in the payload.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn err(&self, what: &'static str) -> RecordError {
        RecordError { at: self.pos, what }
    }

    fn byte(&mut self) -> Result<u8, RecordError> {
        let b = *self.buf.get(self.pos).ok_or(self.err("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], RecordError> {
        let end = self.pos.checked_add(n).ok_or(self.err("length overflow"))?;
        let s = self.buf.get(self.pos..end).ok_or(self.err("truncated"))?;
        self.pos = end;
        Ok(s)
    }

    fn varint(&mut self) -> Result<u64, RecordError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(self.err("varint overflows 64 bits"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn u32v(&mut self) -> Result<u32, RecordError> {
        u32::try_from(self.varint()?).map_err(|_| self.err("value exceeds 32 bits"))
    }

    fn str(&mut self) -> Result<&'a str, RecordError> {
        let n = self.varint()?;
        if n > MAX_PATH as u64 {
            return Err(self.err("path too long"));
        }
        let b = self.bytes(n as usize)?;
        let s = std::str::from_utf8(b).map_err(|_| self.err("path is not UTF-8"))?;
        if s.is_empty() || s.starts_with('/') || s.split('/').any(|c| c == "..") {
            return Err(self.err("path is empty, absolute or climbs out of the data directory"));
        }
        Ok(s)
    }

    fn page_id(&mut self, ty: u8) -> Result<PageId, RecordError> {
        if ty & SAME_PAGE != 0 {
            return self
                .last_page
                .ok_or(self.err("SAME_PAGE with no previous page"));
        }
        let space = SpaceId(self.u32v()?);
        let page_no = PageNo(self.u32v()?);
        if page_no.is_null() {
            return Err(self.err("page number is NULL"));
        }
        let id = PageId::new(space, page_no);
        self.last_page = Some(id);
        Ok(id)
    }

    /// `[offset, offset + len)` must lie in the page body.
    fn range(&self, offset: u32, len: u32) -> Result<(), RecordError> {
        let end = u64::from(offset) + u64::from(len);
        if (offset as usize) < FIRST_WRITABLE
            || end > (self.page_size.bytes() - TRAILER_SIZE) as u64
        {
            return Err(self.err("range outside the page body"));
        }
        Ok(())
    }

    /// The next record, `None` at the end of the payload.
    pub fn next_record(&mut self) -> Result<Option<Record<'a>>, RecordError> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let ty = self.byte()?;
        let rec = match ty & !SAME_PAGE {
            PAGE_INIT => {
                let page = self.page_id(ty)?;
                let raw = self.bytes(2)?;
                let page_type = PageType::from_u16(u16::from_le_bytes([raw[0], raw[1]]))
                    .ok_or(self.err("unknown page type"))?;
                Record::PageInit { page, page_type }
            }
            WRITE => {
                let page = self.page_id(ty)?;
                let offset = self.u32v()?;
                let len = self.u32v()?;
                self.range(offset, len)?;
                let data = self.bytes(len as usize)?;
                Record::Write { page, offset, data }
            }
            MEMSET => {
                let page = self.page_id(ty)?;
                let offset = self.u32v()?;
                let len = self.u32v()?;
                self.range(offset, len)?;
                let byte = self.byte()?;
                Record::Memset {
                    page,
                    offset,
                    len,
                    byte,
                }
            }
            MEMMOVE => {
                let page = self.page_id(ty)?;
                let dst = self.u32v()?;
                let src = self.u32v()?;
                let len = self.u32v()?;
                self.range(dst, len)?;
                self.range(src, len)?;
                Record::Memmove {
                    page,
                    dst,
                    src,
                    len,
                }
            }
            _ if ty & SAME_PAGE != 0 => return Err(self.err("SAME_PAGE on a file record")),
            FILE_CREATE => {
                let space = SpaceId(self.u32v()?);
                let raw = self.bytes(4)?;
                let page_size = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
                if PageSize::new(page_size).is_none() {
                    return Err(self.err("bad page size"));
                }
                let initial_pages = self.u32v()?;
                let path = self.str()?;
                Record::FileCreate {
                    space,
                    page_size,
                    initial_pages,
                    path,
                }
            }
            FILE_DELETE => {
                let space = SpaceId(self.u32v()?);
                Record::FileDelete {
                    space,
                    path: self.str()?,
                }
            }
            FILE_RENAME => {
                let space = SpaceId(self.u32v()?);
                let from = self.str()?;
                let to = self.str()?;
                Record::FileRename { space, from, to }
            }
            FILE_EXTEND => {
                let space = SpaceId(self.u32v()?);
                Record::FileExtend {
                    space,
                    size_pages: self.u32v()?,
                }
            }
            _ => return Err(self.err("unknown record type")),
        };
        Ok(Some(rec))
    }
}

/// Parses a whole payload.
pub fn parse_all(payload: &[u8], page_size: PageSize) -> Result<Vec<Record<'_>>, RecordError> {
    let mut p = Parser::new(payload, page_size);
    let mut out = Vec::new();
    while let Some(r) = p.next_record()? {
        out.push(r);
    }
    Ok(out)
}

/// Applies a page record to a page image (the caller checks the page id and sets the LSN).
/// Ranges were validated by the parser; they are checked again because a panic here would
/// take recovery down.
pub fn apply(rec: &Record<'_>, page_buf: &mut [u8]) -> Result<(), RecordError> {
    let bad = RecordError {
        at: 0,
        what: "record range outside the page",
    };
    let body = FIRST_WRITABLE..page_buf.len().saturating_sub(TRAILER_SIZE);
    let span = |off: u32, len: u32| -> Result<std::ops::Range<usize>, RecordError> {
        let (s, e) = (off as usize, off as usize + len as usize);
        if s < body.start || e > body.end {
            return Err(bad.clone());
        }
        Ok(s..e)
    };
    match *rec {
        Record::PageInit { page, page_type } => {
            page_buf.fill(0);
            page::init_header(page_buf, page, page_type);
        }
        Record::Write { offset, data, .. } => {
            let r = span(offset, data.len() as u32)?;
            page_buf[r].copy_from_slice(data);
        }
        Record::Memset {
            offset, len, byte, ..
        } => {
            let r = span(offset, len)?;
            page_buf[r].fill(byte);
        }
        Record::Memmove { dst, src, len, .. } => {
            let s = span(src, len)?;
            span(dst, len)?;
            page_buf.copy_within(s, dst as usize);
        }
        _ => {
            return Err(RecordError {
                at: 0,
                what: "not a page record",
            })
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pid(s: u32, p: u32) -> PageId {
        PageId::new(SpaceId(s), PageNo(p))
    }

    #[test]
    fn every_record_type_round_trips() {
        let data = [1u8, 2, 3, 4, 5];
        let recs = vec![
            Record::PageInit {
                page: pid(1, 2),
                page_type: PageType::Index,
            },
            Record::Write {
                page: pid(1, 2),
                offset: 100,
                data: &data,
            },
            Record::Memset {
                page: pid(1, 2),
                offset: 200,
                len: 50,
                byte: 0xee,
            },
            Record::Memmove {
                page: pid(3, 4),
                dst: 300,
                src: 400,
                len: 60,
            },
            Record::FileCreate {
                space: SpaceId(9),
                page_size: 16384,
                initial_pages: 64,
                path: "db/t.qsp",
            },
            Record::FileExtend {
                space: SpaceId(9),
                size_pages: 1 << 30,
            },
            Record::FileRename {
                space: SpaceId(9),
                from: "db/t.qsp",
                to: "db/u.qsp",
            },
            Record::FileDelete {
                space: SpaceId(9),
                path: "db/u.qsp",
            },
            Record::Write {
                page: pid(3, 4),
                offset: 32,
                data: &data,
            },
        ];
        let mut w = RecordWriter::new();
        for r in &recs {
            w.push(r);
        }
        assert_eq!(parse_all(w.as_bytes(), PageSize::DEFAULT), Ok(recs));
    }

    #[test]
    fn repeated_page_is_elided() {
        let mut w = RecordWriter::new();
        let d = [7u8; 4];
        w.push(&Record::Write {
            page: pid(100_000, 100_000),
            offset: 64,
            data: &d,
        });
        let first = w.len();
        w.push(&Record::Write {
            page: pid(100_000, 100_000),
            offset: 64,
            data: &d,
        });
        assert_eq!(
            w.len() - first,
            1 + 1 + 1 + 4,
            "type, offset, len, data only"
        );
    }

    #[test]
    fn writes_outside_the_page_body_are_rejected() {
        for (offset, len) in [
            (0u32, 4u32),
            (23, 1),
            (16384 - 8, 1),
            (16000, 400),
            (u32::MAX, 2),
        ] {
            let mut b = vec![WRITE, 1, 1];
            put_varint(&mut b, u64::from(offset));
            put_varint(&mut b, u64::from(len));
            b.extend(std::iter::repeat_n(0u8, len.min(1000) as usize));
            assert!(
                parse_all(&b, PageSize::DEFAULT).is_err(),
                "offset {offset} len {len}"
            );
        }
    }

    #[test]
    fn same_page_without_a_previous_page_is_corrupt() {
        let b = [WRITE | SAME_PAGE, 40, 1, 0];
        assert!(parse_all(&b, PageSize::DEFAULT).is_err());
    }

    #[test]
    fn escaping_paths_are_rejected() {
        for path in ["../x.qsp", "/etc/passwd", "a/../../b", ""] {
            let mut w = RecordWriter::new();
            w.push(&Record::FileDelete {
                space: SpaceId(1),
                path,
            });
            assert!(
                parse_all(w.as_bytes(), PageSize::DEFAULT).is_err(),
                "{path:?}"
            );
        }
    }

    #[test]
    fn apply_changes_only_the_named_bytes() {
        let ps = PageSize::new(4096).expect("ps");
        let mut page = vec![0u8; ps.bytes()];
        apply(
            &Record::PageInit {
                page: pid(1, 5),
                page_type: PageType::Raw,
            },
            &mut page,
        )
        .expect("init");
        apply(
            &Record::Write {
                page: pid(1, 5),
                offset: 40,
                data: b"hello",
            },
            &mut page,
        )
        .expect("write");
        apply(
            &Record::Memmove {
                page: pid(1, 5),
                dst: 50,
                src: 40,
                len: 5,
            },
            &mut page,
        )
        .expect("move");
        apply(
            &Record::Memset {
                page: pid(1, 5),
                offset: 40,
                len: 2,
                byte: b'j',
            },
            &mut page,
        )
        .expect("set");
        assert_eq!(&page[40..55], b"jjllo\0\0\0\0\0hello");
        assert_eq!(page::Header::new(&page).page_id(), pid(1, 5));
    }

    proptest! {
        /// The parser never panics, and whatever it accepts stays inside the page.
        #[test]
        fn parser_is_total_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let ps = PageSize::new(4096).expect("ps");
            if let Ok(recs) = parse_all(&bytes, ps) {
                let mut page = vec![0u8; ps.bytes()];
                for r in recs.iter().filter(|r| r.page().is_some()) {
                    prop_assert!(apply(r, &mut page).is_ok());
                }
            }
        }

        /// Encoding then parsing gives back the same writes.
        #[test]
        fn writes_round_trip(ops in proptest::collection::vec((0u32..3, 32u32..4000, proptest::collection::vec(any::<u8>(), 0..80)), 1..20)) {
            let ps = PageSize::new(4096).expect("ps");
            let recs: Vec<Record<'_>> = ops.iter().map(|(p, off, d)| {
                let off = (*off).min(4096 - 8 - d.len() as u32);
                Record::Write { page: pid(1, *p), offset: off, data: d }
            }).collect();
            let mut w = RecordWriter::new();
            for r in &recs { w.push(r); }
            prop_assert_eq!(parse_all(w.as_bytes(), ps), Ok(recs));
        }
    }
}
