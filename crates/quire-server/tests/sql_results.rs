//! Result sets end to end, through the real SQL layer.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Reply, TestServer};

/// The first packet of an answer must not be an error.
fn answered(first: &[u8], what: &str) {
    assert_eq!(Reply::parse(first).err_code(), None, "{what} failed");
}

#[test]
fn select_1_returns_a_text_result_set_ended_by_ok_fe() {
    let server = TestServer::start();
    let mut c = server.connect();
    let first = c.command(b"\x03SELECT 1");
    answered(&first, "queries");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.columns.len(), 1);
    assert_eq!(rs.rows, vec![vec![1, b'1']]);
    assert!(matches!(rs.end, Reply::Ok { status, .. } if status & 0x0002 != 0));
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn prepared_select_with_a_parameter_returns_a_binary_row() {
    let server = TestServer::start();
    let mut c = server.connect();
    let ok = c.command(b"\x16SELECT ?");
    answered(&ok, "prepared statements");
    assert_eq!(ok[0], 0x00, "{ok:?}");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let ncols = u16::from_le_bytes([ok[5], ok[6]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    assert_eq!(nparams, 1);
    for _ in 0..(u32::from(ncols) + u32::from(nparams)) {
        c.io.read_message().unwrap();
    }
    // EXECUTE: flags 0, 1 iteration, no NULLs, types bound: LONGLONG 5.
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0, 1, 8, 0]);
    exec.extend_from_slice(&5i64.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows.len(), 1);
    assert_eq!(rs.rows[0][0], 0x00, "binary row header");
    assert!(matches!(rs.end, Reply::Ok { .. }));
    // Again without rebinding the types: the server reuses them.
    let mut again = vec![0x17];
    again.extend_from_slice(&id.to_le_bytes());
    again.push(0);
    again.extend_from_slice(&1u32.to_le_bytes());
    again.extend_from_slice(&[0, 0]);
    again.extend_from_slice(&6i64.to_le_bytes());
    let first = c.command(&again);
    assert_eq!(c.read_result_set(&first).rows.len(), 1);
    // CLOSE (no reply), then the id is unknown.
    let mut close = vec![0x19];
    close.extend_from_slice(&id.to_le_bytes());
    c.send(&close);
    assert_eq!(Reply::parse(&c.command(&exec)).err_code(), Some(1243));
}

#[test]
fn server_settings_show_in_the_variables() {
    let server = TestServer::start_with(quire_server::ServerConfig {
        max_connections: Some(17),
        max_allowed_packet: Some(1 << 20),
        ..quire_server::ServerConfig::default()
    });
    let mut c = server.connect();
    let first = c.command(b"\x03SELECT @@global.max_connections, @@max_allowed_packet");
    answered(&first, "queries");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows, vec![b"\x0217\x071048576".to_vec()]);
}
