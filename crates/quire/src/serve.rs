//! `quire serve`: open the data directory (recovery runs and logs its progress), listen,
//! serve the MySQL protocol until SIGINT or SIGTERM, then shut down cleanly: stop
//! accepting, close every session (rolling back open transactions), `Db::shutdown`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_server::{serve_on, Listeners, ServerConfig};

pub struct Options {
    pub data_dir: Option<PathBuf>,
    pub port: Option<u16>,
    pub bind: Option<String>,
    pub defaults_file: Option<PathBuf>,
    pub socket: Option<PathBuf>,
    pub settings: Vec<String>,
    pub root_password: Option<String>,
}

/// Set by the signal handler; the accept loop polls it.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);

/// Only async-signal-safe work here: an atomic store, or `_exit` on a second signal (an
/// impatient operator gets out even if shutdown hangs).
extern "C" fn on_signal(_sig: libc::c_int) {
    if SHUTDOWN.swap(true, Ordering::AcqRel) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; the handler only touches an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            // Restart interrupted reads and writes: the threads poll the flag themselves.
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Splits `--set` values between the server and the engine.
fn settings(list: &[String]) -> Result<(Config, ServerConfig), String> {
    let mut engine = Config::default();
    let mut server = ServerConfig::default();
    for s in list {
        let Some((name, value)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected name=value"));
        };
        match server.set(name, value) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => return Err(format!("--set {s}: {e}")),
        }
        engine.set(name.trim(), value.trim()).map_err(|e| {
            format!(
                "--set {s}: {e} (server settings: max_connections, max_allowed_packet, \
                 wait_timeout, connect_timeout, net_write_timeout, ssl, ssl_cert, ssl_key, \
                 ssl_ca, require_secure_transport, metrics_port, log_error)"
            )
        })?;
    }
    Ok((engine, server))
}

/// TLS as configured: `ssl=OFF` none; `ssl_cert` and `ssl_key` loaded; neither, the
/// self-signed pair in the data directory, made at the first start (docs/protocol.md, "TLS").
fn setup_tls(server: &mut ServerConfig, data_dir: &std::path::Path) -> Result<(), String> {
    if !server.ssl {
        return Ok(());
    }
    let (cert, key) = match (&server.ssl_cert, &server.ssl_key) {
        (Some(c), Some(k)) => (c.clone(), k.clone()),
        (None, None) => {
            let (c, k) = quire_server::tls::self_signed(data_dir)?;
            if server.ssl_ca.is_none() {
                server.ssl_ca = Some(data_dir.join(quire_server::tls::CA_FILE));
            }
            (c, k)
        }
        (Some(_), None) => return Err("ssl_cert is set without ssl_key".into()),
        (None, Some(_)) => return Err("ssl_key is set without ssl_cert".into()),
    };
    server.tls = Some(quire_server::tls::load(&cert, &key)?);
    server.ssl_cert = Some(cert);
    server.ssl_key = Some(key);
    Ok(())
}

/// MariaDB refuses require_secure_transport=ON with no secure transport at all.
fn check_secure_transport(server: &ServerConfig) -> Result<(), String> {
    if server.require_secure_transport && server.tls.is_none() && server.socket.is_none() {
        return Err(
            "No secure transports are configured, unable to set --require_secure_transport=ON"
                .into(),
        );
    }
    Ok(())
}

/// The option file's entries under the command line's: the file's port, bind-address,
/// socket and datadir where the command line has none; its settings before the command
/// line's `--set`s (which win, coming later). An unknown setting is a warning naming it
/// (none for `loose-`); a bad value stops the start, naming file, line and value.
fn merge_option_file(opts: &mut Options) -> Result<(), String> {
    let Some(path) = opts.defaults_file.clone() else {
        return Ok(());
    };
    let mut from_file = Vec::new();
    // The file's last word on each (later lines win), under the command line's.
    let (mut port, mut bind, mut socket, mut data_dir) = (None, None, None, None);
    for o in crate::options::read(&path)? {
        let at = &o.at;
        match o.name.as_str() {
            "port" => {
                let p = o
                    .value
                    .trim()
                    .parse::<u16>()
                    .map_err(|_| format!("{at}: port: '{}' is not a port number", o.value))?;
                port = Some(p);
            }
            "bind_address" => bind = Some(o.value.clone()),
            "socket" => socket = Some(PathBuf::from(&o.value)),
            "datadir" => data_dir = Some(PathBuf::from(&o.value)),
            // A MariaDB my.cnf's server_id, log_bin, skip_name_resolve, …: what Quire is,
            // not a setting; said and passed over, as an unknown setting is.
            name if quire_server::is_fixed_variable(name) => {
                if !o.loose {
                    eprintln!("quire serve: {at}: '{name}' is fixed in Quire (shown by @@{name}); ignored");
                }
            }
            name => {
                // Tried alone: unknown and bad values are told apart, and named.
                let item = format!("{name}={}", o.value);
                let known = match ServerConfig::default().set(name, &o.value) {
                    Ok(true) => true,
                    Ok(false) => match Config::default().set(name, &o.value) {
                        Ok(()) => true,
                        Err(quire_engine::config::ConfigError::Unknown(_)) => false,
                        Err(e) => return Err(format!("{at}: {e}")),
                    },
                    Err(e) => return Err(format!("{at}: {e}")),
                };
                if known {
                    from_file.push(item);
                } else if !o.loose {
                    eprintln!("quire serve: {at}: unknown setting '{name}' ignored");
                }
            }
        }
    }
    opts.port = opts.port.or(port);
    opts.bind = opts.bind.take().or(bind);
    opts.socket = opts.socket.take().or(socket);
    opts.data_dir = opts.data_dir.take().or(data_dir);
    from_file.append(&mut opts.settings);
    opts.settings = from_file;
    Ok(())
}

pub fn main(mut opts: Options) -> ExitCode {
    if let Err(e) = merge_option_file(&mut opts) {
        eprintln!("quire serve: {e}");
        return ExitCode::from(2);
    }
    let data_dir = opts
        .data_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("./quire-data"));
    let port = opts.port.unwrap_or(3307);
    let bind = opts.bind.clone().unwrap_or_else(|| "127.0.0.1".to_string());
    let (config, mut server) = match settings(&opts.settings) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("quire serve: {e}");
            return ExitCode::from(2);
        }
    };
    // An IPv6 address needs brackets before the port.
    server.bind = Some(if bind.contains(':') {
        format!("[{bind}]:{port}")
    } else {
        format!("{bind}:{port}")
    });
    server.socket = opts.socket;
    server.root_password = opts.root_password;
    if let Some(path) = &server.log_error {
        // As MariaDB: a relative name is in the data directory.
        let path = data_dir.join(path);
        if let Err(e) = crate::errlog::open(&path) {
            eprintln!("quire serve: log_error: {}: {e}", path.display());
            return ExitCode::from(1);
        }
        server.log_error = Some(path);
    }
    install_signal_handlers();

    let db = match Db::open(&data_dir, config) {
        Ok(db) => db,
        Err(e) => {
            crate::errlog::say(&format!("quire serve: {}: {e}", data_dir.display()));
            return ExitCode::from(1);
        }
    };
    if let Err(e) = setup_tls(&mut server, &data_dir).and_then(|()| check_secure_transport(&server))
    {
        crate::errlog::say(&format!("quire serve: {e}"));
        let _ = db.shutdown();
        return ExitCode::from(1);
    }
    let listeners = match Listeners::bind(&server) {
        Ok(l) => l,
        Err(e) => {
            crate::errlog::say(&format!("quire serve: cannot listen: {e}"));
            let _ = db.shutdown();
            return ExitCode::from(1);
        }
    };
    if let Some(addr) = listeners.tcp_addr() {
        crate::errlog::say(&format!("quire: ready for connections on {addr}"));
    }
    if let Some(path) = &server.socket {
        crate::errlog::say(&format!(
            "quire: ready for connections on {}",
            path.display()
        ));
    }
    if let Some(addr) = listeners.metrics_addr() {
        crate::errlog::say(&format!("quire: metrics on http://{addr}/metrics"));
    }
    let served = serve_on(&db, listeners, &server, &SHUTDOWN);
    crate::errlog::say("quire: shutting down");
    let mut code = ExitCode::SUCCESS;
    if let Err(e) = served {
        crate::errlog::say(&format!("quire serve: {e}"));
        code = ExitCode::from(1);
    }
    if let Err(e) = db.shutdown() {
        crate::errlog::say(&format!("quire serve: shutdown: {e}"));
        code = ExitCode::from(1);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_splits_server_and_engine_settings() {
        let (engine, server) = settings(&[
            "max_connections=17".into(),
            "innodb_buffer_pool_size=16M".into(),
        ])
        .expect("valid settings");
        assert_eq!(server.max_connections, Some(17));
        assert_eq!(engine.buffer_pool_size, 16 << 20);
        let err = settings(&["no_such_thing=1".into()]).expect_err("unknown");
        assert!(err.contains("no_such_thing"), "{err}");
        assert!(settings(&["max_connections=zero".into()]).is_err());
    }
}
