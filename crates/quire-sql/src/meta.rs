//! What a result set looks like to the wire: column definitions and the sink rows go to.

use quire_engine::row::Value;

/// MySQL column types as the protocol names them (`enum_field_types`); the server maps
/// them to its packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Tiny,
    Short,
    Int24,
    Long,
    LongLong,
    Float,
    Double,
    NewDecimal,
    /// CHAR / BINARY.
    String,
    /// VARCHAR / VARBINARY and computed strings.
    VarString,
    Blob,
    /// LONGTEXT / LONGBLOB results (REGEXP_REPLACE's).
    LongBlob,
    Date,
    DateTime,
    Timestamp,
    /// YEAR: four digits, zero-padded (0000 for the zero year).
    Year,
    /// TIME: `[-]HH:MM:SS[.f]` in text, sign/days/hours/… in binary rows.
    Time,
    /// BIT(M): a table's BIT column sends its big-endian bytes (ceil(M/8) of them); a
    /// computed BIT value (MAX(b)) its number, as MariaDB's items do.
    Bit,
    Null,
}

impl FieldType {
    /// The integer types a client reads as whole numbers (YEAR among them: MariaDB sends it
    /// as a ZEROFILL UNSIGNED integer; BIT, also a number, is not: its table columns send
    /// bytes).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            FieldType::Tiny
                | FieldType::Short
                | FieldType::Int24
                | FieldType::Long
                | FieldType::LongLong
                | FieldType::Year
        )
    }
}

/// Column definition flags (MySQL's `*_FLAG`).
pub mod flags {
    pub const NOT_NULL: u16 = 1;
    pub const PRI_KEY: u16 = 2;
    pub const UNIQUE_KEY: u16 = 4;
    pub const MULTIPLE_KEY: u16 = 8;
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const AUTO_INCREMENT: u16 = 512;
    /// A TIMESTAMP column with `DEFAULT current_timestamp()` or `ON UPDATE …`.
    pub const TIMESTAMP: u16 = 1024;
    pub const SET: u16 = 2048;
    /// A NOT NULL column without a DEFAULT (and not AUTO_INCREMENT).
    pub const NO_DEFAULT_VALUE: u16 = 4096;
    /// `ON UPDATE current_timestamp()`.
    pub const ON_UPDATE_NOW: u16 = 8192;
    /// The column is in some index (the primary key's included).
    pub const PART_KEY: u16 = 16384;
    // NUM_FLAG (32768) is never sent: MariaDB and MySQL leave it to the client library,
    // which sets it from the type (libmariadb's `unpack_fields`).
}

/// Charset numbers used in column definitions.
pub mod charset {
    /// utf8mb4_general_ci: MariaDB 10.11's default for utf8mb4.
    pub const UTF8MB4_GENERAL_CI: u16 = 45;
    /// binary: numbers, dates and byte strings.
    pub const BINARY: u16 = 63;
}

/// One column of a result set, as a column definition packet carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMeta {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub charset: u16,
    /// Display length in bytes (characters × 4 for utf8mb4 strings).
    pub length: u32,
    pub ty: FieldType,
    pub flags: u16,
    pub decimals: u8,
    /// The values are JSON text: MariaDB's extended metadata says format `json` for such a
    /// column, to a client that negotiated it (docs/protocol.md, "Extended metadata").
    pub json: bool,
}

impl ColumnMeta {
    /// A computed column (no table), e.g. `SELECT 1`, `COUNT(*)`: a number, a temporal or
    /// NULL is of the binary character set and flagged BINARY, as MariaDB sends an item of
    /// that set (measured: `SELECT NULL` 128, `SELECT 1` 129 with NOT_NULL, which the
    /// caller adds).
    pub fn computed(name: impl Into<String>, ty: FieldType, length: u32, decimals: u8) -> Self {
        let (charset, flags) = match ty {
            FieldType::VarString | FieldType::String | FieldType::Blob | FieldType::LongBlob => {
                (charset::UTF8MB4_GENERAL_CI, 0)
            }
            _ => (charset::BINARY, flags::BINARY),
        };
        ColumnMeta {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: name.into(),
            org_name: String::new(),
            charset,
            length,
            ty,
            flags,
            decimals,
            json: false,
        }
    }
}

/// The sink failed: the client went away or a packet could not be written. The statement
/// stops; the session decides what to roll back.
#[derive(Debug, thiserror::Error)]
#[error("result set not delivered: {0}")]
pub struct SinkError(pub String);

/// Where a result set goes. `columns` is called once before the first row; rows follow in
/// order. The server writes each row to the socket as it comes (text or binary protocol).
pub trait RowSink {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<(), SinkError>;
    fn row(&mut self, row: &[Value]) -> Result<(), SinkError>;
    /// `LOAD DATA LOCAL INFILE`: the bytes of the client's file `name`, read as they arrive
    /// (the server asks the client for it and reads its packets; docs/protocol.md, "LOCAL
    /// INFILE"). `None`: the client did not allow it (no CLIENT_LOCAL_FILES), or there is
    /// no client (the embedded use). The reader must drain what the client still sends
    /// when it is dropped early, so that the connection stays in step.
    fn local_infile(&mut self, name: &str) -> Option<Box<dyn std::io::Read + '_>> {
        let _ = name;
        None
    }
}

/// A sink that keeps everything: for tests and for the embedded use of quire-sql.
#[derive(Debug, Default)]
pub struct CollectSink {
    pub columns: Vec<ColumnMeta>,
    pub rows: Vec<Vec<Value>>,
}

impl RowSink for CollectSink {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<(), SinkError> {
        self.columns = cols.to_vec();
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<(), SinkError> {
        self.rows.push(row.to_vec());
        Ok(())
    }
}
