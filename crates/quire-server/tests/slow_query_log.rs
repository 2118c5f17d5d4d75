//! The slow query log (docs/slow-log.md): what is slow, what is written, in MariaDB's
//! format; and the server's status counters that go with it.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, Reply, TestServer};

fn ok(c: &mut Client, sql: &str) {
    match c.query(sql) {
        Reply::Ok { .. } => {}
        other => panic!("{sql}: {other:?}"),
    }
}

fn status(c: &mut Client, name: &str) -> u64 {
    let r = c.rows(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    assert_eq!(r.len(), 1, "{name}: {r:?}");
    r[0][1].parse().unwrap()
}

/// The entries of the log: each from its `# User@Host` line to its statement's line.
fn entries(log: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in log.lines() {
        if line.starts_with("# User@Host:") {
            out.push(String::new());
        }
        if let Some(e) = out.last_mut() {
            e.push_str(line);
            e.push('\n');
        }
    }
    out
}

fn entry_for<'a>(all: &'a [String], statement: &str) -> &'a str {
    all.iter()
        .find(|e| e.lines().last() == Some(statement))
        .unwrap_or_else(|| panic!("no entry for {statement:?} in {all:#?}"))
}

/// A server whose slow query log goes to `slow.log` in a new directory, and a session.
fn server_logging_to_a_file() -> (tempfile::TempDir, std::path::PathBuf, TestServer, Client) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.log");
    let server = TestServer::start();
    let mut c = server.connect();
    ok(
        &mut c,
        &format!("SET GLOBAL slow_query_log_file = '{}'", path.display()),
    );
    (dir, path, server, c)
}

#[test]
fn slow_statements_are_written_in_mariadbs_format() {
    let (_dir, path, _server, mut c) = server_logging_to_a_file();
    ok(&mut c, "SET GLOBAL slow_query_log = ON");
    // The session took the global value (OFF) when it connected.
    ok(&mut c, "SET SESSION slow_query_log = ON");
    ok(&mut c, "SET SESSION long_query_time = 0");
    ok(&mut c, "CREATE DATABASE sl");
    ok(&mut c, "USE sl");
    ok(&mut c, "CREATE TABLE x (a INT PRIMARY KEY, b INT)");
    ok(&mut c, "INSERT INTO x VALUES (1, 1), (2, 2), (3, 3)");
    assert_eq!(c.rows("SELECT * FROM x WHERE b > 1").len(), 2);
    ok(&mut c, "UPDATE x SET b = b + 1");
    // A prepared statement's execution: its text with the parameter in place.
    let prepared = c.command(b"\x16SELECT b FROM x WHERE a = ? AND 'a?' <> ''");
    assert_eq!(prepared[0], 0x00, "{prepared:?}");
    let id = u32::from_le_bytes([prepared[1], prepared[2], prepared[3], prepared[4]]);
    // One parameter definition and one column definition follow.
    c.io.read_message().unwrap();
    c.io.read_message().unwrap();
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0, 1, 8, 0]);
    exec.extend_from_slice(&2i64.to_le_bytes());
    let first = c.command(&exec);
    assert_eq!(c.read_result_set(&first).rows.len(), 1);

    let log = std::fs::read_to_string(&path).unwrap();
    // The header a newly opened file gets, then a `# Time:` line before the first entry.
    let mut lines = log.lines();
    assert!(lines.next().unwrap().contains(", Version: "), "{log}");
    assert!(lines.next().unwrap().starts_with("Tcp port: "), "{log}");
    assert_eq!(lines.next(), Some("Time\t\t    Id Command\tArgument"));
    assert!(lines.next().unwrap().starts_with("# Time: "), "{log}");
    let all = entries(&log);

    let select = entry_for(&all, "SELECT * FROM x WHERE b > 1;");
    let l: Vec<&str> = select.lines().collect();
    assert_eq!(l[0], "# User@Host: root[root] @  [127.0.0.1]", "{select}");
    assert!(l[1].starts_with("# Thread_id: "), "{select}");
    assert!(l[1].ends_with("  Schema: sl  QC_hit: No"), "{select}");
    assert!(l[2].starts_with("# Query_time: 0."), "{select}");
    assert!(
        l[2].ends_with("  Rows_sent: 2  Rows_examined: 3"),
        "{select}"
    );
    assert!(
        l[3].starts_with("# Rows_affected: 0  Bytes_sent: "),
        "{select}"
    );
    assert!(l[4].starts_with("SET timestamp="), "{select}");

    let update = entry_for(&all, "UPDATE x SET b = b + 1;");
    assert!(
        update.contains("Rows_sent: 0  Rows_examined: 3\n# Rows_affected: 3  Bytes_sent: "),
        "{update}"
    );
    let execute = entry_for(&all, "SELECT b FROM x WHERE a = 2 AND 'a?' <> '';");
    assert!(
        execute.contains("Rows_sent: 1  Rows_examined: 1\n"),
        "{execute}"
    );
    // ``use `sl`;`` is written once, with the first entry in that database: the USE's own.
    let use_entry = entry_for(&all, "USE sl;");
    assert!(
        use_entry.contains("\nuse `sl`;\nSET timestamp="),
        "{use_entry}"
    );
    assert_eq!(log.matches("\nuse `sl`;\n").count(), 1, "{log}");
}

#[test]
fn what_is_slow_is_counted_and_what_is_written_follows_the_settings() {
    let (dir, path, server, mut c) = server_logging_to_a_file();
    ok(&mut c, "CREATE DATABASE sc");
    ok(&mut c, "CREATE TABLE sc.t (a INT PRIMARY KEY)");
    ok(&mut c, "INSERT INTO sc.t VALUES (1), (2), (3), (4)");
    let written = || std::fs::read_to_string(&path).unwrap_or_default();

    // The default long_query_time (10 s): nothing here is slow.
    let before = status(&mut c, "Slow_queries");
    c.rows("SELECT * FROM sc.t");
    assert_eq!(status(&mut c, "Slow_queries"), before);

    // Slow but the log is off: counted, not written.
    ok(&mut c, "SET long_query_time = 0");
    let before = status(&mut c, "Slow_queries");
    c.rows("SELECT a FROM sc.t WHERE a > 2");
    // The SHOW STATUS itself is slow too, and counted after it has answered.
    assert_eq!(status(&mut c, "Slow_queries"), before + 2);
    assert!(!written().contains("WHERE a > 2"));

    // On: written. min_examined_row_limit above what a statement read: neither.
    // A session takes the global value when it connects: this one is still off.
    ok(&mut c, "SET GLOBAL slow_query_log = 1");
    c.rows("SELECT a FROM sc.t WHERE a > 3");
    assert!(!written().contains("WHERE a > 3"));
    let mut c = server.connect();
    ok(&mut c, "SET long_query_time = 0");
    c.rows("SELECT a FROM sc.t WHERE a > 3");
    assert!(written().contains("\nSELECT a FROM sc.t WHERE a > 3;\n"));
    ok(&mut c, "SET min_examined_row_limit = 100");
    let before = status(&mut c, "Slow_queries");
    c.rows("SELECT a FROM sc.t WHERE a > 1");
    assert_eq!(status(&mut c, "Slow_queries"), before);
    assert!(!written().contains("WHERE a > 1;"));
    ok(&mut c, "SET min_examined_row_limit = 0");

    // SET SESSION slow_query_log = 0: this session's statements are counted, not written.
    ok(&mut c, "SET SESSION slow_query_log = 0");
    let before = status(&mut c, "Slow_queries");
    c.rows("SELECT a FROM sc.t WHERE a = 4");
    assert!(!written().contains("WHERE a = 4"));
    assert_eq!(status(&mut c, "Slow_queries"), before + 2);
    ok(&mut c, "SET SESSION slow_query_log = 1");

    // Administrative statements: only with log_slow_admin_statements.
    ok(&mut c, "SET log_slow_admin_statements = 0");
    ok(&mut c, "ALTER TABLE sc.t ADD COLUMN b INT");
    assert!(!written().contains("ADD COLUMN b"));
    ok(&mut c, "SET log_slow_admin_statements = 1");
    ok(&mut c, "ALTER TABLE sc.t ADD COLUMN c INT");
    assert!(written().contains("\nALTER TABLE sc.t ADD COLUMN c INT;\n"));

    // FLUSH SLOW LOGS: a rotated-away file is made again by the next entry.
    std::fs::rename(&path, dir.path().join("slow.log.1")).unwrap();
    ok(&mut c, "FLUSH SLOW LOGS");
    c.rows("SELECT 'after rotation'");
    assert!(
        written().contains("\nSELECT 'after rotation';\n"),
        "{}",
        written()
    );
}

#[test]
fn long_query_time_is_a_fraction_clamped_as_mariadb_does() {
    let server = TestServer::start();
    let mut c = server.connect();
    assert_eq!(
        c.rows("SELECT @@long_query_time, @@global.slow_query_log"),
        vec![vec!["10.000000".to_string(), "0".to_string()]]
    );
    ok(&mut c, "SET long_query_time = 0.25");
    assert_eq!(
        c.rows("SELECT @@session.long_query_time, @@global.long_query_time"),
        vec![vec!["0.250000".to_string(), "10.000000".to_string()]]
    );
    // Below the minimum: clamped with MariaDB's warning.
    match c.query("SET long_query_time = -1") {
        Reply::Ok { warnings, .. } => assert_eq!(warnings, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        c.rows("SHOW WARNINGS"),
        vec![vec![
            "Warning".to_string(),
            "1292".to_string(),
            "Truncated incorrect long_query_time value: '-1'".to_string()
        ]]
    );
    assert_eq!(
        c.rows("SELECT @@long_query_time"),
        vec![vec!["0.000000".to_string()]]
    );
    assert_eq!(
        c.query("SET long_query_time = 'soon'").err_code(),
        Some(1232),
        "not a number"
    );
    assert_eq!(
        c.query("SET SESSION slow_query_log_file = 'x.log'")
            .err_code(),
        Some(1229),
        "global only"
    );
}

#[test]
fn server_counters_count_connections_bytes_and_rows() {
    let server = TestServer::start();
    let mut c = server.connect();
    let connections = status(&mut c, "Connections");
    assert!(connections >= 1);
    let received = status(&mut c, "Bytes_received");
    let sent = status(&mut c, "Bytes_sent");
    ok(&mut c, "CREATE DATABASE sr");
    ok(&mut c, "CREATE TABLE sr.t (a INT PRIMARY KEY, b INT)");
    ok(&mut c, "INSERT INTO sr.t VALUES (1, 1), (2, 2), (3, 3)");
    let read = status(&mut c, "Innodb_rows_read");
    c.rows("SELECT * FROM sr.t");
    assert_eq!(status(&mut c, "Innodb_rows_read"), read + 3);
    assert!(status(&mut c, "Bytes_received") > received);
    assert!(status(&mut c, "Bytes_sent") > sent);

    let inserted = status(&mut c, "Innodb_rows_inserted");
    let updated = status(&mut c, "Innodb_rows_updated");
    let deleted = status(&mut c, "Innodb_rows_deleted");
    ok(&mut c, "INSERT INTO sr.t VALUES (4, 4)");
    // One row changes; the row already 3 is matched, not updated.
    ok(&mut c, "UPDATE sr.t SET b = 3 WHERE a IN (2, 3)");
    ok(&mut c, "DELETE FROM sr.t WHERE a = 1");
    assert_eq!(status(&mut c, "Innodb_rows_inserted"), inserted + 1);
    assert_eq!(status(&mut c, "Innodb_rows_updated"), updated + 1);
    assert_eq!(status(&mut c, "Innodb_rows_deleted"), deleted + 1);

    // A second connection counts; one dropped without COM_QUIT is an aborted client.
    let aborted = status(&mut c, "Aborted_clients");
    {
        let mut d = server.connect();
        assert!(matches!(d.ping(), Reply::Ok { .. }));
    }
    assert_eq!(status(&mut c, "Connections"), connections + 1);
    assert!(status(&mut c, "Max_used_connections") >= 2);
    // The dropped connection's thread notices the closed socket on its next read.
    let mut counted = false;
    for _ in 0..100 {
        if status(&mut c, "Aborted_clients") == aborted + 1 {
            counted = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        counted,
        "the dropped connection is counted in Aborted_clients"
    );
    // This connection is running SHOW STATUS: at least one thread is running.
    assert!(status(&mut c, "Threads_running") >= 1);

    // A failed login is an aborted connect.
    let aborted_connects = status(&mut c, "Aborted_connects");
    assert!(Client::connect(server.addr, "nobody", "wrong", None).is_err());
    assert_eq!(status(&mut c, "Aborted_connects"), aborted_connects + 1);
}

#[test]
fn log_queries_not_using_indexes_writes_fast_full_scans_only() {
    let (_dir, path, server, mut c) = server_logging_to_a_file();
    // MariaDB 10.11's own names for the log's switch and threshold.
    ok(&mut c, "SET GLOBAL log_slow_query = ON");
    ok(&mut c, "SET SESSION log_slow_query = ON");
    assert_eq!(
        c.rows("SELECT @@slow_query_log, @@long_query_time"),
        vec![vec!["1".to_string(), "10.000000".to_string()]]
    );
    ok(&mut c, "CREATE DATABASE ni");
    ok(&mut c, "USE ni");
    ok(&mut c, "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY (b))");
    ok(&mut c, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)");
    let written = || std::fs::read_to_string(&path).unwrap_or_default();

    // Off (the default): nothing here takes 10 s, nothing is written.
    c.rows("SELECT * FROM t WHERE b + 0 = 2");
    assert!(!written().contains("b + 0 = 2"), "{}", written());

    ok(&mut c, "SET log_queries_not_using_indexes = ON");
    assert_eq!(
        c.rows("SELECT @@log_slow_filter LIKE '%not_using_index%'"),
        vec![vec!["1".to_string()]]
    );
    let before = status(&mut c, "Slow_queries");
    // Whole-table and whole-index reads, of a statement of each kind, as MariaDB logs them.
    c.rows("SELECT * FROM t WHERE b + 0 = 1");
    c.rows("SELECT b FROM t ORDER BY b");
    ok(&mut c, "UPDATE t SET b = b WHERE b + 0 = 3");
    ok(&mut c, "DELETE FROM t WHERE b + 0 = 99");
    c.rows("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'ni'");
    // An index narrowed these, a SHOW is never logged for it, a statement without a table
    // reads none, and an account statement's reads of the system tables are the server's.
    ok(&mut c, "CREATE USER ni_user");
    c.rows("SELECT * FROM t WHERE a = 1");
    c.rows("SELECT * FROM t WHERE b BETWEEN 1 AND 2");
    c.rows("SHOW TABLES");
    c.rows("SELECT 1 + 1");
    let log = written();
    for logged in [
        "SELECT * FROM t WHERE b + 0 = 1;",
        "SELECT b FROM t ORDER BY b;",
        "UPDATE t SET b = b WHERE b + 0 = 3;",
        "DELETE FROM t WHERE b + 0 = 99;",
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'ni';",
    ] {
        assert!(log.contains(&format!("\n{logged}\n")), "{logged}: {log}");
    }
    for not in [
        "WHERE a = 1;",
        "BETWEEN 1 AND 2;",
        "SHOW TABLES;",
        "SELECT 1 + 1;",
        "CREATE USER ni_user;",
    ] {
        assert!(!log.contains(not), "{not}: {log}");
    }
    // They count as slow, as in MariaDB (the SHOW STATUS is not: an index-less SHOW).
    assert_eq!(status(&mut c, "Slow_queries"), before + 5);

    // min_examined_row_limit still applies (its MariaDB 10.11 name here).
    ok(&mut c, "SET log_slow_min_examined_row_limit = 100");
    c.rows("SELECT * FROM t WHERE b + 0 = 7");
    assert!(!written().contains("b + 0 = 7"));
    ok(&mut c, "SET min_examined_row_limit = 0");

    // log_output NONE: nothing is written, the count goes on; TABLE is refused, since
    // Quire has no mysql.slow_log.
    ok(&mut c, "SET GLOBAL log_output = 'NONE'");
    let before = status(&mut c, "Slow_queries");
    c.rows("SELECT * FROM t WHERE b + 0 = 8");
    assert!(!written().contains("b + 0 = 8"));
    assert_eq!(status(&mut c, "Slow_queries"), before + 1);
    assert_eq!(
        c.query("SET GLOBAL log_output = 'TABLE'").err_code(),
        Some(1231)
    );
    assert_eq!(
        c.query("SET GLOBAL log_output = 'FILE,TABLE'").err_code(),
        Some(1231)
    );
    ok(&mut c, "SET GLOBAL log_output = 'FILE'");
    c.rows("SELECT * FROM t WHERE b + 0 = 9");
    assert!(written().contains("\nSELECT * FROM t WHERE b + 0 = 9;\n"));

    // A session takes the global filter when it connects, as in MariaDB: a later SET
    // GLOBAL does not reach it.
    ok(&mut c, "SET GLOBAL log_queries_not_using_indexes = ON");
    let mut d = server.connect();
    ok(&mut c, "SET GLOBAL log_queries_not_using_indexes = OFF");
    assert_eq!(
        d.rows("SELECT @@log_queries_not_using_indexes, @@global.log_queries_not_using_indexes"),
        vec![vec!["1".to_string(), "0".to_string()]]
    );

    // Off again through log_slow_filter itself.
    ok(&mut c, "SET log_slow_filter = 'admin'");
    assert_eq!(
        c.rows("SELECT @@log_queries_not_using_indexes"),
        vec![vec!["0".to_string()]]
    );
    c.rows("SELECT * FROM t WHERE b + 0 = 10");
    assert!(!written().contains("b + 0 = 10"));
}

fn session_status(c: &mut Client, name: &str) -> u64 {
    let r = c.rows(&format!("SHOW SESSION STATUS LIKE '{name}'"));
    assert_eq!(r.len(), 1, "{name}: {r:?}");
    r[0][1].parse().unwrap()
}

#[test]
fn session_status_counts_this_sessions_statements_only() {
    let server = TestServer::start();
    let mut a = server.connect();
    let mut b = server.connect();
    for _ in 0..3 {
        a.rows("SELECT 1");
    }
    b.rows("SELECT 2");
    assert_eq!(session_status(&mut a, "Com_select"), 3);
    assert_eq!(session_status(&mut b, "Com_select"), 1);
    assert!(status(&mut a, "Com_select") >= 4);
    // Slow for b only (long_query_time 0); each SHOW counts once it has answered.
    ok(&mut b, "SET long_query_time = 0");
    b.rows("SELECT 3");
    assert_eq!(session_status(&mut b, "Slow_queries"), 2);
    assert_eq!(session_status(&mut a, "Slow_queries"), 0);
    assert!(status(&mut a, "Slow_queries") >= 3);
    // Bytes: the session's own, its login's included; the instance's hold both sessions'.
    let mine = session_status(&mut a, "Bytes_received");
    assert!(mine > 0 && mine < status(&mut a, "Bytes_received"));
    assert!(session_status(&mut a, "Bytes_sent") > 0);
    // A global-only counter reads the same in both scopes.
    assert_eq!(
        session_status(&mut a, "Connections"),
        status(&mut a, "Connections")
    );
    // COM_CHANGE_USER starts the session's counters over, as MariaDB's THD::init.
    assert!(matches!(b.change_user("root", ""), Reply::Ok { .. }));
    assert_eq!(session_status(&mut b, "Com_select"), 0);
    // The two SHOWs since.
    assert_eq!(session_status(&mut b, "Questions"), 2);
}
