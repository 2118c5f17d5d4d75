//! The real MariaDB client against the server: connect, ping, a query. Skipped (with a
//! message) when the `mariadb` binaries are not installed.

#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::TestServer;
use quire_server::ServerConfig;

fn have(bin: &str) -> bool {
    Command::new(bin).arg("--version").output().is_ok()
}

#[test]
fn mariadb_admin_pings_with_the_password_and_is_refused_without_it() {
    if !have("mariadb-admin") {
        eprintln!("skipped: mariadb-admin is not installed");
        return;
    }
    let server = TestServer::start_with(ServerConfig {
        root_password: Some("pw".into()),
        ..ServerConfig::default()
    });
    let port = server.addr.port().to_string();
    let out = Command::new("mariadb-admin")
        .args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
        ])
        .args(["-uroot", "-ppw", "--connect-timeout=10", "ping"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout} {:?}", out);
    assert!(stdout.contains("is alive"), "{stdout}");

    let bad = Command::new("mariadb-admin")
        .args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
        ])
        .args(["-uroot", "-pwrong", "--connect-timeout=10", "ping"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("Access denied for user 'root'"), "{stderr}");
}

#[test]
fn mariadb_cli_runs_a_query_and_prints_its_answer() {
    if !have("mariadb") {
        eprintln!("skipped: mariadb is not installed");
        return;
    }
    let server = TestServer::start();
    let port = server.addr.port().to_string();
    let out = Command::new("mariadb")
        .args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            "-P",
            &port,
        ])
        .args(["-uroot", "--connect-timeout=10", "-N", "-e", "SELECT 1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout.trim(), "1");
}

/// The character set a client names in its handshake sets the connection's variables, as
/// in MariaDB 10.11 (the values below are MariaDB's), latin1 and ascii included (the server
/// converts them at the wire: `charset.rs`).
#[test]
fn the_handshake_character_set_sets_the_connection_variables() {
    if !have("mariadb") {
        eprintln!("skipped: mariadb is not installed");
        return;
    }
    let server = TestServer::start();
    let port = server.addr.port().to_string();
    let query = "SELECT @@character_set_client, @@character_set_connection, \
                 @@character_set_results, @@collation_connection";
    for (charset, want) in [
        ("utf8mb4", "utf8mb4\tutf8mb4\tutf8mb4\tutf8mb4_general_ci"),
        ("utf8", "utf8mb3\tutf8mb3\tutf8mb3\tutf8mb3_general_ci"),
        ("utf8mb3", "utf8mb3\tutf8mb3\tutf8mb3\tutf8mb3_general_ci"),
        ("latin1", "latin1\tlatin1\tlatin1\tlatin1_swedish_ci"),
        ("ascii", "ascii\tascii\tascii\tascii_general_ci"),
    ] {
        let out = Command::new("mariadb")
            .args([
                "--no-defaults",
                "--protocol=TCP",
                "-h127.0.0.1",
                "-P",
                &port,
            ])
            .arg(format!("--default-character-set={charset}"))
            .args(["-uroot", "--connect-timeout=10", "-N", "-e", query])
            .output()
            .unwrap();
        assert!(out.status.success(), "{charset}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            want,
            "{charset}"
        );
    }
}

#[test]
fn unix_socket_clients_are_localhost() {
    if !have("mariadb-admin") {
        eprintln!("skipped: mariadb-admin is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("q.sock");
    let server = TestServer::start_unix(&sock, Some("pw"));
    let run = |pw: &str| {
        Command::new("mariadb-admin")
            .args(["--no-defaults", "-S"])
            .arg(&sock)
            .args(["-uroot", &format!("-p{pw}"), "--connect-timeout=10", "ping"])
            .output()
            .unwrap()
    };
    let ok = run("pw");
    assert!(ok.status.success(), "{ok:?}");
    let bad = run("nope");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("'root'@'localhost'"), "{stderr}");
    server.stop();
    assert!(
        !sock.exists(),
        "the socket file is removed when the server stops"
    );
}
