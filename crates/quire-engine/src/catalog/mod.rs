//! # The catalog: the data dictionary, in one B-tree of the system space
//!
//! Databases and tables (columns, primary key, secondary indexes, their root pages and the
//! table's space) are records of the *catalog tree*, whose root is the fixed page
//! [`CATALOG_ROOT`] of the system space (docs/catalog.md). This module owns the record format
//! and the tree; the DDL protocols that order catalog changes against file operations live
//! with the embedded API in `table`, which sits on top of the engine.
//!
//! Invariants:
//! 1. Every DDL changes exactly one catalog record, so its catalog change is one mtr.
//! 2. A table record names a space only once that space exists durably; a space is deleted
//!    only once no durable record names it (the `table` layer's protocols keep this).
//! 3. Decoding a record never panics: damage is [`CatalogError::Corrupt`].

mod format;

#[cfg(test)]
mod tests;

use std::ops::Bound;

use crate::btree::{BTree, BTreeError, BTreeStore, Direction};
use crate::page::{Lsn, PageNo, SpaceId};
use crate::row::secondary::IndexColumn;
use crate::row::{Collation, Column, RowError, RowLayout, SecondaryLayout, TrxId};

/// The catalog tree's root: the first page the allocator gives out in a fresh system space.
pub const CATALOG_ROOT: PageNo = PageNo(1);
/// The catalog tree's index id; table indexes have ids `table_id << 16 | index_no`.
pub const CATALOG_INDEX_ID: u64 = 1;
/// Longest database, table or index name, in characters.
pub const NAME_MAX: usize = 64;
/// Longest column comment, in characters (MariaDB's limit; the SQL layer says 1629).
pub const COLUMN_COMMENT_MAX_CHARS: usize = 1024;
/// Longest table comment, in characters (MariaDB's limit; the SQL layer says 1628).
pub const TABLE_COMMENT_MAX_CHARS: usize = 2048;
/// Longest index comment, in characters (MariaDB's limit; the SQL layer says 1688).
pub const INDEX_COMMENT_MAX_CHARS: usize = 1024;

const KEY_DATABASE: u8 = 1;
const KEY_TABLE: u8 = 2;
const KEY_VIEW: u8 = 3;
/// `0x04` child table id (u64 BE), constraint name: a foreign key (docs/catalog.md).
const KEY_FOREIGN: u8 = 4;

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("corrupt catalog record: {0}")]
    Corrupt(String),
    #[error(
        "bad name '{0}': use 1 to 64 characters other than NUL and '.', not ending in a space"
    )]
    BadName(String),
    #[error(transparent)]
    BTree(#[from] BTreeError),
    #[error("{0}")]
    TooLong(String),
    #[error("{0}")]
    Invalid(String),
    #[error("invalid table definition: {0}")]
    Row(#[from] RowError),
}

pub type Result<T> = std::result::Result<T, CatalogError>;

/// Checks a database, table or index name (docs/catalog.md, "Names"): 1 to 64 characters
/// of the Basic Multilingual Plane, no NUL and no `.` (the space name's separator), not
/// ending in a space.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= NAME_MAX
        && !name.ends_with(' ')
        && name
            .chars()
            .all(|c| c != '\0' && c != '.' && u32::from(c) <= 0xFFFF);
    if ok {
        Ok(())
    } else {
        Err(CatalogError::BadName(name.to_string()))
    }
}

/// The longest space name, in bytes: with `.qsp` it is a file name, at most 255 bytes.
pub const SPACE_NAME_MAX: usize = 240;

/// The space (file stem) of a table: `<db>.<table>`, each name encoded for the file system
/// (docs/catalog.md, "Names"): `A-Z a-z 0-9 _ $` as themselves, any other character as `@`
/// and four hex digits. One-to-one, and never `.` or `/` inside a part.
pub fn space_name(db: &str, table: &str) -> String {
    let mut s = String::with_capacity(db.len() + table.len() + 1);
    encode_file_name(db, &mut s);
    s.push('.');
    encode_file_name(table, &mut s);
    s
}

fn encode_file_name(name: &str, out: &mut String) {
    use std::fmt::Write;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            out.push(c);
        } else {
            // Infallible: writing to a String.
            let _ = write!(out, "@{:04x}", u32::from(c));
        }
    }
}

/// Checks the names of a table to create or rename (to): each a valid name, and their space
/// name short enough to be a file name.
pub fn check_table_names(db: &str, table: &str) -> Result<()> {
    check_name(db)?;
    check_name(table)?;
    if space_name(db, table).len() > SPACE_NAME_MAX {
        return Err(CatalogError::BadName(table.to_string()));
    }
    Ok(())
}

/// A CHECK constraint (docs/catalog.md, "Check constraints"): the engine keeps its name,
/// level and expression text; the SQL layer parses, prints and enforces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckDef {
    /// Unique in the table, case-insensitively (a column check is named after its column).
    pub name: String,
    /// Written on a column (`LEVEL` Column in information_schema), else on the table.
    pub column_level: bool,
    /// The expression's SQL text as MariaDB prints it, without the outer parentheses.
    pub expr: String,
}

/// A secondary index of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    pub name: String,
    pub unique: bool,
    /// 1.. (0 is the clustered index); part of the B-tree index id.
    pub index_no: u16,
    pub root: PageNo,
    pub columns: Vec<IndexColumn>,
    /// A consistent read may use the index only if its read view sees this id (InnoDB's
    /// `dict_index_t::trx_id`): CREATE INDEX builds entries from the newest versions only,
    /// so a snapshot older than the build would miss what it should see (docs/catalog.md,
    /// "CREATE INDEX and older snapshots"). Not persisted: after a restart no view is older
    /// than any index, and a loaded index has `TrxId(0)`, usable by every view.
    pub usable_from: TrxId,
    /// The index's `COMMENT '…'`; empty: none (record version 5).
    pub comment: String,
}

/// What a foreign key does to the child rows when a referenced parent row is deleted or
/// its referenced columns change. The numbers are the record's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FkAction {
    /// RESTRICT, or no clause: refuse while a child row references the parent row.
    Restrict = 0,
    Cascade = 1,
    SetNull = 2,
    /// NO ACTION: as RESTRICT in InnoDB (checked at once, not at commit).
    NoAction = 3,
    /// SET DEFAULT: accepted and kept for SHOW CREATE TABLE, enforced as RESTRICT, as
    /// MariaDB 10.11's InnoDB does (MDEV-10393).
    SetDefault = 4,
}

impl FkAction {
    pub fn from_u8(b: u8) -> Option<FkAction> {
        Some(match b {
            0 => FkAction::Restrict,
            1 => FkAction::Cascade,
            2 => FkAction::SetNull,
            3 => FkAction::NoAction,
            4 => FkAction::SetDefault,
            _ => return None,
        })
    }

    /// The clause as SHOW CREATE TABLE prints it; `None` for what MariaDB omits
    /// (RESTRICT, SET DEFAULT). `information_schema` spells every action.
    pub fn sql(self) -> Option<&'static str> {
        match self {
            FkAction::Restrict | FkAction::SetDefault => None,
            FkAction::Cascade => Some("CASCADE"),
            FkAction::SetNull => Some("SET NULL"),
            FkAction::NoAction => Some("NO ACTION"),
        }
    }

    /// The rule as information_schema.REFERENTIAL_CONSTRAINTS spells it.
    pub fn rule(self) -> &'static str {
        match self {
            FkAction::Restrict | FkAction::SetDefault => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::NoAction => "NO ACTION",
        }
    }
}

/// A foreign key constraint (docs/catalog.md, "Foreign keys"): stored as its own record
/// under its child table's id, so the table record never changes for one. Columns are
/// named, not numbered, as InnoDB's SYS_FOREIGN_COLS does; the parent is named by
/// database and table (it may not exist while `foreign_key_checks=0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    pub child: u64,
    pub name: String,
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    pub fn validate(&self) -> Result<()> {
        if self.columns.is_empty() || self.columns.len() != self.parent_columns.len() {
            return Err(CatalogError::Invalid(format!(
                "foreign key `{}`: column counts differ",
                self.name
            )));
        }
        if self.name.is_empty() || self.name.len() > 64 || self.name.contains('\0') {
            return Err(CatalogError::Invalid(format!(
                "foreign key `{}`: bad name",
                self.name
            )));
        }
        check_name(&self.parent_db)?;
        check_name(&self.parent_table)?;
        Ok(())
    }

    /// The constraint as SHOW CREATE TABLE and the 1451/1452 messages print it:
    /// ``CONSTRAINT `n` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE CASCADE``; the
    /// parent is qualified by its database when that is not `child_db`.
    pub fn sql(&self, child_db: &str) -> String {
        let list = |cs: &[String]| {
            cs.iter()
                .map(|c| format!("`{}`", c.replace('`', "``")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let parent = if self.parent_db == child_db {
            format!("`{}`", self.parent_table)
        } else {
            format!("`{}`.`{}`", self.parent_db, self.parent_table)
        };
        let mut s = format!(
            "CONSTRAINT `{}` FOREIGN KEY ({}) REFERENCES {} ({})",
            self.name.replace('`', "``"),
            list(&self.columns),
            parent,
            list(&self.parent_columns)
        );
        if let Some(a) = self.on_delete.sql() {
            s.push_str(" ON DELETE ");
            s.push_str(a);
        }
        if let Some(a) = self.on_update.sql() {
            s.push_str(" ON UPDATE ");
            s.push_str(a);
        }
        s
    }
}

/// A view as the catalog records it (docs/catalog.md, "View record"). The engine keeps
/// the SQL layer's text and options; it never reads the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// The view's column names, in order.
    pub columns: Vec<String>,
    /// The SELECT, as SHOW CREATE VIEW prints it after `AS`.
    pub definition: String,
    /// 0 UNDEFINED, 1 MERGE, 2 TEMPTABLE.
    pub algorithm: u8,
    /// 0 none, 1 CASCADED, 2 LOCAL.
    pub check_option: u8,
    /// 0 DEFINER, 1 INVOKER.
    pub security: u8,
    pub definer_user: String,
    pub definer_host: String,
    pub charset_client: String,
    pub collation_connection: String,
}

impl ViewDef {
    pub fn validate(&self) -> Result<()> {
        check_name(&self.db)?;
        check_name(&self.name)?;
        let long = self.definition.len() > format::VIEW_TEXT_MAX
            || self.columns.len() > 4096
            || self.columns.iter().any(|c| c.len() > 256)
            || [
                &self.definer_user,
                &self.definer_host,
                &self.charset_client,
                &self.collation_connection,
            ]
            .iter()
            .any(|s| s.len() > 256);
        if long {
            return Err(CatalogError::TooLong(format!(
                "view `{}`: its definition is longer than {} bytes",
                self.name,
                format::VIEW_TEXT_MAX
            )));
        }
        Ok(())
    }
}

/// A table as the catalog records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    pub id: u64,
    pub db: String,
    pub name: String,
    pub space: SpaceId,
    pub space_name: String,
    /// Root of the clustered index.
    pub root: PageNo,
    pub columns: Vec<Column>,
    pub primary_key: Vec<usize>,
    pub auto_increment: Option<usize>,
    pub next_index_no: u16,
    pub indexes: Vec<IndexDef>,
    /// The transaction id the last ALTER TABLE rebuild reserved (0: never rebuilt;
    /// docs/catalog.md, "ALTER TABLE"). Every undo record of an older transaction
    /// describes the table's previous space and schema: purge skips it. A read view
    /// that does not see this id is older than the rebuilt rows: its consistent reads
    /// are refused (1412), as InnoDB does after a table rebuild.
    pub rebuilt_at: TrxId,
    /// Columns dropped instantly: their slots stay in the records (ghosts) until a rebuild
    /// (docs/row-format.md, "Instantly dropped and reordered columns").
    pub dropped: Vec<Column>,
    /// The records' slot order, as indices into `columns ++ dropped`; empty: the non-key
    /// columns in table order (and `dropped` is empty).
    pub slot_order: Vec<usize>,
    /// The table's `COMMENT='…'`; empty: none (record version 5).
    pub comment: String,
    /// CHECK constraints, in definition order (record version 6).
    pub checks: Vec<CheckDef>,
    /// The table's default collation (`DEFAULT COLLATE`), kept only where it is not the
    /// one [`shared_collation`] derives from the columns (record version 7); `None`: that
    /// one. See [`TableDef::default_collation`].
    pub collation: Option<Collation>,
}

/// The collation every string column shares (a JSON column's utf8mb4_bin is its type's,
/// not the table's, and does not count), else utf8mb4_general_ci: a table's default
/// collation when the catalog keeps none.
pub fn shared_collation(columns: &[Column]) -> Collation {
    let mut strings = columns.iter().filter(|c| c.ty.is_string() && !c.json);
    match strings.next() {
        Some(first) if strings.all(|c| c.collation == first.collation) => first.collation,
        _ => Collation::Utf8mb4GeneralCi,
    }
}

/// What a table whose default collation is `c` keeps in [`TableDef::collation`] when its
/// columns are `columns`: nothing when the columns say it already.
pub fn kept_collation(c: Collation, columns: &[Column]) -> Option<Collation> {
    (c != shared_collation(columns)).then_some(c)
}

impl TableDef {
    /// The table's default collation: the one new string columns get, shown by SHOW CREATE
    /// TABLE and information_schema.TABLES.
    pub fn default_collation(&self) -> Collation {
        self.collation
            .unwrap_or_else(|| shared_collation(&self.columns))
    }

    pub fn layout(&self) -> Result<RowLayout> {
        Ok(RowLayout::with_physical(
            self.columns.clone(),
            &self.primary_key,
            self.dropped.clone(),
            &self.slot_order,
        )?)
    }
    pub fn index_layout(&self, table: &RowLayout, ix: &IndexDef) -> Result<SecondaryLayout> {
        Ok(SecondaryLayout::new(table, ix.columns.clone())?)
    }
    pub fn clustered_index_id(&self) -> u64 {
        self.id << 16
    }
    pub fn index_id(&self, ix: &IndexDef) -> u64 {
        self.id << 16 | u64::from(ix.index_no)
    }
    /// Validates the definition as a whole (also run on every decoded record).
    pub fn validate(&self) -> Result<()> {
        check_name(&self.db)?;
        check_name(&self.name)?;
        self.validate_schema()
    }

    /// Validates columns, keys and indexes (a temporary table's names are the engine's own,
    /// outside the catalog's name rules).
    pub fn validate_schema(&self) -> Result<()> {
        // An empty primary key is allowed: the table clusters on a hidden DB_ROW_ID.
        let layout = self.layout()?;
        let too_long = |what: String, max: usize| {
            CatalogError::TooLong(format!(
                "the comment of {what} is longer than {max} characters"
            ))
        };
        if self.comment.chars().count() > TABLE_COMMENT_MAX_CHARS {
            return Err(too_long(
                format!("table `{}`", self.name),
                TABLE_COMMENT_MAX_CHARS,
            ));
        }
        for c in self.columns.iter().chain(&self.dropped) {
            if c.comment.chars().count() > COLUMN_COMMENT_MAX_CHARS {
                return Err(too_long(
                    format!("column `{}`", c.name),
                    COLUMN_COMMENT_MAX_CHARS,
                ));
            }
            if c.on_update
                && !matches!(
                    c.ty,
                    crate::row::ColumnType::Timestamp { .. }
                        | crate::row::ColumnType::DateTime { .. }
                )
            {
                return Err(RowError::Schema(format!(
                    "column `{}` has ON UPDATE but is no TIMESTAMP or DATETIME",
                    c.name
                ))
                .into());
            }
        }
        for (i, ck) in self.checks.iter().enumerate() {
            if ck.name.is_empty() || ck.expr.is_empty() {
                return Err(RowError::Schema(
                    "a CHECK constraint without a name or expression".into(),
                )
                .into());
            }
            if self.checks[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&ck.name))
            {
                return Err(
                    RowError::Schema(format!("duplicate CHECK constraint `{}`", ck.name)).into(),
                );
            }
        }
        for ix in &self.indexes {
            if ix.comment.chars().count() > INDEX_COMMENT_MAX_CHARS {
                return Err(too_long(
                    format!("index `{}`", ix.name),
                    INDEX_COMMENT_MAX_CHARS,
                ));
            }
        }
        for c in &self.columns {
            if c.default
                .as_ref()
                .is_some_and(|d| d.len() > crate::row::DEFAULT_MAX_BYTES)
            {
                return Err(RowError::Schema(format!(
                    "the DEFAULT of column `{}` is longer than {} bytes",
                    c.name,
                    crate::row::DEFAULT_MAX_BYTES
                ))
                .into());
            }
            if let Some(crate::row::InstantValue::Field(b)) = &c.instant {
                if b.len() > format::INSTANT_MAX_BYTES {
                    return Err(RowError::Schema(format!(
                        "the instant value of column `{}` is longer than {} bytes",
                        c.name,
                        format::INSTANT_MAX_BYTES
                    ))
                    .into());
                }
            }
        }
        for (i, ix) in self.indexes.iter().enumerate() {
            check_name(&ix.name)?;
            if ix.index_no == 0 || ix.index_no >= self.next_index_no {
                return Err(CatalogError::Corrupt(format!(
                    "index `{}` has number {} (next is {})",
                    ix.name, ix.index_no, self.next_index_no
                )));
            }
            if self.indexes[..i]
                .iter()
                .any(|o| o.name == ix.name || o.index_no == ix.index_no)
            {
                return Err(RowError::Schema(format!("duplicate index `{}`", ix.name)).into());
            }
            self.index_layout(&layout, ix)?;
        }
        if let Some(c) = self.auto_increment {
            let int = matches!(self.columns[c].ty, crate::row::ColumnType::Int { .. });
            // As InnoDB: the column starts an index, whose last entry gives the counter's
            // start at open.
            let keyed = self.primary_key.first() == Some(&c)
                || self.indexes.iter().any(|ix| {
                    ix.columns
                        .first()
                        .is_some_and(|f| f.column == c && !f.descending && f.prefix.is_none())
                });
            if !int || !keyed {
                return Err(RowError::Schema(
                    "AUTO_INCREMENT needs an integer column that starts the primary key or an \
                     ascending index"
                        .into(),
                )
                .into());
            }
        }
        Ok(())
    }
}

/// A table record past what a catalog page holds names the table and the likely cause
/// (long comments, many ENUM members) rather than the B-tree's sizes alone.
fn too_large(t: &TableDef, e: BTreeError) -> CatalogError {
    match e {
        BTreeError::TooLarge {
            value_len,
            max_record,
            ..
        } => CatalogError::TooLong(format!(
            "the definition of table `{}` takes {value_len} bytes in the catalog, more than \
             a catalog record holds ({max_record}): shorten its comments",
            t.name
        )),
        e => e.into(),
    }
}

fn db_key(name: &str) -> Vec<u8> {
    let mut k = vec![KEY_DATABASE];
    k.extend_from_slice(name.as_bytes());
    k
}

fn view_key(db: &str, name: &str) -> Vec<u8> {
    // Names never hold a 0 byte (`check_name`), so the key is unambiguous.
    let mut k = vec![KEY_VIEW];
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

fn fk_key(child: u64, name: &str) -> Vec<u8> {
    let mut k = vec![KEY_FOREIGN];
    k.extend_from_slice(&child.to_be_bytes());
    k.extend_from_slice(name.as_bytes());
    k
}

fn table_key(id: u64) -> Vec<u8> {
    let mut k = vec![KEY_TABLE];
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Everything the catalog holds, as loaded at open.
#[derive(Debug, Default, Clone)]
pub struct Contents {
    pub databases: Vec<String>,
    /// The databases with their own default collation (record version 3).
    pub database_collations: Vec<(String, crate::row::Collation)>,
    pub tables: Vec<TableDef>,
    pub views: Vec<ViewDef>,
    pub foreign_keys: Vec<ForeignKeyDef>,
}

/// The catalog tree. Each change is one B-tree mtr; the returned LSN must be waited on for
/// durability before any file operation that depends on it (invariant 2).
#[derive(Debug, Clone, Copy)]
pub struct Catalog {
    tree: BTree,
}

impl Catalog {
    /// Opens the catalog, creating its tree if `root_exists` is false (a fresh system space,
    /// or a crash before the bootstrap mtr committed).
    pub fn open<S: BTreeStore + ?Sized>(s: &S, root_exists: bool) -> Result<(Catalog, Lsn)> {
        if root_exists {
            return Ok((
                Catalog {
                    tree: BTree::open(s, SpaceId::SYSTEM, CATALOG_ROOT)?,
                },
                Lsn::ZERO,
            ));
        }
        let (tree, lsn) = BTree::create(s, SpaceId::SYSTEM, CATALOG_INDEX_ID)?;
        if tree.root() != CATALOG_ROOT {
            return Err(CatalogError::Corrupt(format!(
                "the catalog root was allocated at page {}, expected {}: the system space \
                 holds pages the catalog does not know",
                tree.root().0,
                CATALOG_ROOT.0
            )));
        }
        Ok((Catalog { tree }, lsn))
    }

    pub fn tree(&self) -> BTree {
        self.tree
    }

    /// Reads every record.
    pub fn load<S: BTreeStore + ?Sized>(&self, s: &S) -> Result<Contents> {
        let mut c = Contents::default();
        for e in self
            .tree
            .scan(s, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        {
            let e = e?;
            match e.key.first() {
                Some(&KEY_DATABASE) => {
                    let name = String::from_utf8(e.key[1..].to_vec())
                        .map_err(|_| CatalogError::Corrupt("database name not UTF-8".into()))?;
                    match e.value.as_slice() {
                        [format::DATABASE_VERSION] => {}
                        // An unknown code is corruption, never a silent server default.
                        &[format::DATABASE_VERSION_COLLATION, code] => {
                            let coll = crate::row::Collation::from_code(code).ok_or_else(|| {
                                CatalogError::Corrupt(format!(
                                    "database `{name}`: unknown collation code {code}"
                                ))
                            })?;
                            c.database_collations.push((name.clone(), coll));
                        }
                        _ => {
                            return Err(CatalogError::Corrupt(format!(
                                "database `{name}`: bad record"
                            )))
                        }
                    }
                    c.databases.push(name);
                }
                Some(&KEY_TABLE) if e.key.len() == 9 => {
                    let mut id = [0u8; 8];
                    id.copy_from_slice(&e.key[1..]);
                    let id = u64::from_be_bytes(id);
                    let t = format::decode_table(&e.value)
                        .map_err(|err| CatalogError::Corrupt(format!("table id {id}: {err}")))?;
                    if t.id != id {
                        return Err(CatalogError::Corrupt(format!(
                            "table record under id {id} says id {}",
                            t.id
                        )));
                    }
                    t.validate()
                        .map_err(|err| CatalogError::Corrupt(format!("table id {id}: {err}")))?;
                    c.tables.push(t);
                }
                Some(&KEY_VIEW) => {
                    let v = format::decode_view(&e.value).map_err(|err| {
                        CatalogError::Corrupt(format!("view record {:02x?}: {err}", e.key))
                    })?;
                    if e.key != view_key(&v.db, &v.name) {
                        return Err(CatalogError::Corrupt(format!(
                            "view record under key {:02x?} names `{}`.`{}`",
                            e.key, v.db, v.name
                        )));
                    }
                    c.views.push(v);
                }
                Some(&KEY_FOREIGN) => {
                    let f = format::decode_foreign_key(&e.value).map_err(|err| {
                        CatalogError::Corrupt(format!("foreign key record {:02x?}: {err}", e.key))
                    })?;
                    if e.key != fk_key(f.child, &f.name) {
                        return Err(CatalogError::Corrupt(format!(
                            "foreign key record under key {:02x?} names `{}`",
                            e.key, f.name
                        )));
                    }
                    c.foreign_keys.push(f);
                }
                _ => {
                    return Err(CatalogError::Corrupt(format!(
                        "unknown catalog key {:02x?}",
                        e.key
                    )))
                }
            }
        }
        Ok(c)
    }

    /// A database's record: version 2 without a collation of its own (what every Quire
    /// reads), version 3 and the collation's code with one.
    pub fn insert_database<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        name: &str,
        collation: Option<crate::row::Collation>,
    ) -> Result<Lsn> {
        check_name(name)?;
        let value = match collation {
            None => vec![format::DATABASE_VERSION],
            Some(c) => vec![format::DATABASE_VERSION_COLLATION, c.code()],
        };
        Ok(self.tree.insert(s, &db_key(name), &value)?)
    }

    /// ALTER DATABASE's new default collation: the record replaced (one mtr).
    pub fn update_database<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        name: &str,
        collation: Option<crate::row::Collation>,
    ) -> Result<Lsn> {
        let value = match collation {
            None => vec![format::DATABASE_VERSION],
            Some(c) => vec![format::DATABASE_VERSION_COLLATION, c.code()],
        };
        Ok(self.tree.update(s, &db_key(name), &value)?)
    }

    pub fn delete_database<S: BTreeStore + ?Sized>(&self, s: &S, name: &str) -> Result<Lsn> {
        Ok(self.tree.delete(s, &db_key(name))?)
    }

    pub fn insert_table<S: BTreeStore + ?Sized>(&self, s: &S, t: &TableDef) -> Result<Lsn> {
        t.validate()?;
        self.tree
            .insert(s, &table_key(t.id), &format::encode_table(t))
            .map_err(|e| too_large(t, e))
    }

    /// Replaces a table's record (rename, create or drop index): one mtr.
    pub fn update_table<S: BTreeStore + ?Sized>(&self, s: &S, t: &TableDef) -> Result<Lsn> {
        t.validate()?;
        self.tree
            .update(s, &table_key(t.id), &format::encode_table(t))
            .map_err(|e| too_large(t, e))
    }

    /// Writes a view's record (a new view, or CREATE OR REPLACE / ALTER VIEW of one):
    /// one mtr either way.
    pub fn put_view<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        v: &ViewDef,
        exists: bool,
    ) -> Result<Lsn> {
        v.validate()?;
        let key = view_key(&v.db, &v.name);
        let value = format::encode_view(v);
        Ok(if exists {
            self.tree.update(s, &key, &value)?
        } else {
            self.tree.insert(s, &key, &value)?
        })
    }

    pub fn delete_view<S: BTreeStore + ?Sized>(&self, s: &S, db: &str, name: &str) -> Result<Lsn> {
        Ok(self.tree.delete(s, &view_key(db, name))?)
    }

    /// Writes a foreign key's record (new, or updated in place: RENAME of its parent).
    pub fn put_foreign_key<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        f: &ForeignKeyDef,
        exists: bool,
    ) -> Result<Lsn> {
        f.validate()?;
        let key = fk_key(f.child, &f.name);
        let value = format::encode_foreign_key(f);
        Ok(if exists {
            self.tree.update(s, &key, &value)?
        } else {
            self.tree.insert(s, &key, &value)?
        })
    }

    pub fn delete_foreign_key<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        child: u64,
        name: &str,
    ) -> Result<Lsn> {
        Ok(self.tree.delete(s, &fk_key(child, name))?)
    }

    pub fn delete_table<S: BTreeStore + ?Sized>(&self, s: &S, id: u64) -> Result<Lsn> {
        Ok(self.tree.delete(s, &table_key(id))?)
    }
}

pub use format::{
    decode_foreign_key, decode_table, decode_view, encode_foreign_key, encode_table, encode_view,
    VIEW_TEXT_MAX,
};
