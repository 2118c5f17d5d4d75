//! # quire-server: the MySQL wire protocol over quire-sql sessions
//!
//! The protocol is kept apart from the SQL: this crate frames packets, runs the handshake,
//! decodes commands and encodes results; a [`quire_sql::Session`] per connection does the
//! SQL. The layout follows the connection's life (see docs/protocol.md):
//!
//! | module          | what                                                           |
//! |-----------------|----------------------------------------------------------------|
//! | `packet`        | framing: length + sequence id, 16 MiB splits, max_allowed_packet |
//! | `reply`         | OK / ERR / EOF, length-encoded fields, the bounds-checked reader |
//! | `handshake`     | greeting, HandshakeResponse41, mysql_native_password, AuthSwitch |
//! | `charset`       | latin1 clients: text in and results out converted at the wire   |
//! | `conn`          | the connection state machine and the command dispatch           |
//! | `stmt`          | COM_STMT_* (prepare, execute, long data, close, reset, fetch)   |
//! | `stmt_params`   | COM_STMT_EXECUTE's parameter decoding                           |
//! | `resultset`     | column definitions, text and binary rows, the streaming RowSink |
//! | `errors`        | the one table from `SqlError` to MySQL code + SQLSTATE          |
//! | `listener`      | TCP / Unix listeners, thread per connection, limits, shutdown   |
//! | `metrics`       | `/metrics` for Prometheus on `metrics_port`                      |
//! | `slowlog`       | the slow query log, in MariaDB's file format                    |
//! | `tls`           | the TLS configuration: ssl_cert / ssl_key, or self-signed       |

// Library code never unwraps (a bad client must not panic the server); unit tests may.
#![deny(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod charset;
pub mod conn;
pub mod errors;
pub mod handshake;
pub mod listener;
pub mod metrics;
pub mod packet;
pub mod reply;
pub mod resultset;
pub mod slowlog;
pub mod stmt;
pub mod stmt_params;
pub mod tls;

pub use handshake::SERVER_VERSION;
pub use listener::{serve, serve_on, Listeners, ServerConfig};
/// Whether a variable shows what Quire is (`@@read_only`, `@@server_id`, …) and takes no
/// start-up value: `quire serve` passes over an option file's with a warning.
pub use quire_sql::is_fixed_variable;
