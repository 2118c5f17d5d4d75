//! What a bad client can do: oversized or out-of-order packets, garbage, idling. The
//! server answers or closes, never panics, and keeps accepting.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Client, Reply, TestServer};
use quire_server::ServerConfig;
use rand::{Rng, SeedableRng};

#[test]
fn oversized_packet_gets_1153_not_a_panic() {
    let server = TestServer::start_with(ServerConfig {
        max_allowed_packet: Some(4096),
        ..ServerConfig::default()
    });
    let mut c = server.connect();
    let mut q = vec![0x03];
    q.extend_from_slice(&vec![b' '; 10_000]);
    c.send(&q);
    match Reply::parse(&c.io.read_message().unwrap()) {
        Reply::Err {
            code,
            state,
            message,
        } => {
            assert_eq!(code, 1153);
            assert_eq!(state, "08S01");
            assert_eq!(
                message,
                "Got a packet bigger than 'max_allowed_packet' bytes"
            );
        }
        other => panic!("{other:?}"),
    }
    // ... and the connection is closed.
    assert!(c.io.read_message().is_err());
    // The server still serves.
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
}

#[test]
fn packets_out_of_order_get_1156_and_close() {
    let server = TestServer::start();
    let mut c = server.connect();
    // A COM_PING with sequence id 5 where 0 is due.
    c.raw(&[1, 0, 0, 5, 0x0E]).unwrap();
    c.io.reset_seq();
    assert_eq!(
        Reply::parse(&c.io.read_message().unwrap()).err_code(),
        Some(1156)
    );
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
}

#[test]
fn malformed_command_bodies_get_an_error_and_the_connection_survives() {
    let server = TestServer::start();
    let mut c = server.connect();
    // Truncated bodies of every command that has one.
    for cmd in [0x0C, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C] {
        // (COM_STMT_CLOSE and SEND_LONG_DATA have no reply when well formed; a body too
        // short to name a statement is answered like any other malformed one.)
        c.send(&[cmd, 1]);
        let r = Reply::parse(&c.io.read_message().unwrap());
        assert_eq!(r.err_code(), Some(1835), "command {cmd:#x}: {r:?}");
    }
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn malformed_packets_never_panic_the_server() {
    let server = TestServer::start();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5EED);
    for round in 0..40 {
        let mut c = server.connect();
        // Random framed commands (valid framing, random bodies), then random raw bytes.
        for _ in 0..5 {
            let len = rng.gen_range(0..64);
            let body: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let mut cmd = vec![rng.gen_range(0..0x20u8)];
            cmd.extend_from_slice(&body);
            if cmd[0] == 0x01 || cmd[0] == 0x08 {
                continue; // COM_QUIT just leaves; COM_SHUTDOWN stops the server by design
            }
            c.send(&cmd);
            if (cmd[0] == 0x18 && cmd.len() >= 7) || (cmd[0] == 0x19 && cmd.len() >= 5) {
                continue; // no reply by design
            }
            // A reply, or a closed connection: both are fine, a hang is not.
            if c.io.read_message().is_err() {
                break;
            }
        }
        let junk: Vec<u8> = (0..rng.gen_range(1..200)).map(|_| rng.gen()).collect();
        let _ = c.raw(&junk);
        drop(c);
        if round % 10 == 0 {
            assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
        }
    }
    // Garbage in place of a handshake response.
    for len in [0usize, 1, 5, 40, 300] {
        let (mut io, _) = common::greet(server.addr);
        let junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        io.write_message(&junk).unwrap();
        io.flush().unwrap();
        let _ = io.read_message();
    }
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
    server.stop();
}

#[test]
fn idle_connection_is_closed_after_wait_timeout() {
    let server = TestServer::start_with(ServerConfig {
        wait_timeout: Some(Duration::from_secs(1)),
        ..ServerConfig::default()
    });
    let mut c = server.connect();
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    let start = Instant::now();
    // The server closes the idle connection: the read ends, well before the client's own
    // 20 s timeout.
    assert!(c.io.read_message().is_err());
    assert!(start.elapsed() < Duration::from_secs(10));
    let _ = Client::connect(server.addr, "root", "", None).unwrap();
}

#[test]
fn deep_expressions_are_answered_or_refused_and_never_overflow_the_stack() {
    let server = TestServer::start();
    let mut c = server.connect();
    // Thousands of terms, as a generated OR list has: answered (the connection threads'
    // stacks are sized for them). Before, `1+1+…` of 1000 terms overflowed the
    // connection thread's stack and aborted the whole server.
    for sql in [
        format!("SELECT 1{}", "+1".repeat(3000)),
        format!("SELECT 0{}", " OR 0".repeat(3000)),
    ] {
        let first = c.command(&[&[0x03u8][..], sql.as_bytes()].concat());
        let rs = c.read_result_set(&first);
        assert_eq!(rs.rows.len(), 1, "{}…", &sql[..20]);
    }
    // Past `parse::MAX_NESTING`: 1436, the connection and the server fine.
    for sql in [
        format!("SELECT 1{}", "+1".repeat(100_000)),
        format!("SELECT {}1{}", "(".repeat(60_000), ")".repeat(60_000)),
        format!("SELECT {}1", "-".repeat(100_000)),
        format!("SELECT 1 FROM DUAL WHERE {}1", "NOT ".repeat(50_000)),
    ] {
        let r = c.query(&sql);
        assert_eq!(r.err_code(), Some(1436), "{}…: {r:?}", &sql[..20]);
    }
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
    server.stop();
}

#[test]
fn a_huge_in_list_is_answered_and_one_past_max_allowed_packet_is_refused() {
    let server = TestServer::start_with(ServerConfig {
        max_allowed_packet: Some(4 << 20),
        ..ServerConfig::default()
    });
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO d.t VALUES (1, 1), (7, 7), (299999, 9), (300000, 0)",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let list = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    // 300,000 values, 2 MB of SQL: what an application's generated IN list can be.
    let sql = format!("SELECT SUM(v) FROM d.t WHERE id IN ({})", list(300_000));
    assert_eq!(c.rows(&sql), vec![vec!["17"]]);
    let sql = format!(
        "SELECT COUNT(*) FROM d.t WHERE id NOT IN ({})",
        list(300_000)
    );
    assert_eq!(c.rows(&sql), vec![vec!["1"]]);
    // Memory is bounded by the packet: one past max_allowed_packet is refused before it
    // is read whole, the connection closed, the server fine.
    let sql = format!("SELECT COUNT(*) FROM d.t WHERE id IN ({})", list(700_000));
    assert!(sql.len() > 4 << 20);
    assert_eq!(c.query(&sql).err_code(), Some(1153));
    assert!(c.io.read_message().is_err());
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
    server.stop();
}

#[test]
fn a_handshake_not_finished_within_connect_timeout_is_closed_however_it_dribbles() {
    use std::io::{Read, Write};
    let server = TestServer::start_with(ServerConfig {
        connect_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    });
    // Silent after the greeting.
    let (io, _) = common::greet(server.addr);
    let mut silent = io.stream().try_clone().unwrap();
    // Keeps the read alive with one byte of a handshake response every 200 ms: a per-read
    // timeout would never fire.
    let (io, _) = common::greet(server.addr);
    let mut dribbler = io.stream().try_clone().unwrap();
    let mut writer = dribbler.try_clone().unwrap();
    std::thread::spawn(move || {
        // The header of a 200-byte handshake response (sequence id 1), then its body.
        if writer.write_all(&[200, 0, 0, 1]).is_err() {
            return;
        }
        for _ in 0..100 {
            if writer.write_all(&[0x00]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let start = Instant::now();
    for s in [&mut silent, &mut dribbler] {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = [0u8; 64];
        // Closed by the server: end of stream (or a reset), not the 20 s timeout.
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) => assert!(
                e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut,
                "{e}"
            ),
            Ok(n) => panic!("{n} bytes after the greeting"),
        }
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "closed after {took:?}");
    // The client sees the end of the stream as soon as the socket is shut; the connection's
    // thread counts the aborted connect when its read fails, a moment later.
    let mut c = server.connect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let aborted = c.rows("SHOW GLOBAL STATUS LIKE 'Aborted_connects'");
        if aborted[0][1].parse::<u64>().unwrap() >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{aborted:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop();
}

#[test]
fn kill_query_ends_a_long_sleep_at_once_with_1317() {
    let server = TestServer::start();
    let mut sleeper = server.connect();
    let id = sleeper.conn_id;
    sleeper.send(b"\x03SELECT SLEEP(600)");
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let mut killer = server.connect();
    assert!(matches!(
        killer.query(&format!("KILL QUERY {id}")),
        Reply::Ok { .. }
    ));
    let reply = Reply::parse(&sleeper.io.read_message().unwrap());
    assert_eq!(reply.err_code(), Some(1317), "{reply:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
    // The connection goes on.
    assert!(matches!(sleeper.ping(), Reply::Ok { .. }));
    server.stop();
}

#[test]
fn max_statement_time_stops_a_statement_with_1969_and_the_session_goes_on() {
    let server = TestServer::start();
    let mut c = server.connect();
    assert_eq!(
        c.rows("SELECT @@max_statement_time, @@GLOBAL.max_statement_time"),
        [["0.000000", "0.000000"]]
    );
    assert!(matches!(
        c.query("SET SESSION max_statement_time = 0.3"),
        Reply::Ok { .. }
    ));
    let start = Instant::now();
    let reply = c.query("SELECT SLEEP(5)");
    assert_eq!(reply.err_code(), Some(1969), "{reply:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // The next statement runs, with the limit still on and not yet reached.
    assert_eq!(c.rows("SELECT SLEEP(0.05)"), [["0"]]);
    assert_eq!(
        c.rows("SHOW GLOBAL STATUS LIKE 'Max_statement_time_exceeded'"),
        [["Max_statement_time_exceeded", "1"]]
    );

    // A row-lock wait ends with 1969 too, and only the statement is undone.
    let mut other = server.connect();
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO d.t VALUES (1, 0), (2, 0)",
        "BEGIN",
        "UPDATE d.t SET v = 1 WHERE id = 1",
    ] {
        assert!(matches!(other.query(sql), Reply::Ok { .. }), "{sql}");
    }
    for sql in ["BEGIN", "UPDATE d.t SET v = 2 WHERE id = 2"] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let start = Instant::now();
    let reply = c.query("UPDATE d.t SET v = 2 WHERE id = 1");
    assert_eq!(reply.err_code(), Some(1969), "{reply:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(c.query("COMMIT"), Reply::Ok { .. }));
    assert!(matches!(other.query("COMMIT"), Reply::Ok { .. }));
    assert_eq!(
        other.rows("SELECT id, v FROM d.t ORDER BY id"),
        [["1", "1"], ["2", "2"]]
    );

    // SET STATEMENT lifts the session's limit for one statement, then it is back.
    assert_eq!(
        c.rows("SET STATEMENT max_statement_time = 0 FOR SELECT SLEEP(0.6)"),
        [["0"]]
    );
    assert_eq!(c.rows("SELECT @@max_statement_time"), [["0.300000"]]);
    // 0: no limit again; SET STATEMENT sets one for one statement.
    assert!(matches!(
        c.query("SET SESSION max_statement_time = 0"),
        Reply::Ok { .. }
    ));
    assert_eq!(c.rows("SELECT SLEEP(0.5)"), [["0"]]);
    let reply = c.query("SET STATEMENT max_statement_time = 0.2 FOR SELECT SLEEP(3)");
    assert_eq!(reply.err_code(), Some(1969), "{reply:?}");
    assert_eq!(c.rows("SELECT @@max_statement_time"), [["0.000000"]]);
    assert_eq!(
        c.rows("SHOW GLOBAL STATUS LIKE 'Max_statement_time_exceeded'"),
        [["Max_statement_time_exceeded", "3"]]
    );
    server.stop();
}

#[test]
fn a_killed_idle_connection_is_closed_before_the_killer_hears_ok() {
    let server = TestServer::start();
    for _ in 0..20 {
        let mut victim = server.connect();
        let id = victim.conn_id;
        let mut killer = server.connect();
        // COM_PROCESS_KILL, as PyMySQL's `kill()` sends it, and the statement.
        let reply = if id.is_multiple_of(2) {
            let mut cmd = vec![0x0c];
            cmd.extend_from_slice(&id.to_le_bytes());
            Reply::parse(&killer.command(&cmd))
        } else {
            killer.query(&format!("KILL {id}"))
        };
        assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
        // At once, not after the accept loop's next round: the socket is shut already.
        victim
            .io
            .stream()
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        victim.send(b"\x03SELECT 1");
        let start = Instant::now();
        assert!(
            victim.io.read_message().is_err(),
            "the killed connection answered"
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }
    server.stop();
}
