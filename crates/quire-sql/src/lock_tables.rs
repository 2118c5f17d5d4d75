//! # LOCK TABLES and UNLOCK TABLES
//!
//! MariaDB's explicit table locks, built on the metadata locks (`mdl.rs`). mariadb-dump
//! writes `LOCK TABLES t WRITE` around each table's rows, and applications use them for
//! batch jobs. What a session sees is MariaDB's: after `LOCK TABLES t1 READ, t2 AS a WRITE`
//! it may use only `t1` and `a`, under those names (1100 for any other, an alias included),
//! and write only `a` (1099); a DDL may change only a table it locked WRITE.
//!
//! Other sessions: a WRITE lock keeps them from reading and writing the table, as in
//! MariaDB. A READ lock is *stronger* than MariaDB's: the metadata locks have one shared
//! mode, so READ takes the same exclusive lock as WRITE, and other sessions wait to read
//! the table too, where MariaDB lets them read (docs/sql.md, "LOCK TABLES"). Waiting is
//! never wrong, only slower; nothing can change a table a session locked READ.
//!
//! Invariants:
//! 1. While `Session::locked` is `Some`, the session holds an exclusive metadata lock on
//!    every table in it, all taken at once (mdl invariant 3: granted together or not at
//!    all), and its statements take no other metadata lock: every table they use is in it
//!    (checked before they run), so they never wait for a lock, least of all their own.
//! 2. The locks outlive transactions (COMMIT keeps them) and end at UNLOCK TABLES, at the
//!    next LOCK TABLES, at BEGIN / START TRANSACTION, and when the session ends; each of
//!    these commits the open transaction first, as MariaDB does.

use crate::dispatch::{qualified_name, Tok};
use crate::error::{Result, SqlError};
use crate::exec::TableRef;
use crate::session::Session;
use crate::stmt::Planned;

/// The tables a session has locked (invariant 1).
pub(crate) struct Locked<'d> {
    _guard: crate::mdl::Exclusive<'d>,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    db: String,
    name: String,
    /// The name statements must use: the alias, or the table's own name.
    alias: String,
    write: bool,
}

impl Locked<'_> {
    /// The entry a statement's table matches: same table, same name or alias (aliases
    /// compare case-insensitively, as in MariaDB); one locked WRITE first.
    fn find(&self, db: &str, name: &str, alias: &str) -> Option<&Entry> {
        let mut found = self
            .entries
            .iter()
            .filter(|e| e.db == db && e.name == name && e.alias.eq_ignore_ascii_case(alias));
        let first = found.next()?;
        Some(if first.write {
            first
        } else {
            found.find(|e| e.write).unwrap_or(first)
        })
    }

    /// Whether a planned statement may run under these locks: every table it uses is
    /// locked under the name it uses, and those it writes are locked WRITE.
    pub(crate) fn check(&self, p: &Planned) -> Result<()> {
        let written = written(p);
        // Temporary tables need no lock (as in MariaDB): only their session sees them.
        for t in p.tables().filter(|t| t.db != quire_engine::table::TEMP_DB) {
            let entry = self
                .find(&t.db, &t.name, &t.alias)
                .ok_or_else(|| SqlError::TableNotLocked(t.alias.clone()))?;
            let writes = written
                .iter()
                .any(|w| w.db == t.db && w.name == t.name && w.alias == t.alias);
            if writes && !entry.write {
                return Err(SqlError::TableLockedForRead(t.alias.clone()));
            }
        }
        Ok(())
    }

    /// Whether a DDL may change `names`: each must be locked WRITE (MariaDB answers 1099
    /// for one locked READ, 1100 for one not locked, a new table's name included).
    pub(crate) fn check_ddl(&self, names: &[(String, String)]) -> Result<()> {
        for (db, name) in names {
            let mut of = self
                .entries
                .iter()
                .filter(|e| &e.db == db && &e.name == name);
            match of.clone().find(|e| e.write).or_else(|| of.next()) {
                None => return Err(SqlError::TableNotLocked(name.clone())),
                Some(e) if !e.write => return Err(SqlError::TableLockedForRead(name.clone())),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// The tables a statement writes.
fn written(p: &Planned) -> Vec<&TableRef> {
    match p {
        Planned::Select(_) | Planned::Do(_) => Vec::new(),
        Planned::Insert(i) => vec![&i.table],
        Planned::Update(u) => vec![&u.table],
        Planned::Delete(d) => vec![&d.table],
        Planned::UpdateJoin(m) | Planned::DeleteJoin(m) => {
            m.targets.iter().map(|t| &t.table).collect()
        }
    }
}

/// One item of a LOCK TABLES list: database (if named), table, alias (if any), WRITE.
type LockItem = (Option<String>, String, Option<String>, bool);

/// Parses the list after `LOCK TABLE[S]`: `name [[AS] alias] READ [LOCAL] | [LOW_PRIORITY]
/// WRITE [CONCURRENT]`, comma-separated. `None`: a syntax error.
fn parse(toks: &[Tok]) -> Option<Vec<LockItem>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let (db, name, next) = qualified_name(toks, i)?;
        i = next;
        let mut alias = None;
        if toks.get(i)?.is("as") {
            alias = Some(toks.get(i + 1)?.ident()?.to_string());
            i += 2;
        } else if !["read", "write", "low_priority"]
            .iter()
            .any(|k| toks.get(i).is_some_and(|t| t.is(k)))
        {
            alias = Some(toks.get(i)?.ident()?.to_string());
            i += 1;
        }
        let write = match toks.get(i)? {
            t if t.is("read") => {
                i += 1;
                if toks.get(i).is_some_and(|t| t.is("local")) {
                    i += 1;
                }
                false
            }
            t if t.is("low_priority") => {
                if !toks.get(i + 1)?.is("write") {
                    return None;
                }
                i += 2;
                true
            }
            t if t.is("write") => {
                i += 1;
                if toks.get(i).is_some_and(|t| t.is("concurrent")) {
                    i += 1;
                }
                true
            }
            _ => return None,
        };
        out.push((db, name, alias, write));
        match toks.get(i) {
            None => return Some(out),
            Some(Tok::Punct(',')) => i += 1,
            Some(Tok::Punct(';')) if i + 1 == toks.len() => return Some(out),
            Some(_) => return None,
        }
    }
}

impl<'d> Session<'d> {
    /// `LOCK TABLE[S] …` (`toks` from the word after TABLES on): commits the open
    /// transaction and gives up the session's earlier table locks (invariant 2), checks
    /// every table exists (1146), then takes all the locks at once (invariant 1).
    pub(crate) fn lock_tables_statement(&mut self, toks: &[Tok], text: &str) -> Result<()> {
        let list = parse(toks).ok_or_else(|| SqlError::Parse {
            near: text.chars().take(80).collect(),
            line: 1,
        })?;
        self.unlock_tables()?;
        // Implicit commit, as MariaDB: the open transaction's shared locks would otherwise
        // make the exclusive ones below wait for this very session.
        self.commit_open()?;
        let mut entries = Vec::new();
        for (db, name, alias, write) in list {
            let db = db
                .or_else(|| self.sv.db.clone())
                .ok_or(SqlError::NoDatabaseSelected)?;
            if self.inst.db.table(&db, &name).is_err() {
                if self.inst.db.view(&db, &name).is_some() {
                    // MariaDB locks the view's tables through it; not done here yet.
                    return Err(SqlError::Unsupported("LOCK TABLES on a view".into()));
                }
                return Err(SqlError::NoSuchTable { db, table: name });
            }
            entries.push(Entry {
                alias: alias.unwrap_or_else(|| name.clone()),
                db,
                name,
                write,
            });
        }
        let names = entries
            .iter()
            .map(|e| (e.db.clone(), e.name.clone()))
            .collect();
        let guard = self.lock_exclusive(names)?;
        self.locked = Some(Locked {
            _guard: guard,
            entries,
        });
        Ok(())
    }

    /// `UNLOCK TABLES`, and the other ends of invariant 2: commits the open transaction if
    /// tables were locked (MariaDB's rule), then releases them. Nothing locked: nothing
    /// happens (no commit either).
    pub(crate) fn unlock_tables(&mut self) -> Result<()> {
        if self.locked.is_some() {
            let committed = self.commit_open();
            self.locked = None;
            committed?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(s: &str) -> Vec<Tok> {
        crate::dispatch::lex(s).unwrap_or_default()
    }

    #[test]
    fn the_lock_list_takes_aliases_and_every_lock_type() {
        let got = parse(&lex(
            "t READ, d.u AS x WRITE, `v` y READ LOCAL, w LOW_PRIORITY WRITE",
        ));
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            got,
            Some(vec![
                (None, "t".into(), None, false),
                (s("d"), "u".into(), s("x"), true),
                (None, "v".into(), s("y"), false),
                (None, "w".into(), None, true),
            ])
        );
        assert_eq!(parse(&lex("t")), None, "a lock type is required");
        assert_eq!(parse(&lex("t READ,")), None);
        assert_eq!(parse(&lex("t LOW_PRIORITY READ")), None);
    }
}
