//! The rows of each information_schema table, computed from the catalog, the session
//! registry and the engine's counters at the time of the read.

use std::collections::HashMap;

use quire_engine::catalog::TableDef;
use quire_engine::row::{Collation, Column, ColumnType, IntWidth, LobSize, Value};

use super::InfoTable;
use crate::error::Result;
use crate::session::{Instance, SessVars};
use crate::stmt::Ctx;

fn s(v: impl Into<String>) -> Value {
    Value::Str(v.into())
}

fn u(v: u64) -> Value {
    Value::UInt(v)
}

fn opt(v: Option<String>) -> Value {
    v.map_or(Value::Null, Value::Str)
}

const DEF: &str = "def";

/// The rows of `t`, in the order MariaDB lists them (SELECT without ORDER BY gives no
/// order either; golden tests sort).
pub(crate) fn rows(t: InfoTable, inst: &Instance<'_>, sv: &SessVars) -> Result<Vec<Vec<Value>>> {
    let db = inst.db;
    let dbs = {
        let mut v = vec![super::SCHEMA.to_string()];
        v.extend(db.databases());
        v
    };
    let temps = crate::temp::Temps::default();
    let params = HashMap::new();
    let stats_used = std::cell::Cell::new(false);
    let ctx = Ctx {
        db,
        current_db: None,
        params: &params,
        hidden: &[],
        conn: sv.conn(),
        ctes: None,
        temps: &temps,
        stats_used: &stats_used,
    };
    let tables = |d: &str| -> Vec<TableDef> {
        db.tables(d)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|n| db.table(d, &n).ok()?.definition().ok())
            .collect()
    };
    let mut out = Vec::new();
    match t {
        InfoTable::Schemata => {
            for d in &dbs {
                let is = super::is_schema(d);
                let c = if is {
                    Collation::Utf8mb3GeneralCi
                } else {
                    db.database_collation(d)
                        .unwrap_or(Collation::Utf8mb4GeneralCi)
                };
                out.push(vec![
                    s(DEF),
                    s(d.clone()),
                    s(c.charset().name()),
                    s(c.name()),
                    Value::Null,
                    s(""),
                ]);
            }
        }
        InfoTable::Tables => {
            for it in InfoTable::ALL {
                out.push(vec![
                    s(DEF),
                    s(super::SCHEMA),
                    s(it.name()),
                    s("SYSTEM VIEW"),
                    s("MEMORY"),
                    u(11),
                    s("Fixed"),
                    Value::Null,
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    s("utf8mb3_general_ci"),
                    Value::Null,
                    s("max_rows=1"),
                    s(""),
                    u(0),
                    s("Y"),
                ]);
            }
            for d in db.databases() {
                for def in tables(&d) {
                    let bytes = db.table_file_bytes(&d, &def.name);
                    let handle = db.table(&d, &def.name).ok();
                    let auto = handle
                        .as_ref()
                        .and_then(|tb| tb.next_auto_increment().ok().flatten());
                    // The kept statistics (docs/sql.md, "Statistics"); sizes are the trees' pages.
                    let st = handle.as_ref().and_then(|tb| tb.statistics().ok());
                    let ps = db.settings().page_size as u64;
                    let data = st.as_ref().map(|st| st.clustered.pages * ps);
                    let index = st
                        .as_ref()
                        .map(|st| st.indexes.iter().map(|i| i.pages).sum::<u64>() * ps);
                    let rows = st.as_ref().map(|st| st.rows);
                    let avg = match (data, rows) {
                        (Some(d), Some(r)) if r > 0 => d / r,
                        _ => 0,
                    };
                    // The file's size past what the trees use: its free extents.
                    let free = match (bytes, data, index) {
                        (Some(b), Some(d), Some(i)) => b.saturating_sub(d + i),
                        _ => 0,
                    };
                    out.push(vec![
                        s(DEF),
                        s(d.clone()),
                        s(def.name.clone()),
                        s("BASE TABLE"),
                        s("InnoDB"),
                        u(10),
                        s("Dynamic"),
                        u(rows.unwrap_or(0)),
                        u(avg),
                        u(data.or(bytes).unwrap_or(0)),
                        u(0),
                        u(index.unwrap_or(0)),
                        u(free),
                        auto.map_or(Value::Null, u),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        s(table_collation(&def)),
                        Value::Null,
                        s(""),
                        s(def.comment.clone()),
                        u(0),
                        s("N"),
                    ]);
                }
                for v in db.views(&d).unwrap_or_default() {
                    let mut r = vec![s(DEF), s(d.clone()), s(v.name.clone()), s("VIEW")];
                    r.extend(std::iter::repeat_n(Value::Null, 16));
                    r.push(s("VIEW"));
                    r.push(Value::Null);
                    r.push(Value::Null);
                    out.push(r);
                }
            }
        }
        InfoTable::Columns => {
            for it in InfoTable::ALL {
                let cols = it.engine_columns();
                for (i, c) in cols.iter().enumerate() {
                    out.push(column_row(super::SCHEMA, it.name(), i, c, "", "", true));
                }
            }
            let zone = crate::tz::Zone::of_session(sv, inst);
            for d in db.databases() {
                for mut def in tables(&d) {
                    crate::tz::shown_columns(&mut def.columns, zone);
                    for (i, c) in def.columns.iter().enumerate() {
                        out.push(column_row(
                            &d,
                            &def.name,
                            i,
                            c,
                            column_key(&def, i),
                            &crate::ddl::column_extra(&def, i),
                            false,
                        ));
                    }
                }
                for v in db.views(&d).unwrap_or_default() {
                    // An invalid view lists no columns (MariaDB warns 1356).
                    let Ok(plan) = crate::view::plan_view(&ctx, &v) else {
                        continue;
                    };
                    for (i, name) in v.columns.iter().enumerate() {
                        let Some(ty) = plan.item_tys.get(i).copied() else {
                            continue;
                        };
                        let coll = plan.item_derived.get(i).map_or(ctx.conn.coll, |x| x.0);
                        let c = crate::func::types::ty_column(name, ty, coll);
                        out.push(column_row(&d, &v.name, i, &c, "", "", false));
                    }
                }
            }
        }
        InfoTable::Statistics => {
            for d in db.databases() {
                for def in tables(&d) {
                    let st = db
                        .table(&d, &def.name)
                        .ok()
                        .and_then(|tb| tb.statistics().ok());
                    let mut add = |name: &str,
                                   unique: bool,
                                   cols: Vec<(usize, Option<u32>, bool)>,
                                   comment: &str| {
                        for (seq, (c, prefix, desc)) in cols.into_iter().enumerate() {
                            let col = &def.columns[c];
                            out.push(vec![
                                s(DEF),
                                s(d.clone()),
                                s(def.name.clone()),
                                Value::Int(i64::from(!unique)),
                                s(d.clone()),
                                s(name),
                                Value::Int(seq as i64 + 1),
                                s(col.name.clone()),
                                s(if desc { "D" } else { "A" }),
                                super::cardinality(st.as_deref(), name, seq),
                                prefix.map_or(Value::Null, |p| Value::Int(i64::from(p))),
                                Value::Null,
                                s(if col.nullable { "YES" } else { "" }),
                                s("BTREE"),
                                s(""),
                                s(comment),
                                s("NO"),
                            ]);
                        }
                    };
                    if !def.primary_key.is_empty() {
                        add(
                            "PRIMARY",
                            true,
                            def.primary_key.iter().map(|&c| (c, None, false)).collect(),
                            "",
                        );
                    }
                    for ix in crate::ddl::key_order(&def) {
                        add(
                            &ix.name,
                            ix.unique,
                            ix.columns
                                .iter()
                                .map(|c| (c.column, c.prefix, c.descending))
                                .collect(),
                            &ix.comment,
                        );
                    }
                }
            }
        }
        InfoTable::KeyColumnUsage => {
            for d in db.databases() {
                for def in tables(&d) {
                    let mut add = |name: &str, cols: &[usize]| {
                        for (pos, &c) in cols.iter().enumerate() {
                            out.push(vec![
                                s(DEF),
                                s(d.clone()),
                                s(name),
                                s(DEF),
                                s(d.clone()),
                                s(def.name.clone()),
                                s(def.columns[c].name.clone()),
                                Value::Int(pos as i64 + 1),
                                Value::Null,
                                Value::Null,
                                Value::Null,
                                Value::Null,
                            ]);
                        }
                    };
                    if !def.primary_key.is_empty() {
                        add("PRIMARY", &def.primary_key);
                    }
                    for ix in def.indexes.iter().filter(|ix| ix.unique) {
                        let cols: Vec<usize> = ix.columns.iter().map(|c| c.column).collect();
                        add(&ix.name, &cols);
                    }
                    for f in db.foreign_keys(&d, &def.name).unwrap_or_default() {
                        for (pos, (c, pc)) in f.columns.iter().zip(&f.parent_columns).enumerate() {
                            out.push(vec![
                                s(DEF),
                                s(d.clone()),
                                s(f.name.clone()),
                                s(DEF),
                                s(d.clone()),
                                s(def.name.clone()),
                                s(c.clone()),
                                Value::Int(pos as i64 + 1),
                                Value::Int(pos as i64 + 1),
                                s(f.parent_db.clone()),
                                s(f.parent_table.clone()),
                                s(pc.clone()),
                            ]);
                        }
                    }
                }
            }
        }
        InfoTable::TableConstraints => {
            for d in db.databases() {
                for def in tables(&d) {
                    if !def.primary_key.is_empty() {
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s("PRIMARY"),
                            s(d.clone()),
                            s(def.name.clone()),
                            s("PRIMARY KEY"),
                        ]);
                    }
                    for ix in def.indexes.iter().filter(|ix| ix.unique) {
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s(ix.name.clone()),
                            s(d.clone()),
                            s(def.name.clone()),
                            s("UNIQUE"),
                        ]);
                    }
                    for f in db.foreign_keys(&d, &def.name).unwrap_or_default() {
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s(f.name.clone()),
                            s(d.clone()),
                            s(def.name.clone()),
                            s("FOREIGN KEY"),
                        ]);
                    }
                    for (name, _, _) in check_rows(&def) {
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s(name),
                            s(d.clone()),
                            s(def.name.clone()),
                            s("CHECK"),
                        ]);
                    }
                }
            }
        }
        InfoTable::CheckConstraints => {
            for d in db.databases() {
                for def in tables(&d) {
                    for (name, level, clause) in check_rows(&def) {
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s(def.name.clone()),
                            s(name),
                            s(level),
                            s(clause),
                        ]);
                    }
                }
            }
        }
        InfoTable::ReferentialConstraints => {
            for d in db.databases() {
                for def in tables(&d) {
                    for f in db.foreign_keys(&d, &def.name).unwrap_or_default() {
                        // The parent's index the constraint uses: its primary key when
                        // that leads with the columns, else the first index that does.
                        let unique = db
                            .table(&f.parent_db, &f.parent_table)
                            .and_then(|t| t.definition())
                            .ok()
                            .and_then(|p| {
                                let cols: Vec<usize> = f
                                    .parent_columns
                                    .iter()
                                    .filter_map(|c| p.columns.iter().position(|x| &x.name == c))
                                    .collect();
                                let leads =
                                    |k: &[usize]| k.len() >= cols.len() && k[..cols.len()] == *cols;
                                if leads(&p.primary_key) {
                                    return Some("PRIMARY".to_string());
                                }
                                p.indexes
                                    .iter()
                                    .find(|ix| {
                                        let k: Vec<usize> =
                                            ix.columns.iter().map(|c| c.column).collect();
                                        leads(&k)
                                    })
                                    .map(|ix| ix.name.clone())
                            });
                        out.push(vec![
                            s(DEF),
                            s(d.clone()),
                            s(f.name.clone()),
                            s(DEF),
                            s(f.parent_db.clone()),
                            unique.map_or(Value::Null, s),
                            s("NONE"),
                            s(f.on_update.rule()),
                            s(f.on_delete.rule()),
                            s(def.name.clone()),
                            s(f.parent_table.clone()),
                        ]);
                    }
                }
            }
        }
        InfoTable::Views => {
            for d in db.databases() {
                for v in db.views(&d).unwrap_or_default() {
                    let (check, security, algorithm) = crate::view::option_names(&v);
                    let valid = crate::view::plan_view(&ctx, &v).is_ok();
                    out.push(vec![
                        s(DEF),
                        s(d.clone()),
                        s(v.name.clone()),
                        s(crate::view::full_definition(&ctx, &v)),
                        s(check),
                        s(if !valid {
                            ""
                        } else if crate::view::is_updatable(&v) {
                            "YES"
                        } else {
                            "NO"
                        }),
                        s(format!("{}@{}", v.definer_user, v.definer_host)),
                        s(security),
                        s(v.charset_client.clone()),
                        s(v.collation_connection.clone()),
                        s(algorithm),
                    ]);
                }
            }
        }
        InfoTable::Processlist => {
            for si in inst.sessions() {
                let info = si.info_text();
                let elapsed = si.since.lock().elapsed();
                out.push(vec![
                    u(si.id),
                    s(si.user.clone()),
                    s(si.host.clone()),
                    opt(si.db.lock().clone()),
                    s(*si.command.lock()),
                    Value::Int(elapsed.as_secs() as i64),
                    s(*si.state.lock()),
                    opt(info.clone()),
                    Value::Decimal(quire_engine::row::Decimal {
                        unscaled: elapsed.as_millis() as i128 * 1000
                            + i128::from(elapsed.subsec_micros() % 1000),
                        scale: 3,
                    }),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Decimal(quire_engine::row::Decimal {
                        unscaled: i128::from(
                            si.progress.load(std::sync::atomic::Ordering::Relaxed),
                        ),
                        scale: 3,
                    }),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Int(0),
                    info.map_or(Value::Null, |i| Value::Bytes(i.into_bytes())),
                    Value::Int(0),
                ]);
            }
        }
        InfoTable::Engines => {
            out.push(vec![
                s("InnoDB"),
                s("DEFAULT"),
                s("Quire: transactions, row-level locking, MVCC, crash-safe"),
                s("YES"),
                s("NO"),
                s("YES"),
            ]);
        }
        InfoTable::CharacterSets => {
            for cs in quire_engine::row::Charset::ALL {
                out.push(vec![
                    s(cs.name()),
                    s(cs.default_collation().name()),
                    s(cs.description()),
                    Value::Int(i64::from(cs.max_bytes())),
                ]);
            }
            out.push(vec![
                s("binary"),
                s("binary"),
                s("Binary pseudo charset"),
                Value::Int(1),
            ]);
        }
        InfoTable::Collations => {
            for (name, cs, id, default, sortlen) in crate::types::COLLATIONS {
                out.push(vec![
                    s(name),
                    s(cs),
                    Value::Int(i64::from(id)),
                    s(default),
                    s("Yes"),
                    Value::Int(i64::from(sortlen)),
                ]);
            }
        }
        InfoTable::InnodbTrx => {
            // Each session says which transaction it has open and since when; a
            // transaction of no session (the embedded API's) shows now and thread 0.
            let owners: std::collections::HashMap<u64, (u64, i64, Option<String>)> = inst
                .sessions()
                .iter()
                .filter_map(|si| {
                    let (trx, began) = (*si.trx.lock())?;
                    Some((trx, (si.id, began, si.info_text())))
                })
                .collect();
            let now = crate::func::datetime::wall_now_us();
            // trx_started in the session's time zone, as MariaDB shows it.
            let zone = crate::tz::Zone::of_session(sv, inst);
            for id in db.active_transactions() {
                let (thread, began, query) = owners.get(&id).cloned().unwrap_or((0, now, None));
                out.push(vec![
                    u(id),
                    s("RUNNING"),
                    Value::DateTime(zone.from_utc(crate::func::datetime::from_unix_us(
                        began - began % 1_000_000,
                    ))),
                    Value::Null,
                    Value::Null,
                    u(0),
                    u(thread),
                    query.map_or(Value::Null, s),
                    Value::Null,
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    u(0),
                    s("REPEATABLE READ"),
                    Value::Int(1),
                    Value::Int(1),
                    Value::Null,
                    Value::Int(0),
                    Value::Int(0),
                ]);
            }
        }
        // The lock manager lists no locks or waits yet (docs/sql.md).
        InfoTable::InnodbLocks
        | InfoTable::InnodbLockWaits
        | InfoTable::Triggers
        | InfoTable::Routines
        | InfoTable::Events => {}
        // SESSION_STATUS: the session's own counters where it has them, as SHOW STATUS.
        InfoTable::GlobalStatus | InfoTable::SessionStatus => {
            let session = (t == InfoTable::SessionStatus).then_some(&sv.status);
            for (n, v) in crate::control::status_rows(inst, &sv.info, session) {
                out.push(vec![s(n.to_ascii_uppercase()), s(v)]);
            }
        }
        InfoTable::GlobalVariables | InfoTable::SessionVariables => {
            let session = (t == InfoTable::SessionVariables).then_some(&sv.vars);
            for (n, v) in crate::control::variable_rows(inst, session) {
                out.push(vec![s(n.to_ascii_uppercase()), s(v)]);
            }
        }
        InfoTable::InnodbCmp
        | InfoTable::InnodbCmpReset
        | InfoTable::InnodbCmpmem
        | InfoTable::InnodbCmpmemReset => {
            for size in [1024, 2048, 4096, 8192, 16384] {
                let mut row = vec![Value::Int(0); 6];
                row[0] = Value::Int(size);
                out.push(row);
            }
        }
        InfoTable::InnodbMetrics => {
            for (name, v) in inst.global_status() {
                let lower = name.to_ascii_lowercase();
                let metric = lower.strip_prefix("innodb_").unwrap_or(&lower).to_string();
                let subsystem = metric.split('_').next().unwrap_or("").to_string();
                let v = i64::try_from(v).unwrap_or(i64::MAX);
                out.push(vec![
                    s(metric),
                    s(subsystem),
                    Value::Int(v),
                    Value::Int(v),
                    Value::Null,
                    Value::Null,
                    Value::Int(v),
                    Value::Int(v),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Int(1),
                    s("status_counter"),
                    s(format!("Quire's {name}")),
                ]);
            }
        }
    }
    Ok(out)
}

/// The table's default collation (SHOW CREATE TABLE's).
fn table_collation(def: &TableDef) -> String {
    crate::types::table_collation(def).name().to_string()
}

fn column_key(def: &TableDef, i: usize) -> &'static str {
    if def.primary_key.contains(&i) {
        "PRI"
    } else if def
        .indexes
        .iter()
        .any(|x| x.unique && x.columns.len() == 1 && x.columns[0].column == i)
    {
        "UNI"
    } else if def
        .indexes
        .iter()
        .any(|x| x.columns.first().is_some_and(|f| f.column == i))
    {
        "MUL"
    } else {
        ""
    }
}

/// A row of information_schema.COLUMNS. `system`: a column of information_schema itself
/// (utf8mb3 in MariaDB, no privileges listed the same way).
fn column_row(
    db: &str,
    table: &str,
    i: usize,
    c: &Column,
    key: &str,
    extra: &str,
    system: bool,
) -> Vec<Value> {
    let ty = crate::types::column_type_sql(c);
    let data_type = ty.split(['(', ' ']).next().unwrap_or_default().to_string();
    let (char_max, octet_max): (Option<u64>, Option<u64>) = match c.ty {
        ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars } => {
            let m = if system {
                3
            } else {
                u64::from(c.collation.charset().max_bytes())
            };
            (Some(u64::from(max_chars)), Some(u64::from(max_chars) * m))
        }
        ColumnType::Binary { len } => (Some(u64::from(len)), Some(u64::from(len))),
        ColumnType::VarBinary { max_len } => (Some(u64::from(max_len)), Some(u64::from(max_len))),
        ColumnType::Text(sz) | ColumnType::Blob(sz) => {
            let n = lob_max(sz);
            (Some(n), Some(n))
        }
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let n = u64::from(crate::types::members_max_chars(c));
            (
                Some(n),
                Some(n * u64::from(c.collation.charset().max_bytes())),
            )
        }
        _ => (None, None),
    };
    let (prec, scale): (Option<u64>, Option<u64>) = match c.ty {
        ColumnType::Int { width, unsigned } => (
            Some(match (width, unsigned) {
                (IntWidth::Tiny, _) => 3,
                (IntWidth::Small, _) => 5,
                (IntWidth::Medium, _) => 7,
                (IntWidth::Int, _) => 10,
                (IntWidth::Big, false) => 19,
                (IntWidth::Big, true) => 20,
            }),
            Some(0),
        ),
        ColumnType::Decimal { precision, scale } => {
            (Some(u64::from(precision)), Some(u64::from(scale)))
        }
        // FLOAT(M,D): M and D.
        ColumnType::Float | ColumnType::Double if c.digits.is_some() => {
            c.digits.map_or((None, None), |(m, d)| {
                (Some(u64::from(m)), Some(u64::from(d)))
            })
        }
        ColumnType::Float => (Some(12), None),
        ColumnType::Double => (Some(22), None),
        // MariaDB: a BIT's precision is its width, without a scale.
        ColumnType::Bit { bits } => (Some(u64::from(bits)), None),
        _ => (None, None),
    };
    let dt_prec = match c.ty {
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } | ColumnType::Time { fsp } => {
            Some(u64::from(fsp))
        }
        _ => None,
    };
    let (cs, coll) = if c.ty.is_string()
        && !matches!(
            c.ty,
            ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob(_)
        ) {
        if system {
            ("utf8mb3".to_string(), "utf8mb3_general_ci".to_string())
        } else {
            (
                c.collation.charset().name().to_string(),
                c.collation.name().to_string(),
            )
        }
    } else {
        (String::new(), String::new())
    };
    vec![
        s(DEF),
        s(db),
        s(table),
        s(c.name.clone()),
        u(i as u64 + 1),
        if system {
            if c.nullable {
                s("NULL")
            } else {
                Value::Null
            }
        } else {
            opt(crate::ddl::default_sql(c))
        },
        s(if c.nullable { "YES" } else { "NO" }),
        s(data_type),
        char_max.map_or(Value::Null, u),
        octet_max.map_or(Value::Null, u),
        prec.map_or(Value::Null, u),
        scale.map_or(Value::Null, u),
        dt_prec.map_or(Value::Null, u),
        if cs.is_empty() { Value::Null } else { s(cs) },
        if coll.is_empty() {
            Value::Null
        } else {
            s(coll)
        },
        s(ty.clone()),
        s(key),
        s(extra),
        s(if system {
            "select"
        } else {
            "select,insert,update,references"
        }),
        s(c.comment.clone()),
        s("NEVER"),
        Value::Null,
    ]
}

fn lob_max(sz: LobSize) -> u64 {
    match sz {
        LobSize::Tiny => 255,
        LobSize::Regular => 65_535,
        LobSize::Medium => 16_777_215,
        LobSize::Long => 4_294_967_295,
    }
}

/// A table's CHECK constraints as information_schema lists them (name, LEVEL,
/// CHECK_CLAUSE): a JSON column's json_valid and the column checks in column order, then
/// the table's, as MariaDB lists them.
fn check_rows(def: &quire_engine::catalog::TableDef) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for c in &def.columns {
        if c.json {
            out.push((
                c.name.clone(),
                "Column",
                format!("json_valid(`{}`)", c.name),
            ));
        }
        for ck in def
            .checks
            .iter()
            .filter(|k| k.column_level && k.name == c.name)
        {
            out.push((ck.name.clone(), "Column", ck.expr.clone()));
        }
    }
    for ck in def.checks.iter().filter(|k| !k.column_level) {
        out.push((ck.name.clone(), "Table", ck.expr.clone()));
    }
    out
}
