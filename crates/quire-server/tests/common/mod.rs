//! An in-process server on an ephemeral port over a temporary data directory, and a
//! minimal raw client built from mysql_common's packet types.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mysql_common::auth::plugins::caching_sha2_password::scramble_sha256;
use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_server::packet::PacketIo;
use quire_server::reply::Reader;
use quire_server::{serve_on, Listeners, ServerConfig};

pub struct TestServer {
    pub addr: SocketAddr,
    shutdown: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

/// A small engine: tests start several servers at once on a shared machine.
pub fn small_config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "8M"),
        ("innodb_log_file_size", "8M"),
        ("innodb_log_buffer_size", "1M"),
        ("innodb_flush_method", "fsync"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        c.set(k, v).unwrap();
    }
    c
}

impl TestServer {
    pub fn start() -> TestServer {
        Self::start_with(ServerConfig::default())
    }

    pub fn start_with(mut cfg: ServerConfig) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        cfg.bind = None;
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let path = dir.path().to_path_buf();
        let thread = std::thread::spawn(move || {
            let db = Db::open(&path, small_config()).unwrap();
            serve_on(&db, Listeners::from_tcp(listener), &cfg, &flag).unwrap();
            db.shutdown().unwrap();
        });
        TestServer {
            addr,
            shutdown,
            thread: Some(thread),
            _dir: Some(dir),
        }
    }

    /// A server on a Unix socket only.
    pub fn start_unix(path: &std::path::Path, root_password: Option<&str>) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ServerConfig {
            bind: None,
            socket: Some(path.to_path_buf()),
            root_password: root_password.map(str::to_owned),
            ..ServerConfig::default()
        };
        let listeners = Listeners::bind(&cfg).unwrap();
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let data = dir.path().to_path_buf();
        let thread = std::thread::spawn(move || {
            let db = Db::open(&data, small_config()).unwrap();
            serve_on(&db, listeners, &cfg, &flag).unwrap();
            db.shutdown().unwrap();
        });
        TestServer {
            addr: "127.0.0.1:9".parse().unwrap(),
            shutdown,
            thread: Some(thread),
            _dir: Some(dir),
        }
    }

    /// Stops accepting, closes every connection, shuts the Db down; panics if the server
    /// thread panicked.
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        self.shutdown.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.join().expect("server thread panicked");
        }
    }

    pub fn connect(&self) -> Client {
        Client::connect(self.addr, "root", "", None).unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop_inner();
        } else {
            self.shutdown.store(true, Ordering::Release);
            // The server thread is still running: removing its files under it would make
            // the engine abort the whole test binary on its next write (quire_io::fatal),
            // and the failing test's message would be lost with it.
            if let Some(dir) = self._dir.take() {
                let _ = dir.keep();
            }
        }
    }
}

/// A server's answer, as far as these tests read it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        status: u16,
        warnings: u16,
        info: String,
    },
    Err {
        code: u16,
        state: String,
        message: String,
    },
    /// Anything else: the raw packet.
    Other(Vec<u8>),
}

impl Reply {
    pub fn parse(p: &[u8]) -> Reply {
        match p.first() {
            Some(0x00) | Some(0xFE) if p.len() >= 7 && p.len() < 0xFF_FFFF => {
                let mut r = Reader::new(&p[1..]);
                let affected_rows = r.lenenc_int().unwrap();
                let last_insert_id = r.lenenc_int().unwrap();
                let status = r.u16().unwrap();
                let warnings = r.u16().unwrap();
                let info = String::from_utf8_lossy(r.rest()).into_owned();
                Reply::Ok {
                    affected_rows,
                    last_insert_id,
                    status,
                    warnings,
                    info,
                }
            }
            Some(0xFF) => {
                let code = u16::from_le_bytes([p[1], p[2]]);
                let (state, message) = if p.get(3) == Some(&b'#') {
                    (
                        String::from_utf8_lossy(&p[4..9]).into_owned(),
                        String::from_utf8_lossy(&p[9..]).into_owned(),
                    )
                } else {
                    (String::new(), String::from_utf8_lossy(&p[3..]).into_owned())
                };
                Reply::Err {
                    code,
                    state,
                    message,
                }
            }
            _ => Reply::Other(p.to_vec()),
        }
    }

    pub fn err_code(&self) -> Option<u16> {
        match self {
            Reply::Err { code, .. } => Some(*code),
            _ => None,
        }
    }
}

pub struct Client {
    pub io: PacketIo<TcpStream>,
    pub conn_id: u32,
    pub caps: CapabilityFlags,
    /// The greeting's salt (COM_CHANGE_USER's response is computed against it).
    pub salt: Vec<u8>,
}

pub fn client_caps() -> CapabilityFlags {
    CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_LONG_PASSWORD
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
        | CapabilityFlags::CLIENT_MULTI_RESULTS
}

/// The greeting's connection id and salt, or the ERR sent in its place.
pub type Greeting = Result<(u32, Vec<u8>), Reply>;

/// Reads the greeting; returns the packet io, connection id and the 20-byte salt.
pub fn greet(addr: SocketAddr) -> (PacketIo<TcpStream>, Greeting) {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut io = PacketIo::new(s, 64 << 20);
    let g = io.read_message().unwrap();
    if g.first() == Some(&0xFF) {
        return (io, Err(Reply::parse(&g)));
    }
    let hs: HandshakePacket<'_> = ParseBuf(&g).parse(()).unwrap();
    let salt = hs.nonce();
    (io, Ok((hs.connection_id(), salt)))
}

impl Client {
    /// Connects and authenticates with mysql_native_password; the server's ERR otherwise.
    pub fn connect(
        addr: SocketAddr,
        user: &str,
        password: &str,
        db: Option<&str>,
    ) -> Result<Client, Reply> {
        Self::connect_as(addr, user, password, db, AuthPlugin::MysqlNativePassword)
    }

    /// As `connect`, announcing `plugin` first (a MySQL 8 client says caching_sha2_password).
    pub fn connect_as(
        addr: SocketAddr,
        user: &str,
        password: &str,
        db: Option<&str>,
        plugin: AuthPlugin<'_>,
    ) -> Result<Client, Reply> {
        Self::connect_with_caps(addr, user, password, db, plugin, client_caps())
    }

    /// As `connect_as`, with the capabilities `caps` (CLIENT_LOCAL_FILES for LOAD DATA
    /// LOCAL).
    pub fn connect_with_caps(
        addr: SocketAddr,
        user: &str,
        password: &str,
        db: Option<&str>,
        plugin: AuthPlugin<'_>,
        caps: CapabilityFlags,
    ) -> Result<Client, Reply> {
        Self::connect_mariadb(
            addr,
            user,
            password,
            db,
            plugin,
            caps,
            MariadbCapabilities::empty(),
        )
    }

    /// As `connect_with_caps`, sending MariaDB's extended capabilities `mariadb` in the
    /// response's last 4 reserved bytes (the server reads them only if `caps` leaves
    /// CLIENT_LONG_PASSWORD, MariaDB's CLIENT_MYSQL, clear).
    pub fn connect_mariadb(
        addr: SocketAddr,
        user: &str,
        password: &str,
        db: Option<&str>,
        plugin: AuthPlugin<'_>,
        caps: CapabilityFlags,
        mariadb: MariadbCapabilities,
    ) -> Result<Client, Reply> {
        let (mut io, greeting) = greet(addr);
        let (conn_id, salt) = greeting?;
        let first = match plugin {
            AuthPlugin::MysqlNativePassword => scramble_native(&salt, password.as_bytes())
                .map(|s| s.to_vec())
                .unwrap_or_default(),
            AuthPlugin::CachingSha2Password => {
                let mut nonce = [0u8; 20];
                nonce.copy_from_slice(&salt[..20]);
                scramble_sha256(&nonce, password.as_bytes())
                    .map(|s| s.to_vec())
                    .unwrap_or_default()
            }
            // Not a native scramble: whatever the other plugin would send.
            _ => vec![0xAB; 32],
        };
        let resp = HandshakeResponse::new(
            Some(first),
            (10, 11, 99),
            Some(user.as_bytes()),
            db.map(str::as_bytes),
            Some(plugin),
            caps,
            None,
            16 << 20,
        )
        .with_mariadb_ext_capabilities(mariadb);
        let mut buf = Vec::new();
        resp.serialize(&mut buf);
        io.write_message(&buf).unwrap();
        io.flush().unwrap();
        let mut p = io.read_message().unwrap();
        if p == [0x01, 0x03] {
            // caching_sha2_password's fast_auth_success: the OK follows.
            p = io.read_message().unwrap();
        }
        if p.first() == Some(&0xFE) && p.len() > 7 {
            let sw: AuthSwitchRequest<'_> = ParseBuf(&p).parse(()).unwrap();
            assert_eq!(sw.auth_plugin(), AuthPlugin::MysqlNativePassword);
            let scramble = scramble_native(sw.plugin_data(), password.as_bytes())
                .map(|s| s.to_vec())
                .unwrap_or_default();
            io.write_message(&scramble).unwrap();
            io.flush().unwrap();
            p = io.read_message().unwrap();
        }
        match Reply::parse(&p) {
            Reply::Ok { .. } => Ok(Client {
                io,
                conn_id,
                caps,
                salt,
            }),
            other => Err(other),
        }
    }

    /// COM_CHANGE_USER to `user` with mysql_native_password, collation utf8mb4_general_ci,
    /// no database: the server's answer.
    #[allow(dead_code)]
    pub fn change_user(&mut self, user: &str, password: &str) -> Reply {
        let scramble = scramble_native(&self.salt, password.as_bytes())
            .map(|s| s.to_vec())
            .unwrap_or_default();
        let mut p = vec![0x11];
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        p.push(scramble.len() as u8);
        p.extend_from_slice(&scramble);
        p.push(0); // no database
        p.extend_from_slice(&45u16.to_le_bytes());
        p.extend_from_slice(b"mysql_native_password\0");
        let first = self.command(&p);
        Reply::parse(&first)
    }

    /// Sends one command (a new exchange) and returns its first reply packet.
    pub fn command(&mut self, payload: &[u8]) -> Vec<u8> {
        self.send(payload);
        self.io.read_message().unwrap()
    }

    pub fn send(&mut self, payload: &[u8]) {
        self.io.reset_seq();
        self.io.write_message(payload).unwrap();
        self.io.flush().unwrap();
    }

    pub fn ping(&mut self) -> Reply {
        Reply::parse(&self.command(&[0x0E]))
    }

    pub fn query(&mut self, sql: &str) -> Reply {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        Reply::parse(&self.command(&p))
    }

    /// Writes raw bytes to the socket (no framing).
    pub fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut s = self.io.stream().try_clone()?;
        s.write_all(bytes)
    }
}

/// A result set as read off the wire: raw column definitions and rows, and its end.
#[derive(Debug)]
pub struct ResultSet {
    pub columns: Vec<Vec<u8>>,
    pub rows: Vec<Vec<u8>>,
    pub end: Reply,
}

impl Client {
    /// The rows of a text result set whose values are all shorter than 251 bytes.
    pub fn rows(&mut self, sql: &str) -> Vec<Vec<String>> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        let first = self.command(&p);
        assert!(first[0] != 0xFF, "{sql}: {:?}", Reply::parse(&first));
        let rs = self.read_result_set(&first);
        rs.rows
            .iter()
            .map(|row| {
                let mut out = Vec::new();
                let mut i = 0;
                while i < row.len() {
                    if row[i] == 0xFB {
                        out.push("NULL".to_string());
                        i += 1;
                        continue;
                    }
                    let n = usize::from(row[i]);
                    out.push(String::from_utf8_lossy(&row[i + 1..i + 1 + n]).into_owned());
                    i += 1 + n;
                }
                out
            })
            .collect()
    }

    /// Reads the rest of a result set whose first packet (the column count) is `first`.
    /// The client asked for DEPRECATE_EOF: no EOF after the definitions, an OK 0xFE at the end.
    pub fn read_result_set(&mut self, first: &[u8]) -> ResultSet {
        let n = Reader::new(first).lenenc_int().unwrap();
        let columns = (0..n).map(|_| self.io.read_message().unwrap()).collect();
        let mut rows = Vec::new();
        loop {
            let p = self.io.read_message().unwrap();
            // A row never starts with 0xFE unless it is 16 MiB long; 0xFF is an ERR.
            if (p[0] == 0xFE && p.len() < 0xFF_FFFF) || p[0] == 0xFF {
                return ResultSet {
                    columns,
                    rows,
                    end: Reply::parse(&p),
                };
            }
            rows.push(p);
        }
    }
}
