//! Planning of the statements that run many times (SELECT, INSERT, REPLACE, UPDATE,
//! DELETE): bound once, kept in prepared statements and the COM_QUERY plan cache, re-planned
//! when DDL changed the catalog since.

use std::collections::HashMap;

use quire_engine::row::{Collation, Column, ColumnType, IntWidth};
use quire_engine::table::{DbInner, ReadLock};
use sqlparser::ast as sql;

use crate::bind::{expr_name, object_parts, AggCall, Binder, Scope, SubCtx};
use crate::error::{Result, SqlError};
use crate::exec::{SelectPlan, Source, TableRef};
use crate::expr::{Expr, Func, SessionFn};
use crate::meta::{flags, ColumnMeta};
use crate::plan::{self, Access};
use crate::subquery::Outer;
use crate::types;

pub mod recursive;
pub mod union;

/// A planned statement.
#[derive(Debug, Clone)]
pub enum Planned {
    Select(SelectPlan),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
    /// A multi-table UPDATE (`UPDATE a JOIN b ON … SET a.x = b.y`).
    UpdateJoin(JoinDmlPlan),
    /// A multi-table DELETE (`DELETE a FROM a JOIN b …`, `DELETE FROM a USING a JOIN b …`).
    DeleteJoin(JoinDmlPlan),
    /// `DO e1, e2, …`: each expression as a `SELECT e` with no FROM (`do_stmt.rs`).
    Do(Vec<SelectPlan>),
}

/// A multi-table UPDATE or DELETE: its join is read first (every row with a lock, the
/// changed tables' exclusive, the others' shared, as InnoDB), then each changed table's
/// rows are changed once each, by primary key.
#[derive(Debug, Clone)]
pub struct JoinDmlPlan {
    /// The join; its items are every column of the joined row.
    pub select: SelectPlan,
    pub targets: Vec<JoinTarget>,
    /// UPDATE's assignments: (index into `targets`, column of that table, value over the
    /// joined row).
    pub sets: Vec<(usize, usize, Expr)>,
    /// `UPDATE IGNORE` / `DELETE IGNORE`: a row a key, a foreign key or a CHECK refuses
    /// is skipped, and data errors are warnings.
    pub ignore: bool,
}

/// A table a multi-table UPDATE or DELETE changes.
#[derive(Debug, Clone)]
pub struct JoinTarget {
    pub table: TableRef,
    /// Where its columns start in the joined row.
    pub offset: usize,
    /// Its position among the join's tables (as [`Source::tables`] lists them).
    pub slot: usize,
}

impl Planned {
    /// The tables the statement uses: the target, then a SELECT's source and every
    /// subquery's (metadata locks are taken on each; a self-join names a table twice).
    pub fn tables(&self) -> impl Iterator<Item = &TableRef> {
        let mut out = Vec::new();
        fn subs<'p>(
            qs: &'p [std::sync::Arc<crate::subquery::Subquery>],
            out: &mut Vec<&'p TableRef>,
        ) {
            for q in qs {
                crate::subquery::plan_tables(&q.plan, out);
            }
        }
        match self {
            Planned::Select(s) => crate::subquery::plan_tables(s, &mut out),
            Planned::Insert(i) => {
                out.push(&i.table);
                if let InsertSource::Select(s) = &i.source {
                    crate::subquery::plan_tables(s, &mut out);
                }
                subs(&i.subqueries, &mut out);
            }
            Planned::Update(u) => {
                out.push(&u.table);
                subs(&u.subqueries, &mut out);
            }
            Planned::Delete(d) => {
                out.push(&d.table);
                subs(&d.subqueries, &mut out);
            }
            Planned::UpdateJoin(m) | Planned::DeleteJoin(m) => {
                crate::subquery::plan_tables(&m.select, &mut out)
            }
            Planned::Do(items) => items
                .iter()
                .for_each(|s| crate::subquery::plan_tables(s, &mut out)),
        }
        out.into_iter()
    }

    /// Whether the statement reads or writes a table (a sequence table counts, as in
    /// MariaDB): it clears the diagnostics area when it starts.
    pub fn uses_tables(&self) -> bool {
        match self {
            Planned::Select(s) => !matches!(s.source, Source::Dual) || !s.subqueries.is_empty(),
            Planned::Do(items) => items.iter().any(|s| !s.subqueries.is_empty()),
            _ => true,
        }
    }

    /// Whether running it evaluates subqueries (their read view must be chosen first).
    /// The plan with its top SELECT's lock wait set (a locking read's `WAIT n`, `NOWAIT`,
    /// `SKIP LOCKED`); other statements do not have one.
    pub fn with_lock_wait(mut self, wait: crate::dispatch::LockWait) -> Planned {
        if let Planned::Select(s) = &mut self {
            s.lock_wait = wait;
        }
        self
    }

    pub fn has_subqueries(&self) -> bool {
        match self {
            Planned::Select(s) => crate::subquery::has_subqueries(s),
            Planned::Insert(i) => {
                !i.subqueries.is_empty()
                    || matches!(&i.source, InsertSource::Select(s) if crate::subquery::has_subqueries(s))
            }
            Planned::Update(u) => !u.subqueries.is_empty(),
            Planned::Delete(d) => !d.subqueries.is_empty(),
            Planned::UpdateJoin(m) | Planned::DeleteJoin(m) => {
                crate::subquery::has_subqueries(&m.select)
            }
            Planned::Do(items) => items.iter().any(crate::subquery::has_subqueries),
        }
    }

    /// The tables read with a consistent (non-locking) read: a SELECT without a locking
    /// clause, INSERT … SELECT's source, and every subquery. Only these read old versions
    /// through an index.
    pub fn snapshot_reads(&self) -> impl Iterator<Item = &TableRef> {
        let mut out = Vec::new();
        fn subs_of<'p>(p: &'p SelectPlan, out: &mut Vec<&'p TableRef>) {
            let mut all = Vec::new();
            crate::subquery::subquery_plans(p, &mut all);
            for q in all {
                crate::subquery::plan_tables(q, out);
            }
        }
        match self {
            Planned::Select(s) if s.lock.is_none() => crate::subquery::plan_tables(s, &mut out),
            Planned::Insert(InsertPlan {
                source: InsertSource::Select(s),
                ..
            }) if s.lock.is_none() => crate::subquery::plan_tables(s, &mut out),
            Planned::Select(s)
            | Planned::UpdateJoin(JoinDmlPlan { select: s, .. })
            | Planned::DeleteJoin(JoinDmlPlan { select: s, .. }) => subs_of(s, &mut out),
            Planned::Do(items) => items.iter().for_each(|s| subs_of(s, &mut out)),
            _ => {}
        }
        let direct: &[std::sync::Arc<crate::subquery::Subquery>] = match self {
            Planned::Insert(i) => &i.subqueries,
            Planned::Update(u) => &u.subqueries,
            Planned::Delete(d) => &d.subqueries,
            _ => &[],
        };
        for q in direct {
            crate::subquery::plan_tables(&q.plan, &mut out);
        }
        out.into_iter()
    }
}

#[derive(Debug, Clone)]
pub enum InsertSource {
    Values(Vec<Vec<Expr>>),
    Select(Box<SelectPlan>),
}

#[derive(Debug, Clone)]
pub struct InsertPlan {
    pub table: TableRef,
    /// For each table column, the source column that fills it (None: its default).
    pub map: Vec<Option<usize>>,
    pub source: InsertSource,
    /// Each column's DEFAULT, bound once (evaluated per row: `current_timestamp()`).
    pub defaults: Vec<Option<Expr>>,
    pub replace: bool,
    pub ignore: bool,
    /// Subqueries of its VALUES and RETURNING.
    pub subqueries: Vec<std::sync::Arc<crate::subquery::Subquery>>,
    /// `RETURNING …`: a result set of the rows written instead of an OK.
    pub returning: Option<Returning>,
    /// `ON DUPLICATE KEY UPDATE …`.
    pub on_dup: Option<OnDuplicate>,
}

/// The assignments of INSERT … ON DUPLICATE KEY UPDATE, applied left to right to a row the
/// new one collides with. Each expression reads a row of twice the table's width: the
/// existing row as updated so far (columns `0..n`), then the row the statement would have
/// inserted (`n..2n`, what `VALUES(c)` reads).
#[derive(Debug, Clone)]
pub struct OnDuplicate {
    pub sets: Vec<(usize, Expr)>,
    /// INSERT … SELECT whose assignments read the SELECT's own tables (`c = s.col`): the
    /// SELECT's rows carry those tables' columns after its own items, from this index,
    /// and the assignments read them after the two rows (columns `2n..`).
    pub source_at: Option<usize>,
}

/// The RETURNING clause of INSERT, REPLACE (MariaDB 10.5) or a single-table DELETE
/// (10.0.5): its select list bound as `SELECT <list> FROM <table>` (so `*`, `t.c`,
/// expressions, aliases and subqueries mean what they mean there, with the same column
/// definitions), evaluated over each row as it was stored or as it was before its delete.
/// The rows are sent once the statement has succeeded: an error is an error packet alone.
#[derive(Debug, Clone)]
pub struct Returning {
    pub items: Vec<Expr>,
    pub columns: Vec<ColumnMeta>,
}

#[derive(Debug, Clone)]
pub struct UpdatePlan {
    pub table: TableRef,
    pub access: Access,
    pub filter: Option<Expr>,
    pub sets: Vec<(usize, Expr)>,
    pub limit: Option<Expr>,
    /// ORDER BY: the rows are changed in this order, and LIMIT takes the first ones.
    pub order: DmlOrder,
    /// Subqueries of its SET and WHERE.
    pub subqueries: Vec<std::sync::Arc<crate::subquery::Subquery>>,
    /// `UPDATE IGNORE`: a row a key, a foreign key or a CHECK refuses is left as it was,
    /// and data errors are warnings (as INSERT IGNORE's).
    pub ignore: bool,
}

#[derive(Debug, Clone)]
pub struct DeletePlan {
    pub table: TableRef,
    pub access: Access,
    pub filter: Option<Expr>,
    pub limit: Option<Expr>,
    pub order: DmlOrder,
    /// Subqueries of its WHERE and RETURNING.
    pub subqueries: Vec<std::sync::Arc<crate::subquery::Subquery>>,
    /// `RETURNING …`: a result set of the rows deleted instead of an OK.
    pub returning: Option<Returning>,
    /// `DELETE IGNORE`: a row a foreign key keeps is left, with warning 1451.
    pub ignore: bool,
}

/// The ORDER BY of a single-table UPDATE or DELETE: keys over the table's row, each
/// descending or not, compared in its collation (an ENUM by its member number).
#[derive(Debug, Clone, Default)]
pub struct DmlOrder {
    pub keys: Vec<(Expr, bool)>,
    pub colls: Vec<Collation>,
}

/// Binds the ORDER BY of a single-table UPDATE or DELETE in the table's scope.
fn dml_order(
    ctx: &Ctx<'_>,
    sub: &SubCtx<'_>,
    scope: &Scope,
    order_by: &[sql::OrderByExpr],
) -> Result<DmlOrder> {
    let mut keys = Vec::new();
    for o in order_by {
        let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
        let e = Binder {
            sub: Some(sub),
            scope: Some(scope),
            params: ctx.params,
            aggs: None,
            context: "ORDER BY",
            conn: ctx.conn,
        }
        .bind(&o.expr)?;
        keys.push((crate::bind::enum_number(e, &scope.columns), desc));
    }
    let colls = keys
        .iter()
        .map(|(e, _)| crate::bind::derive_collation(e, &scope.columns, ctx.conn.coll).0)
        .collect();
    Ok(DmlOrder { keys, colls })
}

/// What planning needs from the session.
pub struct Ctx<'a> {
    pub db: &'a DbInner,
    pub current_db: Option<&'a str>,
    pub params: &'a HashMap<(u64, u64), usize>,
    /// Secondary indexes the plan must not read, as (table id, index name): built after
    /// the snapshot of the transaction that runs it (docs/sql.md, 1412).
    pub hidden: &'a [(u64, String)],
    /// collation_connection and sql_mode (a plan is made again under other ones).
    pub conn: crate::bind::Conn,
    /// The common table expressions (WITH) in scope, innermost first.
    pub ctes: Option<&'a Ctes<'a>>,
    /// The session's temporary tables (they hide base tables of the same name).
    pub temps: &'a crate::temp::Temps,
    /// Set when a join plan read the tables' statistics: the plan is kept with the
    /// statistics epoch and made again when it moves (`session.rs`).
    pub stats_used: &'a std::cell::Cell<bool>,
}

impl<'a> Ctx<'a> {
    /// Where join plans read statistics.
    pub fn stats_source(&self) -> crate::plan::join::StatsSource<'a> {
        crate::plan::join::StatsSource {
            db: self.db,
            used: self.stats_used,
        }
    }
}

/// A CTE: its name, its column list (empty: the query's names) and its query.
pub type CteDef<'a> = (String, Vec<String>, &'a sql::Query);

/// The CTEs of one WITH clause, and the enclosing WITH's.
pub struct Ctes<'a> {
    /// In the order written.
    pub defs: Vec<CteDef<'a>>,
    pub up: Option<&'a Ctes<'a>>,
    /// WITH RECURSIVE: the definition being planned may name itself (a recursive CTE,
    /// `stmt/recursive.rs`) and the CTEs after it (mutual recursion, which Quire cannot
    /// run yet: 1235, never a table of that name).
    pub recursive: bool,
    pub pending: Vec<String>,
    /// While a recursive CTE's recursive members are planned: its name is its work table.
    pub work: Option<&'a recursive::WorkRef>,
}

impl<'a> Ctes<'a> {
    /// The CTE `name` names here: its definition, and the scope its query is planned in
    /// (the CTEs written before it, and the enclosing ones; in a WITH RECURSIVE its own name
    /// and those after it are `pending`, and an earlier CTE that names itself is recursive).
    pub fn find(&self, name: &str) -> Option<(&CteDef<'a>, Ctes<'a>)> {
        match self.defs.iter().position(|d| d.0 == name) {
            Some(i) => Some((
                &self.defs[i],
                Ctes {
                    defs: self.defs[..i].to_vec(),
                    up: self.up,
                    recursive: self.recursive,
                    pending: if self.recursive {
                        self.defs[i..].iter().map(|d| d.0.clone()).collect()
                    } else {
                        Vec::new()
                    },
                    work: None,
                },
            )),
            None => self.up.and_then(|u| u.find(name)),
        }
    }

    /// Whether `name` is a recursive reference (see `pending`).
    pub fn is_pending(&self, name: &str) -> bool {
        self.pending.iter().any(|p| p == name) || self.up.is_some_and(|u| u.is_pending(name))
    }

    /// The work table `name` is, inside a recursive CTE's recursive member.
    pub fn work_for(&self, name: &str) -> Option<&'a recursive::WorkRef> {
        match self.work {
            Some(w) if w.name == name => Some(w),
            _ => self.up.and_then(|u| u.work_for(name)),
        }
    }

    /// Whether the CTE `find` gives for `name` names itself in a WITH RECURSIVE.
    pub fn is_recursive_def(&self, name: &str) -> bool {
        match self.defs.iter().find(|d| d.0 == name) {
            Some(d) => self.recursive && recursive::mentions_set(&d.2.body, name),
            None => self.up.is_some_and(|u| u.is_recursive_def(name)),
        }
    }
}

impl Ctx<'_> {
    pub(crate) fn table(&self, name: &sql::ObjectName, alias: Option<&str>) -> Result<TableRef> {
        let parts = object_parts(name)?;
        let (db, t) = match parts.as_slice() {
            [t] => (
                self.current_db
                    .ok_or(SqlError::NoDatabaseSelected)?
                    .to_string(),
                t.clone(),
            ),
            [d, t] => (d.clone(), t.clone()),
            _ => return Err(SqlError::Unsupported(name.to_string())),
        };
        if let Some(r) = self.temp_table(&db, &t, alias)? {
            return Ok(r);
        }
        if crate::temp::is_reserved_db(&db) {
            return Err(SqlError::NoSuchTable { db, table: t });
        }
        let table = self.db.table(&db, &t).map_err(|e| match e {
            quire_engine::table::DbError::NoSuchTable(_)
            | quire_engine::table::DbError::NoSuchDatabase(_) => SqlError::NoSuchTable {
                db: db.clone(),
                table: t.clone(),
            },
            e => e.into(),
        })?;
        let mut def = table.definition()?;
        if !self.hidden.is_empty() {
            let id = def.id;
            def.indexes
                .retain(|ix| !self.hidden.iter().any(|(t, n)| *t == id && *n == ix.name));
        }
        Ok(TableRef {
            alias: alias.unwrap_or(&t).to_string(),
            db,
            name: t,
            def,
            shown: None,
        })
    }
}

pub(crate) fn scope_of(t: &TableRef) -> Scope {
    let (db, name) = t.shown();
    let mut s = Scope::single(&t.alias, db, name, t.def.columns.clone());
    s.tables[0].auto_increment = t.def.auto_increment;
    s
}

/// The one column of a sequence table.
pub(crate) fn seq_column() -> Column {
    Column::new(
        "seq",
        ColumnType::Int {
            width: IntWidth::Big,
            unsigned: true,
        },
    )
}

/// `seq_1_to_N` / `seq_1_to_N_step_S` (MariaDB's Sequence engine).
pub(crate) fn seq_table(name: &str) -> Option<(u64, u64, u64)> {
    let rest = name.strip_prefix("seq_")?;
    let (range, step) = match rest.split_once("_step_") {
        Some((r, s)) => (r, s.parse().ok()?),
        None => (rest, 1u64),
    };
    let (from, to) = range.split_once("_to_")?;
    if step == 0 {
        return None;
    }
    Some((from.parse().ok()?, to.parse().ok()?, step))
}

fn key_flags(t: &TableRef, col: usize) -> u16 {
    let mut f = 0;
    if t.def.primary_key.contains(&col) {
        f |= flags::PRI_KEY | flags::PART_KEY;
    }
    if t.def
        .indexes
        .iter()
        .any(|ix| ix.columns.iter().any(|c| c.column == col))
    {
        f |= flags::PART_KEY;
    }
    if t.def.auto_increment == Some(col) {
        f |= flags::AUTO_INCREMENT;
    }
    for ix in &t.def.indexes {
        if ix.columns.first().is_some_and(|c| c.column == col) {
            f |= if ix.unique && ix.columns.len() == 1 {
                flags::UNIQUE_KEY
            } else {
                flags::MULTIPLE_KEY
            };
        }
    }
    f
}

/// The result column of a computed expression (its type as MariaDB types it:
/// `func/types.rs`).
fn computed_meta(name: String, e: &Expr, scope: Option<&Scope>, aggs: &[AggCall]) -> ColumnMeta {
    let cols = scope.map_or(&[][..], |s| s.columns.as_slice());
    let mut meta = crate::func::types::infer(e, cols, aggs).meta(name);
    if let Expr::Func(Func::Length | Func::CharLength, _) = e {
        meta.flags = flags::BINARY;
    }
    if let Expr::Session(SessionFn::SysVar { name, .. }) = e {
        // MariaDB's system variables are BINARY-flagged numbers (no NUM flag: that one is
        // the client library's), the integers UNSIGNED.
        meta.flags = match crate::vars::var_type(name) {
            crate::vars::VarType::Unsigned => flags::BINARY | flags::UNSIGNED,
            crate::vars::VarType::Bool | crate::vars::VarType::Double => flags::BINARY,
            crate::vars::VarType::Text => 0,
        };
    }
    if crate::func::types::not_null(e, cols, aggs) {
        meta.flags |= flags::NOT_NULL;
    }
    meta
}

/// An implicitly grouped query (aggregates and no GROUP BY) gives its one row even of no
/// rows, the columns then NULL: MariaDB flags a result column NOT NULL only if it stays
/// so with every column of the scope nullable (`SELECT b, COUNT(*)` of a NOT NULL `b`:
/// not NOT NULL; `COUNT(*)`, `1`: NOT NULL).
fn implicit_group_nullability(
    columns: &mut [ColumnMeta],
    items: &[Expr],
    scope: Option<&Scope>,
    aggs: &[AggCall],
) {
    let cols: Vec<Column> = scope
        .map_or(&[][..], |s| s.columns.as_slice())
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.nullable = true;
            c
        })
        .collect();
    for (m, e) in columns.iter_mut().zip(items) {
        if !crate::func::types::not_null(e, &cols, aggs) {
            m.flags &= !flags::NOT_NULL;
        }
    }
}

pub(crate) fn limit_exprs(
    limit_clause: Option<&sql::LimitClause>,
    b: &mut Binder<'_>,
) -> Result<(Option<Expr>, Option<Expr>)> {
    Ok(match limit_clause {
        None => (None, None),
        Some(sql::LimitClause::LimitOffset { limit, offset, .. }) => (
            match limit {
                Some(l) => Some(b.bind(l)?),
                None => None,
            },
            match offset {
                Some(o) => Some(b.bind(&o.value)?),
                None => None,
            },
        ),
        Some(sql::LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(b.bind(limit)?), Some(b.bind(offset)?))
        }
    })
}

/// What a SELECT reads from, bound.
enum Input {
    Dual,
    Seq { from: u64, to: u64, step: u64 },
    Table(Box<TableRef>),
    Join(crate::bind::from::From),
}

/// Binds FROM: nothing, one table (the single-table path sysbench runs), a sequence, or a
/// join.
fn bind_input(
    ctx: &Ctx<'_>,
    from: &[sql::TableWithJoins],
    sub: Option<&SubCtx<'_>>,
) -> Result<(Input, Option<Scope>)> {
    let single = match from {
        [] => return Ok((Input::Dual, None)),
        [twj] if twj.joins.is_empty() => match &twj.relation {
            sql::TableFactor::Table { name, alias, .. } => Some((name, alias)),
            _ => None,
        },
        _ => None,
    };
    // A CTE's name is a derived table (bound with the joins).
    let cte = single.is_some_and(|(name, _)| {
        matches!(object_parts(name).as_deref(), Ok([n]) if ctx.ctes.is_some_and(|c| c.find(n).is_some() || c.is_pending(n) || c.work_for(n).is_some()))
            // A view or an information_schema table is a derived table too.
            || ctx.derived_object(name)
    });
    let single = single.filter(|_| !cte);
    let Some((name, alias)) = single else {
        let f = crate::bind::from::bind_from(ctx, from, sub)?;
        let scope = f.scope.clone();
        return Ok((Input::Join(f), Some(scope)));
    };
    let parts = object_parts(name)?;
    let last = parts.last().cloned().unwrap_or_default();
    let alias = alias.as_ref().map(|a| a.name.value.clone());
    if parts.len() == 1 && last.eq_ignore_ascii_case("dual") {
        return Ok((Input::Dual, None));
    }
    if let Some((from, to, step)) = seq_table(&last) {
        let db = ctx.current_db.unwrap_or_default();
        let scope = Scope::single(
            alias.as_deref().unwrap_or(&last),
            db,
            &last,
            vec![seq_column()],
        );
        return Ok((Input::Seq { from, to, step }, Some(scope)));
    }
    let t = ctx.table(name, alias.as_deref())?;
    let scope = scope_of(&t);
    Ok((Input::Table(Box::new(t)), Some(scope)))
}

/// The result column of joined-row column `c`, if it is a table's or a sequence's.
fn column_meta_at(input: &Input, scope: &Scope, c: usize) -> Option<ColumnMeta> {
    match input {
        Input::Table(t) => t.def.columns.get(c).map(|col| {
            let (db, name) = t.shown();
            types::column_meta(db, name, &t.alias, col, key_flags(t, c))
        }),
        Input::Join(f) => {
            let i = scope.table_of(c)?;
            let st = &scope.tables[i];
            let local = c - st.offset;
            // A LEFT JOIN's inner side may be NULL whatever its columns say (MariaDB drops
            // NOT_NULL there and keeps the other flags, measured).
            let mut null_extended = Vec::new();
            f.tree.null_extended(&mut null_extended);
            let nullable = null_extended.contains(&i);
            let meta = match f.members.get(i)? {
                crate::plan::join::Member::Table(t) => {
                    let col = t.def.columns.get(local)?;
                    Some(types::column_meta(
                        t.shown().0,
                        t.shown().1,
                        &t.alias,
                        col,
                        key_flags(t, local),
                    ))
                }
                crate::plan::join::Member::Seq { .. } => Some(types::column_meta(
                    &st.db,
                    &st.table,
                    &st.alias,
                    &seq_column(),
                    flags::PRI_KEY,
                )),
                // As MariaDB names it: the derived table's alias as its table (and as its
                // original table where the column came from one), the inner item's name as
                // its original name. Drivers read `table` to qualify names (go-sql-driver's
                // columnsWithAlias).
                crate::plan::join::Member::Derived(d) => {
                    d.plan.columns.get(local).cloned().map(|mut m| {
                        if !m.org_table.is_empty() {
                            m.org_table = st.alias.clone();
                        }
                        m.table = st.alias.clone();
                        m.org_name = m.name.clone();
                        m
                    })
                }
            };
            meta.map(|mut m| {
                if nullable {
                    m.flags &= !flags::NOT_NULL;
                }
                m
            })
        }
        Input::Dual | Input::Seq { .. } => None,
    }
}

/// Plans a SELECT (the body of a query).
pub fn select(ctx: &Ctx<'_>, q: &sql::Query, lock: Option<ReadLock>) -> Result<SelectPlan> {
    select_in(ctx, q, lock, None)
}

/// Plans a query: a SELECT, a UNION, a parenthesized query; `outer` is the enclosing
/// query's levels when this one is a subquery (`subquery.rs`).
pub fn select_in(
    ctx: &Ctx<'_>,
    q: &sql::Query,
    lock: Option<ReadLock>,
    outer: Option<&Outer<'_>>,
) -> Result<SelectPlan> {
    if let Some(with) = &q.with {
        let mut defs: Vec<CteDef<'_>> = Vec::new();
        for c in &with.cte_tables {
            let name = c.alias.name.value.clone();
            // MariaDB: 4004 "Duplicate query name" for a name given twice.
            if defs.iter().any(|d| d.0 == name) {
                return Err(SqlError::DuplicateQueryName(name));
            }
            let cols = c
                .alias
                .columns
                .iter()
                .map(|d| d.name.value.clone())
                .collect();
            defs.push((name, cols, &c.query));
        }
        let scope = Ctes {
            defs,
            up: ctx.ctes,
            recursive: with.recursive,
            pending: Vec::new(),
            work: None,
        };
        let inner = Ctx {
            db: ctx.db,
            current_db: ctx.current_db,
            params: ctx.params,
            hidden: ctx.hidden,
            conn: ctx.conn,
            ctes: Some(&scope),
            temps: ctx.temps,
            stats_used: ctx.stats_used,
        };
        let mut body = q.clone();
        body.with = None;
        return select_in(&inner, &body, lock, outer);
    }
    let lock = lock.or_else(|| {
        q.locks.first().map(|l| match l.lock_type {
            sql::LockType::Share => ReadLock::Shared,
            sql::LockType::Update => ReadLock::Exclusive,
        })
    });
    match q.body.as_ref() {
        sql::SetExpr::Select(s) => select_core(
            ctx,
            s,
            q.order_by.as_ref(),
            q.limit_clause.as_ref(),
            lock,
            outer,
        ),
        sql::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            select_in(ctx, inner, lock, outer)
        }
        sql::SetExpr::Query(_) | sql::SetExpr::SetOperation { .. } => {
            crate::stmt::union::plan(ctx, q, lock, outer)
        }
        sql::SetExpr::Values(v) => {
            let mut as_union = q.clone();
            *as_union.body = values_as_union(v)?;
            select_in(ctx, &as_union, lock, outer)
        }
        other => Err(SqlError::Unsupported(other.to_string())),
    }
}

/// MariaDB 10.3's table value constructor as a query (`VALUES (1, 2), (3, 4)`, alone, in
/// a UNION, as a derived table, in `IN (VALUES …)`): a UNION ALL of one-row SELECTs, which
/// gives it MariaDB's result: the columns named by the first row's values as a SELECT of
/// them names its items, and each column's type aggregated over the rows as a UNION's.
/// Rows of different lengths are 4099, an empty row 4141. (INSERT's own VALUES lists do
/// not come here.)
pub(crate) fn values_as_union(v: &sql::Values) -> Result<sql::SetExpr> {
    let width = v.rows.first().map_or(0, |r| r.content.len());
    if width == 0 {
        return Err(SqlError::Raised {
            code: 4141,
            message: "Row with no elements is not allowed in table value constructor in this \
                      context"
                .into(),
        });
    }
    if v.rows.iter().any(|r| r.content.len() != width) {
        return Err(SqlError::Raised {
            code: 4099,
            message: "The used table value constructor has a different number of values".into(),
        });
    }
    let (shell, _) = crate::parse::parse_one("SELECT 1")?;
    let sql::Statement::Query(q) = shell else {
        return Err(SqlError::Unsupported("VALUES".into()));
    };
    let sql::SetExpr::Select(template) = *q.body else {
        return Err(SqlError::Unsupported("VALUES".into()));
    };
    let mut body: Option<sql::SetExpr> = None;
    for r in &v.rows {
        let mut sel = template.clone();
        sel.projection = r
            .content
            .iter()
            .cloned()
            .map(sql::SelectItem::UnnamedExpr)
            .collect();
        let one = sql::SetExpr::Select(sel);
        body = Some(match body {
            None => one,
            Some(left) => sql::SetExpr::SetOperation {
                op: sql::SetOperator::Union,
                set_quantifier: sql::SetQuantifier::All,
                left: Box::new(left),
                right: Box::new(one),
            },
        });
    }
    body.ok_or_else(|| SqlError::Unsupported("VALUES".into()))
}

/// Plans one SELECT with the ORDER BY and LIMIT of its query.
pub(crate) fn select_core(
    ctx: &Ctx<'_>,
    s: &sql::Select,
    order_by: Option<&sql::OrderBy>,
    limit_clause: Option<&sql::LimitClause>,
    lock: Option<ReadLock>,
    outer: Option<&Outer<'_>>,
) -> Result<SelectPlan> {
    if s.into.is_some() {
        // A top-level SELECT's INTO is taken off before planning (`user_vars.rs`); one in
        // a subquery, a view or a prepared statement is not supported yet.
        return Err(SqlError::Unsupported("SELECT … INTO".into()));
    }
    let subctx = SubCtx::new(ctx, outer);
    let sub = Some(&subctx);
    // A view read alone may take WHERE's conditions into its query (`view::pushdown`).
    let (input, scope) = crate::view::pushdown::offering(s, || bind_input(ctx, &s.from, sub))?;
    let tref = match &input {
        Input::Table(t) => Some((**t).clone()),
        _ => None,
    };
    let mut aggs: Vec<AggCall> = Vec::new();
    // WHERE: no aggregates.
    let filter = match &s.selection {
        Some(w) => Some(
            Binder {
                sub,
                scope: scope.as_ref(),
                params: ctx.params,
                aggs: None,
                context: "WHERE",
                conn: ctx.conn,
            }
            .bind(w)?,
        ),
        None => None,
    };
    // The select list.
    let mut items = Vec::new();
    let mut columns = Vec::new();
    let mut aliases: Vec<String> = Vec::new();
    for it in &s.projection {
        match it {
            sql::SelectItem::Wildcard(_) | sql::SelectItem::QualifiedWildcard(..) => {
                let Some(sc) = &scope else {
                    return Err(SqlError::Unsupported("* without a table".into()));
                };
                let cols: Vec<usize> = match it {
                    sql::SelectItem::QualifiedWildcard(
                        sql::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => {
                        let parts = object_parts(n)?;
                        let (db, q) = match parts.as_slice() {
                            [q] => (None, q.as_str()),
                            [d, q] => (Some(d.as_str()), q.as_str()),
                            _ => return Err(SqlError::Unsupported(n.to_string())),
                        };
                        let t = sc.tables.iter().find(|t| t.named(db, q)).ok_or_else(|| {
                            SqlError::UnknownTable(format!(
                                "{}.{q}",
                                db.or(ctx.current_db).unwrap_or_default()
                            ))
                        })?;
                        (t.offset..t.offset + t.len).collect()
                    }
                    sql::SelectItem::QualifiedWildcard(..) => {
                        return Err(SqlError::Unsupported(it.to_string()))
                    }
                    _ => sc.visible.clone(),
                };
                for c in cols {
                    items.push(Expr::Column(c));
                    let col = &sc.columns[c];
                    columns.push(column_meta_at(&input, sc, c).unwrap_or_else(|| {
                        computed_meta(col.name.clone(), &Expr::Column(c), Some(sc), &aggs)
                    }));
                    aliases.push(col.name.clone());
                }
            }
            sql::SelectItem::UnnamedExpr(e) | sql::SelectItem::ExprWithAlias { expr: e, .. } => {
                let alias = match it {
                    sql::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                    _ => None,
                };
                let bound = Binder {
                    sub,
                    scope: scope.as_ref(),
                    params: ctx.params,
                    aggs: Some(&mut aggs),
                    context: "SELECT",
                    conn: ctx.conn,
                }
                .bind(e)?;
                let name = alias.clone().unwrap_or_else(|| expr_name(e));
                let meta = match (&bound, &scope) {
                    (Expr::Column(c), Some(sc)) => match column_meta_at(&input, sc, *c) {
                        Some(mut m) => {
                            m.name = name.clone();
                            m
                        }
                        None => computed_meta(name.clone(), &bound, scope.as_ref(), &aggs),
                    },
                    _ => computed_meta(name.clone(), &bound, scope.as_ref(), &aggs),
                };
                columns.push(meta);
                aliases.push(name);
                items.push(bound);
            }
            other => return Err(SqlError::Unsupported(other.to_string())),
        }
    }
    let grouped_implicitly = aggs.iter().any(|a| a.over.is_none())
        && matches!(&s.group_by, sql::GroupByExpr::Expressions(es, _) if es.is_empty());
    if grouped_implicitly {
        implicit_group_nullability(&mut columns, &items, scope.as_ref(), &aggs);
    }
    let mut rollup = false;
    let group_by = match &s.group_by {
        sql::GroupByExpr::Expressions(es, mods) => {
            for m in mods {
                match m {
                    sql::GroupByWithModifier::Rollup if !es.is_empty() => rollup = true,
                    other => return Err(SqlError::Unsupported(format!("GROUP BY {other}"))),
                }
            }
            let mut out = Vec::new();
            for e in es {
                out.push(resolve_output_ref(e, &items, &aliases).map_or_else(
                    || {
                        Binder {
                            sub,
                            scope: scope.as_ref(),
                            params: ctx.params,
                            aggs: None,
                            context: "GROUP BY",
                            conn: ctx.conn,
                        }
                        .bind(e)
                    },
                    Ok,
                )?);
            }
            out
        }
        sql::GroupByExpr::All(_) => return Err(SqlError::Unsupported("GROUP BY ALL".into())),
    };
    let having = match &s.having {
        Some(h) => Some(bind_with_aliases(
            sub,
            h,
            scope.as_ref(),
            ctx,
            &mut aggs,
            &items,
            &aliases,
            "HAVING",
        )?),
        None => None,
    };
    let mut order: Vec<(Expr, bool)> = Vec::new();
    if let Some(ob) = order_by {
        match &ob.kind {
            sql::OrderByKind::Expressions(es) => {
                for o in es {
                    let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
                    let e = match resolve_output_ref(&o.expr, &items, &aliases) {
                        Some(e) => e,
                        None => bind_with_aliases(
                            sub,
                            &o.expr,
                            scope.as_ref(),
                            ctx,
                            &mut aggs,
                            &items,
                            &aliases,
                            "ORDER BY",
                        )?,
                    };
                    order.push((e, desc));
                }
            }
            sql::OrderByKind::All(_) => return Err(SqlError::Unsupported("ORDER BY ALL".into())),
        }
    }
    if rollup && !order.is_empty() {
        // MariaDB 10.11 sorts WITH ROLLUP's rows only by GROUP BY.
        return Err(SqlError::WrongUsage(
            "CUBE/ROLLUP".into(),
            "ORDER BY".into(),
        ));
    }
    let distinct = match &s.distinct {
        None | Some(sql::Distinct::All) => false,
        Some(sql::Distinct::Distinct) => true,
        Some(sql::Distinct::On(_)) => return Err(SqlError::Unsupported("DISTINCT ON".into())),
    };
    let mut b = Binder {
        sub,
        scope: None,
        params: ctx.params,
        aggs: None,
        context: "LIMIT",
        conn: ctx.conn,
    };
    let (limit, offset) = limit_exprs(limit_clause, &mut b)?;
    // WINDOW w AS (…): bound in the query's scope; names resolved by `window::plan`.
    let mut named = Vec::with_capacity(s.named_window.len());
    for sql::NamedWindowDefinition(name, def) in &s.named_window {
        let over = match def {
            sql::NamedWindowExpr::WindowSpec(spec) => Binder {
                sub,
                scope: scope.as_ref(),
                params: ctx.params,
                aggs: Some(&mut aggs),
                context: "window specification",
                conn: ctx.conn,
            }
            .window_spec(spec)?,
            sql::NamedWindowExpr::NamedWindow(w) => crate::window::Over {
                name: Some(w.value.clone()),
                bare: true,
                ..Default::default()
            },
        };
        named.push((name.value.clone(), over));
    }
    let window = crate::window::plan(
        &mut aggs,
        &named,
        scope.as_ref().map_or(&[][..], |s| s.columns.as_slice()),
    )?
    .map(Box::new);
    let aggregated = aggs.iter().any(|a| a.over.is_none()) || !group_by.is_empty();
    if aggregated && ctx.conn.mode.has(crate::diag::SqlMode::ONLY_FULL_GROUP_BY) {
        if let Some(sc) = &scope {
            full_group_by(sc, &items, &group_by, &order)?;
        }
    }
    // Every column the query reads (rule 4, covering).
    let mut needed = Vec::new();
    {
        let mut note = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Column(c) = x {
                    needed.push(*c);
                }
            })
        };
        items.iter().for_each(&mut note);
        group_by.iter().for_each(&mut note);
        having.iter().for_each(&mut note);
        order.iter().for_each(|(e, _)| note(e));
        for a in &aggs {
            a.args().for_each(&mut note);
            a.order.iter().for_each(|(e, _, _)| note(e));
            if let Some(o) = &a.over {
                o.partition.iter().for_each(|(e, _)| note(e));
                o.order.iter().for_each(|(e, _, _)| note(e));
            }
        }
        if let Input::Join(f) = &input {
            on_conditions(&f.tree, &mut note);
        }
    }
    // The columns WHERE alone reads come last: a read whose key range is exactly WHERE
    // does not decode them (`SelectPlan::read_columns_unfiltered`).
    let unfiltered = needed.len();
    filter.iter().for_each(|e| {
        e.walk(&mut |x| {
            if let Expr::Column(c) = x {
                needed.push(*c);
            }
        })
    });
    // ORDER BY as plain columns (an index may deliver it).
    let order_cols: Option<Vec<(usize, bool)>> = order
        .iter()
        .map(|(e, d)| match e {
            Expr::Column(c) => Some((*c, *d)),
            _ => None,
        })
        .collect();
    let mut access = match &tref {
        Some(t) => plan::choose_access(&t.def, filter.as_ref()),
        None => Access::full_scan(),
    };
    let mut sort = order.clone();
    let mut filter = filter;
    // The columns a base table's reads decode: those the query reads (the list the
    // covering rule trusts), unless that is all of them.
    let mask_of = |cols: &[usize]| match &input {
        Input::Table(t) if cols.iter().all(|&c| c < t.def.columns.len()) => {
            let mut mask = vec![false; t.def.columns.len()];
            cols.iter().for_each(|&c| mask[c] = true);
            (!mask.iter().all(|&m| m)).then(|| std::sync::Arc::from(mask))
        }
        _ => None,
    };
    let read_columns = mask_of(&needed);
    let read_columns_unfiltered = match needed.get(..unfiltered) {
        Some(u) if u.len() < needed.len() => {
            mask_of(u).filter(|m| Some(m) != read_columns.as_ref())
        }
        _ => None,
    };
    let source = match input {
        Input::Dual => Source::Dual,
        Input::Seq { from, to, step } => Source::Seq { from, to, step },
        Input::Table(t) => {
            if let (false, None, Some(cols)) = (aggregated, &window, &order_cols) {
                // The index may deliver ORDER BY, but DISTINCT of other columns would reorder.
                plan::order_by_index(&t.def, &mut access, cols, limit.is_some());
                if access.ordered {
                    sort.clear();
                }
            }
            // Rule 4: every column the query reads is in the index (and the primary key).
            access.covering = lock.is_none() && plan::covering(&t.def, &access, &needed);
            Source::Table(t)
        }
        Input::Join(f) => {
            let mut j = crate::plan::join::plan(
                &f.scope,
                &f.members,
                &f.tree,
                filter.as_ref(),
                Some(ctx.stats_source()),
            );
            // Every WHERE condition is checked at a step of the join.
            filter = None;
            if let (false, None, Some(cols), Some(first)) =
                (aggregated, &window, &order_cols, j.steps.first_mut())
            {
                // The first table's index may deliver ORDER BY: rows leave the join in its
                // order, so LIMIT stops it early.
                let local: Option<Vec<(usize, bool)>> = cols
                    .iter()
                    .map(|&(c, d)| {
                        (c >= first.offset && c < first.offset + first.len)
                            .then(|| (c - first.offset, d))
                    })
                    .collect();
                if let (Some(local), crate::plan::join::Member::Table(t)) =
                    (local, &f.members[first.member])
                {
                    plan::order_by_index(&t.def, &mut first.access, &local, limit.is_some());
                    if first.access.ordered {
                        sort.clear();
                        // Blocks would reorder the rows.
                        j.steps.iter_mut().for_each(|s| s.blockable = false);
                    }
                }
            }
            for st in &mut j.steps {
                if let crate::plan::join::Member::Table(t) = &j.members[st.member] {
                    let local: Vec<usize> = needed
                        .iter()
                        .filter(|&&c| c >= st.offset && c < st.offset + st.len)
                        .map(|c| c - st.offset)
                        .collect();
                    st.access.covering =
                        lock.is_none() && plan::covering(&t.def, &st.access, &local);
                }
            }
            Source::Join(Box::new(j))
        }
    };
    // The collation each sort key, group key and output column compares in.
    let scope_cols: &[Column] = scope.as_ref().map_or(&[], |s| s.columns.as_slice());
    // An ENUM sorts by its member index, as MariaDB's (an index on it is in that order).
    let sort: Vec<(Expr, bool)> = sort
        .into_iter()
        .map(|(e, d)| (crate::bind::enum_number(e, scope_cols), d))
        .collect();
    let coll = |e: &Expr| crate::bind::derive_collation(e, scope_cols, ctx.conn.coll).0;
    let sort_colls = sort.iter().map(|(e, _)| coll(e)).collect();
    let group_colls = group_by.iter().map(coll).collect();
    let item_colls = items.iter().map(coll).collect();
    let item_derived = items
        .iter()
        .map(|e| crate::bind::derive_collation(e, scope_cols, ctx.conn.coll))
        .collect();
    let item_tys = items
        .iter()
        .map(|e| crate::func::types::infer(e, scope_cols, &aggs))
        .collect();
    Ok(SelectPlan {
        item_tys,
        item_derived,
        subqueries: subctx.take(),
        source,
        access,
        filter,
        items,
        item_colls,
        columns,
        aggs,
        group_by,
        group_colls,
        having,
        distinct,
        rollup,
        sort,
        sort_colls,
        limit,
        offset,
        lock,
        lock_wait: Default::default(),
        window,
        read_columns,
        read_columns_unfiltered,
    })
}

/// ONLY_FULL_GROUP_BY as MariaDB checks it: a select-list column outside an aggregate must
/// be a GROUP BY expression or in one as a column (1055); with no GROUP BY, any such column
/// in the select list or ORDER BY is 1140. No functional dependence (MariaDB has none).
fn full_group_by(
    scope: &Scope,
    items: &[Expr],
    group_by: &[Expr],
    order: &[(Expr, bool)],
) -> Result<()> {
    let check = |e: &Expr| -> Result<()> {
        if group_by.contains(e) {
            return Ok(());
        }
        let mut bad = None;
        e.walk(&mut |x| {
            if let Expr::Column(c) = x {
                if bad.is_none() && !group_by.contains(x) {
                    bad = Some(*c);
                }
            }
        });
        match bad {
            None => Ok(()),
            Some(_) if group_by.is_empty() => Err(SqlError::MixOfGroupColumns),
            Some(c) => {
                let t = scope.table_of(c).and_then(|i| scope.tables.get(i));
                Err(SqlError::NotInGroupBy(format!(
                    "{}.{}.{}",
                    t.map_or("", |t| t.db.as_str()),
                    t.map_or("", |t| t.alias.as_str()),
                    scope.columns.get(c).map_or("?", |c| c.name.as_str())
                )))
            }
        }
    };
    for e in items {
        check(e)?;
    }
    if group_by.is_empty() {
        for (e, _) in order {
            check(e)?;
        }
    }
    Ok(())
}

/// Calls `f` with each ON condition of a join tree.
fn on_conditions(t: &crate::bind::from::JoinTree, f: &mut dyn FnMut(&Expr)) {
    use crate::bind::from::JoinTree;
    match t {
        JoinTree::Leaf(_) => {}
        JoinTree::Inner(children, conds) => {
            conds.iter().for_each(&mut *f);
            children.iter().for_each(|c| on_conditions(c, f));
        }
        JoinTree::Left(o, i, conds) => {
            conds.iter().for_each(&mut *f);
            on_conditions(o, f);
            on_conditions(i, f);
        }
    }
}

/// ORDER BY 2 / GROUP BY alias: a reference to the select list.
fn resolve_output_ref(e: &sql::Expr, items: &[Expr], aliases: &[String]) -> Option<Expr> {
    match e {
        sql::Expr::Value(v) => match &v.value {
            sql::Value::Number(n, _) => {
                let i: usize = n.parse().ok()?;
                items.get(i.checked_sub(1)?).cloned()
            }
            _ => None,
        },
        sql::Expr::Identifier(i) => {
            let pos = aliases
                .iter()
                .position(|a| a.eq_ignore_ascii_case(&i.value))?;
            // A table column of the same name wins only if it is the same expression.
            Some(items[pos].clone())
        }
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn bind_with_aliases(
    sub: Option<&SubCtx<'_>>,
    e: &sql::Expr,
    scope: Option<&Scope>,
    ctx: &Ctx<'_>,
    aggs: &mut Vec<AggCall>,
    items: &[Expr],
    aliases: &[String],
    context: &'static str,
) -> Result<Expr> {
    let r = Binder {
        sub,
        scope,
        params: ctx.params,
        aggs: Some(aggs),
        context,
        conn: ctx.conn,
    }
    .bind(e);
    match r {
        Err(SqlError::UnknownColumn { .. }) => {
            resolve_output_ref(e, items, aliases).ok_or_else(|| SqlError::UnknownColumn {
                column: e.to_string(),
                context: context.into(),
            })
        }
        other => other,
    }
}

pub fn insert(ctx: &Ctx<'_>, ins: &sql::Insert) -> Result<InsertPlan> {
    let name = match &ins.table {
        sql::TableObject::TableName(n) => n,
        other => return Err(SqlError::Unsupported(other.to_string())),
    };
    // MySQL 8's new-row alias (`VALUES (…) AS new`): MariaDB 10.11's grammar has none.
    if let Some(a) = &ins.insert_alias {
        return Err(SqlError::Parse {
            near: format!("AS {} ON DUPLICATE KEY UPDATE", a.row_alias),
            line: 1,
        });
    }
    let on_dup = match &ins.on {
        None => None,
        Some(sql::OnInsert::DuplicateKeyUpdate(list)) if !ins.replace_into => Some(list),
        // REPLACE has no such clause in MariaDB's grammar.
        Some(on @ sql::OnInsert::DuplicateKeyUpdate(_)) => {
            return Err(SqlError::Parse {
                near: on.to_string().trim_start().to_string(),
                line: 1,
            })
        }
        Some(other) => return Err(SqlError::Unsupported(other.to_string())),
    };
    let t = ctx.dml_table(name, None, "INSERT")?;
    let ncols = t.def.columns.len();
    // Source columns in order → table columns.
    let targets: Vec<usize> = if !ins.columns.is_empty() {
        let scope = scope_of(&t);
        let mut v = Vec::new();
        for c in &ins.columns {
            let parts = object_parts(c)?;
            let last = parts.last().cloned().unwrap_or_default();
            let i = scope.resolve(None, &last, "INSERT INTO")?;
            if v.contains(&i) {
                return Err(SqlError::DuplicateColumn(last));
            }
            v.push(i);
        }
        v
    } else if !ins.assignments.is_empty() {
        let scope = scope_of(&t);
        let mut v = Vec::new();
        for a in &ins.assignments {
            let sql::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::Unsupported(a.to_string()));
            };
            let parts = object_parts(n)?;
            v.push(scope.resolve(None, parts.last().map_or("", |s| s.as_str()), "INSERT INTO")?);
        }
        v
    } else {
        (0..ncols).collect()
    };
    let mut map = vec![None; ncols];
    for (src, &col) in targets.iter().enumerate() {
        map[col] = Some(src);
    }
    let subctx = SubCtx::new(ctx, None);
    let target_scope = scope_of(&t);
    // One value of VALUES or SET for table column `col`: DEFAULT is what the column gets
    // when left out; `DEFAULT(c)` in an expression reads the table's columns.
    let value = |e: &sql::Expr, col: usize| -> Result<Expr> {
        if crate::bind::is_default_keyword(e) {
            let auto = t.def.auto_increment == Some(col);
            return crate::bind::insert_default_expr(
                &t.def.columns[col],
                auto,
                ctx.params,
                ctx.conn,
            );
        }
        crate::bind::with_insert_target(target_scope.clone(), || {
            Binder {
                sub: Some(&subctx),
                scope: None,
                params: ctx.params,
                aggs: None,
                context: "VALUES",
                conn: ctx.conn,
            }
            .bind(e)
        })
    };
    let source = if !ins.assignments.is_empty() {
        let mut row = Vec::new();
        for (a, &col) in ins.assignments.iter().zip(&targets) {
            row.push(value(&a.value, col)?);
        }
        InsertSource::Values(vec![row])
    } else {
        let Some(q) = &ins.source else {
            return Err(SqlError::Unsupported("INSERT without values".into()));
        };
        match q.body.as_ref() {
            sql::SetExpr::Values(vals) => {
                let mut rows = Vec::with_capacity(vals.rows.len());
                for (n, r) in vals.rows.iter().enumerate() {
                    let r = &r.content;
                    // `VALUES ()` without a column list (or with `()`) is every column's
                    // DEFAULT, as MariaDB.
                    if r.is_empty() && ins.columns.is_empty() {
                        let mut row = Vec::with_capacity(targets.len());
                        for &col in &targets {
                            let auto = t.def.auto_increment == Some(col);
                            row.push(crate::bind::insert_default_expr(
                                &t.def.columns[col],
                                auto,
                                ctx.params,
                                ctx.conn,
                            )?);
                        }
                        rows.push(row);
                        continue;
                    }
                    if r.len() != targets.len() {
                        return Err(SqlError::ValueCount(n as u64 + 1));
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for (e, &col) in r.iter().zip(&targets) {
                        row.push(value(e, col)?);
                    }
                    rows.push(row);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let p = select(ctx, q, None)?;
                if p.items.len() != targets.len() {
                    return Err(SqlError::ValueCount(1));
                }
                InsertSource::Select(Box::new(p))
            }
        }
    };
    // ON DUPLICATE KEY UPDATE of an INSERT … SELECT names the SELECT's tables too.
    let select_from = match (&on_dup, &ins.source) {
        (Some(_), Some(q)) if ins.assignments.is_empty() && q.with.is_none() => {
            match q.body.as_ref() {
                sql::SetExpr::Select(sel) if !sel.from.is_empty() && sel.distinct.is_none() => {
                    Some((q, sel))
                }
                _ => None,
            }
        }
        _ => None,
    };
    let source_scope = match select_from {
        // Bound again for its names alone (FROM DUAL has none).
        Some((_, sel)) => bind_input(ctx, &sel.from, Some(&SubCtx::new(ctx, None)))?.1,
        None => None,
    };
    let mut defaults = Vec::with_capacity(ncols);
    for c in &t.def.columns {
        defaults.push(match &c.default {
            Some(text) => Some(crate::tz::default_expr(c, bind_default(text, ctx)?)),
            None => None,
        });
    }
    let on_dup = match on_dup {
        Some(list) => Some(on_duplicate(ctx, &subctx, &t, list, source_scope.as_ref())?),
        None => None,
    };
    // The assignments read the SELECT's tables: plan it again with their columns after
    // its items (hidden from the insert, which takes the first `targets.len()`).
    let source = match (&on_dup, select_from, &source_scope) {
        (Some(od), Some((q, sel)), Some(scope)) if od.source_at.is_some() => {
            let mut sel = sel.clone();
            for st in &scope.tables {
                for c in &scope.columns[st.offset..st.offset + st.len] {
                    sel.projection.push(sql::SelectItem::UnnamedExpr(
                        sql::Expr::CompoundIdentifier(vec![
                            sql::Ident::new(&st.alias),
                            sql::Ident::new(&c.name),
                        ]),
                    ));
                }
            }
            let mut q = q.clone();
            *q.body = sql::SetExpr::Select(sel);
            InsertSource::Select(Box::new(select(ctx, &q, None)?))
        }
        _ => source,
    };
    let on_dup = on_dup.map(|od| OnDuplicate {
        source_at: od.source_at.map(|_| targets.len()),
        ..od
    });
    let mut subqueries = subctx.take();
    let returning = match &ins.returning {
        Some(items) => Some(returning(ctx, items, name, None, &mut subqueries)?),
        None => None,
    };
    Ok(InsertPlan {
        on_dup,
        table: t,
        map,
        source,
        defaults,
        replace: ins.replace_into,
        ignore: ins.ignore,
        subqueries,
        returning,
    })
}

/// Binds the assignments of ON DUPLICATE KEY UPDATE over the existing row of `t`, with
/// `VALUES(c)` (and `VALUE(c)`) reading the row the statement would have inserted
/// ([`OnDuplicate`]). MariaDB's errors: 1054 `in 'UPDATE'` for an unknown target column,
/// `in 'SELECT'` for one read.
fn on_duplicate(
    ctx: &Ctx<'_>,
    subctx: &SubCtx<'_>,
    t: &TableRef,
    list: &[sql::Assignment],
    source: Option<&crate::bind::Scope>,
) -> Result<OnDuplicate> {
    let width = t.def.columns.len();
    let target = scope_of(t);
    // The row the statement would insert follows the existing one; no name reaches it (it
    // is not visible, and its empty alias is no identifier): only VALUES(c) does.
    let mut scope = scope_of(t);
    scope.columns.extend(t.def.columns.iter().cloned());
    scope.tables.push(crate::bind::ScopeTable {
        alias: String::new(),
        db: String::new(),
        table: String::new(),
        aliased: true,
        offset: width,
        len: width,
        auto_increment: None,
    });
    // Then an INSERT … SELECT's tables, as MariaDB resolves names there: a name both the
    // table and a SELECT's table have is 1052.
    if let Some(src) = source {
        let at = 2 * width;
        scope.columns.extend(src.columns.iter().cloned());
        scope
            .tables
            .extend(src.tables.iter().cloned().map(|mut st| {
                st.offset += at;
                st
            }));
        scope.visible.extend(src.visible.iter().map(|c| c + at));
    }
    let mut sets = Vec::with_capacity(list.len());
    for a in list {
        let sql::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::Unsupported(a.to_string()));
        };
        let parts = object_parts(n)?;
        let (q, c) = match parts.as_slice() {
            [c] => (None, c.as_str()),
            [q, c] | [_, q, c] => (Some(q.as_str()), c.as_str()),
            _ => return Err(SqlError::Unsupported(n.to_string())),
        };
        // The column assigned is the target table's, whatever the SELECT's tables hold.
        let col = target.resolve(q, c, "UPDATE")?;
        let e = if crate::bind::is_default_keyword(&a.value) {
            scope.default_of(col, ctx.params, ctx.conn)?
        } else {
            crate::bind::with_insert_values(width, || {
                Binder {
                    sub: Some(subctx),
                    scope: Some(&scope),
                    params: ctx.params,
                    aggs: None,
                    context: "SELECT",
                    conn: ctx.conn,
                }
                .bind(&a.value)
            })?
        };
        sets.push((col, e));
    }
    let mut reads_source = false;
    for (_, e) in &sets {
        e.walk(&mut |x| {
            if matches!(x, Expr::Column(c) if *c >= 2 * width) {
                reads_source = true;
            }
        });
    }
    Ok(OnDuplicate {
        sets,
        // Its final value (where the SELECT's row carries them) is set by the caller.
        source_at: reads_source.then_some(2 * width),
    })
}

/// Binds a RETURNING list over table `name` (as `alias`), adding its subqueries to the
/// statement's. MariaDB's errors: 1054 `in 'RETURNING'` for an unknown column, 1111 for
/// an aggregate; a window function is refused as MariaDB's grammar refuses it.
fn returning(
    ctx: &Ctx<'_>,
    items: &[sql::SelectItem],
    name: &sql::ObjectName,
    alias: Option<&sql::TableAlias>,
    subqueries: &mut Vec<std::sync::Arc<crate::subquery::Subquery>>,
) -> Result<Returning> {
    let shell = || SqlError::Unsupported("RETURNING".into());
    let (stmt, _) = crate::parse::parse_one("SELECT 1 FROM t")?;
    let sql::Statement::Query(mut q) = stmt else {
        return Err(shell());
    };
    let sql::SetExpr::Select(sel) = q.body.as_mut() else {
        return Err(shell());
    };
    sel.projection = items.to_vec();
    match sel.from.first_mut().map(|f| &mut f.relation) {
        Some(sql::TableFactor::Table {
            name: n, alias: a, ..
        }) => {
            *n = name.clone();
            *a = alias.cloned();
        }
        _ => return Err(shell()),
    }
    let p = select(ctx, &q, None).map_err(|e| match e {
        SqlError::UnknownColumn { column, context } if context == "SELECT" => {
            SqlError::UnknownColumn {
                column,
                context: "RETURNING".into(),
            }
        }
        e => e,
    })?;
    if !p.aggs.is_empty() {
        return Err(SqlError::InvalidGroupFunction);
    }
    if p.window.is_some() {
        return Err(SqlError::Unsupported(
            "a window function in RETURNING".into(),
        ));
    }
    subqueries.extend(p.subqueries);
    Ok(Returning {
        items: p.items,
        columns: p.columns,
    })
}

/// Binds an optional clause (WHERE, LIMIT) of UPDATE or DELETE.
fn bind_opt(
    sub: Option<&SubCtx<'_>>,
    e: Option<&sql::Expr>,
    scope: Option<&Scope>,
    ctx: &Ctx<'_>,
    context: &'static str,
) -> Result<Option<Expr>> {
    e.map(|e| {
        Binder {
            sub,
            scope,
            params: ctx.params,
            aggs: None,
            context,
            conn: ctx.conn,
        }
        .bind(e)
    })
    .transpose()
}

/// A DEFAULT kept in the catalog as SQL text, bound.
fn bind_default(text: &str, ctx: &Ctx<'_>) -> Result<Expr> {
    crate::bind::bind_default_text(text, ctx.params, ctx.conn)
}

fn single_table(twj: &sql::TableWithJoins) -> Result<(&sql::ObjectName, Option<String>)> {
    if !twj.joins.is_empty() {
        return Err(SqlError::Unsupported(
            "multi-table UPDATE and DELETE".into(),
        ));
    }
    match &twj.relation {
        sql::TableFactor::Table { name, alias, .. } => {
            Ok((name, alias.as_ref().map(|a| a.name.value.clone())))
        }
        other => Err(SqlError::Unsupported(other.to_string())),
    }
}

/// Plans an UPDATE: of one table, or of a join.
pub fn update_stmt(ctx: &Ctx<'_>, u: &sql::Update) -> Result<Planned> {
    let one = u.table.joins.is_empty()
        && u.from.is_none()
        && matches!(u.table.relation, sql::TableFactor::Table { .. });
    if one {
        return update(ctx, u).map(Planned::Update);
    }
    if !u.order_by.is_empty() || u.limit.is_some() {
        return Err(SqlError::Unsupported(
            "multi-table UPDATE with ORDER BY or LIMIT".into(),
        ));
    }
    // `UPDATE a, b …` reaches here as `UPDATE a FROM b …` (parse.rs): one comma list.
    let mut from = vec![u.table.clone()];
    match &u.from {
        Some(sql::UpdateTableFromKind::BeforeSet(rest)) => from.extend(rest.iter().cloned()),
        Some(sql::UpdateTableFromKind::AfterSet(_)) => {
            return Err(SqlError::Unsupported("UPDATE … SET … FROM".into()))
        }
        None => {}
    }
    let subctx = SubCtx::new(ctx, None);
    let f = crate::bind::from::bind_from(ctx, &from, Some(&subctx))?;
    let mut members: Vec<usize> = Vec::new();
    let mut sets = Vec::new();
    for a in &u.assignments {
        let sql::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::Unsupported(a.to_string()));
        };
        let parts = object_parts(n)?;
        let (db, q, c) = match parts.as_slice() {
            [c] => (None, None, c.as_str()),
            [q, c] => (None, Some(q.as_str()), c.as_str()),
            [d, q, c] => (Some(d.as_str()), Some(q.as_str()), c.as_str()),
            _ => return Err(SqlError::Unsupported(n.to_string())),
        };
        let col = f.scope.resolve_in(db, q, c, "SET")?;
        let m = f
            .scope
            .table_of(col)
            .ok_or_else(|| SqlError::Unsupported(n.to_string()))?;
        let target = match members.iter().position(|&x| x == m) {
            Some(i) => i,
            None => {
                members.push(m);
                members.len() - 1
            }
        };
        let e = if crate::bind::is_default_keyword(&a.value) {
            f.scope.default_of(col, ctx.params, ctx.conn)?
        } else {
            Binder {
                sub: Some(&subctx),
                scope: Some(&f.scope),
                params: ctx.params,
                aggs: None,
                context: "SET",
                conn: ctx.conn,
            }
            .bind(&a.value)?
        };
        sets.push((target, col - f.scope.tables[m].offset, e));
    }
    let filter = bind_opt(
        Some(&subctx),
        u.selection.as_ref(),
        Some(&f.scope),
        ctx,
        "WHERE",
    )?;
    let (select, targets) = join_dml(ctx, f, filter, &members, "UPDATE", subctx.take())?;
    Ok(Planned::UpdateJoin(JoinDmlPlan {
        select,
        targets,
        sets,
        ignore: crate::parse::update_is_ignore(u),
    }))
}

/// The join a multi-table UPDATE or DELETE reads, and the tables it changes (FROM indexes
/// `members`).
fn join_dml(
    ctx: &Ctx,
    f: crate::bind::from::From,
    filter: Option<Expr>,
    members: &[usize],
    what: &str,
    subqueries: Vec<std::sync::Arc<crate::subquery::Subquery>>,
) -> Result<(SelectPlan, Vec<JoinTarget>)> {
    use crate::plan::join::Member;
    let mut targets = Vec::new();
    for &m in members {
        let Member::Table(t) = &f.members[m] else {
            return Err(SqlError::Unsupported(format!(
                "{what} of {}",
                f.scope.tables[m].table
            )));
        };
        let slot = f.members[..m]
            .iter()
            .filter(|x| matches!(x, Member::Table(_)))
            .count();
        targets.push(JoinTarget {
            table: (**t).clone(),
            offset: f.scope.tables[m].offset,
            slot,
        });
    }
    let mut j = crate::plan::join::plan(
        &f.scope,
        &f.members,
        &f.tree,
        filter.as_ref(),
        Some(ctx.stats_source()),
    );
    for st in &mut j.steps {
        st.exclusive = members.contains(&st.member);
    }
    let width = f.scope.columns.len();
    let select = SelectPlan {
        source: Source::Join(Box::new(j)),
        access: Access::full_scan(),
        filter: None,
        items: (0..width).map(Expr::Column).collect(),
        item_colls: vec![crate::bind::LITERAL_COLLATION; width],
        item_tys: Vec::new(),
        item_derived: Vec::new(),
        subqueries,
        columns: Vec::new(),
        aggs: Vec::new(),
        group_by: Vec::new(),
        group_colls: Vec::new(),
        having: None,
        distinct: false,
        rollup: false,
        sort: Vec::new(),
        sort_colls: Vec::new(),
        limit: None,
        offset: None,
        lock: Some(ReadLock::Shared),
        lock_wait: Default::default(),
        read_columns: None,
        read_columns_unfiltered: None,
        window: None,
    };
    Ok((select, targets))
}

pub fn update(ctx: &Ctx<'_>, u: &sql::Update) -> Result<UpdatePlan> {
    if u.from.is_some() {
        return Err(SqlError::Unsupported("UPDATE … FROM".into()));
    }
    let (name, alias) = single_table(&u.table)?;
    let t = ctx.dml_table(name, alias.as_deref(), "UPDATE")?;
    let scope = scope_of(&t);
    let subctx = SubCtx::new(ctx, None);
    let mut sets = Vec::new();
    for a in &u.assignments {
        let sql::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::Unsupported(a.to_string()));
        };
        let parts = object_parts(n)?;
        let (q, c) = match parts.as_slice() {
            [c] => (None, c.as_str()),
            [q, c] | [_, q, c] => (Some(q.as_str()), c.as_str()),
            _ => return Err(SqlError::Unsupported(n.to_string())),
        };
        let col = scope.resolve(q, c, "SET")?;
        let e = if crate::bind::is_default_keyword(&a.value) {
            scope.default_of(col, ctx.params, ctx.conn)?
        } else {
            Binder {
                sub: Some(&subctx),
                scope: Some(&scope),
                params: ctx.params,
                aggs: None,
                context: "SET",
                conn: ctx.conn,
            }
            .bind(&a.value)?
        };
        sets.push((col, e));
    }
    let filter = bind_opt(
        Some(&subctx),
        u.selection.as_ref(),
        Some(&scope),
        ctx,
        "WHERE",
    )?;
    let limit = bind_opt(None, u.limit.as_ref(), None, ctx, "LIMIT")?;
    let order = dml_order(ctx, &subctx, &scope, &u.order_by)?;
    let access = plan::choose_access(&t.def, filter.as_ref());
    Ok(UpdatePlan {
        table: t,
        access,
        filter,
        sets,
        limit,
        order,
        subqueries: subctx.take(),
        ignore: crate::parse::update_is_ignore(u),
    })
}

/// Plans a DELETE: of one table, or of tables of a join.
pub fn delete_stmt(ctx: &Ctx<'_>, d: &sql::Delete) -> Result<Planned> {
    let from = match &d.from {
        sql::FromTable::WithFromKeyword(v) | sql::FromTable::WithoutKeyword(v) => v,
    };
    let one = d.tables.is_empty()
        && d.using.is_none()
        && matches!(from.as_slice(), [twj] if twj.joins.is_empty() && matches!(twj.relation, sql::TableFactor::Table { .. }));
    if one {
        return delete(ctx, d).map(Planned::Delete);
    }
    if !d.order_by.is_empty() || d.limit.is_some() {
        return Err(SqlError::Unsupported(
            "multi-table DELETE with ORDER BY or LIMIT".into(),
        ));
    }
    // `DELETE t1, t2 FROM join` or `DELETE FROM t1, t2 USING join`.
    let (names, source): (Vec<&sql::ObjectName>, &[sql::TableWithJoins]) = match &d.using {
        Some(using) => {
            let mut names = Vec::new();
            for twj in from {
                match (&twj.relation, twj.joins.is_empty()) {
                    (sql::TableFactor::Table { name, .. }, true) => names.push(name),
                    _ => return Err(SqlError::Unsupported(twj.to_string())),
                }
            }
            (names, using)
        }
        None => (d.tables.iter().collect(), from),
    };
    let subctx = SubCtx::new(ctx, None);
    let f = crate::bind::from::bind_from(ctx, source, Some(&subctx))?;
    let mut members = Vec::new();
    for n in names {
        let parts = object_parts(n)?;
        let (db, q) = match parts.as_slice() {
            [q] => (None, q.as_str()),
            [d, q] => (Some(d.as_str()), q.as_str()),
            _ => return Err(SqlError::Unsupported(n.to_string())),
        };
        let m = f
            .scope
            .tables
            .iter()
            .position(|t| t.named(db, q))
            .ok_or_else(|| SqlError::UnknownTableInMultiDelete(q.into()))?;
        if !members.contains(&m) {
            members.push(m);
        }
    }
    let filter = bind_opt(
        Some(&subctx),
        d.selection.as_ref(),
        Some(&f.scope),
        ctx,
        "WHERE",
    )?;
    let subqueries = subctx.take();
    // MariaDB reads a multi-table DELETE's subqueries while it deletes: one that reads a
    // table the statement deletes from is 1093.
    for m in &members {
        let st = &f.scope.tables[*m];
        for q in &subqueries {
            let mut used = Vec::new();
            crate::subquery::plan_tables(&q.plan, &mut used);
            if used.iter().any(|t| t.db == st.db && t.name == st.table) {
                return Err(SqlError::SpecifiedTwice {
                    table: st.table.clone(),
                    op: "DELETE".into(),
                });
            }
        }
    }
    let (select, targets) = join_dml(ctx, f, filter, &members, "DELETE", subqueries)?;
    Ok(Planned::DeleteJoin(JoinDmlPlan {
        select,
        targets,
        sets: Vec::new(),
        ignore: crate::parse::delete_is_ignore(d),
    }))
}

pub fn delete(ctx: &Ctx<'_>, d: &sql::Delete) -> Result<DeletePlan> {
    if d.using.is_some() || !d.tables.is_empty() {
        return Err(SqlError::Unsupported("multi-table DELETE".into()));
    }
    let from = match &d.from {
        sql::FromTable::WithFromKeyword(v) | sql::FromTable::WithoutKeyword(v) => v,
    };
    let [twj] = from.as_slice() else {
        return Err(SqlError::Unsupported("multi-table DELETE".into()));
    };
    let (name, alias) = single_table(twj)?;
    let t = ctx.dml_table(name, alias.as_deref(), "DELETE")?;
    let scope = scope_of(&t);
    let subctx = SubCtx::new(ctx, None);
    let filter = bind_opt(
        Some(&subctx),
        d.selection.as_ref(),
        Some(&scope),
        ctx,
        "WHERE",
    )?;
    let limit = bind_opt(None, d.limit.as_ref(), None, ctx, "LIMIT")?;
    let order = dml_order(ctx, &subctx, &scope, &d.order_by)?;
    let access = plan::choose_access(&t.def, filter.as_ref());
    let mut subqueries = subctx.take();
    let returning = match &d.returning {
        Some(items) => {
            let alias = match &twj.relation {
                sql::TableFactor::Table { alias, .. } => alias.as_ref(),
                _ => None,
            };
            Some(returning(ctx, items, name, alias, &mut subqueries)?)
        }
        None => None,
    };
    Ok(DeletePlan {
        table: t,
        access,
        filter,
        limit,
        order,
        subqueries,
        returning,
        ignore: crate::parse::delete_is_ignore(d),
    })
}
