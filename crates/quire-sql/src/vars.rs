//! System variables: InnoDB's names where the meaning is the same, `quire_` for new ones.
//!
//! Engine settings (`innodb_*`, `quire_*`) come from the database's current settings
//! (`DbInner::settings`); SET GLOBAL types and clamps their values as MariaDB 10.11 does
//! ([`engine_value`], [`engine_changes`]) and the engine applies them live. The server's own
//! live in [`VARS`] with their scope and default. A session reads its own value if it set
//! one, else the global.

use quire_engine::config::Config;
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

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Int {
        min: i64,
        max: i64,
    },
    /// A fraction kept with six decimals, as MariaDB shows `long_query_time` (10.000000).
    Double {
        min: f64,
        max: f64,
    },
    Bool,
    /// An unsigned 64-bit count up to 18446744073709551615 (MariaDB's `ha_rows`
    /// variables: `sql_select_limit`, `max_join_size`), whose maximum means "no limit";
    /// below `min` it is clamped with warning 1292, as MariaDB does.
    Rows {
        min: u64,
    },
    Str,
    /// A MariaDB SET-typed variable: a comma-separated list of `members` (any case, kept in
    /// the members' order, lower-cased as MariaDB shows them unless they are upper-case
    /// words), or an integer bitmask of them. `empty` says whether the empty set is a value.
    Set {
        members: &'static [&'static str],
        empty: bool,
    },
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
    // MariaDB 10.11's default: a TIMESTAMP column is NULL-able with DEFAULT NULL like any
    // other, no implicit DEFAULT / ON UPDATE current_timestamp() on the first one. The
    // legacy behaviour (0) is not implemented, so the variable cannot be set.
    v(
        "explicit_defaults_for_timestamp",
        Scope::Global,
        Kind::ReadOnly,
        "1",
    ),
    v("foreign_key_checks", Scope::Both, Kind::Bool, "1"),
    // 0: CHECK constraints are not enforced (check.rs, invariant 4).
    v("check_constraint_checks", Scope::Both, Kind::Bool, "1"),
    // The server sets it from `--set log_error=PATH`; empty: standard error (errlog.rs).
    v("log_error", Scope::Global, Kind::ReadOnly, ""),
    // The server sets these at start from its TLS setup (docs/protocol.md, "TLS").
    v("have_openssl", Scope::Global, Kind::ReadOnly, "DISABLED"),
    // GROUP_CONCAT's result is cut at this many bytes (warning 1260).
    v(
        "group_concat_max_len",
        Scope::Both,
        Kind::Int {
            min: 4,
            max: i64::MAX,
        },
        "1048576",
    ),
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
    // LOAD DATA LOCAL (docs/sql.md, "LOAD DATA"): ON as in MariaDB 10.11.
    v("local_infile", Scope::Global, Kind::Bool, "1"),
    v(
        "lock_wait_timeout",
        Scope::Both,
        Kind::Int {
            min: 0,
            max: 31_536_000,
        },
        "86400",
    ),
    v(
        "join_buffer_size",
        Scope::Both,
        Kind::Int {
            min: 128,
            max: i64::MAX,
        },
        "262144",
    ),
    // The slow query log (quire-server's slowlog.rs): statements slower than
    // long_query_time that examined at least min_examined_row_limit rows.
    v("log_slow_admin_statements", Scope::Both, Kind::Bool, "1"),
    // MariaDB's filter of what is logged; Quire acts on not_using_index only (a statement
    // that scanned a whole table or index is logged even if fast). The other members are
    // kept and shown, as MariaDB's, and change nothing (docs/slow-log.md).
    v(
        "log_slow_filter",
        Scope::Both,
        Kind::Set {
            members: SLOW_FILTER,
            empty: true,
        },
        SLOW_FILTER_DEFAULT,
    ),
    // MariaDB 10.11 keeps this as the not_using_index member of log_slow_filter: setting
    // one changes the other in the same scope (`linked`).
    v(
        "log_queries_not_using_indexes",
        Scope::Both,
        Kind::Bool,
        "0",
    ),
    // Where the logs go. TABLE (mysql.slow_log) is refused: Quire has no log tables, and
    // accepting it would drop entries silently. NONE (alone or with FILE) writes nothing.
    v(
        "log_output",
        Scope::Global,
        Kind::Set {
            members: &["NONE", "FILE", "TABLE"],
            empty: false,
        },
        "FILE",
    ),
    v(
        "long_query_time",
        Scope::Both,
        Kind::Double {
            min: 0.0,
            max: 31_536_000.0,
        },
        "10.000000",
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
        "max_error_count",
        Scope::Both,
        Kind::Int {
            min: 0,
            max: 65_535,
        },
        "64",
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
    // Accepted and shown as MariaDB's; Quire does not refuse a SELECT past it (1104 needs
    // row estimates for every plan, which single-table reads do not have: docs/sql.md,
    // "System variables and SET GLOBAL"). Setting it sets sql_big_selects (`linked`).
    v(
        "max_join_size",
        Scope::Both,
        Kind::Rows { min: 1 },
        "18446744073709551615",
    ),
    // Seconds a statement may run before it is stopped with 1969 (0: no limit); enforced by
    // the server (`Instance::expire_statements`).
    v(
        "max_statement_time",
        Scope::Both,
        Kind::Double {
            min: 0.0,
            max: 31_536_000.0,
        },
        "0",
    ),
    v(
        "min_examined_row_limit",
        Scope::Both,
        Kind::Int {
            min: 0,
            max: 4_294_967_295,
        },
        "0",
    ),
    // A recursive CTE stops after this many rounds (`exec/recursive.rs`).
    v(
        "max_recursive_iterations",
        Scope::Both,
        Kind::Int {
            min: 0,
            max: 4_294_967_295,
        },
        "1000",
    ),
    // Prepared statements of all sessions together (PREPARE and COM_STMT_PREPARE): 1461
    // past it.
    v(
        "max_prepared_stmt_count",
        Scope::Global,
        Kind::Int {
            min: 0,
            max: 4_294_967_295,
        },
        "16382",
    ),
    v(
        "max_user_connections",
        Scope::Global,
        Kind::Int {
            min: 0,
            max: 4_294_967_295,
        },
        "0",
    ),
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
    v("require_secure_transport", Scope::Global, Kind::Bool, "0"),
    v("ssl_ca", Scope::Global, Kind::ReadOnly, ""),
    // Where LOAD DATA INFILE may read server files: Quire's default, empty, allows none
    // (MariaDB's empty allows any); `--set secure_file_priv=DIR` allows DIR's files.
    v("secure_file_priv", Scope::Global, Kind::ReadOnly, ""),
    v("ssl_cert", Scope::Global, Kind::ReadOnly, ""),
    v("ssl_key", Scope::Global, Kind::ReadOnly, ""),
    // Global and session, as in MariaDB 10.11: a session starts with the global value
    // (Session::new) and writes to the log only while both are on.
    v("slow_query_log", Scope::Both, Kind::Bool, "0"),
    // A relative name is in the data directory (MariaDB's default is `<host>-slow.log`).
    v(
        "slow_query_log_file",
        Scope::Global,
        Kind::Str,
        "quire-slow.log",
    ),
    v("sql_auto_is_null", Scope::Both, Kind::Bool, "0"),
    // ON while max_join_size is at its maximum; no SELECT is refused either way (see
    // max_join_size).
    v("sql_big_selects", Scope::Both, Kind::Bool, "1"),
    // 0: notes are not recorded (SessVars::raise); mariadb-dump sets it.
    v("sql_notes", Scope::Both, Kind::Bool, "1"),
    v(
        "sql_mode",
        Scope::Both,
        Kind::Str,
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
    ),
    // mariadb-dump sets it to 1; SHOW CREATE always quotes names (0 changes nothing).
    v("sql_quote_show_create", Scope::Both, Kind::Bool, "1"),
    // ON: an UPDATE or DELETE that reads no key and has no LIMIT is 1175 (`run.rs`,
    // `Session::refuse_unsafe`); the session caches it (`SessVars::safe_updates`).
    v("sql_safe_updates", Scope::Both, Kind::Bool, "0"),
    // The LIMIT of a top-level SELECT (and of the SHOW statements MariaDB answers from
    // information_schema) that has none; cached as `SessVars::select_limit`.
    v(
        "sql_select_limit",
        Scope::Both,
        Kind::Rows { min: 0 },
        "18446744073709551615",
    ),
    v("storage_engine", Scope::Both, Kind::Str, "InnoDB"),
    v("system_time_zone", Scope::Global, Kind::ReadOnly, "UTC"),
    v("time_zone", Scope::Both, Kind::Str, "SYSTEM"),
    // `SET timestamp = n` fixes the session's clock at n seconds since the epoch for
    // every later statement (NOW(), ON UPDATE, defaults), as MariaDB; 0 or DEFAULT: the
    // real time again (`run::ExecEnv::new`).
    v(
        "timestamp",
        Scope::Session,
        Kind::Double {
            min: 0.0,
            max: 2_147_483_647.0,
        },
        "0",
    ),
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

/// What tools and drivers read to learn about the server (mysqld_exporter, mysqltuner,
/// go-sql-driver's tests, replication checks), fixed at what Quire is: set by the server
/// where it knows better (`socket`, `datadir`, `bind_address`), MariaDB 10.11's values
/// otherwise. None of them changes a result, so none can be SET (1238); and a start-up
/// value for one (`--set`, an option file) is not taken (`is_fixed`), so that
/// `read_only=ON` in a my.cnf never shows a server that is not read-only as one. Read with
/// [`VARS`] everywhere (`all_vars`).
pub static INFORMATIONAL: &[Var] = &[
    v("back_log", Scope::Global, Kind::ReadOnly, "80"),
    v("basedir", Scope::Global, Kind::ReadOnly, ""),
    v("bind_address", Scope::Global, Kind::ReadOnly, ""),
    v("binlog_format", Scope::Global, Kind::ReadOnly, "MIXED"),
    v(
        "character_set_filesystem",
        Scope::Global,
        Kind::ReadOnly,
        "binary",
    ),
    v("datadir", Scope::Global, Kind::ReadOnly, ""),
    v(
        "default_tmp_storage_engine",
        Scope::Global,
        Kind::ReadOnly,
        "",
    ),
    v("default_week_format", Scope::Global, Kind::ReadOnly, "0"),
    v(
        "div_precision_increment",
        Scope::Global,
        Kind::ReadOnly,
        "4",
    ),
    v("event_scheduler", Scope::Global, Kind::ReadOnly, "OFF"),
    v("general_log", Scope::Global, Kind::ReadOnly, "0"),
    v("have_query_cache", Scope::Global, Kind::ReadOnly, "NO"),
    v(
        "innodb_autoinc_lock_mode",
        Scope::Global,
        Kind::ReadOnly,
        "1",
    ),
    v(
        "innodb_default_row_format",
        Scope::Global,
        Kind::ReadOnly,
        "dynamic",
    ),
    v("innodb_file_per_table", Scope::Global, Kind::ReadOnly, "1"),
    v("innodb_strict_mode", Scope::Global, Kind::ReadOnly, "1"),
    v("log_bin", Scope::Global, Kind::ReadOnly, "0"),
    v(
        "log_bin_trust_function_creators",
        Scope::Global,
        Kind::ReadOnly,
        "0",
    ),
    v("lower_case_file_system", Scope::Global, Kind::ReadOnly, "0"),
    v("max_connect_errors", Scope::Global, Kind::ReadOnly, "100"),
    v("old_passwords", Scope::Global, Kind::ReadOnly, "0"),
    v("read_only", Scope::Global, Kind::ReadOnly, "0"),
    v("server_id", Scope::Global, Kind::ReadOnly, "1"),
    v("skip_name_resolve", Scope::Global, Kind::ReadOnly, "0"),
    v("skip_networking", Scope::Global, Kind::ReadOnly, "0"),
    v("socket", Scope::Global, Kind::ReadOnly, ""),
    v("tcp_nodelay", Scope::Global, Kind::ReadOnly, "1"),
    v("tmpdir", Scope::Global, Kind::ReadOnly, "/tmp"),
];

/// Every server variable: [`VARS`], then [`INFORMATIONAL`].
fn all_vars() -> impl Iterator<Item = &'static Var> {
    VARS.iter().chain(INFORMATIONAL)
}

/// Whether `name` is one of [`INFORMATIONAL`].
pub fn is_fixed(name: &str) -> bool {
    INFORMATIONAL
        .iter()
        .any(|v| v.name.eq_ignore_ascii_case(name))
}

/// The read-only variables above that are booleans: 0 / 1 to `@@name`, OFF / ON in SHOW
/// VARIABLES, as MariaDB shows them.
const READ_ONLY_BOOLS: &[&str] = &[
    "explicit_defaults_for_timestamp",
    "general_log",
    "innodb_file_per_table",
    "innodb_strict_mode",
    "log_bin",
    "log_bin_trust_function_creators",
    "lower_case_file_system",
    "old_passwords",
    "performance_schema",
    "read_only",
    "skip_name_resolve",
    "skip_networking",
    "tcp_nodelay",
];

/// `log_slow_filter`'s members, in MariaDB 10.11's order (its bitmask's bits).
pub const SLOW_FILTER: &[&str] = &[
    "admin",
    "filesort",
    "filesort_on_disk",
    "filesort_priority_queue",
    "full_join",
    "full_scan",
    "not_using_index",
    "query_cache",
    "query_cache_miss",
    "tmp_table",
    "tmp_table_on_disk",
];

/// `log_slow_filter`'s default: every member but not_using_index.
const SLOW_FILTER_DEFAULT: &str = "admin,filesort,filesort_on_disk,filesort_priority_queue,\
full_join,full_scan,query_cache,query_cache_miss,tmp_table,tmp_table_on_disk";

/// MariaDB 10.11's other names of the slow log's variables, as (alias, the variable): the
/// same value under both names, and SHOW VARIABLES lists both.
pub const ALIASES: &[(&str, &str)] = &[
    ("log_slow_min_examined_row_limit", "min_examined_row_limit"),
    ("log_slow_query", "slow_query_log"),
    ("log_slow_query_file", "slow_query_log_file"),
    ("log_slow_query_time", "long_query_time"),
];

/// The variable `name` names: itself, or the one it is an alias of.
pub fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, v)| v)
}

/// The variable whose value a SET of `name` to `v` (normalized) also changes, with its new
/// value: `log_queries_not_using_indexes` is the not_using_index member of
/// `log_slow_filter` (`filter` is that scope's current filter), and back.
pub fn linked(name: &str, v: &Value, filter: Option<&Value>) -> Option<(&'static str, Value)> {
    match name {
        "log_queries_not_using_indexes" => {
            let on = matches!(v, Value::Int(1));
            let cur = filter.map(crate::types::display).unwrap_or_default();
            let mut members: Vec<&str> = cur
                .split(',')
                .filter(|m| !m.is_empty() && *m != "not_using_index")
                .collect();
            if on {
                members.push("not_using_index");
            }
            let set = set_value(SLOW_FILTER, &members.join(","), true)?;
            Some(("log_slow_filter", Value::Str(set)))
        }
        "log_slow_filter" => {
            let on = set_has(v, "not_using_index");
            Some(("log_queries_not_using_indexes", Value::Int(i64::from(on))))
        }
        // MariaDB's `fix_max_join_size`: big selects are allowed exactly while there is no
        // limit (`SET max_join_size = DEFAULT` turns them back on).
        "max_join_size" => {
            let unlimited = matches!(v, Value::UInt(u64::MAX));
            Some(("sql_big_selects", Value::Int(i64::from(unlimited))))
        }
        _ => None,
    }
}

/// Whether SET-typed value `v` holds `member`.
pub fn set_has(v: &Value, member: &str) -> bool {
    crate::types::display(v)
        .split(',')
        .any(|m| m.eq_ignore_ascii_case(member))
}

/// `text` as a value of a SET-typed variable of `members`: each element one of them (any
/// case; empty elements are skipped, as MariaDB does), in the members' order; `None` if one
/// is not a member, or the set is empty and `empty` says it may not be.
fn set_value(members: &[&str], text: &str, empty: bool) -> Option<String> {
    let mut bits = 0u64;
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let i = members.iter().position(|m| m.eq_ignore_ascii_case(part))?;
        bits |= 1 << i;
    }
    set_from_bits(members, bits, empty)
}

fn set_from_bits(members: &[&str], bits: u64, empty: bool) -> Option<String> {
    if bits >> members.len() != 0 || (bits == 0 && !empty) {
        return None;
    }
    let names: Vec<&str> = (0..members.len())
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| members[i])
        .collect();
    Some(names.join(","))
}

/// The engine settings that are also per session.
pub const ENGINE_SESSION: &[&str] = &["innodb_lock_wait_timeout"];

/// How SET takes an engine setting's value: MariaDB 10.11's type and range for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EngineKind {
    /// An integer; out of range is clamped with warning 1292; a string or a decimal is
    /// 1232.
    Int { min: i64, max: i64 },
    /// A number; out of range is clamped with warning 1292; a string is 1232.
    Float { min: f64, max: f64 },
    /// ON/OFF, 1/0, TRUE/FALSE; anything else is 1231, a decimal 1232.
    Bool,
    /// Fixed at start: 1238 (not in `Config::DYNAMIC`).
    ReadOnly,
}

/// The kind of engine setting `name` (a `Config::NAMES` entry).
pub fn engine_kind(name: &str) -> EngineKind {
    use EngineKind::*;
    let u32_max = i64::from(u32::MAX);
    match name {
        "innodb_buffer_pool_size" => Int {
            min: 2 << 20,
            max: i64::MAX,
        },
        "innodb_log_file_size" => Int {
            min: 4 << 20,
            max: 512 << 30,
        },
        // 3 is MariaDB's (deprecated) alias of 1; Quire refuses it (1231).
        "innodb_flush_log_at_trx_commit" => Int { min: 0, max: 3 },
        "innodb_log_file_buffering" | "innodb_adaptive_flushing" | "innodb_stats_auto_recalc" => {
            Bool
        }
        "innodb_max_dirty_pages_pct" | "innodb_max_dirty_pages_pct_lwm" => Float {
            min: 0.0,
            max: 99.999,
        },
        "innodb_adaptive_flushing_lwm" => Float {
            min: 0.0,
            max: 70.0,
        },
        "innodb_io_capacity" | "innodb_io_capacity_max" => Int {
            min: 100,
            max: IO_CAPACITY_MAX,
        },
        "innodb_old_blocks_pct" => Int { min: 5, max: 95 },
        "innodb_old_blocks_time" => Int {
            min: 0,
            max: u32_max,
        },
        "innodb_lock_wait_timeout" => Int {
            min: 0,
            max: 100_000_000,
        },
        "innodb_purge_threads" => Int { min: 1, max: 32 },
        // MariaDB's minimum is 1; Quire's 0 is its default, "automatic" (docs/purge.md).
        "innodb_purge_batch_size" => Int { min: 0, max: 5000 },
        "innodb_max_purge_lag" => Int {
            min: 0,
            max: u32_max,
        },
        "innodb_max_purge_lag_delay" => Int {
            min: 0,
            max: 10_000_000,
        },
        // MariaDB accepts 0..3; Quire does 0 and 1 and refuses 2 and 3 (1231).
        "innodb_fast_shutdown" => Int { min: 0, max: 3 },
        "innodb_online_alter_log_max_size" => Int {
            min: 65536,
            max: i64::MAX,
        },
        _ => ReadOnly,
    }
}

/// Quire's upper bound of `innodb_io_capacity` and `_max` (`Config::set`'s).
const IO_CAPACITY_MAX: i64 = 1_000_000_000;

/// An engine setting's default (`SET GLOBAL x = DEFAULT`), as SET would take it typed.
pub fn engine_default(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        Value::Int(i)
    } else if let Ok(f) = text.parse::<f64>() {
        Value::Double(f)
    } else {
        Value::Str(text.into())
    }
}

type Warnings = Vec<(String, u16, String)>;

fn warn(w: &mut Warnings, code: u16, text: String) {
    w.push(("Warning".into(), code, text));
}

/// `v` as the text `Config::set` takes for engine setting `name` of `kind`, converted and
/// clamped as MariaDB does (warning 1292 "Truncated incorrect … value").
pub fn engine_value(name: &str, kind: EngineKind, v: &Value, w: &mut Warnings) -> Result<String> {
    let wrong_type = || SqlError::WrongTypeForVariable(name.into());
    let wrong_value = |shown: String| SqlError::WrongValueForVariable {
        name: name.into(),
        value: shown,
    };
    if matches!(v, Value::Null) {
        return Err(wrong_value("NULL".into()));
    }
    let shown = crate::types::display(v);
    let truncated = |w: &mut Warnings| {
        warn(
            w,
            1292,
            format!("Truncated incorrect {name} value: '{shown}'"),
        )
    };
    Ok(match kind {
        EngineKind::ReadOnly => return Err(SqlError::ReadOnlyVariable(name.into())),
        EngineKind::Int { min, max } => {
            let n = match v {
                Value::Int(i) => *i,
                Value::UInt(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                _ => return Err(wrong_type()),
            };
            let c = n.clamp(min, max);
            if c != n {
                truncated(w);
            }
            c.to_string()
        }
        EngineKind::Float { min, max } => {
            let f = match v {
                Value::Int(i) => *i as f64,
                Value::UInt(u) => *u as f64,
                Value::Double(d) => *d,
                Value::Decimal(_) => shown.parse::<f64>().map_err(|_| wrong_type())?,
                _ => return Err(wrong_type()),
            };
            let c = f.clamp(min, max);
            if c != f {
                truncated(w);
            }
            c.to_string()
        }
        EngineKind::Bool => match v {
            Value::Int(0) | Value::UInt(0) => "OFF".into(),
            Value::Int(1) | Value::UInt(1) => "ON".into(),
            Value::Str(s) => match s.to_ascii_uppercase().as_str() {
                "ON" | "TRUE" => "ON".into(),
                "OFF" | "FALSE" => "OFF".into(),
                _ => return Err(wrong_value(shown)),
            },
            Value::Int(_) | Value::UInt(_) => return Err(wrong_value(shown)),
            _ => return Err(wrong_type()),
        },
    })
}

/// The settings one `SET GLOBAL name = v` changes, as (name, `Config::set` text): the one
/// named, and those MariaDB moves with it, with its warnings (1210):
/// - `innodb_io_capacity` above `innodb_io_capacity_max` raises the maximum to twice it;
///   `innodb_io_capacity_max` below `innodb_io_capacity` lowers the capacity to it;
/// - `innodb_max_dirty_pages_pct_lwm` above `innodb_max_dirty_pages_pct` is cut to it;
///   `innodb_max_dirty_pages_pct` below the low-water mark lowers the mark to it;
/// - `innodb_log_file_size` is cut to a multiple of 4096 and must be at least
///   `innodb_log_buffer_size` (1210).
pub fn engine_changes(
    name: &str,
    kind: EngineKind,
    v: &Value,
    cur: &quire_engine::config::Config,
    w: &mut Warnings,
) -> Result<Vec<(String, String)>> {
    let text = engine_value(name, kind, v, w)?;
    let mut out = vec![(name.to_string(), text.clone())];
    let num = |t: &str| t.parse::<f64>().unwrap_or(0.0);
    match name {
        "innodb_io_capacity" if num(&text) as u64 > cur.io_capacity_max => {
            let n = num(&text) as i64;
            let max = (n.saturating_mul(2)).min(IO_CAPACITY_MAX);
            warn(
                w,
                1210,
                format!(
                    "Setting innodb_io_capacity to {n} higher than innodb_io_capacity_max {}",
                    cur.io_capacity_max
                ),
            );
            warn(w, 1210, format!("Setting innodb_max_io_capacity to {max}"));
            out.insert(0, ("innodb_io_capacity_max".into(), max.to_string()));
        }
        "innodb_io_capacity_max" if (num(&text) as u64) < cur.io_capacity => {
            warn(
                w,
                1210,
                format!(
                    "Setting innodb_io_capacity_max {text} lower than innodb_io_capacity {}.",
                    cur.io_capacity
                ),
            );
            warn(w, 1210, format!("Setting innodb_io_capacity to {text}"));
            out.push(("innodb_io_capacity".into(), text.clone()));
        }
        "innodb_max_dirty_pages_pct_lwm" if num(&text) > cur.max_dirty_pages_pct => {
            warn(
                w,
                1210,
                "innodb_max_dirty_pages_pct_lwm cannot be set higher than innodb_max_dirty_pages_pct."
                    .into(),
            );
            warn(
                w,
                1210,
                format!(
                    "Setting innodb_max_dirty_page_pct_lwm to {:.6}",
                    cur.max_dirty_pages_pct
                ),
            );
            out = vec![(name.into(), cur.max_dirty_pages_pct.to_string())];
        }
        "innodb_max_dirty_pages_pct" if num(&text) < cur.max_dirty_pages_pct_lwm => {
            warn(
                w,
                1210,
                "innodb_max_dirty_pages_pct cannot be set lower than innodb_max_dirty_pages_pct_lwm."
                    .into(),
            );
            warn(
                w,
                1210,
                format!(
                    "Lowering innodb_max_dirty_page_pct_lwm to {:.6}",
                    num(&text)
                ),
            );
            out.push(("innodb_max_dirty_pages_pct_lwm".into(), text.clone()));
        }
        "innodb_log_file_size" => {
            let n = num(&text) as u64;
            let cut = n - n % 4096;
            if cut != n && w.last().is_none_or(|x| x.1 != 1292) {
                warn(
                    w,
                    1292,
                    format!(
                        "Truncated incorrect {name} value: '{}'",
                        crate::types::display(v)
                    ),
                );
            }
            if cut < cur.log_buffer_size {
                return Err(SqlError::InvalidArgument(format!(
                    "innodb_log_file_size must be at least innodb_log_buffer_size={}",
                    cur.log_buffer_size
                )));
            }
            out = vec![(name.into(), cut.to_string())];
        }
        _ => {}
    }
    Ok(out)
}

/// Whether `name` is a variable with only a global value: a server variable of global scope
/// or an engine setting that is not per session.
pub fn is_global_only(name: &str) -> bool {
    match find(name) {
        // MariaDB gives it a (read-only) session value too.
        Some(v) if v.name == "max_user_connections" => false,
        Some(v) => v.scope == Scope::Global,
        None => Config::NAMES.contains(&name) && !ENGINE_SESSION.contains(&name),
    }
}

pub fn find(name: &str) -> Option<&'static Var> {
    by_name(canonical(name)).map(|(v, _)| *v)
}

/// Each of VARS by name, with its default already parsed: statements read a few variables
/// each (`foreign_key_checks`, `lock_wait_timeout`, …), most of them never SET, so
/// `global` answers them from here rather than by a scan and a parse.
fn by_name(name: &str) -> Option<&'static (&'static Var, Value)> {
    static INDEX: std::sync::OnceLock<
        quire_engine::hash::Map<&'static str, (&'static Var, Value)>,
    > = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            all_vars()
                .map(|v| (v.name, (v, parse_default(v))))
                .collect()
        })
        .get(name)
}

/// The global values the server keeps (SET GLOBAL of a server variable).
#[derive(Default)]
pub struct Globals {
    pub values: quire_engine::hash::Map<String, Value>,
}

fn parse_default(v: &Var) -> Value {
    match v.kind {
        Kind::Int { .. } | Kind::Bool => v
            .default
            .parse::<i64>()
            .map(Value::Int)
            .or_else(|_| v.default.parse::<u64>().map(Value::UInt))
            .unwrap_or_else(|_| Value::Str(v.default.into())),
        Kind::Rows { .. } => v
            .default
            .parse::<u64>()
            .map_or_else(|_| Value::Str(v.default.into()), Value::UInt),
        _ => Value::Str(v.default.into()),
    }
}

/// A server variable's default as SET takes a value (`SET x = DEFAULT`): typed, so that a
/// variable that refuses strings (`sql_select_limit`, 1232) takes its own default.
pub fn default_value(name: &str) -> Option<Value> {
    by_name(canonical(name)).map(|(_, d)| d.clone())
}

/// How `@@name` reads, as MariaDB types its result column: integers as BIGINT UNSIGNED,
/// booleans as a 1-wide BIGINT, the engine's fractional settings as DOUBLE with 6 decimals,
/// the rest as text. A driver decodes the value by this type (`SELECT @@max_allowed_packet`
/// is a number to PyMySQL, a `u64` to sqlx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    Unsigned,
    Bool,
    Double,
    Text,
}

pub fn var_type(name: &str) -> VarType {
    match name {
        "warning_count" | "error_count" | "last_insert_id" | "identity" | "in_transaction"
        | "pseudo_thread_id" | "thread_id" => return VarType::Unsigned,
        n if READ_ONLY_BOOLS.contains(&n) => return VarType::Bool,
        _ => {}
    }
    if let Some(v) = find(name) {
        return match v.kind {
            Kind::Int { .. } | Kind::Rows { .. } => VarType::Unsigned,
            Kind::Bool => VarType::Bool,
            Kind::Double { .. } => VarType::Double,
            Kind::Str | Kind::Set { .. } => VarType::Text,
            Kind::ReadOnly if v.default.parse::<u64>().is_ok() => VarType::Unsigned,
            Kind::ReadOnly => VarType::Text,
        };
    }
    match engine_kind(name) {
        EngineKind::Int { .. } => VarType::Unsigned,
        EngineKind::Float { .. } => VarType::Double,
        EngineKind::Bool => VarType::Bool,
        // Fixed at start: typed by what a default configuration holds.
        EngineKind::ReadOnly => match Config::default().get(name).as_deref() {
            Some("ON" | "OFF") => VarType::Bool,
            Some(t) if t.parse::<u64>().is_ok() => VarType::Unsigned,
            _ => VarType::Text,
        },
    }
}

/// `v`, the value of `@@name`, as a value of its [`VarType`].
pub fn typed_var(name: &str, v: Value) -> Value {
    match (var_type(name), v) {
        (VarType::Unsigned, Value::Int(i)) if i >= 0 => Value::UInt(i as u64),
        (VarType::Unsigned, Value::Str(s)) => s.parse().map_or(Value::Str(s), Value::UInt),
        (VarType::Double, Value::Str(s)) => s.parse().map_or(Value::Str(s), Value::Double),
        (VarType::Text, Value::Int(i)) => Value::Str(i.to_string()),
        (VarType::Text, Value::UInt(u)) => Value::Str(u.to_string()),
        (_, v) => v,
    }
}

/// A global value: the server's, else the engine's current settings.
pub fn global(inst: &Instance<'_>, name: &str) -> Option<Value> {
    let name = canonical(name);
    if let Some(v) = inst.globals.read().values.get(name) {
        return Some(v.clone());
    }
    if let Some((_, default)) = by_name(name) {
        return Some(default.clone());
    }
    if !Config::NAMES.contains(&name) {
        return None;
    }
    inst.db
        .settings()
        .get(name)
        .map(|v| engine_setting_value(name, v))
}

/// An engine setting's text as @@GLOBAL gives it: ON/OFF as 1/0 (SHOW VARIABLES writes
/// them back as ON/OFF, as for the server's booleans), integers as integers, MariaDB's
/// double settings with six decimals (`75.000000`).
fn engine_setting_value(name: &str, text: String) -> Value {
    if let (EngineKind::Float { .. }, Ok(f)) = (engine_kind(name), text.parse::<f64>()) {
        return Value::Str(format!("{f:.6}"));
    }
    match text.as_str() {
        "ON" => Value::Int(1),
        "OFF" => Value::Int(0),
        _ => match text.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Str(text),
        },
    }
}

/// Whether variable `name` is a boolean (shown as ON/OFF by SHOW VARIABLES).
pub fn is_bool(name: &str) -> bool {
    find(name).is_some_and(|d| d.kind == Kind::Bool)
        || READ_ONLY_BOOLS.contains(&name)
        || matches!(
            name,
            "innodb_doublewrite"
                | "innodb_log_file_buffering"
                | "innodb_adaptive_flushing"
                | "innodb_stats_auto_recalc"
        )
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
    let mut out: Vec<(String, Value)> = all_vars()
        .filter_map(|v| global(inst, v.name).map(|x| (v.name.to_string(), x)))
        .collect();
    for (n, v) in inst.db.settings().list() {
        out.push((n.to_string(), engine_setting_value(n, v)));
    }
    for (alias, name) in ALIASES {
        if let Some(v) = global(inst, name) {
            out.push((alias.to_string(), v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

pub fn is_known(_inst: &Instance<'_>, name: &str) -> bool {
    find(name).is_some() || Config::NAMES.contains(&name)
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
    if name == "time_zone" {
        // SYSTEM, UTC or an offset (`tz.rs`), kept as MariaDB shows it back; a named zone
        // needs the time zone tables (1298, as MariaDB without them).
        let s = match v {
            Value::Null => return Err(bad()),
            Value::Str(s) => s.clone(),
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            _ => return Err(SqlError::WrongTypeForVariable(name.into())),
        };
        return crate::tz::canonical_name(&s)
            .map(Value::Str)
            .ok_or(SqlError::UnknownTimeZone(s));
    }
    let kind = find(name).map(|x| x.kind);
    match kind {
        Some(Kind::Set { members, empty }) => {
            let set = match v {
                Value::Int(i) => u64::try_from(*i)
                    .ok()
                    .and_then(|b| set_from_bits(members, b, empty)),
                Value::UInt(b) => set_from_bits(members, *b, empty),
                Value::Str(s) => set_value(members, s, empty),
                _ => None,
            };
            match set {
                // Quire has no log tables (see `log_output` in VARS).
                Some(s) if name == "log_output" && s.split(',').any(|m| m == "TABLE") => Err(bad()),
                Some(s) => Ok(Value::Str(s)),
                None => Err(bad()),
            }
        }
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
        Some(Kind::Rows { min }) => {
            // As MariaDB's `ha_rows` variables take a value: a negative one is below the
            // minimum (clamped, the caller warns); a decimal or a string is 1232; past
            // the maximum (only a DECIMAL literal can be) is 1232 too.
            let n = match v {
                Value::Int(i) => u64::try_from(*i).unwrap_or(0),
                Value::UInt(u) => *u,
                _ => return Err(SqlError::WrongTypeForVariable(name.into())),
            };
            Ok(Value::UInt(n.max(min)))
        }
        Some(Kind::Double { min, max }) => {
            let x = match v {
                Value::Int(i) => *i as f64,
                Value::UInt(u) => *u as f64,
                Value::Double(d) => *d,
                Value::Decimal(_) => crate::types::num(v),
                Value::Str(s) => s
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| SqlError::WrongTypeForVariable(name.into()))?,
                _ => return Err(SqlError::WrongTypeForVariable(name.into())),
            };
            if !x.is_finite() {
                return Err(SqlError::WrongTypeForVariable(name.into()));
            }
            Ok(Value::Str(format!("{:.6}", x.clamp(min, max))))
        }
        Some(Kind::ReadOnly) => Err(SqlError::ReadOnlyVariable(name.into())),
        Some(Kind::Str) => match v {
            Value::Null => Ok(Value::Str(String::new())),
            other => Ok(Value::Str(crate::types::display(other))),
        },
        None => Ok(v.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_engine::config::Config;

    #[test]
    fn engine_settings_are_dynamic_exactly_where_the_engine_applies_them() {
        for name in Config::NAMES {
            assert_eq!(
                engine_kind(name) != EngineKind::ReadOnly,
                Config::DYNAMIC.contains(name),
                "{name}"
            );
        }
        // Every value the SQL layer produces in range is one the engine accepts.
        for name in Config::DYNAMIC {
            let text = match engine_kind(name) {
                EngineKind::Int { min, .. } => min.to_string(),
                EngineKind::Float { max, .. } => max.to_string(),
                EngineKind::Bool => "ON".into(),
                EngineKind::ReadOnly => unreachable!("dynamic"),
            };
            let mut c = Config::default();
            let ok = c.set(name, &text).is_ok();
            // MariaDB's minimum of these is below what Quire's engine does.
            let refused = matches!(
                *name,
                "innodb_flush_log_at_trx_commit" | "innodb_fast_shutdown"
            );
            assert!(ok || refused, "{name}={text}");
        }
    }

    #[test]
    fn set_global_values_are_clamped_and_typed_as_mariadb_does() {
        let mut w = Vec::new();
        let k = engine_kind("innodb_io_capacity");
        assert_eq!(
            engine_value("innodb_io_capacity", k, &Value::Int(50), &mut w).expect("clamped"),
            "100"
        );
        assert_eq!(w[0].1, 1292);
        assert!(matches!(
            engine_value("innodb_io_capacity", k, &Value::Str("300".into()), &mut w),
            Err(SqlError::WrongTypeForVariable(_))
        ));
        let b = engine_kind("innodb_adaptive_flushing");
        assert!(matches!(
            engine_value("innodb_adaptive_flushing", b, &Value::Int(2), &mut w),
            Err(SqlError::WrongValueForVariable { .. })
        ));
        assert!(matches!(
            engine_value("innodb_adaptive_flushing", b, &Value::Null, &mut w),
            Err(SqlError::WrongValueForVariable { .. })
        ));
        let cur = Config::default();
        let mut w = Vec::new();
        let ch = engine_changes("innodb_io_capacity", k, &Value::Int(30_000), &cur, &mut w)
            .expect("changes");
        assert_eq!(
            ch,
            vec![
                ("innodb_io_capacity_max".to_string(), "60000".to_string()),
                ("innodb_io_capacity".to_string(), "30000".to_string())
            ]
        );
        assert_eq!(w.len(), 2);
        let e = engine_changes(
            "innodb_log_file_size",
            engine_kind("innodb_log_file_size"),
            &Value::Int(4 << 20),
            &cur,
            &mut w,
        )
        .expect_err("below the log buffer");
        assert!(
            e.to_string().contains("innodb_log_buffer_size=16777216"),
            "{e}"
        );
    }
}
