//! `Shared::new` and `conn::run_connection` serve one connection without a listener, over
//! a Unix socket pair: the path the `packet` fuzz target drives (docs/fuzzing.md). A login,
//! a query, a malformed COM_STMT_EXECUTE answered with ERR on a connection that stays
//! usable, then a frame out of sequence, which ends it.

#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::net::UnixStream;

use mysql_common::packets::HandshakeResponse;
use mysql_common::proto::MySerialize;
use quire_engine::table::Db;
use quire_server::listener::{Shared, Stream};
use quire_server::packet::{FrameError, PacketIo};
use quire_server::ServerConfig;

use common::{client_caps, small_config, Reply};

#[test]
fn a_connection_over_a_socket_pair_logs_in_answers_and_survives_a_bad_body() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_config()).unwrap();
    let cfg = ServerConfig {
        bind: None,
        ssl: false,
        ..ServerConfig::default()
    };
    let shared = Shared::new(&db, &cfg).unwrap();
    let (client, server) = UnixStream::pair().unwrap();
    std::thread::scope(|scope| {
        let shared = &shared;
        let conn = scope.spawn(move || {
            quire_server::conn::run_connection(Stream::Unix(server), shared, 1, "localhost".into())
        });
        let mut io = PacketIo::new(client, 64 << 20);
        let greeting = io.read_message().unwrap();
        assert_eq!(greeting.first(), Some(&10), "Handshake v10");
        let resp = HandshakeResponse::new(
            Some(&[][..]),
            (10, 11, 6),
            Some(&b"root"[..]),
            None::<&[u8]>,
            Some(mysql_common::packets::AuthPlugin::MysqlNativePassword),
            client_caps(),
            None,
            16 << 20,
        );
        let mut buf = Vec::new();
        resp.serialize(&mut buf);
        io.write_message(&buf).unwrap();
        io.flush().unwrap();
        assert!(matches!(
            Reply::parse(&io.read_message().unwrap()),
            Reply::Ok { .. }
        ));

        let command = |io: &mut PacketIo<UnixStream>, payload: &[u8]| {
            io.reset_seq();
            io.write_message(payload).unwrap();
            io.flush().unwrap();
            io.read_message().unwrap()
        };
        // A result set starts with its column count.
        assert_eq!(command(&mut io, b"\x03SELECT 1 + 1"), [1]);
        while io.read_message().unwrap().first() != Some(&0xFE) {}
        // COM_STMT_EXECUTE cut inside its header: ERR 1835 (malformed), connection kept.
        let reply = Reply::parse(&command(&mut io, b"\x17\x01\x00"));
        assert_eq!(reply.err_code(), Some(1835), "{reply:?}");
        assert!(matches!(
            Reply::parse(&command(&mut io, b"\x0e")),
            Reply::Ok { .. }
        ));
        // A packet with sequence id 5 where 0 belongs: ERR 1156, then the end.
        io.reset_seq();
        use std::io::Write;
        io.stream_mut().write_all(&[1, 0, 0, 5, 0x0e]).unwrap();
        let reply = Reply::parse(&io.read_message().unwrap());
        assert_eq!(reply.err_code(), Some(1156), "{reply:?}");
        io.reset_seq();
        assert!(matches!(io.read_message(), Err(FrameError::Io(_))));
        conn.join().unwrap();
    });
    db.shutdown().unwrap();
}
