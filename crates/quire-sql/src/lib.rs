//! # quire-sql: SQL on the Quire engine
//!
//! Synchronous, with no networking: the server (`quire-server`) owns sockets and packets and
//! calls a [`Session`] per connection. A statement goes through four stages, one folder each:
//!
//! ```text
//!   text ──parse──▶ sqlparser AST (or a small dispatch for what sqlparser rejects)
//!        ──bind───▶ names resolved against the catalog, expressions typed (bind/from.rs:
//!                   FROM's joins and the scope of their concatenated row)
//!        ──plan───▶ access path chosen (primary/secondary point or range, covering, order);
//!                   for a join, plan/join.rs: join order, access per table, conditions
//!        ──exec───▶ engine calls; rows stream into a RowSink, never materialized whole
//!                   (exec/join.rs: nested loops, hash and block nested-loop joins)
//! ```
//!
//! Errors are typed ([`SqlError`]); the server maps them to MySQL codes in one place.

pub mod acl;
mod alter;
pub mod bind;
mod check;
mod control;
mod ddl;
pub mod diag;
pub mod dispatch;
mod do_stmt;
pub mod error;
pub mod exec;
pub mod expr;
mod fk;
pub mod func;
pub mod infoschema;
mod load;
mod lock_tables;
mod mdl;
pub mod meta;
mod objects;
mod on_update;
pub mod param_types;
pub mod parse;
pub mod plan;
mod prepare;
mod replication;
mod run;
pub mod session;
mod shape;
pub mod status;
pub mod stmt;
pub mod subquery;
mod temp;
pub mod types;
pub mod tz;
mod upsert;
mod user_locks;
mod user_vars;
mod users;
mod vars;
pub mod view;
pub mod window;

pub use error::SqlError;
pub use meta::{charset, flags, CollectSink, ColumnMeta, FieldType, RowSink, SinkError};
pub use quire_engine::row::Value;
pub use session::{
    kill, startup_value, Instance, Outcome, PreparedInfo, Session, SessionInfo, SlowLogSettings,
};
pub use users::bootstrap as bootstrap_accounts;

/// Whether `name` is one of the SQL layer's server variables (SHOW VARIABLES, `SET GLOBAL`):
/// the server passes these from its configuration to [`Instance::set_global`].
pub fn is_server_variable(name: &str) -> bool {
    vars::find(&name.to_ascii_lowercase()).is_some()
}

/// Whether `name` is one of the variables that show what Quire is (`@@datadir`,
/// `@@read_only`, …) and take no start-up value (`vars::INFORMATIONAL`).
pub fn is_fixed_variable(name: &str) -> bool {
    vars::is_fixed(name)
}
