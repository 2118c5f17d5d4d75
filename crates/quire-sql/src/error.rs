//! The SQL layer's errors. Each variant is one thing a client can be told; the server maps
//! them to MySQL error codes and SQLSTATEs in one table (`quire-server`, `errors.rs`).

use quire_engine::table::DbError;

#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// 1064: the text is not SQL we can parse. `near` is the rest of the statement from
    /// where parsing failed, as MySQL quotes it.
    #[error("You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '{near}' at line {line}")]
    Parse { near: String, line: u64 },
    /// 1065
    #[error("Query was empty")]
    EmptyQuery,
    /// 1235: valid SQL that Quire does not do yet.
    #[error("This version of Quire doesn't yet support '{0}'")]
    Unsupported(String),
    /// 1046
    #[error("No database selected")]
    NoDatabaseSelected,
    /// 1049
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    /// 1273
    #[error("Unknown collation: '{0}'")]
    UnknownCollation(String),
    /// 1115
    #[error("Unknown character set: '{0}'")]
    UnknownCharset(String),
    /// 1253
    #[error("COLLATION '{collation}' is not valid for CHARACTER SET '{charset}'")]
    CollationCharsetMismatch { collation: String, charset: String },
    /// 1267: the text after "Illegal mix of collations ".
    #[error("Illegal mix of collations {0}")]
    IllegalMixOfCollations(String),
    /// 1007
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    /// 1008
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DropMissingDatabase(String),
    /// 1146
    #[error("Table '{db}.{table}' doesn't exist")]
    NoSuchTable { db: String, table: String },
    /// 1100 (LOCK TABLES is in effect and the name, or alias, is not in it)
    #[error("Table '{0}' was not locked with LOCK TABLES")]
    TableNotLocked(String),
    /// 1099
    #[error("Table '{0}' was locked with a READ lock and can't be updated")]
    TableLockedForRead(String),
    /// 1051
    #[error("Unknown table '{0}'")]
    UnknownTable(String),
    /// 1050
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// 1054
    #[error("Unknown column '{column}' in '{context}'")]
    UnknownColumn { column: String, context: String },
    /// 1052
    #[error("Column '{column}' in {context} is ambiguous")]
    AmbiguousColumn { column: String, context: String },
    /// 1066: two tables of FROM with one name.
    #[error("Not unique table/alias: '{0}'")]
    NotUniqueTable(String),
    /// 4002: a CTE's column list and its query's columns differ in number.
    #[error("WITH column list and SELECT field list have different column counts")]
    CteColumns,
    /// 4092: DROP VIEW of a name that is no view.
    #[error("Unknown VIEW: '{0}'")]
    UnknownView(String),
    /// 1347: a view where a table is needed, or the reverse (`kind` is VIEW or BASE TABLE).
    #[error("'{db}.{name}' is not of type '{kind}'")]
    WrongObject {
        db: String,
        name: String,
        kind: &'static str,
    },
    /// 1965: DROP TABLE of a view.
    #[error("'{0}' is a view")]
    IsAView(String),
    /// 1356: a view's query no longer binds (a table or column it names is gone).
    #[error("View '{db}.{name}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them")]
    ViewInvalid { db: String, name: String },
    /// 1352: a view's query names a temporary table.
    #[error("View's SELECT refers to a temporary table '{0}'")]
    ViewTemporary(String),
    /// 1353: CREATE VIEW v (cols) whose query has another number of columns.
    #[error("View's SELECT and view's field list have different column counts")]
    ViewColumnCount,
    /// 1348: a view column that is an expression, assigned or inserted into.
    #[error("Column '{0}' is not updatable")]
    NonUpdatableColumn(String),
    /// 1109: a table information_schema does not have.
    #[error("Unknown table '{0}' in information_schema")]
    UnknownInfoTable(String),
    /// 1471: INSERT through a view that cannot take it.
    #[error("The target table {table} of the INSERT is not insertable-into")]
    NotInsertable { table: String },
    /// 1368: WITH CHECK OPTION on a view that cannot be updated.
    #[error("CHECK OPTION on non-updatable view '{0}'")]
    CheckOptionNonUpdatable(String),
    /// 1044: information_schema cannot be changed.
    #[error("Access denied for user '{user}'@'{host}' to database '{db}'")]
    InfoSchemaDenied {
        user: String,
        host: String,
        db: String,
    },
    /// 1288: INSERT, UPDATE or DELETE through a view that cannot take it.
    #[error("The target table {table} of the {op} is not updatable")]
    NotUpdatable { table: String, op: &'static str },
    /// 4015: a window function outside the select list and ORDER BY.
    #[error("Window function is allowed only in SELECT list and ORDER BY clause")]
    WindowPlacement,
    /// 4074: a window function in the arguments of an aggregate or of another window
    /// function.
    #[error("Window functions can not be used as arguments to group functions.")]
    WindowAsArgument,
    /// 4017: a frame given to a window function that has none (ROW_NUMBER, RANK, …).
    #[error("Window frame is not allowed with '{0}'")]
    WindowFrameNotAllowed(String),
    /// 4018: a window function that needs ORDER BY in its window (RANK, NTILE, …).
    #[error("No order list in window specification for '{0}'")]
    WindowNoOrder(String),
    /// 4019
    #[error("RANGE-type frame requires ORDER BY clause with single sort key")]
    RangeFrameOrderBy,
    /// 4020
    #[error("Integer is required for ROWS-type frame")]
    RowsFrameType,
    /// 4021
    #[error("Numeric datatype is required for RANGE-type frame")]
    RangeFrameType,
    /// 4024
    #[error("Argument of NTILE must be greater than 0")]
    NtileArgument,
    /// 4009: `OVER w` of no `WINDOW w AS (…)`.
    #[error("Window specification with name '{0}' is not defined")]
    WindowName(String),
    /// 4010
    #[error("Multiple window specifications with the same name '{0}'")]
    DuplicateWindowName(String),
    /// 4011
    #[error("Window specification referencing another one '{0}' cannot contain partition list")]
    WindowRefPartition(String),
    /// 4012
    #[error("Referenced window specification '{0}' already contains order list")]
    WindowRefOrder(String),
    /// 4013
    #[error("Referenced window specification '{0}' cannot contain window frame")]
    WindowRefFrame(String),
    /// 4014: a frame that starts after it ends by its kinds of bound.
    #[error("Unacceptable combination of window frame bound specifications")]
    FrameBounds,
    /// 1235 as MariaDB itself answers it (a limitation MariaDB 10.11 has too, so the text
    /// names MariaDB: `COUNT(DISTINCT) aggregate as window function`).
    #[error("This version of MariaDB doesn't yet support '{0}'")]
    MariaDbUnsupported(String),
    /// 4005: a recursive CTE whose members all name it.
    #[error("No anchors for recursive WITH element '{0}'")]
    RecursiveWithoutAnchors(String),
    /// 4008: a recursive reference where MariaDB's (standard) restrictions forbid it: in a
    /// subquery, an aggregate's query, an outer join's inner side, twice in a member.
    #[error("Restrictions imposed on recursive definitions are violated for table '{0}'")]
    RecursiveRestrictions(String),
    /// 4004: a WITH clause names two queries alike.
    #[error("Duplicate query name `{0}` in WITH clause")]
    DuplicateQueryName(String),
    /// 1242: a scalar subquery gave more than one row.
    #[error("Subquery returns more than 1 row")]
    SubqueryRows,
    /// 1093: a statement changes a table a subquery of it reads.
    #[error("Table '{table}' is specified twice, both as a target for '{op}' and as a separate source for data")]
    SpecifiedTwice { table: String, op: String },
    /// 1116: more tables in one join than MariaDB allows.
    #[error("Too many tables; MariaDB can only use {0} tables in a join")]
    TooManyTables(usize),
    /// 1109: a multi-table DELETE names a table its FROM does not have (by its alias).
    #[error("Unknown table '{0}' in MULTI DELETE")]
    UnknownTableInMultiDelete(String),
    /// 1060
    #[error("Duplicate column name '{0}'")]
    DuplicateColumn(String),
    /// 1061
    #[error("Duplicate key name '{0}'")]
    DuplicateKeyName(String),
    /// 1091
    #[error("Can't DROP INDEX `{0}`; check that it exists")]
    CantDropKey(String),
    /// 1091: ALTER TABLE … DROP COLUMN of a column the table lacks.
    #[error("Can't DROP COLUMN `{0}`; check that it exists")]
    CantDropColumn(String),
    /// 1176: RENAME INDEX of an index the table lacks.
    #[error("Key '{key}' doesn't exist in table '{table}'")]
    KeyDoesNotExist { key: String, table: String },
    /// 1072: an index on a column the table lacks.
    #[error("Key column '{0}' doesn't exist in table")]
    KeyColumnMissing(String),
    /// 1090: ALTER TABLE dropping every column.
    #[error("You can't delete all columns with ALTER TABLE; use DROP TABLE instead")]
    DropAllColumns,
    /// 1846: ALTER TABLE's ALGORITHM= or LOCK= asks for less than the operation needs
    /// (`what` is `ALGORITHM=INSTANT`, `LOCK=NONE`, …; `try_` what would work).
    #[error("{what} is not supported. Reason: {reason}. Try {try_}")]
    AlterNotSupported {
        what: String,
        reason: String,
        try_: String,
    },
    /// 1436: a statement whose expressions could nest deeper than a connection's stack
    /// holds (`parse::MAX_NESTING`), refused before it is parsed, as MariaDB refuses one
    /// that would overrun its thread stack.
    #[error("Thread stack overrun: the statement has {0} operators and parentheses, more than the {1} a connection's stack holds; split it")]
    TooDeep(usize, usize),
    /// 1845: ALTER TABLE's ALGORITHM= asks for less than the operation needs, and MariaDB
    /// gives no reason (a table rebuild where INSTANT or NOCOPY was asked).
    #[error("{what} is not supported for this operation. Try {try_}")]
    AlterAlgorithmNotSupported { what: String, try_: String },
    /// 1799: an online index build's log of concurrent changes outgrew
    /// `innodb_online_alter_log_max_size` (docs/online-ddl.md).
    #[error("Creating index '{0}' required more than 'innodb_online_alter_log_max_size' bytes of modification log. Please try again")]
    OnlineLogTooBig(String),
    /// 1062
    #[error("Duplicate entry '{value}' for key '{key}'")]
    DuplicateKey { value: String, key: String },
    /// 1136
    #[error("Column count doesn't match value count at row {0}")]
    ValueCount(u64),
    /// 1048
    #[error("Column '{0}' cannot be null")]
    NullNotAllowed(String),
    /// 1364
    #[error("Field '{0}' doesn't have a default value")]
    NoDefault(String),
    /// 1264
    #[error("Out of range value for column '{column}' at row {row}")]
    OutOfRange { column: String, row: u64 },
    /// 1406
    #[error("Data too long for column '{column}' at row {row}")]
    DataTooLong { column: String, row: u64 },
    /// 1366
    #[error(
        "Incorrect {kind} value: '{value}' for column `{db}`.`{table}`.`{column}` at row {row}"
    )]
    IncorrectValue {
        kind: &'static str,
        value: String,
        db: String,
        table: String,
        column: String,
        row: u64,
    },
    /// 1292: a date or time that does not exist, stored into a column.
    #[error(
        "Incorrect {kind} value: '{value}' for column `{db}`.`{table}`.`{column}` at row {row}"
    )]
    IncorrectTime {
        kind: &'static str,
        value: String,
        db: String,
        table: String,
        column: String,
        row: u64,
    },
    /// 1292
    #[error("Incorrect {kind} value: '{value}'")]
    TruncatedWrongValue { kind: &'static str, value: String },
    /// 1291: an ENUM member named twice (in the column's collation).
    #[error("Column '{column}' has duplicated value '{value}' in {kind}")]
    DuplicatedValueInType {
        column: String,
        value: String,
        kind: &'static str,
    },
    /// 1097: a SET of more than 64 members.
    #[error("Too many strings for column {0} and SET")]
    TooBigSet(String),
    /// 1367: a SET member with a comma.
    #[error("Illegal {kind} '{value}' value found during parsing")]
    IllegalValueForType { kind: &'static str, value: String },
    /// 4025: a value that fails a column's CHECK (a JSON column's json_valid).
    #[error("CONSTRAINT `{name}` failed for `{db}`.`{table}`")]
    ConstraintFailed {
        name: String,
        db: String,
        table: String,
    },
    /// 1826: two CHECK constraints of one table with one name.
    #[error("Duplicate CHECK constraint name '{0}'")]
    DuplicateCheckName(String),
    /// 1970: a subquery in a CHECK expression.
    #[error("CHECK does not support subqueries or stored functions")]
    CheckSubquery,
    /// 1901: a non-deterministic function, a variable, … in a CHECK expression.
    #[error("Function or expression '{what}' cannot be used in the CHECK clause of `{owner}`")]
    CheckBadExpression { what: String, owner: String },
    /// 1091: ALTER TABLE … DROP CONSTRAINT of a constraint the table lacks.
    #[error("Can't DROP CONSTRAINT `{0}`; check that it exists")]
    CantDropConstraint(String),
    /// 1067
    #[error("Invalid default value for '{0}'")]
    InvalidDefault(String),
    /// 1075
    #[error("Incorrect table definition; there can be only one auto column and it must be defined as a key")]
    WrongAutoKey,
    /// 1068
    #[error("Multiple primary key defined")]
    MultiplePrimaryKey,
    /// 1071: a primary or unique key longer than the limit, in bytes of its columns'
    /// character sets.
    #[error("Specified key was too long; max key length is {0} bytes")]
    KeyTooLong(u64),
    /// 1074 / 1118 and friends: a column or row the engine cannot store.
    #[error("{0}")]
    BadDefinition(String),
    /// 1193
    #[error("Unknown system variable '{0}'")]
    UnknownVariable(String),
    /// 1238
    #[error("Variable '{0}' is a read only variable")]
    ReadOnlyVariable(String),
    /// 1238: `@@SESSION.x` of a global-only variable.
    #[error("Variable '{0}' is a GLOBAL variable")]
    GlobalVariableRead(String),
    /// 1238: `@@GLOBAL.x` of a session-only variable (`@@global.timestamp`).
    #[error("Variable '{0}' is a SESSION variable")]
    SessionVariableRead(String),
    /// 4167: `SET GLOBAL require_secure_transport=ON` on a server without TLS.
    #[error("No secure transports are configured, unable to set --require_secure_transport=ON")]
    NoSecureTransports,
    /// 1228
    #[error("Variable '{0}' is a SESSION variable and can't be used with SET GLOBAL")]
    SessionOnlyVariable(String),
    /// 1229
    #[error("Variable '{0}' is a GLOBAL variable and should be set with SET GLOBAL")]
    GlobalOnlyVariable(String),
    /// 1231
    #[error("Variable '{name}' can't be set to the value of '{value}'")]
    WrongValueForVariable { name: String, value: String },
    /// 1232
    #[error("Incorrect argument type to variable '{0}'")]
    WrongTypeForVariable(String),
    /// 1210
    #[error("Incorrect arguments to {0}")]
    WrongArguments(String),
    /// 1210 with the server's own text (ER_WRONG_ARGUMENTS as MariaDB's my_printf_error
    /// uses it: `innodb_log_file_size must be at least innodb_log_buffer_size=…`).
    #[error("{0}")]
    InvalidArgument(String),
    /// 1243
    #[error("Unknown prepared statement handler ({id}) given to {what}")]
    UnknownStatement { id: u32, what: &'static str },
    /// 1243 for a statement PREPARE named (EXECUTE, DEALLOCATE PREPARE).
    #[error("Unknown prepared statement handler ({name}) given to {what}")]
    UnknownStatementName { name: String, what: &'static str },
    /// 1221
    #[error("Incorrect usage of {0} and {1}")]
    WrongUsage(String, String),
    /// 1461
    #[error("Can't create more than max_prepared_stmt_count statements (current value: {0})")]
    TooManyPreparedStatements(u64),
    /// 1295
    #[error("This command is not supported in the prepared statement protocol yet")]
    NotPreparable,
    /// 1305
    #[error("SAVEPOINT {0} does not exist")]
    NoSuchSavepoint(String),
    /// 1205
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// 1213
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// 1317
    #[error("Query execution was interrupted")]
    Interrupted,
    /// 1969: the statement ran past max_statement_time.
    #[error("Query execution was interrupted (max_statement_time exceeded)")]
    StatementTimeout,
    /// 1094
    #[error("Unknown thread id: {0}")]
    NoSuchThread(u64),
    /// 1192
    #[error("Can't execute the given command because you have active locked tables or an active transaction")]
    ActiveTransaction,
    /// 1305 for functions
    #[error("FUNCTION {0} does not exist")]
    NoSuchFunction(String),
    /// 1305 for DROP PROCEDURE / DROP FUNCTION: `kind` PROCEDURE or FUNCTION, `name`
    /// `db.name`.
    #[error("{kind} {name} does not exist")]
    NoSuchRoutine { kind: &'static str, name: String },
    /// 1360: DROP TRIGGER of a trigger that does not exist (Quire has none).
    #[error("Trigger does not exist")]
    NoSuchTrigger,
    /// 1582 / 1583
    #[error("Incorrect parameter count in the call to native function '{0}'")]
    WrongParamCount(String),
    /// 1222
    #[error("The used SELECT statements have a different number of columns")]
    DifferentColumnCount,
    /// 1298
    #[error("Unknown or incorrect time zone: '{0}'")]
    UnknownTimeZone(String),
    /// 1172: `SELECT … INTO @x` found more than one row.
    #[error("Result consisted of more than one row")]
    TooManyRows,
    /// 1175: under `sql_safe_updates`, an UPDATE or DELETE that would read its table(s)
    /// without a key (`run.rs`, `Session::refuse_unsafe`).
    #[error(
        "You are using safe update mode and you tried to update a table without a WHERE that uses a KEY column"
    )]
    UpdateWithoutKeyInSafeMode,
    /// 1241
    #[error("Operand should contain {0} column(s)")]
    OperandColumns(usize),
    /// 4078: a row where a value goes, or a value where a row goes (`(1, 2) = 1`), with
    /// MariaDB's names of the two operands' types.
    #[error("Illegal parameter data types {left} and {right} for operation '{op}'")]
    IllegalParameterTypes {
        left: String,
        right: String,
        op: String,
    },
    /// 1111
    #[error("Invalid use of group function")]
    InvalidGroupFunction,
    /// 1055
    #[error("'{0}' isn't in GROUP BY")]
    NotInGroupBy(String),
    /// 1140
    #[error("Mixing of GROUP columns (MIN(),MAX(),COUNT(),...) with no GROUP columns is illegal if there is no GROUP BY clause")]
    MixOfGroupColumns,
    /// 1365
    #[error("Division by 0")]
    DivisionByZero,
    /// 1690
    #[error("{kind} value is out of range in '{expr}'")]
    ArithmeticOutOfRange { kind: &'static str, expr: String },
    /// 1525: a `DATE '…'` / `TIMESTAMP '…'` literal that is no date.
    #[error("Incorrect {kind} value: '{value}'")]
    IncorrectLiteral { kind: &'static str, value: String },
    /// 1426
    #[error("Too big precision specified for '{what}'. Maximum is {max}")]
    TooBigPrecision { what: String, max: u32 },
    /// 1294: ON UPDATE on a column that is no TIMESTAMP or DATETIME, or with a precision
    /// below the column's.
    #[error("Invalid ON UPDATE clause for '{0}' column")]
    InvalidOnUpdate(String),
    /// 1629 (field; 1628 a table's, 1688 an index's): a COMMENT past MariaDB's limit in
    /// strict mode (outside it: cut, with the same text as a warning).
    #[error("Comment for {kind} '{name}' is too long (max = {max})")]
    CommentTooLong {
        kind: &'static str,
        name: String,
        max: usize,
    },
    /// 1439: BIT(M) with M past 64.
    #[error("Display width out of range for '{column}' (max = {max})")]
    DisplayWidth { column: String, max: u32 },
    /// 1427
    #[error("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{0}')")]
    ScaleAbovePrecision(String),
    /// 1425: FLOAT(M,D) or DOUBLE(M,D) with D past 30.
    #[error("Too big scale {scale} specified for '{column}'. Maximum is {max}")]
    TooBigScale {
        scale: u64,
        column: String,
        max: u32,
    },
    /// 1063: FLOAT(p) with p past 53.
    #[error("Incorrect column specifier for column '{0}'")]
    WrongFieldSpec(String),
    /// 1139: a regular expression that does not compile (the text after "Regex error ").
    #[error("Regex error '{0}'")]
    Regex(String),
    /// 1265 (or whichever code the warning has): a warning that strict mode made the
    /// statement's error (MariaDB's abort_on_warning), with the warning's code and text.
    #[error("{message}")]
    Raised { code: u16, message: String },
    /// 1412: a snapshot older than the table's definition (an index built after the
    /// snapshot was taken).
    #[error("Table definition has changed, please retry transaction")]
    TableDefinitionChanged,
    /// 1114: a row change needed the table's file (or the undo log) to grow on a full disk
    /// (InnoDB's DB_OUT_OF_FILE_SPACE); the statement was rolled back.
    #[error("The table '{0}' is full")]
    TableFull(String),
    /// 1021: another write (DDL, a log resize) could not grow a file on a full disk. The
    /// text is MariaDB's ER_DISK_FULL without its "waiting": Quire fails at once.
    #[error("Disk full ({0}); free some space and retry (errno: 28 \"No space left on device\")")]
    DiskFull(String),
    /// 4166: LOAD DATA LOCAL with `local_infile` OFF or a client without CLIENT_LOCAL_FILES.
    #[error("The used command is not allowed because the MariaDB server or client has disabled the local infile capability")]
    LocalInfileDisabled,
    /// 1290: a server-side file outside `secure_file_priv` (or that variable is NULL).
    #[error("The MariaDB server is running with the --secure-file-priv option so it cannot execute this statement")]
    SecureFilePriv,
    /// 13: a server-side file that can not be read (the text after "Errcode: ").
    #[error("Can't get stat of '{path}' (Errcode: {errcode})")]
    FileUnreadable { path: String, errcode: String },
    /// 1792
    #[error("Cannot execute statement in a READ ONLY transaction")]
    ReadOnlyTransaction,
    /// 1524: IDENTIFIED VIA a plugin Quire does not have.
    #[error("Plugin '{0}' is not loaded")]
    PluginNotLoaded(String),
    /// 1372: a password hash of the wrong form (the text says which).
    #[error("{0}")]
    PasswordFormat(String),
    /// 1144: a privilege the grant's level cannot hold.
    #[error("Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used")]
    IllegalGrant,
    /// 1227
    #[error("Access denied; you need (at least one of) the {0} privilege(s) for this operation")]
    SpecificAccessDenied(String),
    /// 1044
    #[error("Access denied for user '{user}'@'{host}' to database '{db}'")]
    DbAccessDenied {
        user: String,
        host: String,
        db: String,
    },
    /// 1142: `user`@`host` as USER() names the session.
    #[error("{command} command denied to user '{user}'@'{host}' for table `{db}`.`{table}`")]
    TableAccessDenied {
        command: String,
        user: String,
        host: String,
        db: String,
        table: String,
    },
    /// 1045: a GRANT at the global level without the privileges to give.
    #[error("Access denied for user '{user}'@'{host}' (using password: {using})")]
    AccessDenied {
        user: String,
        host: String,
        using: &'static str,
    },
    /// 1396: `users` is the list of accounts it failed for.
    #[error("Operation {op} failed for {users}")]
    OperationFailed { op: String, users: String },
    /// 1133
    #[error("Can't find any matching row in the user table")]
    PasswordNoMatch,
    /// 1141
    #[error("There is no such grant defined for user '{user}' on host '{host}'")]
    NoSuchGrant { user: String, host: String },
    /// 1147
    #[error(
        "There is no such grant defined for user '{user}' on host '{host}' on table '{table}'"
    )]
    NoSuchTableGrant {
        user: String,
        host: String,
        table: String,
    },
    /// 1095: KILL of another user's thread without SUPER.
    #[error("You are not owner of thread {0}")]
    KillDenied(u64),
    /// 1452: a child row without its parent (the text names the constraint).
    #[error("Cannot add or update a child row: a foreign key constraint fails ({0})")]
    FkNoReferencedRow(String),
    /// 1451: a parent row still referenced; DROP TABLE gives it without the constraint.
    #[error("Cannot delete or update a parent row: a foreign key constraint fails{}", .0.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    FkRowIsReferenced(Option<String>),
    /// 1296: a cascade deeper than 15, as MariaDB reports InnoDB's error 193.
    #[error("Got error 193 '{0}' from InnoDB")]
    FkCascadeTooDeep(String),
    /// 1005 with errno 150.
    #[error("Can't create table `{db}`.`{table}` (errno: 150 \"Foreign key constraint is incorrectly formed\")")]
    FkMalformed { db: String, table: String },
    /// 1005 with errno 121: a constraint name taken in the database.
    #[error(
        "Can't create table `{db}`.`{table}` (errno: 121 \"Duplicate key on write or update\")"
    )]
    FkDuplicateName { db: String, table: String },
    /// 1239
    #[error(
        "Incorrect foreign key definition for '{0}': Key reference and table reference don't match"
    )]
    FkKeyMismatch(String),
    /// 1091
    #[error("Can't DROP FOREIGN KEY `{0}`; check that it exists")]
    FkCantDrop(String),
    /// 1553: ALTER TABLE would leave a foreign key without the index it needs (on the child's
    /// columns or on the parent's referenced ones).
    #[error("Cannot drop index '{0}': needed in a foreign key constraint")]
    FkIndexNeeded(String),
    /// 1105: the engine failed in a way the client cannot fix (I/O, corruption).
    #[error("{0}")]
    Engine(DbError),
    /// The result sink failed (client gone): nothing to tell the client.
    #[error(transparent)]
    Sink(#[from] crate::meta::SinkError),
}

impl From<DbError> for SqlError {
    /// Engine errors that a client caused get their own variants; the rest stay engine
    /// errors (1105).
    fn from(e: DbError) -> Self {
        match e {
            DbError::LockWaitTimeout => SqlError::LockWaitTimeout,
            DbError::Deadlock | DbError::TrxAborted => SqlError::Deadlock,
            DbError::NoSuchDatabase(d) => SqlError::UnknownDatabase(d),
            DbError::DatabaseExists(d) => SqlError::DatabaseExists(d),
            DbError::TableExists(t) => SqlError::TableExists(t),
            DbError::NoSuchSavepoint(s) => SqlError::NoSuchSavepoint(s),
            DbError::DuplicateKey { index, entry } => SqlError::DuplicateKey {
                value: entry,
                key: index,
            },
            DbError::Interrupted => SqlError::Interrupted,
            DbError::OnlineLogTooBig { index } => SqlError::OnlineLogTooBig(index),
            DbError::TableDefinitionChanged => SqlError::TableDefinitionChanged,
            DbError::NoReferencedRow(d) => SqlError::FkNoReferencedRow(d),
            DbError::RowIsReferenced(d) => SqlError::FkRowIsReferenced(Some(d)),
            DbError::CascadeTooDeep(d) => SqlError::FkCascadeTooDeep(d),
            DbError::NoSuchForeignKey(k) => SqlError::FkCantDrop(k),
            DbError::TableFull(t) => SqlError::TableFull(t),
            e if e.is_disk_full() => SqlError::DiskFull(e.to_string()),
            e => SqlError::Engine(e),
        }
    }
}

pub type Result<T> = std::result::Result<T, SqlError>;
