//! # The embedded API: databases, tables, indexes and rows
//!
//! [`Db`] is what an application embeds: it opens a data directory (an [`Engine`] plus the
//! [`catalog`](crate::catalog)), runs the DDL protocols of docs/catalog.md, and hands out
//! [`Table`]s for row access. Rows are `Vec<Value>` in column order.
//!
//! ```
//! use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
//! use quire_engine::table::{Db, IndexSpec, TableSpec};
//! use quire_engine::config::Config;
//! use quire_engine::btree::Direction;
//! use std::ops::Bound;
//!
//! let dir = tempfile::tempdir()?;
//! let db = Db::open(dir.path(), Config::default())?;
//! db.create_database("shop")?;
//! let int = ColumnType::Int { width: IntWidth::Int, unsigned: false };
//! let mut spec = TableSpec::new(
//!     vec![
//!         Column::new("id", int),
//!         Column::new("name", ColumnType::VarChar { max_chars: 40 }),
//!         Column::nullable("qty", int),
//!     ],
//!     vec![0],
//! );
//! spec.auto_increment = Some(0);
//! spec.indexes.push(IndexSpec::new("by_name", vec![1]).unique());
//! let items = db.create_table("shop", "items", spec)?;
//!
//! // NULL in the AUTO_INCREMENT column takes the next value.
//! items.insert(vec![Value::Null, Value::Str("apple".into()), Value::Int(3)])?;
//! items.insert(vec![Value::Null, Value::Str("pear".into()), Value::Null])?;
//! assert!(items.insert(vec![Value::Null, Value::Str("pear".into()), Value::Null]).is_err());
//!
//! items.update(&[Value::Int(2)], vec![Value::Int(2), Value::Str("plum".into()), Value::Int(9)])?;
//! let row = items.get(&[Value::Int(2)])?.expect("row 2");
//! assert_eq!(row[1], Value::Str("plum".into()));
//!
//! let names: Vec<Value> = items
//!     .scan(Bound::Unbounded, Bound::Unbounded, Direction::Backward)?
//!     .map(|r| r.map(|r| r[1].clone()))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(names, vec![Value::Str("plum".into()), Value::Str("apple".into())]);
//!
//! // Full rows in index order; bounds are index column values or prefixes of them.
//! let from_p: Vec<Vec<Value>> = items
//!     .index_scan(
//!         "by_name",
//!         Bound::Included(vec![Value::Str("p".into())]),
//!         Bound::Unbounded,
//!         Direction::Forward,
//!     )?
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(from_p, vec![row.clone()]);
//!
//! items.delete(&[Value::Int(1)])?;
//!
//! // Transactions: REPEATABLE READ snapshots, row locks, savepoints (docs/transactions.md).
//! let mut tx = db.begin(quire_engine::trx::Isolation::RepeatableRead)?;
//! tx.insert(&items, vec![Value::Int(10), Value::Str("fig".into()), Value::Int(1)])?;
//! tx.update_with(&items, &[Value::Int(10)], |row| row[2] = Value::Int(2))?;
//! tx.savepoint("before_delete")?;
//! tx.delete(&items, &[Value::Int(10)])?;
//! tx.rollback_to_savepoint("before_delete")?;
//! // Another session's snapshot does not see the uncommitted row.
//! assert_eq!(items.get(&[Value::Int(10)])?, None);
//! tx.commit()?;
//! assert_eq!(items.get(&[Value::Int(10)])?.map(|r| r[2].clone()), Some(Value::Int(2)));
//!
//! // No primary key: a hidden row id clusters the table, and rows are named by handles.
//! // Long values (TEXT/BLOB, long VARCHARs) go to BLOB pages off the record (docs/blob.md).
//! let spec = TableSpec::new(
//!     vec![
//!         Column::new("level", int),
//!         Column::nullable("text", ColumnType::Text(LobSize::Medium)),
//!     ],
//!     vec![],
//! );
//! let events = db.create_table("shop", "events", spec)?;
//! let long = "x".repeat(100_000);
//! events.insert(vec![Value::Int(1), Value::Str(long.clone())])?;
//! events.insert(vec![Value::Int(2), Value::Null])?;
//! for r in events
//!     .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)?
//!     .with_handles()
//! {
//!     let (handle, row) = r?;
//!     if row[0] == Value::Int(2) {
//!         events.delete_row(&handle)?;
//!     } else {
//!         assert_eq!(row[1], Value::Str(long.clone()));
//!     }
//! }
//! assert!(db.check()?.is_empty());
//! db.shutdown()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Invariants:
//! 1. DDL is serialized by `Db::ddl`; a table's DDL excludes its DML (the table's `dml`
//!    RwLock: DML shares it for one call, DDL takes it exclusively). DDL here does not wait
//!    for open transactions: the SQL layer's metadata locks make it (quire-sql `mdl.rs`).
//!    A consistent read through an index built after its read view was made is refused
//!    with [`DbError::TableDefinitionChanged`] (`IndexDef::usable_from`).
//! 2. Row changes run in transactions (`txn.rs`, docs/transactions.md); an autocommit call
//!    on [`Table`] is one, and returns once its commit is durable as
//!    `innodb_flush_log_at_trx_commit` says.
//! 3. A row change is several mtrs (undo record, clustered record, secondary entries); a
//!    crash in between leaves an active transaction that recovery rolls back.
//! 4. A record names only whole BLOB chains, each chain belongs to one version, and it is
//!    freed only once no view can read that version (`table/blob.rs`, docs/blob.md).
//! 5. A table without a primary key is clustered on a hidden DB_ROW_ID that is never handed
//!    out twice in a run and starts above the largest durable one (`table/rowid.rs`); its
//!    rows are named by [`RowHandle`].

mod alter;
mod blob;
mod check;
mod foreign;
mod online;
mod online_rebuild;
mod purge;
mod recovery;
mod rowid;
mod scan;
mod settings;
mod statistics;
mod stats;
mod temp;
mod txn;
mod views;

pub use foreign::{has_index_on, MAX_CASCADE_DEPTH};
pub use temp::{is_temp_space, TEMP_DB};

pub use alter::Rebuilt;
pub use online::{OnlineIndex, OnlineOptions};
pub use online_rebuild::OnlineRebuild;
pub use rowid::RowHandle;
pub use scan::IndexRows;
pub use settings::SetError;
pub use statistics::{IndexStatistics, TableStatistics, SAMPLE_LEAVES};
pub use txn::{ReadLock, Transaction, Upsert};

/// A consistent-read snapshot with no transaction id ([`Db::snapshot`]): what a transaction
/// that has only read so far holds, as InnoDB's read-only transactions do.
pub type Snapshot = Arc<ViewHandle>;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use quire_io::Vfs;

use crate::btree::{BTree, BTreeError, Cursor, Direction};
use crate::catalog::{
    self, Catalog, CatalogError, ForeignKeyDef, IndexDef, TableDef, CATALOG_ROOT,
};
use crate::config::Config;
use crate::engine::{Engine, EngineError};
use crate::lock::LockManager;
use crate::page::{Lsn, PageId, SpaceId};
use crate::row::secondary::{self, IndexColumn};
use crate::row::{
    Column, ColumnType, RowError, RowId, RowLayout, RowLimits, SecondaryLayout, Value,
};
use crate::trx::{Isolation, TrxSys, ViewHandle};
use crate::undo::{UndoError, UndoSys};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// MySQL error 1062. `index` is "PRIMARY" for the primary key; `entry` is MySQL's text
    /// of the colliding key: its columns' values joined by '-' ([`key_entry`]).
    #[error("Duplicate entry '{entry}' for key '{index}'")]
    DuplicateKey { index: String, entry: String },
    #[error("unknown database '{0}'")]
    NoSuchDatabase(String),
    #[error("database '{0}' exists")]
    DatabaseExists(String),
    #[error("table '{0}' doesn't exist")]
    NoSuchTable(String),
    #[error("table '{0}' already exists")]
    TableExists(String),
    #[error("no index '{index}' on table '{table}'")]
    NoSuchIndex { table: String, index: String },
    #[error("index '{index}' already exists on table '{table}'")]
    IndexExists { table: String, index: String },
    #[error("no row with that primary key")]
    RowNotFound,
    #[error("table '{0}' has no primary key: name its rows by RowHandle (scan with_handles)")]
    NoPrimaryKey(String),
    #[error("a row handle of another table was used on table '{0}'")]
    ForeignHandle(String),
    #[error("row is too large even with its long values off-page: {0}")]
    RowTooLarge(String),
    #[error(transparent)]
    Row(#[from] RowError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    BTree(BTreeError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Undo(#[from] UndoError),
    /// MySQL error 1205; the statement was rolled back, the transaction goes on.
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// MySQL error 1213; the whole transaction was rolled back.
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// MySQL error 1317: a lock wait ended because the transaction's interrupt flag was set
    /// (`Transaction::set_interrupt`); the statement was rolled back, the transaction goes on.
    #[error("Query execution was interrupted")]
    Interrupted,
    #[error("the transaction was rolled back (deadlock); only ROLLBACK is possible")]
    TrxAborted,
    /// MySQL error 1412: a consistent read through an index built after the read view was
    /// made ([`IndexDef::usable_from`]); the statement fails, the transaction goes on.
    #[error("Table definition has changed, please retry transaction")]
    TableDefinitionChanged,
    /// 1452: a child row names no parent row. The text is the constraint as MariaDB
    /// prints it: `` `db`.`child`, CONSTRAINT … ``.
    #[error("Cannot add or update a child row: a foreign key constraint fails ({0})")]
    NoReferencedRow(String),
    /// 1451: a parent row is still referenced (RESTRICT / NO ACTION).
    #[error("Cannot delete or update a parent row: a foreign key constraint fails ({0})")]
    RowIsReferenced(String),
    /// A cascade deeper than `foreign::MAX_CASCADE_DEPTH` (InnoDB's FK_MAX_CASCADE_DEL).
    /// A cascade deeper than `MAX_CASCADE_DEPTH`; the text names the constraint.
    #[error("Foreign key cascade delete/update exceeds max depth of 15: {0}")]
    CascadeTooDeep(String),
    #[error("Duplicate foreign key constraint name '{0}'")]
    ForeignKeyExists(String),
    #[error("no foreign key '{0}'")]
    NoSuchForeignKey(String),
    #[error("SAVEPOINT {0} does not exist")]
    NoSuchSavepoint(String),
    #[error("the database is still in use by another thread")]
    Busy,
    /// A rebuild met a row written by a transaction still active: the SQL layer's
    /// metadata locks never let that happen; through the embedded API, retry later.
    #[error("table '{0}' has changes of an active transaction")]
    TableInUse(String),
    #[error("could not start a background thread: {0}")]
    Thread(String),
    /// MariaDB 1799: an online index build's log of concurrent changes outgrew
    /// `innodb_online_alter_log_max_size`; the build was abandoned.
    #[error("Creating index '{index}' required more than 'innodb_online_alter_log_max_size' bytes of modification log. Please try again")]
    OnlineLogTooBig { index: String },
    /// The temporary file of an online index build's log failed; the build was abandoned.
    #[error("{0}")]
    OnlineLogFailed(String),
    /// MySQL error 1114: a change to the table needed its file (or the undo log's) to grow
    /// and the disk is full (InnoDB's DB_OUT_OF_FILE_SPACE). The statement was rolled
    /// back; the transaction goes on. `{0}` is the table's name.
    #[error("The table '{0}' is full")]
    TableFull(String),
}

impl DbError {
    /// A file could not grow because the disk is full (ENOSPC, EDQUOT), or a space reached
    /// its largest size: whatever layer the error came through.
    pub fn is_disk_full(&self) -> bool {
        match self {
            DbError::TableFull(_) => true,
            DbError::BTree(e) => e.is_disk_full(),
            DbError::Engine(e) => e.is_disk_full(),
            DbError::Undo(e) => e.is_disk_full(),
            DbError::Catalog(CatalogError::BTree(e)) => e.is_disk_full(),
            _ => false,
        }
    }
}

impl From<BTreeError> for DbError {
    fn from(e: BTreeError) -> Self {
        match e {
            BTreeError::TooLarge { .. } => DbError::RowTooLarge(e.to_string()),
            e => DbError::BTree(e),
        }
    }
}

pub type Result<T> = std::result::Result<T, DbError>;

/// The name of the primary key in errors and [`Table::index_record_counts`] (MySQL's).
pub const PRIMARY: &str = "PRIMARY";

/// MySQL's text of a key in "Duplicate entry": the key columns' values joined by '-'
/// (strings as they are, numbers in decimal, temporal values as SQL literals without
/// quotes), each cut to its index prefix. `parts` are (column, prefix) pairs.
pub fn key_entry(columns: &[Column], row: &[Value], parts: &[(usize, Option<u32>)]) -> String {
    let mut out = String::new();
    for (i, &(c, prefix)) in parts.iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        let ty = columns.get(c).map(|c| c.ty);
        let Some(v) = row.get(c) else { continue };
        let limit = prefix.map_or(usize::MAX, |p| p as usize);
        match v {
            Value::Null => out.push_str("NULL"),
            Value::Int(i) => out.push_str(&i.to_string()),
            // A BIT's bytes, as MariaDB prints the field (`val_str`).
            Value::UInt(u) if matches!(ty, Some(ColumnType::Bit { .. })) => {
                let n = match ty {
                    Some(ColumnType::Bit { bits }) => crate::row::bit_bytes(bits),
                    _ => 8,
                };
                out.push_str(&String::from_utf8_lossy(&u.to_be_bytes()[8 - n..]));
            }
            Value::UInt(u) => out.push_str(&u.to_string()),
            Value::Double(d) if ty == Some(ColumnType::Float) => {
                out.push_str(&(*d as f32).to_string())
            }
            Value::Double(d) => out.push_str(&d.to_string()),
            Value::Decimal(d) => out.push_str(&d.to_string()),
            Value::Str(s) => out.extend(s.chars().take(limit)),
            Value::Bytes(b) => {
                out.push_str(&String::from_utf8_lossy(&b[..b.len().min(limit)]));
            }
            Value::Date(d) => {
                out.push_str(&format!("{:04}-{:02}-{:02}", d.year, d.month, d.day));
            }
            Value::Time(t) => {
                let a = t.micros.unsigned_abs();
                let secs = a / 1_000_000;
                out.push_str(&format!(
                    "{}{:02}:{:02}:{:02}",
                    if t.micros < 0 { "-" } else { "" },
                    secs / 3600,
                    secs / 60 % 60,
                    secs % 60
                ));
                let fsp = match ty {
                    Some(ColumnType::Time { fsp }) => fsp,
                    _ => 0,
                };
                if fsp > 0 {
                    let us = format!("{:06}", a % 1_000_000);
                    out.push('.');
                    out.push_str(&us[..usize::from(fsp).min(6)]);
                }
            }
            Value::DateTime(t) => {
                let d = t.date;
                out.push_str(&format!(
                    "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                    d.year, d.month, d.day, t.hour, t.minute, t.second
                ));
                let fsp = match ty {
                    Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => fsp,
                    _ => 0,
                };
                if fsp > 0 {
                    let us = format!("{:06}", t.micros);
                    out.push('.');
                    out.push_str(&us[..usize::from(fsp).min(6)]);
                }
            }
        }
    }
    out
}

/// A secondary index to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<IndexColumn>,
    pub unique: bool,
    /// `COMMENT '…'`; empty: none.
    pub comment: String,
}

impl IndexSpec {
    /// A non-unique index on whole columns (by column number).
    pub fn new(name: impl Into<String>, columns: Vec<usize>) -> Self {
        IndexSpec {
            name: name.into(),
            columns: columns.into_iter().map(IndexColumn::new).collect(),
            unique: false,
            comment: String::new(),
        }
    }
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
}

/// A table to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    pub columns: Vec<Column>,
    /// Column numbers of the primary key; empty: the table is clustered on a hidden
    /// DB_ROW_ID and its rows are named by [`RowHandle`] (docs/catalog.md).
    pub primary_key: Vec<usize>,
    /// The AUTO_INCREMENT column: an integer column that is the whole primary key.
    pub auto_increment: Option<usize>,
    pub indexes: Vec<IndexSpec>,
    /// The table's `COMMENT='…'`; empty: none.
    pub comment: String,
    /// CHECK constraints (the SQL layer has checked them).
    pub checks: Vec<catalog::CheckDef>,
    /// The table's default collation where the columns do not say it
    /// (`catalog::kept_collation`); `None`: theirs.
    pub collation: Option<crate::row::Collation>,
}

impl TableSpec {
    pub fn new(columns: Vec<Column>, primary_key: Vec<usize>) -> Self {
        TableSpec {
            columns,
            primary_key,
            auto_increment: None,
            indexes: Vec::new(),
            comment: String::new(),
            checks: Vec::new(),
            collation: None,
        }
    }
}

struct Index {
    def: IndexDef,
    layout: SecondaryLayout,
    tree: BTree,
}

impl Index {
    /// The DuplicateKey error of `row` colliding in this index.
    fn duplicate(&self, columns: &[Column], row: &[Value]) -> DbError {
        let parts: Vec<_> = self
            .def
            .columns
            .iter()
            .map(|c| (c.column, c.prefix))
            .collect();
        DbError::DuplicateKey {
            index: self.def.name.clone(),
            entry: key_entry(columns, row, &parts),
        }
    }

    /// Some indexed column of `row` is NULL: the row never collides in a unique index (SQL).
    fn null_in(&self, row: &[Value]) -> bool {
        self.def
            .columns
            .iter()
            .any(|c| matches!(row.get(c.column), Some(Value::Null)))
    }
}

impl TableState {
    /// The DuplicateKey error of `row` colliding on the primary key.
    fn duplicate_primary(&self, row: &[Value]) -> DbError {
        let parts: Vec<_> = self.def.primary_key.iter().map(|&c| (c, None)).collect();
        DbError::DuplicateKey {
            index: PRIMARY.into(),
            entry: key_entry(&self.def.columns, row, &parts),
        }
    }
}

/// One version of a table's definition with its open trees. DDL replaces it.
struct TableState {
    def: TableDef,
    /// `db.name`, what handles on this version name the table by (made once here: a
    /// statement opens a handle per table, and formatting it each time showed in profiles).
    full_name: Arc<str>,
    layout: RowLayout,
    clustered: BTree,
    indexes: Vec<Index>,
    /// Shared across versions of the same table (invariant 1).
    dml: Arc<RwLock<()>>,
    autoinc: Arc<AtomicU64>,
    /// Keeps BLOB chains alive while they are read (docs/blob.md): updates and deletes of
    /// a table that can store values off-page hold it exclusively, readers of off-page
    /// values shared. Shared across versions, like `dml`.
    chains: Arc<RwLock<()>>,
    /// Whether a row of this table can have an off-page value (`blob::can_store_off_page`).
    off_page: bool,
    /// The next DB_ROW_ID, for a table without a primary key (`rowid`).
    row_id: Arc<AtomicU64>,
    /// The gap guard (`txn`): inserts hold it shared across their insert-intention check
    /// and the insert, locking readers exclusively while they take a gap lock, so no gap
    /// lock is granted between an insert's check and its insert. Shared across versions.
    gaps: Arc<RwLock<()>>,
    /// Gap locks ever requested on this table: while 0, inserts skip the check.
    gap_locked: Arc<AtomicU64>,
    /// The row log of an index being built online (`online.rs`): every change to a
    /// clustered record appends to it while it is set.
    online: arc_swap::ArcSwapOption<online::RowLog>,
    /// The kept statistics of this version and its change counter (`statistics.rs`);
    /// not shared across versions, so DDL starts them again.
    stats: statistics::Cache,
}

#[derive(Default)]
struct State {
    databases: BTreeSet<String>,
    /// A database's own default collation (`CREATE DATABASE … CHARACTER SET`); absent: the
    /// server's.
    db_collations: BTreeMap<String, crate::row::Collation>,
    /// (db, table) → table id
    names: BTreeMap<(String, String), u64>,
    tables: crate::hash::Map<u64, Arc<TableState>>,
    next_table_id: u64,
    /// (db, view) → definition: views share tables' names (`views.rs`).
    views: BTreeMap<(String, String), crate::catalog::ViewDef>,
    /// Foreign keys both ways (`foreign.rs`).
    fks: foreign::FkMaps,
}

/// An open data directory with its catalog: the embedded API. It derefs to [`DbInner`],
/// which has the table and transaction calls; `Db` itself owns the background work (the
/// rollback of transactions a crash interrupted, purge) and shuts it down.
pub struct Db {
    inner: Arc<DbInner>,
    rollback: Mutex<Option<std::thread::JoinHandle<()>>>,
    purge: Option<purge::Purger>,
}

impl std::ops::Deref for Db {
    type Target = DbInner;
    fn deref(&self) -> &DbInner {
        &self.inner
    }
}

/// What an open data directory shares between sessions and background threads.
pub struct DbInner {
    engine: Engine,
    catalog: Catalog,
    limits: RowLimits,
    state: RwLock<State>,
    ddl: Mutex<()>,
    /// The current settings: the start-up ones, changed by `SET GLOBAL` (`settings.rs`).
    settings: Mutex<Config>,
    /// The dynamic settings the transaction layer and purge read at use.
    live: settings::Live,
    undo: UndoSys,
    trx: TrxSys,
    locks: LockManager,
    counters: Counters,
    /// One purger at a time: the background coordinator, [`Db::purge_now`], a slow
    /// shutdown (history logs are removed in commit order). It holds the logs fetched
    /// ahead from the history lists (`purge::Queue`).
    purge_one: Mutex<purge::Queue>,
    /// Some foreign key has existed since open: until then row changes skip the
    /// constraint lookups without touching `state` (`foreign.rs`). Never reset.
    any_fks: std::sync::atomic::AtomicBool,
    /// Moves when kept statistics a plan may have used are replaced or go stale
    /// (`statistics.rs`, invariant 3).
    stats_epoch: AtomicU64,
}

/// Counters of the transaction layer and purge, under `Db::stats` names.
#[derive(Default)]
struct Counters {
    versions_built: AtomicU64,
    secondary_clustered_visits: AtomicU64,
    lag_delay_us: AtomicU64,
    purge_records: AtomicU64,
    purge_batches: AtomicU64,
    purge_logs: AtomicU64,
    purge_batch_effective: AtomicU64,
    purge_trx_id_resets: AtomicU64,
    /// Rows written through transactions (InnoDB's `Innodb_rows_*`): an update that leaves
    /// the row as it was is not counted, as InnoDB does not.
    rows_inserted: AtomicU64,
    rows_updated: AtomicU64,
    rows_deleted: AtomicU64,
}

/// The largest value of AUTO_INCREMENT column `c` on disk (0 if none): the last record of
/// the index that starts with it, the primary key or a secondary index (the catalog checks
/// there is one). A delete-marked entry may count: the counter never goes back.
fn largest_auto_increment(
    engine: &Engine,
    def: &TableDef,
    layout: &RowLayout,
    clustered: &BTree,
    indexes: &[Index],
    c: usize,
) -> Result<u64> {
    let as_u64 = |v: Option<Value>| match v {
        Some(Value::Int(i)) => i.max(0) as u64,
        Some(Value::UInt(u)) => u,
        _ => 0,
    };
    let last = |tree: &BTree| {
        tree.scan(
            engine,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Backward,
        )
        .next()
        .transpose()
    };
    if def.primary_key.first() == Some(&c) {
        return Ok(match last(clustered)? {
            Some(e) => as_u64(decode_row(engine, layout, &e.value)?.get(c).cloned()),
            None => 0,
        });
    }
    let ix = indexes.iter().find(|ix| {
        ix.def
            .columns
            .first()
            .is_some_and(|f| f.column == c && !f.descending && f.prefix.is_none())
    });
    match ix {
        Some(ix) => Ok(match last(&ix.tree)? {
            Some(e) => as_u64(ix.layout.key_layout().decode_part_at(&e.key, 0)?),
            None => 0,
        }),
        None => Err(RowError::Schema(format!("AUTO_INCREMENT column {c} starts no index")).into()),
    }
}

fn open_state(
    engine: &Engine,
    def: TableDef,
    prev: Option<&TableState>,
) -> Result<Arc<TableState>> {
    let layout = def.layout()?;
    let page_size = engine.page_size();
    let off_page =
        blob::can_store_off_page(&layout, &RowLimits::for_page(page_size), page_size.bytes());
    let clustered = BTree::open(engine, def.space, def.root)?;
    let mut indexes = Vec::new();
    for ix in &def.indexes {
        indexes.push(Index {
            layout: def.index_layout(&layout, ix)?,
            tree: BTree::open(engine, def.space, ix.root)?,
            def: ix.clone(),
        });
    }
    let (dml, autoinc, chains, row_id, gaps, gap_locked) = match prev {
        Some(p) => (
            p.dml.clone(),
            p.autoinc.clone(),
            p.chains.clone(),
            p.row_id.clone(),
            p.gaps.clone(),
            p.gap_locked.clone(),
        ),
        None => {
            // AUTO_INCREMENT starts past the largest value (docs/catalog.md): recomputed from
            // durable rows, so it is crash-safe without being logged.
            let next = match def.auto_increment {
                Some(c) => largest_auto_increment(engine, &def, &layout, &clustered, &indexes, c)?
                    .saturating_add(1),
                None => 1,
            };
            let first_row_id = rowid::first_row_id(engine, &clustered, &layout)?;
            (
                Arc::new(RwLock::new(())),
                Arc::new(AtomicU64::new(next)),
                Arc::new(RwLock::new(())),
                Arc::new(AtomicU64::new(first_row_id)),
                Arc::new(RwLock::new(())),
                Arc::new(AtomicU64::new(0)),
            )
        }
    };
    Ok(Arc::new(TableState {
        full_name: Arc::from(format!("{}.{}", def.db, def.name)),
        def,
        layout,
        clustered,
        indexes,
        dml,
        autoinc,
        chains,
        off_page,
        row_id,
        gaps,
        gap_locked,
        online: arc_swap::ArcSwapOption::empty(),
        stats: statistics::Cache::default(),
    }))
}

/// A consistent read through `ix` with `view`: refused if the index was built after the
/// view was made ([`IndexDef::usable_from`], InnoDB's `row_merge_is_index_usable`).
fn check_index_visible(ix: &Index, view: Option<&ViewHandle>) -> Result<()> {
    match view {
        Some(v) if !index_visible_to(&ix.def, v) => Err(DbError::TableDefinitionChanged),
        _ => Ok(()),
    }
}

/// A consistent read of table `t` with `view`: refused if the table was rebuilt (ALTER
/// TABLE) after the view was made: its rows carry no history from before (alter.rs,
/// invariant 3).
fn check_rebuild_visible(t: &TableState, view: Option<&ViewHandle>) -> Result<()> {
    match view {
        Some(v) if t.def.rebuilt_at != crate::row::TrxId(0) && !v.sees(t.def.rebuilt_at) => {
            Err(DbError::TableDefinitionChanged)
        }
        _ => Ok(()),
    }
}

/// Whether a read view may read through an index: it sees the id the build reserved.
pub fn index_visible_to(ix: &IndexDef, view: &crate::trx::ReadView) -> bool {
    ix.usable_from == crate::row::TrxId(0) || view.sees(ix.usable_from)
}

/// The values of a clustered record, off-page ones included; the caller keeps the chains
/// alive (docs/blob.md, "Readers and freeing").
fn decode_row(engine: &Engine, layout: &RowLayout, rec: &[u8]) -> Result<Vec<Value>> {
    blob::decode_row(engine, layout, rec)
}

impl Db {
    /// Opens (or creates) the data directory `dir` on the real file system.
    pub fn open(dir: &Path, config: Config) -> Result<Db> {
        Db::open_with(Arc::new(quire_io::os::OsVfs::new()), dir, config)
    }

    /// Opens `dir` through `vfs` (the simulator in tests). Runs recovery, opens or creates
    /// the catalog, and completes any DDL a crash interrupted (docs/catalog.md).
    pub fn open_with(vfs: Arc<dyn Vfs>, dir: &Path, config: Config) -> Result<Db> {
        // With repair, open_inner always creates the catalog.
        Db::open_inner(vfs, dir, config, true)?
            .0
            .ok_or_else(|| CatalogError::Corrupt("the catalog could not be opened".into()).into())
    }

    /// Opens `dir` for `quire check`: runs recovery, but instead of completing interrupted
    /// DDL it reports what disagrees between the catalog and the files (orphan spaces,
    /// unfinished renames, missing spaces). Then run [`Db::check`]. `None`: the directory
    /// has no catalog (only raw spaces, made through [`Engine`] directly, as the benchmarks
    /// do), so there are no tables to check; nothing is created.
    pub fn open_for_check(
        vfs: Arc<dyn Vfs>,
        dir: &Path,
        config: Config,
    ) -> Result<(Option<Db>, Vec<String>)> {
        Db::open_inner(vfs, dir, config, false)
    }

    fn open_inner(
        vfs: Arc<dyn Vfs>,
        dir: &Path,
        config: Config,
        repair: bool,
    ) -> Result<(Option<Db>, Vec<String>)> {
        // Every index page of a `Db` is a B-tree node: its structure is checked as it is
        // read from disk, so a damaged one is an error naming it, never a panic.
        let engine =
            Engine::open_checked(vfs, dir, config, Some(crate::btree::node::structure_error))?;
        let mut problems = Vec::new();
        let root_exists = engine.page_is_used(PageId::new(SpaceId::SYSTEM, CATALOG_ROOT))?;
        if !root_exists && !repair {
            engine.shutdown()?;
            return Ok((None, problems));
        }
        let (catalog, lsn) = Catalog::open(&engine, root_exists)?;
        if lsn != Lsn::ZERO {
            engine.commit_wait(lsn);
        }
        let mut contents = catalog.load(&engine)?;
        // Reconcile files with the catalog: orphans first (their names may be the target of
        // an interrupted rename), then finish renames.
        let spaces = engine.space_names();
        let owned: BTreeSet<SpaceId> = contents.tables.iter().map(|t| t.space).collect();
        for (name, id) in &spaces {
            if *id != SpaceId::SYSTEM && !owned.contains(id) {
                if is_temp_space(name) {
                    // A session's temporary table: no record ever names one, and a
                    // restart ends every session (`temp.rs`).
                    if repair {
                        tracing::info!(space = %name, "removing a temporary table's space");
                        engine.delete_space(name)?;
                    }
                    continue;
                }
                if repair {
                    tracing::warn!(space = %name, "removing a space no table owns (interrupted CREATE or DROP TABLE)");
                    engine.delete_space(name)?;
                } else {
                    problems.push(format!(
                        "{name}.qsp: space {id} belongs to no table in the catalog"
                    ));
                }
            }
        }
        let mut missing = BTreeSet::new();
        for t in &contents.tables {
            match spaces.iter().find(|(_, id)| *id == t.space) {
                None if repair => {
                    return Err(CatalogError::Corrupt(format!(
                        "table {}.{} names space {} ({}), which does not exist",
                        t.db, t.name, t.space, t.space_name
                    ))
                    .into())
                }
                None => {
                    problems.push(format!(
                        "catalog: table {}.{} names space {} ({}.qsp), which does not exist",
                        t.db, t.name, t.space, t.space_name
                    ));
                    missing.insert(t.id);
                }
                Some((name, _)) if *name != t.space_name => {
                    if repair {
                        tracing::warn!(from = %name, to = %t.space_name, "completing an interrupted RENAME TABLE");
                        engine.rename_space(name, &t.space_name)?;
                    } else {
                        problems.push(format!(
                            "{name}.qsp: table {}.{} expects it to be named {}.qsp \
                             (an unfinished RENAME TABLE; opening the directory completes it)",
                            t.db, t.name, t.space_name
                        ));
                    }
                }
                Some(_) => {}
            }
        }
        contents.tables.retain(|t| !missing.contains(&t.id));
        let views = std::mem::take(&mut contents.views);
        let fks = std::mem::take(&mut contents.foreign_keys);
        let mut state = State {
            databases: contents.databases.into_iter().collect(),
            db_collations: contents.database_collations.into_iter().collect(),
            next_table_id: 1,
            ..State::default()
        };
        for v in views {
            state.views.insert((v.db.clone(), v.name.clone()), v);
        }
        let table_ids: BTreeSet<u64> = contents.tables.iter().map(|t| t.id).collect();
        for f in fks {
            if table_ids.contains(&f.child) || missing.contains(&f.child) {
                state.fks.insert(f);
            } else if repair {
                // Of a table whose CREATE or DROP a crash interrupted (`foreign.rs`).
                tracing::warn!(constraint = %f.name, "removing a foreign key of no table");
                let lsn = catalog.delete_foreign_key(&engine, f.child, &f.name)?;
                if lsn != Lsn::ZERO {
                    engine.commit_wait(lsn);
                }
            } else {
                problems.push(format!(
                    "catalog: foreign key `{}` belongs to table id {}, which does not exist",
                    f.name, f.child
                ));
            }
        }
        for t in contents.tables {
            state.next_table_id = state.next_table_id.max(t.id + 1);
            state.names.insert((t.db.clone(), t.name.clone()), t.id);
            let id = t.id;
            state.tables.insert(id, open_state(&engine, t, None)?);
        }
        // Table ids come from the persisted mark, never from the catalog alone: a dropped
        // table's id may still be named by its history (docs/catalog.md, "Table ids"). A
        // data directory from before the mark sets it from the catalog, once (not from
        // `quire check`, which changes nothing).
        let mark = engine.table_id_mark()?;
        if repair && mark < state.next_table_id {
            engine.raise_table_id_mark(state.next_table_id)?;
        }
        state.next_table_id = state.next_table_id.max(mark);
        let has_fks = !state.fks.is_empty();
        let limits = RowLimits::for_page(engine.page_size());
        // Undo after the catalog: TRX_SYS and the rollback segments live in the system
        // space next to it (docs/undo.md).
        let (undo, recovered) = UndoSys::open(&engine)?;
        // A rebuild's mark is an id `reserve_id` handed out and only the catalog records
        // (docs/catalog.md, "ALTER TABLE"): numbering starts above it too, or after a
        // restart before any id was assigned every read view would miss the mark and each
        // consistent read of the table would be refused (1412).
        let rebuilt_max = state
            .tables
            .values()
            .map(|t| t.def.rebuilt_at)
            .max()
            .unwrap_or(crate::row::TrxId(0));
        let trx = TrxSys::new(recovered.max_trx_id.max(rebuilt_max), recovered.max_trx_no);
        for a in &recovered.active {
            trx.register_recovered(a.undo.trx());
        }
        let config = engine.config().clone();
        let log_direct = engine.log().direct_io();
        let purge_running = repair && config.purge_threads > 0;
        let inner = Arc::new(DbInner {
            engine,
            catalog,
            limits,
            state: RwLock::new(state),
            ddl: Mutex::new(()),
            live: settings::Live::new(&config, purge_running),
            settings: Mutex::new(settings::as_opened(&config, log_direct)),
            undo,
            trx,
            locks: LockManager::new(),
            counters: Counters::default(),
            purge_one: Mutex::new(purge::Queue::new()),
            any_fks: std::sync::atomic::AtomicBool::new(has_fks),
            stats_epoch: AtomicU64::new(0),
        });
        // Transactions active at the crash: their rows are locked again at once, then
        // rolled back in the background (synchronously for `quire check`, which must see
        // the recovered state).
        let pending = recovery::relock(&inner, recovered.active)?;
        let rollback = if pending.is_empty() {
            None
        } else if repair {
            let bg = inner.clone();
            Some(
                std::thread::Builder::new()
                    .name("quire-rollback".into())
                    .spawn(move || recovery::roll_back(&bg, pending))
                    .map_err(|e| DbError::Thread(e.to_string()))?,
            )
        } else {
            recovery::roll_back(&inner, pending);
            None
        };
        let purge = purge_running.then(|| purge::Purger::start(&inner));
        Ok((
            Some(Db {
                inner,
                rollback: Mutex::new(rollback),
                purge,
            }),
            problems,
        ))
    }

    /// Waits until the transactions a crash interrupted are rolled back (they are, in the
    /// background, from open on; their rows stay locked until then).
    pub fn wait_for_recovery(&self) {
        if let Some(h) = self.rollback.lock().take() {
            if h.join().is_err() {
                tracing::error!("the rollback of recovered transactions panicked");
            }
        }
    }

    /// Stops the background work: waits for recovered transactions' rollback, stops
    /// purge (after purging all history if `innodb_fast_shutdown=0`).
    fn stop_background(&mut self, slow: bool) -> Result<()> {
        self.wait_for_recovery();
        if let Some(p) = self.purge.take() {
            p.stop();
        }
        if slow {
            self.inner.purge_all(true)?;
        }
        Ok(())
    }

    /// A clean shutdown. With `innodb_fast_shutdown=0` it first purges all history,
    /// reporting progress.
    pub fn shutdown(mut self) -> Result<()> {
        let slow = self.inner.live.fast_shutdown.load(Ordering::Relaxed) == 0;
        self.stop_background(slow)?;
        let inner = Arc::try_unwrap(self.inner).map_err(|_| DbError::Busy)?;
        Ok(inner.engine.shutdown()?)
    }

    /// Stops as a crash would (tests, kill-and-resume benchmarks).
    pub fn kill(mut self) {
        if let Some(p) = self.purge.take() {
            p.stop();
        }
        self.wait_for_recovery();
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner.engine.kill(),
            Err(_) => tracing::error!("kill: the database is still in use"),
        }
    }

    /// Frees every page `check` reports as leaked (wasted space a crash can leave: BLOB
    /// tails written before their record, old versions' chains whose free a crash cut
    /// short, trees of an interrupted CREATE INDEX). Tables with any other problem are left
    /// alone and named. Returns the pages freed and those messages. Only for a database no
    /// other session uses (`quire check --reclaim-leaks` runs it offline): it refuses while
    /// a transaction is active.
    pub fn reclaim_leaked(&self) -> Result<(u64, Vec<String>)> {
        self.wait_for_recovery();
        if self.inner.trx.active_count() > 0 {
            return Err(DbError::Busy);
        }
        // No purge round meanwhile: a chain purge is about to free (its log just left the
        // history) would look leaked, and be freed twice.
        let _purge = self.inner.purge_one.lock();
        let tables: Vec<Arc<TableState>> =
            self.inner.state.read().tables.values().cloned().collect();
        check::reclaim(&self.inner, &tables)
    }

    /// [`DbInner::check`], once the rollback of transactions a crash interrupted is done
    /// (their undo pages and rows are changing until then).
    pub fn check(&self) -> Result<Vec<String>> {
        self.wait_for_recovery();
        self.inner.check()
    }

    /// Purges all history no snapshot needs, now (tests, and the slow shutdown).
    /// Returns the undo logs purged.
    pub fn purge_now(&self) -> Result<u64> {
        self.inner.purge_all(false)
    }
}

impl DbInner {
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Creates the clustered and every secondary B-tree of `def` in its space and records
    /// their roots in `def` (CREATE and TRUNCATE TABLE).
    fn create_trees(&self, def: &mut TableDef) -> Result<()> {
        def.root = BTree::create(&self.engine, def.space, def.clustered_index_id())?
            .0
            .root();
        for i in 0..def.indexes.len() {
            let ix_id = def.index_id(&def.indexes[i]);
            def.indexes[i].root = BTree::create(&self.engine, def.space, ix_id)?.0.root();
        }
        Ok(())
    }

    fn durable(&self, lsn: Lsn) {
        if lsn != Lsn::ZERO {
            self.engine.commit_wait(lsn);
        }
    }

    pub fn databases(&self) -> Vec<String> {
        self.state.read().databases.iter().cloned().collect()
    }

    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        let st = self.state.read();
        if !st.databases.contains(db) {
            return Err(DbError::NoSuchDatabase(db.into()));
        }
        Ok(st
            .names
            .keys()
            .filter(|(d, _)| d == db)
            .map(|(_, t)| t.clone())
            .collect())
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        self.create_database_with_collation(name, None)
    }

    /// CREATE DATABASE with its own default collation (`None`: the server's), which the
    /// catalog keeps (docs/catalog.md, SYS_DATABASES).
    pub fn create_database_with_collation(
        &self,
        name: &str,
        collation: Option<crate::row::Collation>,
    ) -> Result<()> {
        let _ddl = self.ddl.lock();
        catalog::check_name(name)?;
        if self.state.read().databases.contains(name) {
            return Err(DbError::DatabaseExists(name.into()));
        }
        let lsn = self
            .catalog
            .insert_database(&self.engine, name, collation)?;
        self.durable(lsn);
        let mut st = self.state.write();
        st.databases.insert(name.into());
        if let Some(c) = collation {
            st.db_collations.insert(name.into(), c);
        }
        Ok(())
    }

    /// ALTER DATABASE … CHARACTER SET / COLLATE: the database's default for tables created
    /// later (`None`: the server's); its tables keep theirs. One durable record update.
    pub fn alter_database_collation(
        &self,
        name: &str,
        collation: Option<crate::row::Collation>,
    ) -> Result<()> {
        let _ddl = self.ddl.lock();
        if !self.state.read().databases.contains(name) {
            return Err(DbError::NoSuchDatabase(name.into()));
        }
        let lsn = self
            .catalog
            .update_database(&self.engine, name, collation)?;
        self.durable(lsn);
        let mut st = self.state.write();
        match collation {
            Some(c) => st.db_collations.insert(name.into(), c),
            None => st.db_collations.remove(name),
        };
        Ok(())
    }

    /// A database's own default collation; `None`: the server's (or no such database).
    pub fn database_collation(&self, name: &str) -> Option<crate::row::Collation> {
        self.state.read().db_collations.get(name).copied()
    }

    /// Drops a database and its tables: atomic per table, not as a whole (docs/catalog.md).
    pub fn drop_database(&self, name: &str) -> Result<()> {
        for t in self.tables(name)? {
            self.drop_table(name, &t)?;
        }
        for v in self.views(name)? {
            self.drop_view(name, &v.name)?;
        }
        let _ddl = self.ddl.lock();
        let lsn = self.catalog.delete_database(&self.engine, name)?;
        self.durable(lsn);
        let mut st = self.state.write();
        st.databases.remove(name);
        st.db_collations.remove(name);
        Ok(())
    }

    fn lookup(&self, db: &str, table: &str) -> Result<Arc<TableState>> {
        let st = self.state.read();
        if !st.databases.contains(db) && db != TEMP_DB {
            return Err(DbError::NoSuchDatabase(db.into()));
        }
        st.names
            .get(&(db.to_string(), table.to_string()))
            .and_then(|id| st.tables.get(id))
            .cloned()
            .ok_or_else(|| DbError::NoSuchTable(format!("{db}.{table}")))
    }

    /// A handle on an existing table.
    pub fn table(&self, db: &str, name: &str) -> Result<Table<'_>> {
        let t = self.lookup(db, name)?;
        Ok(Table {
            db: self,
            id: t.def.id,
            name: t.full_name.clone(),
            read_columns: None,
        })
    }

    /// CREATE TABLE: the space first (durable), then its trees, then the catalog record
    /// (durable). A crash before the record leaves an orphan space that open deletes.
    pub fn create_table(&self, db: &str, name: &str, spec: TableSpec) -> Result<Table<'_>> {
        self.create_table_with_foreign_keys(db, name, spec, Vec::new())
    }

    /// CREATE TABLE with foreign keys (their `child` is set here): the constraints'
    /// records are written before the table's, which commits the whole (`foreign.rs`).
    /// The caller has validated them (columns, types, indexes: the SQL layer gives
    /// MariaDB's errors).
    pub fn create_table_with_foreign_keys(
        &self,
        db: &str,
        name: &str,
        spec: TableSpec,
        mut fks: Vec<ForeignKeyDef>,
    ) -> Result<Table<'_>> {
        let _ddl = self.ddl.lock();
        catalog::check_table_names(db, name)?;
        {
            let st = self.state.read();
            if !st.databases.contains(db) {
                return Err(DbError::NoSuchDatabase(db.into()));
            }
            let key = (db.to_string(), name.to_string());
            if st.names.contains_key(&key) || st.views.contains_key(&key) {
                return Err(DbError::TableExists(format!("{db}.{name}")));
            }
        }
        let id = self.state.read().next_table_id;
        let mut def = TableDef {
            id,
            db: db.into(),
            name: name.into(),
            space: SpaceId::SYSTEM,
            space_name: catalog::space_name(db, name),
            root: CATALOG_ROOT,
            columns: spec.columns,
            primary_key: spec.primary_key,
            auto_increment: spec.auto_increment,
            next_index_no: 1,
            indexes: Vec::new(),
            rebuilt_at: crate::row::TrxId(0),
            dropped: Vec::new(),
            slot_order: Vec::new(),
            comment: spec.comment,
            checks: spec.checks,
            collation: spec.collation,
        };
        for (i, ix) in spec.indexes.into_iter().enumerate() {
            def.indexes.push(IndexDef {
                name: ix.name,
                unique: ix.unique,
                index_no: i as u16 + 1,
                root: CATALOG_ROOT,
                columns: ix.columns,
                // Made with its table: no view can see a row of it from before.
                usable_from: crate::row::TrxId(0),
                comment: ix.comment,
            });
            def.next_index_no = i as u16 + 2;
        }
        // Validate before touching any file.
        def.validate()?;
        self.engine.raise_table_id_mark(id + 1)?;
        self.state.write().next_table_id = id + 1;
        for f in &mut fks {
            f.child = id;
            f.validate()?;
        }
        def.space = self.engine.create_space(&def.space_name)?;
        let built = (|| -> Result<()> {
            self.create_trees(&mut def)?;
            self.put_fks_of_new_table(&fks)?;
            let lsn = self.catalog.insert_table(&self.engine, &def)?;
            self.durable(lsn);
            Ok(())
        })();
        if let Err(e) = built {
            // Nothing names the space: remove it now (open would, after a crash), and
            // the constraints' records, if written.
            for f in &fks {
                let _ = self.catalog.delete_foreign_key(&self.engine, id, &f.name);
            }
            let _ = self.engine.delete_space(&def.space_name);
            return Err(e);
        }
        let state = open_state(&self.engine, def, None)?;
        let mut st = self.state.write();
        st.names.insert((db.into(), name.into()), id);
        st.tables.insert(id, state);
        for f in fks {
            self.any_fks.store(true, Ordering::Release);
            st.fks.insert(f);
        }
        drop(st);
        self.table(db, name)
    }

    /// DROP TABLE: the catalog record goes first (durable), then the space.
    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let _x = t.dml.write();
        let lsn = self.catalog.delete_table(&self.engine, t.def.id)?;
        self.durable(lsn);
        {
            let mut st = self.state.write();
            st.names.remove(&(db.to_string(), name.to_string()));
            st.tables.remove(&t.def.id);
        }
        self.drop_fks_of(t.def.id)?;
        self.engine.delete_space(&t.def.space_name)?;
        Ok(())
    }

    /// RENAME TABLE (within or across databases): the record first (durable), then the
    /// space; open completes a rename a crash interrupted.
    pub fn rename_table(&self, db: &str, name: &str, to_db: &str, to: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        catalog::check_table_names(to_db, to)?;
        let t = self.lookup(db, name)?;
        {
            let st = self.state.read();
            if !st.databases.contains(to_db) {
                return Err(DbError::NoSuchDatabase(to_db.into()));
            }
            let key = (to_db.to_string(), to.to_string());
            if st.names.contains_key(&key) || st.views.contains_key(&key) {
                return Err(DbError::TableExists(format!("{to_db}.{to}")));
            }
        }
        let _x = t.dml.write();
        let mut def = t.def.clone();
        def.db = to_db.into();
        def.name = to.into();
        def.space_name = catalog::space_name(to_db, to);
        let lsn = self.catalog.update_table(&self.engine, &def)?;
        self.durable(lsn);
        self.engine
            .rename_space(&t.def.space_name, &def.space_name)?;
        let state = open_state(&self.engine, def, Some(&t))?;
        {
            let mut st = self.state.write();
            st.names.remove(&(db.to_string(), name.to_string()));
            st.names.insert((to_db.into(), to.into()), t.def.id);
            st.tables.insert(t.def.id, state);
        }
        self.rename_parent_refs(db, name, to_db, to)?;
        Ok(())
    }

    /// TRUNCATE TABLE: a new, empty space under a temporary name with fresh trees; then the
    /// record points at it (durable); then the old space is deleted and the new one takes
    /// its name. Open finishes a crash anywhere: an unowned space is deleted, a misnamed one
    /// renamed (docs/catalog.md). AUTO_INCREMENT restarts at 1.
    pub fn truncate_table(&self, db: &str, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let _x = t.dml.write();
        let mut def = t.def.clone();
        // `~` never occurs in a name, so the temporary name collides with no table.
        let tmp = format!("{}~truncate", def.space_name);
        def.space = self.engine.create_space(&tmp)?;
        let built = (|| -> Result<()> {
            self.create_trees(&mut def)?;
            let lsn = self.catalog.update_table(&self.engine, &def)?;
            self.durable(lsn);
            Ok(())
        })();
        if let Err(e) = built {
            let _ = self.engine.delete_space(&tmp);
            return Err(e);
        }
        self.engine.delete_space(&t.def.space_name)?;
        self.engine.rename_space(&tmp, &def.space_name)?;
        let state = open_state(&self.engine, def, Some(&t))?;
        state.autoinc.store(1, Ordering::Relaxed);
        self.state.write().tables.insert(t.def.id, state);
        Ok(())
    }

    /// CREATE INDEX: builds the tree from the rows, then lists it in the catalog record
    /// (durable). A crash before that leaks the tree's pages inside the table's space.
    pub fn create_index(&self, db: &str, table: &str, spec: IndexSpec) -> Result<()> {
        let _ddl = self.ddl.lock();
        catalog::check_name(&spec.name)?;
        let t = self.lookup(db, table)?;
        if t.def.indexes.iter().any(|i| i.name == spec.name) {
            return Err(DbError::IndexExists {
                table: format!("{db}.{table}"),
                index: spec.name,
            });
        }
        let _x = t.dml.write();
        let mut def = t.def.clone();
        // With the table's DML excluded, the newest versions the build reads are all a view
        // made from now on can see (the SQL layer's metadata lock: no transaction that
        // changed the table is still open). A view made before may see older versions,
        // which get no entries: it must not read through the index (1412).
        let usable_from = self.trx.reserve_id();
        let ix = IndexDef {
            name: spec.name.clone(),
            unique: spec.unique,
            index_no: def.next_index_no,
            root: CATALOG_ROOT,
            columns: spec.columns,
            usable_from,
            comment: spec.comment.clone(),
        };
        def.next_index_no += 1;
        let layout = def.index_layout(&t.layout, &ix)?;
        let (tree, _) = BTree::create(&self.engine, def.space, def.index_id(&ix))?;
        let index = Index {
            def: ix.clone(),
            layout,
            tree,
        };
        let built = (|| -> Result<()> {
            let mut n = 0u64;
            for e in t.clustered.scan(
                &self.engine,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            ) {
                let e = e?;
                let row = decode_row(&self.engine, &t.layout, &e.value)?;
                let row_id = rowid::row_id_of_key(&t.layout, &e.key)?;
                // The entry carries the record's DB_TRX_ID and delete mark: the newest
                // version decides (older versions get no entries: docs/transactions.md).
                let trx = crate::row::record::trx_id(&e.value)?;
                self.index_insert(&index, &def.columns, &row, row_id, trx, e.delete_marked)?;
                n += 1;
                if n.is_multiple_of(100_000) {
                    tracing::info!(table = %format!("{db}.{table}"), index = %index.def.name, rows = n, "building index");
                }
            }
            Ok(())
        })();
        if let Err(e) = built {
            let _ = tree.drop_tree(&self.engine);
            return Err(e);
        }
        let mut ix = ix;
        ix.root = tree.root();
        def.indexes.push(ix);
        let lsn = self.catalog.update_table(&self.engine, &def)?;
        self.durable(lsn);
        let state = open_state(&self.engine, def, Some(&t))?;
        self.state.write().tables.insert(t.def.id, state);
        Ok(())
    }

    /// DROP INDEX: the catalog record first (durable), then the tree's pages.
    pub fn drop_index(&self, db: &str, table: &str, index: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, table)?;
        let Some(pos) = t.indexes.iter().position(|i| i.def.name == index) else {
            return Err(DbError::NoSuchIndex {
                table: format!("{db}.{table}"),
                index: index.into(),
            });
        };
        let _x = t.dml.write();
        let mut def = t.def.clone();
        def.indexes.remove(pos);
        let lsn = self.catalog.update_table(&self.engine, &def)?;
        self.durable(lsn);
        let state = open_state(&self.engine, def, Some(&t))?;
        self.state.write().tables.insert(t.def.id, state);
        let lsn = t.indexes[pos].tree.drop_tree(&self.engine)?;
        self.durable(lsn);
        Ok(())
    }

    /// Inserts the entry of `row` (DB_ROW_ID `row_id` without a primary key) into a
    /// secondary index being built, checking uniqueness among live rows.
    fn index_insert(
        &self,
        ix: &Index,
        columns: &[Column],
        row: &[Value],
        row_id: Option<RowId>,
        trx: crate::row::TrxId,
        marked: bool,
    ) -> Result<Lsn> {
        let mut rec = Vec::new();
        ix.layout.encode(row, row_id, trx, &self.limits, &mut rec)?;
        let key = secondary::key(&rec)?;
        let val = &rec[3 + key.len()..];
        if ix.def.unique && !marked {
            self.check_unique_built(ix, columns, row, key)?;
        }
        let lsn = match ix.tree.insert(&self.engine, key, val) {
            Err(BTreeError::DuplicateKey) => return Err(ix.duplicate(columns, row)),
            r => r?,
        };
        if marked {
            return Ok(ix.tree.replace(&self.engine, key, val, true)?);
        }
        Ok(lsn)
    }

    /// While building a unique index: another live entry with the same secondary part is
    /// a duplicate. NULLs never collide (SQL).
    fn check_unique_built(
        &self,
        ix: &Index,
        columns: &[Column],
        row: &[Value],
        key: &[u8],
    ) -> Result<()> {
        if ix.null_in(row) {
            return Ok(());
        }
        let n = ix.layout.secondary_part_len(key)?;
        let prefix = &key[..n];
        for e in ix.tree.scan(
            &self.engine,
            Bound::Included(prefix),
            Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e?;
            if !e.key.starts_with(prefix) {
                break;
            }
            if e.key != key && !e.delete_marked {
                return Err(ix.duplicate(columns, row));
            }
        }
        Ok(())
    }

    /// The current state of the table with id `id`, if it exists.
    fn table_by_id(&self, id: u64) -> Option<Arc<TableState>> {
        self.state.read().tables.get(&id).cloned()
    }

    /// Starts a transaction at `iso`. Its calls take the table they act on:
    /// `tx.insert(&table, row)`; it ends with [`Transaction::commit`] or
    /// [`Transaction::rollback`], and rolls back if dropped.
    pub fn begin(&self, iso: Isolation) -> Result<Transaction<'_>> {
        self.begin_trx(iso)
    }

    /// A snapshot taken now, with no transaction id and nothing written: a transaction
    /// that reads before it writes holds one ([`Table::get_in`], [`Table::scan_in_snapshot`],
    /// [`Table::index_scan_in_snapshot`]) and becomes a [`Transaction`] at its first write
    /// with [`Db::begin_with_snapshot`].
    pub fn snapshot(&self) -> Snapshot {
        Arc::new(self.trx.view(crate::row::TrxId(0)))
    }

    /// Starts a transaction at `iso` that keeps `snapshot` as its consistent-read view
    /// (REPEATABLE READ and SERIALIZABLE; READ COMMITTED takes one per statement anyway),
    /// seeing its own changes too.
    pub fn begin_with_snapshot(
        &self,
        iso: Isolation,
        snapshot: Snapshot,
    ) -> Result<Transaction<'_>> {
        let mut tx = self.begin_trx(iso)?;
        tx.adopt_view(&snapshot);
        Ok(tx)
    }

    /// Verifies every table: its B-trees, its rows and their off-page chains, that each
    /// secondary index holds exactly the entries its rows imply, and that every page of its
    /// space is reached exactly once (docs/blob.md, "Crash analysis"). Returns the problems
    /// (empty when clean). Lines of the form `<table>: leaked: ...` are pages in use that
    /// nothing references: wasted space a crash may leave, not damage.
    pub fn check(&self) -> Result<Vec<String>> {
        // No purge round meanwhile: between removing a log and freeing its chains, or in
        // the middle of a removal, purge leaves pages check would count wrongly.
        let _purge = self.purge_one.lock();
        let tables: Vec<Arc<TableState>> = self.state.read().tables.values().cloned().collect();
        let mut problems = Vec::new();
        for t in tables {
            problems.extend(check::check_table(self, &t)?);
        }
        problems.extend(check::check_system(self)?);
        problems.extend(foreign::check_foreign_keys(self)?);
        Ok(problems)
    }
}

/// A table handle. It names the table by id and picks up the current definition on every
/// call, so DDL (a new index) is seen by handles taken before it. Its row calls are
/// autocommit: each runs as one READ COMMITTED transaction; [`DbInner::begin`] gives
/// transactions of several statements.
pub struct Table<'d> {
    db: &'d DbInner,
    id: u64,
    name: Arc<str>,
    /// The columns the reads of this handle decode (`Table::reading_only`); the others
    /// come back NULL. `None`: every column.
    read_columns: Option<Arc<[bool]>>,
}

impl<'d> Table<'d> {
    /// A handle on the same table whose consistent and locking reads of the clustered
    /// index (get, scan, and their locking forms) decode only the columns marked in
    /// `cols` (table order; a column past its end is read) and give NULL for the others:
    /// a query that reads three of ten columns skips the decoding, the copies and the
    /// off-page reads of the other seven.
    ///
    /// Invariant: the rows read through such a handle go to a query's expressions only,
    /// never back into a write (an UPDATE of a partial row would store its NULLs). The
    /// writes and the reads that feed them (handles, secondary-index reads, foreign-key
    /// checks) decode every column whatever the handle says.
    pub fn reading_only(&self, cols: Arc<[bool]>) -> Table<'d> {
        Table {
            db: self.db,
            id: self.id,
            name: self.name.clone(),
            read_columns: Some(cols),
        }
    }

    pub(super) fn read_cols(&self) -> Option<&[bool]> {
        self.read_columns.as_deref()
    }

    /// The table's own name, without its database (names hold no '.': catalog rule).
    pub fn table_name(&self) -> &str {
        self.name.split_once('.').map_or(&*self.name, |(_, t)| t)
    }

    fn state(&self) -> Result<Arc<TableState>> {
        self.db
            .state
            .read()
            .tables
            .get(&self.id)
            .cloned()
            .ok_or_else(|| DbError::NoSuchTable(self.name.to_string()))
    }

    /// Runs `f` on the current definition with the table's DML lock shared (no DDL runs
    /// meanwhile; a DDL that ran while we waited replaced the first state we saw).
    fn with_state<R>(&self, f: impl FnOnce(&Arc<TableState>) -> Result<R>) -> Result<R> {
        let held = self.state()?;
        let _s = held.dml.read();
        let t = self.state()?;
        f(&t)
    }

    fn index_of<'t>(&self, t: &'t TableState, index: &str) -> Result<&'t Index> {
        t.indexes
            .iter()
            .find(|i| i.def.name == index)
            .ok_or_else(|| DbError::NoSuchIndex {
                table: self.name.to_string(),
                index: index.into(),
            })
    }

    /// The table's catalog definition (columns, keys, indexes, space and root pages).
    /// The value the next AUTO_INCREMENT insert takes (`None` without such a column).
    pub fn next_auto_increment(&self) -> Result<Option<u64>> {
        self.with_state(|t| {
            Ok(t.def
                .auto_increment
                .map(|_| t.autoinc.load(Ordering::Relaxed)))
        })
    }

    /// Reserves `n` consecutive AUTO_INCREMENT values for one statement and returns the
    /// first (`None` without such a column): InnoDB's `innodb_autoinc_lock_mode=1` for an
    /// INSERT whose row count is known, where the counter moves past all `n` even when
    /// some rows end up not inserted. The caller gives the values out itself, as explicit
    /// ones.
    pub fn reserve_auto_increment(&self, n: u64) -> Result<Option<u64>> {
        self.with_state(|t| {
            Ok(t.def
                .auto_increment
                .map(|_| t.autoinc.fetch_add(n, Ordering::Relaxed)))
        })
    }

    pub fn definition(&self) -> Result<TableDef> {
        Ok(self.state()?.def.clone())
    }

    pub fn columns(&self) -> Result<Vec<Column>> {
        Ok(self.state()?.def.columns.clone())
    }

    fn pk_key(&self, t: &TableState, pk: &[Value]) -> Result<Vec<u8>> {
        if t.layout.has_row_id() {
            return Err(DbError::NoPrimaryKey(self.name.to_string()));
        }
        if pk.len() != t.def.primary_key.len() {
            return Err(RowError::WrongColumnCount {
                expected: t.def.primary_key.len(),
                found: pk.len(),
            }
            .into());
        }
        let mut k = Vec::new();
        t.layout.key_layout().encode(pk, &self.db.limits, &mut k)?;
        Ok(k)
    }

    /// Fills AUTO_INCREMENT and checks the row; returns it in canonical form.
    fn prepare(&self, t: &TableState, mut row: Vec<Value>) -> Result<Vec<Value>> {
        if let Some(c) = t.def.auto_increment {
            if row.len() == t.def.columns.len() {
                let unsigned =
                    matches!(t.def.columns[c].ty, ColumnType::Int { unsigned: true, .. });
                match &row[c] {
                    Value::Null => {
                        let v = t.autoinc.fetch_add(1, Ordering::Relaxed);
                        row[c] = if unsigned {
                            Value::UInt(v)
                        } else {
                            Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
                        };
                    }
                    Value::Int(i) if *i >= 0 => {
                        t.autoinc.fetch_max(*i as u64 + 1, Ordering::Relaxed);
                    }
                    Value::UInt(u) => {
                        t.autoinc.fetch_max(u.saturating_add(1), Ordering::Relaxed);
                    }
                    _ => {}
                }
            }
        }
        t.layout.canonicalize(&mut row)?;
        Ok(row)
    }

    /// Runs `f` as one autocommit transaction (READ COMMITTED).
    fn autocommit<R>(&self, f: impl FnOnce(&mut Transaction<'d>) -> Result<R>) -> Result<R> {
        let mut tx = self.db.begin(Isolation::ReadCommitted)?;
        let r = f(&mut tx)?;
        tx.commit()?;
        Ok(r)
    }

    /// Inserts a row; returns it as stored (AUTO_INCREMENT filled, values canonical).
    pub fn insert(&self, row: Vec<Value>) -> Result<Vec<Value>> {
        self.autocommit(|tx| tx.insert(self, row))
    }

    /// The row with primary key `pk` (values in primary-key order): the newest committed
    /// version.
    pub fn get(&self, pk: &[Value]) -> Result<Option<Vec<Value>>> {
        self.with_state(|t| {
            let key = self.pk_key(t, pk)?;
            self.get_key(t, &key, self.read_cols())
        })
    }

    /// The row with primary key `pk` as `snapshot` sees it (`None`: the newest version, READ
    /// UNCOMMITTED).
    pub fn get_in(&self, pk: &[Value], snapshot: Option<&Snapshot>) -> Result<Option<Vec<Value>>> {
        self.with_state(|t| {
            check_rebuild_visible(t, snapshot.map(|v| &**v))?;
            let key = self.pk_key(t, pk)?;
            let Some(e) = t.clustered.get(&self.db.engine, &key)? else {
                return Ok(None);
            };
            match self
                .db
                .version(t, &key, e.value, e.delete_marked, snapshot.map(|v| &***v))?
            {
                Some(rec) => self.db.decode_columns(t, &rec, self.read_cols()).map(Some),
                None => Ok(None),
            }
        })
    }

    /// [`Table::scan`] as `snapshot` sees it.
    pub fn scan_in_snapshot(
        &self,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        snapshot: Option<Snapshot>,
    ) -> Result<Rows<'d>> {
        self.scan_in(self.db, lower, upper, dir, snapshot)
    }

    /// [`Table::index_scan`] as `snapshot` sees it.
    pub fn index_scan_in_snapshot(
        &self,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        snapshot: Option<Snapshot>,
    ) -> Result<IndexRows<'d>> {
        self.index_scan_in(self.db, index, lower, upper, dir, snapshot)
    }

    /// The row a handle names, if it is still there.
    pub fn get_row(&self, handle: &RowHandle) -> Result<Option<Vec<Value>>> {
        self.with_state(|t| {
            let key = handle.key_in(t)?.to_vec();
            self.get_key(t, &key, None)
        })
    }

    /// A consistent read of one row with a snapshot of its own (no transaction id).
    fn get_key(
        &self,
        t: &TableState,
        key: &[u8],
        cols: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>> {
        let Some(e) = t.clustered.get(&self.db.engine, key)? else {
            return Ok(None);
        };
        // Fast path: the newest version is old enough for any snapshot taken now.
        let trx = crate::row::record::trx_id(&e.value)?;
        let rec = if !self.db.trx.is_active(trx) {
            (!e.delete_marked).then_some(e.value)
        } else {
            let view = self.db.trx.view(crate::row::TrxId(0));
            self.db
                .version(t, key, e.value, e.delete_marked, Some(&view))?
        };
        match rec {
            Some(rec) => self.db.decode_columns(t, &rec, cols).map(Some),
            None => Ok(None),
        }
    }

    /// Rows with primary keys within the bounds (whole keys or key prefixes), in order,
    /// as of one snapshot taken now. Without a primary key the bounds are
    /// `[UInt(DB_ROW_ID)]` and the order is the row ids' (insertion order); the hidden id
    /// is not among the values ([`Rows::with_handles`] gives it).
    pub fn scan(
        &self,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
    ) -> Result<Rows<'d>> {
        let view = Arc::new(self.db.trx.view(crate::row::TrxId(0)));
        self.scan_in(self.db, lower, upper, dir, Some(view))
    }

    fn scan_in<'x>(
        &self,
        db: &'x DbInner,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        view: Option<Arc<ViewHandle>>,
    ) -> Result<Rows<'x>> {
        let t = self.state()?;
        check_rebuild_visible(&t, view.as_deref())?;
        let (lo, hi) = scan::bounds(lower, upper, |v| {
            let mut k = Vec::new();
            t.layout.key_layout().encode(v, &db.limits, &mut k)?;
            Ok(k)
        })?;
        let cursor = t.clustered.scan(&db.engine, as_ref(&lo), as_ref(&hi), dir);
        Ok(Rows::new(cursor, t, db, view, self.read_columns.clone()))
    }

    /// Replaces the row with primary key `pk` by `row`, which may have another primary
    /// key (a collision there is DuplicateKey and changes nothing). Returns whether the
    /// row changed (a row equal to the old one writes nothing).
    pub fn update(&self, pk: &[Value], row: Vec<Value>) -> Result<bool> {
        self.autocommit(|tx| tx.update(self, pk, row))
    }

    /// Replaces the row a handle names by `row` (a hidden row id always stays the same).
    /// Returns whether the row changed.
    pub fn update_row(&self, handle: &RowHandle, row: Vec<Value>) -> Result<bool> {
        self.autocommit(|tx| tx.update_row(self, handle, row))
    }

    /// Deletes the row with primary key `pk`.
    pub fn delete(&self, pk: &[Value]) -> Result<()> {
        self.autocommit(|tx| tx.delete(self, pk))
    }

    /// Deletes the row a handle names.
    pub fn delete_row(&self, handle: &RowHandle) -> Result<()> {
        self.autocommit(|tx| tx.delete_row(self, handle))
    }

    /// Primary keys of the rows whose index `index` columns equal `values` (a prefix of
    /// the index's columns), in index order (`[UInt(DB_ROW_ID)]` without a primary key).
    /// [`Table::index_scan`] returns the rows themselves, for ranges too.
    pub fn lookup_index(&self, index: &str, values: &[Value]) -> Result<Vec<Vec<Value>>> {
        let view = Arc::new(self.db.trx.view(crate::row::TrxId(0)));
        self.lookup_index_in(self.db, index, values, Some(view))
    }

    fn lookup_index_in(
        &self,
        db: &DbInner,
        index: &str,
        values: &[Value],
        view: Option<Arc<ViewHandle>>,
    ) -> Result<Vec<Vec<Value>>> {
        self.with_state(|t| {
            let ix = self.index_of(t, index)?;
            check_index_visible(ix, view.as_deref())?;
            let mut prefix = Vec::new();
            ix.layout.encode_search(values, &db.limits, &mut prefix)?;
            let mut out = Vec::new();
            for e in ix.tree.scan(
                &db.engine,
                Bound::Included(&prefix),
                Bound::Unbounded,
                Direction::Forward,
            ) {
                let e = e?;
                if !e.key.starts_with(&prefix) {
                    break;
                }
                let Some((_, row)) = db.entry_row(t, ix, &e, view.as_deref().map(|v| &**v))? else {
                    continue;
                };
                let n = ix.layout.secondary_part_len(&e.key)?;
                let key = &e.key[n..];
                out.push(match t.layout.has_row_id() {
                    true => match rowid::row_id_of_key(&t.layout, key)? {
                        Some(id) => vec![Value::UInt(id.0)],
                        None => return Err(RowError::Corrupt("bad DB_ROW_ID key").into()),
                    },
                    // From the row: a string's key part holds its sort key, not its value.
                    false => t
                        .layout
                        .primary_key()
                        .iter()
                        .map(|&c| row.get(c).cloned())
                        .collect::<Option<Vec<Value>>>()
                        .ok_or(RowError::Corrupt("row shorter than its primary key"))?,
                });
            }
            Ok(out)
        })
    }

    /// Rows whose index `index` key lies within the bounds, in index order (ties in primary
    /// key or row id order), either direction, as of one snapshot taken now. A bound is a
    /// prefix of the index's columns (or all of them), compared in the index's order
    /// (docs/catalog.md, "Secondary range scans").
    pub fn index_scan(
        &self,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
    ) -> Result<IndexRows<'d>> {
        let view = Arc::new(self.db.trx.view(crate::row::TrxId(0)));
        self.index_scan_in(self.db, index, lower, upper, dir, Some(view))
    }

    fn index_scan_in<'x>(
        &self,
        db: &'x DbInner,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        view: Option<Arc<ViewHandle>>,
    ) -> Result<IndexRows<'x>> {
        let t = self.state()?;
        let pos = t
            .indexes
            .iter()
            .position(|i| i.def.name == index)
            .ok_or_else(|| DbError::NoSuchIndex {
                table: self.name.to_string(),
                index: index.into(),
            })?;
        let ix = &t.indexes[pos];
        check_index_visible(ix, view.as_deref())?;
        let (lo, hi) = scan::bounds(lower, upper, |v| {
            let mut k = Vec::new();
            ix.layout.encode_search(v, &db.limits, &mut k)?;
            Ok(k)
        })?;
        let cursor = ix.tree.scan(&db.engine, as_ref(&lo), as_ref(&hi), dir);
        Ok(IndexRows {
            cursor,
            table: t,
            index: pos,
            db,
            view,
            index_only: false,
        })
    }

    /// Entries of index `index` by state, for tests and diagnostics: (live, delete-marked).
    pub fn index_record_counts(&self, index: &str) -> Result<(u64, u64)> {
        self.with_state(|t| {
            let tree = match index {
                PRIMARY => t.clustered,
                name => self.index_of(t, name)?.tree,
            };
            let (mut live, mut marked) = (0, 0);
            for e in tree.scan(
                &self.db.engine,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            ) {
                if e?.delete_marked {
                    marked += 1;
                } else {
                    live += 1;
                }
            }
            Ok((live, marked))
        })
    }
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Rows of a scan, decoded: each as its snapshot sees it.
pub struct Rows<'d> {
    source: RowsSource<'d>,
}

enum RowsSource<'d> {
    Cursor {
        cursor: Cursor<'d, Engine>,
        table: Arc<TableState>,
        db: &'d DbInner,
        /// Keeps the snapshot registered (purge keeps its versions) while the scan lives.
        view: Option<Arc<ViewHandle>>,
        /// The columns decoded (`Table::reading_only`); `None`: every column.
        cols: Option<Arc<[bool]>>,
    },
    /// A locking scan's rows, read already.
    Done(std::vec::IntoIter<Vec<Value>>),
}

impl<'d> Rows<'d> {
    fn new(
        cursor: Cursor<'d, Engine>,
        table: Arc<TableState>,
        db: &'d DbInner,
        view: Option<Arc<ViewHandle>>,
        cols: Option<Arc<[bool]>>,
    ) -> Rows<'d> {
        Rows {
            source: RowsSource::Cursor {
                cursor,
                table,
                db,
                view,
                cols,
            },
        }
    }

    fn materialized(rows: Vec<Vec<Value>>) -> Rows<'d> {
        Rows {
            source: RowsSource::Done(rows.into_iter()),
        }
    }

    /// The next row the snapshot sees, with its clustered key.
    /// `whole`: decode every column, whatever the handle's projection (a row that may be
    /// written back).
    fn next_keyed(&mut self, whole: bool) -> Option<Result<(Vec<u8>, Vec<Value>)>> {
        let RowsSource::Cursor {
            cursor,
            table,
            db,
            view,
            cols,
        } = &mut self.source
        else {
            return None;
        };
        loop {
            let e = match cursor.next()? {
                Ok(e) => e,
                Err(e) => return Some(Err(e.into())),
            };
            let v = view.as_deref().map(|v| &**v);
            let rec = match db.version(table, &e.key, e.value, e.delete_marked, v) {
                Ok(Some(rec)) => rec,
                Ok(None) => continue,
                Err(err) => return Some(Err(err)),
            };
            let cols = if whole { None } else { cols.as_deref() };
            return Some(db.decode_columns(table, &rec, cols).map(|row| (e.key, row)));
        }
    }

    /// The rows with their handles, for updating or deleting them (a table without a
    /// primary key has no other way to name a row). Not available for a locking scan's
    /// rows (they come back without handles).
    pub fn with_handles(mut self) -> impl Iterator<Item = Result<(RowHandle, Vec<Value>)>> + 'd {
        std::iter::from_fn(move || {
            let r = self.next_keyed(true)?;
            let RowsSource::Cursor { table, .. } = &self.source else {
                return None;
            };
            let table = table.clone();
            Some(r.and_then(|(k, row)| Ok((RowHandle::new(&table, k)?, row))))
        })
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Vec<Value>>;
    fn next(&mut self) -> Option<Self::Item> {
        if let RowsSource::Done(it) = &mut self.source {
            return it.next().map(Ok);
        }
        Some(self.next_keyed(false)?.map(|(_, row)| row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::{Date, DateTime, Decimal};

    #[test]
    fn key_entry_writes_values_as_mysql_prints_them() {
        let cols = vec![
            Column::new(
                "d",
                ColumnType::Decimal {
                    precision: 6,
                    scale: 2,
                },
            ),
            Column::new("t", ColumnType::DateTime { fsp: 3 }),
            Column::new("day", ColumnType::Date),
            Column::new("f", ColumnType::Float),
            Column::new(
                "u",
                ColumnType::Int {
                    width: crate::row::IntWidth::Big,
                    unsigned: true,
                },
            ),
        ];
        let row = vec![
            Value::Decimal(Decimal::new(-1205, 2)),
            Value::DateTime(DateTime {
                date: Date::new(2024, 2, 9),
                hour: 7,
                minute: 5,
                second: 3,
                micros: 120_000,
            }),
            Value::Date(Date::new(1999, 12, 31)),
            Value::Double(f64::from(1.1f32)),
            Value::UInt(u64::MAX),
        ];
        let parts: Vec<_> = (0..5).map(|c| (c, None)).collect();
        assert_eq!(
            key_entry(&cols, &row, &parts),
            "-12.05-2024-02-09 07:05:03.120-1999-12-31-1.1-18446744073709551615"
        );
    }
}
