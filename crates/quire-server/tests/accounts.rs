//! Accounts and privileges through the wire protocol (docs/security.md): each refusal with
//! its code and MariaDB's text, connecting as different users, and grants that survive a
//! restart of the server on the same data directory.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{small_config, Client, Reply};
use quire_engine::table::Db;
use quire_server::{serve_on, Listeners, ServerConfig};

/// A server over `dir` (kept by the caller, so a second server can open it again).
struct Server {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(dir: &Path, root_password: Option<&str>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let cfg = ServerConfig {
            bind: None,
            root_password: root_password.map(str::to_owned),
            ..ServerConfig::default()
        };
        let path = dir.to_path_buf();
        let thread = std::thread::spawn(move || {
            let db = Db::open(&path, small_config()).unwrap_or_else(|e| panic!("open: {e}"));
            serve_on(&db, Listeners::from_tcp(listener), &cfg, &flag)
                .unwrap_or_else(|e| panic!("serve: {e}"));
            db.shutdown().unwrap_or_else(|e| panic!("shutdown: {e}"));
        });
        Server {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let r = t.join();
            if !std::thread::panicking() {
                assert!(r.is_ok(), "server thread panicked");
            }
        }
    }
}

fn ok(c: &mut Client, sql: &str) {
    match c.query(sql) {
        Reply::Ok { .. } => {}
        other => panic!("{sql}: {other:?}"),
    }
}

/// The error of `sql`: (code, SQLSTATE, message).
fn err(c: &mut Client, sql: &str) -> (u16, String, String) {
    match c.query(sql) {
        Reply::Err {
            code,
            state,
            message,
        } => (code, state, message),
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

/// The number of rows `sql` returns.
fn rows(c: &mut Client, sql: &str) -> usize {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let first = c.command(&p);
    match Reply::parse(&first) {
        Reply::Other(_) => c.read_result_set(&first).rows.len(),
        other => panic!("{sql}: {other:?}"),
    }
}

fn login_err(addr: std::net::SocketAddr, user: &str, pw: &str, db: Option<&str>) -> (u16, String) {
    match Client::connect(addr, user, pw, db) {
        Err(Reply::Err { code, message, .. }) => (code, message),
        Err(other) => panic!("{user}: {other:?}"),
        Ok(_) => panic!("{user}/{pw} logged in"),
    }
}

fn root(addr: std::net::SocketAddr) -> Client {
    Client::connect(addr, "root", "", None).unwrap_or_else(|e| panic!("root: {e:?}"))
}

#[test]
fn each_refusal_has_mariadbs_code_and_text() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = Server::start(dir.path(), None);
    let mut r = root(s.addr);
    ok(&mut r, "CREATE DATABASE app");
    ok(&mut r, "CREATE TABLE app.t (a INT PRIMARY KEY)");
    ok(&mut r, "CREATE TABLE app.secret (a INT)");
    ok(&mut r, "CREATE DATABASE other");
    ok(&mut r, "CREATE USER 'alice'@'%' IDENTIFIED BY 'apw'");
    ok(&mut r, "GRANT SELECT, INSERT ON app.t TO alice");
    ok(&mut r, "CREATE USER bob IDENTIFIED BY 'bpw' ACCOUNT LOCK");

    // 1045: wrong password, no password, unknown user.
    assert_eq!(
        login_err(s.addr, "alice", "wrong", None),
        (
            1045,
            "Access denied for user 'alice'@'localhost' (using password: YES)".into()
        )
    );
    assert_eq!(
        login_err(s.addr, "alice", "", None),
        (
            1045,
            "Access denied for user 'alice'@'localhost' (using password: NO)".into()
        )
    );
    assert_eq!(login_err(s.addr, "mallory", "x", None).0, 1045);
    // 4151: the right password of a locked account.
    assert_eq!(
        login_err(s.addr, "bob", "bpw", None),
        (4151, "Access denied, this account is locked".into())
    );
    // 1044 at connect: a database without a grant.
    assert_eq!(
        login_err(s.addr, "alice", "apw", Some("other")),
        (
            1044,
            "Access denied for user 'alice'@'%' to database 'other'".into()
        )
    );

    let mut a = Client::connect(s.addr, "alice", "apw", Some("app"))
        .unwrap_or_else(|e| panic!("alice: {e:?}"));
    ok(&mut a, "INSERT INTO app.t VALUES (1)");
    assert_eq!(rows(&mut a, "SELECT a FROM t"), 1);
    let (code, state, msg) = err(&mut a, "SELECT * FROM secret");
    assert_eq!((code, state.as_str()), (1142, "42000"));
    assert_eq!(
        msg,
        "SELECT command denied to user 'alice'@'localhost' for table `app`.`secret`"
    );
    let (code, _, msg) = err(&mut a, "DELETE FROM t");
    assert_eq!(code, 1142);
    assert!(msg.starts_with("DELETE command denied"), "{msg}");
    let (code, state, msg) = err(&mut a, "USE other");
    assert_eq!((code, state.as_str()), (1044, "42000"));
    assert_eq!(
        msg,
        "Access denied for user 'alice'@'%' to database 'other'"
    );
    for (sql, privilege) in [
        ("SET GLOBAL wait_timeout = 5", "SUPER"),
        ("FLUSH TABLES", "RELOAD"),
        ("SHUTDOWN", "SHUTDOWN"),
        ("CREATE USER eve", "CREATE USER"),
    ] {
        let (code, state, msg) = err(&mut a, sql);
        assert_eq!((code, state.as_str()), (1227, "42000"), "{sql}");
        assert_eq!(
            msg,
            format!(
                "Access denied; you need (at least one of) the {privilege} privilege(s) for this operation"
            )
        );
    }
    // Prepared statements are checked too (COM_STMT_PREPARE).
    let mut p = vec![0x16];
    p.extend_from_slice(b"SELECT * FROM app.secret");
    let reply = Reply::parse(&a.command(&p));
    assert_eq!(reply.err_code(), Some(1142));
    // A grant applies to a connected session at once; a revoke too.
    ok(&mut r, "GRANT SELECT ON app.secret TO alice");
    assert_eq!(rows(&mut a, "SELECT * FROM secret"), 0);
    ok(&mut r, "REVOKE SELECT ON app.secret FROM alice");
    assert_eq!(err(&mut a, "SELECT * FROM secret").0, 1142);
    // Unlocked, bob gets in.
    ok(&mut r, "ALTER USER bob ACCOUNT UNLOCK");
    assert!(Client::connect(s.addr, "bob", "bpw", None).is_ok());
}

#[test]
fn kill_of_another_users_thread_needs_super() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = Server::start(dir.path(), None);
    let mut r = root(s.addr);
    ok(&mut r, "CREATE USER carol IDENTIFIED BY 'c'");
    let mut c = Client::connect(s.addr, "carol", "c", None).unwrap_or_else(|e| panic!("{e:?}"));
    let root_id = r.conn_id;
    let (code, state, msg) = err(&mut c, &format!("KILL {root_id}"));
    assert_eq!((code, state.as_str()), (1095, "HY000"));
    assert_eq!(msg, format!("You are not owner of thread {root_id}"));
    // Its own connection it may kill.
    let own = c.conn_id;
    let mut c2 = Client::connect(s.addr, "carol", "c", None).unwrap_or_else(|e| panic!("{e:?}"));
    ok(&mut c2, &format!("KILL {own}"));
    // root (SUPER) may kill carol's.
    let other = c2.conn_id;
    ok(&mut r, &format!("KILL {other}"));
}

#[test]
fn grants_and_passwords_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    {
        let s = Server::start(dir.path(), None);
        let mut r = root(s.addr);
        ok(&mut r, "CREATE DATABASE app");
        ok(&mut r, "CREATE TABLE app.t (a INT)");
        ok(&mut r, "CREATE USER dave IDENTIFIED BY 'dpw'");
        ok(&mut r, "GRANT SELECT ON app.* TO dave");
        ok(
            &mut r,
            "CREATE USER erin IDENTIFIED VIA ed25519 USING PASSWORD('epw')",
        );
        ok(&mut r, "ALTER USER erin ACCOUNT LOCK");
    }
    let s = Server::start(dir.path(), None);
    let mut d =
        Client::connect(s.addr, "dave", "dpw", Some("app")).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(rows(&mut d, "SELECT * FROM t"), 0);
    assert_eq!(err(&mut d, "INSERT INTO t VALUES (1)").0, 1142);
    assert_eq!(login_err(s.addr, "dave", "nope", None).0, 1045);
    let mut r = root(s.addr);
    assert_eq!(rows(&mut r, "SHOW CREATE USER erin"), 1);
}

#[test]
fn root_password_option_is_roots_password_at_each_start() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    {
        let s = Server::start(dir.path(), Some("first"));
        assert!(Client::connect(s.addr, "root", "first", None).is_ok());
        assert_eq!(login_err(s.addr, "root", "", None).0, 1045);
    }
    // Same data directory, another configured password: it is root's now.
    let s = Server::start(dir.path(), Some("second"));
    assert!(Client::connect(s.addr, "root", "second", None).is_ok());
    assert_eq!(login_err(s.addr, "root", "first", None).0, 1045);
}

#[test]
fn a_data_directory_without_system_tables_gets_them_and_root_works() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Made as before accounts existed: tables through the embedded API, no `mysql` database.
    {
        let db = Db::open(dir.path(), small_config()).unwrap_or_else(|e| panic!("open: {e}"));
        {
            let inst = quire_sql::Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            let mut sink = quire_sql::CollectSink::default();
            for sql in [
                "CREATE DATABASE app",
                "CREATE TABLE app.t (a INT)",
                "INSERT INTO app.t VALUES (7)",
            ] {
                s.query(sql, &mut sink)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
        }
        assert!(!db.databases().iter().any(|d| d == "mysql"));
        db.shutdown().unwrap_or_else(|e| panic!("shutdown: {e}"));
    }
    let s = Server::start(dir.path(), None);
    let mut r = root(s.addr);
    assert_eq!(rows(&mut r, "SELECT * FROM app.t"), 1);
    assert_eq!(
        rows(
            &mut r,
            "SELECT user, host FROM mysql.user WHERE user = 'root'"
        ),
        2
    );
    ok(&mut r, "CREATE USER frank IDENTIFIED BY 'f'");
    assert!(Client::connect(s.addr, "frank", "f", None).is_ok());
}

/// (code, message) of an ERR reply.
fn refused(r: Reply) -> (u16, String) {
    match r {
        Reply::Err { code, message, .. } => (code, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// CURRENT_USER() of a session.
fn current_user(c: &mut Client) -> String {
    let first = c.command(b"\x03SELECT CURRENT_USER()");
    let rs = c.read_result_set(&first);
    let row = &rs.rows[0];
    String::from_utf8_lossy(&row[1..1 + usize::from(row[0])]).into_owned()
}

#[test]
fn max_user_connections_holds_for_change_user_as_for_a_login() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let server = Server::start(dir.path(), None);
    let mut admin = root(server.addr);
    ok(
        &mut admin,
        "CREATE USER mu@'%' IDENTIFIED BY 'pw' WITH MAX_USER_CONNECTIONS 1",
    );
    ok(&mut admin, "CREATE USER nu@'%' IDENTIFIED BY 'pw'");
    let account_limit =
        "User 'mu' has exceeded the 'max_user_connections' resource (current value: 1)";
    let global_limit = "User nu already has more than 'max_user_connections' active connections";

    // The account's own limit: a second login, and a change to it, get 1226; the
    // connection that asked stays who it was.
    let mut mu = Client::connect(server.addr, "mu", "pw", None).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        login_err(server.addr, "mu", "pw", None),
        (1226, account_limit.into())
    );
    let mut other = root(server.addr);
    assert_eq!(
        refused(other.change_user("mu", "pw")),
        (1226, account_limit.into())
    );
    assert_eq!(current_user(&mut other), "root@localhost");
    // Its own session is not one of the others: mu may change to mu.
    assert!(matches!(mu.change_user("mu", "pw"), Reply::Ok { .. }));
    assert_eq!(current_user(&mut mu), "mu@%");
    // Once mu has left, the change is taken.
    assert!(matches!(mu.change_user("root", ""), Reply::Ok { .. }));
    assert!(matches!(other.change_user("mu", "pw"), Reply::Ok { .. }));
    assert_eq!(current_user(&mut other), "mu@%");
    assert!(matches!(other.change_user("root", ""), Reply::Ok { .. }));

    // The global limit, for an account without its own: 1203, for logins and changes.
    ok(&mut admin, "SET GLOBAL max_user_connections = 1");
    let mut nu = Client::connect(server.addr, "nu", "pw", None).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        login_err(server.addr, "nu", "pw", None),
        (1203, global_limit.into())
    );
    assert_eq!(
        refused(other.change_user("nu", "pw")),
        (1203, global_limit.into())
    );
    assert_eq!(current_user(&mut other), "root@localhost");
    assert!(matches!(nu.change_user("nu", "pw"), Reply::Ok { .. }));
    // An account's own limit replaces the global one; SUPER is not held to the global one.
    ok(&mut admin, "ALTER USER nu@'%' WITH MAX_USER_CONNECTIONS 2");
    let _second =
        Client::connect(server.addr, "nu", "pw", None).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        login_err(server.addr, "nu", "pw", None),
        (
            1226,
            "User 'nu' has exceeded the 'max_user_connections' resource (current value: 2)".into()
        )
    );
    let _roots = [root(server.addr), root(server.addr)];
    // -1: the account may not log in at all.
    ok(&mut admin, "ALTER USER mu@'%' WITH MAX_USER_CONNECTIONS -1");
    assert_eq!(login_err(server.addr, "mu", "pw", None).0, 1226);
    ok(&mut admin, "SET GLOBAL max_user_connections = 0");
}

#[test]
fn max_user_connections_of_an_account_shows_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    {
        let server = Server::start(dir.path(), None);
        let mut c = root(server.addr);
        ok(
            &mut c,
            "CREATE USER g1@'%' WITH MAX_USER_CONNECTIONS 2 ACCOUNT LOCK",
        );
        ok(
            &mut c,
            "GRANT SELECT ON *.* TO g1@'%' WITH GRANT OPTION MAX_USER_CONNECTIONS 4",
        );
        // The per-hour limits are not counted by Quire: refused, not taken silently.
        assert_eq!(
            err(&mut c, "CREATE USER g2@'%' WITH MAX_QUERIES_PER_HOUR 2").0,
            1235
        );
        assert_eq!(err(&mut c, "ALTER USER g1@'%' WITH").0, 1064);
        assert_eq!(
            err(
                &mut c,
                "ALTER USER g1@'%' WITH MAX_USER_CONNECTIONS 99999999999"
            )
            .0,
            1064
        );
    }
    let server = Server::start(dir.path(), None);
    let mut c = root(server.addr);
    let first = c.command(b"\x03SHOW CREATE USER g1@'%'");
    let rs = c.read_result_set(&first);
    let row = &rs.rows[0];
    assert_eq!(
        String::from_utf8_lossy(&row[1..1 + usize::from(row[0])]),
        "CREATE USER `g1`@`%` WITH MAX_USER_CONNECTIONS 4 ACCOUNT LOCK"
    );
    let first = c.command(b"\x03SHOW GRANTS FOR g1@'%'");
    let rs = c.read_result_set(&first);
    let row = &rs.rows[0];
    assert_eq!(
        String::from_utf8_lossy(&row[1..1 + usize::from(row[0])]),
        "GRANT SELECT ON *.* TO `g1`@`%` WITH GRANT OPTION MAX_USER_CONNECTIONS 4"
    );
    ok(&mut c, "ALTER USER g1@'%' WITH MAX_USER_CONNECTIONS 0");
    let first = c.command(b"\x03SHOW GRANTS FOR g1@'%'");
    let rs = c.read_result_set(&first);
    let row = &rs.rows[0];
    assert_eq!(
        String::from_utf8_lossy(&row[1..1 + usize::from(row[0])]),
        "GRANT SELECT ON *.* TO `g1`@`%` WITH GRANT OPTION"
    );
}

#[test]
fn a_mysql_user_table_from_before_connection_limits_gets_the_column() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // mysql.user as the servers before connection limits made it, with one account.
    {
        let db = Db::open(dir.path(), small_config()).unwrap_or_else(|e| panic!("open: {e}"));
        {
            let inst = quire_sql::Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            let mut sink = quire_sql::CollectSink::default();
            for sql in [
                "CREATE DATABASE mysql",
                "CREATE TABLE mysql.user (Host VARCHAR(255) NOT NULL, \
                 User VARCHAR(128) COLLATE utf8mb4_bin NOT NULL, \
                 plugin VARCHAR(64) NOT NULL, authentication_string TEXT NOT NULL, \
                 sha2_digest VARCHAR(64) NOT NULL, Priv BIGINT UNSIGNED NOT NULL, \
                 account_locked CHAR(1) NOT NULL, PRIMARY KEY (Host, User))",
                "INSERT INTO mysql.user VALUES ('%', 'root', 'mysql_native_password', '', '', \
                 274877906943, 'N')",
                "INSERT INTO mysql.user VALUES ('%', 'old', 'mysql_native_password', '', '', 0, 'N')",
            ] {
                s.query(sql, &mut sink)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
        }
        db.shutdown().unwrap_or_else(|e| panic!("shutdown: {e}"));
    }
    let s = Server::start(dir.path(), None);
    let mut r = root(s.addr);
    assert_eq!(
        rows(
            &mut r,
            "SELECT User FROM mysql.user WHERE max_user_connections = 0"
        ),
        2
    );
    let _first = Client::connect(s.addr, "old", "", None).unwrap_or_else(|e| panic!("{e:?}"));
    ok(&mut r, "ALTER USER old@'%' WITH MAX_USER_CONNECTIONS 1");
    assert_eq!(login_err(s.addr, "old", "", None).0, 1226);
}

#[test]
fn logins_at_once_never_pass_an_account_limit_together() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = Server::start(dir.path(), None);
    let mut r = root(s.addr);
    ok(
        &mut r,
        "CREATE USER racer IDENTIFIED BY 'r' WITH MAX_USER_CONNECTIONS 2",
    );
    for round in 0..5 {
        // Sixteen logins released together; the sessions that got in stay open until all
        // have answered.
        let start = Arc::new(std::sync::Barrier::new(16));
        let addr = s.addr;
        let logins: Vec<_> = (0..16)
            .map(|_| {
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    Client::connect(addr, "racer", "r", None).ok()
                })
            })
            .collect();
        let admitted: Vec<Client> = logins
            .into_iter()
            .filter_map(|t| t.join().unwrap_or_else(|_| panic!("login thread")))
            .collect();
        assert_eq!(admitted.len(), 2, "round {round}");
        drop(admitted);
        // The sessions end shortly after their connections close.
        let t = std::time::Instant::now();
        while rows(
            &mut r,
            "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'racer'",
        ) > 0
        {
            assert!(t.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
