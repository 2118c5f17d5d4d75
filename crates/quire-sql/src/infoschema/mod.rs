//! information_schema: its tables as row sources the planner scans (docs/sql.md,
//! "information_schema").
//!
//! A table of information_schema named in FROM is a derived table whose plan reads
//! [`Source::Virtual`](crate::exec::Source): its rows are computed from the catalog, the
//! session registry and the engine's counters each time a statement reads it, then WHERE,
//! joins, GROUP BY, ORDER BY and the rest run on them as on any rows. Column names, order,
//! types and result metadata are MariaDB 10.11's (`SELECT *` order), so tools that read
//! them by position work.
//!
//! Invariants:
//! 1. A row has exactly its table's columns, in [`InfoTable::columns`] order, each value
//!    of its column's kind (or NULL where the column is nullable).
//! 2. Nothing is cached between statements: a DDL is seen by the next read.

mod rows;

use quire_engine::row::{Collation, Column, ColumnType, IntWidth, LobSize};

use crate::exec::{SelectPlan, Source};
use crate::expr::Expr;
use crate::meta::{flags, ColumnMeta, FieldType};
use crate::plan::Access;

pub(crate) use rows::rows;

/// The kind of an information_schema column, as MariaDB declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum K {
    /// VARCHAR(n), utf8mb3 in MariaDB (utf8mb4 here; the wire length is the same for a
    /// utf8mb4 client).
    Str(u32),
    /// LONGTEXT.
    Text,
    Blob,
    DateTime,
    Float,
    Dec(u8, u8),
    /// BIGINT(display width), unsigned or not.
    Big(u32, bool),
    Int(u32, bool),
    Tiny(u32, bool),
    /// ENUM of values at most this long (a VARCHAR here; CHAR on the wire, as MariaDB).
    Enum(u32),
}

/// (name, kind, nullable).
pub type Col = (&'static str, K, bool);

/// The name of the schema.
pub const SCHEMA: &str = "information_schema";

pub const CHARACTER_SETS: &[Col] = &[
    ("CHARACTER_SET_NAME", K::Str(32), false),
    ("DEFAULT_COLLATE_NAME", K::Str(64), false),
    ("DESCRIPTION", K::Str(60), false),
    ("MAXLEN", K::Big(3, false), false),
];
pub const COLLATIONS: &[Col] = &[
    ("COLLATION_NAME", K::Str(64), false),
    ("CHARACTER_SET_NAME", K::Str(32), true),
    ("ID", K::Big(11, false), true),
    ("IS_DEFAULT", K::Str(3), true),
    ("IS_COMPILED", K::Str(3), false),
    ("SORTLEN", K::Big(3, false), false),
];
pub const COLUMNS: &[Col] = &[
    ("TABLE_CATALOG", K::Str(512), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("COLUMN_NAME", K::Str(64), false),
    ("ORDINAL_POSITION", K::Big(21, true), false),
    ("COLUMN_DEFAULT", K::Text, true),
    ("IS_NULLABLE", K::Str(3), false),
    ("DATA_TYPE", K::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", K::Big(21, true), true),
    ("CHARACTER_OCTET_LENGTH", K::Big(21, true), true),
    ("NUMERIC_PRECISION", K::Big(21, true), true),
    ("NUMERIC_SCALE", K::Big(21, true), true),
    ("DATETIME_PRECISION", K::Big(21, true), true),
    ("CHARACTER_SET_NAME", K::Str(32), true),
    ("COLLATION_NAME", K::Str(64), true),
    ("COLUMN_TYPE", K::Text, false),
    ("COLUMN_KEY", K::Str(3), false),
    ("EXTRA", K::Str(80), false),
    ("PRIVILEGES", K::Str(80), false),
    ("COLUMN_COMMENT", K::Str(1024), false),
    ("IS_GENERATED", K::Str(6), false),
    ("GENERATION_EXPRESSION", K::Text, true),
];
pub const ENGINES: &[Col] = &[
    ("ENGINE", K::Str(64), false),
    ("SUPPORT", K::Str(8), false),
    ("COMMENT", K::Str(160), false),
    ("TRANSACTIONS", K::Str(3), true),
    ("XA", K::Str(3), true),
    ("SAVEPOINTS", K::Str(3), true),
];
pub const INNODB_LOCKS: &[Col] = &[
    ("lock_id", K::Str(81), false),
    ("lock_trx_id", K::Big(21, true), false),
    ("lock_mode", K::Enum(8), false),
    ("lock_type", K::Enum(6), false),
    ("lock_table", K::Str(1024), false),
    ("lock_index", K::Str(1024), true),
    ("lock_space", K::Int(11, true), true),
    ("lock_page", K::Int(11, true), true),
    ("lock_rec", K::Int(11, true), true),
    ("lock_data", K::Str(8192), true),
];
pub const INNODB_LOCK_WAITS: &[Col] = &[
    ("requesting_trx_id", K::Big(21, true), false),
    ("requested_lock_id", K::Str(81), false),
    ("blocking_trx_id", K::Big(21, true), false),
    ("blocking_lock_id", K::Str(81), false),
];
// InnoDB's page compression statistics. Quire never compresses pages, so each page size
// has a row of zeros, as in a MariaDB without compressed tables.
pub const INNODB_CMP: &[Col] = &[
    ("page_size", K::Int(5, false), false),
    ("compress_ops", K::Int(11, false), false),
    ("compress_ops_ok", K::Int(11, false), false),
    ("compress_time", K::Int(11, false), false),
    ("uncompress_ops", K::Int(11, false), false),
    ("uncompress_time", K::Int(11, false), false),
];
pub const INNODB_CMPMEM: &[Col] = &[
    ("page_size", K::Int(5, false), false),
    ("buffer_pool_instance", K::Int(11, false), false),
    ("pages_used", K::Int(11, false), false),
    ("pages_free", K::Int(11, false), false),
    ("relocation_ops", K::Big(21, false), false),
    ("relocation_time", K::Int(11, false), false),
];
// GLOBAL_STATUS, SESSION_STATUS, GLOBAL_VARIABLES and SESSION_VARIABLES: what SHOW STATUS and
// SHOW VARIABLES list, names in capitals as MariaDB gives them.
pub const NAME_VALUE: &[Col] = &[
    ("VARIABLE_NAME", K::Str(64), false),
    ("VARIABLE_VALUE", K::Str(4096), false),
];
pub const INNODB_METRICS: &[Col] = &[
    ("NAME", K::Str(193), false),
    ("SUBSYSTEM", K::Str(193), false),
    ("COUNT", K::Big(21, false), false),
    ("MAX_COUNT", K::Big(21, false), true),
    ("MIN_COUNT", K::Big(21, false), true),
    ("AVG_COUNT", K::Float, true),
    ("COUNT_RESET", K::Big(21, false), false),
    ("MAX_COUNT_RESET", K::Big(21, false), true),
    ("MIN_COUNT_RESET", K::Big(21, false), true),
    ("AVG_COUNT_RESET", K::Float, true),
    ("TIME_ENABLED", K::DateTime, true),
    ("TIME_DISABLED", K::DateTime, true),
    ("TIME_ELAPSED", K::Big(21, false), true),
    ("TIME_RESET", K::DateTime, true),
    ("ENABLED", K::Int(1, false), false),
    ("TYPE", K::Enum(14), false),
    ("COMMENT", K::Str(193), false),
];
pub const INNODB_TRX: &[Col] = &[
    ("trx_id", K::Big(21, true), false),
    ("trx_state", K::Str(13), false),
    ("trx_started", K::DateTime, false),
    ("trx_requested_lock_id", K::Str(81), true),
    ("trx_wait_started", K::DateTime, true),
    ("trx_weight", K::Big(21, true), false),
    ("trx_mysql_thread_id", K::Big(21, true), false),
    ("trx_query", K::Str(1024), true),
    ("trx_operation_state", K::Str(64), true),
    ("trx_tables_in_use", K::Big(21, true), false),
    ("trx_tables_locked", K::Big(21, true), false),
    ("trx_lock_structs", K::Big(21, true), false),
    ("trx_lock_memory_bytes", K::Big(21, true), false),
    ("trx_rows_locked", K::Big(21, true), false),
    ("trx_rows_modified", K::Big(21, true), false),
    ("trx_concurrency_tickets", K::Big(21, true), false),
    ("trx_isolation_level", K::Enum(16), false),
    ("trx_unique_checks", K::Int(1, false), false),
    ("trx_foreign_key_checks", K::Int(1, false), false),
    ("trx_last_foreign_key_error", K::Str(256), true),
    ("trx_is_read_only", K::Int(1, false), false),
    ("trx_autocommit_non_locking", K::Int(1, false), false),
];
pub const KEY_COLUMN_USAGE: &[Col] = &[
    ("CONSTRAINT_CATALOG", K::Str(512), false),
    ("CONSTRAINT_SCHEMA", K::Str(64), false),
    ("CONSTRAINT_NAME", K::Str(64), false),
    ("TABLE_CATALOG", K::Str(512), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("COLUMN_NAME", K::Str(64), false),
    ("ORDINAL_POSITION", K::Big(10, false), false),
    ("POSITION_IN_UNIQUE_CONSTRAINT", K::Big(10, false), true),
    ("REFERENCED_TABLE_SCHEMA", K::Str(64), true),
    ("REFERENCED_TABLE_NAME", K::Str(64), true),
    ("REFERENCED_COLUMN_NAME", K::Str(64), true),
];
pub const PROCESSLIST: &[Col] = &[
    ("ID", K::Big(4, false), false),
    ("USER", K::Str(128), false),
    ("HOST", K::Str(64), false),
    ("DB", K::Str(64), true),
    ("COMMAND", K::Str(16), false),
    ("TIME", K::Int(7, false), false),
    ("STATE", K::Str(64), true),
    ("INFO", K::Text, true),
    ("TIME_MS", K::Dec(22, 3), false),
    ("STAGE", K::Tiny(2, false), false),
    ("MAX_STAGE", K::Tiny(2, false), false),
    ("PROGRESS", K::Dec(7, 3), false),
    ("MEMORY_USED", K::Big(7, false), false),
    ("MAX_MEMORY_USED", K::Big(7, false), false),
    ("EXAMINED_ROWS", K::Int(7, false), false),
    ("QUERY_ID", K::Big(4, false), false),
    ("INFO_BINARY", K::Blob, true),
    ("TID", K::Big(4, false), false),
];
pub const REFERENTIAL_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", K::Str(512), false),
    ("CONSTRAINT_SCHEMA", K::Str(64), false),
    ("CONSTRAINT_NAME", K::Str(64), false),
    ("UNIQUE_CONSTRAINT_CATALOG", K::Str(512), false),
    ("UNIQUE_CONSTRAINT_SCHEMA", K::Str(64), false),
    ("UNIQUE_CONSTRAINT_NAME", K::Str(64), true),
    ("MATCH_OPTION", K::Str(64), false),
    ("UPDATE_RULE", K::Str(64), false),
    ("DELETE_RULE", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("REFERENCED_TABLE_NAME", K::Str(64), true),
];
pub const SCHEMATA: &[Col] = &[
    ("CATALOG_NAME", K::Str(512), false),
    ("SCHEMA_NAME", K::Str(64), false),
    ("DEFAULT_CHARACTER_SET_NAME", K::Str(32), false),
    ("DEFAULT_COLLATION_NAME", K::Str(64), false),
    ("SQL_PATH", K::Str(512), true),
    ("SCHEMA_COMMENT", K::Str(1024), false),
];
pub const STATISTICS: &[Col] = &[
    ("TABLE_CATALOG", K::Str(512), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("NON_UNIQUE", K::Big(1, false), false),
    ("INDEX_SCHEMA", K::Str(64), false),
    ("INDEX_NAME", K::Str(64), false),
    ("SEQ_IN_INDEX", K::Int(2, true), false),
    ("COLUMN_NAME", K::Str(64), false),
    ("COLLATION", K::Str(1), true),
    ("CARDINALITY", K::Big(21, false), true),
    ("SUB_PART", K::Big(3, false), true),
    ("PACKED", K::Str(10), true),
    ("NULLABLE", K::Str(3), false),
    ("INDEX_TYPE", K::Str(16), false),
    ("COMMENT", K::Str(16), true),
    ("INDEX_COMMENT", K::Str(1024), false),
    ("IGNORED", K::Str(3), false),
];
pub const TABLES: &[Col] = &[
    ("TABLE_CATALOG", K::Str(512), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("TABLE_TYPE", K::Str(64), false),
    ("ENGINE", K::Str(64), true),
    ("VERSION", K::Big(21, true), true),
    ("ROW_FORMAT", K::Str(10), true),
    ("TABLE_ROWS", K::Big(21, true), true),
    ("AVG_ROW_LENGTH", K::Big(21, true), true),
    ("DATA_LENGTH", K::Big(21, true), true),
    ("MAX_DATA_LENGTH", K::Big(21, true), true),
    ("INDEX_LENGTH", K::Big(21, true), true),
    ("DATA_FREE", K::Big(21, true), true),
    ("AUTO_INCREMENT", K::Big(21, true), true),
    ("CREATE_TIME", K::DateTime, true),
    ("UPDATE_TIME", K::DateTime, true),
    ("CHECK_TIME", K::DateTime, true),
    ("TABLE_COLLATION", K::Str(64), true),
    ("CHECKSUM", K::Big(21, true), true),
    ("CREATE_OPTIONS", K::Str(2048), true),
    ("TABLE_COMMENT", K::Str(2048), false),
    ("MAX_INDEX_LENGTH", K::Big(21, true), true),
    ("TEMPORARY", K::Str(1), true),
];
pub const CHECK_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", K::Str(512), false),
    ("CONSTRAINT_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("CONSTRAINT_NAME", K::Str(64), false),
    ("LEVEL", K::Str(6), false),
    ("CHECK_CLAUSE", K::Text, false),
];
pub const TABLE_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", K::Str(512), false),
    ("CONSTRAINT_SCHEMA", K::Str(64), false),
    ("CONSTRAINT_NAME", K::Str(64), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("CONSTRAINT_TYPE", K::Str(64), false),
];
pub const VIEWS: &[Col] = &[
    ("TABLE_CATALOG", K::Str(512), false),
    ("TABLE_SCHEMA", K::Str(64), false),
    ("TABLE_NAME", K::Str(64), false),
    ("VIEW_DEFINITION", K::Text, false),
    ("CHECK_OPTION", K::Str(8), false),
    ("IS_UPDATABLE", K::Str(3), false),
    ("DEFINER", K::Str(384), false),
    ("SECURITY_TYPE", K::Str(7), false),
    ("CHARACTER_SET_CLIENT", K::Str(32), false),
    ("COLLATION_CONNECTION", K::Str(64), false),
    ("ALGORITHM", K::Str(10), false),
];

/// TRIGGERS, ROUTINES and EVENTS: Quire has none of them (1235), so they have no rows;
/// they exist because tools read them (mariadb-dump asks TRIGGERS about every table).
pub const TRIGGERS: &[Col] = &[
    ("TRIGGER_CATALOG", K::Str(512), false),
    ("TRIGGER_SCHEMA", K::Str(64), false),
    ("TRIGGER_NAME", K::Str(64), false),
    ("EVENT_MANIPULATION", K::Str(6), false),
    ("EVENT_OBJECT_CATALOG", K::Str(512), false),
    ("EVENT_OBJECT_SCHEMA", K::Str(64), false),
    ("EVENT_OBJECT_TABLE", K::Str(64), false),
    ("ACTION_ORDER", K::Big(4, false), false),
    ("ACTION_CONDITION", K::Text, true),
    ("ACTION_STATEMENT", K::Text, true),
    ("ACTION_ORIENTATION", K::Str(9), false),
    ("ACTION_TIMING", K::Str(6), false),
    ("ACTION_REFERENCE_OLD_TABLE", K::Str(64), true),
    ("ACTION_REFERENCE_NEW_TABLE", K::Str(64), true),
    ("ACTION_REFERENCE_OLD_ROW", K::Str(3), false),
    ("ACTION_REFERENCE_NEW_ROW", K::Str(3), false),
    ("CREATED", K::DateTime, true),
    ("SQL_MODE", K::Str(8192), false),
    ("DEFINER", K::Str(384), true),
    ("CHARACTER_SET_CLIENT", K::Str(32), false),
    ("COLLATION_CONNECTION", K::Str(64), false),
    ("DATABASE_COLLATION", K::Str(64), false),
];
pub const ROUTINES: &[Col] = &[
    ("SPECIFIC_NAME", K::Str(64), false),
    ("ROUTINE_CATALOG", K::Str(512), false),
    ("ROUTINE_SCHEMA", K::Str(64), false),
    ("ROUTINE_NAME", K::Str(64), false),
    ("ROUTINE_TYPE", K::Str(13), false),
    ("DATA_TYPE", K::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", K::Int(21, false), true),
    ("CHARACTER_OCTET_LENGTH", K::Int(21, false), true),
    ("NUMERIC_PRECISION", K::Int(21, false), true),
    ("NUMERIC_SCALE", K::Int(21, false), true),
    ("DATETIME_PRECISION", K::Big(21, true), true),
    ("CHARACTER_SET_NAME", K::Str(64), true),
    ("COLLATION_NAME", K::Str(64), true),
    ("DTD_IDENTIFIER", K::Text, true),
    ("ROUTINE_BODY", K::Str(8), false),
    ("ROUTINE_DEFINITION", K::Text, true),
    ("EXTERNAL_NAME", K::Str(64), true),
    ("EXTERNAL_LANGUAGE", K::Str(64), true),
    ("PARAMETER_STYLE", K::Str(8), false),
    ("IS_DETERMINISTIC", K::Str(3), false),
    ("SQL_DATA_ACCESS", K::Str(64), false),
    ("SQL_PATH", K::Str(64), true),
    ("SECURITY_TYPE", K::Str(7), false),
    ("CREATED", K::DateTime, false),
    ("LAST_ALTERED", K::DateTime, false),
    ("SQL_MODE", K::Str(8192), false),
    ("ROUTINE_COMMENT", K::Text, false),
    ("DEFINER", K::Str(384), false),
    ("CHARACTER_SET_CLIENT", K::Str(32), false),
    ("COLLATION_CONNECTION", K::Str(64), false),
    ("DATABASE_COLLATION", K::Str(64), false),
];
pub const EVENTS: &[Col] = &[
    ("EVENT_CATALOG", K::Str(64), false),
    ("EVENT_SCHEMA", K::Str(64), false),
    ("EVENT_NAME", K::Str(64), false),
    ("DEFINER", K::Str(384), false),
    ("TIME_ZONE", K::Str(64), false),
    ("EVENT_BODY", K::Str(8), false),
    ("EVENT_DEFINITION", K::Text, false),
    ("EVENT_TYPE", K::Str(9), false),
    ("EXECUTE_AT", K::DateTime, true),
    ("INTERVAL_VALUE", K::Str(256), true),
    ("INTERVAL_FIELD", K::Str(18), true),
    ("SQL_MODE", K::Str(8192), false),
    ("STARTS", K::DateTime, true),
    ("ENDS", K::DateTime, true),
    ("STATUS", K::Str(18), false),
    ("ON_COMPLETION", K::Str(12), false),
    ("CREATED", K::DateTime, false),
    ("LAST_ALTERED", K::DateTime, false),
    ("LAST_EXECUTED", K::DateTime, true),
    ("EVENT_COMMENT", K::Str(64), false),
    ("ORIGINATOR", K::Big(10, false), false),
    ("CHARACTER_SET_CLIENT", K::Str(32), false),
    ("COLLATION_CONNECTION", K::Str(64), false),
    ("DATABASE_COLLATION", K::Str(64), false),
];

/// The tables of information_schema that Quire has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InfoTable {
    CharacterSets,
    CheckConstraints,
    Collations,
    Columns,
    Engines,
    Events,
    InnodbLockWaits,
    InnodbLocks,
    InnodbMetrics,
    GlobalStatus,
    GlobalVariables,
    SessionStatus,
    SessionVariables,
    InnodbCmp,
    InnodbCmpReset,
    InnodbCmpmem,
    InnodbCmpmemReset,
    InnodbTrx,
    KeyColumnUsage,
    Processlist,
    ReferentialConstraints,
    Routines,
    Schemata,
    Statistics,
    TableConstraints,
    Tables,
    Triggers,
    Views,
}

impl InfoTable {
    pub const ALL: [InfoTable; 28] = [
        InfoTable::CharacterSets,
        InfoTable::CheckConstraints,
        InfoTable::Collations,
        InfoTable::Columns,
        InfoTable::Engines,
        InfoTable::Events,
        InfoTable::InnodbLockWaits,
        InfoTable::InnodbLocks,
        InfoTable::InnodbMetrics,
        InfoTable::GlobalStatus,
        InfoTable::GlobalVariables,
        InfoTable::SessionStatus,
        InfoTable::SessionVariables,
        InfoTable::InnodbCmp,
        InfoTable::InnodbCmpReset,
        InfoTable::InnodbCmpmem,
        InfoTable::InnodbCmpmemReset,
        InfoTable::InnodbTrx,
        InfoTable::KeyColumnUsage,
        InfoTable::Processlist,
        InfoTable::ReferentialConstraints,
        InfoTable::Routines,
        InfoTable::Schemata,
        InfoTable::Statistics,
        InfoTable::TableConstraints,
        InfoTable::Tables,
        InfoTable::Triggers,
        InfoTable::Views,
    ];

    pub fn name(self) -> &'static str {
        match self {
            InfoTable::CharacterSets => "CHARACTER_SETS",
            InfoTable::CheckConstraints => "CHECK_CONSTRAINTS",
            InfoTable::Collations => "COLLATIONS",
            InfoTable::Columns => "COLUMNS",
            InfoTable::Engines => "ENGINES",
            InfoTable::Events => "EVENTS",
            InfoTable::Routines => "ROUTINES",
            InfoTable::Triggers => "TRIGGERS",
            InfoTable::InnodbLockWaits => "INNODB_LOCK_WAITS",
            InfoTable::InnodbLocks => "INNODB_LOCKS",
            InfoTable::InnodbMetrics => "INNODB_METRICS",
            InfoTable::GlobalStatus => "GLOBAL_STATUS",
            InfoTable::GlobalVariables => "GLOBAL_VARIABLES",
            InfoTable::SessionStatus => "SESSION_STATUS",
            InfoTable::SessionVariables => "SESSION_VARIABLES",
            InfoTable::InnodbCmp => "INNODB_CMP",
            InfoTable::InnodbCmpReset => "INNODB_CMP_RESET",
            InfoTable::InnodbCmpmem => "INNODB_CMPMEM",
            InfoTable::InnodbCmpmemReset => "INNODB_CMPMEM_RESET",
            InfoTable::InnodbTrx => "INNODB_TRX",
            InfoTable::KeyColumnUsage => "KEY_COLUMN_USAGE",
            InfoTable::Processlist => "PROCESSLIST",
            InfoTable::ReferentialConstraints => "REFERENTIAL_CONSTRAINTS",
            InfoTable::Schemata => "SCHEMATA",
            InfoTable::Statistics => "STATISTICS",
            InfoTable::TableConstraints => "TABLE_CONSTRAINTS",
            InfoTable::Tables => "TABLES",
            InfoTable::Views => "VIEWS",
        }
    }

    /// Table names are case-insensitive in information_schema (as in MariaDB).
    pub fn from_name(name: &str) -> Option<InfoTable> {
        InfoTable::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    pub fn columns(self) -> &'static [Col] {
        match self {
            InfoTable::CharacterSets => CHARACTER_SETS,
            InfoTable::CheckConstraints => CHECK_CONSTRAINTS,
            InfoTable::Collations => COLLATIONS,
            InfoTable::Columns => COLUMNS,
            InfoTable::Engines => ENGINES,
            InfoTable::Events => EVENTS,
            InfoTable::Routines => ROUTINES,
            InfoTable::Triggers => TRIGGERS,
            InfoTable::InnodbLockWaits => INNODB_LOCK_WAITS,
            InfoTable::InnodbLocks => INNODB_LOCKS,
            InfoTable::InnodbMetrics => INNODB_METRICS,
            InfoTable::GlobalStatus
            | InfoTable::GlobalVariables
            | InfoTable::SessionStatus
            | InfoTable::SessionVariables => NAME_VALUE,
            InfoTable::InnodbCmp | InfoTable::InnodbCmpReset => INNODB_CMP,
            InfoTable::InnodbCmpmem | InfoTable::InnodbCmpmemReset => INNODB_CMPMEM,
            InfoTable::InnodbTrx => INNODB_TRX,
            InfoTable::KeyColumnUsage => KEY_COLUMN_USAGE,
            InfoTable::Processlist => PROCESSLIST,
            InfoTable::ReferentialConstraints => REFERENTIAL_CONSTRAINTS,
            InfoTable::Schemata => SCHEMATA,
            InfoTable::Statistics => STATISTICS,
            InfoTable::TableConstraints => TABLE_CONSTRAINTS,
            InfoTable::Tables => TABLES,
            InfoTable::Views => VIEWS,
        }
    }

    /// The columns as the binder types them.
    pub fn engine_columns(self) -> Vec<Column> {
        self.columns().iter().map(engine_column).collect()
    }

    /// The columns as MariaDB's result metadata gives them (read under `alias`).
    pub fn metas(self, alias: &str) -> Vec<ColumnMeta> {
        self.columns()
            .iter()
            .map(|c| column_meta(self, c, alias))
            .collect()
    }
}

/// Whether `db` names information_schema (case-insensitive, as in MariaDB).
pub fn is_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(SCHEMA)
}

fn engine_column(c: &Col) -> Column {
    let int = |width, unsigned| ColumnType::Int { width, unsigned };
    let ty = match c.1 {
        K::Str(n) | K::Enum(n) => ColumnType::VarChar { max_chars: n },
        K::Text => ColumnType::Text(LobSize::Long),
        K::Blob => ColumnType::Blob(LobSize::Regular),
        K::DateTime => ColumnType::DateTime { fsp: 0 },
        K::Float => ColumnType::Float,
        K::Dec(p, s) => ColumnType::Decimal {
            precision: p,
            scale: s,
        },
        K::Big(_, u) => int(IntWidth::Big, u),
        K::Int(_, u) => int(IntWidth::Int, u),
        K::Tiny(_, u) => int(IntWidth::Tiny, u),
    };
    let col = if c.2 {
        Column::nullable(c.0, ty)
    } else {
        Column::new(c.0, ty)
    };
    col.with_collation(Collation::Utf8mb4GeneralCi)
}

fn column_meta(t: InfoTable, c: &Col, alias: &str) -> ColumnMeta {
    // MariaDB's lengths for a utf8mb4 client: characters × 4 for strings; the display
    // width for numbers.
    let (ty, length, decimals, charset) = match c.1 {
        K::Str(n) => (
            FieldType::VarString,
            n * 4,
            0,
            crate::meta::charset::UTF8MB4_GENERAL_CI,
        ),
        K::Enum(n) => (
            FieldType::String,
            n * 4,
            0,
            crate::meta::charset::UTF8MB4_GENERAL_CI,
        ),
        K::Text => (
            FieldType::Blob,
            196_605 * 4,
            0,
            crate::meta::charset::UTF8MB4_GENERAL_CI,
        ),
        K::Blob => (FieldType::Blob, 65_535, 0, crate::meta::charset::BINARY),
        K::DateTime => (FieldType::DateTime, 19, 0, crate::meta::charset::BINARY),
        K::Float => (FieldType::Float, 12, 31, crate::meta::charset::BINARY),
        K::Dec(p, s) => (
            FieldType::NewDecimal,
            u32::from(p) + 2,
            s,
            crate::meta::charset::BINARY,
        ),
        K::Big(w, _) => (FieldType::LongLong, w, 0, crate::meta::charset::BINARY),
        K::Int(w, _) => (FieldType::Long, w, 0, crate::meta::charset::BINARY),
        K::Tiny(w, _) => (FieldType::Tiny, w, 0, crate::meta::charset::BINARY),
    };
    let mut f = 0;
    if !c.2 {
        f |= flags::NOT_NULL;
    }
    if matches!(c.1, K::Big(_, true) | K::Int(_, true) | K::Tiny(_, true)) {
        f |= flags::UNSIGNED;
    }
    if matches!(c.1, K::Text | K::Blob) {
        f |= flags::BLOB;
    }
    if matches!(c.1, K::Blob) {
        f |= flags::BINARY;
    }
    ColumnMeta {
        schema: SCHEMA.into(),
        table: alias.into(),
        org_table: t.name().into(),
        name: c.0.into(),
        org_name: c.0.into(),
        charset,
        length,
        ty,
        flags: f,
        decimals,
        json: false,
    }
}

/// The plan that reads table `t` whole: a derived table of its rows.
pub fn plan(t: InfoTable, alias: &str) -> SelectPlan {
    let cols = t.engine_columns();
    let n = cols.len();
    let items: Vec<Expr> = (0..n).map(Expr::Column).collect();
    let item_tys = items
        .iter()
        .map(|e| crate::func::types::infer(e, &cols, &[]))
        .collect();
    SelectPlan {
        source: Source::Virtual(t),
        access: Access::full_scan(),
        filter: None,
        items,
        item_colls: vec![Collation::Utf8mb4GeneralCi; n],
        item_tys,
        item_derived: vec![
            (
                Collation::Utf8mb4GeneralCi,
                crate::bind::Coercibility::Implicit
            );
            n
        ],
        subqueries: Vec::new(),
        columns: t.metas(alias),
        aggs: Vec::new(),
        group_by: Vec::new(),
        group_colls: Vec::new(),
        rollup: false,
        having: None,
        distinct: false,
        sort: Vec::new(),
        sort_colls: Vec::new(),
        limit: None,
        offset: None,
        lock: None,
        lock_wait: Default::default(),
        read_columns: None,
        read_columns_unfiltered: None,
        window: None,
    }
}

/// The CARDINALITY of column `seq` (from 0) of index `name` in `stats` (`PRIMARY` for the
/// primary key): the estimated distinct values of the index's first `seq + 1` columns;
/// NULL without statistics.
pub(crate) fn cardinality(
    stats: Option<&quire_engine::table::TableStatistics>,
    name: &str,
    seq: usize,
) -> quire_engine::row::Value {
    let Some(st) = stats else {
        return quire_engine::row::Value::Null;
    };
    let ix = if name == "PRIMARY" {
        Some(&st.clustered)
    } else {
        st.indexes.iter().find(|i| i.name == name)
    };
    ix.and_then(|i| i.n_diff.get(seq))
        .map_or(quire_engine::row::Value::Null, |&n| {
            quire_engine::row::Value::Int(n as i64)
        })
}
