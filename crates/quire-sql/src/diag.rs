//! The diagnostics area (SHOW WARNINGS, `@@warning_count`) and `sql_mode`, as MariaDB 10.11
//! keeps them.
//!
//! Invariants of [`Diagnostics`]:
//! 1. `conditions` holds at most the `max_error_count` in force when each was raised;
//!    `total` and `errors` count every condition raised since the last clear, kept or not
//!    (`@@warning_count`, `@@error_count`, SHOW COUNT(*) WARNINGS).
//! 2. A statement that uses tables clears the area when it starts
//!    ([`Diagnostics::start_using_tables`]); any other statement clears it when it raises its
//!    first condition. So `SELECT 1`, SET, BEGIN or USE leave the last statement's warnings
//!    readable, and SHOW WARNINGS (which raises nothing) never clears them.
//! 3. `statement` counts the conditions the current statement raised: the count the OK and
//!    EOF packets carry (0 for SHOW WARNINGS itself).

use std::fmt;

/// The level of a condition, as SHOW WARNINGS prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Note,
    Warning,
    Error,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Note => "Note",
            Level::Warning => "Warning",
            Level::Error => "Error",
        }
    }
}

/// One row of SHOW WARNINGS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub level: Level,
    pub code: u16,
    pub message: String,
}

/// MariaDB's default `max_error_count`.
pub const MAX_ERROR_COUNT_DEFAULT: usize = 64;

#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    conditions: Vec<Condition>,
    total: u64,
    errors: u64,
    /// The statement the kept conditions belong to, and the one running.
    owner: u64,
    current: u64,
    statement: u64,
}

impl Diagnostics {
    /// A statement starts (invariant 3): it owns nothing yet.
    pub fn start(&mut self) {
        self.current += 1;
        self.statement = 0;
    }

    /// The running statement uses tables: earlier conditions go (invariant 2).
    pub fn start_using_tables(&mut self) {
        if self.owner != self.current {
            self.clear();
            self.owner = self.current;
        }
    }

    fn clear(&mut self) {
        self.conditions.clear();
        self.total = 0;
        self.errors = 0;
    }

    /// Raises a condition of the running statement, kept if fewer than `limit` are.
    pub fn push(&mut self, level: Level, code: u16, message: String, limit: usize) {
        self.start_using_tables();
        self.total += 1;
        self.statement += 1;
        if level == Level::Error {
            self.errors += 1;
        }
        if self.conditions.len() < limit {
            self.conditions.push(Condition {
                level,
                code,
                message,
            });
        }
    }

    /// Conditions raised by the running (or last) statement.
    pub fn statement_count(&self) -> u64 {
        self.statement
    }

    /// `@@warning_count`: every condition since the last clear, errors and notes included.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// `@@error_count`.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    pub fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
}

/// `sql_mode` as a set of MariaDB's bits (bit i is `NAMES[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SqlMode(pub u64);

impl SqlMode {
    /// MariaDB 10.11's names in bit order (`sql_mode_names`): SELECT @@sql_mode prints the
    /// set in this order.
    pub const NAMES: [&'static str; 35] = [
        "REAL_AS_FLOAT",
        "PIPES_AS_CONCAT",
        "ANSI_QUOTES",
        "IGNORE_SPACE",
        "IGNORE_BAD_TABLE_OPTIONS",
        "ONLY_FULL_GROUP_BY",
        "NO_UNSIGNED_SUBTRACTION",
        "NO_DIR_IN_CREATE",
        "POSTGRESQL",
        "ORACLE",
        "MSSQL",
        "DB2",
        "MAXDB",
        "NO_KEY_OPTIONS",
        "NO_TABLE_OPTIONS",
        "NO_FIELD_OPTIONS",
        "MYSQL323",
        "MYSQL40",
        "ANSI",
        "NO_AUTO_VALUE_ON_ZERO",
        "NO_BACKSLASH_ESCAPES",
        "STRICT_TRANS_TABLES",
        "STRICT_ALL_TABLES",
        "NO_ZERO_IN_DATE",
        "NO_ZERO_DATE",
        "ALLOW_INVALID_DATES",
        "ERROR_FOR_DIVISION_BY_ZERO",
        "TRADITIONAL",
        "NO_AUTO_CREATE_USER",
        "HIGH_NOT_PRECEDENCE",
        "NO_ENGINE_SUBSTITUTION",
        "PAD_CHAR_TO_FULL_LENGTH",
        "EMPTY_STRING_IS_NULL",
        "SIMULTANEOUS_ASSIGNMENT",
        "TIME_ROUND_FRACTIONAL",
    ];

    const fn bit(name_index: u32) -> u64 {
        1 << name_index
    }

    pub const PIPES_AS_CONCAT: u64 = Self::bit(1);
    pub const ANSI_QUOTES: u64 = Self::bit(2);
    pub const ONLY_FULL_GROUP_BY: u64 = Self::bit(5);
    pub const NO_BACKSLASH_ESCAPES: u64 = Self::bit(20);
    pub const STRICT_TRANS_TABLES: u64 = Self::bit(21);
    pub const STRICT_ALL_TABLES: u64 = Self::bit(22);
    pub const NO_ZERO_IN_DATE: u64 = Self::bit(23);
    pub const NO_ZERO_DATE: u64 = Self::bit(24);
    pub const ERROR_FOR_DIVISION_BY_ZERO: u64 = Self::bit(26);

    /// The modes that change how a statement is parsed or bound: a plan made under other
    /// ones is made again.
    pub const PLAN_MODES: u64 = Self::PIPES_AS_CONCAT
        | Self::ANSI_QUOTES
        | Self::ONLY_FULL_GROUP_BY
        | Self::NO_BACKSLASH_ESCAPES;

    /// MariaDB's default: STRICT_TRANS_TABLES, ERROR_FOR_DIVISION_BY_ZERO,
    /// NO_AUTO_CREATE_USER, NO_ENGINE_SUBSTITUTION.
    pub const DEFAULT_TEXT: &'static str =
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION";

    pub fn has(self, bits: u64) -> bool {
        self.0 & bits != 0
    }

    /// Every Quire table is transactional: either strict mode makes conversions errors.
    pub fn strict(self) -> bool {
        self.has(Self::STRICT_TRANS_TABLES | Self::STRICT_ALL_TABLES)
    }

    fn index(name: &str) -> Option<u32> {
        Self::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| i as u32)
    }

    /// The modes a combination mode stands for, as MariaDB expands them (`expand_sql_mode`).
    fn expand(bits: u64) -> u64 {
        let b = |n: &str| Self::index(n).map_or(0, |i| 1u64 << i);
        let mut out = bits;
        let group = |names: &[&str]| names.iter().map(|n| b(n)).fold(0, |a, x| a | x);
        let ansi_like = group(&[
            "PIPES_AS_CONCAT",
            "ANSI_QUOTES",
            "IGNORE_SPACE",
            "NO_KEY_OPTIONS",
            "NO_TABLE_OPTIONS",
            "NO_FIELD_OPTIONS",
        ]);
        if bits & b("ANSI") != 0 {
            out |= group(&[
                "REAL_AS_FLOAT",
                "PIPES_AS_CONCAT",
                "ANSI_QUOTES",
                "IGNORE_SPACE",
            ]);
        }
        if bits & (b("POSTGRESQL") | b("MSSQL") | b("DB2")) != 0 {
            out |= ansi_like;
        }
        if bits & b("ORACLE") != 0 {
            out |= ansi_like | group(&["NO_AUTO_CREATE_USER", "SIMULTANEOUS_ASSIGNMENT"]);
        }
        if bits & b("MAXDB") != 0 {
            out |= ansi_like | b("NO_AUTO_CREATE_USER");
        }
        if bits & (b("MYSQL323") | b("MYSQL40")) != 0 {
            out |= b("HIGH_NOT_PRECEDENCE");
        }
        if bits & b("TRADITIONAL") != 0 {
            out |= group(&[
                "STRICT_TRANS_TABLES",
                "STRICT_ALL_TABLES",
                "NO_ZERO_IN_DATE",
                "NO_ZERO_DATE",
                "ERROR_FOR_DIVISION_BY_ZERO",
                "NO_AUTO_CREATE_USER",
                "NO_ENGINE_SUBSTITUTION",
            ]);
        }
        out
    }

    /// `SET sql_mode = 'A,B'`: names in any case and order, empty elements skipped; the
    /// first unknown element is returned as the error (MariaDB's 1231 names it as written).
    pub fn parse(text: &str) -> Result<SqlMode, String> {
        let mut bits = 0u64;
        for part in text.split(',') {
            if part.is_empty() {
                continue;
            }
            match Self::index(part) {
                Some(i) => bits |= 1 << i,
                None => return Err(part.to_string()),
            }
        }
        Ok(SqlMode(Self::expand(bits)))
    }

    /// `SET sql_mode = 8`: the bits themselves (expanded as names are); `None` past the
    /// last mode.
    pub fn from_bits(bits: u64) -> Option<SqlMode> {
        if bits >> Self::NAMES.len() != 0 {
            return None;
        }
        Some(SqlMode(Self::expand(bits)))
    }
}

impl fmt::Display for SqlMode {
    /// The canonical text: names in bit order, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (i, n) in Self::NAMES.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(n)?;
                first = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_bits_are_the_names_positions() {
        for (bit, name) in [
            (SqlMode::STRICT_TRANS_TABLES, "STRICT_TRANS_TABLES"),
            (SqlMode::STRICT_ALL_TABLES, "STRICT_ALL_TABLES"),
            (SqlMode::NO_ZERO_IN_DATE, "NO_ZERO_IN_DATE"),
            (SqlMode::NO_ZERO_DATE, "NO_ZERO_DATE"),
            (
                SqlMode::ERROR_FOR_DIVISION_BY_ZERO,
                "ERROR_FOR_DIVISION_BY_ZERO",
            ),
        ] {
            assert_eq!(SqlMode::NAMES[bit.trailing_zeros() as usize], name);
        }
    }

    #[test]
    fn sql_mode_reads_back_in_mariadbs_order_with_combinations_expanded() {
        let m = SqlMode::parse("no_engine_substitution,,strict_trans_tables").expect("known");
        assert_eq!(m.to_string(), "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION");
        assert_eq!(
            SqlMode::parse("ANSI").expect("known").to_string(),
            "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI"
        );
        assert_eq!(
            SqlMode::parse("TRADITIONAL").expect("known").to_string(),
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
        );
        assert_eq!(
            SqlMode::parse("STRICT_TRANS_TABLES,bogus"),
            Err("bogus".to_string())
        );
        assert_eq!(
            SqlMode::parse(SqlMode::DEFAULT_TEXT)
                .expect("known")
                .to_string(),
            SqlMode::DEFAULT_TEXT
        );
        assert_eq!(
            SqlMode::from_bits(1 << 33).map(|m| m.to_string()),
            Some("SIMULTANEOUS_ASSIGNMENT".into())
        );
        assert_eq!(SqlMode::from_bits(1 << 42), None);
    }

    #[test]
    fn the_first_condition_of_a_statement_clears_the_last_ones() {
        let mut d = Diagnostics::default();
        d.start();
        d.push(Level::Warning, 1365, "Division by 0".into(), 64);
        d.start();
        assert_eq!((d.total(), d.statement_count()), (1, 0));
        d.push(Level::Note, 1265, "x".into(), 64);
        assert_eq!(d.conditions().len(), 1);
        assert_eq!(d.conditions()[0].code, 1265);
        d.start();
        d.start_using_tables();
        assert_eq!(d.total(), 0);
    }

    #[test]
    fn max_error_count_limits_what_is_kept_not_what_is_counted() {
        let mut d = Diagnostics::default();
        d.start();
        for _ in 0..3 {
            d.push(Level::Warning, 1365, "Division by 0".into(), 2);
        }
        assert_eq!((d.total(), d.conditions().len()), (3, 2));
    }
}
