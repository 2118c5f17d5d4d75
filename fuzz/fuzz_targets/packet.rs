//! The server's side of a connection, from the first byte: the greeting, the client's
//! HandshakeResponse41 (or an SslRequest, refused here: the target offers no TLS), the
//! login, then every command byte with fuzzed bodies, COM_STMT_EXECUTE's parameter block
//! against statements prepared in the same input, COM_CHANGE_USER, and raw bytes that
//! break the framing. `conn::run_connection` runs over one end of a Unix socket pair, the
//! input is written to the other, the replies are read and dropped.
//!
//! The input is structured (`arbitrary`): the parts a client gets right so that the server
//! goes further (framing, sequence ids, root's empty password) are built by the harness,
//! every field is fuzzed. A panic, a hang or an unbounded allocation is a bug; an ERR or a
//! closed connection is a fine answer.

#![no_main]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use quire_fuzz::{make_schema, only_waits, with_db, writes_host_files};
use quire_server::listener::{Shared, Stream};
use quire_server::ServerConfig;

// Capability bits (MySQL's CLIENT_*).
const CONNECT_WITH_DB: u32 = 0x8;
const PROTOCOL_41: u32 = 0x200;
const SSL: u32 = 0x800;
const SECURE_CONNECTION: u32 = 0x8000;
const PLUGIN_AUTH: u32 = 0x8_0000;
const CONNECT_ATTRS: u32 = 0x10_0000;
const PLUGIN_AUTH_LENENC: u32 = 0x20_0000;

/// Bytes written to the socket at most: less than its buffer, so the harness writes them
/// all before the server starts reading.
const MAX_WIRE: usize = 64 * 1024;

#[derive(Arbitrary, Debug)]
struct Input {
    hello: Hello,
    commands: Vec<Command>,
}

#[derive(Arbitrary, Debug)]
enum Hello {
    Response(Response),
    /// An SslRequest first (TLS is not offered: the server must refuse, not hang).
    SslThenResponse(Response),
    /// The response message's bytes as they are.
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Response {
    caps: u32,
    /// Keep PROTOCOL_41 and SECURE_CONNECTION set, so that most inputs log in.
    usual: bool,
    max_packet: u32,
    collation: u8,
    user: User,
    auth: Vec<u8>,
    db: Option<Vec<u8>>,
    plugin: Option<Plugin>,
    attrs: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
enum User {
    Root,
    Other(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Plugin {
    Native,
    Sha2,
    Ed25519,
    Other(Vec<u8>),
}

/// A prepared statement's id: one of the first few (ids count from 1 in a session).
#[derive(Arbitrary, Debug)]
enum StmtId {
    Small(u8),
    Any(u32),
}

#[derive(Arbitrary, Debug)]
enum Command {
    /// The command byte and body as they are.
    Raw(u8, Vec<u8>),
    Query(String),
    InitDb(Vec<u8>),
    FieldList(Vec<u8>, Vec<u8>),
    Prepare(String),
    Execute {
        stmt: StmtId,
        flags: u8,
        iterations: u32,
        nulls: Vec<u8>,
        /// `Some`: new_params_bound = 1 and these (type, flags) pairs.
        types: Option<Vec<(u8, u8)>>,
        values: Vec<u8>,
    },
    LongData {
        stmt: StmtId,
        param: u16,
        data: Vec<u8>,
    },
    Close(StmtId),
    Reset(StmtId),
    Fetch(StmtId, u32),
    ChangeUser {
        user: User,
        auth: Vec<u8>,
        db: Vec<u8>,
        collation: Option<u16>,
        plugin: Option<Plugin>,
        attrs: Vec<u8>,
    },
    SetOption(u16),
    ProcessKill(u32),
    Refresh(u8),
    Ping,
    Statistics,
    ResetConnection,
    /// Bytes straight onto the wire, no framing: lengths, sequence ids and splits that
    /// are wrong (or right) as the fuzzer makes them.
    Wire(Vec<u8>),
    /// A message continuing the exchange (an answer to an AuthSwitchRequest).
    Continue(u8, Vec<u8>),
}

fn user(u: &User) -> &[u8] {
    match u {
        User::Root => b"root",
        User::Other(b) => b,
    }
}

fn plugin(p: &Plugin) -> &[u8] {
    match p {
        Plugin::Native => b"mysql_native_password",
        Plugin::Sha2 => b"caching_sha2_password",
        Plugin::Ed25519 => b"client_ed25519",
        Plugin::Other(b) => b,
    }
}

fn stmt_id(s: &StmtId) -> u32 {
    match s {
        StmtId::Small(n) => u32::from(n % 4) + 1,
        StmtId::Any(n) => *n,
    }
}

fn lenenc(out: &mut Vec<u8>, n: usize) {
    match n {
        0..=250 => out.push(n as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        _ => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
    }
}

fn nul_terminated(out: &mut Vec<u8>, s: &[u8]) {
    out.extend(s.iter().copied().filter(|&b| b != 0));
    out.push(0);
}

/// Frames `payload` as packets from sequence id `seq` (split at 0xFFFFFF as clients do).
fn frame(out: &mut Vec<u8>, seq: u8, payload: &[u8]) {
    let len = payload.len().min(0xFF_FFFE) as u32;
    out.extend_from_slice(&len.to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(&payload[..len as usize]);
}

fn response(r: &Response) -> (Vec<u8>, u32) {
    let mut caps = r.caps & !SSL;
    if r.usual {
        caps |= PROTOCOL_41 | SECURE_CONNECTION;
    }
    let mut p = Vec::new();
    p.extend_from_slice(&caps.to_le_bytes());
    p.extend_from_slice(&r.max_packet.to_le_bytes());
    p.push(r.collation);
    p.extend_from_slice(&[0; 23]);
    nul_terminated(&mut p, user(&r.user));
    if caps & PLUGIN_AUTH_LENENC != 0 {
        lenenc(&mut p, r.auth.len());
        p.extend_from_slice(&r.auth);
    } else if caps & SECURE_CONNECTION != 0 {
        let n = r.auth.len().min(255);
        p.push(n as u8);
        p.extend_from_slice(&r.auth[..n]);
    } else {
        nul_terminated(&mut p, &r.auth);
    }
    if caps & CONNECT_WITH_DB != 0 {
        nul_terminated(&mut p, r.db.as_deref().unwrap_or_default());
    }
    if caps & PLUGIN_AUTH != 0 {
        nul_terminated(&mut p, r.plugin.as_ref().map_or(&b""[..], plugin));
    }
    if caps & CONNECT_ATTRS != 0 {
        lenenc(&mut p, r.attrs.len());
        p.extend_from_slice(&r.attrs);
    }
    (p, caps)
}

fn wire(input: &Input) -> Vec<u8> {
    let mut w = Vec::new();
    match &input.hello {
        Hello::Response(r) => frame(&mut w, 1, &response(r).0),
        Hello::SslThenResponse(r) => {
            let (p, caps) = response(r);
            let mut ssl = p[..32].to_vec();
            ssl[..4].copy_from_slice(&(caps | SSL).to_le_bytes());
            frame(&mut w, 1, &ssl);
            frame(&mut w, 2, &p);
        }
        Hello::Raw(b) => frame(&mut w, 1, b),
    }
    for c in &input.commands {
        let mut p = Vec::new();
        match c {
            Command::Raw(cmd, body) => {
                p.push(*cmd);
                p.extend_from_slice(body);
            }
            Command::Query(q) => {
                p.push(0x03);
                p.extend_from_slice(q.as_bytes());
            }
            Command::InitDb(db) => {
                p.push(0x02);
                p.extend_from_slice(db);
            }
            Command::FieldList(table, wild) => {
                p.push(0x04);
                nul_terminated(&mut p, table);
                p.extend_from_slice(wild);
            }
            Command::Prepare(q) => {
                p.push(0x16);
                p.extend_from_slice(q.as_bytes());
            }
            Command::Execute {
                stmt,
                flags,
                iterations,
                nulls,
                types,
                values,
            } => {
                p.push(0x17);
                p.extend_from_slice(&stmt_id(stmt).to_le_bytes());
                p.push(*flags);
                p.extend_from_slice(&iterations.to_le_bytes());
                p.extend_from_slice(nulls);
                if let Some(types) = types {
                    p.push(1);
                    for (t, f) in types {
                        p.push(*t);
                        p.push(*f);
                    }
                } else {
                    p.push(0);
                }
                p.extend_from_slice(values);
            }
            Command::LongData { stmt, param, data } => {
                p.push(0x18);
                p.extend_from_slice(&stmt_id(stmt).to_le_bytes());
                p.extend_from_slice(&param.to_le_bytes());
                p.extend_from_slice(data);
            }
            Command::Close(s) => {
                p.push(0x19);
                p.extend_from_slice(&stmt_id(s).to_le_bytes());
            }
            Command::Reset(s) => {
                p.push(0x1A);
                p.extend_from_slice(&stmt_id(s).to_le_bytes());
            }
            Command::Fetch(s, rows) => {
                p.push(0x1C);
                p.extend_from_slice(&stmt_id(s).to_le_bytes());
                p.extend_from_slice(&rows.to_le_bytes());
            }
            Command::ChangeUser {
                user: u,
                auth,
                db,
                collation,
                plugin: pl,
                attrs,
            } => {
                p.push(0x11);
                nul_terminated(&mut p, user(u));
                let n = auth.len().min(255);
                p.push(n as u8);
                p.extend_from_slice(&auth[..n]);
                nul_terminated(&mut p, db);
                if let Some(c) = collation {
                    p.extend_from_slice(&c.to_le_bytes());
                    if let Some(pl) = pl {
                        nul_terminated(&mut p, plugin(pl));
                    }
                    lenenc(&mut p, attrs.len());
                    p.extend_from_slice(attrs);
                }
            }
            Command::SetOption(o) => {
                p.push(0x1B);
                p.extend_from_slice(&o.to_le_bytes());
            }
            Command::ProcessKill(id) => {
                p.push(0x0C);
                p.extend_from_slice(&id.to_le_bytes());
            }
            Command::Refresh(f) => p.extend_from_slice(&[0x07, *f]),
            Command::Ping => p.push(0x0E),
            Command::Statistics => p.push(0x09),
            Command::ResetConnection => p.push(0x1F),
            Command::Wire(bytes) => {
                w.extend_from_slice(bytes);
                continue;
            }
            Command::Continue(seq, body) => {
                frame(&mut w, *seq, body);
                continue;
            }
        }
        frame(&mut w, 0, &p);
    }
    w
}

fn config() -> ServerConfig {
    ServerConfig {
        bind: None,
        ssl: false,
        tls: None,
        // A bad login is answered at once, not after connection_control's delay.
        login_delay_threshold: 0,
        max_allowed_packet: Some(1 << 20),
        ..ServerConfig::default()
    }
}

fuzz_target!(|input: Input| {
    let bytes = wire(&input);
    if bytes.len() > MAX_WIRE || only_waits(&bytes) || writes_host_files(&bytes) {
        return;
    }
    with_db(make_schema, |db| {
        let shared = match Shared::new(db, &config()) {
            Ok(s) => s,
            Err(e) => panic!("Shared::new: {e}"),
        };
        let (mut client, server) = match UnixStream::pair() {
            Ok(p) => p,
            Err(e) => panic!("socketpair: {e}"),
        };
        // Everything the client says, then end of stream: the server reads to the end.
        if client.write_all(&bytes).is_err() {
            return;
        }
        let _ = client.shutdown(std::net::Shutdown::Write);
        let drain = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while matches!(client.read(&mut buf), Ok(n) if n > 0) {}
        });
        quire_server::conn::run_connection(Stream::Unix(server), &shared, 1, "localhost".into());
        let _ = drain.join();
    });
});
