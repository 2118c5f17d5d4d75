//! Listeners and connection threads.
//!
//! One thread per connection, inside `std::thread::scope`: a session borrows the `Db` (its
//! engine transactions do), and the scope proves every session ends before the `Db` can.
//!
//! Shutdown: the accept loop waits in `poll(2)` for a client, waking at least every
//! `ACCEPT_POLL` to look at `shutdown` (a client that connects is accepted at once, not at
//! the next tick: 10,000 connections in a row must not each wait a tick); when it is set,
//! the loop stops accepting, marks every session killed, shuts down every socket (which
//! wakes a thread blocked in a read), and the scope's end waits for the threads. Each
//! session drops on its thread, rolling back an open transaction.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use quire_engine::table::Db;
use quire_sql::{kill, Instance};

use crate::conn::run_connection;
use crate::errors::proto;
use crate::handshake::RsaKeys;
use crate::packet::PacketIo;
use crate::reply::err_packet;

/// The stack of a connection thread (see where it is spawned).
pub const CONNECTION_STACK_BYTES: usize = 64 << 20;
/// How often the accept loop looks at the shutdown flag when no client is connecting.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// What the server is told at start. `None` settings follow the SQL layer's globals
/// (`Instance::global_u64`), so `SET GLOBAL` reaches them.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// TCP address, `None` for no TCP listener.
    pub bind: Option<String>,
    /// Unix socket path.
    pub socket: Option<PathBuf>,
    /// root's password; `None` or empty: no password.
    pub root_password: Option<String>,
    pub max_connections: Option<u64>,
    pub max_allowed_packet: Option<u64>,
    /// Idle time after which a connection is closed (else the session's `wait_timeout`).
    pub wait_timeout: Option<Duration>,
    /// The whole handshake must arrive within this.
    pub connect_timeout: Duration,
    /// A client that does not read its results for this long is dropped.
    pub net_write_timeout: Duration,
    /// `ssl=OFF` turns TLS off; on, the binary fills `tls` (tls.rs).
    pub ssl: bool,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    /// Shown in `@@ssl_ca`; client certificates are not asked for.
    pub ssl_ca: Option<PathBuf>,
    /// The TLS configuration connections upgrade with; `None`: SSL is not offered.
    pub tls: Option<std::sync::Arc<rustls::ServerConfig>>,
    /// The start-up value of `require_secure_transport` (then `SET GLOBAL`).
    pub require_secure_transport: bool,
    /// `/metrics` (Prometheus) on this port, on the TCP listener's address (metrics.rs).
    pub metrics_port: Option<u16>,
    /// The error log: the server's messages go to this file (the binary opens it; a
    /// relative name is in the data directory), else to standard error.
    pub log_error: Option<PathBuf>,
    /// connection_control: consecutive failed logins from one host after which its logins
    /// are answered late (0: never), and the delay's bounds.
    pub login_delay_threshold: u32,
    pub login_delay_min: Duration,
    pub login_delay_max: Duration,
    /// Start-up values of the SQL layer's variables (`--set sql_mode=…`, an option file's
    /// `collation_server`): applied with `Instance::set_global`; a bad one stops the start.
    pub globals: Vec<(String, String)>,
}

impl ServerConfig {
    /// The server variables this configuration sets, as (name, value): SHOW VARIABLES and
    /// `@@global.x` show what the server runs with.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            (
                "connect_timeout",
                self.connect_timeout.as_secs().to_string(),
            ),
            (
                "net_write_timeout",
                self.net_write_timeout.as_secs().to_string(),
            ),
        ];
        if let Some(n) = self.max_connections {
            v.push(("max_connections", n.to_string()));
        }
        if let Some(n) = self.max_allowed_packet {
            v.push(("max_allowed_packet", n.to_string()));
        }
        if let Some(d) = self.wait_timeout {
            v.push(("wait_timeout", d.as_secs().to_string()));
        }
        if let Some((host, port)) = self.bind.as_deref().and_then(|b| b.rsplit_once(':')) {
            v.push(("port", port.to_string()));
            v.push(("bind_address", host.trim_matches(['[', ']']).to_string()));
        }
        if let Some(path) = &self.socket {
            v.push(("socket", path.display().to_string()));
        }
        if let Some(path) = &self.log_error {
            v.push(("log_error", path.display().to_string()));
        }
        let on = self.tls.is_some();
        let have = if on { "YES" } else { "DISABLED" };
        v.push(("have_ssl", have.into()));
        v.push(("have_openssl", have.into()));
        let path = |p: &Option<PathBuf>| {
            p.as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        };
        if on {
            v.push(("ssl_cert", path(&self.ssl_cert)));
            v.push(("ssl_key", path(&self.ssl_key)));
            v.push(("ssl_ca", path(&self.ssl_ca)));
        }
        v.push((
            "require_secure_transport",
            if self.require_secure_transport {
                "ON"
            } else {
                "OFF"
            }
            .into(),
        ));
        v
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: Some("127.0.0.1:3307".into()),
            socket: None,
            root_password: None,
            max_connections: None,
            max_allowed_packet: None,
            wait_timeout: None,
            connect_timeout: Duration::from_secs(10),
            net_write_timeout: Duration::from_secs(60),
            ssl: true,
            ssl_cert: None,
            ssl_key: None,
            ssl_ca: None,
            tls: None,
            require_secure_transport: false,
            globals: Vec::new(),
            metrics_port: None,
            log_error: None,
            login_delay_threshold: 3,
            login_delay_min: Duration::from_secs(1),
            login_delay_max: Duration::from_secs(30),
        }
    }
}

impl ServerConfig {
    /// The settings the server owns (as `--set name=value`): `Ok(false)` when `name` is not
    /// one of them (the engine's, then).
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let n = name.trim().to_ascii_lowercase();
        let num = || {
            quire_engine::config::parse_size(value.trim())
                .ok_or_else(|| format!("{n}: '{value}' is not a number"))
        };
        let on_off = || match value.trim().to_ascii_uppercase().as_str() {
            "ON" | "1" | "TRUE" | "YES" => Ok(true),
            "OFF" | "0" | "FALSE" | "NO" => Ok(false),
            other => Err(format!("{n}: '{other}' is not ON or OFF")),
        };
        match n.as_str() {
            "max_connections" => {
                let v = num()?;
                // MariaDB's range: the variable could not show a smaller value.
                if !(10..=100_000).contains(&v) {
                    return Err(format!("{n}: {v} is not in 10..=100000"));
                }
                self.max_connections = Some(v);
            }
            "max_allowed_packet" => {
                let v = num()?;
                if !(1024..=1 << 30).contains(&v) {
                    return Err(format!("{n}: {v} is not in 1K..=1G"));
                }
                self.max_allowed_packet = Some(v);
            }
            "wait_timeout" => self.wait_timeout = Some(Duration::from_secs(num()?.max(1))),
            "connect_timeout" => self.connect_timeout = Duration::from_secs(num()?.max(1)),
            "net_write_timeout" => self.net_write_timeout = Duration::from_secs(num()?.max(1)),
            "ssl" => self.ssl = on_off()?,
            "connection_control_failed_connections_threshold" => {
                self.login_delay_threshold = u32::try_from(num()?).unwrap_or(u32::MAX)
            }
            "connection_control_min_connection_delay" => {
                self.login_delay_min = Duration::from_millis(num()?)
            }
            "connection_control_max_connection_delay" => {
                self.login_delay_max = Duration::from_millis(num()?)
            }
            "metrics_port" => {
                let v = num()?;
                self.metrics_port =
                    Some(u16::try_from(v).map_err(|_| format!("{n}: {v} is not a port"))?);
            }
            "require_secure_transport" => self.require_secure_transport = on_off()?,
            "ssl_cert" => self.ssl_cert = Some(PathBuf::from(value.trim())),
            "ssl_key" => self.ssl_key = Some(PathBuf::from(value.trim())),
            "ssl_ca" => self.ssl_ca = Some(PathBuf::from(value.trim())),
            "log_error" => self.log_error = Some(PathBuf::from(value.trim())),
            // What Quire is (`@@read_only`, `@@server_id`, …): not a setting. Asked for on
            // the command line, the start stops saying so (an option file's is a warning:
            // `quire serve`).
            _ if quire_sql::is_fixed_variable(&n) => {
                return Err(format!(
                    "{n} shows what Quire is and cannot be set (docs/sql.md, \"System variables\")"
                ))
            }
            // The engine's settings are the engine's (the caller's next stop).
            _ if quire_sql::is_server_variable(&n)
                && !quire_engine::config::Config::NAMES.contains(&n.as_str()) =>
            {
                // Checked now, so a bad value stops the start before it listens.
                quire_sql::startup_value(&n, value.trim()).map_err(|e| format!("{n}: {e}"))?;
                self.globals.push((n, value.trim().to_string()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A client socket, TCP or Unix, and once upgraded (tls.rs), TLS over one of them.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, Stream>>),
}

impl Stream {
    pub fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(s) => s.sock.set_read_timeout(d),
        }
    }
    pub fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
            Stream::Tls(s) => s.sock.set_write_timeout(d),
        }
    }
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tls(s) => {
                s.sock.shutdown();
                Ok(())
            }
        };
    }
    /// A second handle on the same socket (the registry's, to shut it down; the TLS
    /// upgrade's, to wrap). A TLS stream has no second handle: its state is one.
    fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tls(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "a TLS stream is not cloned",
                ))
            }
        })
    }
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(s) => s.sock.set_nonblocking(on),
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Whether the transport is secure for `require_secure_transport`: TLS, or the Unix
    /// socket (as MariaDB counts it).
    pub fn is_secure(&self) -> bool {
        !matches!(self, Stream::Tcp(_))
    }

    /// Replaces this plain socket with TLS over it (the SslRequest was read). The TLS
    /// handshake itself runs on the next read, within the socket's timeouts.
    pub fn start_tls(&mut self, cfg: &std::sync::Arc<rustls::ServerConfig>) -> io::Result<()> {
        let conn = rustls::ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
        // The old handle closes when replaced; the socket lives on in the clone.
        let inner = self.try_clone()?;
        *self = Stream::Tls(Box::new(rustls::StreamOwned::new(conn, inner)));
        Ok(())
    }

    /// The TLS version and cipher suite, MariaDB's way (`TLSv1.3`, `TLS_AES_256_GCM_SHA384`),
    /// once the handshake is done; `None` on a plain connection.
    pub fn tls_info(&self) -> Option<(String, String)> {
        let Stream::Tls(s) = self else { return None };
        let version = match s.conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            other => format!("{other:?}"),
        };
        let suite = s.conn.negotiated_cipher_suite()?;
        let name = openssl_name(suite.suite().as_str().unwrap_or("unknown"));
        Some((version, name))
    }
}

/// A cipher suite under the name OpenSSL gives it, as MariaDB's Ssl_cipher shows it (rustls
/// names them as the IANA registry does, with TLS 1.3's prefixed `TLS13_`).
fn openssl_name(iana: &str) -> String {
    if let Some(rest) = iana.strip_prefix("TLS13_") {
        return format!("TLS_{rest}");
    }
    let Some(rest) = iana.strip_prefix("TLS_ECDHE_") else {
        return iana.to_string();
    };
    let Some((auth, cipher)) = rest.split_once("_WITH_") else {
        return iana.to_string();
    };
    let cipher = match cipher {
        "AES_256_GCM_SHA384" => "AES256-GCM-SHA384",
        "AES_128_GCM_SHA256" => "AES128-GCM-SHA256",
        "CHACHA20_POLY1305_SHA256" => "CHACHA20-POLY1305",
        _ => return iana.to_string(),
    };
    format!("ECDHE-{auth}-{cipher}")
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Bound listening sockets. Binding before serving lets the caller learn the port (tests
/// bind port 0) and say "ready" only once clients can connect.
#[derive(Debug)]
pub struct Listeners {
    tcp: Option<TcpListener>,
    unix: Option<(UnixListener, PathBuf)>,
    metrics: Option<TcpListener>,
}

impl Listeners {
    /// Binds what `cfg` asks for. A stale Unix socket file (a previous server that did not
    /// remove it) is replaced.
    pub fn bind(cfg: &ServerConfig) -> io::Result<Listeners> {
        let tcp = match &cfg.bind {
            Some(addr) => Some(TcpListener::bind(addr.as_str())?),
            None => None,
        };
        let unix = match &cfg.socket {
            Some(path) => {
                if path.exists() && UnixStream::connect(path).is_err() {
                    std::fs::remove_file(path)?;
                }
                Some((UnixListener::bind(path)?, path.clone()))
            }
            None => None,
        };
        if tcp.is_none() && unix.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "neither a TCP address nor a socket path to listen on",
            ));
        }
        let metrics =
            match cfg.metrics_port {
                Some(port) => {
                    // The SQL listener's host (brackets kept for IPv6), else loopback.
                    let host = cfg
                        .bind
                        .as_deref()
                        .and_then(|b| b.rsplit_once(':'))
                        .map_or("127.0.0.1", |(h, _)| h);
                    Some(TcpListener::bind(format!("{host}:{port}")).map_err(|e| {
                        io::Error::new(e.kind(), format!("metrics_port {port}: {e}"))
                    })?)
                }
                None => None,
            };
        Ok(Listeners { tcp, unix, metrics })
    }

    /// A listener the caller bound.
    pub fn from_tcp(listener: TcpListener) -> Listeners {
        Listeners {
            tcp: Some(listener),
            unix: None,
            metrics: None,
        }
    }

    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp.as_ref().and_then(|l| l.local_addr().ok())
    }

    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// One pending connection, if any (non-blocking).
    fn accept(&self) -> io::Result<Option<(Stream, String)>> {
        if let Some(l) = &self.tcp {
            match l.accept() {
                Ok((s, peer)) => {
                    // As MariaDB: a reply's packets go out at once. With Nagle's algorithm a
                    // result set written in several pieces waited for the client's delayed
                    // ACK (one client at a time fell to a few hundred queries a second).
                    if let Err(e) = s.set_nodelay(true) {
                        tracing::warn!("TCP_NODELAY on a client socket: {e}");
                    }
                    return Ok(Some((Stream::Tcp(s), peer.ip().to_string())));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        if let Some((l, _)) = &self.unix {
            match l.accept() {
                Ok((s, _)) => return Ok(Some((Stream::Unix(s), "localhost".into()))),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Waits until a client is connecting on one of the listeners, or `timeout` passed.
    fn wait(&self, timeout: Duration) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let mut fds = Vec::with_capacity(2);
        if let Some(l) = &self.tcp {
            fds.push(l.as_raw_fd());
        }
        if let Some((l, _)) = &self.unix {
            fds.push(l.as_raw_fd());
        }
        wait_readable(&fds, timeout)
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        if let Some(l) = &self.tcp {
            l.set_nonblocking(true)?;
        }
        if let Some((l, _)) = &self.unix {
            l.set_nonblocking(true)?;
        }
        Ok(())
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        if let Some((_, path)) = &self.unix {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What every connection thread shares.
pub struct Shared<'d> {
    pub instance: Instance<'d>,
    pub cfg: ServerConfig,
    /// caching_sha2_password's RSA key pair (made at the first request for it).
    pub rsa_keys: RsaKeys,
    /// Live connections by id (a clone of each socket, to shut it down).
    conns: Mutex<HashMap<u64, Stream>>,
    /// When each connection still in its handshake must have finished it (`connect_timeout`
    /// for the whole handshake, not per read: a client dribbling a byte now and then must
    /// not hold a thread). The accept loop shuts the socket of one past its deadline.
    handshakes: Mutex<HashMap<u64, std::time::Instant>>,
    /// Consecutive failed logins per client host (connection_control, below).
    failed_logins: Mutex<HashMap<String, u32>>,
    /// The slow query log (`slow_query_log`, `long_query_time`).
    pub slow_log: crate::slowlog::SlowLog,
}

impl Shared<'_> {
    /// The connection's handshake is over (logged in or refused): no deadline any more.
    pub fn handshake_done(&self, conn_id: u64) {
        self.handshakes.lock().remove(&conn_id);
    }

    /// How long to hold the answer to a login from `host`: nothing until its consecutive
    /// failures reach `connection_control_failed_connections_threshold`, then the minimum
    /// delay, one second more per further failure, up to the maximum (MySQL's
    /// connection_control). It slows password guessing without locking the owner out.
    pub fn login_delay(&self, host: &str) -> Duration {
        let failures = self.failed_logins.lock().get(host).copied().unwrap_or(0);
        let c = &self.cfg;
        if c.login_delay_threshold == 0 || failures < c.login_delay_threshold {
            return Duration::ZERO;
        }
        let extra = Duration::from_secs(u64::from(failures - c.login_delay_threshold));
        (c.login_delay_min + extra).min(c.login_delay_max)
    }

    /// Records the outcome of a login from `host`: a success clears its failures.
    pub fn login_result(&self, host: &str, ok: bool) {
        let mut m = self.failed_logins.lock();
        if ok {
            m.remove(host);
        } else {
            // Bounded: a flood of hosts cannot grow the map without limit.
            if m.len() >= 100_000 && !m.contains_key(host) {
                m.clear();
            }
            *m.entry(host.to_string()).or_insert(0) += 1;
        }
    }

    pub fn max_allowed_packet(&self) -> usize {
        let v = self
            .cfg
            .max_allowed_packet
            .or_else(|| self.instance.global_u64("max_allowed_packet"))
            .unwrap_or(16 << 20);
        usize::try_from(v).unwrap_or(usize::MAX)
    }

    /// `require_secure_transport` as it is now (SET GLOBAL changes it for new connections).
    pub fn require_secure_transport(&self) -> bool {
        self.instance.global_u64("require_secure_transport") == Some(1)
    }

    pub fn max_connections(&self) -> usize {
        let v = self
            .cfg
            .max_connections
            .or_else(|| self.instance.global_u64("max_connections"))
            .unwrap_or(151);
        usize::try_from(v).unwrap_or(usize::MAX)
    }
}

impl<'d> Shared<'d> {
    /// What the connections of a server on `db` share: the SQL instance with `cfg`'s
    /// variables and the accounts loaded (the mysql system tables made if missing), and the
    /// slow log. `serve_on` makes one; so does the packet fuzz target (fuzz/), which runs
    /// connections over in-memory sockets without a listener.
    pub fn new(db: &'d Db, cfg: &ServerConfig) -> io::Result<Shared<'d>> {
        let instance = Instance::new(db);
        instance.set_error_codes(|e| crate::errors::code_of(e).map(|(code, _)| code));
        let mut shown = cfg.variables();
        // Paths as MariaDB shows them: the data directory absolute and with its slash, the
        // base directory the one the binary is in.
        let dir = db.engine().dir();
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        shown.push(("datadir", format!("{}/", dir.display())));
        if let Some(base) = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.display().to_string()))
        {
            shown.push(("basedir", format!("{base}/")));
        }
        shown.push(("tmpdir", std::env::temp_dir().display().to_string()));
        for (name, value) in shown {
            if let Err(e) = instance.set_global(name, &value) {
                tracing::warn!("{name}={value} is not shown in SHOW VARIABLES: {e}");
            }
        }
        for (name, value) in &cfg.globals {
            instance.set_global(name, value).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("{name}={value}: {e}"))
            })?;
        }
        // The mysql system tables (made if missing) and the accounts in them (docs/security.md).
        quire_sql::bootstrap_accounts(&instance, cfg.root_password.as_deref()).map_err(|e| {
            io::Error::other(format!(
                "cannot load the accounts (mysql system tables): {e}"
            ))
        })?;
        let port = cfg
            .bind
            .as_deref()
            .and_then(|b| b.rsplit_once(':'))
            .map(|p| p.1);
        let slow_log = crate::slowlog::SlowLog::new(db.engine().dir(), port, cfg.socket.as_deref());
        Ok(Shared {
            instance,
            cfg: cfg.clone(),
            rsa_keys: RsaKeys::default(),
            conns: Mutex::new(HashMap::new()),
            handshakes: Mutex::new(HashMap::new()),
            failed_logins: Mutex::new(HashMap::new()),
            slow_log,
        })
    }
}

/// Binds what `cfg` asks for and serves until `shutdown` is set.
pub fn serve(db: &Db, cfg: &ServerConfig, shutdown: &AtomicBool) -> io::Result<()> {
    let listeners = Listeners::bind(cfg)?;
    serve_on(db, listeners, cfg, shutdown)
}

/// Serves on bound listeners until `shutdown` is set; returns once every connection has
/// ended.
pub fn serve_on(
    db: &Db,
    listeners: Listeners,
    cfg: &ServerConfig,
    shutdown: &AtomicBool,
) -> io::Result<()> {
    listeners.set_nonblocking()?;
    let shared = Shared::new(db, cfg)?;
    let shared = &shared;
    let result = std::thread::scope(|scope| -> io::Result<()> {
        if let Some(m) = &listeners.metrics {
            let instance = &shared.instance;
            let spawned = std::thread::Builder::new()
                .name("quire-metrics".into())
                .spawn_scoped(scope, move || {
                    crate::metrics::serve(
                        m,
                        instance,
                        &crate::metrics::stop_when(shutdown, instance),
                    )
                });
            if let Err(e) = spawned {
                tracing::error!("cannot start the metrics thread: {e}");
            }
        }
        let r = accept_loop(&listeners, shared, shutdown, |stream, conn_id, host| {
            let spawned = std::thread::Builder::new()
                .name(format!("quire-conn-{conn_id}"))
                // Binding, planning and evaluating an expression recurse on its depth:
                // `1+1+…+1` with thousands of terms is legal SQL (an ORM's long OR list
                // too). The stack is virtual memory, touched only as deep as a statement
                // goes; `parse::MAX_EXPRESSION_DEPTH` refuses what would not fit.
                .stack_size(CONNECTION_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    connection_thread(stream, shared, conn_id, host)
                });
            if let Err(e) = spawned {
                tracing::error!("cannot start a connection thread: {e}");
                if let Some(s) = shared.conns.lock().remove(&conn_id) {
                    s.shutdown();
                }
            }
        });
        close_all(shared);
        r
    });
    drop(listeners);
    result
}

/// Accepts until shutdown; `spawn` starts a registered connection.
fn accept_loop(
    listeners: &Listeners,
    shared: &Shared<'_>,
    shutdown: &AtomicBool,
    mut spawn: impl FnMut(Stream, u64, String),
) -> io::Result<()> {
    while !shutdown.load(Ordering::Acquire) && !shared.instance.shutdown_requested() {
        let (stream, host) = match listeners.accept() {
            Ok(Some(c)) => c,
            Ok(None) => {
                close_killed(shared);
                if let Err(e) = listeners.wait(ACCEPT_POLL) {
                    tracing::warn!("poll on the listeners: {e}");
                    std::thread::sleep(ACCEPT_POLL);
                }
                continue;
            }
            Err(e) => {
                // EMFILE and friends: keep serving the connections there are.
                tracing::warn!("accept: {e}");
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        quire_sql::status::ServerCounters::add(&shared.instance.counters().connections, 1);
        // Accepted sockets must block: reads wait (with timeouts), they do not spin.
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        if shared.conns.lock().len() >= shared.max_connections() {
            refuse_connection(stream);
            continue;
        }
        let conn_id = shared.instance.next_connection_id();
        // Registered here, before the thread runs, so a shutdown after this point sees it.
        match stream.try_clone() {
            Ok(clone) => {
                shared.conns.lock().insert(conn_id, clone);
                let deadline = std::time::Instant::now() + shared.cfg.connect_timeout;
                shared.handshakes.lock().insert(conn_id, deadline);
            }
            Err(e) => {
                tracing::warn!("cannot register a connection: {e}");
                continue;
            }
        }
        spawn(stream, conn_id, host);
    }
    Ok(())
}

/// Waits until one of `fds` is readable (a listener: a client is connecting), or `timeout`
/// passed. An interrupted wait is a timeout: the caller looks again either way.
pub(crate) fn wait_readable(fds: &[std::os::fd::RawFd], timeout: Duration) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `polls` is a live, exclusively borrowed array of `polls.len()` pollfd structs,
    // which is all poll(2) reads and writes; the descriptors belong to listeners the caller
    // holds open for the duration of the call.
    let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Over max_connections: ERR 1040 in place of the greeting. Sent without SQLSTATE: the
/// client has not said yet that it speaks the 4.1 protocol.
fn refuse_connection(stream: Stream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut io = PacketIo::new(stream, 1024);
    let _ = io.write_message(&err_packet(&proto::too_many_connections(), false));
    let _ = io.flush();
}

fn connection_thread(stream: Stream, shared: &Shared<'_>, conn_id: u64, host: String) {
    // A bug in one connection must not take the server down: the panic ends this
    // connection only (its session drops, rolling back).
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_connection(stream, shared, conn_id, host)
    }));
    if r.is_err() {
        tracing::error!(conn_id, "connection thread panicked; connection closed");
    }
    shared.handshake_done(conn_id);
    if let Some(s) = shared.conns.lock().remove(&conn_id) {
        s.shutdown();
    }
}

/// `KILL CONNECTION` of a session that sits idle in a read: its thread would only notice
/// at its next command, so its socket is shut down here (the read ends, the thread closes).
///
/// Also a connection whose handshake is past `connect_timeout`: its thread sits in a read
/// that the client keeps alive a byte at a time, or in a TLS handshake that stalls.
pub(crate) fn close_killed(shared: &Shared<'_>) {
    shared.instance.expire_statements();
    for info in shared.instance.sessions() {
        if info.kill_requested() == kill::CONNECTION {
            if let Some(s) = shared.conns.lock().get(&info.id) {
                s.shutdown();
            }
        }
    }
    let now = std::time::Instant::now();
    let overdue: Vec<u64> = {
        let mut h = shared.handshakes.lock();
        let ids: Vec<u64> = h
            .iter()
            .filter(|(_, d)| **d <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            h.remove(id);
        }
        ids
    };
    for id in overdue {
        tracing::debug!(
            conn_id = id,
            "handshake not finished within connect_timeout"
        );
        if let Some(s) = shared.conns.lock().get(&id) {
            s.shutdown();
        }
    }
}

/// Shutdown: every session is told to stop and every socket is shut, so each thread
/// leaves its read (or its next write) and ends.
fn close_all(shared: &Shared<'_>) {
    for info in shared.instance.sessions() {
        // With the interrupt flag: a session waiting for a row or metadata lock stops now,
        // not at its lock_wait_timeout.
        info.kill(kill::CONNECTION);
    }
    for s in shared.conns.lock().values() {
        s.shutdown();
    }
}
