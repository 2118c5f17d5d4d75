//! System variables: InnoDB's names where the meaning is the same, `quire_` for new ones.
//!
//! Engine settings (`innodb_*`, `quire_*`) come from the engine's configuration; the
//! server's own live in [`VARS`] with their scope and default. A session reads its own
//! value if it set one, else the global.

use std::collections::HashMap;

use quire_engine::row::Value;

use crate::error::{Result, SqlError};
use crate::expr::VERSION;
use crate::session::Instance;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Session,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    Str,
    /// Cannot be set at run time.
    ReadOnly,
}

pub struct Var {
    pub name: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    pub default: &'static str,
}

const fn v(name: &'static str, scope: Scope, kind: Kind, default: &'static str) -> Var {
    Var {
        name,
        scope,
        kind,
        default,
    }
}

const INT: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};

/// The server's variables (sorted by name), beside the engine's.
pub static VARS: &[Var] = &[
    v(
        "auto_increment_increment",
        Scope::Both,
        Kind::Int { min: 1, max: 1 },
        "1",
    ),
    v(
        "auto_increment_offset",
        Scope::Both,
        Kind::Int { min: 1, max: 1 },
        "1",
    ),
    v("autocommit", Scope::Both, Kind::Bool, "1"),
    v("character_set_client", Scope::Both, Kind::Str, "utf8mb4"),
    v(
        "character_set_connection",
        Scope::Both,
        Kind::Str,
        "utf8mb4",
    ),
    v("character_set_database", Scope::Both, Kind::Str, "utf8mb4"),
    v("character_set_results", Scope::Both, Kind::Str, "utf8mb4"),
    v("character_set_server", Scope::Both, Kind::Str, "utf8mb4"),
    v(
        "character_set_system",
        Scope::Global,
        Kind::ReadOnly,
        "utf8mb3",
    ),
    v(
        "collation_connection",
        Scope::Both,
        Kind::Str,
        "utf8mb4_general_ci",
    ),
    v(
        "collation_database",
        Scope::Both,
        Kind::Str,
        "utf8mb4_general_ci",
    ),
    v(
        "collation_server",
        Scope::Both,
        Kind::Str,
        "utf8mb4_general_ci",
    ),
    v(
        "connect_timeout",
        Scope::Global,
        Kind::Int {
            min: 2,
            max: 31_536_000,
        },
        "10",
    ),
    v("default_storage_engine", Scope::Both, Kind::Str, "InnoDB"),
    v("foreign_key_checks", Scope::Both, Kind::Bool, "1"),
    v("have_ssl", Scope::Global, Kind::ReadOnly, "DISABLED"),
    v("hostname", Scope::Global, Kind::ReadOnly, "localhost"),
    v("init_connect", Scope::Global, Kind::Str, ""),
    v(
        "interactive_timeout",
        Scope::Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        "28800",
    ),
    v("license", Scope::Global, Kind::ReadOnly, "Apache-2.0"),
    v(
        "lock_wait_timeout",
        Scope::Both,
        Kind::Int {
            min: 0,
            max: 31_536_000,
        },
        "86400",
    ),
    v("lower_case_table_names", Scope::Global, Kind::ReadOnly, "0"),
    v(
        "max_allowed_packet",
        Scope::Both,
        Kind::Int {
            min: 1024,
            max: 1_073_741_824,
        },
        "16777216",
    ),
    v(
        "max_connections",
        Scope::Global,
        Kind::Int {
            min: 10,
            max: 100_000,
        },
        "151",
    ),
    v("max_execution_time", Scope::Both, INT, "0"),
    v(
        "net_buffer_length",
        Scope::Both,
        Kind::Int {
            min: 1024,
            max: 1_048_576,
        },
        "16384",
    ),
    v(
        "net_read_timeout",
        Scope::Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        "30",
    ),
    v(
        "net_write_timeout",
        Scope::Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        "60",
    ),
    v("performance_schema", Scope::Global, Kind::ReadOnly, "0"),
    v("port", Scope::Global, Kind::ReadOnly, "3307"),
    v("protocol_version", Scope::Global, Kind::ReadOnly, "10"),
    v("query_cache_size", Scope::Global, Kind::ReadOnly, "0"),
    v("query_cache_type", Scope::Both, Kind::Str, "OFF"),
    v("sql_auto_is_null", Scope::Both, Kind::Bool, "0"),
    v(
        "sql_mode",
        Scope::Both,
        Kind::Str,
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
    ),
    v("sql_select_limit", Scope::Both, INT, "18446744073709551615"),
    v("storage_engine", Scope::Both, Kind::Str, "InnoDB"),
    v("system_time_zone", Scope::Global, Kind::ReadOnly, "UTC"),
    v("time_zone", Scope::Both, Kind::Str, "SYSTEM"),
    v("tx_isolation", Scope::Both, Kind::Str, "REPEATABLE-READ"),
    v("tx_read_only", Scope::Both, Kind::Bool, "0"),
    v("unique_checks", Scope::Both, Kind::Bool, "1"),
    v("version", Scope::Global, Kind::ReadOnly, VERSION),
    v(
        "version_comment",
        Scope::Global,
        Kind::ReadOnly,
        "Quire: an InnoDB-class engine, MariaDB 10.11 protocol",
    ),
    v(
        "version_compile_machine",
        Scope::Global,
        Kind::ReadOnly,
        "x86_64",
    ),
    v("version_compile_os", Scope::Global, Kind::ReadOnly, "Linux"),
    v(
        "wait_timeout",
        Scope::Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        "28800",
    ),
];

/// The engine settings that can change while it runs, and are applied live.
pub const ENGINE_DYNAMIC: &[&str] = &["innodb_flush_log_at_trx_commit", "innodb_log_file_size"];

/// The engine settings that are also per session.
pub const ENGINE_SESSION: &[&str] = &["innodb_lock_wait_timeout"];

pub fn find(name: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.name == name)
}

/// The global values the server keeps (SET GLOBAL of a server variable).
#[derive(Default)]
pub struct Globals {
    pub values: HashMap<String, Value>,
}

fn parse_default(v: &Var) -> Value {
    match v.kind {
        Kind::Int { .. } | Kind::Bool => v
            .default
            .parse::<i64>()
            .map(Value::Int)
            .or_else(|_| v.default.parse::<u64>().map(Value::UInt))
            .unwrap_or_else(|_| Value::Str(v.default.into())),
        _ => Value::Str(v.default.into()),
    }
}

/// A global value: the server's, else the engine's configuration.
pub fn global(inst: &Instance<'_>, name: &str) -> Option<Value> {
    if let Some(v) = inst.globals.read().values.get(name) {
        return Some(v.clone());
    }
    if let Some(v) = find(name) {
        return Some(parse_default(v));
    }
    inst.db
        .engine()
        .config()
        .list()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| match v.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Str(v),
        })
}

pub(crate) fn global_u64(inst: &Instance<'_>, name: &str) -> Option<u64> {
    match global(inst, name)? {
        Value::Int(i) if i >= 0 => Some(i as u64),
        Value::UInt(u) => Some(u),
        Value::Str(s) => s.parse().ok(),
        _ => None,
    }
}

/// Every variable name with its global value, sorted (SHOW GLOBAL VARIABLES).
pub fn all_globals(inst: &Instance<'_>) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = VARS
        .iter()
        .filter_map(|v| global(inst, v.name).map(|x| (v.name.to_string(), x)))
        .collect();
    for (n, _) in inst.db.engine().config().list() {
        if let Some(x) = global(inst, n) {
            out.push((n.to_string(), x));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

pub fn is_known(inst: &Instance<'_>, name: &str) -> bool {
    find(name).is_some()
        || inst
            .db
            .engine()
            .config()
            .list()
            .iter()
            .any(|(n, _)| *n == name)
}

/// Checks and normalizes a value for variable `name`: booleans as 0/1 (ON/OFF accepted),
/// integers in range, isolation levels spelled as MySQL prints them.
pub fn normalize(name: &str, v: &Value) -> Result<Value> {
    let bad = || SqlError::WrongValueForVariable {
        name: name.into(),
        value: crate::types::display(v),
    };
    if name == "tx_isolation" {
        let s = crate::types::display(v)
            .to_ascii_uppercase()
            .replace(' ', "-");
        return match s.as_str() {
            "READ-UNCOMMITTED" | "READ-COMMITTED" | "REPEATABLE-READ" | "SERIALIZABLE" => {
                Ok(Value::Str(s))
            }
            _ => Err(bad()),
        };
    }
    let kind = find(name).map(|x| x.kind);
    match kind {
        Some(Kind::Bool) => match v {
            Value::Int(0) | Value::UInt(0) => Ok(Value::Int(0)),
            Value::Int(1) | Value::UInt(1) => Ok(Value::Int(1)),
            Value::Str(s) if s.eq_ignore_ascii_case("on") || s.eq_ignore_ascii_case("true") => {
                Ok(Value::Int(1))
            }
            Value::Str(s) if s.eq_ignore_ascii_case("off") || s.eq_ignore_ascii_case("false") => {
                Ok(Value::Int(0))
            }
            _ => Err(bad()),
        },
        Some(Kind::Int { min, max }) => {
            let n = match v {
                Value::Int(i) => *i,
                Value::UInt(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Decimal(_) | Value::Double(_) => {
                    return Err(SqlError::WrongTypeForVariable(name.into()))
                }
                Value::Str(s) => s
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| SqlError::WrongTypeForVariable(name.into()))?,
                _ => return Err(SqlError::WrongTypeForVariable(name.into())),
            };
            // MySQL clamps an out-of-range integer (with a warning).
            Ok(Value::Int(n.clamp(min, max)))
        }
        Some(Kind::ReadOnly) => Err(SqlError::ReadOnlyVariable(name.into())),
        Some(Kind::Str) => match v {
            Value::Null => Ok(Value::Str(String::new())),
            other => Ok(Value::Str(crate::types::display(other))),
        },
        None => Ok(v.clone()),
    }
}
