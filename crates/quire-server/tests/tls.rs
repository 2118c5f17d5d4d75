//! TLS on client connections (docs/protocol.md, "TLS"): the SslRequest upgrade with the
//! sequence ids going on through it, the certificate a client can verify, require_secure_transport
//! (3159, 4167), and hostile bytes where the TLS hello should be.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use common::{client_caps, greet, Client, Reply, TestServer};
use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::constants::CapabilityFlags;
use mysql_common::packets::{AuthPlugin, HandshakeResponse};
use mysql_common::proto::MySerialize;
use quire_server::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// A server with TLS from a self-signed pair in `dir`; returns it and the certificate.
fn tls_server(dir: &std::path::Path, require: bool) -> (TestServer, CertificateDer<'static>) {
    let (cert, key) = quire_server::tls::self_signed(dir).unwrap();
    let cfg = ServerConfig {
        tls: Some(quire_server::tls::load(&cert, &key).unwrap()),
        ssl_cert: Some(cert.clone()),
        ssl_key: Some(key),
        require_secure_transport: require,
        ..ServerConfig::default()
    };
    let der = CertificateDer::from_pem_file(&cert).unwrap();
    (TestServer::start_with(cfg), der)
}

fn write_frame(s: &mut impl Write, seq: u8, payload: &[u8]) {
    let n = payload.len();
    let mut f = vec![n as u8, (n >> 8) as u8, (n >> 16) as u8, seq];
    f.extend_from_slice(payload);
    s.write_all(&f).unwrap();
    s.flush().unwrap();
}

fn read_frame(s: &mut impl Read) -> (u8, Vec<u8>) {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).unwrap();
    let n = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0u8; n];
    s.read_exact(&mut p).unwrap();
    (h[3], p)
}

fn ssl_request(caps: CapabilityFlags) -> Vec<u8> {
    let mut p = Vec::with_capacity(32);
    p.extend_from_slice(&caps.bits().to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0u8; 23]);
    p
}

/// Greeting, SslRequest (seq 1), TLS verified against `ca`, then the response (seq 2) and
/// the server's reply inside TLS.
fn connect_tls(
    server: &TestServer,
    ca: &CertificateDer<'static>,
) -> (
    rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
    Reply,
) {
    let (io, greeting) = greet(server.addr);
    let (_, salt) = greeting.unwrap();
    let mut tcp = io.stream().try_clone().unwrap();
    let caps = client_caps() | CapabilityFlags::CLIENT_SSL;
    write_frame(&mut tcp, 1, &ssl_request(caps));
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let scramble = scramble_native(&salt, b"")
        .map(|s| s.to_vec())
        .unwrap_or_default();
    let resp = HandshakeResponse::new(
        Some(scramble),
        (10, 11, 99),
        Some(b"root".as_slice()),
        None::<&[u8]>,
        Some(AuthPlugin::MysqlNativePassword),
        caps,
        None,
        16 << 20,
    );
    let mut buf = Vec::new();
    resp.serialize(&mut buf);
    write_frame(&mut tls, 2, &buf);
    let (seq, reply) = read_frame(&mut tls);
    assert_eq!(seq, 3, "the sequence ids go on through the upgrade");
    (tls, Reply::parse(&reply))
}

/// COM_QUERY inside TLS; the text of every row's first two columns.
fn query_tls(tls: &mut impl ReadWrite, sql: &str) -> Vec<(String, String)> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    write_frame(tls, 0, &p);
    let (_, head) = read_frame(tls);
    let ncols = usize::from(head[0]);
    for _ in 0..ncols {
        read_frame(tls);
    }
    let mut rows = Vec::new();
    loop {
        let (_, row) = read_frame(tls);
        if row.first() == Some(&0xFE) && row.len() < 9 {
            return rows;
        }
        let mut r = quire_server::reply::Reader::new(&row);
        let a = r.lenenc_bytes().unwrap_or_default();
        let b = r.lenenc_bytes().unwrap_or_default();
        rows.push((
            String::from_utf8_lossy(a).into_owned(),
            String::from_utf8_lossy(b).into_owned(),
        ));
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

#[test]
fn a_client_upgrades_to_tls_verifies_the_certificate_and_queries_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = tls_server(dir.path(), false);
    let (mut tls, reply) = connect_tls(&server, &ca);
    assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
    let status = query_tls(&mut tls, "SHOW STATUS LIKE 'Ssl_%'");
    let get = |n: &str| status.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    assert_eq!(get("Ssl_version").as_deref(), Some("TLSv1.3"));
    assert!(
        get("Ssl_cipher").is_some_and(|c| c.starts_with("TLS_")),
        "{status:?}"
    );
    let vars = query_tls(&mut tls, "SHOW VARIABLES LIKE 'have_ssl'");
    assert_eq!(vars, vec![("have_ssl".to_string(), "YES".to_string())]);
    // A plain connection to the same server still works, and says it is plain.
    let mut plain = server.connect();
    assert!(matches!(plain.ping(), Reply::Ok { .. }));
    server.stop();
}

#[test]
fn require_secure_transport_refuses_plain_tcp_with_3159_and_takes_tls() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = tls_server(dir.path(), true);
    match Client::connect(server.addr, "root", "", None) {
        Err(Reply::Err {
            code,
            state,
            message,
        }) => {
            assert_eq!((code, state.as_str()), (3159, "08004"));
            assert!(
                message.contains("--require_secure_transport=ON"),
                "{message}"
            );
        }
        Err(other) => panic!("expected 3159, got {other:?}"),
        Ok(_) => panic!("a plain connection got in"),
    }
    let (mut tls, reply) = connect_tls(&server, &ca);
    assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
    // SET GLOBAL turns it off for the next connections.
    let rows = query_tls(&mut tls, "SELECT @@require_secure_transport, 1");
    assert_eq!(rows, vec![("1".to_string(), "1".to_string())]);
    let mut p = vec![0x03];
    p.extend_from_slice(b"SET GLOBAL require_secure_transport = OFF");
    write_frame(&mut tls, 0, &p);
    let (_, ok) = read_frame(&mut tls);
    assert!(matches!(Reply::parse(&ok), Reply::Ok { .. }));
    assert!(Client::connect(server.addr, "root", "", None).is_ok());
    server.stop();
}

#[test]
fn require_secure_transport_cannot_be_set_without_tls() {
    let server = TestServer::start();
    let mut c = server.connect();
    let r = c.query("SET GLOBAL require_secure_transport = ON");
    match r {
        Reply::Err { code, message, .. } => {
            assert_eq!(code, 4167);
            assert_eq!(
                message,
                "No secure transports are configured, unable to set --require_secure_transport=ON"
            );
        }
        other => panic!("expected 4167, got {other:?}"),
    }
    // Without TLS the greeting does not offer SSL, and an SslRequest is a bad handshake.
    let (io, greeting) = greet(server.addr);
    assert!(greeting.is_ok());
    let mut tcp = io.stream().try_clone().unwrap();
    write_frame(
        &mut tcp,
        1,
        &ssl_request(client_caps() | CapabilityFlags::CLIENT_SSL),
    );
    let (_, reply) = read_frame(&mut tcp);
    assert_eq!(Reply::parse(&reply).err_code(), Some(1043));
    server.stop();
}

#[test]
fn garbage_where_the_tls_hello_belongs_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = tls_server(dir.path(), false);
    for junk in [
        &b"GET / HTTP/1.0\r\n\r\n"[..],
        &[0x16, 0x03, 0x01, 0xFF, 0xFF][..],
        &[0u8; 4096][..],
    ] {
        let (io, greeting) = greet(server.addr);
        assert!(greeting.is_ok());
        let mut tcp = io.stream().try_clone().unwrap();
        write_frame(
            &mut tcp,
            1,
            &ssl_request(client_caps() | CapabilityFlags::CLIENT_SSL),
        );
        let _ = tcp.write_all(junk);
        // The server ends the connection (a TLS alert at most, never a MySQL packet).
        let mut rest = Vec::new();
        let _ = tcp.read_to_end(&mut rest);
        assert!(rest.first() != Some(&0x00), "{rest:?}");
    }
    let (_, reply) = connect_tls(&server, &ca);
    assert!(matches!(reply, Reply::Ok { .. }), "{reply:?}");
    server.stop();
}
