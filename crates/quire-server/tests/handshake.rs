//! The connection phase: authentication, plugin switch, CONNECT_WITH_DB, connection limits.

#![allow(clippy::unwrap_used)]

mod common;

use common::{greet, Client, Reply, TestServer};
use mysql_common::packets::AuthPlugin;
use quire_server::ServerConfig;

#[test]
fn root_with_empty_password_connects_and_pings() {
    let server = TestServer::start();
    let mut c = server.connect();
    assert!(c.conn_id > 0);
    assert!(matches!(c.ping(), Reply::Ok { status, .. } if status & 0x0002 != 0));
}

#[test]
fn greeting_carries_a_fresh_salt_and_connection_id_per_connection() {
    let server = TestServer::start();
    let (_a, ga) = greet(server.addr);
    let (_b, gb) = greet(server.addr);
    let (ida, salta) = ga.unwrap();
    let (idb, saltb) = gb.unwrap();
    assert_ne!(ida, idb);
    assert_ne!(salta, saltb);
    assert_eq!(salta.len(), 20);
    assert!(salta.iter().all(|&b| b != 0));
}

#[test]
fn wrong_password_is_refused_with_1045() {
    let server = TestServer::start_with(ServerConfig {
        root_password: Some("s3cret".into()),
        ..ServerConfig::default()
    });
    match Client::connect(server.addr, "root", "nope", None) {
        Err(Reply::Err {
            code,
            state,
            message,
        }) => {
            assert_eq!(code, 1045);
            assert_eq!(state, "28000");
            assert_eq!(
                message,
                "Access denied for user 'root'@'localhost' (using password: YES)"
            );
        }
        other => panic!("{other:?}", other = other.map(|_| ())),
    }
    match Client::connect(server.addr, "root", "", None) {
        Err(Reply::Err { code, message, .. }) => {
            assert_eq!(code, 1045);
            assert!(message.ends_with("(using password: NO)"), "{message}");
        }
        other => panic!("{other:?}", other = other.map(|_| ())),
    }
    let mut c = Client::connect(server.addr, "root", "s3cret", None).unwrap();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn unknown_user_is_refused_with_1045() {
    let server = TestServer::start();
    let r = Client::connect(server.addr, "mallory", "", None).map(|_| ());
    assert_eq!(r.unwrap_err().err_code(), Some(1045));
}

#[test]
fn caching_sha2_client_authenticates_by_its_fast_path() {
    let server = TestServer::start_with(ServerConfig {
        root_password: Some("pw".into()),
        ..ServerConfig::default()
    });
    let sha2 = AuthPlugin::CachingSha2Password;
    let mut c = Client::connect_as(server.addr, "root", "pw", None, sha2.clone()).unwrap();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    for (user, pw) in [("root", "px"), ("root", ""), ("bob", "pw")] {
        let bad = Client::connect_as(server.addr, user, pw, None, sha2.clone()).map(|_| ());
        assert_eq!(bad.unwrap_err().err_code(), Some(1045), "{user}/{pw}");
    }
    // Without a password, the empty response is the whole exchange.
    let open = TestServer::start();
    let mut c = Client::connect_as(open.addr, "root", "", None, sha2.clone()).unwrap();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    let bad = Client::connect_as(open.addr, "root", "pw", None, sha2).map(|_| ());
    assert_eq!(bad.unwrap_err().err_code(), Some(1045));
}

#[test]
fn a_client_with_another_plugin_is_switched_to_native_password() {
    let server = TestServer::start_with(ServerConfig {
        root_password: Some("pw".into()),
        ..ServerConfig::default()
    });
    let ed = AuthPlugin::Other(std::borrow::Cow::Borrowed(b"client_ed25519"));
    let mut c = Client::connect_as(server.addr, "root", "pw", None, ed.clone()).unwrap();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    let bad = Client::connect_as(server.addr, "root", "px", None, ed).map(|_| ());
    assert_eq!(bad.unwrap_err().err_code(), Some(1045));
}

#[test]
fn connect_with_unknown_database_gets_1049() {
    let server = TestServer::start();
    // The SQL layer decides which databases exist; an unknown one refuses the connection.
    let r = Client::connect(server.addr, "root", "", Some("no_such_db")).map(|_| ());
    match r.unwrap_err() {
        Reply::Err { code, state, .. } => {
            assert_eq!(code, 1049);
            assert_eq!(state, "42000");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn max_connections_refuses_with_1040() {
    let server = TestServer::start_with(ServerConfig {
        max_connections: Some(2),
        ..ServerConfig::default()
    });
    let mut a = server.connect();
    let mut b = server.connect();
    let (_io, refused) = greet(server.addr);
    assert_eq!(refused.unwrap_err().err_code(), Some(1040));
    // A slot frees when a client leaves.
    a.send(&[0x01]);
    drop(a);
    let mut ok = None;
    for _ in 0..100 {
        match Client::connect(server.addr, "root", "", None) {
            Ok(c) => {
                ok = Some(c);
                break;
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    assert!(matches!(ok.unwrap().ping(), Reply::Ok { .. }));
    assert!(matches!(b.ping(), Reply::Ok { .. }));
}

#[test]
fn shutdown_closes_open_connections() {
    let server = TestServer::start();
    let mut c = server.connect();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    server.stop();
    // The socket was shut down: the next read sees the end.
    c.send(&[0x0E]);
    assert!(c.io.read_message().is_err());
}

#[test]
fn repeated_failed_logins_from_a_host_are_answered_late_until_one_succeeds() {
    let server = TestServer::start_with(ServerConfig {
        root_password: Some("pw".into()),
        login_delay_threshold: 2,
        login_delay_min: std::time::Duration::from_millis(400),
        login_delay_max: std::time::Duration::from_millis(900),
        ..ServerConfig::default()
    });
    let timed = |pw: &str| {
        let start = std::time::Instant::now();
        let ok = Client::connect(server.addr, "root", pw, None).is_ok();
        (ok, start.elapsed())
    };
    // Below the threshold nothing waits on purpose (no lower bound to check), then each
    // answer waits at least the delay, growing by a second per failure up to the maximum.
    assert!(!timed("x").0);
    assert!(!timed("y").0);
    let (ok, t) = timed("z");
    assert!(!ok && t >= std::time::Duration::from_millis(400), "{t:?}");
    let (ok, t) = timed("w");
    assert!(!ok && t >= std::time::Duration::from_millis(900), "{t:?}");
    // The right password also waits, then clears the count.
    let (ok, t) = timed("pw");
    assert!(ok && t >= std::time::Duration::from_millis(900), "{t:?}");
    let (ok, _) = timed("pw");
    assert!(ok);
    assert!(!timed("again").0);
}

#[test]
fn max_user_connections_refuses_the_next_one_with_1203() {
    let server = TestServer::start();
    let mut admin = server.connect();
    assert!(matches!(
        admin.query("CREATE USER plain IDENTIFIED BY 'p'"),
        Reply::Ok { .. }
    ));
    assert!(matches!(
        admin.query("SET GLOBAL max_user_connections = 2"),
        Reply::Ok { .. }
    ));
    let plain = || Client::connect(server.addr, "plain", "p", None);
    let _first = plain().unwrap();
    let second = plain().unwrap();
    match plain().map(|_| ()) {
        Err(Reply::Err {
            code,
            state,
            message,
        }) => {
            assert_eq!((code, state.as_str()), (1203, "42000"));
            assert_eq!(
                message,
                "User plain already has more than 'max_user_connections' active connections"
            );
        }
        other => panic!("expected 1203, got {other:?}"),
    }
    // root has SUPER: not held to the global limit (MariaDB 10.11's
    // check_for_max_user_connections).
    let _roots = [server.connect(), server.connect()];
    drop(second);
    // A slot frees when a session ends (its thread removes it shortly after the close).
    let start = std::time::Instant::now();
    while plain().is_err() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "no slot freed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(matches!(
        admin.query("SET GLOBAL max_user_connections = 0"),
        Reply::Ok { .. }
    ));
}
