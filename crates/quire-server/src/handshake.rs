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

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use rand::Rng;
use sha1::{Digest, Sha1};

use quire_sql::acl::{AclState, Peer, Plugin};

use crate::errors::{proto, WireError};
use crate::listener::Stream;
use crate::packet::{FrameError, PacketIo};

/// What the server reports as its version: `quire_sql::expr::VERSION` behind the `5.5.5-`
/// prefix, the replication-era marker that makes old MySQL clients accept a 10.x version;
/// MariaDB's clients strip it from a version that says `MariaDB`.
pub const SERVER_VERSION: &str = "5.5.5-10.11.99-MariaDB-Quire-0.1.0";

/// utf8mb4_general_ci.
pub const DEFAULT_COLLATION: u8 = 45;

const NATIVE: &[u8] = b"mysql_native_password";

/// caching_sha2_password's AuthMoreData: the fast path succeeded (OK follows).
const SHA2_FAST_AUTH_SUCCESS: [u8; 2] = [0x01, 0x03];

/// The capabilities the server offers (SSL as well when TLS is on: [`greeting`]); a
/// connection uses their intersection with the client's. LOCAL_FILES is offered as
/// MariaDB does; `local_infile` decides per statement. Not LONG_PASSWORD: that bit is
/// CLIENT_MYSQL, and leaving it clear says, as MariaDB 10.2+ does, that the greeting
/// carries MariaDB's extended capabilities ([`MARIADB_CAPABILITIES`]).
pub fn server_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LOCAL_FILES
        | CapabilityFlags::CLIENT_FOUND_ROWS
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

/// MariaDB's extended capabilities the server offers, in the last 4 of the greeting's
/// reserved bytes: extended column metadata (docs/protocol.md, "Extended metadata").
pub const MARIADB_CAPABILITIES: MariadbCapabilities =
    MariadbCapabilities::MARIADB_CLIENT_EXTENDED_METADATA;

/// Whether a client that sent `caps` and MariaDB capabilities `mariadb` gets extended
/// column metadata: MariaDB reads the client's extended bytes only when it left
/// CLIENT_MYSQL (LONG_PASSWORD) clear; MySQL's clients set it.
pub fn extended_metadata(caps: CapabilityFlags, mariadb: MariadbCapabilities) -> bool {
    !caps.contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
        && (mariadb & MARIADB_CAPABILITIES)
            .contains(MariadbCapabilities::MARIADB_CLIENT_EXTENDED_METADATA)
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
    )
    .with_mariadb_ext_capabilities(MARIADB_CAPABILITIES);
    let mut buf = Vec::with_capacity(96);
    p.serialize(&mut buf);
    buf
}

/// SHA256 of the parts, one after the other.
fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    quire_sql::acl::sha256(parts)
}

/// Compares every byte (no early exit on the first difference).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// mysql_native_password: the client sent SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))).
/// XOR with SHA1(salt + stage2) gives SHA1(pw) back; its SHA1 must be stage2. `None`: the
/// account has no password (only the empty response passes).
pub fn check_native(stage2: Option<[u8; 20]>, salt: &[u8; 20], response: &[u8]) -> bool {
    match (stage2, response.len()) {
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
            same(&candidate, &stage2)
        }
        (Some(_), _) => false,
    }
}

/// caching_sha2_password's fast path: the client sent SHA256(pw) XOR
/// SHA256(SHA256(SHA256(pw)) + salt). XOR with SHA256(stage2 + salt) gives SHA256(pw)
/// back; its SHA256 must be stage2.
pub fn check_sha2_fast(stage2: &[u8; 32], salt: &[u8; 20], response: &[u8]) -> bool {
    if response.len() != 32 {
        return false;
    }
    let mask = sha256(&[stage2, salt]);
    let mut stage1 = [0u8; 32];
    for i in 0..32 {
        stage1[i] = response[i] ^ mask[i];
    }
    same(&sha256(&[&stage1]), stage2)
}

/// MariaDB's client_ed25519: the client signed `nonce` with the key derived from its
/// password; the account keeps the public key (base64).
pub fn check_ed25519(public_b64: &str, nonce: &[u8], signature: &[u8]) -> bool {
    use base64::Engine as _;
    let Ok(key) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(public_b64) else {
        return false;
    };
    let Ok(key): Result<[u8; 32], _> = key.try_into() else {
        return false;
    };
    let Ok(sig): Result<[u8; 64], _> = signature.try_into() else {
        return false;
    };
    let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(&key) else {
        return false;
    };
    vk.verify_strict(nonce, &ed25519_dalek::Signature::from_bytes(&sig))
        .is_ok()
}

/// The server's RSA key pair for caching_sha2_password's exchange without TLS, made at the
/// first request for it (MySQL keeps one per server start unless given files).
pub struct RsaKeys {
    key: std::sync::OnceLock<Option<(rsa::RsaPrivateKey, String)>>,
}

impl Default for RsaKeys {
    fn default() -> Self {
        RsaKeys {
            key: std::sync::OnceLock::new(),
        }
    }
}

impl RsaKeys {
    fn get(&self) -> Option<&(rsa::RsaPrivateKey, String)> {
        self.key
            .get_or_init(|| {
                use rsa::pkcs8::EncodePublicKey as _;
                let mut rng = rand::thread_rng();
                let key = rsa::RsaPrivateKey::new(&mut rng, 2048).ok()?;
                let pem = key
                    .to_public_key()
                    .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
                    .ok()?;
                Some((key, pem))
            })
            .as_ref()
    }
}

/// A client that got through authentication.
#[derive(Debug, Clone)]
pub struct Authed {
    pub user: String,
    /// The account the login matched (user, host pattern): CURRENT_USER().
    pub account: (String, String),
    pub db: Option<String>,
    /// The capabilities both sides have.
    pub caps: CapabilityFlags,
    /// The collation id the client asked for (`Session::set_handshake_collation`).
    pub collation: u8,
    /// Column definitions carry MariaDB's extended metadata ([`extended_metadata`]).
    pub extended_metadata: bool,
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
    accounts: &AclState,
    rsa_keys: &RsaKeys,
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
    let extended_metadata = extended_metadata(client_caps, resp.mariadb_ext_capabilities());
    let login = Login {
        user,
        response: resp.scramble_buf().to_vec(),
        plugin: resp.auth_plugin().map(|p| p.as_bytes().to_vec()),
    };
    let account = verify(io, salt, accounts, rsa_keys, host, caps, login.clone())?;
    Ok(Authed {
        user: login.user,
        account,
        db,
        caps,
        collation: resp.collation(),
        extended_metadata,
    })
}

/// What a client sends to log in, in its HandshakeResponse or its COM_CHANGE_USER.
#[derive(Debug, Clone)]
pub struct Login {
    pub user: String,
    /// The auth response computed against the connection's salt.
    pub response: Vec<u8>,
    /// The client's auth plugin, when it named one.
    pub plugin: Option<Vec<u8>>,
}

/// Authenticates `login` against the accounts: the exchange the account's plugin asks for
/// (switching the client's plugin when needed), then the lock check. The account matched
/// (user, host pattern), or the ERR to refuse with. Used by the handshake and by
/// COM_CHANGE_USER, which both answer against the connection's first `salt`.
pub fn verify(
    io: &mut PacketIo<Stream>,
    salt: &[u8; 20],
    accounts: &AclState,
    rsa_keys: &RsaKeys,
    host: &str,
    caps: CapabilityFlags,
    login: Login,
) -> Result<(String, String), HandshakeError> {
    let Login {
        user,
        mut response,
        plugin,
    } = login;
    let peer = Peer::from_addr(host);
    // 1045 names the connection's host as MariaDB resolves it.
    let refused = |response: &[u8]| {
        HandshakeError::Refused(proto::access_denied(
            &user,
            &peer.name,
            !response.is_empty(),
        ))
    };
    let acl = accounts.get();
    let Some(account) = acl.as_ref().and_then(|a| a.find(&user, &peer)).cloned() else {
        return Err(refused(&response));
    };
    let plugin_auth = caps.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH);
    let client_plugin = plugin.as_deref().unwrap_or(NATIVE);
    let ok = match account.plugin {
        Plugin::Native => {
            if client_plugin == NATIVE || !plugin_auth {
                check_native(account.native_stage2(), salt, &response)
            } else if client_plugin == SHA2 && account.sha2_digest().is_some() {
                // MySQL 8/9's default: its fast path against SHA256(SHA256(pw)); MySQL sends
                // AuthMoreData(fast_auth_success) before the OK.
                let good = account
                    .sha2_digest()
                    .is_some_and(|d| check_sha2_fast(&d, salt, &response));
                if good {
                    io.write_message(&SHA2_FAST_AUTH_SUCCESS)
                        .map_err(FrameError::Io)?;
                }
                good
            } else if client_plugin == SHA2 && !account.has_password() {
                // No password: the empty response (or a lone NUL) is the whole exchange.
                matches!(response.as_slice(), [] | [0])
            } else {
                // Another plugin (sha256_password, client_ed25519, …): ask for native.
                response = switch(io, NATIVE, &salt_with_nul(salt))?;
                check_native(account.native_stage2(), salt, &response)
            }
        }
        Plugin::Ed25519 => {
            if !plugin_auth {
                return Err(HandshakeError::Refused(proto::auth_mode_not_supported()));
            }
            let mut nonce = [0u8; 32];
            rand::thread_rng().fill(&mut nonce);
            response = switch(io, b"client_ed25519", &nonce)?;
            check_ed25519(&account.auth, &nonce, &response)
        }
        Plugin::CachingSha2 => {
            if !plugin_auth {
                return Err(HandshakeError::Refused(proto::auth_mode_not_supported()));
            }
            if client_plugin != SHA2 {
                response = switch(io, SHA2, &salt_with_nul(salt))?;
            }
            if matches!(response.as_slice(), [] | [0]) {
                !account.has_password()
            } else if accounts
                .cached_sha2(&account.user, &account.host)
                .is_some_and(|d| check_sha2_fast(&d, salt, &response))
            {
                io.write_message(&SHA2_FAST_AUTH_SUCCESS)
                    .map_err(FrameError::Io)?;
                true
            } else {
                match sha2_full_auth(io, salt, &account.auth, rsa_keys)? {
                    Some(digest) => {
                        accounts.cache_sha2(&account.user, &account.host, digest);
                        true
                    }
                    None => false,
                }
            }
        }
    };
    if !ok {
        return Err(refused(&response));
    }
    if account.locked {
        return Err(HandshakeError::Refused(proto::account_locked()));
    }
    Ok((account.user.clone(), account.host.clone()))
}

/// COM_CHANGE_USER's body (after the command byte), as a CLIENT_PROTOCOL_41 +
/// SECURE_CONNECTION client sends it: user NUL, u8 length + auth response, database NUL,
/// then (when the client sends them) the u16 collation, the plugin name NUL (with
/// PLUGIN_AUTH) and the connection attributes (with CONNECT_ATTRS, ignored).
#[derive(Debug, Clone)]
pub struct ChangeUser {
    pub login: Login,
    pub db: Option<String>,
    pub collation: Option<u8>,
}

/// Parses COM_CHANGE_USER's body; `None` when it is malformed.
pub fn parse_change_user(body: &[u8], caps: CapabilityFlags) -> Option<ChangeUser> {
    fn nul_terminated<'b>(b: &mut &'b [u8]) -> Option<&'b [u8]> {
        let end = b.iter().position(|&c| c == 0)?;
        let (s, rest) = b.split_at(end);
        *b = &rest[1..];
        Some(s)
    }
    let mut b = body;
    let user = String::from_utf8_lossy(nul_terminated(&mut b)?).into_owned();
    let (&len, rest) = b.split_first()?;
    let response = rest.get(..len as usize)?.to_vec();
    b = &rest[len as usize..];
    // Old clients end the database without its NUL when nothing follows.
    let db = match nul_terminated(&mut b) {
        Some(d) => d,
        None => std::mem::take(&mut b),
    };
    let db = (!db.is_empty()).then(|| String::from_utf8_lossy(db).into_owned());
    let mut collation = None;
    let mut plugin = None;
    if b.len() >= 2 {
        // The collation's low byte names it (ids above 255 are not offered).
        collation = Some(b[0]);
        b = &b[2..];
        if caps.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) && !b.is_empty() {
            plugin = Some(nul_terminated(&mut b).unwrap_or(b).to_vec());
        }
    }
    Some(ChangeUser {
        login: Login {
            user,
            response,
            plugin,
        },
        db,
        collation,
    })
}

const SHA2: &[u8] = b"caching_sha2_password";

/// caching_sha2_password's AuthMoreData: full authentication follows.
const SHA2_PERFORM_FULL_AUTH: [u8; 2] = [0x01, 0x04];

/// The client asks for the server's RSA public key.
const SHA2_REQUEST_PUBLIC_KEY: u8 = 0x02;

fn salt_with_nul(salt: &[u8; 20]) -> Vec<u8> {
    let mut data = salt.to_vec();
    data.push(0);
    data
}

/// AuthSwitchRequest(plugin, data), then the client's answer.
fn switch(
    io: &mut PacketIo<Stream>,
    plugin: &[u8],
    data: &[u8],
) -> Result<Vec<u8>, HandshakeError> {
    let mut buf = Vec::with_capacity(64);
    AuthSwitchRequest::new(plugin, data.to_vec()).serialize(&mut buf);
    io.write_message(&buf).map_err(FrameError::Io)?;
    io.flush().map_err(FrameError::Io)?;
    Ok(io.read_message()?)
}

/// caching_sha2_password's full authentication: the password in clear over TLS or the Unix
/// socket, else RSA-OAEP encrypted (XOR the salt) with the server's public key, which the
/// client may ask for first. `Some(SHA256(SHA256(pw)))` when it is the account's.
fn sha2_full_auth(
    io: &mut PacketIo<Stream>,
    salt: &[u8; 20],
    stored: &str,
    rsa_keys: &RsaKeys,
) -> Result<Option<[u8; 32]>, HandshakeError> {
    io.write_message(&SHA2_PERFORM_FULL_AUTH)
        .map_err(FrameError::Io)?;
    io.flush().map_err(FrameError::Io)?;
    let mut msg = io.read_message()?;
    let password = if io.stream().is_secure() {
        msg
    } else {
        let Some((key, pem)) = rsa_keys.get() else {
            return Ok(None);
        };
        if msg.as_slice() == [SHA2_REQUEST_PUBLIC_KEY] {
            let mut more = vec![0x01];
            more.extend_from_slice(pem.as_bytes());
            io.write_message(&more).map_err(FrameError::Io)?;
            io.flush().map_err(FrameError::Io)?;
            msg = io.read_message()?;
        }
        let Ok(mut plain) = key.decrypt(rsa::Oaep::new::<sha1::Sha1>(), &msg) else {
            return Ok(None);
        };
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= salt[i % salt.len()];
        }
        plain
    };
    let pw = password.strip_suffix(&[0]).unwrap_or(&password);
    if !quire_sql::acl::caching_sha2_check(stored, pw) {
        return Ok(None);
    }
    Ok(Some(sha256(&[&sha256(&[pw])])))
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
        let stored = quire_sql::acl::native_hash("secret");
        let stage2: [u8; 20] = quire_sql::acl::unhex(&stored[1..])
            .and_then(|v| v.try_into().ok())
            .expect("hash");
        let good = scramble_native(&salt, b"secret").unwrap();
        let bad = scramble_native(&salt, b"Secret").unwrap();
        assert!(check_native(Some(stage2), &salt, &good));
        assert!(!check_native(Some(stage2), &salt, &bad));
        assert!(!check_native(Some(stage2), &salt, b""));
        assert!(check_native(None, &salt, b""));
        assert!(!check_native(None, &salt, &good));
    }

    #[test]
    fn ed25519_signature_of_the_nonce_verifies_against_the_stored_key() {
        use ed25519_dalek::Signer as _;
        // MariaDB's client expands SHA512(password) as Ed25519 expands SHA512(seed): for a
        // 32-byte password the standard signing key is the client's.
        let pw = "0123456789abcdef0123456789abcdef";
        let stored = quire_sql::acl::ed25519_hash(pw);
        let mut seed = [0u8; 32];
        seed.copy_from_slice(pw.as_bytes());
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        let nonce = [7u8; 32];
        let sig = key.sign(&nonce).to_bytes();
        assert!(check_ed25519(&stored, &nonce, &sig));
        assert!(!check_ed25519(&stored, &[8u8; 32], &sig));
        let other = quire_sql::acl::ed25519_hash("another password");
        assert!(!check_ed25519(&other, &nonce, &sig));
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

    /// As MariaDB 10.11's greeting (measured: capabilities 0x81fff7fe, extended 0x1d):
    /// CLIENT_MYSQL clear, and the extended capabilities in the last 4 reserved bytes.
    #[test]
    fn greeting_offers_mariadb_extended_metadata_with_client_mysql_clear() {
        let g = greeting(7, &new_salt(), false);
        let p: HandshakePacket<'_> = ParseBuf(&g).parse(()).unwrap();
        assert!(!p
            .capabilities()
            .contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
        assert_eq!(
            p.mariadb_ext_capabilities(),
            MariadbCapabilities::MARIADB_CLIENT_EXTENDED_METADATA
        );
        // Protocol, version and NUL, connection id, salt part 1, filler, capabilities
        // (low), collation, status, capabilities (high), auth data length, then 10
        // reserved bytes: 6 zero, then MariaDB's 4.
        let at = 1 + SERVER_VERSION.len() + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1;
        assert_eq!(&g[at..at + 10], &[0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0]);
    }

    #[test]
    fn only_a_client_without_client_mysql_gets_extended_metadata() {
        let ext = MariadbCapabilities::MARIADB_CLIENT_EXTENDED_METADATA;
        let mariadb_client = CapabilityFlags::CLIENT_PROTOCOL_41;
        let mysql_client = mariadb_client | CapabilityFlags::CLIENT_LONG_PASSWORD;
        assert!(extended_metadata(mariadb_client, ext));
        assert!(extended_metadata(
            mariadb_client,
            ext | MariadbCapabilities::MARIADB_CLIENT_PROGRESS
        ));
        // MySQL's clients set CLIENT_MYSQL: whatever the reserved bytes hold, nothing.
        assert!(!extended_metadata(mysql_client, ext));
        assert!(!extended_metadata(
            mariadb_client,
            MariadbCapabilities::MARIADB_CLIENT_PROGRESS
        ));
        assert!(!extended_metadata(
            mariadb_client,
            MariadbCapabilities::empty()
        ));
    }

    #[test]
    fn greeting_version_is_version_behind_the_5_5_5_prefix() {
        assert_eq!(
            SERVER_VERSION,
            format!("5.5.5-{}", quire_sql::expr::VERSION)
        );
        assert!(quire_sql::expr::VERSION.contains("-MariaDB-"));
    }
}
