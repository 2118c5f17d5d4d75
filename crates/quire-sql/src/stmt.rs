//! Planning of the statements that run many times (SELECT, INSERT, REPLACE, UPDATE,
//! DELETE): bound once, kept in prepared statements and the COM_QUERY plan cache, re-planned
//! when DDL changed the catalog since.

use std::collections::HashMap;

use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{DbInner, ReadLock};
use sqlparser::ast as sql;

use crate::bind::{expr_name, object_parts, AggCall, Binder, Scope};
use crate::error::{Result, SqlError};
use crate::exec::{SelectPlan, Source, TableRef};
use crate::expr::{AggFn, BinOp, Expr, Func, SessionFn};
use crate::meta::{flags, ColumnMeta, FieldType};
use crate::plan::{self, Access};
use crate::types;

/// A planned statement.
#[derive(Debug, Clone)]
pub enum Planned {
    Select(SelectPlan),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
}

impl Planned {
    /// The tables the statement uses: the target, then a SELECT's source (metadata locks
    /// are taken on each).
    pub fn tables(&self) -> [Option<&TableRef>; 2] {
        fn source(s: &SelectPlan) -> Option<&TableRef> {
            match &s.source {
                Source::Table(t) => Some(t),
                _ => None,
            }
        }
        match self {
            Planned::Select(s) => [source(s), None],
            Planned::Insert(i) => [
                Some(&i.table),
                match &i.source {
                    InsertSource::Select(s) => source(s),
                    InsertSource::Values(_) => None,
                },
            ],
            Planned::Update(u) => [Some(&u.table), None],
            Planned::Delete(d) => [Some(&d.table), None],
        }
    }

    /// The tables read with a consistent (non-locking) read: a SELECT without a locking
    /// clause and INSERT … SELECT's source. Only these read old versions through an index.
    pub fn snapshot_reads(&self) -> Option<&TableRef> {
        fn source(s: &SelectPlan) -> Option<&TableRef> {
            match &s.source {
                Source::Table(t) if s.lock.is_none() => Some(t),
                _ => None,
            }
        }
        match self {
            Planned::Select(s) => source(s),
            Planned::Insert(InsertPlan {
                source: InsertSource::Select(s),
                ..
            }) => source(s),
            _ => None,
        }
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
}

#[derive(Debug, Clone)]
pub struct UpdatePlan {
    pub table: TableRef,
    pub access: Access,
    pub filter: Option<Expr>,
    pub sets: Vec<(usize, Expr)>,
    pub limit: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct DeletePlan {
    pub table: TableRef,
    pub access: Access,
    pub filter: Option<Expr>,
    pub limit: Option<Expr>,
}

/// What planning needs from the session.
pub struct Ctx<'a> {
    pub db: &'a DbInner,
    pub current_db: Option<&'a str>,
    pub params: &'a HashMap<(u64, u64), usize>,
    /// Secondary indexes the plan must not read, as (table id, index name): built after
    /// the snapshot of the transaction that runs it (docs/sql.md, 1412).
    pub hidden: &'a [(u64, String)],
}

impl Ctx<'_> {
    fn table(&self, name: &sql::ObjectName, alias: Option<&str>) -> Result<TableRef> {
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
        })
    }
}

fn scope_of(t: &TableRef) -> Scope {
    Scope {
        alias: t.alias.clone(),
        db: t.db.clone(),
        table: t.name.clone(),
        columns: t.def.columns.clone(),
    }
}

/// `seq_1_to_N` / `seq_1_to_N_step_S` (MariaDB's Sequence engine).
fn seq_table(name: &str) -> Option<(u64, u64, u64)> {
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
        f |= flags::PRI_KEY;
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

/// The result column of a computed expression.
fn computed_meta(name: String, e: &Expr, scope: Option<&Scope>, aggs: &[AggCall]) -> ColumnMeta {
    let (ty, len, dec) = match e {
        Expr::Lit(Value::Int(_)) | Expr::Lit(Value::UInt(_)) => (FieldType::LongLong, 21, 0),
        Expr::Lit(Value::Decimal(d)) => (FieldType::NewDecimal, 40, d.scale),
        Expr::Lit(Value::Double(_)) => (FieldType::Double, 22, 31),
        Expr::Lit(Value::Null) => (FieldType::Null, 0, 0),
        Expr::Agg(i) => match aggs.get(*i) {
            Some(AggCall {
                f: AggFn::Count | AggFn::CountStar,
                ..
            }) => (FieldType::LongLong, 21, 0),
            Some(AggCall {
                f: AggFn::Sum | AggFn::Avg,
                arg,
                ..
            }) => {
                let float = matches!(arg, Some(Expr::Column(c)) if scope.is_some_and(|s| matches!(s.columns.get(*c).map(|c| c.ty), Some(ColumnType::Float | ColumnType::Double))));
                if float {
                    (FieldType::Double, 22, 31)
                } else {
                    (FieldType::NewDecimal, 42, 4)
                }
            }
            Some(AggCall {
                arg: Some(Expr::Column(c)),
                ..
            }) => {
                if let Some(col) = scope.and_then(|s| s.columns.get(*c)) {
                    let (t, l, d) = types::field_type(col.ty);
                    (t, l, d)
                } else {
                    (FieldType::VarString, 255, 0)
                }
            }
            _ => (FieldType::VarString, 255, 0),
        },
        Expr::Session(
            SessionFn::ConnectionId
            | SessionFn::LastInsertId
            | SessionFn::RowCount
            | SessionFn::FoundRows,
        ) => (FieldType::LongLong, 21, 0),
        Expr::Session(SessionFn::SysVar { name, .. }) => match crate::vars::var_type(name) {
            crate::vars::VarType::Unsigned => (FieldType::LongLong, 21, 0),
            crate::vars::VarType::Bool => (FieldType::LongLong, 1, 0),
            crate::vars::VarType::Double => (FieldType::Double, 21, 6),
            crate::vars::VarType::Text => (FieldType::VarString, 255, 0),
        },
        // MariaDB's INT(10): drivers decode LENGTH(blob) as a number.
        Expr::Func(Func::Length | Func::CharLength, _) => (FieldType::Long, 10, 0),
        Expr::Session(SessionFn::Now) => (FieldType::DateTime, 19, 0),
        Expr::Session(SessionFn::CurDate) => (FieldType::Date, 10, 0),
        Expr::Binary(
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::And
            | BinOp::Or,
            _,
            _,
        ) => (FieldType::LongLong, 1, 0),
        Expr::Column(c) => {
            if let Some(col) = scope.and_then(|s| s.columns.get(*c)) {
                types::field_type(col.ty)
            } else {
                (FieldType::VarString, 255, 0)
            }
        }
        _ => (FieldType::VarString, 255, 0),
    };
    let mut meta = ColumnMeta::computed(name, ty, len, dec);
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
    // A byte string (X'…', _binary'…') is VARBINARY: a driver hands it over as bytes, not
    // as text to decode.
    if let Expr::Lit(Value::Bytes(b)) = e {
        meta.charset = crate::meta::charset::BINARY;
        meta.flags |= flags::BINARY;
        meta.length = u32::try_from(b.len()).unwrap_or(u32::MAX);
    }
    meta
}

fn limit_exprs(q: &sql::Query, b: &mut Binder<'_>) -> Result<(Option<Expr>, Option<Expr>)> {
    Ok(match &q.limit_clause {
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

/// Plans a SELECT (the body of a query).
pub fn select(ctx: &Ctx<'_>, q: &sql::Query, lock: Option<ReadLock>) -> Result<SelectPlan> {
    if q.with.is_some() {
        return Err(SqlError::Unsupported("WITH".into()));
    }
    let lock = lock.or_else(|| {
        q.locks.first().map(|l| match l.lock_type {
            sql::LockType::Share => ReadLock::Shared,
            sql::LockType::Update => ReadLock::Exclusive,
        })
    });
    let s = match q.body.as_ref() {
        sql::SetExpr::Select(s) => s,
        sql::SetExpr::Query(inner) => return select(ctx, inner, lock),
        sql::SetExpr::SetOperation { .. } => return Err(SqlError::Unsupported("UNION".into())),
        other => return Err(SqlError::Unsupported(other.to_string())),
    };
    if s.into.is_some() {
        return Err(SqlError::Unsupported("SELECT … INTO".into()));
    }
    // FROM: nothing, one table, or a sequence table.
    let (source, tref) = match s.from.as_slice() {
        [] => (Source::Dual, None),
        [twj] if twj.joins.is_empty() => match &twj.relation {
            sql::TableFactor::Table { name, alias, .. } => {
                let parts = object_parts(name)?;
                let last = parts.last().cloned().unwrap_or_default();
                let alias = alias.as_ref().map(|a| a.name.value.clone());
                if parts.len() == 1 && last.eq_ignore_ascii_case("dual") {
                    (Source::Dual, None)
                } else if let Some((from, to, step)) = seq_table(&last) {
                    (Source::Seq { from, to, step }, None)
                } else {
                    let t = ctx.table(name, alias.as_deref())?;
                    (Source::Table(Box::new(t.clone())), Some(t))
                }
            }
            sql::TableFactor::Derived { .. } => {
                return Err(SqlError::Unsupported("derived tables".into()))
            }
            other => return Err(SqlError::Unsupported(other.to_string())),
        },
        _ => return Err(SqlError::Unsupported("joins".into())),
    };
    let scope = match (&source, &tref) {
        (_, Some(t)) => Some(scope_of(t)),
        (Source::Seq { .. }, None) => Some(Scope {
            alias: String::new(),
            db: String::new(),
            table: String::new(),
            columns: vec![Column::new(
                "seq",
                ColumnType::Int {
                    width: IntWidth::Big,
                    unsigned: true,
                },
            )],
        }),
        _ => None,
    };
    let mut aggs: Vec<AggCall> = Vec::new();
    // WHERE: no aggregates.
    let filter = match &s.selection {
        Some(w) => Some(
            Binder {
                scope: scope.as_ref(),
                params: ctx.params,
                aggs: None,
                context: "where clause",
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
                let Some(t) = &tref else {
                    return Err(SqlError::Unsupported("* without a table".into()));
                };
                for (i, c) in t.def.columns.iter().enumerate() {
                    items.push(Expr::Column(i));
                    columns.push(types::column_meta(
                        &t.db,
                        &t.name,
                        &t.alias,
                        c,
                        key_flags(t, i),
                    ));
                    aliases.push(c.name.clone());
                }
            }
            sql::SelectItem::UnnamedExpr(e) | sql::SelectItem::ExprWithAlias { expr: e, .. } => {
                let alias = match it {
                    sql::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                    _ => None,
                };
                let bound = Binder {
                    scope: scope.as_ref(),
                    params: ctx.params,
                    aggs: Some(&mut aggs),
                    context: "field list",
                }
                .bind(e)?;
                let name = alias.clone().unwrap_or_else(|| expr_name(e));
                let meta = match (&bound, &tref) {
                    (Expr::Column(c), Some(t)) => {
                        let mut m = types::column_meta(
                            &t.db,
                            &t.name,
                            &t.alias,
                            &t.def.columns[*c],
                            key_flags(t, *c),
                        );
                        m.name = name.clone();
                        m
                    }
                    _ => computed_meta(name.clone(), &bound, scope.as_ref(), &aggs),
                };
                columns.push(meta);
                aliases.push(name);
                items.push(bound);
            }
            other => return Err(SqlError::Unsupported(other.to_string())),
        }
    }
    let group_by = match &s.group_by {
        sql::GroupByExpr::Expressions(es, mods) => {
            if !mods.is_empty() {
                return Err(SqlError::Unsupported("WITH ROLLUP".into()));
            }
            let mut out = Vec::new();
            for e in es {
                out.push(resolve_output_ref(e, &items, &aliases).map_or_else(
                    || {
                        Binder {
                            scope: scope.as_ref(),
                            params: ctx.params,
                            aggs: None,
                            context: "group statement",
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
            h,
            scope.as_ref(),
            ctx,
            &mut aggs,
            &items,
            &aliases,
            "having clause",
        )?),
        None => None,
    };
    let mut order: Vec<(Expr, bool)> = Vec::new();
    if let Some(ob) = &q.order_by {
        match &ob.kind {
            sql::OrderByKind::Expressions(es) => {
                for o in es {
                    let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
                    let e = match resolve_output_ref(&o.expr, &items, &aliases) {
                        Some(e) => e,
                        None => bind_with_aliases(
                            &o.expr,
                            scope.as_ref(),
                            ctx,
                            &mut aggs,
                            &items,
                            &aliases,
                            "order clause",
                        )?,
                    };
                    order.push((e, desc));
                }
            }
            sql::OrderByKind::All(_) => return Err(SqlError::Unsupported("ORDER BY ALL".into())),
        }
    }
    let distinct = match &s.distinct {
        None | Some(sql::Distinct::All) => false,
        Some(sql::Distinct::Distinct) => true,
        Some(sql::Distinct::On(_)) => return Err(SqlError::Unsupported("DISTINCT ON".into())),
    };
    let mut b = Binder {
        scope: None,
        params: ctx.params,
        aggs: None,
        context: "limit clause",
    };
    let (limit, offset) = limit_exprs(q, &mut b)?;
    let aggregated = !aggs.is_empty() || !group_by.is_empty();
    let mut access = match &tref {
        Some(t) => plan::choose_access(&t.def, filter.as_ref()),
        None => Access::full_scan(),
    };
    let mut sort = order.clone();
    if let (Some(t), false, false) = (&tref, aggregated, order.is_empty()) {
        // The index may deliver ORDER BY, but DISTINCT of other columns would reorder.
        let cols: Option<Vec<(usize, bool)>> = order
            .iter()
            .map(|(e, d)| match e {
                Expr::Column(c) => Some((*c, *d)),
                _ => None,
            })
            .collect();
        if let Some(cols) = cols {
            plan::order_by_index(&t.def, &mut access, &cols, limit.is_some());
            if access.ordered {
                sort.clear();
            }
        }
    }
    if let Some(t) = &tref {
        // Rule 4: every column the query reads is in the index (and the primary key).
        let mut needed = Vec::new();
        let mut note = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Column(c) = x {
                    needed.push(*c);
                }
            })
        };
        items.iter().for_each(&mut note);
        filter.iter().for_each(&mut note);
        group_by.iter().for_each(&mut note);
        having.iter().for_each(&mut note);
        sort.iter().for_each(|(e, _)| note(e));
        aggs.iter()
            .filter_map(|a| a.arg.as_ref())
            .for_each(&mut note);
        access.covering = lock.is_none() && plan::covering(&t.def, &access, &needed);
    }
    // The collation each sort key, group key and output column compares in.
    let scope_cols: &[Column] = tref.as_ref().map_or(&[], |t| t.def.columns.as_slice());
    let coll = |e: &Expr| crate::bind::derive_collation(e, scope_cols).0;
    let sort_colls = sort.iter().map(|(e, _)| coll(e)).collect();
    let group_colls = group_by.iter().map(coll).collect();
    let item_colls = items.iter().map(coll).collect();
    Ok(SelectPlan {
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
        sort,
        sort_colls,
        limit,
        offset,
        lock,
    })
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

fn bind_with_aliases(
    e: &sql::Expr,
    scope: Option<&Scope>,
    ctx: &Ctx<'_>,
    aggs: &mut Vec<AggCall>,
    items: &[Expr],
    aliases: &[String],
    context: &'static str,
) -> Result<Expr> {
    let r = Binder {
        scope,
        params: ctx.params,
        aggs: Some(aggs),
        context,
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
    if ins.on.is_some() {
        return Err(SqlError::Unsupported("ON DUPLICATE KEY UPDATE".into()));
    }
    let t = ctx.table(name, None)?;
    let ncols = t.def.columns.len();
    // Source columns in order → table columns.
    let targets: Vec<usize> = if !ins.columns.is_empty() {
        let scope = scope_of(&t);
        let mut v = Vec::new();
        for c in &ins.columns {
            let parts = object_parts(c)?;
            let last = parts.last().cloned().unwrap_or_default();
            let i = scope.resolve(None, &last, "field list")?;
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
            v.push(scope.resolve(None, parts.last().map_or("", |s| s.as_str()), "field list")?);
        }
        v
    } else {
        (0..ncols).collect()
    };
    let mut map = vec![None; ncols];
    for (src, &col) in targets.iter().enumerate() {
        map[col] = Some(src);
    }
    let source = if !ins.assignments.is_empty() {
        let mut row = Vec::new();
        for a in &ins.assignments {
            row.push(
                Binder {
                    scope: None,
                    params: ctx.params,
                    aggs: None,
                    context: "field list",
                }
                .bind(&a.value)?,
            );
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
                    if r.len() != targets.len() {
                        return Err(SqlError::ValueCount(n as u64 + 1));
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for e in r {
                        row.push(
                            Binder {
                                scope: None,
                                params: ctx.params,
                                aggs: None,
                                context: "field list",
                            }
                            .bind(e)?,
                        );
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
    let mut defaults = Vec::with_capacity(ncols);
    for c in &t.def.columns {
        defaults.push(match &c.default {
            Some(text) => Some(bind_default(text, ctx)?),
            None => None,
        });
    }
    Ok(InsertPlan {
        table: t,
        map,
        source,
        defaults,
        replace: ins.replace_into,
        ignore: ins.ignore,
    })
}

/// Binds an optional clause (WHERE, LIMIT) of UPDATE or DELETE.
fn bind_opt(
    e: Option<&sql::Expr>,
    scope: Option<&Scope>,
    ctx: &Ctx<'_>,
    context: &'static str,
) -> Result<Option<Expr>> {
    e.map(|e| {
        Binder {
            scope,
            params: ctx.params,
            aggs: None,
            context,
        }
        .bind(e)
    })
    .transpose()
}

/// A DEFAULT kept in the catalog as SQL text, bound.
fn bind_default(text: &str, ctx: &Ctx<'_>) -> Result<Expr> {
    let dialect = sqlparser::dialect::MySqlDialect {};
    let e = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| SqlError::InvalidDefault(text.into()))?;
    Binder {
        scope: None,
        params: ctx.params,
        aggs: None,
        context: "field list",
    }
    .bind(&e)
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

pub fn update(ctx: &Ctx<'_>, u: &sql::Update) -> Result<UpdatePlan> {
    if u.from.is_some() || !u.order_by.is_empty() {
        return Err(SqlError::Unsupported("UPDATE … FROM / ORDER BY".into()));
    }
    let (name, alias) = single_table(&u.table)?;
    let t = ctx.table(name, alias.as_deref())?;
    let scope = scope_of(&t);
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
        let col = scope.resolve(q, c, "field list")?;
        let e = Binder {
            scope: Some(&scope),
            params: ctx.params,
            aggs: None,
            context: "field list",
        }
        .bind(&a.value)?;
        sets.push((col, e));
    }
    let filter = bind_opt(u.selection.as_ref(), Some(&scope), ctx, "where clause")?;
    let limit = bind_opt(u.limit.as_ref(), None, ctx, "limit clause")?;
    let access = plan::choose_access(&t.def, filter.as_ref());
    Ok(UpdatePlan {
        table: t,
        access,
        filter,
        sets,
        limit,
    })
}

pub fn delete(ctx: &Ctx<'_>, d: &sql::Delete) -> Result<DeletePlan> {
    if !d.order_by.is_empty() || d.using.is_some() || !d.tables.is_empty() {
        return Err(SqlError::Unsupported(
            "DELETE … ORDER BY / multi-table DELETE".into(),
        ));
    }
    let from = match &d.from {
        sql::FromTable::WithFromKeyword(v) | sql::FromTable::WithoutKeyword(v) => v,
    };
    let [twj] = from.as_slice() else {
        return Err(SqlError::Unsupported("multi-table DELETE".into()));
    };
    let (name, alias) = single_table(twj)?;
    let t = ctx.table(name, alias.as_deref())?;
    let scope = scope_of(&t);
    let filter = bind_opt(d.selection.as_ref(), Some(&scope), ctx, "where clause")?;
    let limit = bind_opt(d.limit.as_ref(), None, ctx, "limit clause")?;
    let access = plan::choose_access(&t.def, filter.as_ref());
    Ok(DeletePlan {
        table: t,
        access,
        filter,
        limit,
    })
}
