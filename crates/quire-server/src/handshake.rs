//! The connection phase: greeting (Handshake v10), the client's response (after an
//! SslRequest and the TLS upgrade when the client asks for it), authentication with
//! mysql_native_password (switching the client to it when it asked for another plugin),
//! then OK or ERR.
//!
//! ```text
//!   server                                  client
//!   greeting(conn id, salt, caps) ───────▶
//!                                 ◀─────── [SslRequest, then TLS on the socket]
//!                                 ◀─────── HandshakeResponse41(user, scramble, db, plugin)
//!   [AuthSwitchRequest(native, salt) ─────▶                      when plugin ≠ native
//!                                 ◀─────── scramble]
//!   OK / ERR 1045 / ERR 1049 ─────────────▶
//! ```

use std::sync::Arc;

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use rand::Rng;
use sha1::{Digest, Sha1};

use crate::errors::{proto, WireError};
use crate::listener::Stream;
use crate::packet::{FrameError, PacketIo};

/// What the server reports as its version; MariaDB clients strip the `5.5.5-` prefix
/// (the replication-era marker that makes old MySQL clients accept a 10.x version).
pub const SERVER_VERSION: &str = "5.5.5-10.11.99-Quire-0.1.0";

/// utf8mb4_general_ci.
pub const DEFAULT_COLLATION: u8 = 45;

const NATIVE: &[u8] = b"mysql_native_password";

/// caching_sha2_password's AuthMoreData: the fast path succeeded (OK follows).
const SHA2_FAST_AUTH_SUCCESS: [u8; 2] = [0x01, 0x03];

/// The capabilities the server offers (SSL as well when TLS is on: [`greeting`]); a
/// connection uses their intersection with the client's. No LOCAL INFILE.
pub fn server_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_CONNECT_ATTRS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
}

/// 20 random bytes, printable ASCII as MySQL makes them (no NUL: old clients read the salt
/// as a C string).
pub fn new_salt() -> [u8; 20] {
    let mut rng = rand::thread_rng();
    let mut salt = [0u8; 20];
    for b in &mut salt {
        *b = rng.gen_range(b'!'..=b'~');
    }
    salt
}

/// The Handshake v10 packet; `tls`: SSL is offered.
pub fn greeting(conn_id: u32, salt: &[u8; 20], tls: bool) -> Vec<u8> {
    let mut part1 = [0u8; 8];
    part1.copy_from_slice(&salt[..8]);
    // The second part is sent NUL-terminated: 12 bytes + NUL (auth data length 21).
    let mut part2 = salt[8..].to_vec();
    part2.push(0);
    let p = HandshakePacket::new(
        10,
        SERVER_VERSION.as_bytes(),
        conn_id,
        part1,
        Some(part2),
        if tls {
            server_capabilities() | CapabilityFlags::CLIENT_SSL
        } else {
            server_capabilities()
        },
        DEFAULT_COLLATION,
        StatusFlags::SERVER_STATUS_AUTOCOMMIT,
        Some(NATIVE),
    );
    let mut buf = Vec::with_capacity(96);
    p.serialize(&mut buf);
    buf
}

/// The password check, holding SHA1(SHA1(password)) as MySQL's `mysql.user` does for
/// mysql_native_password, and SHA256(SHA256(password)) as caching_sha2_password's cache
/// does, never the password itself.
#[derive(Clone)]
pub struct Credentials {
    /// `None`: the empty password.
    root_stage2: Option<[u8; 20]>,
    root_sha2_stage2: Option<[u8; 32]>,
}

/// SHA256 of the parts, one after the other.
fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    out
}

/// Compares every byte (no early exit on the first difference).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Credentials {
    pub fn new(root_password: Option<&str>) -> Self {
        let pw = root_password.filter(|p| !p.is_empty());
        let root_stage2 = pw.map(|p| {
            let stage1: [u8; 20] = Sha1::digest(p.as_bytes()).into();
            Sha1::digest(stage1).into()
        });
        let root_sha2_stage2 = pw.map(|p| sha256(&[&sha256(&[p.as_bytes()])]));
        Credentials {
            root_stage2,
            root_sha2_stage2,
        }
    }

    /// mysql_native_password: the client sent SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))).
    /// XOR with SHA1(salt + stage2) gives SHA1(pw) back; its SHA1 must be stage2.
    pub fn check(&self, user: &str, salt: &[u8; 20], response: &[u8]) -> bool {
        if user != "root" {
            return false;
        }
        match (&self.root_stage2, response.len()) {
            (None, 0) => true,
            (None, _) | (Some(_), 0) => false,
            (Some(stage2), 20) => {
                let mut h = Sha1::new();
                h.update(salt);
                h.update(stage2);
                let mask: [u8; 20] = h.finalize().into();
                let mut stage1 = [0u8; 20];
                for i in 0..20 {
                    stage1[i] = response[i] ^ mask[i];
                }
                let candidate: [u8; 20] = Sha1::digest(stage1).into();
                same(&candidate, stage2)
            }
            (Some(_), _) => false,
        }
    }

    /// caching_sha2_password's fast path: the client sent SHA256(pw) XOR
    /// SHA256(SHA256(SHA256(pw)) + salt). XOR with SHA256(stage2 + salt) gives SHA256(pw)
    /// back; its SHA256 must be stage2.
    pub fn check_sha2(&self, user: &str, salt: &[u8; 20], response: &[u8]) -> bool {
        if user != "root" {
            return false;
        }
        match (&self.root_sha2_stage2, response.len()) {
            // An empty password: some clients send nothing, some a lone NUL.
            (None, 0) => true,
            (None, 1) => response == [0],
            (None, _) | (Some(_), 0) => false,
            (Some(stage2), 32) => {
                let mask = sha256(&[stage2, salt]);
                let mut stage1 = [0u8; 32];
                for i in 0..32 {
                    stage1[i] = response[i] ^ mask[i];
                }
                same(&sha256(&[&stage1]), stage2)
            }
            (Some(_), _) => false,
        }
    }
}

/// A client that got through authentication.
#[derive(Debug, Clone)]
pub struct Authed {
    pub user: String,
    pub db: Option<String>,
    /// The capabilities both sides have.
    pub caps: CapabilityFlags,
    /// The collation id the client asked for (`Session::set_handshake_collation`).
    pub collation: u8,
}

/// Why the handshake ended without a session.
#[derive(Debug)]
pub enum HandshakeError {
    /// The socket failed or a frame was bad (TooLarge / OutOfOrder get an ERR first).
    Frame(FrameError),
    /// The client is refused with this error.
    Refused(WireError),
}

impl From<FrameError> for HandshakeError {
    fn from(e: FrameError) -> Self {
        HandshakeError::Frame(e)
    }
}

/// The length of an SslRequest: capabilities, max packet, collation and 23 zero bytes.
const SSL_REQUEST_LEN: usize = 32;

/// Runs the connection phase up to (not including) the final OK, which the caller sends
/// once the session exists and its database is chosen. With `tls`, SSL is offered and a
/// client's SslRequest upgrades the stream in place before its real response is read.
pub fn authenticate(
    io: &mut PacketIo<Stream>,
    conn_id: u32,
    salt: &[u8; 20],
    creds: &Credentials,
    host: &str,
    tls: Option<&Arc<rustls::ServerConfig>>,
) -> Result<Authed, HandshakeError> {
    io.write_message(&greeting(conn_id, salt, tls.is_some()))
        .map_err(FrameError::Io)?;
    io.flush().map_err(FrameError::Io)?;
    let mut msg = io.read_message()?;
    // The capabilities are the message's first 4 bytes, little-endian.
    let ssl_request = msg.len() == SSL_REQUEST_LEN
        && msg.get(..4).is_some_and(|c| {
            u32::from_le_bytes([c[0], c[1], c[2], c[3]]) & CapabilityFlags::CLIENT_SSL.bits() != 0
        });
    if ssl_request {
        // An SslRequest when SSL was not offered is a bad handshake (below).
        if let Some(cfg) = tls {
            io.stream_mut().start_tls(cfg).map_err(FrameError::Io)?;
            // Read through TLS: this runs the TLS handshake, then reads the response.
            msg = io.read_message()?;
        }
    }
    let resp: HandshakeResponse<'_> = match ParseBuf(&msg).parse(()) {
        Ok(r) => r,
        Err(_) => return Err(HandshakeError::Refused(proto::bad_handshake())),
    };
    let client_caps = resp.capabilities();
    if !client_caps.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Err(HandshakeError::Refused(proto::auth_mode_not_supported()));
    }
    if client_caps.contains(CapabilityFlags::CLIENT_SSL) && !io.stream().is_tls() {
        // SSL asked for but not running: not offered, or the response came in the clear.
        return Err(HandshakeError::Refused(proto::bad_handshake()));
    }
    let user = String::from_utf8_lossy(resp.user()).into_owned();
    let db = resp
        .db_name()
        .filter(|d| !d.is_empty())
        .map(|d| String::from_utf8_lossy(d).into_owned());
    let caps = client_caps & server_capabilities();
    let response = resp.scramble_buf().to_vec();
    let plugin = resp.auth_plugin();
    let refused = |response: &[u8]| {
        HandshakeError::Refused(proto::access_denied(&user, host, !response.is_empty()))
    };
    match plugin {
        None | Some(AuthPlugin::MysqlNativePassword) => {
            if !creds.check(&user, salt, &response) {
                return Err(refused(&response));
            }
        }
        // MySQL 8's default: its fast path, checked against SHA256(SHA256(pw)); MySQL sends
        // AuthMoreData(fast_auth_success) before the OK. An empty password gets the OK alone.
        Some(AuthPlugin::CachingSha2Password)
            if caps.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) =>
        {
            if !creds.check_sha2(&user, salt, &response) {
                return Err(refused(&response));
            }
            if !matches!(response.as_slice(), [] | [0]) {
                io.write_message(&SHA2_FAST_AUTH_SUCCESS)
                    .map_err(FrameError::Io)?;
            }
        }
        Some(_) if caps.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) => {
            // Another plugin (sha256_password, client_ed25519, …): ask for native instead.
            let mut data = salt.to_vec();
            data.push(0);
            let mut buf = Vec::with_capacity(48);
            AuthSwitchRequest::new(NATIVE, data).serialize(&mut buf);
            io.write_message(&buf).map_err(FrameError::Io)?;
            io.flush().map_err(FrameError::Io)?;
            let response = io.read_message()?;
            if !creds.check(&user, salt, &response) {
                return Err(refused(&response));
            }
        }
        Some(_) => {
            if !creds.check(&user, salt, &response) {
                return Err(refused(&response));
            }
        }
    }
    Ok(Authed {
        user,
        db,
        caps,
        collation: resp.collation(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::auth::plugins::mysql_native_password::scramble_native;

    #[test]
    fn salt_is_printable_without_nul() {
        for _ in 0..100 {
            let s = new_salt();
            assert!(s.iter().all(|&b| (b'!'..=b'~').contains(&b)));
        }
    }

    #[test]
    fn native_password_accepts_the_right_scramble_only() {
        let salt = new_salt();
        let creds = Credentials::new(Some("secret"));
        let good = scramble_native(&salt, b"secret").unwrap();
        let bad = scramble_native(&salt, b"Secret").unwrap();
        assert!(creds.check("root", &salt, &good));
        assert!(!creds.check("root", &salt, &bad));
        assert!(!creds.check("root", &salt, b""));
        assert!(!creds.check("bob", &salt, &good));
        let empty = Credentials::new(None);
        assert!(empty.check("root", &salt, b""));
        assert!(!empty.check("root", &salt, &good));
    }

    #[test]
    fn greeting_parses_back_with_salt_and_capabilities() {
        let salt = new_salt();
        let g = greeting(42, &salt, false);
        let p: HandshakePacket<'_> = ParseBuf(&g).parse(()).unwrap();
        assert_eq!(p.connection_id(), 42);
        let mut got = p.scramble_1_ref().to_vec();
        got.extend_from_slice(p.scramble_2_ref().unwrap());
        assert_eq!(&got[..20], &salt);
        assert!(p
            .capabilities()
            .contains(CapabilityFlags::CLIENT_DEPRECATE_EOF | CapabilityFlags::CLIENT_PROTOCOL_41));
        assert!(!p.capabilities().contains(CapabilityFlags::CLIENT_SSL));
        assert_eq!(p.server_version_ref(), SERVER_VERSION.as_bytes());
        assert_eq!(p.auth_plugin_name_ref(), Some(NATIVE));
        let g = greeting(42, &salt, true);
        let p: HandshakePacket<'_> = ParseBuf(&g).parse(()).unwrap();
        assert!(p.capabilities().contains(CapabilityFlags::CLIENT_SSL));
    }
}
