//! Running planned statements in the session's transaction.
//!
//! Transaction rules (MySQL's):
//! - autocommit=1 and no BEGIN: each statement is its own transaction; a SELECT without a
//!   locking clause takes only a snapshot (no transaction id: InnoDB's read-only path).
//! - BEGIN / START TRANSACTION, or autocommit=0: statements join one transaction until
//!   COMMIT or ROLLBACK.
//! - A failed statement is undone whole (a statement savepoint) and the transaction goes
//!   on; a deadlock rolls back the whole transaction.

use quire_engine::trx::Isolation;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use quire_engine::catalog::TableDef;
use quire_engine::row::{DateTime, Value};
use quire_engine::table::{DbError, ReadLock, RowHandle, Table, Transaction};

use crate::bind::Conn;
use crate::diag::{Level, SqlMode};
use crate::dispatch::LockWait;
use crate::error::{Result, SqlError};
use crate::exec::{self, Txn};
use crate::expr::{Env, Expr, Row, SessionFn};
use crate::meta::RowSink;
use crate::session::{Instance, Outcome, SessVars, Session};
use crate::stmt::{InsertSource, Planned};
use crate::types;

/// A SELECT's tables, opened: one without an allocation (the single-table path), or a
/// join's.
enum Opened<'d> {
    None,
    One(Table<'d>),
    Many(Vec<Table<'d>>),
}

impl<'d> Opened<'d> {
    fn as_slice(&self) -> &[Table<'d>] {
        match self {
            Opened::None => &[],
            Opened::One(t) => std::slice::from_ref(t),
            Opened::Many(v) => v,
        }
    }
}

/// SHOW PROCESSLIST's State while a statement waits for a metadata lock (MariaDB's text).
pub(crate) const MDL_WAIT_STATE: &str = "Waiting for table metadata lock";

/// What expressions read while a statement runs.
pub(crate) struct ExecEnv<'a> {
    pub params: &'a [Value],
    pub sv: &'a SessVars,
    pub inst: &'a Instance<'a>,
    pub in_trx: bool,
    /// Strict mode in an INSERT or UPDATE without IGNORE: a Warning is the statement's
    /// error (MariaDB's abort_on_warning).
    pub abort_on_warning: bool,
    /// The statement's start, microseconds since the epoch: NOW(), CURDATE(),
    /// UNIX_TIMESTAMP() and `@@timestamp` all read it, so they agree within a statement.
    pub start_us: i64,
    /// `@@time_zone` at the statement's start, read once (`tz.rs`).
    pub zone: crate::tz::Zone,
    /// Runs and caches the statement's subqueries (`subquery.rs`).
    pub subq: crate::subquery::SubRunner<'a>,
}

impl<'a> ExecEnv<'a> {
    pub fn new(
        params: &'a [Value],
        sv: &'a SessVars,
        inst: &'a Instance<'a>,
        in_trx: bool,
        abort_on_warning: bool,
    ) -> ExecEnv<'a> {
        crate::func::math::new_statement();
        ExecEnv {
            params,
            sv,
            inst,
            in_trx,
            abort_on_warning,
            start_us: fixed_timestamp_us(sv).unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros() as i64)
            }),
            zone: crate::tz::Zone::of_session(sv, inst),
            subq: crate::subquery::SubRunner::new(inst.db, Some(&inst.subquery_runs)),
        }
    }

    /// The statement's start as a DATETIME in the session's zone (whole seconds, as NOW()
    /// gives it).
    fn now(&self) -> DateTime {
        let utc = crate::func::datetime::from_unix_us(self.start_us);
        crate::func::datetime::truncate_fsp(self.zone.from_utc(utc), 0)
    }
}

/// The session's clock as `SET timestamp = n` fixed it, in microseconds; `None` when it
/// follows the real time (never set, or set to 0 / DEFAULT).
fn fixed_timestamp_us(sv: &SessVars) -> Option<i64> {
    let secs = match sv.vars.get("timestamp")? {
        Value::Str(t) => t.parse::<f64>().ok()?,
        Value::Double(d) => *d,
        _ => return None,
    };
    (secs > 0.0).then(|| (secs * 1e6).round() as i64)
}

impl ExecEnv<'_> {
    /// One atomic load: checked per row.
    fn killed(&self) -> bool {
        self.sv.info.kill_requested() != crate::session::kill::NONE
    }
}

impl Env for ExecEnv<'_> {
    fn time_zone(&self) -> crate::tz::Zone {
        self.zone
    }

    fn interrupted(&self) -> bool {
        self.killed()
    }

    /// MariaDB's answers: GET_LOCK 1 (taken), 0 (timed out) or NULL (a NULL or empty name,
    /// a NULL or negative timeout); RELEASE_LOCK 1, 0 (another session's) or NULL (nobody's);
    /// IS_FREE_LOCK 1 or 0; IS_USED_LOCK the holder's connection id or NULL;
    /// RELEASE_ALL_LOCKS the holds given back. A KILL while waiting is 1317.
    fn user_lock(&self, f: crate::expr::UserLockFn, args: Vec<Value>) -> Result<Value> {
        use crate::expr::UserLockFn;
        let locks = &self.inst.user_locks;
        let me = self.sv.conn_id;
        if f == UserLockFn::ReleaseAll {
            return Ok(Value::Int(locks.release_all(me) as i64));
        }
        let mut args = args.into_iter();
        let name = match args.next() {
            None | Some(Value::Null) => return Ok(Value::Null),
            Some(v) => types::to_text(v),
        };
        if name.is_empty() {
            return Ok(Value::Null);
        }
        let flag = |b: bool| Value::Int(i64::from(b));
        Ok(match f {
            UserLockFn::Get => {
                let secs = match args.next() {
                    None | Some(Value::Null) => return Ok(Value::Null),
                    Some(v) => {
                        if let Value::Str(s) = &v {
                            types::check_numeric_string(s, types::NumKind::Double, self)?;
                        }
                        types::num(&v)
                    }
                };
                if secs < 0.0 || secs.is_nan() {
                    return Ok(Value::Null);
                }
                // Past a year is as good as forever (and fits a Duration).
                let timeout = std::time::Duration::from_secs_f64(secs.min(31_536_000.0));
                let killed = || self.killed();
                match locks.get(me, &name, timeout, &killed) {
                    Ok(()) => flag(true),
                    Err(crate::user_locks::NotTaken::TimedOut) => flag(false),
                    Err(crate::user_locks::NotTaken::Interrupted) => {
                        return Err(SqlError::Interrupted)
                    }
                }
            }
            UserLockFn::Release => match locks.release(me, &name) {
                Some(mine) => flag(mine),
                None => Value::Null,
            },
            UserLockFn::IsFree => flag(locks.holder(&name).is_none()),
            UserLockFn::IsUsed => locks.holder(&name).map_or(Value::Null, Value::UInt),
            // Answered above (it has no name); the same answer here.
            UserLockFn::ReleaseAll => Value::Int(locks.release_all(me) as i64),
        })
    }

    fn virtual_rows(&self, t: crate::infoschema::InfoTable) -> Result<Vec<Vec<Value>>> {
        crate::infoschema::rows(t, self.inst, self.sv)
    }

    fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
        if code == 1365 && !self.sv.mode.has(SqlMode::ERROR_FOR_DIVISION_BY_ZERO) {
            return Ok(());
        }
        if level == Level::Warning && self.abort_on_warning {
            return Err(SqlError::Raised { code, message });
        }
        self.sv.raise(self.inst, level, code, message);
        Ok(())
    }

    fn subquery(
        &self,
        q: &crate::subquery::Subquery,
        outer: Vec<Value>,
        need: usize,
    ) -> Result<std::rc::Rc<crate::subquery::Materialized>> {
        self.subq.run(q, outer, need, self)
    }

    fn set_user_var(&self, name: &str, v: Value, kind: crate::expr::VarKind) -> Result<()> {
        let stored = crate::expr::VarKind::store(v, kind);
        self.sv
            .user_vars
            .borrow_mut()
            .insert(name.to_string(), stored);
        Ok(())
    }

    fn set_last_insert_id(&self, v: u64) -> Result<()> {
        self.sv.last_insert_id.set(v);
        self.sv.insert_id_arg.set(true);
        Ok(())
    }

    fn param(&self, i: usize) -> Result<Value> {
        self.params
            .get(i)
            .cloned()
            .ok_or_else(|| SqlError::WrongArguments("mysqld_stmt_execute".into()))
    }

    fn session(&self, f: &SessionFn) -> Result<Value> {
        Ok(match f {
            SessionFn::Database => self.sv.db.clone().map_or(Value::Null, Value::Str),
            // The host as MariaDB resolves it (loopback is `localhost`).
            SessionFn::User => Value::Str(format!(
                "{}@{}",
                self.sv.user,
                crate::acl::Peer::from_addr(&self.sv.host).name
            )),
            SessionFn::CurrentUser => Value::Str(Session::current_user_text(self.sv)),
            SessionFn::ConnectionId => Value::UInt(self.sv.conn_id),
            SessionFn::LastInsertId => Value::UInt(self.sv.last_insert_id.get()),
            SessionFn::RowCount => Value::Int(self.sv.row_count),
            SessionFn::FoundRows => Value::UInt(self.sv.found_rows),
            SessionFn::UserVar { name, .. } => self
                .sv
                .user_vars
                .borrow()
                .get(name)
                .map_or(Value::Null, |(v, _)| v.clone()),
            SessionFn::Now => Value::DateTime(self.now()),
            SessionFn::CurDate => Value::Date(self.now().date),
            SessionFn::SysVar { name, global } => {
                let special = match name.as_str() {
                    "warning_count" => Some(Value::UInt(self.sv.diag.borrow().total())),
                    "error_count" => Some(Value::UInt(self.sv.diag.borrow().errors())),
                    "last_insert_id" | "identity" => {
                        Some(Value::UInt(self.sv.last_insert_id.get()))
                    }
                    "in_transaction" => Some(Value::Int(i64::from(self.in_trx))),
                    "pseudo_thread_id" | "thread_id" => Some(Value::UInt(self.sv.conn_id)),
                    "timestamp" if !*global => Some(Value::Double(self.start_us as f64 / 1e6)),
                    _ => None,
                };
                if let Some(v) = special {
                    return Ok(crate::vars::typed_var(name, v));
                }
                let v = if *global {
                    if crate::vars::find(name)
                        .is_some_and(|v| v.scope == crate::vars::Scope::Session)
                    {
                        return Err(SqlError::SessionVariableRead(name.clone()));
                    }
                    crate::vars::global(self.inst, name)
                } else {
                    self.sv
                        .vars
                        .get(crate::vars::canonical(name))
                        .cloned()
                        .or_else(|| crate::vars::global(self.inst, name))
                };
                crate::vars::typed_var(
                    name,
                    v.ok_or_else(|| SqlError::UnknownVariable(name.clone()))?,
                )
            }
        })
    }
}

impl<'d> Session<'d> {
    pub(crate) fn open_table(&self, db: &str, name: &str) -> Result<Table<'d>> {
        self.inst.db.table(db, name).map_err(|e| match e {
            DbError::NoSuchTable(_) | DbError::NoSuchDatabase(_) => SqlError::NoSuchTable {
                db: db.into(),
                table: name.into(),
            },
            e => e.into(),
        })
    }

    /// The tables a SELECT reads, opened in [`exec::Source::tables`] order.
    fn open_tables(&self, source: &exec::Source) -> Result<Opened<'d>> {
        Ok(match source {
            exec::Source::Table(t) => Opened::One(self.open_table(&t.db, &t.name)?),
            exec::Source::Join(_) | exec::Source::Union(_) => Opened::Many(
                source
                    .tables()
                    .into_iter()
                    .map(|t| self.open_table(&t.db, &t.name))
                    .collect::<Result<_>>()?,
            ),
            _ => Opened::None,
        })
    }

    /// A new engine transaction at the session's isolation level, reachable by KILL; it
    /// keeps the snapshot the transaction has read from so far, if any.
    pub(crate) fn begin_trx(&mut self) -> Result<Transaction<'d>> {
        let mut tx = match self.snap.take() {
            Some(snap) => self.inst.db.begin_with_snapshot(self.isolation(), snap)?,
            None => self.inst.db.begin(self.isolation())?,
        };
        self.read_open = false;
        tx.set_interrupt(self.info.interrupt.clone());
        tx.set_lock_wait_timeout(self.lock_wait_timeout());
        let began = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        *self.info.trx.lock() = Some((tx.id().0, began));
        Ok(tx)
    }

    /// `innodb_lock_wait_timeout` of this session: its own value, else the global one (an
    /// atomic load: this runs for every statement).
    fn lock_wait_timeout(&self) -> std::time::Duration {
        match self.sv.vars.get("innodb_lock_wait_timeout") {
            Some(Value::Int(i)) => std::time::Duration::from_secs((*i).max(0) as u64),
            _ => self.inst.db.default_lock_wait_timeout(),
        }
    }

    /// Commits the open transaction (COMMIT, BEGIN inside a transaction, DDL); its
    /// metadata locks go with it.
    pub(crate) fn commit_open(&mut self) -> Result<()> {
        *self.info.trx.lock() = None;
        self.explicit = false;
        self.read_only = false;
        self.read_open = false;
        self.snap = None;
        let r = match self.trx.take() {
            Some(t) => t.commit().map_err(Into::into),
            None => Ok(()),
        };
        // After the commit: a DDL waiting for these tables must find the rows committed.
        self.mdl.release_all();
        r
    }

    pub(crate) fn rollback_open(&mut self) -> Result<()> {
        *self.info.trx.lock() = None;
        self.explicit = false;
        self.read_only = false;
        self.read_open = false;
        self.snap = None;
        let r = match self.trx.take() {
            Some(t) => t.rollback().map_err(Into::into),
            None => Ok(()),
        };
        self.mdl.release_all();
        r
    }

    /// Runs `f` as one statement of the session's transaction (begun if needed), with
    /// statement atomicity and autocommit; with `subqueries`, the statement's subqueries
    /// read through the transaction's read view (`subquery.rs`, invariant 3).
    pub(crate) fn in_statement_with<R>(
        &mut self,
        params: &[Value],
        writes: bool,
        abort_on_warning: bool,
        subqueries: bool,
        f: impl FnOnce(&mut Transaction<'d>, &ExecEnv<'_>) -> Result<R>,
    ) -> Result<R> {
        if writes && self.writes_refused() {
            return Err(SqlError::ReadOnlyTransaction);
        }
        if self.trx.is_none() {
            self.trx = Some(self.begin_trx()?);
        }
        let autocommit_stmt = !self.explicit && self.autocommit();
        let timeout = self.lock_wait_timeout();
        let fk_checks = self.foreign_key_checks();
        let inst = self.inst;
        let Some(tx) = self.trx.as_mut() else {
            return Err(SqlError::Deadlock);
        };
        tx.set_lock_wait_timeout(timeout);
        tx.set_foreign_key_checks(fk_checks);
        tx.begin_statement()?;
        let env = ExecEnv::new(params, &self.sv, inst, true, abort_on_warning);
        if subqueries {
            env.subq.set_view(tx.read_view());
        }
        let r = f(tx, &env);
        match r {
            Ok(v) => {
                tx.end_statement();
                if autocommit_stmt {
                    self.commit_open()?;
                }
                Ok(v)
            }
            Err(e) => {
                let whole = matches!(e, SqlError::Deadlock) || autocommit_stmt;
                if whole {
                    if let Err(re) = self.rollback_open() {
                        tracing::warn!(error = %re, "rollback after a failed statement failed");
                    }
                } else if let Some(tx) = self.trx.as_mut() {
                    // A failed statement rollback aborts the process (the engine's rule), so
                    // an error here means the transaction is already gone.
                    if let Err(re) = tx.rollback_statement() {
                        tracing::warn!(error = %re, "statement rollback failed");
                        self.rollback_open().ok();
                    }
                }
                Err(e)
            }
        }
    }

    /// `lock_wait_timeout` of this session: how long a metadata lock request waits.
    pub(crate) fn mdl_timeout(&self) -> std::time::Duration {
        let secs = self.session_u64("lock_wait_timeout").unwrap_or(86_400);
        std::time::Duration::from_secs(secs)
    }

    /// Shared metadata locks on the tables `p` uses, held until the transaction ends (or
    /// the statement, outside one): no DDL changes them meanwhile (docs/sql.md).
    pub(crate) fn lock_tables(&mut self, p: &Planned) -> Result<()> {
        // Under LOCK TABLES the session holds its tables already (lock_tables.rs, 1).
        if let Some(locked) = &self.locked {
            return locked.check(p);
        }
        for t in p.tables() {
            let info = &self.info;
            let timeout = || {
                let secs = match self.sv.vars.get("lock_wait_timeout") {
                    Some(Value::Int(i)) => (*i).max(0) as u64,
                    _ => crate::vars::global_u64(self.inst, "lock_wait_timeout").unwrap_or(86_400),
                };
                std::time::Duration::from_secs(secs)
            };
            let waiting = |on: bool| info.set_state(if on { MDL_WAIT_STATE } else { "" });
            let wait = crate::mdl::Wait {
                timeout: &timeout,
                interrupt: &info.interrupt,
                waiting: &waiting,
            };
            self.mdl.shared(&self.inst.mdl, &t.db, &t.name, &wait)?;
        }
        Ok(())
    }

    /// Exclusive metadata locks on `names` for a DDL, once every transaction that used
    /// them has ended; the DDL holds them until the guard drops (after it bumped the
    /// generation). The session's own transaction was committed first, so it never waits
    /// for itself.
    pub(crate) fn lock_exclusive(
        &self,
        names: Vec<(String, String)>,
    ) -> Result<crate::mdl::Exclusive<'d>> {
        debug_assert!(!self.mdl.holds_any(), "DDL with shared metadata locks held");
        // Under LOCK TABLES a DDL may change only tables locked WRITE, which the session
        // holds exclusively already: it takes nothing more (lock_tables.rs, invariant 1).
        let names = match &self.locked {
            Some(locked) => {
                locked.check_ddl(&names)?;
                Vec::new()
            }
            None => names,
        };
        let info = self.info.clone();
        let secs = self.mdl_timeout();
        let timeout = move || secs;
        let waiting = |on: bool| info.set_state(if on { MDL_WAIT_STATE } else { "" });
        let wait = crate::mdl::Wait {
            timeout: &timeout,
            interrupt: &info.interrupt,
            waiting: &waiting,
        };
        Ok(self.inst.mdl.exclusive(names, &wait)?)
    }

    /// Secondary indexes that `p` would read with a consistent read but the open
    /// transaction's snapshot is older than (CREATE INDEX after it): (table id, name).
    pub(crate) fn indexes_too_new(&self, p: &Planned) -> Vec<(u64, String)> {
        // A transaction that has only read holds its snapshot without an engine transaction.
        let readable = |ix: &quire_engine::catalog::IndexDef| match (&self.trx, &self.snap) {
            (Some(tx), _) => tx.can_read_index(ix),
            (None, Some(snap)) => quire_engine::table::index_visible_to(ix, snap),
            (None, None) => true,
        };
        let mut out = Vec::new();
        for t in p.snapshot_reads() {
            for ix in t.def.indexes.iter().filter(|ix| !readable(ix)) {
                let hide = (t.def.id, ix.name.clone());
                if !out.contains(&hide) {
                    out.push(hide);
                }
            }
        }
        out
    }

    /// Plans `text` again (a prepared statement's text, or a COM_QUERY's), without the
    /// indexes in `hidden`.
    fn replan(&self, text: &str, hidden: &[(u64, String)], conn: Conn) -> Result<Planned> {
        if crate::do_stmt::is_do(text) {
            return Ok(self.plan_do(text, conn, hidden)?.0);
        }
        let p = crate::parse::parse_prepared(text, conn.mode)?;
        let planned = self.plan_hiding(&p.stmt, p.lock, &p.params, hidden, conn)?;
        planned
            .map(|pl| pl.with_lock_wait(p.wait))
            .ok_or_else(|| SqlError::Unsupported(text.chars().take(40).collect()))
    }

    /// Runs a planned statement made from `text` at DDL generation `gen` under `conn`: it
    /// clears the diagnostics area if it uses tables (MariaDB's rule); metadata locks
    /// first; then, if a DDL ran since the plan was made, a new plan (the locks now hold
    /// the definitions still); then, inside a transaction whose snapshot predates an index
    /// the plan reads, a plan without it (InnoDB would answer 1412; MariaDB's optimizer
    /// mostly avoids such an index, and so do we).
    pub(crate) fn run_planned(
        &mut self,
        p: &Arc<Planned>,
        text: &str,
        gen: u64,
        conn: Conn,
        params: &[Value],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        if p.uses_tables() {
            self.sv.diag.get_mut().start_using_tables();
        }
        self.lock_tables(p)?;
        let mut p = p.clone();
        if self.inst.generation.load(Ordering::Acquire) != gen {
            p = Arc::new(self.replan(text, &[], conn)?);
            // The same text names the same tables: these are held already.
            self.lock_tables(&p)?;
        }
        let hidden = self.indexes_too_new(&p);
        if !hidden.is_empty() {
            p = Arc::new(self.replan(text, &hidden, conn)?);
        }
        // A 1690 names the columns of its expression as `db`.`alias`.`column`.
        self.execute_plan(&p, params, sink).map_err(|e| {
            let names = expression_columns(&p);
            crate::expr::name_columns(e, &|c| {
                names.get(c).cloned().unwrap_or_else(|| "`seq`".into())
            })
        })
    }

    pub(crate) fn execute_plan(
        &mut self,
        p: &Planned,
        params: &[Value],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let sq = p.has_subqueries();
        if self.sv.safe_updates {
            self.refuse_unsafe(p, params)?;
        }
        match p {
            Planned::Select(s) => {
                // sql_select_limit: the LIMIT of a statement's SELECT that has none (its
                // subqueries, derived tables and INSERT … SELECT's rows are not this plan).
                let top = (s.limit.is_none() && self.sv.select_limit != u64::MAX)
                    .then_some(self.sv.select_limit);
                let opened = self.open_tables(&s.source)?;
                let tables = opened.as_slice();
                let iso = self.isolation();
                let plain =
                    self.trx.is_none() && s.lock.is_none() && iso != Isolation::Serializable;
                let n = if plain && (self.explicit || !self.autocommit()) {
                    // A transaction that has only read: no id, no engine transaction; under
                    // REPEATABLE READ one snapshot for all its statements.
                    self.read_open = true;
                    let snap = match iso {
                        Isolation::ReadUncommitted => None,
                        Isolation::ReadCommitted => Some(self.inst.db.snapshot()),
                        _ => Some(
                            self.snap
                                .get_or_insert_with(|| self.inst.db.snapshot())
                                .clone(),
                        ),
                    };
                    let env = ExecEnv::new(params, &self.sv, self.inst, true, false);
                    env.subq.set_view(snap.clone());
                    exec::select_limited(s, tables, &mut Txn::Snapshot(snap), &env, sink, top)?
                } else if self.trx.is_none() && s.lock.is_none() && self.autocommit() {
                    let env = ExecEnv::new(params, &self.sv, self.inst, false, false);
                    // One table reads in one engine call, on a view of its own; a join,
                    // a union or subqueries make many, so they share one snapshot.
                    let many = matches!(&s.source, exec::Source::Join(_) | exec::Source::Union(_))
                        || p.has_subqueries();
                    let mut txn = if many {
                        let snap = self.inst.db.snapshot();
                        env.subq.set_view(Some(snap.clone()));
                        Txn::Snapshot(Some(snap))
                    } else {
                        Txn::None
                    };
                    exec::select_limited(s, tables, &mut txn, &env, sink, top)?
                } else {
                    self.in_statement_with(params, false, false, sq, |tx, env| {
                        // `WAIT n` / `NOWAIT` / `SKIP LOCKED` hold for this statement only
                        // (the next one sets its timeout again, `in_statement_with`).
                        match s.lock_wait {
                            LockWait::Session => {}
                            LockWait::Seconds(n) => {
                                tx.set_lock_wait_timeout(std::time::Duration::from_secs(n))
                            }
                            LockWait::SkipLocked => tx.set_skip_locked(true),
                        }
                        let r = exec::select_limited(s, tables, &mut Txn::Some(tx), env, sink, top);
                        tx.set_skip_locked(false);
                        r
                    })?
                };
                self.sv.found_rows = n;
                Ok(Outcome::ResultSet)
            }
            Planned::Insert(ip) => {
                let table = self.open_table(&ip.table.db, &ip.table.name)?;
                let src_tables = match &ip.source {
                    InsertSource::Select(s) => self.open_tables(&s.source)?,
                    InsertSource::Values(_) => Opened::None,
                };
                let strict = self.sv.mode.strict() && !ip.ignore;
                let found_rows = self.client_found_rows;
                self.sv.insert_id_arg.set(false);
                let (counts, returned) =
                    self.in_statement_with(params, true, strict, sq, |tx, env| {
                        let rows: Vec<Vec<Value>> = match &ip.source {
                            InsertSource::Values(rows) => rows
                                .iter()
                                .map(|r| {
                                    r.iter()
                                        .map(|e| {
                                            e.eval(
                                                &Row {
                                                    values: &[],
                                                    aggs: &[],
                                                },
                                                env,
                                            )
                                        })
                                        .collect::<Result<Vec<_>>>()
                                })
                                .collect::<Result<_>>()?,
                            InsertSource::Select(s) => exec::select_rows(
                                s,
                                src_tables.as_slice(),
                                &mut Txn::Some(tx),
                                env,
                            )?,
                        };
                        let mut stored = Vec::new();
                        let keep = ip.returning.is_some().then_some(&mut stored);
                        let counts = insert_rows(
                            ip, &table, tx, rows, env, strict, found_rows, keep, 1, false,
                        )?;
                        let returned = match &ip.returning {
                            Some(r) => Some(returning_rows(r, &stored, env)?),
                            None => None,
                        };
                        Ok((counts, returned))
                    })?;
                if let Some(id) = counts.first_id {
                    self.sv.last_insert_id.set(id);
                }
                // MariaDB's insert id: the first generated, else LAST_INSERT_ID(e)'s, else
                // the AUTO_INCREMENT value of the last row inserted or changed.
                let insert_id = match counts.first_id {
                    Some(id) => id,
                    None if self.sv.insert_id_arg.get() => self.sv.last_insert_id.get(),
                    None if counts.copied == 0 => 0,
                    None => match ip.source {
                        InsertSource::Select(_) => counts.last_inserted_auto.unwrap_or(0),
                        InsertSource::Values(_) => counts.last_auto.unwrap_or(0),
                    },
                };
                let (records, dups) = (counts.records, counts.dups);
                if let (Some(r), Some(rows)) = (&ip.returning, returned) {
                    return send_returned(r, &rows, sink);
                }
                let warnings = self.sv.diag.get_mut().statement_count();
                let info = if records > 1 || matches!(ip.source, InsertSource::Select(_)) {
                    format!("Records: {records}  Duplicates: {dups}  Warnings: {warnings}")
                } else {
                    String::new()
                };
                Ok(Outcome::Ok {
                    affected_rows: counts.affected,
                    last_insert_id: insert_id,
                    info,
                })
            }
            Planned::Update(up) => {
                let table = self.open_table(&up.table.db, &up.table.name)?;
                // IGNORE turns strict mode's data errors into warnings, as INSERT IGNORE.
                let strict = self.sv.mode.strict() && !up.ignore;
                self.sv.insert_id_arg.set(false);
                let (matched, changed) =
                    self.in_statement_with(params, true, strict, sq, |tx, env| {
                        let limit = exec::limit_value(&up.limit, env, "LIMIT")?;
                        let targets = locked_targets(
                            &table,
                            &up.table,
                            &up.access,
                            up.filter.as_ref(),
                            limit,
                            &up.order,
                            tx,
                            env,
                        )?;
                        let (mut matched, mut changed) = (0u64, 0u64);
                        let zone = crate::tz::RowZone::new(&up.table.def.columns, env.time_zone());
                        let (shown_db, shown_table) = up.table.shown();
                        let checks = crate::check::bind(&up.table.def, shown_table)?;
                        for (n, (handle, old)) in targets.into_iter().enumerate() {
                            matched += 1;
                            let mut new = old.clone();
                            for (c, e) in &up.sets {
                                // MySQL evaluates SET left to right, later ones seeing earlier ones.
                                let v = e.eval(
                                    &Row {
                                        values: &new,
                                        aggs: &[],
                                    },
                                    env,
                                )?;
                                let col = &up.table.def.columns[*c];
                                let at = types::Target {
                                    db: &up.table.db,
                                    table: &up.table.name,
                                    row: n as u64 + 1,
                                    strict,
                                    cut_as_truncation: false,
                                };
                                new[*c] = if matches!(v, Value::Null) && !col.nullable {
                                    // 1048, and the column's implicit default outside strict mode.
                                    let v = exec::null_into_not_null(col, env)?;
                                    types::check_json(&v, col, &at)?;
                                    v
                                } else {
                                    types::coerce(v, col, &at, env)?
                                };
                            }
                            if crate::on_update::any(&up.table.def.columns) {
                                let at = types::Target {
                                    db: &up.table.db,
                                    table: &up.table.name,
                                    row: n as u64 + 1,
                                    strict,
                                    cut_as_truncation: false,
                                };
                                crate::on_update::apply(
                                    &up.table.def.columns,
                                    |c| up.sets.iter().any(|(x, _)| *x == c),
                                    &old,
                                    &mut new,
                                    &at,
                                    env,
                                )?;
                            }
                            if new == old {
                                continue;
                            }
                            if !crate::check::enforce(
                                &checks,
                                &new,
                                env,
                                up.ignore,
                                shown_db,
                                shown_table,
                            )? {
                                // MariaDB does not count a row its CHECK skipped as matched.
                                matched -= 1;
                                continue;
                            }
                            // The engine's TIMESTAMPs are UTC (`tz.rs`).
                            let done = match &handle {
                                Some(h) => tx.update_row(&table, h, zone.stored(&new)),
                                None => {
                                    let pk = exec::pk_of(&up.table.def, &zone.stored(&old));
                                    tx.update(&table, &pk, zone.stored(&new))
                                }
                            };
                            match done {
                                Ok(true) => changed += 1,
                                Ok(false) => {}
                                Err(e) if up.ignore && refused_row(&e) => {}
                                Err(e) => return Err(e.into()),
                            }
                        }
                        Ok((matched, changed))
                    })?;
                let warnings = self.sv.diag.get_mut().statement_count();
                Ok(Outcome::Ok {
                    affected_rows: if self.client_found_rows {
                        matched
                    } else {
                        changed
                    },
                    // `SET id = LAST_INSERT_ID(id)`: MariaDB's OK packet carries it.
                    last_insert_id: if self.sv.insert_id_arg.get() {
                        self.sv.last_insert_id.get()
                    } else {
                        0
                    },
                    info: format!(
                        "Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}"
                    ),
                })
            }
            Planned::Delete(dp) => {
                let table = self.open_table(&dp.table.db, &dp.table.name)?;
                let (n, returned) =
                    self.in_statement_with(params, true, false, sq, |tx, env| {
                        let limit = exec::limit_value(&dp.limit, env, "LIMIT")?;
                        let targets = locked_targets(
                            &table,
                            &dp.table,
                            &dp.access,
                            dp.filter.as_ref(),
                            limit,
                            &dp.order,
                            tx,
                            env,
                        )?;
                        let mut n = 0;
                        let mut deleted = Vec::new();
                        let zone = crate::tz::RowZone::new(&dp.table.def.columns, env.time_zone());
                        for (handle, row) in targets {
                            let done = match &handle {
                                Some(h) => tx.delete_row(&table, h),
                                None => tx.delete(
                                    &table,
                                    &exec::pk_of(&dp.table.def, &zone.stored(&row)),
                                ),
                            };
                            match done {
                                Ok(()) => {
                                    n += 1;
                                    if dp.returning.is_some() {
                                        deleted.push(row);
                                    }
                                }
                                Err(DbError::RowNotFound) => {}
                                // MariaDB's single-table DELETE IGNORE says why it kept
                                // the row (its multi-table one does not).
                                Err(e @ DbError::RowIsReferenced(_)) if dp.ignore => {
                                    let e = SqlError::from(e);
                                    env.warn(Level::Warning, 1451, e.to_string())?;
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                        let returned = match &dp.returning {
                            Some(r) => Some(returning_rows(r, &deleted, env)?),
                            None => None,
                        };
                        Ok((n, returned))
                    })?;
                if let (Some(r), Some(rows)) = (&dp.returning, returned) {
                    return send_returned(r, &rows, sink);
                }
                Ok(Outcome::ok(n))
            }
            Planned::UpdateJoin(mp) => {
                let opened = self.open_tables(&mp.select.source)?;
                let tables = opened.as_slice();
                let strict = self.sv.mode.strict() && !mp.ignore;
                let (matched, changed, check_skips) =
                    self.in_statement_with(params, true, strict, sq, |tx, env| {
                        let rows = exec::select_rows(&mp.select, tables, &mut Txn::Some(tx), env)?;
                        update_join_rows(mp, tables, rows, tx, env, strict)
                    })?;
                let warnings = self
                    .sv
                    .diag
                    .get_mut()
                    .statement_count()
                    .saturating_sub(check_skips);
                Ok(Outcome::Ok {
                    affected_rows: if self.client_found_rows {
                        matched
                    } else {
                        changed
                    },
                    last_insert_id: 0,
                    info: format!(
                        "Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}"
                    ),
                })
            }
            Planned::DeleteJoin(mp) => {
                let opened = self.open_tables(&mp.select.source)?;
                let tables = opened.as_slice();
                let n = self.in_statement_with(params, true, false, sq, |tx, env| {
                    let rows = exec::select_rows(&mp.select, tables, &mut Txn::Some(tx), env)?;
                    let mut n = 0;
                    for_each_target_row(mp, &rows, env.time_zone(), |i, _, pk| {
                        let table = target_table(mp, tables, i)?;
                        match tx.delete(table, pk) {
                            Ok(()) => n += 1,
                            Err(DbError::RowNotFound) => {}
                            // Kept without a warning, as MariaDB's multi-table DELETE IGNORE.
                            Err(e) if mp.ignore && refused_row(&e) => {}
                            Err(e) => return Err(e.into()),
                        }
                        Ok(())
                    })?;
                    Ok(n)
                })?;
                Ok(Outcome::ok(n))
            }
            Planned::Do(items) => self.run_do(items, params),
        }
    }
}

impl Session<'_> {
    /// `sql_safe_updates`: 1175 for an UPDATE or DELETE that would read its table without a
    /// key, as MariaDB 10.11 decides it (`mysql_update`, `mysql_delete`, and for several
    /// tables the join's `error_if_full_join`), on Quire's plan:
    /// - UPDATE: refused unless it has a LIMIT, or its access reads key ranges, or its
    ///   WHERE is a constant that is not true (MariaDB's "impossible WHERE" updates
    ///   nothing and is allowed);
    /// - DELETE: refused when it has no WHERE or a constant one, LIMIT or not (MariaDB
    ///   checks that first); otherwise as UPDATE;
    /// - multi-table UPDATE and DELETE: refused if any table of the join is read whole,
    ///   the changed ones or not.
    ///
    /// MariaDB's range optimizer and cost model decide "uses a key" there; Quire's
    /// rule-based access paths decide it here (docs/sql.md, "System variables and SET
    /// GLOBAL", lists where the two differ).
    fn refuse_unsafe(&self, p: &Planned, params: &[Value]) -> Result<()> {
        let refused = Err(SqlError::UpdateWithoutKeyInSafeMode);
        let constant = |f: &Option<Expr>| {
            f.as_ref()
                .is_none_or(|e| e.is_constant() && !names_subquery(e))
        };
        match p {
            Planned::Update(up) => {
                if up.limit.is_some() || !up.access.ranges.is_empty() {
                    return Ok(());
                }
                if let Some(f) = up.filter.as_ref().filter(|_| constant(&up.filter)) {
                    let env =
                        ExecEnv::new(params, &self.sv, self.inst, self.in_transaction(), false);
                    let v = f.eval(
                        &Row {
                            values: &[],
                            aggs: &[],
                        },
                        &env,
                    )?;
                    if crate::expr::condition(&v, &env)? != Some(true) {
                        return Ok(());
                    }
                }
                refused
            }
            Planned::Delete(dp) => {
                if constant(&dp.filter) {
                    return refused;
                }
                if dp.limit.is_some() || !dp.access.ranges.is_empty() {
                    return Ok(());
                }
                refused
            }
            Planned::UpdateJoin(mp) | Planned::DeleteJoin(mp) => {
                let whole = match &mp.select.source {
                    exec::Source::Join(j) => j.steps.iter().any(|st| st.access.ranges.is_empty()),
                    _ => mp.select.access.ranges.is_empty(),
                };
                if whole {
                    return refused;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Whether `e` evaluates a subquery: MariaDB's DELETE does not take such a WHERE as a
/// constant one (`WHERE id = (SELECT MAX(id) FROM u)` reads a key).
fn names_subquery(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Sub(..)));
    found
}

/// Whether `e` refuses one row of an UPDATE IGNORE or DELETE IGNORE, which then leaves
/// that row as it was and goes on: a duplicate key, a child without its parent (1452), a
/// parent with children (1451). The engine undoes the failed row change whole, cascades
/// included (quire-engine table/foreign.rs, invariant 3). MariaDB's UPDATE IGNORE says
/// nothing of these rows; its single-table DELETE IGNORE warns (the caller's choice).
fn refused_row(e: &DbError) -> bool {
    matches!(
        e,
        DbError::DuplicateKey { .. } | DbError::NoReferencedRow(_) | DbError::RowIsReferenced(_)
    )
}

/// The open table of target `i` of a multi-table UPDATE or DELETE.
fn target_table<'a, 'd>(
    mp: &crate::stmt::JoinDmlPlan,
    tables: &'a [Table<'d>],
    i: usize,
) -> Result<&'a Table<'d>> {
    let t = &mp.targets[i];
    tables.get(t.slot).ok_or_else(|| SqlError::NoSuchTable {
        db: t.table.db.clone(),
        table: t.table.name.clone(),
    })
}

/// Calls `f(target, joined row, primary key)` once per row of each target table in the
/// joined `rows`, in join order: a row matched by several joined rows is changed once (by
/// the first, as MySQL), and a NULL-extended row of a LEFT JOIN is no row.
fn for_each_target_row(
    mp: &crate::stmt::JoinDmlPlan,
    rows: &[Vec<Value>],
    zone: crate::tz::Zone,
    mut f: impl FnMut(usize, &[Value], &[Value]) -> Result<()>,
) -> Result<()> {
    let mut seen: Vec<quire_engine::hash::Set<Vec<u8>>> =
        vec![Default::default(); mp.targets.len()];
    for row in rows {
        for (i, t) in mp.targets.iter().enumerate() {
            let def = &t.table.def;
            if def.primary_key.is_empty() {
                return Err(SqlError::Unsupported(
                    "multi-table UPDATE and DELETE of a table without a primary key".into(),
                ));
            }
            let Some(own) = row.get(t.offset..t.offset + def.columns.len()) else {
                continue;
            };
            let pk = exec::pk_of(def, own);
            if pk.iter().any(|v| matches!(v, Value::Null)) {
                continue;
            }
            let colls: Vec<_> = def
                .primary_key
                .iter()
                .map(|&c| def.columns[c].collation)
                .collect();
            if seen[i].insert(exec::value_key(&pk, &colls)) {
                // The key as the engine holds it (`tz.rs`); the joined row stays local.
                let mut pk = pk;
                crate::tz::pk_to_storage(def, zone, &mut pk);
                f(i, row, &pk)?;
            }
        }
    }
    Ok(())
}

/// Applies a multi-table UPDATE's assignments to the target rows of its joined `rows`;
/// returns (rows matched, rows changed, rows an IGNORE skipped for their CHECK). Each assignment sees the joined row as read, with
/// the earlier assignments to the same table applied (MySQL's left-to-right order).
fn update_join_rows<'d>(
    mp: &crate::stmt::JoinDmlPlan,
    tables: &[Table<'d>],
    rows: Vec<Vec<Value>>,
    tx: &mut Transaction<'d>,
    env: &dyn Env,
    strict: bool,
) -> Result<(u64, u64, u64)> {
    let (mut matched, mut changed, mut check_skips) = (0u64, 0u64, 0u64);
    let checks = mp
        .targets
        .iter()
        .map(|t| crate::check::bind(&t.table.def, t.table.shown().1))
        .collect::<Result<Vec<_>>>()?;
    let zone = env.time_zone();
    for_each_target_row(mp, &rows, zone, |i, row, pk| {
        matched += 1;
        let t = &mp.targets[i];
        let n = t.table.def.columns.len();
        let mut joined = row.to_vec();
        for (ti, c, e) in &mp.sets {
            if *ti != i {
                continue;
            }
            let v = e.eval(
                &Row {
                    values: &joined,
                    aggs: &[],
                },
                env,
            )?;
            let col = &t.table.def.columns[*c];
            if matches!(v, Value::Null) && !col.nullable {
                // 1048, and the column's implicit default outside strict mode.
                let v = exec::null_into_not_null(col, env)?;
                let at = types::Target {
                    db: &t.table.db,
                    table: &t.table.name,
                    row: matched,
                    strict,
                    cut_as_truncation: false,
                };
                types::check_json(&v, col, &at)?;
                joined[t.offset + c] = v;
                continue;
            }
            let Some(slot) = joined.get_mut(t.offset + c) else {
                continue;
            };
            *slot = types::coerce(
                v,
                col,
                &types::Target {
                    db: &t.table.db,
                    table: &t.table.name,
                    row: matched,
                    strict,
                    cut_as_truncation: false,
                },
                env,
            )?;
        }
        let old = row.get(t.offset..t.offset + n);
        if let (true, Some(old), Some(new)) = (
            crate::on_update::any(&t.table.def.columns),
            old,
            joined.get_mut(t.offset..t.offset + n),
        ) {
            crate::on_update::apply(
                &t.table.def.columns,
                |c| mp.sets.iter().any(|(ti, x, _)| *ti == i && *x == c),
                old,
                new,
                &types::Target {
                    db: &t.table.db,
                    table: &t.table.name,
                    row: matched,
                    strict,
                    cut_as_truncation: false,
                },
                env,
            )?;
        }
        let (Some(new), Some(old)) = (joined.get(t.offset..t.offset + n), old) else {
            return Ok(());
        };
        if new == old {
            return Ok(());
        }
        if let Some(cks) = checks.get(i) {
            let (db, name) = t.table.shown();
            if !crate::check::enforce(cks, new, env, mp.ignore, db, name)? {
                // Matched still, and its warning left out of the OK's count: MariaDB's
                // multi-table UPDATE counts the rows it read and the data conversions it
                // warned of (`cuted_fields`), unlike its single-table one.
                check_skips += 1;
                return Ok(());
            }
        }
        let table = target_table(mp, tables, i)?;
        let new = crate::tz::RowZone::new(&t.table.def.columns, zone).stored(new);
        match tx.update(table, pk, new) {
            Ok(true) => changed += 1,
            Ok(false) => {}
            Err(e) if mp.ignore && refused_row(&e) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(())
    })?;
    Ok((matched, changed, check_skips))
}

/// The rows an UPDATE or DELETE changes, read with X locks at their newest versions, in
/// ORDER BY order when there is one (all matching rows are read and locked, then sorted;
/// LIMIT takes the first), each with its handle when the table has no primary key (the
/// rows are then named by handle, not by key).
#[allow(clippy::too_many_arguments)]
fn locked_targets<'d>(
    table: &Table<'d>,
    t: &exec::TableRef,
    access: &crate::plan::Access,
    filter: Option<&crate::expr::Expr>,
    limit: Option<u64>,
    order: &crate::stmt::DmlOrder,
    tx: &mut Transaction<'d>,
    env: &dyn Env,
) -> Result<Vec<(Option<RowHandle>, Vec<Value>)>> {
    let scan_limit = if order.keys.is_empty() { limit } else { None };
    let mut out = Vec::new();
    let mut keep = |h: Option<RowHandle>, row: Vec<Value>| -> Result<bool> {
        if env.interrupted() {
            return Err(SqlError::Interrupted);
        }
        if let Some(f) = filter {
            let v = f.eval(
                &Row {
                    values: &row,
                    aggs: &[],
                },
                env,
            )?;
            if crate::expr::condition(&v, env)? != Some(true) {
                return Ok(true);
            }
        }
        out.push((h, row));
        Ok(scan_limit.is_none_or(|l| (out.len() as u64) < l))
    };
    if t.def.primary_key.is_empty() {
        // No key names the rows: a locking scan of the whole table, with handles.
        let mut failed = None;
        let zone = crate::tz::RowZone::new(&t.def.columns, env.time_zone());
        tx.scan_locking_handles(table, ReadLock::Exclusive, |h, mut row| {
            zone.from_storage(&mut row);
            match keep(Some(h), row) {
                Ok(more) => Ok(more),
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
    } else {
        exec::read_rows(
            table,
            t,
            access,
            &mut Txn::Some(tx),
            Some(ReadLock::Exclusive),
            env,
            |row| keep(None, row),
        )?;
    }
    if !order.keys.is_empty() {
        let mut keyed = Vec::with_capacity(out.len());
        for (h, row) in out {
            let key = order
                .keys
                .iter()
                .map(|(e, _)| {
                    e.eval(
                        &Row {
                            values: &row,
                            aggs: &[],
                        },
                        env,
                    )
                })
                .collect::<Result<Vec<Value>>>()?;
            keyed.push((key, h, row));
        }
        // Stable: rows with equal keys keep the access order, as MariaDB's filesort of a
        // scan.
        let desc: Vec<bool> = order.keys.iter().map(|(_, d)| *d).collect();
        keyed.sort_by(|a, b| exec::compare_sort_keys(&a.0, &b.0, &desc, &order.colls));
        out = keyed.into_iter().map(|(_, h, row)| (h, row)).collect();
        if let Some(l) = limit {
            out.truncate(usize::try_from(l).unwrap_or(usize::MAX));
        }
    }
    Ok(out)
}

/// Inserts `rows` (in the statement's column order); returns (affected rows, first
/// generated AUTO_INCREMENT value, records, duplicates).
/// RETURNING's select list over each row written or deleted (`stmt::Returning`).
fn returning_rows(
    r: &crate::stmt::Returning,
    rows: &[Vec<Value>],
    env: &dyn Env,
) -> Result<Vec<Vec<Value>>> {
    rows.iter()
        .map(|row| {
            let at = Row {
                values: row,
                aggs: &[],
            };
            r.items.iter().map(|e| e.eval(&at, env)).collect()
        })
        .collect()
}

/// The result set of a statement with RETURNING, once it has succeeded (column
/// definitions even for no row, as MariaDB).
fn send_returned(
    r: &crate::stmt::Returning,
    rows: &[Vec<Value>],
    sink: &mut dyn RowSink,
) -> Result<Outcome> {
    sink.columns(&r.columns)?;
    for row in rows {
        sink.row(row)?;
    }
    Ok(Outcome::ResultSet)
}

/// What an INSERT did, as MariaDB's COPY_INFO counts it.
#[derive(Debug, Default)]
pub(crate) struct InsertCounts {
    /// The OK packet's affected rows: 1 per row inserted, 1 more per row REPLACE deleted,
    /// 2 per row ON DUPLICATE KEY UPDATE changed (and 1 per row it left as it was, with
    /// CLIENT_FOUND_ROWS).
    pub(crate) affected: u64,
    /// The first AUTO_INCREMENT value generated: LAST_INSERT_ID().
    pub(crate) first_id: Option<u64>,
    /// The rows of the statement's source.
    records: u64,
    /// The info text's `Duplicates`.
    dups: u64,
    /// Rows inserted or changed (MariaDB's `copied`).
    pub(crate) copied: u64,
    /// The AUTO_INCREMENT value of the last row inserted or changed: the OK packet's
    /// insert id when none was generated (MariaDB's `next_number_field` after the loop).
    last_auto: Option<u64>,
    /// The same of the last row inserted: INSERT … SELECT's insert id (MariaDB's
    /// `autoinc_value_of_last_inserted_row`).
    last_inserted_auto: Option<u64>,
}

/// Inserts `rows` (each in the statement's column order); with `keep`, each row as stored
/// (its AUTO_INCREMENT and defaults filled) is pushed there, for RETURNING. With ON
/// DUPLICATE KEY UPDATE a colliding row is updated instead (`upsert.rs`); `found_rows` is
/// the client's CLIENT_FOUND_ROWS.
/// `first_row` numbers the first of `rows` in warnings; `load` says LOAD DATA's rows come
/// (one call a row), which never makes NULL into NOT NULL an error here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_rows<'d>(
    ip: &crate::stmt::InsertPlan,
    table: &Table<'d>,
    tx: &mut Transaction<'d>,
    rows: Vec<Vec<Value>>,
    env: &dyn Env,
    strict: bool,
    found_rows: bool,
    mut keep: Option<&mut Vec<Vec<Value>>>,
    first_row: u64,
    load: bool,
) -> Result<InsertCounts> {
    let def = &ip.table.def;
    let mut k = InsertCounts {
        records: rows.len() as u64,
        ..Default::default()
    };
    let total = rows.len() as u64;
    // NULL into a NOT NULL column is an error in a one-row INSERT … VALUES (without
    // IGNORE) whatever the sql_mode; otherwise a warning (MariaDB).
    let null_is_error =
        !load && !ip.ignore && rows.len() == 1 && matches!(ip.source, InsertSource::Values(_));
    // Columns are stored in the statement's order, then the others (MariaDB's order of
    // warnings); a NOT NULL column given nothing and without a DEFAULT is `missing`.
    let mut order: Vec<usize> = (0..def.columns.len()).collect();
    order.sort_by_key(|&i| ip.map[i].map_or((1, i), |s| (0, s)));
    let missing: Vec<bool> = (0..def.columns.len())
        .map(|i| {
            ip.map[i].is_none()
                && ip.defaults[i].is_none()
                && !def.columns[i].nullable
                && def.auto_increment != Some(i)
        })
        .collect();
    let auto_of = |row: &[Value]| {
        def.auto_increment
            .and_then(|c| row.get(c))
            .and_then(exec::int_value)
    };
    // The OK packet's insert id of a row whose AUTO_INCREMENT value was given: MariaDB's
    // `next_number_field->val_int()` as an unsigned 64-bit number, so a negative value
    // given is sent as 2^64 - n (drivers read it back as the negative number), where
    // `auto_of` (what the counter may move past) ignores it.
    let reported_auto = |row: &[Value]| {
        def.auto_increment
            .and_then(|c| row.get(c))
            .and_then(|v| match v {
                Value::Int(i) => Some(*i as u64),
                v => exec::int_value(v),
            })
    };
    let mut batch = crate::upsert::AutoIncBatch::default();
    let (shown_db, shown_table) = ip.table.shown();
    let checks = crate::check::bind(def, shown_table)?;
    // Rows are checked in the session's zone and written with UTC TIMESTAMPs; what the
    // engine gives back is read in the session's zone again (`tz.rs`).
    let zone = crate::tz::RowZone::new(&def.columns, env.time_zone());
    let local = |mut r: Vec<Value>| {
        zone.from_storage(&mut r);
        r
    };
    for (n, src) in rows.into_iter().enumerate() {
        let at = types::Target {
            db: &ip.table.db,
            table: &ip.table.name,
            row: first_row + n as u64,
            strict,
            cut_as_truncation: false,
        };
        let mut full = Vec::with_capacity(def.columns.len());
        for i in 0..def.columns.len() {
            full.push(match (ip.map[i], &ip.defaults[i]) {
                (Some(s), _) => src.get(s).cloned().unwrap_or(Value::Null),
                (None, Some(d)) => d.eval(
                    &Row {
                        values: &[],
                        aggs: &[],
                    },
                    env,
                )?,
                (None, None) => Value::Null,
            });
        }
        let mut row = exec::coerce_row(&ip.table, full, &order, &missing, &at, env, null_is_error)?;
        // CHECK constraints on the row as it is to be stored (check.rs); under IGNORE a
        // failing row is a warning and is skipped.
        if !crate::check::enforce(&checks, &row, env, ip.ignore, shown_db, shown_table)? {
            continue;
        }
        let generated = def
            .auto_increment
            .is_some_and(|c| matches!(row.get(c), Some(Value::Null)));
        if let Some(od) = &ip.on_dup {
            // The statement's batch gives the value (upsert.rs, invariant 3).
            let mut given = None;
            if let Some(c) = def.auto_increment {
                if generated {
                    given = batch.take(table, total, total - n as u64)?;
                    if let (Some(v), Some(slot)) = (given, row.get_mut(c)) {
                        *slot = crate::upsert::auto_value(ip, c, v);
                    }
                } else if let Some(v) = auto_of(&row) {
                    batch.explicit(v);
                }
            }
            match tx.insert_or_lock_duplicate(table, zone.stored(&row))? {
                quire_engine::table::Upsert::Inserted(stored) => {
                    let stored = local(stored);
                    k.affected += 1;
                    k.copied += 1;
                    k.last_auto = reported_auto(&stored);
                    k.last_inserted_auto = k.last_auto;
                    if generated && k.first_id.is_none() {
                        k.first_id = auto_of(&stored);
                    }
                    if let Some(kept) = keep.as_deref_mut() {
                        kept.push(stored);
                    }
                }
                quire_engine::table::Upsert::Duplicate {
                    handle, row: old, ..
                } => {
                    if let Some(v) = given {
                        batch.give_back(v);
                    }
                    let done = crate::upsert::update_duplicate(
                        ip,
                        od,
                        table,
                        tx,
                        &handle,
                        local(old),
                        &row,
                        od.source_at.and_then(|at| src.get(at..)).unwrap_or(&[]),
                        n as u64 + 1,
                        env,
                        strict,
                        null_is_error,
                    )?;
                    match done {
                        crate::upsert::Updated::Changed(new) => {
                            k.affected += 2;
                            k.dups += 1;
                            k.copied += 1;
                            k.last_auto = reported_auto(&new);
                            if let Some(kept) = keep.as_deref_mut() {
                                kept.push(new);
                            }
                        }
                        crate::upsert::Updated::Unchanged(same) => {
                            if found_rows {
                                k.affected += 1;
                                k.dups += 1;
                            }
                            if let Some(kept) = keep.as_deref_mut() {
                                kept.push(same);
                            }
                        }
                        crate::upsert::Updated::Skipped => {}
                    }
                }
            }
            continue;
        }
        zone.to_storage(&mut row);
        // REPLACE needs the row again after a collision; nobody else does.
        let attempt = if ip.replace {
            row.clone()
        } else {
            std::mem::take(&mut row)
        };
        let stored = match tx.insert(table, attempt) {
            Ok(s) => local(s),
            Err(DbError::DuplicateKey { index, entry }) if ip.ignore => {
                let e = SqlError::DuplicateKey {
                    value: entry,
                    key: index,
                };
                env.warn(Level::Warning, 1062, e.to_string())?;
                k.dups += 1;
                continue;
            }
            Err(DbError::DuplicateKey { .. }) if ip.replace => {
                // REPLACE: delete every row the new one collides with, then insert.
                let replaced = replace_conflicts(def, table, tx, &row)?;
                k.affected += replaced;
                k.dups += u64::from(replaced > 0);
                local(tx.insert(table, row.clone())?)
            }
            Err(e) => return Err(e.into()),
        };
        k.affected += 1;
        k.copied += 1;
        k.last_auto = reported_auto(&stored);
        k.last_inserted_auto = k.last_auto;
        if generated && k.first_id.is_none() {
            k.first_id = auto_of(&stored);
        }
        if let Some(kept) = keep.as_deref_mut() {
            kept.push(stored);
        }
    }
    // With IGNORE MariaDB counts every row not copied as a duplicate.
    if ip.ignore && ip.on_dup.is_some() {
        k.dups = k.records - k.copied;
    }
    Ok(k)
}

/// `row` is as the engine holds it (UTC TIMESTAMPs), as are the rows it is compared with.
fn replace_conflicts<'d>(
    def: &TableDef,
    table: &Table<'d>,
    tx: &mut Transaction<'d>,
    row: &[Value],
) -> Result<u64> {
    // MariaDB updates a row that conflicts on the table's only unique key in place, so one
    // equal to the new row counts neither as affected nor as a duplicate; with more unique
    // keys it deletes and inserts, and every conflicting row counts.
    let in_place = !def.indexes.iter().any(|i| i.unique);
    let mut n = 0;
    if !def.primary_key.is_empty() {
        let pk = exec::pk_of(def, row);
        if let Some(old) = tx.get_locking(table, &pk, ReadLock::Exclusive)? {
            tx.delete(table, &pk)?;
            n += u64::from(!in_place || old.as_slice() != row);
        }
    }
    for ix in def.indexes.iter().filter(|i| i.unique) {
        let vals: Vec<Value> = ix.columns.iter().map(|c| row[c.column].clone()).collect();
        if vals.iter().any(|v| matches!(v, Value::Null)) {
            continue;
        }
        for pk in tx.lookup_index(table, &ix.name, &vals)? {
            if let Some(old) = tx.get_locking(table, &pk, ReadLock::Exclusive)? {
                tx.delete(table, &pk)?;
                n += u64::from(!in_place || old.as_slice() != row);
            }
        }
    }
    Ok(n)
}

impl Instance<'_> {
    /// Marks the catalog changed: plans made before are re-planned.
    pub(crate) fn bump_generation(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// The name of each column an expression of `p` can read, as a 1690 message prints it
/// (`db`.`alias`.`column`): the target table of a write, else the joined row of the source.
fn expression_columns(p: &Planned) -> Vec<String> {
    let name = |t: &crate::exec::TableRef, c: &quire_engine::row::Column| {
        format!("`{}`.`{}`.`{}`", t.db, t.alias, c.name)
    };
    let of_table = |t: &crate::exec::TableRef| -> Vec<String> {
        t.def.columns.iter().map(|c| name(t, c)).collect()
    };
    let of_select = |s: &crate::exec::SelectPlan| -> Vec<String> {
        match &s.source {
            exec::Source::Table(t) => of_table(t),
            exec::Source::Join(j) => {
                let mut out = vec!["`seq`".to_string(); j.width];
                for st in &j.steps {
                    if let Some(crate::plan::join::Member::Table(t)) = j.members.get(st.member) {
                        for (i, c) in t.def.columns.iter().enumerate().take(st.len) {
                            if let Some(slot) = out.get_mut(st.offset + i) {
                                *slot = name(t, c);
                            }
                        }
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    };
    match p {
        Planned::Select(s) => of_select(s),
        // ON DUPLICATE KEY UPDATE reads the existing row, then VALUES(c)'s row.
        Planned::Insert(i) if i.on_dup.is_some() => {
            [of_table(&i.table), of_table(&i.table)].concat()
        }
        Planned::Insert(i) => of_table(&i.table),
        Planned::Update(u) => of_table(&u.table),
        Planned::Delete(d) => of_table(&d.table),
        Planned::UpdateJoin(m) | Planned::DeleteJoin(m) => of_select(&m.select),
        Planned::Do(_) => Vec::new(),
    }
}
