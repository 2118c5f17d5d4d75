//! Every error a client can see, as a MySQL error code and SQLSTATE: the one table
//! (STYLE.md 5: typed errors below, codes only at the server boundary).
//!
//! SQLSTATEs are MariaDB's (`sql_state.h`), so clients that branch on them (retry on 40001,
//! ...) behave as they do against MariaDB.

use quire_sql::SqlError;

/// A packet the server sends as ERR: code, SQLSTATE, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
}

impl WireError {
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> Self {
        WireError {
            code,
            state,
            message: message.into(),
        }
    }
}

/// Errors the protocol itself raises (no `SqlError` behind them).
pub mod proto {
    use super::WireError;

    /// ER_CON_COUNT_ERROR, sent instead of the greeting.
    pub fn too_many_connections() -> WireError {
        WireError::new(1040, "08004", "Too many connections")
    }
    /// ER_ACCESS_DENIED_ERROR.
    pub fn access_denied(user: &str, host: &str, used_password: bool) -> WireError {
        let yes = if used_password { "YES" } else { "NO" };
        WireError::new(
            1045,
            "28000",
            format!("Access denied for user '{user}'@'{host}' (using password: {yes})"),
        )
    }
    /// ER_SECURE_TRANSPORT_REQUIRED: a TCP connection without TLS while
    /// require_secure_transport is ON.
    pub fn secure_transport_required() -> WireError {
        WireError::new(
            3159,
            "08004",
            "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
        )
    }
    /// ER_TOO_MANY_USER_CONNECTIONS: over max_user_connections.
    pub fn too_many_user_connections(user: &str) -> WireError {
        WireError::new(
            1203,
            "42000",
            format!("User {user} already has more than 'max_user_connections' active connections"),
        )
    }
    /// ER_USER_LIMIT_REACHED: over the account's own `WITH MAX_USER_CONNECTIONS n`.
    pub fn user_limit_reached(user: &str, limit: i64) -> WireError {
        WireError::new(
            1226,
            "42000",
            format!(
                "User '{user}' has exceeded the 'max_user_connections' resource (current value: {limit})"
            ),
        )
    }
    /// ER_UNKNOWN_COM_ERROR.
    pub fn unknown_command() -> WireError {
        WireError::new(1047, "08S01", "Unknown command")
    }
    /// ER_NET_PACKET_TOO_LARGE.
    pub fn packet_too_large() -> WireError {
        WireError::new(
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes",
        )
    }
    /// ER_NET_PACKETS_OUT_OF_ORDER.
    pub fn packets_out_of_order() -> WireError {
        WireError::new(1156, "08S01", "Got packets out of order")
    }
    /// ER_NOT_SUPPORTED_AUTH_MODE: a client without the 4.1 protocol.
    pub fn auth_mode_not_supported() -> WireError {
        WireError::new(
            1251,
            "08004",
            "Client does not support authentication protocol requested by server; consider upgrading MariaDB client",
        )
    }
    /// ER_MALFORMED_PACKET: a command whose body does not parse.
    pub fn malformed_packet() -> WireError {
        WireError::new(1835, "HY000", "Malformed communication packet")
    }
    /// ER_ACCOUNT_HAS_BEEN_LOCKED: a locked account's login.
    pub fn account_locked() -> WireError {
        WireError::new(4151, "HY000", "Access denied, this account is locked")
    }
    /// ER_DBACCESS_DENIED_ERROR at connect (the database asked for in the handshake).
    pub fn db_access_denied(user: &str, host: &str, db: &str) -> WireError {
        WireError::new(
            1044,
            "42000",
            format!("Access denied for user '{user}'@'{host}' to database '{db}'"),
        )
    }
    /// ER_HANDSHAKE_ERROR: the handshake response does not parse.
    pub fn bad_handshake() -> WireError {
        WireError::new(1043, "08S01", "Bad handshake")
    }
}

/// The code and SQLSTATE of a SQL-layer error, `None` for [`SqlError::Sink`] (the client
/// is gone: nothing to send). The codes are the ones written on the variants in
/// `quire-sql/src/error.rs`; a test below holds the two together.
pub fn code_of(e: &SqlError) -> Option<(u16, &'static str)> {
    use SqlError::*;
    Some(match e {
        Parse { .. } => (1064, "42000"),
        EmptyQuery => (1065, "42000"),
        Unsupported(_) => (1235, "42000"),
        NoDatabaseSelected => (1046, "3D000"),
        UnknownDatabase(_) => (1049, "42000"),
        UnknownCollation(_) => (1273, "HY000"),
        UnknownCharset(_) => (1115, "42000"),
        CollationCharsetMismatch { .. } => (1253, "42000"),
        IllegalMixOfCollations(_) => (1267, "HY000"),
        DatabaseExists(_) => (1007, "HY000"),
        DropMissingDatabase(_) => (1008, "HY000"),
        NoSuchTable { .. } => (1146, "42S02"),
        UnknownTable(_) => (1051, "42S02"),
        TableNotLocked(_) => (1100, "HY000"),
        TableLockedForRead(_) => (1099, "HY000"),
        TableExists(_) => (1050, "42S01"),
        UnknownColumn { .. } => (1054, "42S22"),
        AmbiguousColumn { .. } => (1052, "23000"),
        NotUniqueTable(_) => (1066, "42000"),
        UnknownTableInMultiDelete(_) => (1109, "42S02"),
        TooManyTables(_) => (1116, "HY000"),
        SubqueryRows => (1242, "21000"),
        DuplicateQueryName(_) => (4004, "HY000"),
        WindowPlacement => (4015, "HY000"),
        WindowAsArgument => (4074, "HY000"),
        WindowFrameNotAllowed(_) => (4017, "HY000"),
        WindowNoOrder(_) => (4018, "HY000"),
        RangeFrameOrderBy => (4019, "HY000"),
        RowsFrameType => (4020, "HY000"),
        RangeFrameType => (4021, "HY000"),
        NtileArgument => (4024, "HY000"),
        WindowName(_) => (4009, "HY000"),
        DuplicateWindowName(_) => (4010, "HY000"),
        WindowRefPartition(_) => (4011, "HY000"),
        WindowRefOrder(_) => (4012, "HY000"),
        WindowRefFrame(_) => (4013, "HY000"),
        FrameBounds => (4014, "HY000"),
        MariaDbUnsupported(_) => (1235, "42000"),
        RecursiveWithoutAnchors(_) => (4005, "HY000"),
        RecursiveRestrictions(_) => (4008, "HY000"),
        CteColumns => (4002, "HY000"),
        UnknownView(_) => (4092, "42S02"),
        WrongObject { .. } => (1347, "HY000"),
        IsAView(_) => (1965, "42S02"),
        ViewInvalid { .. } => (1356, "HY000"),
        ViewTemporary(_) => (1352, "HY000"),
        ViewColumnCount => (1353, "HY000"),
        NotUpdatable { .. } => (1288, "HY000"),
        NotInsertable { .. } => (1471, "HY000"),
        UnknownInfoTable(_) => (1109, "42S02"),
        NonUpdatableColumn(_) => (1348, "HY000"),
        CheckOptionNonUpdatable(_) => (1368, "HY000"),
        InfoSchemaDenied { .. } => (1044, "42000"),
        SpecifiedTwice { .. } => (1093, "HY000"),
        DuplicateColumn(_) => (1060, "42S21"),
        DuplicateKeyName(_) => (1061, "42000"),
        CantDropKey(_) => (1091, "42000"),
        CantDropColumn(_) => (1091, "42000"),
        KeyColumnMissing(_) => (1072, "42000"),
        KeyDoesNotExist { .. } => (1176, "42000"),
        DropAllColumns => (1090, "42000"),
        AlterNotSupported { .. } => (1846, "0A000"),
        AlterAlgorithmNotSupported { .. } => (1845, "0A000"),
        TooDeep(..) => (1436, "HY000"),
        OnlineLogTooBig(_) => (1799, "HY000"),
        DuplicateKey { .. } => (1062, "23000"),
        ValueCount(_) => (1136, "21S01"),
        NullNotAllowed(_) => (1048, "23000"),
        NoDefault(_) => (1364, "HY000"),
        OutOfRange { .. } => (1264, "22003"),
        DataTooLong { .. } => (1406, "22001"),
        IncorrectValue { .. } => (1366, "22007"),
        TruncatedWrongValue { .. } | IncorrectTime { .. } => (1292, "22007"),
        InvalidDefault(_) => (1067, "42000"),
        DuplicatedValueInType { .. } => (1291, "HY000"),
        TooBigSet(_) => (1097, "HY000"),
        ConstraintFailed { .. } => (4025, "23000"),
        DuplicateCheckName(_) => (1826, "HY000"),
        CheckSubquery => (1970, "42000"),
        CheckBadExpression { .. } => (1901, "HY000"),
        CantDropConstraint(_) => (1091, "42000"),
        IllegalValueForType { .. } => (1367, "22007"),
        WrongAutoKey => (1075, "42000"),
        MultiplePrimaryKey => (1068, "42000"),
        KeyTooLong(_) => (1071, "42000"),
        BadDefinition(_) => (1074, "42000"),
        UnknownVariable(_) => (1193, "HY000"),
        ReadOnlyVariable(_) | GlobalVariableRead(_) | SessionVariableRead(_) => (1238, "HY000"),
        NoSecureTransports => (4167, "HY000"),
        SessionOnlyVariable(_) => (1228, "HY000"),
        GlobalOnlyVariable(_) => (1229, "HY000"),
        WrongValueForVariable { .. } => (1231, "42000"),
        WrongTypeForVariable(_) => (1232, "42000"),
        WrongArguments(_) | InvalidArgument(_) => (1210, "HY000"),
        UnknownStatement { .. } | UnknownStatementName { .. } => (1243, "HY000"),
        NotPreparable => (1295, "HY000"),
        WrongUsage(..) => (1221, "HY000"),
        TooManyPreparedStatements(_) => (1461, "42000"),
        NoSuchSavepoint(_) => (1305, "42000"),
        LockWaitTimeout => (1205, "HY000"),
        Deadlock => (1213, "40001"),
        Interrupted => (1317, "70100"),
        StatementTimeout => (1969, "70100"),
        NoSuchThread(_) => (1094, "HY000"),
        ActiveTransaction => (1192, "HY000"),
        NoSuchFunction(_) => (1305, "42000"),
        NoSuchRoutine { .. } => (1305, "42000"),
        NoSuchTrigger => (1360, "HY000"),
        WrongParamCount(_) => (1582, "42000"),
        DifferentColumnCount => (1222, "21000"),
        TooManyRows => (1172, "42000"),
        UpdateWithoutKeyInSafeMode => (1175, "HY000"),
        UnknownTimeZone(_) => (1298, "HY000"),
        OperandColumns(_) => (1241, "21000"),
        IllegalParameterTypes { .. } => (4078, "HY000"),
        InvalidGroupFunction => (1111, "HY000"),
        NotInGroupBy(_) => (1055, "42000"),
        MixOfGroupColumns => (1140, "42000"),
        DivisionByZero => (1365, "22012"),
        ArithmeticOutOfRange { .. } => (1690, "22003"),
        IncorrectLiteral { .. } => (1525, "HY000"),
        TooBigPrecision { .. } => (1426, "42000"),
        DisplayWidth { .. } => (1439, "42000"),
        InvalidOnUpdate(_) => (1294, "HY000"),
        CommentTooLong { kind, .. } => match *kind {
            "table" => (1628, "HY000"),
            "index" => (1688, "HY000"),
            _ => (1629, "HY000"),
        },
        ScaleAbovePrecision(_) => (1427, "42000"),
        TooBigScale { .. } => (1425, "42000"),
        WrongFieldSpec(_) => (1063, "42000"),
        Regex(_) => (1139, "42000"),
        Raised { code, .. } => (*code, raised_state(*code)),
        TableDefinitionChanged => (1412, "HY000"),
        TableFull(_) => (1114, "HY000"),
        DiskFull(_) => (1021, "HY000"),
        ReadOnlyTransaction => (1792, "25006"),
        LocalInfileDisabled => (4166, "HY000"),
        SecureFilePriv => (1290, "HY000"),
        FileUnreadable { .. } => (13, "HY000"),
        PluginNotLoaded(_) => (1524, "HY000"),
        PasswordFormat(_) => (1372, "HY000"),
        IllegalGrant => (1144, "42000"),
        SpecificAccessDenied(_) => (1227, "42000"),
        DbAccessDenied { .. } => (1044, "42000"),
        TableAccessDenied { .. } => (1142, "42000"),
        AccessDenied { .. } => (1045, "28000"),
        OperationFailed { .. } => (1396, "HY000"),
        PasswordNoMatch => (1133, "28000"),
        NoSuchGrant { .. } => (1141, "42000"),
        NoSuchTableGrant { .. } => (1147, "42000"),
        KillDenied(_) => (1095, "HY000"),
        FkNoReferencedRow(_) => (1452, "23000"),
        FkRowIsReferenced(_) => (1451, "23000"),
        FkCascadeTooDeep(_) => (1296, "HY000"),
        FkMalformed { .. } | FkDuplicateName { .. } => (1005, "HY000"),
        FkKeyMismatch(_) => (1239, "42000"),
        FkCantDrop(_) => (1091, "42000"),
        FkIndexNeeded(_) => (1553, "HY000"),
        Engine(_) => (1105, "HY000"),
        Sink(_) => return None,
    })
}

/// The SQLSTATE of a warning that strict mode raised to an error: its code's, as
/// MariaDB's `sql_state.h` gives it.
fn raised_state(code: u16) -> &'static str {
    match code {
        1264 | 1690 => "22003",
        1261 | 1262 | 1265 => "01000",
        1263 => "22004",
        1292 | 1366 => "22007",
        1365 => "22012",
        1406 => "22001",
        1048 | 1062 => "23000",
        _ => "HY000",
    }
}

/// The ERR packet for a SQL-layer error; `None` when the client is gone.
pub fn to_wire(e: &SqlError) -> Option<WireError> {
    code_of(e).map(|(code, state)| WireError::new(code, state, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_engine::table::DbError;
    use quire_sql::SinkError;
    use std::collections::BTreeMap;

    /// One value of every variant (the `match` in `code_of` already proves the table has no
    /// hole; this list lets the test compare codes with error.rs's doc comments).
    fn every_variant() -> Vec<SqlError> {
        use SqlError::*;
        let s = || String::from("x");
        vec![
            Parse { near: s(), line: 1 },
            EmptyQuery,
            Unsupported(s()),
            NoDatabaseSelected,
            UnknownDatabase(s()),
            UnknownCollation(s()),
            UnknownCharset(s()),
            CollationCharsetMismatch {
                collation: s(),
                charset: s(),
            },
            IllegalMixOfCollations(s()),
            DatabaseExists(s()),
            DropMissingDatabase(s()),
            NoSuchTable {
                db: s(),
                table: s(),
            },
            UnknownTable(s()),
            TableNotLocked(s()),
            TableLockedForRead(s()),
            TableExists(s()),
            UnknownColumn {
                column: s(),
                context: s(),
            },
            AmbiguousColumn {
                column: s(),
                context: s(),
            },
            NotUniqueTable(s()),
            UnknownTableInMultiDelete(s()),
            TooManyTables(61),
            SubqueryRows,
            DuplicateQueryName(s()),
            WindowPlacement,
            WindowAsArgument,
            WindowFrameNotAllowed(s()),
            WindowNoOrder(s()),
            RangeFrameOrderBy,
            RowsFrameType,
            RangeFrameType,
            NtileArgument,
            WindowName(s()),
            DuplicateWindowName(s()),
            WindowRefPartition(s()),
            WindowRefOrder(s()),
            WindowRefFrame(s()),
            FrameBounds,
            MariaDbUnsupported(s()),
            RecursiveWithoutAnchors(s()),
            RecursiveRestrictions(s()),
            CteColumns,
            UnknownView(s()),
            WrongObject {
                db: s(),
                name: s(),
                kind: "VIEW",
            },
            IsAView(s()),
            ViewInvalid { db: s(), name: s() },
            ViewTemporary(s()),
            ViewColumnCount,
            NotUpdatable {
                table: s(),
                op: "INSERT",
            },
            NotInsertable { table: s() },
            UnknownInfoTable(s()),
            NonUpdatableColumn(s()),
            CheckOptionNonUpdatable(s()),
            InfoSchemaDenied {
                user: s(),
                host: s(),
                db: s(),
            },
            SpecifiedTwice {
                table: s(),
                op: s(),
            },
            DuplicateColumn(s()),
            DuplicateKeyName(s()),
            CantDropKey(s()),
            CantDropColumn(s()),
            KeyColumnMissing(s()),
            KeyDoesNotExist {
                key: s(),
                table: s(),
            },
            FkNoReferencedRow(s()),
            FkRowIsReferenced(Some(s())),
            FkCascadeTooDeep(s()),
            FkMalformed {
                db: s(),
                table: s(),
            },
            FkDuplicateName {
                db: s(),
                table: s(),
            },
            FkKeyMismatch(s()),
            FkCantDrop(s()),
            FkIndexNeeded(s()),
            DropAllColumns,
            OnlineLogTooBig(s()),
            AlterNotSupported {
                what: s(),
                reason: s(),
                try_: s(),
            },
            AlterAlgorithmNotSupported {
                what: s(),
                try_: s(),
            },
            TooDeep(1, 2),
            DuplicateKey {
                value: s(),
                key: s(),
            },
            ValueCount(1),
            NullNotAllowed(s()),
            NoDefault(s()),
            OutOfRange {
                column: s(),
                row: 1,
            },
            DataTooLong {
                column: s(),
                row: 1,
            },
            IncorrectValue {
                kind: "integer",
                value: s(),
                db: s(),
                table: s(),
                column: s(),
                row: 1,
            },
            TruncatedWrongValue {
                kind: "DOUBLE",
                value: s(),
            },
            IncorrectTime {
                kind: "date",
                value: s(),
                db: s(),
                table: s(),
                column: s(),
                row: 1,
            },
            InvalidDefault(s()),
            DuplicatedValueInType {
                column: s(),
                value: s(),
                kind: "ENUM",
            },
            TooBigSet(s()),
            ConstraintFailed {
                name: s(),
                db: s(),
                table: s(),
            },
            DuplicateCheckName(s()),
            CheckSubquery,
            CheckBadExpression {
                what: s(),
                owner: s(),
            },
            CantDropConstraint(s()),
            IllegalValueForType {
                kind: "set",
                value: s(),
            },
            WrongAutoKey,
            MultiplePrimaryKey,
            KeyTooLong(3072),
            BadDefinition(s()),
            UnknownVariable(s()),
            ReadOnlyVariable(s()),
            GlobalVariableRead(s()),
            SessionVariableRead(s()),
            NoSecureTransports,
            SessionOnlyVariable(s()),
            GlobalOnlyVariable(s()),
            WrongValueForVariable {
                name: s(),
                value: s(),
            },
            WrongTypeForVariable(s()),
            WrongArguments(s()),
            InvalidArgument(s()),
            UnknownStatement { id: 1, what: "x" },
            UnknownStatementName {
                name: s(),
                what: "x",
            },
            NotPreparable,
            WrongUsage(s(), s()),
            TooManyPreparedStatements(1),
            NoSuchSavepoint(s()),
            LockWaitTimeout,
            Deadlock,
            Interrupted,
            StatementTimeout,
            NoSuchThread(1),
            ActiveTransaction,
            NoSuchFunction(s()),
            NoSuchRoutine {
                kind: "PROCEDURE",
                name: s(),
            },
            NoSuchTrigger,
            WrongParamCount(s()),
            DifferentColumnCount,
            TooManyRows,
            UpdateWithoutKeyInSafeMode,
            UnknownTimeZone(s()),
            OperandColumns(1),
            IllegalParameterTypes {
                left: s(),
                right: s(),
                op: s(),
            },
            InvalidGroupFunction,
            NotInGroupBy(s()),
            MixOfGroupColumns,
            DivisionByZero,
            ArithmeticOutOfRange {
                kind: "BIGINT",
                expr: s(),
            },
            IncorrectLiteral {
                kind: "DATE",
                value: s(),
            },
            TooBigPrecision { what: s(), max: 6 },
            TooBigScale {
                scale: 31,
                column: s(),
                max: 30,
            },
            WrongFieldSpec(s()),
            InvalidOnUpdate(s()),
            CommentTooLong {
                kind: "field",
                name: s(),
                max: 1024,
            },
            DisplayWidth {
                column: s(),
                max: 64,
            },
            ScaleAbovePrecision(s()),
            Regex(s()),
            Raised {
                code: 1265,
                message: s(),
            },
            TableDefinitionChanged,
            TableFull(s()),
            DiskFull(s()),
            LocalInfileDisabled,
            SecureFilePriv,
            FileUnreadable {
                path: s(),
                errcode: s(),
            },
            ReadOnlyTransaction,
            PluginNotLoaded(s()),
            PasswordFormat(s()),
            IllegalGrant,
            SpecificAccessDenied(s()),
            DbAccessDenied {
                user: s(),
                host: s(),
                db: s(),
            },
            TableAccessDenied {
                command: s(),
                user: s(),
                host: s(),
                db: s(),
                table: s(),
            },
            AccessDenied {
                user: s(),
                host: s(),
                using: "YES",
            },
            OperationFailed {
                op: s(),
                users: s(),
            },
            PasswordNoMatch,
            NoSuchGrant {
                user: s(),
                host: s(),
            },
            NoSuchTableGrant {
                user: s(),
                host: s(),
                table: s(),
            },
            KillDenied(1),
            Engine(DbError::NoSuchTable(s())),
            Sink(SinkError(s())),
        ]
    }

    /// Variant name → the first number in the doc comment above it in error.rs.
    fn documented_codes() -> BTreeMap<String, Option<u16>> {
        let src = include_str!("../../quire-sql/src/error.rs");
        let body = src
            .split_once("pub enum SqlError {")
            .map(|(_, b)| b)
            .unwrap_or_default();
        let mut out = BTreeMap::new();
        let mut doc = String::new();
        for line in body.lines().map(str::trim) {
            if let Some(d) = line.strip_prefix("///") {
                doc.push_str(d);
                doc.push(' ');
            } else if line.starts_with("#[") || line.is_empty() {
            } else if line == "}" {
                break;
            } else if line.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                let name: String = line
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                // A doc that opens with a number names the code (13, a two-digit one);
                // otherwise the first four-digit number does.
                let lead: String = doc
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let code = match lead.parse().ok() {
                    Some(c) => Some(c),
                    None => doc
                        .split(|c: char| !c.is_ascii_digit())
                        .find(|w| w.len() == 4)
                        .and_then(|w| w.parse().ok()),
                };
                out.insert(name, code);
                doc.clear();
            }
        }
        out
    }

    #[test]
    fn error_table_matches_the_codes_documented_in_quire_sql() {
        let documented = documented_codes();
        let variants = every_variant();
        assert_eq!(
            documented.len(),
            variants.len(),
            "a SqlError variant is missing from every_variant(): {documented:?}"
        );
        for e in &variants {
            let name: String = format!("{e:?}")
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let doc = documented
                .get(&name)
                .unwrap_or_else(|| panic!("{name} not documented"));
            match (code_of(e), doc) {
                (None, _) => assert_eq!(name, "Sink"),
                (Some((code, state)), Some(doc)) => {
                    assert_eq!(code, *doc, "{name}");
                    assert_eq!(state.len(), 5, "{name}");
                }
                (Some(_), None) => panic!("{name} has no documented code"),
            }
        }
    }

    #[test]
    fn the_codes_the_brief_names_have_mariadb_sqlstates() {
        let check = |e: SqlError, code, state| assert_eq!(code_of(&e), Some((code, state)));
        check(
            SqlError::DuplicateKey {
                value: "1".into(),
                key: "PRIMARY".into(),
            },
            1062,
            "23000",
        );
        check(SqlError::Deadlock, 1213, "40001");
        check(SqlError::LockWaitTimeout, 1205, "HY000");
        check(SqlError::NotPreparable, 1295, "HY000");
        check(SqlError::Interrupted, 1317, "70100");
        check(SqlError::StatementTimeout, 1969, "70100");
        assert!(to_wire(&SqlError::Sink(SinkError("gone".into()))).is_none());
    }
}
