//! FOREIGN KEY clauses: turning them into engine constraints with MariaDB's checks and
//! errors, and ALTER TABLE … ADD / DROP FOREIGN KEY (docs/sql.md, "Foreign keys"). The
//! engine stores and enforces the constraints (quire-engine `table/foreign.rs`); this
//! module decides what a clause means.

use quire_engine::catalog::{FkAction, ForeignKeyDef, TableDef};
use quire_engine::row::secondary::IndexColumn;
use quire_engine::row::{Column, ColumnType, Value};
use quire_engine::table::{DbError, IndexSpec};
use sqlparser::ast as sql;

use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::session::{Outcome, Session};

fn action(a: &Option<sql::ReferentialAction>) -> FkAction {
    match a {
        None | Some(sql::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(sql::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(sql::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(sql::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(sql::ReferentialAction::SetDefault) => FkAction::SetDefault,
    }
}

/// Whether a child column may reference a parent column (InnoDB's
/// `dict_foreign_qualify_index` through `cmp_cols_are_equal`): integers of the same width
/// and signedness, character strings of the same collation whatever their lengths,
/// binary strings, or otherwise the same type.
fn compatible(a: &Column, b: &Column) -> bool {
    use ColumnType as T;
    match (a.ty, b.ty) {
        (
            T::Int {
                width: w1,
                unsigned: u1,
            },
            T::Int {
                width: w2,
                unsigned: u2,
            },
        ) => w1 == w2 && u1 == u2,
        (T::Char { .. } | T::VarChar { .. }, T::Char { .. } | T::VarChar { .. }) => {
            a.collation == b.collation
        }
        (T::Binary { .. } | T::VarBinary { .. }, T::Binary { .. } | T::VarBinary { .. }) => true,
        (x, y) => x == y,
    }
}

/// Why a clause is "incorrectly formed" (errno 150): the text of MariaDB's warning 150
/// after "… constraint failed. ".
pub(crate) struct Malformed(pub String);

/// A FOREIGN KEY clause of a table with columns `columns`, checked as
/// InnoDB checks it. The parent is `parent` (`None`: not found; `Some(None)` means the
/// parent is the table itself, whose definition is `self_def`). The child's index is
/// not checked here.
#[allow(clippy::too_many_arguments)]
fn build(
    columns: &[Column],
    fk: &sql::ForeignKeyConstraint,
    name: String,
    parent_db: String,
    parent_table: String,
    parent: Option<&TableDef>,
    checks: bool,
) -> Result<std::result::Result<ForeignKeyDef, Malformed>> {
    let cols: Vec<String> = fk.columns.iter().map(|c| c.value.clone()).collect();
    let pcols: Vec<String> = fk
        .referred_columns
        .iter()
        .map(|c| c.value.clone())
        .collect();
    if cols.len() != pcols.len() {
        let n = fk
            .name
            .as_ref()
            .map_or("foreign key without name".to_string(), |n| n.value.clone());
        return Err(SqlError::FkKeyMismatch(n));
    }
    let mut child_ix = Vec::new();
    for c in &cols {
        let i = columns
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(c))
            .ok_or_else(|| SqlError::KeyColumnMissing(c.clone()))?;
        child_ix.push(i);
    }
    let f = ForeignKeyDef {
        child: 0,
        name,
        columns: child_ix.iter().map(|&i| columns[i].name.clone()).collect(),
        parent_db,
        parent_table,
        parent_columns: pcols.clone(),
        on_delete: action(&fk.on_delete),
        on_update: action(&fk.on_update),
    };
    for &i in &child_ix {
        let set_null = f.on_delete == FkAction::SetNull || f.on_update == FkAction::SetNull;
        if set_null && !columns[i].nullable {
            return Ok(Err(Malformed(format!(
                "You have defined a SET NULL condition but column '{}' is defined as NOT NULL.",
                columns[i].name
            ))));
        }
    }
    let Some(p) = parent else {
        if checks {
            return Ok(Err(Malformed(format!(
                "Referenced table `{}`.`{}` not found in the data dictionary.",
                f.parent_db, f.parent_table
            ))));
        }
        return Ok(Ok(f));
    };
    let mut p_ix = Vec::new();
    for c in &pcols {
        match p
            .columns
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(c))
        {
            Some(i) => p_ix.push(i),
            None => {
                return Ok(Err(Malformed(
                    "There is no index in the referenced table where the referenced columns \
                     appear as the first columns."
                        .into(),
                )))
            }
        }
    }
    if !quire_engine::table::has_index_on(p, &p_ix) {
        return Ok(Err(Malformed(
            "There is no index in the referenced table where the referenced columns appear \
             as the first columns."
                .into(),
        )));
    }
    for (&ci, &pi) in child_ix.iter().zip(&p_ix) {
        if !compatible(&columns[ci], &p.columns[pi]) {
            return Ok(Err(Malformed(format!(
                "Field type or character set for column '{}' does not match referenced \
                 column '{}'.",
                columns[ci].name, p.columns[pi].name
            ))));
        }
    }
    let mut f = f;
    f.parent_columns = p_ix.iter().map(|&i| p.columns[i].name.clone()).collect();
    Ok(Ok(f))
}

/// The index a constraint needs on its child: any index (or the primary key) whose
/// leading columns are the constraint's; else one is added, named as MariaDB names it
/// (the constraint's name if one was given, else the first column's).
fn ensure_child_index(
    columns: &[Column],
    pk: &[usize],
    indexes: &mut Vec<IndexSpec>,
    cols: &[String],
    explicit_name: Option<&str>,
) {
    let ix: Vec<usize> = cols
        .iter()
        .filter_map(|c| columns.iter().position(|x| x.name.eq_ignore_ascii_case(c)))
        .collect();
    let leads = |k: &[usize]| k.len() >= ix.len() && k[..ix.len()] == *ix;
    if leads(pk) {
        return;
    }
    if indexes.iter().any(|i| {
        i.columns.len() >= ix.len()
            && i.columns
                .iter()
                .zip(&ix)
                .all(|(c, &x)| c.column == x && c.prefix.is_none())
    }) {
        return;
    }
    let base = explicit_name
        .map(str::to_string)
        .unwrap_or_else(|| columns[ix[0]].name.clone());
    let mut name = base.clone();
    let mut n = 2;
    while indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&name)) {
        name = format!("{base}_{n}");
        n += 1;
    }
    indexes.push(IndexSpec {
        name,
        columns: ix.into_iter().map(IndexColumn::new).collect(),
        unique: false,
        comment: String::new(),
    });
}

impl<'d> Session<'d> {
    /// `foreign_key_checks` of this session.
    pub(crate) fn foreign_key_checks(&self) -> bool {
        let v = self
            .sv
            .vars
            .get("foreign_key_checks")
            .cloned()
            .or_else(|| crate::vars::global(self.inst, "foreign_key_checks"));
        !matches!(v, Some(Value::Int(0)) | Some(Value::UInt(0)))
    }

    fn fk_parent_name(&self, fk: &sql::ForeignKeyConstraint) -> Result<(String, String)> {
        self.db_and_name(&fk.foreign_table)
    }

    /// Raises MariaDB's warnings for a malformed clause and returns its 1005 error.
    fn fk_malformed(&self, db: &str, table: &str, cols: &str, why: Malformed) -> SqlError {
        self.warn_now(
            Level::Warning,
            150,
            format!(
                "Create  table `{db}`.`{table}` with foreign key ({cols}) constraint failed. {}",
                why.0
            ),
        );
        self.after_error.borrow_mut().push((
            1215,
            format!("Cannot add foreign key constraint for `{table}`"),
        ));
        SqlError::FkMalformed {
            db: db.into(),
            table: table.into(),
        }
    }

    /// The constraints of a CREATE TABLE (`fks`, in order, with whether each came from a
    /// column's REFERENCES), checked, with the child indexes they need added to `indexes`.
    pub(crate) fn plan_create_fks(
        &self,
        db: &str,
        name: &str,
        columns: &[Column],
        pk: &[usize],
        indexes: &mut Vec<IndexSpec>,
        fks: &[sql::ForeignKeyConstraint],
    ) -> Result<Vec<ForeignKeyDef>> {
        let checks = self.foreign_key_checks();
        let mut out: Vec<ForeignKeyDef> = Vec::new();
        let mut n = 0;
        for fk in fks {
            let explicit = fk
                .name
                .as_ref()
                .or(fk.index_name.as_ref())
                .map(|n| n.value.clone());
            let cname = match &explicit {
                Some(e) => e.clone(),
                None => {
                    n += 1;
                    format!("{name}_ibfk_{n}")
                }
            };
            let (pdb, ptable) = self.fk_parent_name(fk)?;
            let self_ref = pdb == db && ptable.eq_ignore_ascii_case(name);
            let self_def;
            let parent_def = if self_ref {
                self_def = TableDef {
                    id: 0,
                    db: db.into(),
                    name: name.into(),
                    space: quire_engine::page::SpaceId::SYSTEM,
                    space_name: String::new(),
                    root: quire_engine::catalog::CATALOG_ROOT,
                    columns: columns.to_vec(),
                    primary_key: pk.to_vec(),
                    auto_increment: None,
                    rebuilt_at: quire_engine::row::TrxId(0),
                    dropped: Vec::new(),
                    slot_order: Vec::new(),
                    comment: String::new(),
                    checks: Vec::new(),
                    collation: None,
                    next_index_no: 1,
                    indexes: indexes
                        .iter()
                        .enumerate()
                        .map(|(i, s)| quire_engine::catalog::IndexDef {
                            name: s.name.clone(),
                            unique: s.unique,
                            index_no: i as u16 + 1,
                            root: quire_engine::catalog::CATALOG_ROOT,
                            columns: s.columns.clone(),
                            usable_from: quire_engine::row::TrxId(0),
                            comment: s.comment.clone(),
                        })
                        .collect(),
                };
                Some(self_def)
            } else {
                self.inst
                    .db
                    .table(&pdb, &ptable)
                    .ok()
                    .and_then(|t| t.definition().ok())
            };
            let ptable = parent_def.as_ref().map_or(ptable, |p| p.name.clone());
            let cols = fk
                .columns
                .iter()
                .map(|c| c.value.clone())
                .collect::<Vec<_>>()
                .join(", ");
            let f = match build(columns, fk, cname, pdb, ptable, parent_def.as_ref(), checks)? {
                Ok(f) => f,
                Err(why) => return Err(self.fk_malformed(db, name, &cols, why)),
            };
            if out.iter().any(|g| g.name.eq_ignore_ascii_case(&f.name))
                || self.fk_name_taken(db, &f.name)
            {
                return Err(SqlError::FkDuplicateName {
                    db: db.into(),
                    table: name.into(),
                });
            }
            ensure_child_index(columns, pk, indexes, &f.columns, explicit.as_deref());
            out.push(f);
        }
        Ok(out)
    }

    /// Whether a constraint of database `db` is named `name` (names are unique per
    /// database in InnoDB).
    fn fk_name_taken(&self, db: &str, name: &str) -> bool {
        self.inst
            .db
            .all_foreign_keys()
            .iter()
            .any(|(d, _, f)| d == db && f.name.eq_ignore_ascii_case(name))
    }

    /// DROP TABLE of a table other tables reference: 1451 while `foreign_key_checks` is
    /// on (MariaDB 10.11 gives it without the constraint's text), unless every child is
    /// the table itself or dropped by the same statement.
    pub(crate) fn check_drop_referenced(
        &self,
        db: &str,
        name: &str,
        dropping: &[(String, String)],
    ) -> Result<()> {
        if !self.foreign_key_checks() {
            return Ok(());
        }
        let refs = self.inst.db.referencing(db, name);
        let blocked = refs.iter().any(|(cd, cn, _)| {
            let itself = cd == db && cn == name;
            let dropped_too = dropping.iter().any(|(d, t)| d == cd && t == cn);
            !itself && !dropped_too
        });
        if blocked {
            return Err(SqlError::FkRowIsReferenced(None));
        }
        Ok(())
    }

    /// `ALTER TABLE t ADD [CONSTRAINT n] FOREIGN KEY …` and `ALTER TABLE t DROP FOREIGN
    /// KEY n`, when those are all the statement does (`is_fk_alter`).
    pub(crate) fn alter_foreign_keys(&mut self, at: &sql::AlterTable) -> Result<Outcome> {
        self.commit_open()?;
        let (db, name) = self.db_and_name(&at.name)?;
        let _x = self.lock_exclusive(vec![(db.clone(), name.clone())])?;
        let table = self
            .inst
            .db
            .table(&db, &name)
            .map_err(|_| SqlError::NoSuchTable {
                db: db.clone(),
                table: name.clone(),
            })?;
        for op in &at.operations {
            match op {
                sql::AlterTableOperation::DropForeignKey { name: n, .. } => {
                    match self.inst.db.drop_foreign_key(&db, &name, &n.value) {
                        Ok(()) => {}
                        Err(DbError::NoSuchForeignKey(k)) => return Err(SqlError::FkCantDrop(k)),
                        Err(e) => return Err(e.into()),
                    }
                }
                sql::AlterTableOperation::AddConstraint {
                    constraint: sql::TableConstraint::ForeignKey(fk),
                    ..
                } => {
                    let def = table.definition()?;
                    self.add_foreign_key(&db, &name, &def, fk)?;
                }
                _ => return Err(SqlError::Unsupported("ALTER TABLE".into())),
            }
        }
        self.inst.bump_generation();
        Ok(Outcome::ok(0))
    }

    fn add_foreign_key(
        &mut self,
        db: &str,
        name: &str,
        def: &TableDef,
        fk: &sql::ForeignKeyConstraint,
    ) -> Result<()> {
        let checks = self.foreign_key_checks();
        let explicit = fk
            .name
            .as_ref()
            .or(fk.index_name.as_ref())
            .map(|n| n.value.clone());
        let cname = match &explicit {
            Some(e) => e.clone(),
            None => {
                // The next free `<table>_ibfk_N`, as InnoDB numbers them.
                let own = self.inst.db.foreign_keys(db, name).unwrap_or_default();
                let mut n = 1;
                while own
                    .iter()
                    .any(|f| f.name.eq_ignore_ascii_case(&format!("{name}_ibfk_{n}")))
                {
                    n += 1;
                }
                format!("{name}_ibfk_{n}")
            }
        };
        let (pdb, ptable) = self.fk_parent_name(fk)?;
        let parent_def = self
            .inst
            .db
            .table(&pdb, &ptable)
            .ok()
            .and_then(|t| t.definition().ok());
        let ptable = parent_def.as_ref().map_or(ptable, |p| p.name.clone());
        let cols = fk
            .columns
            .iter()
            .map(|c| c.value.clone())
            .collect::<Vec<_>>()
            .join(", ");
        let f = match build(
            &def.columns,
            fk,
            cname,
            pdb,
            ptable,
            parent_def.as_ref(),
            checks,
        )? {
            Ok(f) => f,
            Err(why) => return Err(self.fk_malformed(db, name, &cols, why)),
        };
        if self.fk_name_taken(db, &f.name) {
            return Err(SqlError::FkDuplicateName {
                db: db.into(),
                table: name.into(),
            });
        }
        let pk = def.primary_key.clone();
        let mut specs: Vec<IndexSpec> = def
            .indexes
            .iter()
            .map(|i| IndexSpec {
                name: i.name.clone(),
                columns: i.columns.clone(),
                unique: i.unique,
                comment: i.comment.clone(),
            })
            .collect();
        let before = specs.len();
        ensure_child_index(
            &def.columns,
            &pk,
            &mut specs,
            &f.columns,
            explicit.as_deref(),
        );
        if checks {
            self.verify_existing_rows(db, name, def, &f)?;
        }
        if specs.len() > before {
            if let Some(s) = specs.pop() {
                self.inst.db.create_index(db, name, s)?;
            }
        }
        self.inst.db.add_foreign_key(db, name, f)?;
        Ok(())
    }

    /// ADD FOREIGN KEY with checks on: every child row with no NULL in the columns must
    /// have its parent (1452 naming the first that does not).
    fn verify_existing_rows(
        &mut self,
        db: &str,
        name: &str,
        def: &TableDef,
        f: &ForeignKeyDef,
    ) -> Result<()> {
        let cols: Vec<usize> = f
            .columns
            .iter()
            .filter_map(|c| def.columns.iter().position(|x| &x.name == c))
            .collect();
        let child = self.inst.db.table(db, name)?;
        let parent = self.inst.db.table(&f.parent_db, &f.parent_table).ok();
        let pdef = match &parent {
            Some(p) => Some(p.definition()?),
            None => None,
        };
        let pcols: Vec<usize> = match &pdef {
            Some(p) => f
                .parent_columns
                .iter()
                .filter_map(|c| p.columns.iter().position(|x| &x.name == c))
                .collect(),
            None => Vec::new(),
        };
        let mut wanted = std::collections::BTreeSet::new();
        for r in child.scan(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            quire_engine::btree::Direction::Forward,
        )? {
            let r = r?;
            let vals: Vec<Value> = cols.iter().map(|&c| r[c].clone()).collect();
            if vals.iter().any(|v| matches!(v, Value::Null)) {
                continue;
            }
            wanted.insert(format!("{vals:?}"));
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let mut have = std::collections::BTreeSet::new();
        if let Some(p) = &parent {
            for r in p.scan(
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                quire_engine::btree::Direction::Forward,
            )? {
                let r = r?;
                let vals: Vec<Value> = pcols.iter().map(|&c| r[c].clone()).collect();
                have.insert(format!("{vals:?}"));
            }
        }
        if wanted.iter().any(|w| !have.contains(w)) {
            return Err(SqlError::FkNoReferencedRow(format!(
                "`{db}`.`{name}`, {}",
                f.sql(db)
            )));
        }
        Ok(())
    }
}

/// Whether an ALTER TABLE only adds or drops foreign keys (the statement this module
/// runs; every other ALTER goes elsewhere).
pub(crate) fn is_fk_alter(at: &sql::AlterTable) -> bool {
    !at.operations.is_empty()
        && at.operations.iter().all(|op| {
            matches!(
                op,
                sql::AlterTableOperation::DropForeignKey { .. }
                    | sql::AlterTableOperation::AddConstraint {
                        constraint: sql::TableConstraint::ForeignKey(_),
                        ..
                    }
            )
        })
}

/// The constraint lines of SHOW CREATE TABLE, in name order as MariaDB prints them.
pub fn show_create_lines(child_db: &str, fks: &[ForeignKeyDef]) -> Vec<String> {
    let mut v: Vec<&ForeignKeyDef> = fks.iter().collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v.into_iter()
        .map(|f| format!("  {}", f.sql(child_db)))
        .collect()
}

/// A column-level `REFERENCES p (c)` as the table-level clause it stands for (MariaDB
/// 10.5+ honours it).
pub(crate) fn from_column(
    column: &str,
    fk: &sql::ForeignKeyConstraint,
) -> sql::ForeignKeyConstraint {
    let mut f = fk.clone();
    if f.columns.is_empty() {
        f.columns = vec![sql::Ident::new(column)];
    }
    f
}
