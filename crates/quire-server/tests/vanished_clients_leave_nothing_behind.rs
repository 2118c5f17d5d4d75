//! A client can vanish at any moment: in the middle of a transaction, in the middle of a
//! result set, before it has logged in. Whatever it held is given back at once (its
//! transaction rolled back, its row locks released, its thread and socket gone), and ten
//! thousand of them in a row leave the server as it was.

#![allow(clippy::unwrap_used)]

mod common;

use std::net::{Shutdown, TcpStream};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{greet, Client, Reply, TestServer};

/// Long enough that a waiter released only by the lock wait timeout fails the test.
const LOCK_WAIT_TIMEOUT_S: u64 = 50;
/// How long the server may take to notice a vanished client and release what it held.
const RELEASE_WITHIN: Duration = Duration::from_secs(10);

/// The tests of this file one at a time: the last counts this process's descriptors and
/// threads, which the others' servers would disturb.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn ok(c: &mut Client, sql: &str) {
    let r = c.query(sql);
    assert!(matches!(r, Reply::Ok { .. }), "{sql}: {r:?}");
}

fn status(c: &mut Client, name: &str) -> u64 {
    let r = c.rows(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    r[0][1].parse().unwrap()
}

/// Polls `f` until it holds or `within` passed; whether it held.
fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if f() {
            return true;
        }
        if start.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `sql` on a new connection in a thread that waits on a lock; the receiver gets the
/// reply and how long it took.
fn waiter(server: &TestServer, sql: &'static str) -> mpsc::Receiver<(Reply, Duration)> {
    let mut c = server.connect();
    ok(
        &mut c,
        &format!("SET innodb_lock_wait_timeout = {LOCK_WAIT_TIMEOUT_S}"),
    );
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let start = Instant::now();
        let r = c.query(sql);
        let _ = tx.send((r, start.elapsed()));
    });
    rx
}

/// Checks that `rx`'s statement is still waiting, then that it ends soon after `vanish`.
fn released_by(rx: &mpsc::Receiver<(Reply, Duration)>, vanish: impl FnOnce()) -> Reply {
    // The waiter must really be waiting for the lock before the holder goes.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        rx.try_recv().is_err(),
        "the statement did not wait for the lock"
    );
    let gone = Instant::now();
    vanish();
    let (reply, _) = rx
        .recv_timeout(RELEASE_WITHIN)
        .expect("the vanished client's lock was not released");
    assert!(gone.elapsed() < RELEASE_WITHIN);
    reply
}

#[test]
fn a_client_gone_in_the_middle_of_a_transaction_is_rolled_back_and_its_locks_freed_at_once() {
    let _serial = serial();
    let server = TestServer::start();
    let mut c = server.connect();
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    ok(&mut c, "INSERT INTO d.t VALUES (1, 1), (2, 2)");

    let mut holder = server.connect();
    ok(&mut holder, "BEGIN");
    ok(&mut holder, "UPDATE d.t SET v = 10 WHERE id = 1");
    ok(&mut holder, "INSERT INTO d.t VALUES (3, 3)");
    ok(&mut holder, "DELETE FROM d.t WHERE id = 2");

    let rx = waiter(&server, "UPDATE d.t SET v = v + 100 WHERE id = 1");
    // The client goes without a word (no COM_QUIT), as a killed process does.
    let reply = released_by(&rx, move || {
        holder.io.stream().shutdown(Shutdown::Both).unwrap();
        drop(holder);
    });
    assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
    // Its changes are gone: the waiter updated the committed row.
    assert_eq!(
        c.rows("SELECT id, v FROM d.t ORDER BY id"),
        vec![vec!["1", "101"], vec!["2", "2"]]
    );
    assert!(eventually(RELEASE_WITHIN, || c
        .rows("SELECT COUNT(*) FROM information_schema.INNODB_TRX")[0]
        [0]
        == "0"));
    assert!(eventually(RELEASE_WITHIN, || status(
        &mut c,
        "Threads_connected"
    ) == 1));
    server.stop();
}

#[test]
fn a_client_gone_in_the_middle_of_a_large_result_set_ends_its_session_and_frees_its_locks() {
    let _serial = serial();
    let server = TestServer::start();
    let mut c = server.connect();
    ok(&mut c, "CREATE DATABASE d");
    ok(
        &mut c,
        "CREATE TABLE d.big (id INT PRIMARY KEY, pad VARCHAR(200))",
    );
    ok(&mut c, "INSERT INTO d.big VALUES (1, REPEAT('x', 200))");
    // 2^16 rows of 200 bytes: 13 MB, far more than the sockets' buffers hold.
    for _ in 0..16 {
        ok(
            &mut c,
            "INSERT INTO d.big SELECT id + (SELECT MAX(id) FROM d.big), pad FROM d.big",
        );
    }
    assert_eq!(c.rows("SELECT COUNT(*) FROM d.big")[0][0], "65536");

    // A locking read that the client stops reading after a few rows, then leaves: the
    // server is blocked writing the rest when the socket goes.
    let mut reader = server.connect();
    ok(&mut reader, "BEGIN");
    reader.send(b"\x03SELECT * FROM d.big FOR UPDATE");
    for _ in 0..10 {
        reader.io.read_message().unwrap();
    }
    // Rows are locked as they are read (as InnoDB does): the first one surely is.
    let rx = waiter(&server, "UPDATE d.big SET pad = 'y' WHERE id = 1");
    let reply = released_by(&rx, move || drop(reader));
    assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
    assert!(eventually(RELEASE_WITHIN, || status(
        &mut c,
        "Threads_connected"
    ) == 1));

    // The same with a plain (non-locking) read: the session ends all the same.
    let before = status(&mut c, "Aborted_clients");
    let mut reader = server.connect();
    reader.send(b"\x03SELECT * FROM d.big");
    reader.io.read_message().unwrap();
    drop(reader);
    assert!(eventually(RELEASE_WITHIN, || status(
        &mut c,
        "Threads_connected"
    ) == 1));
    assert!(status(&mut c, "Aborted_clients") > before);
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    server.stop();
}

/// This process's open file descriptors and threads (the server runs in it).
fn fds_and_threads() -> (usize, usize) {
    let fds = std::fs::read_dir("/proc/self/fd").unwrap().count();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (fds, threads)
}

#[test]
fn ten_thousand_connections_opened_and_dropped_leave_the_server_as_it_was() {
    const N: usize = 10_000;
    let _serial = serial();
    let server = TestServer::start();
    let mut c = server.connect();
    ok(&mut c, "CREATE DATABASE d");
    ok(&mut c, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    let (fds0, threads0) = fds_and_threads();
    let connections0 = status(&mut c, "Connections");
    let start = Instant::now();
    for i in 0..N {
        match i % 5 {
            // Logs in and says goodbye.
            0 => {
                let mut x = server.connect();
                x.send(&[0x01]);
            }
            // Logs in, runs a statement, vanishes.
            1 => {
                let mut x = server.connect();
                assert!(matches!(x.ping(), Reply::Ok { .. }));
            }
            // Vanishes in the middle of a transaction that wrote a row.
            2 => {
                let mut x = server.connect();
                ok(&mut x, "BEGIN");
                ok(&mut x, &format!("INSERT INTO d.t VALUES ({i})"));
            }
            // Reads the greeting and goes without answering it.
            3 => drop(greet(server.addr).0),
            // Connects and goes at once.
            _ => drop(TcpStream::connect(server.addr).unwrap()),
        }
    }
    let churn = start.elapsed();
    assert!(
        eventually(Duration::from_secs(30), || status(
            &mut c,
            "Threads_connected"
        ) == 1),
        "sessions left behind"
    );
    // Every connection was accepted, none of the vanished transactions committed.
    assert!(status(&mut c, "Connections") - connections0 >= N as u64);
    assert_eq!(c.rows("SELECT COUNT(*) FROM d.t")[0][0], "0");
    assert_eq!(
        c.rows("SELECT COUNT(*) FROM information_schema.INNODB_TRX")[0][0],
        "0"
    );
    // No descriptor and no thread is left behind (a few of slack for the test harness).
    assert!(
        eventually(Duration::from_secs(30), || {
            let (fds, threads) = fds_and_threads();
            fds <= fds0 + 4 && threads <= threads0 + 4
        }),
        "before {:?}, after {:?}",
        (fds0, threads0),
        fds_and_threads()
    );
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    assert!(matches!(server.connect().ping(), Reply::Ok { .. }));
    eprintln!("{N} connections in {churn:?}");
    server.stop();
}
