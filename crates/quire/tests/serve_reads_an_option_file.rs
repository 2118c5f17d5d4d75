//! `quire serve --defaults-file`: a my.cnf's [mysqld] and [quire] groups configure the
//! server (datadir, socket, port, settings), an unknown setting is a warning naming it, and a
//! bad value stops the start naming the file, line and setting.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn quire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quire"))
}

#[test]
fn a_bad_value_in_the_option_file_stops_the_start_and_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cnf = dir.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!(
            "[client]\nport = nonsense\n[mysqld]\ndatadir = {}\ninnodb_buffer_pool_size = lots\n",
            dir.path().join("data").display()
        ),
    )
    .expect("write");
    let out = quire()
        .args(["serve", "--defaults-file"])
        .arg(&cnf)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("my.cnf:5") && err.contains("innodb_buffer_pool_size") && err.contains("lots"),
        "{err}"
    );
    // Nothing was opened: the start stopped before the data directory.
    assert!(!dir.path().join("data").exists());

    std::fs::write(&cnf, "[mysqld]\nsql_mode = NO_SUCH_MODE\n").expect("write");
    let out = quire()
        .args(["serve", "--defaults-file"])
        .arg(&cnf)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("my.cnf:2") && err.contains("NO_SUCH_MODE"),
        "{err}"
    );
}

#[test]
fn the_option_file_configures_the_server_and_warns_of_unknown_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let sock = dir.path().join("q.sock");
    let cnf = dir.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!(
            "[mysqld]\nport = 1\ndatadir = {}\nsocket = {}\nkey_buffer_size = 16M\n\
             loose-innodb_file_per_table = 1\ninnodb-buffer-pool-size = 8M\n\
             innodb_log_file_size = 8M\n[quire]\ninnodb_flush_method = fsync\n\
             sql_mode = STRICT_ALL_TABLES\nserver-id = 3\n",
            data.display(),
            sock.display()
        ),
    )
    .expect("write");
    // The command line's --port wins over the file's.
    let mut child = quire()
        .args(["serve", "--port", "0", "--defaults-file"])
        .arg(&cnf)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    loop {
        let line = lines.next().expect("serve exited early").expect("read");
        if line.starts_with("quire: ready for connections on 127.0.0.1:") {
            assert!(!line.ends_with(":1"), "{line}");
            break;
        }
        seen.push(line);
    }
    let warned: Vec<&String> = seen
        .iter()
        .filter(|l| l.contains("unknown setting"))
        .collect();
    assert_eq!(warned.len(), 1, "{seen:?}");
    assert!(warned[0].contains("my.cnf:5") && warned[0].contains("key_buffer_size"));
    // A MariaDB my.cnf's server-id: what Quire is, said and passed over.
    assert!(
        seen.iter()
            .any(|l| l.contains("my.cnf:12") && l.contains("'server_id' is fixed")),
        "{seen:?}"
    );
    assert!(data.join("redo.log").exists(), "the file's datadir is used");
    assert!(sock.exists(), "the file's socket is used");
    // SAFETY: sending a signal to our own child.
    let pid = i32::try_from(child.id()).expect("pid");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
