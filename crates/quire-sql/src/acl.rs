//! Accounts and privileges: the in-memory ACL cache over the `mysql` system tables
//! (docs/security.md).
//!
//! ```text
//!   mysql.user / mysql.db / mysql.tables_priv   (rows, written in a transaction)
//!        │ load (bootstrap, after every account statement, FLUSH PRIVILEGES)
//!        ▼
//!   Acl { accounts sorted most specific first, db grants, table grants }
//!        │ find (handshake)      │ check (every statement)
//! ```
//!
//! Invariants:
//! 1. The cache is only ever replaced whole by a load from committed rows: it never holds
//!    a change that the tables do not (an account statement commits, then reloads).
//! 2. `accounts` is sorted as MariaDB's `acl_users`: hosts without wildcards first, then
//!    by the length before the first wildcard (longer first), `%` last; the first match
//!    of (user, host) is the account a login gets.
//! 3. Only hashes are stored: SHA1(SHA1(pw)) for mysql_native_password, SHA-256 crypt for
//!    caching_sha2_password, the Ed25519 public key for ed25519. The password itself is
//!    never kept, logged or written.
//! 4. An instance without the system tables (the embedded API) has no ACL: every session
//!    there may do everything (`AclState::get` is `None`).

use std::collections::HashMap;

use parking_lot::{Mutex, RwLock};
use sha1::{Digest as _, Sha1};

/// Privilege bits, as MariaDB numbers them (`privilege.h`), so SHOW GRANTS lists them in
/// MariaDB's order.
pub mod privs {
    pub const SELECT: u64 = 1 << 0;
    pub const INSERT: u64 = 1 << 1;
    pub const UPDATE: u64 = 1 << 2;
    pub const DELETE: u64 = 1 << 3;
    pub const CREATE: u64 = 1 << 4;
    pub const DROP: u64 = 1 << 5;
    pub const RELOAD: u64 = 1 << 6;
    pub const SHUTDOWN: u64 = 1 << 7;
    pub const PROCESS: u64 = 1 << 8;
    pub const FILE: u64 = 1 << 9;
    pub const GRANT: u64 = 1 << 10;
    pub const REFERENCES: u64 = 1 << 11;
    pub const INDEX: u64 = 1 << 12;
    pub const ALTER: u64 = 1 << 13;
    pub const SHOW_DB: u64 = 1 << 14;
    pub const SUPER: u64 = 1 << 15;
    pub const CREATE_TMP: u64 = 1 << 16;
    pub const LOCK_TABLES: u64 = 1 << 17;
    pub const EXECUTE: u64 = 1 << 18;
    pub const REPL_SLAVE: u64 = 1 << 19;
    pub const BINLOG_MONITOR: u64 = 1 << 20;
    pub const CREATE_VIEW: u64 = 1 << 21;
    pub const SHOW_VIEW: u64 = 1 << 22;
    pub const CREATE_PROC: u64 = 1 << 23;
    pub const ALTER_PROC: u64 = 1 << 24;
    pub const CREATE_USER: u64 = 1 << 25;
    pub const EVENT: u64 = 1 << 26;
    pub const TRIGGER: u64 = 1 << 27;
    pub const CREATE_TABLESPACE: u64 = 1 << 28;
    pub const DELETE_HISTORY: u64 = 1 << 29;
    pub const SET_USER: u64 = 1 << 30;
    pub const FEDERATED_ADMIN: u64 = 1 << 31;
    pub const CONNECTION_ADMIN: u64 = 1 << 32;
    pub const READ_ONLY_ADMIN: u64 = 1 << 33;
    pub const REPL_SLAVE_ADMIN: u64 = 1 << 34;
    pub const REPL_MASTER_ADMIN: u64 = 1 << 35;
    pub const BINLOG_ADMIN: u64 = 1 << 36;
    pub const BINLOG_REPLAY: u64 = 1 << 37;
    pub const SLAVE_MONITOR: u64 = 1 << 38;

    /// Everything `ALL PRIVILEGES ON *.*` gives (GRANT OPTION is apart).
    pub const ALL_GLOBAL: u64 = ((1 << 39) - 1) & !GRANT;
    /// What a database-level grant may hold.
    pub const DB_ACLS: u64 = SELECT
        | INSERT
        | UPDATE
        | DELETE
        | CREATE
        | DROP
        | GRANT
        | REFERENCES
        | INDEX
        | ALTER
        | CREATE_TMP
        | LOCK_TABLES
        | EXECUTE
        | CREATE_VIEW
        | SHOW_VIEW
        | CREATE_PROC
        | ALTER_PROC
        | EVENT
        | TRIGGER
        | DELETE_HISTORY;
    /// What a table-level grant may hold.
    pub const TABLE_ACLS: u64 = SELECT
        | INSERT
        | UPDATE
        | DELETE
        | CREATE
        | DROP
        | GRANT
        | REFERENCES
        | INDEX
        | ALTER
        | CREATE_VIEW
        | SHOW_VIEW
        | TRIGGER
        | DELETE_HISTORY;

    /// The names, in bit order (MariaDB's `command_array`).
    pub const NAMES: [&str; 39] = [
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "RELOAD",
        "SHUTDOWN",
        "PROCESS",
        "FILE",
        "GRANT",
        "REFERENCES",
        "INDEX",
        "ALTER",
        "SHOW DATABASES",
        "SUPER",
        "CREATE TEMPORARY TABLES",
        "LOCK TABLES",
        "EXECUTE",
        "REPLICATION SLAVE",
        "BINLOG MONITOR",
        "CREATE VIEW",
        "SHOW VIEW",
        "CREATE ROUTINE",
        "ALTER ROUTINE",
        "CREATE USER",
        "EVENT",
        "TRIGGER",
        "CREATE TABLESPACE",
        "DELETE HISTORY",
        "SET USER",
        "FEDERATED ADMIN",
        "CONNECTION ADMIN",
        "READ_ONLY ADMIN",
        "REPLICATION SLAVE ADMIN",
        "REPLICATION MASTER ADMIN",
        "BINLOG ADMIN",
        "BINLOG REPLAY",
        "SLAVE MONITOR",
    ];

    /// A privilege by its name (words upper-cased, one space apart); aliases as MariaDB.
    pub fn by_name(name: &str) -> Option<u64> {
        let alias = match name {
            "REPLICATION CLIENT" => "BINLOG MONITOR",
            "SLAVE MONITOR" | "REPLICA MONITOR" => "SLAVE MONITOR",
            "REPLICATION REPLICA" => "REPLICATION SLAVE",
            other => other,
        };
        NAMES
            .iter()
            .position(|n| *n == alias)
            .filter(|&i| i != 10)
            .map(|i| 1u64 << i)
    }

    /// `SELECT, INSERT` / `ALL PRIVILEGES` / `USAGE`, as SHOW GRANTS writes a grant whose
    /// level allows `all` (GRANT OPTION is written apart, as WITH GRANT OPTION).
    pub fn list(bits: u64, all: u64) -> String {
        let bits = bits & !GRANT;
        if bits == 0 {
            return "USAGE".into();
        }
        if bits & all == all & !GRANT {
            return "ALL PRIVILEGES".into();
        }
        NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How an account proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugin {
    Native,
    CachingSha2,
    Ed25519,
}

impl Plugin {
    pub fn name(self) -> &'static str {
        match self {
            Plugin::Native => "mysql_native_password",
            Plugin::CachingSha2 => "caching_sha2_password",
            Plugin::Ed25519 => "ed25519",
        }
    }
    pub fn by_name(name: &str) -> Option<Plugin> {
        match name.to_ascii_lowercase().as_str() {
            "mysql_native_password" | "" => Some(Plugin::Native),
            "caching_sha2_password" => Some(Plugin::CachingSha2),
            "ed25519" => Some(Plugin::Ed25519),
            _ => None,
        }
    }
}

/// One row of `mysql.user`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
    pub plugin: Plugin,
    /// The plugin's stored value: `*` + 40 hex digits (native, `""` for no password), `$A$005$`
    /// + salt + hash (caching_sha2), base64 of the public key (ed25519).
    pub auth: String,
    /// SHA256(SHA256(pw)) in hex for a native account whose password Quire was given (so
    /// MySQL 8/9 clients get caching_sha2_password's fast path); `""` otherwise.
    pub sha2: String,
    pub privs: u64,
    pub locked: bool,
    /// `WITH MAX_USER_CONNECTIONS n`: this account's sessions at most (1226 past it); 0:
    /// the global `max_user_connections` applies; negative: no login at all (MariaDB's -1).
    pub max_user_connections: i64,
}

impl Account {
    pub fn has_password(&self) -> bool {
        !self.auth.is_empty()
    }
    /// SHA256(SHA256(pw)) when known.
    pub fn sha2_digest(&self) -> Option<[u8; 32]> {
        let b = unhex(&self.sha2)?;
        b.try_into().ok()
    }
    /// SHA1(SHA1(pw)) of a native account with a password.
    pub fn native_stage2(&self) -> Option<[u8; 20]> {
        let b = unhex(self.auth.strip_prefix('*')?)?;
        b.try_into().ok()
    }
}

/// A row of `mysql.db`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbGrant {
    pub user: String,
    pub host: String,
    pub db: String,
    pub privs: u64,
}

/// A row of `mysql.tables_priv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableGrant {
    pub user: String,
    pub host: String,
    pub db: String,
    pub table: String,
    pub privs: u64,
}

/// The whole ACL as loaded.
#[derive(Debug, Clone, Default)]
pub struct Acl {
    pub accounts: Vec<Account>,
    pub dbs: Vec<DbGrant>,
    pub tables: Vec<TableGrant>,
}

/// Where a connection comes from: its host name (`localhost` for the Unix socket and the
/// loopback addresses, as MariaDB resolves them) and its IP address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub name: String,
    pub ip: Option<String>,
}

impl Peer {
    /// The peer of a connection from `addr` (an IP address, or `localhost` for a socket).
    pub fn from_addr(addr: &str) -> Peer {
        match addr {
            "localhost" => Peer {
                name: "localhost".into(),
                ip: None,
            },
            "127.0.0.1" | "::1" | "::ffff:127.0.0.1" => Peer {
                name: "localhost".into(),
                ip: Some(addr.into()),
            },
            other => Peer {
                name: other.into(),
                ip: Some(other.into()),
            },
        }
    }
}

/// MariaDB's wildcard compare for host names: `%` any run, `_` one character, no case.
pub fn wild_match(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = s.to_lowercase().chars().collect();
    // Iterative matching with backtracking to the last `%`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '_' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '%' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '%' {
        pi += 1;
    }
    pi == p.len()
}

/// The sort key of invariant 2: exact hosts, then longer prefixes before the first wildcard;
/// a named user before the anonymous one.
fn host_order(a: &Account) -> (bool, std::cmp::Reverse<usize>, bool) {
    let first_wild = a.host.find(['%', '_']);
    (
        first_wild.is_some(),
        std::cmp::Reverse(first_wild.unwrap_or(a.host.len())),
        a.user.is_empty(),
    )
}

impl Acl {
    pub fn sort(&mut self) {
        self.accounts.sort_by_key(host_order);
    }

    /// The account a login as `user` from `peer` gets (invariant 2).
    pub fn find(&self, user: &str, peer: &Peer) -> Option<&Account> {
        self.accounts.iter().find(|a| {
            a.user == user
                && (wild_match(&a.host, &peer.name)
                    || peer.ip.as_deref().is_some_and(|ip| wild_match(&a.host, ip)))
        })
    }

    /// The account named exactly (CREATE/DROP/GRANT name accounts, not logins).
    pub fn get(&self, user: &str, host: &str) -> Option<&Account> {
        self.accounts
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
    }

    pub fn global(&self, user: &str, host: &str) -> u64 {
        self.get(user, host).map_or(0, |a| a.privs)
    }

    pub fn db_privs(&self, user: &str, host: &str, db: &str) -> u64 {
        self.dbs
            .iter()
            .filter(|g| g.user == user && g.host.eq_ignore_ascii_case(host) && g.db == db)
            .fold(0, |acc, g| acc | g.privs)
    }

    pub fn table_privs(&self, user: &str, host: &str, db: &str, table: &str) -> u64 {
        self.tables
            .iter()
            .filter(|g| {
                g.user == user
                    && g.host.eq_ignore_ascii_case(host)
                    && g.db == db
                    && g.table.eq_ignore_ascii_case(table)
            })
            .fold(0, |acc, g| acc | g.privs)
    }

    /// Whether the account holds any grant on `db` (or on a table in it): what USE and
    /// SHOW DATABASES ask.
    pub fn may_use_db(&self, user: &str, host: &str, db: &str) -> bool {
        self.global(user, host) & privs::DB_ACLS != 0
            || self.db_privs(user, host, db) != 0
            || self.tables.iter().any(|g| {
                g.user == user && g.host.eq_ignore_ascii_case(host) && g.db == db && g.privs != 0
            })
    }

    /// Whether the account holds `need` on table `db`.`table` at any level.
    pub fn table_allows(&self, user: &str, host: &str, db: &str, table: &str, need: u64) -> bool {
        let have = self.global(user, host)
            | self.db_privs(user, host, db)
            | self.table_privs(user, host, db, table);
        have & need == need
    }
}

/// The instance's ACL: `None` until the system tables are loaded (invariant 4), and the
/// caching_sha2_password cache of SHA256(SHA256(pw)) filled by full authentications.
#[derive(Default)]
pub struct AclState {
    acl: RwLock<Option<std::sync::Arc<Acl>>>,
    sha2_cache: Mutex<HashMap<(String, String), [u8; 32]>>,
    /// Account statements run one at a time (their load follows their commit).
    pub(crate) writer: Mutex<()>,
}

impl AclState {
    pub fn get(&self) -> Option<std::sync::Arc<Acl>> {
        self.acl.read().clone()
    }
    pub(crate) fn replace(&self, mut acl: Acl) {
        acl.sort();
        // Cached digests of accounts whose password changed or that are gone must go.
        let mut cache = self.sha2_cache.lock();
        cache.retain(|(u, h), _| {
            acl.get(u, h)
                .is_some_and(|a| a.plugin == Plugin::CachingSha2)
        });
        *self.acl.write() = Some(std::sync::Arc::new(acl));
    }
    /// Forgets an account's cached digest (its password changed).
    pub(crate) fn forget(&self, user: &str, host: &str) {
        self.sha2_cache
            .lock()
            .remove(&(user.to_string(), host.to_string()));
    }
    pub fn cached_sha2(&self, user: &str, host: &str) -> Option<[u8; 32]> {
        self.sha2_cache
            .lock()
            .get(&(user.to_string(), host.to_string()))
            .copied()
    }
    /// A full caching_sha2_password authentication succeeded: later logins take the fast path.
    pub fn cache_sha2(&self, user: &str, host: &str, digest: [u8; 32]) {
        self.sha2_cache
            .lock()
            .insert((user.to_string(), host.to_string()), digest);
    }
}

// ---- Hashes -------------------------------------------------------------------------

fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// mysql_native_password's stored value: `*` + hex(SHA1(SHA1(pw))); `""` for no password.
pub fn native_hash(pw: &str) -> String {
    if pw.is_empty() {
        return String::new();
    }
    let stage1: [u8; 20] = Sha1::digest(pw.as_bytes()).into();
    let stage2: [u8; 20] = Sha1::digest(stage1).into();
    format!("*{}", hex_upper(&stage2))
}

/// Whether `s` is a native hash as SET PASSWORD = '…' takes it (41 characters, `*` + hex).
pub fn is_native_hash(s: &str) -> bool {
    s.is_empty()
        || (s.len() == 41 && s.starts_with('*') && s[1..].bytes().all(|b| b.is_ascii_hexdigit()))
}

pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    out
}

fn sha512(parts: &[&[u8]]) -> [u8; 64] {
    use sha2::Digest as _;
    let mut h = sha2::Sha512::new();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 64];
    out.copy_from_slice(&h.finalize());
    out
}

/// SHA256(SHA256(pw)) in hex: caching_sha2_password's fast-path digest.
pub fn sha2_digest_hex(pw: &str) -> String {
    if pw.is_empty() {
        return String::new();
    }
    hex_upper(&sha256(&[&sha256(&[pw.as_bytes()])]))
}

/// MariaDB's ed25519 value: base64 (no padding) of the public key whose secret scalar is the
/// clamped first half of SHA512(pw).
pub fn ed25519_hash(pw: &str) -> String {
    use base64::Engine as _;
    let h = sha512(&[pw.as_bytes()]);
    let mut scalar = [0u8; 32];
    scalar.copy_from_slice(&h[..32]);
    let point = curve25519_dalek::EdwardsPoint::mul_base_clamped(scalar);
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(point.compress().as_bytes())
}

/// Whether `s` is an ed25519 value (43 base64 characters of 32 bytes).
pub fn is_ed25519_value(s: &str) -> bool {
    use base64::Engine as _;
    s.len() == 43
        && base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(s)
            .is_ok_and(|b| b.len() == 32)
}

/// The base64 alphabet of crypt(3).
const CRYPT_B64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// SHA-256 crypt (Drepper's algorithm, as glibc's `$5$`) over `pw` and `salt` with `rounds`,
/// the 43 characters of its hash: what MySQL's caching_sha2_password stores.
pub fn sha256_crypt(pw: &[u8], salt: &[u8], rounds: usize) -> String {
    let a_digest = {
        let b = sha256(&[pw, salt, pw]);
        let mut parts: Vec<u8> = Vec::new();
        parts.extend_from_slice(pw);
        parts.extend_from_slice(salt);
        let mut n = pw.len();
        while n > 32 {
            parts.extend_from_slice(&b);
            n -= 32;
        }
        parts.extend_from_slice(&b[..n]);
        let mut n = pw.len();
        while n > 0 {
            if n & 1 == 1 {
                parts.extend_from_slice(&b);
            } else {
                parts.extend_from_slice(pw);
            }
            n >>= 1;
        }
        sha256(&[&parts])
    };
    let dp = {
        let mut v = Vec::with_capacity(pw.len() * pw.len());
        for _ in 0..pw.len() {
            v.extend_from_slice(pw);
        }
        let d = sha256(&[&v]);
        let mut p = Vec::with_capacity(pw.len());
        let mut n = pw.len();
        while n >= 32 {
            p.extend_from_slice(&d);
            n -= 32;
        }
        p.extend_from_slice(&d[..n]);
        p
    };
    let ds = {
        let mut v = Vec::new();
        for _ in 0..(16 + usize::from(a_digest[0])) {
            v.extend_from_slice(salt);
        }
        let d = sha256(&[&v]);
        let mut s = Vec::with_capacity(salt.len());
        let mut n = salt.len();
        while n >= 32 {
            s.extend_from_slice(&d);
            n -= 32;
        }
        s.extend_from_slice(&d[..n]);
        s
    };
    let mut c = a_digest;
    let mut buf: Vec<u8> = Vec::with_capacity(32 + ds.len() + 2 * dp.len());
    for i in 0..rounds {
        buf.clear();
        buf.extend_from_slice(if i & 1 == 1 { &dp } else { &c });
        if i % 3 != 0 {
            buf.extend_from_slice(&ds);
        }
        if i % 7 != 0 {
            buf.extend_from_slice(&dp);
        }
        buf.extend_from_slice(if i & 1 == 1 { &c } else { &dp });
        c = sha256(&[&buf]);
    }
    // The byte order of glibc's encoding of a SHA-256 crypt.
    const ORDER: [(usize, usize, usize); 10] = [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ];
    let mut out = String::with_capacity(43);
    let mut push = |w: u32, n: usize| {
        let mut w = w;
        for _ in 0..n {
            out.push(char::from(CRYPT_B64[(w & 0x3f) as usize]));
            w >>= 6;
        }
    };
    for (a, b, cc) in ORDER {
        push(
            (u32::from(c[a]) << 16) | (u32::from(c[b]) << 8) | u32::from(c[cc]),
            4,
        );
    }
    push((u32::from(c[31]) << 8) | u32::from(c[30]), 3);
    out
}

/// caching_sha2_password's rounds: MySQL's iteration count 5 (× 1000).
const SHA2_ROUNDS: usize = 5000;

/// caching_sha2_password's stored value: `$A$005$`, 20 characters of salt, the hash.
pub fn caching_sha2_hash(pw: &str) -> String {
    if pw.is_empty() {
        return String::new();
    }
    use rand::Rng;
    let mut rng = rand::thread_rng();
    // Printable, without `$` (the separator): the salt is kept as text.
    let salt: String = (0..20)
        .map(|_| char::from(CRYPT_B64[rng.gen_range(0..64)]))
        .collect();
    format!(
        "$A$005${salt}{}",
        sha256_crypt(pw.as_bytes(), salt.as_bytes(), SHA2_ROUNDS)
    )
}

/// Whether `pw` is the password of a caching_sha2_password value.
pub fn caching_sha2_check(stored: &str, pw: &[u8]) -> bool {
    let Some(rest) = stored.strip_prefix("$A$") else {
        return false;
    };
    let Some((count, rest)) = rest.split_once('$') else {
        return false;
    };
    let Ok(count) = usize::from_str_radix(count, 16) else {
        return false;
    };
    if rest.len() != 20 + 43 {
        return false;
    }
    let (salt, hash) = rest.split_at(20);
    let got = sha256_crypt(pw, salt.as_bytes(), count * 1000);
    got.len() == hash.len()
        && got
            .bytes()
            .zip(hash.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Quotes `s` as a SQL string literal (the system-table statements are built as text).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_hash_is_mariadbs() {
        // MariaDB: PASSWORD('pw1').
        assert_eq!(
            native_hash("pw1"),
            "*2B602296A79E0A8784ACC5C88D92E46588CCA3C3"
        );
        assert_eq!(native_hash(""), "");
    }

    #[test]
    fn ed25519_value_is_mariadbs() {
        // MariaDB: CREATE USER u3 IDENTIFIED VIA ed25519 USING PASSWORD('pw3').
        assert_eq!(
            ed25519_hash("pw3"),
            "/+V6GO2sIIPPbTFC6QKo9hleqgK8YKxv+DqdlXybmjA"
        );
    }

    #[test]
    fn sha256_crypt_matches_glibc() {
        // glibc's crypt("Hello world!", "$5$saltstring") (5000 rounds, its default).
        assert_eq!(
            sha256_crypt(b"Hello world!", b"saltstring", 5000),
            "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        let v = caching_sha2_hash("secret");
        assert!(caching_sha2_check(&v, b"secret"));
        assert!(!caching_sha2_check(&v, b"Secret"));
    }

    #[test]
    fn hosts_match_with_wildcards_most_specific_first() {
        assert!(wild_match("%", "10.0.0.1"));
        assert!(wild_match("10.0.%", "10.0.0.1"));
        assert!(wild_match("LOCALHOST", "localhost"));
        assert!(wild_match("h_st", "host"));
        assert!(!wild_match("10.1.%", "10.0.0.1"));
        let acct = |u: &str, h: &str| Account {
            user: u.into(),
            host: h.into(),
            plugin: Plugin::Native,
            auth: String::new(),
            sha2: String::new(),
            privs: 0,
            locked: false,
            max_user_connections: 0,
        };
        let mut acl = Acl {
            accounts: vec![
                acct("u", "%"),
                acct("u", "10.0.%"),
                acct("u", "localhost"),
                acct("u", "10.%"),
            ],
            ..Acl::default()
        };
        acl.sort();
        let peer = Peer::from_addr("10.0.0.5");
        assert_eq!(
            acl.find("u", &peer).map(|a| a.host.as_str()),
            Some("10.0.%")
        );
        let local = Peer::from_addr("127.0.0.1");
        assert_eq!(
            acl.find("u", &local).map(|a| a.host.as_str()),
            Some("localhost")
        );
        assert_eq!(
            acl.find("u", &Peer::from_addr("192.168.1.1"))
                .map(|a| a.host.as_str()),
            Some("%")
        );
        assert!(acl.find("v", &local).is_none());
    }

    #[test]
    fn grants_list_in_mariadbs_order() {
        use privs::*;
        assert_eq!(list(INSERT | SELECT, ALL_GLOBAL), "SELECT, INSERT");
        assert_eq!(list(RELOAD | PROCESS, ALL_GLOBAL), "RELOAD, PROCESS");
        assert_eq!(list(ALL_GLOBAL | GRANT, ALL_GLOBAL), "ALL PRIVILEGES");
        assert_eq!(list(DB_ACLS, DB_ACLS), "ALL PRIVILEGES");
        assert_eq!(list(GRANT, DB_ACLS), "USAGE");
    }
}
