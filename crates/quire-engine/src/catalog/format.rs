//! The byte format of catalog records (docs/catalog.md, "Table record"). Decoding is total:
//! every length, tag and index is checked, and any damage is a [`CatalogError::Corrupt`].

use super::{CatalogError, CheckDef, IndexDef, TableDef};
use crate::page::{PageNo, SpaceId};
use crate::row::secondary::IndexColumn;
use crate::row::{Collation, Column, ColumnType, InstantValue, IntWidth, LobSize};

/// 2: a collation code after each column's flags, and string key parts hold collation
/// sort keys (docs/row-format.md, "Collations"). Version 1 tables (binary string keys) are
/// refused: their indexes would be read in the wrong order. 3: the rebuild mark
/// (`TableDef::rebuilt_at`, u64) after the indexes.
/// 4: the physical section after the rebuild mark (dropped columns and the slot order),
/// written only by a table that has one, so that an older Quire still opens the others.
/// 5: the attribute section after the physical one (table and index comments) and column
/// flags 16 (ON UPDATE) and 32 (comment), written only by a table that has one of them.
/// 6: the check section after the attribute one, written only by a table with a CHECK.
/// 7: the table's default collation after the check section (u8 collation code), written
/// only by a table that keeps one (`TableDef::collation`).
pub const VERSION: u8 = 7;

/// The value of a database record (it kept the table record's version 2 when that was 3).
pub const DATABASE_VERSION: u8 = 2;
/// A database record with its own default collation: `3, collation code`.
pub const DATABASE_VERSION_COLLATION: u8 = 3;

/// Column flags in the table record.
const FLAG_NULLABLE: u8 = 1;
/// A `str` with the DEFAULT expression's SQL text follows the flags.
const FLAG_HAS_DEFAULT: u8 = 2;
/// The column is MariaDB's JSON: a LONGTEXT with its implicit `CHECK (json_valid(c))`.
const FLAG_JSON: u8 = 4;
/// The column was added instantly: after the default comes the value older records read
/// for it, `u8 0` (NULL) or `u8 1 | u32 n | n bytes` (its record field bytes).
const FLAG_INSTANT: u8 = 8;
/// `ON UPDATE current_timestamp()` on a TIMESTAMP or DATETIME column (version 5).
const FLAG_ON_UPDATE: u8 = 16;
/// A `str` with the column's comment follows the instant value (version 5).
const FLAG_COMMENT: u8 = 32;
/// The longest instant value the catalog keeps (larger defaults are added by a rebuild).
pub const INSTANT_MAX_BYTES: usize = 65_535;

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        // Names are at most 64 characters and checked before encoding.
        debug_assert!(s.len() <= usize::from(u16::MAX));
        self.u16(s.len() as u16);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn len(&mut self, n: usize) {
        debug_assert!(n <= usize::from(u16::MAX));
        self.u16(n as u16);
    }
}

struct R<'a> {
    b: &'a [u8],
}

fn bad(what: &str) -> CatalogError {
    CatalogError::Corrupt(what.to_string())
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CatalogError> {
        if self.b.len() < n {
            return Err(bad("record truncated"));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, CatalogError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, CatalogError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, CatalogError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, CatalogError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn str(&mut self) -> Result<String, CatalogError> {
        let n = usize::from(self.u16()?);
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| bad("name is not UTF-8"))
    }
    fn bool(&mut self) -> Result<bool, CatalogError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad("bad boolean")),
        }
    }
}

const WIDTHS: [IntWidth; 5] = [
    IntWidth::Tiny,
    IntWidth::Small,
    IntWidth::Medium,
    IntWidth::Int,
    IntWidth::Big,
];
const LOBS: [LobSize; 4] = [
    LobSize::Tiny,
    LobSize::Regular,
    LobSize::Medium,
    LobSize::Long,
];

/// Type tag 18: a number's attributes follow its type (docs/catalog.md, "Table record").
const TAG_NUMBER_ATTRIBUTES: u8 = 18;
/// Attribute bits after a tag-18 type: a u8 display width follows (an integer's).
const ATTR_DISPLAY: u8 = 1;
/// ZEROFILL (an unsigned integer).
const ATTR_ZEROFILL: u8 = 2;
/// UNSIGNED on a FLOAT, DOUBLE or DECIMAL.
const ATTR_UNSIGNED: u8 = 4;
/// FLOAT(M,D) / DOUBLE(M,D): u8 M and u8 D follow (after the display width's place).
const ATTR_DIGITS: u8 = 8;

/// The attribute bits of a column: 0 for a column without any, written as before tag 18.
fn attribute_bits(c: &Column) -> u8 {
    (u8::from(c.display.is_some()) * ATTR_DISPLAY)
        | (u8::from(c.zerofill) * ATTR_ZEROFILL)
        | (u8::from(c.unsigned) * ATTR_UNSIGNED)
        | (u8::from(c.digits.is_some()) * ATTR_DIGITS)
}

fn put_type(w: &mut W, c: &Column) {
    // Tag 18 only for a column with attributes, so that every other record is byte for
    // byte what an older Quire wrote and reads. `Column::check_display`
    // (`TableDef::validate`) allows them only on the types tags 0 to 3 write.
    let attrs = attribute_bits(c);
    if attrs != 0 {
        w.u8(TAG_NUMBER_ATTRIBUTES);
    }
    put_base_type(w, c);
    if attrs != 0 {
        w.u8(attrs);
        if let Some(d) = c.display {
            w.u8(d);
        }
        if let Some((m, d)) = c.digits {
            w.u8(m);
            w.u8(d);
        }
    }
}

fn put_base_type(w: &mut W, c: &Column) {
    match c.ty {
        ColumnType::Int { width, unsigned } => {
            w.u8(0);
            w.u8(WIDTHS.iter().position(|x| *x == width).unwrap_or(0) as u8);
            w.u8(u8::from(unsigned));
        }
        ColumnType::Float => w.u8(1),
        ColumnType::Double => w.u8(2),
        ColumnType::Decimal { precision, scale } => {
            w.u8(3);
            w.u8(precision);
            w.u8(scale);
        }
        ColumnType::Char { max_chars } => {
            w.u8(4);
            w.u32(max_chars);
        }
        ColumnType::VarChar { max_chars } => {
            w.u8(5);
            w.u32(max_chars);
        }
        ColumnType::Binary { len } => {
            w.u8(6);
            w.u32(len);
        }
        ColumnType::VarBinary { max_len } => {
            w.u8(7);
            w.u32(max_len);
        }
        ColumnType::Text(l) => {
            w.u8(8);
            w.u8(LOBS.iter().position(|x| *x == l).unwrap_or(0) as u8);
        }
        ColumnType::Blob(l) => {
            w.u8(9);
            w.u8(LOBS.iter().position(|x| *x == l).unwrap_or(0) as u8);
        }
        ColumnType::Date => w.u8(10),
        ColumnType::DateTime { fsp } => {
            w.u8(11);
            w.u8(fsp);
        }
        ColumnType::Timestamp { fsp } => {
            w.u8(12);
            w.u8(fsp);
        }
        ColumnType::Enum { members } => {
            w.u8(13);
            w.u16(members);
            // `Column::check_members` (TableDef::validate) keeps the names to `members`.
            for m in &c.members {
                w.str(m);
            }
        }
        ColumnType::Year => w.u8(15),
        ColumnType::Time { fsp } => {
            w.u8(16);
            w.u8(fsp);
        }
        ColumnType::Bit { bits } => {
            w.u8(17);
            w.u8(bits);
        }
        ColumnType::Set { members } => {
            w.u8(14);
            w.u8(members);
            for m in &c.members {
                w.str(m);
            }
        }
    }
}

/// What `get_type` reads: the type, its ENUM or SET member names (empty for other types)
/// and a number's attributes (`Column::display`, `zerofill`, `unsigned`, `digits`).
struct TypeRecord {
    ty: ColumnType,
    members: Vec<String>,
    display: Option<u8>,
    zerofill: bool,
    unsigned: bool,
    digits: Option<(u8, u8)>,
}

/// A column type, as `put_type` writes it (the attributes are checked against the type
/// by `get_column`).
fn get_type(r: &mut R<'_>) -> Result<TypeRecord, CatalogError> {
    let tag = r.u8()?;
    let with_attrs = tag == TAG_NUMBER_ATTRIBUTES;
    let tag = if with_attrs {
        match r.u8()? {
            t @ 0..=3 => t,
            _ => return Err(bad("attributes on a type that is no number")),
        }
    } else {
        tag
    };
    let (ty, members) = get_base_type(r, tag)?;
    let mut out = TypeRecord {
        ty,
        members,
        display: None,
        zerofill: false,
        unsigned: false,
        digits: None,
    };
    if with_attrs {
        let attrs = r.u8()?;
        if attrs == 0 || attrs & !(ATTR_DISPLAY | ATTR_ZEROFILL | ATTR_UNSIGNED | ATTR_DIGITS) != 0
        {
            return Err(bad("bad number attributes"));
        }
        if attrs & ATTR_DISPLAY != 0 {
            out.display = Some(r.u8()?);
        }
        out.zerofill = attrs & ATTR_ZEROFILL != 0;
        out.unsigned = attrs & ATTR_UNSIGNED != 0;
        if attrs & ATTR_DIGITS != 0 {
            out.digits = Some((r.u8()?, r.u8()?));
        }
    }
    Ok(out)
}

/// A type of tag `tag` (not 18) and its ENUM or SET member names (empty for other types).
fn get_base_type(r: &mut R<'_>, tag: u8) -> Result<(ColumnType, Vec<String>), CatalogError> {
    let mut members = Vec::new();
    let lob = |r: &mut R<'_>| {
        LOBS.get(usize::from(r.u8()?))
            .copied()
            .ok_or_else(|| bad("bad LOB size"))
    };
    let t = match tag {
        0 => ColumnType::Int {
            width: WIDTHS
                .get(usize::from(r.u8()?))
                .copied()
                .ok_or_else(|| bad("bad integer width"))?,
            unsigned: r.bool()?,
        },
        1 => ColumnType::Float,
        2 => ColumnType::Double,
        3 => ColumnType::Decimal {
            precision: r.u8()?,
            scale: r.u8()?,
        },
        4 => ColumnType::Char {
            max_chars: r.u32()?,
        },
        5 => ColumnType::VarChar {
            max_chars: r.u32()?,
        },
        6 => ColumnType::Binary { len: r.u32()? },
        7 => ColumnType::VarBinary { max_len: r.u32()? },
        8 => ColumnType::Text(lob(r)?),
        9 => ColumnType::Blob(lob(r)?),
        10 => ColumnType::Date,
        11 => ColumnType::DateTime { fsp: r.u8()? },
        12 => ColumnType::Timestamp { fsp: r.u8()? },
        13 => {
            let n = r.u16()?;
            for _ in 0..n {
                members.push(r.str()?);
            }
            ColumnType::Enum { members: n }
        }
        14 => {
            let n = r.u8()?;
            for _ in 0..n {
                members.push(r.str()?);
            }
            ColumnType::Set { members: n }
        }
        15 => ColumnType::Year,
        16 => ColumnType::Time { fsp: r.u8()? },
        17 => ColumnType::Bit { bits: r.u8()? },
        _ => return Err(bad("unknown column type")),
    };
    t.check()
        .map_err(|e| bad(&format!("bad column type: {e}")))?;
    Ok((t, members))
}

fn put_column(w: &mut W, c: &Column) {
    w.str(&c.name);
    put_type(w, c);
    let flags = (u8::from(c.nullable) * FLAG_NULLABLE)
        | (u8::from(c.default.is_some()) * FLAG_HAS_DEFAULT)
        | (u8::from(c.json) * FLAG_JSON)
        | (u8::from(c.instant.is_some()) * FLAG_INSTANT)
        | (u8::from(c.on_update) * FLAG_ON_UPDATE)
        | (u8::from(!c.comment.is_empty()) * FLAG_COMMENT);
    w.u8(flags);
    w.u8(c.collation.code());
    if let Some(d) = &c.default {
        // At most DEFAULT_MAX_BYTES: checked by `TableDef::validate` before encoding.
        w.str(d);
    }
    match &c.instant {
        None => {}
        Some(InstantValue::Null) => w.u8(0),
        Some(InstantValue::Field(b)) => {
            // At most INSTANT_MAX_BYTES: checked by `TableDef::validate`.
            w.u8(1);
            w.u32(b.len() as u32);
            w.0.extend_from_slice(b);
        }
    }
    if !c.comment.is_empty() {
        // At most COMMENT_MAX_BYTES: checked by `TableDef::validate`.
        w.str(&c.comment);
    }
}

/// Whether the table needs record version 5: a column attribute, or a table or index
/// comment (docs/catalog.md, "Table record").
fn has_attributes(t: &TableDef) -> bool {
    let col = |c: &Column| c.on_update || !c.comment.is_empty();
    t.columns.iter().chain(&t.dropped).any(col)
        || !t.comment.is_empty()
        || t.indexes.iter().any(|ix| !ix.comment.is_empty())
}

pub fn encode_table(t: &TableDef) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(256));
    // Each section implies the ones before it, so a version-7 record has all of them.
    let collation = t.collation.is_some();
    let checks = collation || !t.checks.is_empty();
    let attributes = checks || has_attributes(t);
    let physical = attributes || !t.dropped.is_empty() || !t.slot_order.is_empty();
    w.u8(match (checks, attributes, physical) {
        _ if collation => 7,
        (true, _, _) => 6,
        (false, true, _) => 5,
        (false, false, true) => 4,
        (false, false, false) => 3,
    });
    w.u64(t.id);
    w.str(&t.db);
    w.str(&t.name);
    w.u32(t.space.0);
    w.str(&t.space_name);
    w.u32(t.root.0);
    w.len(t.columns.len());
    for c in &t.columns {
        put_column(&mut w, c);
    }
    w.len(t.primary_key.len());
    for &c in &t.primary_key {
        w.len(c);
    }
    w.len(t.auto_increment.map_or(0, |c| c + 1));
    w.u16(t.next_index_no);
    w.len(t.indexes.len());
    for ix in &t.indexes {
        w.str(&ix.name);
        w.u8(u8::from(ix.unique));
        w.u16(ix.index_no);
        w.u32(ix.root.0);
        w.len(ix.columns.len());
        for c in &ix.columns {
            w.len(c.column);
            w.u8(u8::from(c.prefix.is_some()));
            w.u32(c.prefix.unwrap_or(0));
            w.u8(u8::from(c.descending));
        }
    }
    w.u64(t.rebuilt_at.0);
    if physical {
        w.len(t.dropped.len());
        for c in &t.dropped {
            put_column(&mut w, c);
        }
        w.len(t.slot_order.len());
        for &c in &t.slot_order {
            w.len(c);
        }
    }
    if attributes {
        w.str(&t.comment);
        w.len(t.indexes.len());
        for ix in &t.indexes {
            w.str(&ix.comment);
        }
    }
    if checks {
        w.len(t.checks.len());
        for ck in &t.checks {
            w.str(&ck.name);
            w.u8(u8::from(ck.column_level));
            w.str(&ck.expr);
        }
    }
    if let Some(c) = t.collation {
        w.u8(c.code());
    }
    w.0
}

/// One column as `put_column` writes it, in a table record of `version`.
fn get_column(r: &mut R<'_>, version: u8) -> Result<Column, CatalogError> {
    let name = r.str()?;
    let TypeRecord {
        ty,
        members,
        display,
        zerofill,
        unsigned,
        digits,
    } = get_type(r)?;
    let flags = r.u8()?;
    let known = match version {
        5.. => {
            FLAG_NULLABLE
                | FLAG_HAS_DEFAULT
                | FLAG_JSON
                | FLAG_INSTANT
                | FLAG_ON_UPDATE
                | FLAG_COMMENT
        }
        _ => FLAG_NULLABLE | FLAG_HAS_DEFAULT | FLAG_JSON | FLAG_INSTANT,
    };
    if flags & !known != 0 {
        return Err(bad("unknown column flags"));
    }
    if flags & FLAG_ON_UPDATE != 0
        && !matches!(
            ty,
            ColumnType::Timestamp { .. } | ColumnType::DateTime { .. }
        )
    {
        return Err(bad(
            "ON UPDATE on a column that is no TIMESTAMP or DATETIME",
        ));
    }
    let collation = match version {
        1 => Collation::Utf8mb4Bin,
        _ => Collation::from_code(r.u8()?).ok_or_else(|| bad("unknown collation code"))?,
    };
    // A record written before defaults existed has flags 0 or 1: no default.
    let default = match flags & FLAG_HAS_DEFAULT {
        0 => None,
        _ => Some(r.str()?),
    };
    let instant = match flags & FLAG_INSTANT {
        0 => None,
        _ => match r.u8()? {
            0 => Some(InstantValue::Null),
            1 => {
                let n = r.u32()? as usize;
                if n > INSTANT_MAX_BYTES {
                    return Err(bad("instant value too long"));
                }
                Some(InstantValue::Field(r.take(n)?.to_vec()))
            }
            _ => return Err(bad("bad instant value kind")),
        },
    };
    let comment = match flags & FLAG_COMMENT {
        0 => String::new(),
        _ => match r.str()? {
            c if c.is_empty() => return Err(bad("empty column comment")),
            c => c,
        },
    };
    let col = Column {
        name,
        ty,
        nullable: flags & FLAG_NULLABLE != 0,
        default,
        collation,
        members,
        json: flags & FLAG_JSON != 0,
        instant,
        on_update: flags & FLAG_ON_UPDATE != 0,
        comment,
        display,
        zerofill,
        unsigned,
        digits,
    };
    col.check_display()
        .map_err(|e| bad(&format!("bad number attributes: {e}")))?;
    Ok(col)
}

pub fn decode_table(b: &[u8]) -> Result<TableDef, CatalogError> {
    let mut r = R { b };
    let version = r.u8()?;
    if !(1..=VERSION).contains(&version) {
        return Err(bad("unknown table record version"));
    }
    let id = r.u64()?;
    let db = r.str()?;
    let name = r.str()?;
    let space = SpaceId(r.u32()?);
    let space_name = r.str()?;
    let root = PageNo(r.u32()?);
    let mut columns = Vec::new();
    for _ in 0..r.u16()? {
        columns.push(get_column(&mut r, version)?);
    }
    let col = |c: u16| -> Result<usize, CatalogError> {
        let c = usize::from(c);
        if c < columns.len() {
            Ok(c)
        } else {
            Err(bad("column index out of range"))
        }
    };
    let mut primary_key = Vec::new();
    for _ in 0..r.u16()? {
        primary_key.push(col(r.u16()?)?);
    }
    let auto_increment = match r.u16()? {
        0 => None,
        n => Some(col(n - 1)?),
    };
    let next_index_no = r.u16()?;
    let mut indexes = Vec::new();
    for _ in 0..r.u16()? {
        let name = r.str()?;
        let unique = r.bool()?;
        let index_no = r.u16()?;
        let root = PageNo(r.u32()?);
        let mut cols = Vec::new();
        for _ in 0..r.u16()? {
            let column = col(r.u16()?)?;
            let has_prefix = r.bool()?;
            let p = r.u32()?;
            let descending = r.bool()?;
            cols.push(IndexColumn {
                column,
                prefix: has_prefix.then_some(p),
                descending,
            });
        }
        indexes.push(IndexDef {
            name,
            unique,
            index_no,
            root,
            columns: cols,
            usable_from: crate::row::TrxId(0),
            comment: String::new(),
        });
    }
    // Version 3 added the rebuild mark (ALTER TABLE); older records were never rebuilt.
    let rebuilt_at = match version {
        1 | 2 => crate::row::TrxId(0),
        _ => crate::row::TrxId(r.u64()?),
    };
    // Version 4: the physical section (dropped columns, slot order), checked when the
    // layout is built (`TableDef::validate_schema`).
    let (mut dropped, mut slot_order) = (Vec::new(), Vec::new());
    if version >= 4 {
        for _ in 0..r.u16()? {
            dropped.push(get_column(&mut r, version)?);
        }
        for _ in 0..r.u16()? {
            let c = usize::from(r.u16()?);
            if c >= columns.len() + dropped.len() {
                return Err(bad("slot order names no column"));
            }
            slot_order.push(c);
        }
    }
    // Version 5: the attribute section.
    let mut comment = String::new();
    if version >= 5 {
        comment = r.str()?;
        if usize::from(r.u16()?) != indexes.len() {
            return Err(bad("index comment count differs from the index count"));
        }
        for ix in &mut indexes {
            ix.comment = r.str()?;
        }
    }
    // Version 6: the check section (name, level, expression text; the SQL layer parses it).
    let mut checks = Vec::new();
    if version >= 6 {
        for _ in 0..r.u16()? {
            let name = r.str()?;
            let column_level = r.bool()?;
            let expr = r.str()?;
            if name.is_empty() || expr.is_empty() {
                return Err(bad("CHECK constraint without a name or an expression"));
            }
            checks.push(CheckDef {
                name,
                column_level,
                expr,
            });
        }
    }
    // An unknown code is an error, never a silent utf8mb4_general_ci.
    let collation = match version {
        7.. => {
            Some(Collation::from_code(r.u8()?).ok_or_else(|| bad("unknown table collation code"))?)
        }
        _ => None,
    };
    if !r.b.is_empty() {
        return Err(bad("trailing bytes after the table record"));
    }
    // Version 1 keys held strings as escaped UTF-8; today a string key part is a collation
    // sort key, so such an index would be searched in the wrong order.
    let key_columns = primary_key.iter().chain(
        indexes
            .iter()
            .flat_map(|ix| ix.columns.iter().map(|c| &c.column)),
    );
    if version == 1 && key_columns.into_iter().any(|&c| columns[c].ty.is_string()) {
        return Err(bad(
            "table record version 1 has a string in a key, written before collations: \
             dump the table with the Quire that wrote it and reload it",
        ));
    }
    Ok(TableDef {
        id,
        db,
        name,
        space,
        space_name,
        root,
        columns,
        primary_key,
        auto_increment,
        next_index_no,
        indexes,
        rebuilt_at,
        dropped,
        slot_order,
        comment,
        checks,
        collation,
    })
}

/// The version byte of a view record (docs/catalog.md, "View record").
pub const VIEW_VERSION: u8 = 1;

/// A view's definition is at most this long (its record must fit a catalog page).
pub const VIEW_TEXT_MAX: usize = 6000;

pub fn encode_view(v: &super::ViewDef) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(128 + v.definition.len()));
    w.u8(VIEW_VERSION);
    w.str(&v.db);
    w.str(&v.name);
    w.len(v.columns.len());
    for c in &v.columns {
        w.str(c);
    }
    // At most VIEW_TEXT_MAX: checked by `ViewDef::validate` before encoding.
    w.str(&v.definition);
    w.u8(v.algorithm);
    w.u8(v.check_option);
    w.u8(v.security);
    w.str(&v.definer_user);
    w.str(&v.definer_host);
    w.str(&v.charset_client);
    w.str(&v.collation_connection);
    w.0
}

pub fn decode_view(b: &[u8]) -> Result<super::ViewDef, CatalogError> {
    let mut r = R { b };
    if r.u8()? != VIEW_VERSION {
        return Err(bad("unknown view record version"));
    }
    let db = r.str()?;
    let name = r.str()?;
    let mut columns = Vec::new();
    for _ in 0..r.u16()? {
        columns.push(r.str()?);
    }
    let definition = r.str()?;
    let (algorithm, check_option, security) = (r.u8()?, r.u8()?, r.u8()?);
    if algorithm > 2 || check_option > 2 || security > 1 {
        return Err(bad("bad view option"));
    }
    let v = super::ViewDef {
        db,
        name,
        columns,
        definition,
        algorithm,
        check_option,
        security,
        definer_user: r.str()?,
        definer_host: r.str()?,
        charset_client: r.str()?,
        collation_connection: r.str()?,
    };
    if !r.b.is_empty() {
        return Err(bad("trailing bytes after a view record"));
    }
    Ok(v)
}

const FK_VERSION: u8 = 1;

/// A foreign key record (docs/catalog.md, "Foreign key record").
pub fn encode_foreign_key(f: &super::ForeignKeyDef) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(128));
    w.u8(FK_VERSION);
    w.u64(f.child);
    w.str(&f.name);
    w.len(f.columns.len());
    for c in &f.columns {
        w.str(c);
    }
    w.str(&f.parent_db);
    w.str(&f.parent_table);
    w.len(f.parent_columns.len());
    for c in &f.parent_columns {
        w.str(c);
    }
    w.u8(f.on_delete as u8);
    w.u8(f.on_update as u8);
    w.0
}

pub fn decode_foreign_key(b: &[u8]) -> Result<super::ForeignKeyDef, CatalogError> {
    let mut r = R { b };
    if r.u8()? != FK_VERSION {
        return Err(bad("unknown foreign key record version"));
    }
    let child = r.u64()?;
    let name = r.str()?;
    let mut columns = Vec::new();
    for _ in 0..r.u16()? {
        columns.push(r.str()?);
    }
    let parent_db = r.str()?;
    let parent_table = r.str()?;
    let mut parent_columns = Vec::new();
    for _ in 0..r.u16()? {
        parent_columns.push(r.str()?);
    }
    let on_delete =
        super::FkAction::from_u8(r.u8()?).ok_or_else(|| bad("bad foreign key action"))?;
    let on_update =
        super::FkAction::from_u8(r.u8()?).ok_or_else(|| bad("bad foreign key action"))?;
    if !r.b.is_empty() {
        return Err(bad("trailing bytes after a foreign key record"));
    }
    if columns.is_empty() || columns.len() != parent_columns.len() {
        return Err(bad("foreign key column counts differ"));
    }
    Ok(super::ForeignKeyDef {
        child,
        name,
        columns,
        parent_db,
        parent_table,
        parent_columns,
        on_delete,
        on_update,
    })
}
