//! Account statements (CREATE / ALTER / DROP / RENAME USER, SET PASSWORD, GRANT, REVOKE,
//! SHOW GRANTS, SHOW CREATE USER, FLUSH PRIVILEGES), the system tables behind them, and the
//! privilege check every statement passes (docs/security.md).
//!
//! Invariants:
//! 1. An account statement commits the open transaction first (as MariaDB's implicit
//!    commit), writes its rows in one transaction of its own, commits, and only then
//!    reloads the cache (acl.rs invariant 1): a crash before the commit leaves no trace,
//!    one after it leaves the whole change.
//! 2. Account statements run one at a time (`AclState::writer`), so the reload after one
//!    sees at least its own commit.
//! 3. A session without an account (the embedded API, or a server without system tables)
//!    passes every check; a session with one is checked against the cache as it is now.

use std::collections::HashMap;
use std::sync::Arc;

use quire_engine::row::Value;

use crate::acl::{self, privs, quote, Account, Acl, Plugin};
use crate::control::send_table;
use crate::dispatch::{lex, Tok};
use crate::error::{Result, SqlError};
use crate::meta::{CollectSink, FieldType, RowSink};
use crate::session::{Instance, Outcome, Session};

/// The system tables, created at bootstrap when missing (docs/security.md gives their
/// columns). User and Db compare by bytes (as MariaDB's utf8_bin), Host without case.
const SYSTEM_TABLES: [(&str, &str); 3] = [
    (
        "user",
        "CREATE TABLE mysql.user (Host VARCHAR(255) NOT NULL, \
         User VARCHAR(128) COLLATE utf8mb4_bin NOT NULL, \
         plugin VARCHAR(64) NOT NULL, authentication_string TEXT NOT NULL, \
         sha2_digest VARCHAR(64) NOT NULL, Priv BIGINT UNSIGNED NOT NULL, \
         account_locked CHAR(1) NOT NULL, \
         max_user_connections BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (Host, User))",
    ),
    (
        "db",
        "CREATE TABLE mysql.db (Host VARCHAR(255) NOT NULL, \
         Db VARCHAR(64) COLLATE utf8mb4_bin NOT NULL, \
         User VARCHAR(128) COLLATE utf8mb4_bin NOT NULL, Priv BIGINT UNSIGNED NOT NULL, \
         PRIMARY KEY (Host, Db, User))",
    ),
    (
        "tables_priv",
        "CREATE TABLE mysql.tables_priv (Host VARCHAR(255) NOT NULL, \
         Db VARCHAR(64) COLLATE utf8mb4_bin NOT NULL, \
         User VARCHAR(128) COLLATE utf8mb4_bin NOT NULL, Table_name VARCHAR(64) NOT NULL, \
         Priv BIGINT UNSIGNED NOT NULL, PRIMARY KEY (Host, Db, User, Table_name))",
    ),
];

/// What a session knows of its account.
#[derive(Debug, Default, Clone)]
pub(crate) struct SessionAcct {
    /// The account the login matched (user, host pattern): CURRENT_USER(). `None`: no
    /// checks (invariant 3).
    pub account: Option<(String, String)>,
    /// Internal statements on the system tables run unchecked.
    pub bypass: bool,
    /// What each statement text needs, by (current database, text).
    pub needs: HashMap<(Option<String>, String), Arc<Vec<Need>>>,
}

/// One privilege a statement needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Need {
    Table {
        db: String,
        table: String,
        privs: u64,
        /// The command name of 1142 (`SELECT`, `SHOW`, …).
        command: &'static str,
    },
    Db {
        db: String,
        privs: u64,
    },
    Global {
        privs: u64,
        /// The privilege names of 1227.
        names: &'static str,
    },
}

/// Creates the system tables where missing (a new data directory, or one made before
/// accounts existed), root's accounts with them, sets root's password when the server was
/// given one, and loads the cache.
pub fn bootstrap(inst: &Instance<'_>, root_password: Option<&str>) -> Result<()> {
    let mut s = inst.session("root", "localhost");
    let mut sink = CollectSink::default();
    if !inst.db.databases().iter().any(|d| d == "mysql") {
        s.query_text("CREATE DATABASE mysql", &mut sink)?;
    }
    let existing = inst.db.tables("mysql").map_err(SqlError::from)?;
    let mut created_user = false;
    for (name, ddl) in SYSTEM_TABLES {
        if !existing.iter().any(|t| t == name) {
            s.query_text(ddl, &mut sink)?;
            created_user |= name == "user";
        }
    }
    // A mysql.user made before accounts had connection limits gets the column (a rebuild
    // of a table of a few rows; existing accounts take the default, 0: no limit of their own).
    if !created_user {
        let has_limit = inst
            .db
            .table("mysql", "user")
            .map_err(SqlError::from)?
            .columns()
            .map_err(SqlError::from)?
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case("max_user_connections"));
        if !has_limit {
            s.query_text(
                "ALTER TABLE mysql.user ADD COLUMN max_user_connections BIGINT NOT NULL DEFAULT 0",
                &mut sink,
            )?;
        }
    }
    let pw = root_password.unwrap_or("");
    if created_user {
        for host in ["localhost", "%"] {
            s.query_text(
                &format!(
                    "INSERT INTO mysql.user VALUES ({}, 'root', 'mysql_native_password', {}, {}, {}, 'N', 0)",
                    quote(host),
                    quote(&acl::native_hash(pw)),
                    quote(&acl::sha2_digest_hex(pw)),
                    privs::ALL_GLOBAL | privs::GRANT
                ),
                &mut sink,
            )?;
        }
    } else if root_password.is_some() {
        // The configured root password is root's at every start (docs/security.md).
        s.query_text(
            &format!(
                "UPDATE mysql.user SET authentication_string = {}, sha2_digest = {} \
                 WHERE User = 'root' AND plugin = 'mysql_native_password'",
                quote(&acl::native_hash(pw)),
                quote(&acl::sha2_digest_hex(pw))
            ),
            &mut sink,
        )?;
    }
    let acl = load(&mut s)?;
    inst.acl.replace(acl);
    Ok(())
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Null => String::new(),
        other => crate::types::display(other),
    }
}

fn u64_of(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        Value::Int(i) => *i as u64,
        other => text_of(other).parse().unwrap_or(0),
    }
}

/// Reads the system tables (committed rows: each SELECT runs alone).
fn load(s: &mut Session<'_>) -> Result<Acl> {
    let mut acl = Acl::default();
    let mut q = |sql: &str| -> Result<Vec<Vec<Value>>> {
        let mut sink = CollectSink::default();
        s.query_text(sql, &mut sink)?;
        Ok(sink.rows)
    };
    for r in q("SELECT User, Host, plugin, authentication_string, sha2_digest, Priv, account_locked, max_user_connections FROM mysql.user")? {
        let [user, host, plugin, auth, sha2, privs, locked, max_conn] = &r[..] else {
            continue;
        };
        acl.accounts.push(Account {
            user: text_of(user),
            host: text_of(host),
            plugin: Plugin::by_name(&text_of(plugin)).unwrap_or(Plugin::Native),
            auth: text_of(auth),
            sha2: text_of(sha2),
            privs: u64_of(privs),
            locked: text_of(locked) == "Y",
            max_user_connections: text_of(max_conn).parse().unwrap_or(0),
        });
    }
    for r in q("SELECT User, Host, Db, Priv FROM mysql.db")? {
        let [user, host, db, privs] = &r[..] else {
            continue;
        };
        acl.dbs.push(acl::DbGrant {
            user: text_of(user),
            host: text_of(host),
            db: text_of(db),
            privs: u64_of(privs),
        });
    }
    for r in q("SELECT User, Host, Db, Table_name, Priv FROM mysql.tables_priv")? {
        let [user, host, db, table, privs] = &r[..] else {
            continue;
        };
        acl.tables.push(acl::TableGrant {
            user: text_of(user),
            host: text_of(host),
            db: text_of(db),
            table: text_of(table),
            privs: u64_of(privs),
        });
    }
    Ok(acl)
}

/// `'u'@'h'` as messages write it.
fn ident(u: &str, h: &str) -> String {
    format!("'{u}'@'{h}'")
}

/// `` `u`@`h` `` as SHOW GRANTS writes it.
fn bq(u: &str, h: &str) -> String {
    format!("`{}`@`{}`", u.replace('`', "``"), h.replace('`', "``"))
}

/// How CREATE USER / ALTER USER / GRANT … IDENTIFIED set the credentials.
#[derive(Debug, Clone)]
struct Auth {
    plugin: Plugin,
    /// The stored value.
    value: String,
    /// SHA256(SHA256(pw)) hex when the password was given in clear to a native account.
    sha2: String,
}

/// An account named in a statement.
#[derive(Debug, Clone)]
struct UserSpec {
    user: String,
    host: String,
    auth: Option<Auth>,
}

/// A grant's object.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Level {
    Global,
    Db(String),
    Table(String, String),
}

fn syntax(near: &str) -> SqlError {
    SqlError::Parse {
        near: near.chars().take(80).collect(),
        line: 1,
    }
}

/// The token reader of the account statements.
struct P<'a> {
    toks: &'a [Tok],
    i: usize,
    text: &'a str,
}

impl<'a> P<'a> {
    fn peek_is(&self, kw: &str) -> bool {
        self.toks.get(self.i).is_some_and(|t| t.is(kw))
    }
    fn eat(&mut self, kw: &str) -> bool {
        if self.peek_is(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, kw: &str) -> Result<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn punct(&mut self, c: char) -> bool {
        if matches!(self.toks.get(self.i), Some(Tok::Punct(p)) if *p == c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i >= self.toks.len()
    }
    /// 1064 near the rest of the statement from the current token.
    fn err(&self) -> SqlError {
        let rest = match self.toks.get(self.i) {
            None => String::new(),
            Some(t) => {
                let key = match t {
                    Tok::Word(w) | Tok::Quoted(w) | Tok::Str(w) => w.clone(),
                    Tok::Punct(c) => c.to_string(),
                };
                let lower = self.text.to_ascii_lowercase();
                let k = key.to_ascii_lowercase();
                // The text from the first occurrence of the token after the statement's
                // earlier tokens (good enough for MariaDB's `near '…'`).
                let skip: usize = self.toks[..self.i]
                    .iter()
                    .filter_map(|t| match t {
                        Tok::Word(w) => Some(w.len()),
                        _ => None,
                    })
                    .sum::<usize>()
                    .min(lower.len());
                match lower[skip..].find(&k) {
                    Some(p) => self.text[skip + p..].to_string(),
                    None => key,
                }
            }
        };
        syntax(&rest)
    }
    fn string(&mut self) -> Result<String> {
        match self.toks.get(self.i) {
            Some(Tok::Str(s)) => {
                self.i += 1;
                Ok(s.clone())
            }
            _ => Err(self.err()),
        }
    }
    fn name(&mut self) -> Result<String> {
        match self.toks.get(self.i) {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) | Some(Tok::Str(w)) => {
                self.i += 1;
                Ok(w.clone())
            }
            _ => Err(self.err()),
        }
    }

    /// `'u'@'h'`, `u@h`, `` `u`@`h` ``, `u` (host `%`), `CURRENT_USER[()]`.
    fn user(&mut self, current: &Option<(String, String)>) -> Result<(String, String)> {
        let tok = self.toks.get(self.i).cloned().ok_or_else(|| self.err())?;
        self.i += 1;
        let (user, mut host) = match tok {
            Tok::Word(w) if w.eq_ignore_ascii_case("current_user") => {
                if self.punct('(') && !self.punct(')') {
                    return Err(self.err());
                }
                return current.clone().ok_or_else(|| {
                    SqlError::Unsupported("CURRENT_USER without an account".into())
                });
            }
            Tok::Word(w) => match w.split_once('@') {
                Some((u, h)) => (u.to_string(), Some(h.to_string())),
                None => (w, None),
            },
            Tok::Str(u) | Tok::Quoted(u) => (u, None),
            Tok::Punct(_) => {
                self.i -= 1;
                return Err(self.err());
            }
        };
        // `'u'@'h'` lexes as Str, Word("@…"), [Str].
        if host.is_none() {
            if let Some(Tok::Word(w)) = self.toks.get(self.i) {
                if let Some(h) = w.strip_prefix('@') {
                    self.i += 1;
                    host = Some(h.to_string());
                }
            }
        }
        if host.as_deref() == Some("") {
            host = Some(match self.toks.get(self.i) {
                Some(Tok::Str(h)) | Some(Tok::Quoted(h)) | Some(Tok::Word(h)) => {
                    self.i += 1;
                    h.clone()
                }
                _ => return Err(self.err()),
            });
        }
        Ok((user, host.unwrap_or_else(|| "%".into())))
    }

    /// `IDENTIFIED BY 'pw' | BY PASSWORD 'hash' | {VIA|WITH} plugin [{USING|AS} 'v' |
    /// {USING|AS} PASSWORD('pw') | BY 'pw' (caching_sha2_password, MySQL's form)]`.
    fn auth(&mut self) -> Result<Option<Auth>> {
        if !self.eat("identified") {
            return Ok(None);
        }
        if self.eat("by") {
            if self.eat("password") {
                let h = self.string()?;
                return native_value(&h).map(Some);
            }
            let pw = self.string()?;
            return Ok(Some(Auth {
                plugin: Plugin::Native,
                value: acl::native_hash(&pw),
                sha2: acl::sha2_digest_hex(&pw),
            }));
        }
        if !(self.eat("via") || self.eat("with")) {
            return Err(self.err());
        }
        let name = self.name()?;
        let plugin =
            Plugin::by_name(&name).ok_or_else(|| SqlError::PluginNotLoaded(name.clone()))?;
        if self.eat("using") || self.eat("as") {
            if self.eat("password") {
                if !self.punct('(') {
                    return Err(self.err());
                }
                let pw = self.string()?;
                if !self.punct(')') {
                    return Err(self.err());
                }
                return Ok(Some(from_password(plugin, &pw)));
            }
            let v = self.string()?;
            return match plugin {
                Plugin::Native => native_value(&v).map(Some),
                Plugin::Ed25519 if acl::is_ed25519_value(&v) || v.is_empty() => Ok(Some(Auth {
                    plugin,
                    value: v,
                    sha2: String::new(),
                })),
                Plugin::Ed25519 => Err(SqlError::PasswordFormat(
                    "Password hash should be 43 characters long".into(),
                )),
                Plugin::CachingSha2 => Ok(Some(Auth {
                    plugin,
                    value: v,
                    sha2: String::new(),
                })),
            };
        }
        if plugin == Plugin::CachingSha2 && self.eat("by") {
            let pw = self.string()?;
            return Ok(Some(from_password(plugin, &pw)));
        }
        Ok(Some(Auth {
            plugin,
            value: String::new(),
            sha2: String::new(),
        }))
    }

    /// A grant's object: `*.*`, `*`, `db.*`, `db.t`, `t` (optionally after TABLE).
    fn level(&mut self, current_db: Option<&str>) -> Result<Level> {
        self.eat("table");
        #[derive(PartialEq)]
        enum Part {
            Name(String),
            Star,
            Dot,
        }
        let mut parts = Vec::new();
        while let Some(t) = self.toks.get(self.i) {
            if t.is("to") || t.is("from") {
                break;
            }
            match t {
                Tok::Punct('*') => parts.push(Part::Star),
                Tok::Quoted(q) => parts.push(Part::Name(q.clone())),
                Tok::Word(w) => {
                    let mut first = true;
                    for piece in w.split('.') {
                        if !first {
                            parts.push(Part::Dot);
                        }
                        first = false;
                        if !piece.is_empty() {
                            parts.push(Part::Name(piece.to_string()));
                        }
                    }
                }
                _ => return Err(self.err()),
            }
            self.i += 1;
        }
        let cur = || {
            current_db
                .map(str::to_string)
                .ok_or(SqlError::NoDatabaseSelected)
        };
        Ok(match &parts[..] {
            [Part::Star, Part::Dot, Part::Star] => Level::Global,
            [Part::Star] => Level::Db(cur()?),
            [Part::Name(d), Part::Dot, Part::Star] => Level::Db(d.clone()),
            [Part::Name(d), Part::Dot, Part::Name(t)] => Level::Table(d.clone(), t.clone()),
            [Part::Name(t)] => Level::Table(cur()?, t.clone()),
            _ => return Err(self.err()),
        })
    }

    /// The privilege list before ON: bits and whether GRANT OPTION was named; ALL
    /// [PRIVILEGES] is `u64::MAX` (the level decides).
    fn privilege_list(&mut self) -> Result<(u64, bool)> {
        let mut bits = 0u64;
        let mut grant_option = false;
        loop {
            if self.eat("all") {
                self.eat("privileges");
                bits = u64::MAX;
            } else if self.eat("usage") {
            } else if self.peek_is("grant") {
                self.i += 1;
                self.expect("option")?;
                grant_option = true;
            } else {
                // The longest run of words that names a privilege.
                let mut found = None;
                for n in (1..=4).rev() {
                    let words: Option<Vec<String>> = (0..n)
                        .map(|k| match self.toks.get(self.i + k) {
                            Some(Tok::Word(w)) => Some(w.to_ascii_uppercase()),
                            _ => None,
                        })
                        .collect();
                    if let Some(words) = words {
                        if let Some(b) = privs::by_name(&words.join(" ")) {
                            found = Some((b, n));
                            break;
                        }
                    }
                }
                let Some((b, n)) = found else {
                    return Err(self.err());
                };
                self.i += n;
                if matches!(self.toks.get(self.i), Some(Tok::Punct('('))) {
                    return Err(SqlError::Unsupported("column privileges".into()));
                }
                bits |= b;
            }
            if !self.punct(',') {
                break;
            }
        }
        Ok((bits, grant_option))
    }
}

fn native_value(h: &str) -> Result<Auth> {
    if !acl::is_native_hash(h) {
        return Err(SqlError::PasswordFormat(
            "Password hash should be a 41-digit hexadecimal number".into(),
        ));
    }
    Ok(Auth {
        plugin: Plugin::Native,
        value: h.to_ascii_uppercase(),
        sha2: String::new(),
    })
}

fn from_password(plugin: Plugin, pw: &str) -> Auth {
    match plugin {
        Plugin::Native => Auth {
            plugin,
            value: acl::native_hash(pw),
            sha2: acl::sha2_digest_hex(pw),
        },
        Plugin::Ed25519 => Auth {
            plugin,
            value: acl::ed25519_hash(pw),
            sha2: String::new(),
        },
        Plugin::CachingSha2 => Auth {
            plugin,
            value: acl::caching_sha2_hash(pw),
            sha2: String::new(),
        },
    }
}

/// What the level allows ALL to mean, and 1221 / 1144 for a privilege it cannot hold.
fn level_bits(level: &Level, bits: u64) -> Result<u64> {
    let all = match level {
        Level::Global => privs::ALL_GLOBAL,
        Level::Db(_) => privs::DB_ACLS & !privs::GRANT,
        Level::Table(..) => privs::TABLE_ACLS & !privs::GRANT,
    };
    if bits == u64::MAX {
        return Ok(all);
    }
    if bits & !all != 0 {
        return Err(match level {
            Level::Db(_) => SqlError::WrongUsage("DB GRANT".into(), "GLOBAL PRIVILEGES".into()),
            _ => SqlError::IllegalGrant,
        });
    }
    Ok(bits)
}

impl<'d> Session<'d> {
    /// The server authenticated this session as `account` (user, host pattern).
    pub fn set_account(&mut self, user: &str, host: &str) {
        self.sv.acct.account = Some((user.to_string(), host.to_string()));
        *self.info.account.lock() = Some((user.to_string(), host.to_string()));
    }

    /// The account the login matched (user, host pattern), when one did.
    pub fn account(&self) -> Option<(String, String)> {
        self.sv.acct.account.clone()
    }

    /// CURRENT_USER(): `user@host` of the account, or USER()'s when there is none.
    pub(crate) fn current_user_text(sv: &crate::session::SessVars) -> String {
        match &sv.acct.account {
            Some((u, h)) => format!("{u}@{h}"),
            None => format!("{}@{}", sv.user, acl::Peer::from_addr(&sv.host).name),
        }
    }

    fn acl_now(&self) -> Option<Arc<Acl>> {
        self.inst.acl.get()
    }

    /// The account's global privileges, all of them when unchecked (invariant 3).
    fn global_privs(&self) -> u64 {
        match (&self.sv.acct.account, self.acl_now()) {
            (Some((u, h)), Some(acl)) if !self.sv.acct.bypass => acl.global(u, h),
            _ => u64::MAX,
        }
    }

    fn checked(&self) -> Option<(String, String, Arc<Acl>)> {
        if self.sv.acct.bypass {
            return None;
        }
        let (u, h) = self.sv.acct.account.clone()?;
        let acl = self.acl_now()?;
        Some((u, h, acl))
    }

    /// 1227 unless the account holds one of `bits` globally.
    pub(crate) fn require_global(&self, bits: u64, names: &'static str) -> Result<()> {
        if self.global_privs() & bits != 0 {
            Ok(())
        } else {
            Err(SqlError::SpecificAccessDenied(names.into()))
        }
    }

    /// Whether the session may see (USE, SHOW DATABASES) database `db`.
    pub(crate) fn may_use_db(&self, db: &str) -> bool {
        match self.checked() {
            None => true,
            Some((u, h, acl)) => {
                db.eq_ignore_ascii_case("information_schema") || acl.may_use_db(&u, &h, db)
            }
        }
    }

    /// 1044 unless the session may use `db`.
    pub(crate) fn check_use_db(&self, db: &str) -> Result<()> {
        if self.may_use_db(db) {
            return Ok(());
        }
        let (u, h) = self.sv.acct.account.clone().unwrap_or_default();
        Err(SqlError::DbAccessDenied {
            user: u,
            host: h,
            db: db.into(),
        })
    }

    /// Whether the session holds any privilege on table `db`.`t` (SHOW TABLES lists it).
    pub(crate) fn may_see_table(&self, db: &str, t: &str) -> bool {
        match self.checked() {
            None => true,
            Some((u, h, acl)) => {
                (acl.global(&u, &h) | acl.db_privs(&u, &h, db) | acl.table_privs(&u, &h, db, t))
                    & privs::TABLE_ACLS
                    != 0
            }
        }
    }

    /// Whether SHOW PROCESSLIST shows every session (PROCESS), not only the account's own.
    pub(crate) fn sees_all_threads(&self) -> bool {
        self.global_privs() & privs::PROCESS != 0
    }

    /// KILL of a session that is not the user's own needs SUPER (1095 otherwise).
    pub(crate) fn check_kill(&self, owner: &str, id: u64) -> Result<()> {
        if owner == self.sv.user || self.global_privs() & privs::SUPER != 0 {
            Ok(())
        } else {
            Err(SqlError::KillDenied(id))
        }
    }

    pub(crate) fn check_needs(&self, needs: &[Need]) -> Result<()> {
        let Some((u, h, acl)) = self.checked() else {
            return Ok(());
        };
        for n in needs {
            match n {
                Need::Table {
                    db,
                    table,
                    privs: p,
                    command,
                } => {
                    if !acl.table_allows(&u, &h, db, table, *p) {
                        return Err(SqlError::TableAccessDenied {
                            command: (*command).into(),
                            user: self.sv.user.clone(),
                            host: acl::Peer::from_addr(&self.sv.host).name,
                            db: db.clone(),
                            table: table.clone(),
                        });
                    }
                }
                Need::Db { db, privs: p } => {
                    if (acl.global(&u, &h) | acl.db_privs(&u, &h, db)) & p != *p {
                        return Err(SqlError::DbAccessDenied {
                            user: u.clone(),
                            host: h.clone(),
                            db: db.clone(),
                        });
                    }
                }
                Need::Global { privs: p, names } => {
                    if acl.global(&u, &h) & p == 0 {
                        return Err(SqlError::SpecificAccessDenied((*names).into()));
                    }
                }
            }
        }
        Ok(())
    }

    /// The privilege check of a statement's text (every COM_QUERY, PREPARE and EXECUTE
    /// passes here): what it needs is worked out once per text and database, then held
    /// against the cache as it is now.
    pub(crate) fn check_access(&mut self, text: &str) -> Result<()> {
        if self.unrestricted() {
            return Ok(());
        }
        let key = (self.sv.db.clone(), text.to_string());
        let needs = match self.sv.acct.needs.get(&key) {
            Some(n) => n.clone(),
            None => {
                let n = Arc::new(self.needs_of(text)?);
                if self.sv.acct.needs.len() >= 256 {
                    self.sv.acct.needs.clear();
                }
                self.sv.acct.needs.insert(key, n.clone());
                n
            }
        };
        self.check_needs(&needs)
    }

    /// [`Session::check_access`] without keeping what the text needs (PREPARE).
    pub(crate) fn check_access_uncached(&self, text: &str) -> Result<()> {
        if self.unrestricted() {
            return Ok(());
        }
        self.check_needs(&self.needs_of(text)?)
    }

    /// No check can fail: no account, or one with every global privilege (root), whose
    /// statements are then not analysed at all.
    fn unrestricted(&self) -> bool {
        self.global_privs() & privs::ALL_GLOBAL == privs::ALL_GLOBAL
    }

    /// What `text` needs. Statements that check themselves (USE, SHOW, KILL, SET GLOBAL,
    /// account statements) need nothing here.
    fn needs_of(&self, text: &str) -> Result<Vec<Need>> {
        let first = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let cur = self.sv.db.clone();
        let name_of = |n: &sqlparser::ast::ObjectName| -> Option<(String, String)> {
            let parts: Vec<String> =
                n.0.iter()
                    .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
                    .collect();
            match &parts[..] {
                [t] => Some((cur.clone()?, t.clone())),
                [d, t] => Some((d.clone(), t.clone())),
                _ => None,
            }
        };
        let table = |db: String, table: String, p: u64, command: &'static str| Need::Table {
            db,
            table,
            privs: p,
            command,
        };
        let mut needs = Vec::new();
        match first.as_str() {
            "flush" => {
                needs.push(Need::Global {
                    privs: privs::RELOAD,
                    names: "RELOAD",
                });
                return Ok(needs);
            }
            "shutdown" => {
                needs.push(Need::Global {
                    privs: privs::SHUTDOWN,
                    names: "SHUTDOWN",
                });
                return Ok(needs);
            }
            "describe" | "desc" | "explain" | "check" | "analyze" | "optimize" | "checksum" => {
                let toks = lex(text).unwrap_or_default();
                if let Some((db, t, _)) = crate::dispatch::qualified_name(
                    &toks,
                    if first == "explain" || first == "describe" || first == "desc" {
                        1
                    } else {
                        2
                    },
                ) {
                    if let Some(db) = db.or_else(|| cur.clone()) {
                        if !matches!(
                            t.to_ascii_lowercase().as_str(),
                            "select"
                                | "update"
                                | "delete"
                                | "insert"
                                | "replace"
                                | "extended"
                                | "partitions"
                                | "format"
                        ) {
                            needs.push(table(db, t, privs::SELECT, "SELECT"));
                            return Ok(needs);
                        }
                    }
                }
                if first != "explain" {
                    return Ok(needs);
                }
            }
            "select" | "with" | "insert" | "replace" | "update" | "delete" | "create" | "drop"
            | "alter" | "truncate" | "rename" | "(" | "do" => {}
            _ => return Ok(needs),
        }
        if first == "alter" {
            // ALTER TABLE is read by alter.rs (sqlparser lacks some of its forms): ALTER on
            // the table, and for RENAME, DROP on it and CREATE, INSERT on the new name.
            if let Some(ts) = crate::alter::privilege_targets(text, cur.as_deref()) {
                let renames = ts.iter().any(|t| t.2);
                for (db, t, new) in ts {
                    needs.push(match (new, renames) {
                        (true, _) => table(db, t, privs::CREATE | privs::INSERT, "CREATE"),
                        (false, true) => table(db, t, privs::ALTER | privs::DROP, "ALTER"),
                        (false, false) => table(db, t, privs::ALTER, "ALTER"),
                    });
                }
                return Ok(needs);
            }
        }
        let body = if first == "explain" {
            text[7..].trim_start().to_string()
        } else if first == "do" {
            // DO reads what the same SELECT reads (its subqueries' tables).
            format!("SELECT {}", text.get(2..).unwrap_or(""))
        } else {
            text.to_string()
        };
        let Ok((stmt, _)) = crate::parse::parse_one_in(&body, self.sv.mode) else {
            // The statement fails to parse later, with its own error.
            return Ok(needs);
        };
        use sqlparser::ast::Statement as S;
        let mut reads = Vec::new();
        collect_relations(&stmt, &mut reads);
        let mut targets: Vec<((String, String), u64, &'static str)> = Vec::new();
        match &stmt {
            S::Insert(i) => {
                if let sqlparser::ast::TableObject::TableName(n) = &i.table {
                    if let Some(t) = name_of(n) {
                        let replace = i.replace_into;
                        // ON DUPLICATE KEY UPDATE may update: UPDATE too, checked before
                        // any row is written, as MariaDB (1142 `UPDATE command denied`).
                        if i.on.is_some() {
                            targets.push((t.clone(), privs::INSERT, "INSERT"));
                            targets.push((t, privs::UPDATE, "UPDATE"));
                        } else {
                            targets.push((
                                t,
                                if replace {
                                    privs::INSERT | privs::DELETE
                                } else {
                                    privs::INSERT
                                },
                                "INSERT",
                            ));
                        }
                    }
                }
            }
            S::Update(u) => {
                if let sqlparser::ast::TableFactor::Table { name, .. } = &u.table.relation {
                    if let Some(t) = name_of(name) {
                        targets.push((t, privs::UPDATE, "UPDATE"));
                    }
                }
            }
            S::Delete(d) => {
                let mut named = false;
                for n in &d.tables {
                    if let Some(t) = name_of(n) {
                        targets.push((t, privs::DELETE, "DELETE"));
                        named = true;
                    }
                }
                if !named {
                    let from = match &d.from {
                        sqlparser::ast::FromTable::WithFromKeyword(f)
                        | sqlparser::ast::FromTable::WithoutKeyword(f) => f,
                    };
                    if let Some(sqlparser::ast::TableFactor::Table { name, .. }) =
                        from.first().map(|f| &f.relation)
                    {
                        if let Some(t) = name_of(name) {
                            targets.push((t, privs::DELETE, "DELETE"));
                        }
                    }
                }
            }
            S::CreateTable(ct) => {
                if let Some(t) = name_of(&ct.name) {
                    targets.push((t, privs::CREATE, "CREATE"));
                }
            }
            S::CreateIndex(ci) => {
                if let Some(t) = name_of(&ci.table_name) {
                    targets.push((t, privs::INDEX, "INDEX"));
                }
            }
            S::AlterTable(at) => {
                if let Some(t) = name_of(&at.name) {
                    targets.push((t, privs::ALTER, "ALTER"));
                }
            }
            S::Truncate(tr) => {
                for n in &tr.table_names {
                    if let Some(t) = name_of(&n.name) {
                        targets.push((t, privs::DROP, "DROP"));
                    }
                }
            }
            S::RenameTable(rs) => {
                for r in rs {
                    if let Some(t) = name_of(&r.old_name) {
                        targets.push((t, privs::ALTER | privs::DROP, "ALTER"));
                    }
                    if let Some(t) = name_of(&r.new_name) {
                        targets.push((t, privs::CREATE | privs::INSERT, "CREATE"));
                    }
                }
            }
            S::Drop {
                object_type,
                names,
                table,
                ..
            } => match object_type {
                sqlparser::ast::ObjectType::Table => {
                    for n in names {
                        if let Some(t) = name_of(n) {
                            targets.push((t, privs::DROP, "DROP"));
                        }
                    }
                }
                sqlparser::ast::ObjectType::Index => {
                    if let Some(t) = table.as_ref().and_then(name_of) {
                        targets.push((t, privs::INDEX, "INDEX"));
                    }
                }
                sqlparser::ast::ObjectType::Schema | sqlparser::ast::ObjectType::Database => {
                    for n in names {
                        if let Some(d) = n.0.first().and_then(|p| p.as_ident()) {
                            needs.push(Need::Db {
                                db: d.value.clone(),
                                privs: privs::DROP,
                            });
                        }
                    }
                }
                _ => {}
            },
            S::CreateDatabase { db_name, .. } => {
                if let Some(d) = db_name.0.first().and_then(|p| p.as_ident()) {
                    needs.push(Need::Db {
                        db: d.value.clone(),
                        privs: privs::CREATE,
                    });
                }
            }
            S::CreateSchema {
                schema_name: sqlparser::ast::SchemaName::Simple(n),
                ..
            } => {
                if let Some(d) = n.0.first().and_then(|p| p.as_ident()) {
                    needs.push(Need::Db {
                        db: d.value.clone(),
                        privs: privs::CREATE,
                    });
                }
            }
            _ => {}
        }
        for ((db, t), p, command) in &targets {
            needs.push(table(db.clone(), t.clone(), *p, command));
        }
        let ctes = cte_names(&stmt);
        for n in reads {
            let Some((db, t)) = name_of(&n) else { continue };
            if n.0.len() == 1
                && (t.eq_ignore_ascii_case("dual")
                    || ctes.iter().any(|c| c.eq_ignore_ascii_case(&t)))
            {
                continue;
            }
            // Everyone reads information_schema (it shows what the account may see).
            if db.eq_ignore_ascii_case("information_schema") {
                continue;
            }
            if targets
                .iter()
                .any(|(k, _, _)| k.0 == db && k.1.eq_ignore_ascii_case(&t))
            {
                continue;
            }
            needs.push(table(db, t, privs::SELECT, "SELECT"));
        }
        Ok(needs)
    }

    /// Runs the account statements; `None` for any other text.
    pub(crate) fn account_statement(
        &mut self,
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Option<Outcome>> {
        let mut words = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';' || c == '=')
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase);
        let w1 = words.next().unwrap_or_default();
        let w2 = words.next().unwrap_or_default();
        let w3 = words.next().unwrap_or_default();
        let w4 = words.next().unwrap_or_default();
        let kind = match (w1.as_str(), w2.as_str()) {
            ("create", "user") => "create",
            ("create", "or") if w3 == "replace" && w4 == "user" => "create",
            ("alter", "user") => "alter",
            ("drop", "user") => "drop",
            ("rename", "user") => "rename",
            ("set", "password") => "password",
            ("grant", _) => "grant",
            ("revoke", _) => "revoke",
            ("show", "grants") => "show_grants",
            ("show", "create") if w3 == "user" => "show_create",
            ("flush", "privileges") => "flush",
            _ => return Ok(None),
        };
        if self.inst.acl.get().is_none() {
            return Err(SqlError::Unsupported(
                "account statements without the mysql system tables".into(),
            ));
        }
        let toks = lex(text).ok_or_else(|| syntax(text))?;
        let mut p = P {
            toks: &toks,
            i: 0,
            text,
        };
        let out = match kind {
            "show_grants" => self.show_grants(&mut p, sink)?,
            "show_create" => self.show_create_user(&mut p, sink)?,
            "flush" => {
                self.require_global(privs::RELOAD, "RELOAD")?;
                if p.toks.len() != 2 {
                    return Err(p.err());
                }
                let _w = self.inst.acl.writer.lock();
                self.reload()?;
                Outcome::ok(0)
            }
            _ => {
                let _w = self.inst.acl.writer.lock();
                match kind {
                    "create" => self.create_user(&mut p)?,
                    "alter" => self.alter_user(&mut p)?,
                    "drop" => self.drop_user(&mut p)?,
                    "rename" => self.rename_user(&mut p)?,
                    "password" => self.set_password(&mut p)?,
                    "grant" => self.grant(&mut p)?,
                    _ => self.revoke(&mut p)?,
                }
            }
        };
        Ok(Some(out))
    }

    fn reload(&mut self) -> Result<()> {
        let was = std::mem::replace(&mut self.sv.acct.bypass, true);
        let r = load(self);
        self.sv.acct.bypass = was;
        self.inst.acl.replace(r?);
        Ok(())
    }

    /// Runs `stmts` on the system tables as one transaction (invariant 1), then reloads.
    fn write_rows(&mut self, stmts: &[String]) -> Result<()> {
        if stmts.is_empty() {
            return Ok(());
        }
        let was = std::mem::replace(&mut self.sv.acct.bypass, true);
        let mut sink = CollectSink::default();
        let r = (|| -> Result<()> {
            self.query_text("BEGIN", &mut sink)?;
            for s in stmts {
                if let Err(e) = self.query_text(s, &mut sink) {
                    let _ = self.query_text("ROLLBACK", &mut sink);
                    return Err(e);
                }
            }
            self.query_text("COMMIT", &mut sink)?;
            Ok(())
        })();
        self.sv.acct.bypass = was;
        r?;
        self.reload()
    }

    /// The implicit commit of an account statement (invariant 1).
    fn implicit_commit(&mut self) -> Result<()> {
        if self.in_transaction() {
            let mut sink = CollectSink::default();
            let was = std::mem::replace(&mut self.sv.acct.bypass, true);
            let r = self.query_text("COMMIT", &mut sink);
            self.sv.acct.bypass = was;
            r?;
        }
        Ok(())
    }

    fn require_create_user(&self) -> Result<()> {
        self.require_global(privs::CREATE_USER, "CREATE USER")
    }

    fn insert_user(
        u: &str,
        h: &str,
        auth: &Auth,
        privs_bits: u64,
        locked: bool,
        max_conn: i64,
    ) -> String {
        format!(
            "INSERT INTO mysql.user VALUES ({}, {}, {}, {}, {}, {}, {}, {max_conn})",
            quote(h),
            quote(u),
            quote(auth.plugin.name()),
            quote(&auth.value),
            quote(&auth.sha2),
            privs_bits,
            if locked { "'Y'" } else { "'N'" }
        )
    }

    /// One resource option after `WITH`, if the next words are one: MAX_USER_CONNECTIONS n
    /// gives `Some(n)`. The per-hour limits and MAX_STATEMENT_TIME are refused (1235):
    /// Quire does not count them, and taking them silently would promise a limit.
    fn resource_option(p: &mut P<'_>) -> Result<Option<i64>> {
        for other in [
            "max_queries_per_hour",
            "max_updates_per_hour",
            "max_connections_per_hour",
            "max_statement_time",
        ] {
            if p.peek_is(other) {
                return Err(SqlError::Unsupported(format!(
                    "{} (only MAX_USER_CONNECTIONS is a resource limit)",
                    other.to_ascii_uppercase()
                )));
            }
        }
        if !p.eat("max_user_connections") {
            return Ok(None);
        }
        let negative = p.punct('-');
        let n = match p.toks.get(p.i) {
            // MariaDB takes a 32-bit number here; past it is a syntax error there too.
            Some(Tok::Word(w)) => w.parse::<i64>().ok().filter(|n| *n <= i64::from(u32::MAX)),
            _ => None,
        };
        let Some(n) = n else {
            return Err(p.err());
        };
        p.i += 1;
        Ok(Some(if negative { -n } else { n }))
    }

    /// `WITH resource_option…` of CREATE/ALTER USER, if there: the last MAX_USER_CONNECTIONS
    /// given (as MariaDB, a later one wins).
    fn resource_clause(p: &mut P<'_>) -> Result<Option<i64>> {
        if !p.eat("with") {
            return Ok(None);
        }
        let mut limit = Self::resource_option(p)?.ok_or_else(|| p.err())?;
        while let Some(n) = Self::resource_option(p)? {
            limit = n;
        }
        Ok(Some(limit))
    }

    fn where_user(u: &str, h: &str) -> String {
        format!("User = {} AND Host = {}", quote(u), quote(h))
    }

    fn user_specs(&self, p: &mut P<'_>, with_auth: bool) -> Result<Vec<UserSpec>> {
        let current = self.sv.acct.account.clone();
        let mut out = Vec::new();
        loop {
            let (user, host) = p.user(&current)?;
            let auth = if with_auth { p.auth()? } else { None };
            out.push(UserSpec { user, host, auth });
            if !p.punct(',') {
                break;
            }
        }
        Ok(out)
    }

    /// `ACCOUNT LOCK | UNLOCK` at the end, if there.
    fn lock_clause(p: &mut P<'_>) -> Result<Option<bool>> {
        let mut lock = None;
        while p.eat("account") {
            if p.eat("lock") {
                lock = Some(true);
            } else if p.eat("unlock") {
                lock = Some(false);
            } else {
                return Err(p.err());
            }
        }
        if !p.done() {
            return Err(p.err());
        }
        Ok(lock)
    }

    fn create_user(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("create")?;
        let or_replace = p.eat("or");
        if or_replace {
            p.expect("replace")?;
        }
        p.expect("user")?;
        let if_not_exists = if p.eat("if") {
            p.expect("not")?;
            p.expect("exists")?;
            true
        } else {
            false
        };
        let specs = self.user_specs(p, true)?;
        let max_conn = Self::resource_clause(p)?;
        let lock = Self::lock_clause(p)?;
        self.require_create_user()?;
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let mut stmts = Vec::new();
        let mut failed = Vec::new();
        for s in &specs {
            if acl.get(&s.user, &s.host).is_some() {
                if or_replace {
                    stmts.extend(Self::delete_account_rows(&s.user, &s.host));
                } else if if_not_exists {
                    self.warn_now(
                        crate::diag::Level::Note,
                        1973,
                        format!(
                            "Can't create user {}; it already exists",
                            ident(&s.user, &s.host)
                        ),
                    );
                    continue;
                } else {
                    failed.push(ident(&s.user, &s.host));
                    continue;
                }
            }
            let auth = s.auth.clone().unwrap_or(Auth {
                plugin: Plugin::Native,
                value: String::new(),
                sha2: String::new(),
            });
            stmts.push(Self::insert_user(
                &s.user,
                &s.host,
                &auth,
                0,
                lock == Some(true),
                max_conn.unwrap_or(0),
            ));
            self.inst.acl.forget(&s.user, &s.host);
        }
        self.write_rows(&stmts)?;
        if !failed.is_empty() {
            return Err(SqlError::OperationFailed {
                op: "CREATE USER".into(),
                users: failed.join(","),
            });
        }
        Ok(Outcome::ok(0))
    }

    fn delete_account_rows(u: &str, h: &str) -> Vec<String> {
        let w = Self::where_user(u, h);
        vec![
            format!("DELETE FROM mysql.user WHERE {w}"),
            format!("DELETE FROM mysql.db WHERE {w}"),
            format!("DELETE FROM mysql.tables_priv WHERE {w}"),
        ]
    }

    fn alter_user(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("alter")?;
        p.expect("user")?;
        let if_exists = if p.eat("if") {
            p.expect("exists")?;
            true
        } else {
            false
        };
        let specs = self.user_specs(p, true)?;
        let max_conn = Self::resource_clause(p)?;
        let lock = Self::lock_clause(p)?;
        // Changing one's own password needs nothing; anything else CREATE USER.
        let own = specs.len() == 1
            && lock.is_none()
            && max_conn.is_none()
            && self.sv.acct.account.as_ref()
                == Some(&(specs[0].user.clone(), specs[0].host.clone()));
        if !own {
            self.require_create_user()?;
        }
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let mut stmts = Vec::new();
        let mut failed = Vec::new();
        for s in &specs {
            if acl.get(&s.user, &s.host).is_none() {
                // MariaDB names the user alone here.
                let name = if s.host == "%" {
                    format!("'{}'", s.user)
                } else {
                    ident(&s.user, &s.host)
                };
                if if_exists {
                    self.warn_now(
                        crate::diag::Level::Error,
                        1133,
                        "Can't find any matching row in the user table".into(),
                    );
                    self.warn_now(
                        crate::diag::Level::Note,
                        1396,
                        format!("Operation ALTER USER failed for {name}"),
                    );
                } else {
                    failed.push(name);
                }
                continue;
            }
            let w = Self::where_user(&s.user, &s.host);
            if let Some(a) = &s.auth {
                stmts.push(format!(
                    "UPDATE mysql.user SET plugin = {}, authentication_string = {}, sha2_digest = {} WHERE {w}",
                    quote(a.plugin.name()),
                    quote(&a.value),
                    quote(&a.sha2)
                ));
                self.inst.acl.forget(&s.user, &s.host);
            }
            if let Some(l) = lock {
                stmts.push(format!(
                    "UPDATE mysql.user SET account_locked = {} WHERE {w}",
                    if l { "'Y'" } else { "'N'" }
                ));
            }
            if let Some(n) = max_conn {
                stmts.push(format!(
                    "UPDATE mysql.user SET max_user_connections = {n} WHERE {w}"
                ));
            }
        }
        self.write_rows(&stmts)?;
        if !failed.is_empty() {
            return Err(SqlError::OperationFailed {
                op: "ALTER USER".into(),
                users: failed.join(","),
            });
        }
        Ok(Outcome::ok(0))
    }

    fn drop_user(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("drop")?;
        p.expect("user")?;
        let if_exists = if p.eat("if") {
            p.expect("exists")?;
            true
        } else {
            false
        };
        let specs = self.user_specs(p, false)?;
        if !p.done() {
            return Err(p.err());
        }
        self.require_create_user()?;
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let mut stmts = Vec::new();
        let mut failed = Vec::new();
        for s in &specs {
            if acl.get(&s.user, &s.host).is_none() {
                if if_exists {
                    self.warn_now(
                        crate::diag::Level::Note,
                        1974,
                        format!(
                            "Can't drop user {}; it doesn't exist",
                            ident(&s.user, &s.host)
                        ),
                    );
                } else {
                    failed.push(ident(&s.user, &s.host));
                }
                continue;
            }
            stmts.extend(Self::delete_account_rows(&s.user, &s.host));
            self.inst.acl.forget(&s.user, &s.host);
        }
        self.write_rows(&stmts)?;
        if !failed.is_empty() {
            return Err(SqlError::OperationFailed {
                op: "DROP USER".into(),
                users: failed.join(","),
            });
        }
        Ok(Outcome::ok(0))
    }

    fn rename_user(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("rename")?;
        p.expect("user")?;
        let current = self.sv.acct.account.clone();
        let mut pairs = Vec::new();
        loop {
            let from = p.user(&current)?;
            p.expect("to")?;
            let to = p.user(&current)?;
            pairs.push((from, to));
            if !p.punct(',') {
                break;
            }
        }
        if !p.done() {
            return Err(p.err());
        }
        self.require_create_user()?;
        self.implicit_commit()?;
        let mut acl = (*self.acl_now().unwrap_or_default()).clone();
        let mut stmts = Vec::new();
        let mut failed = Vec::new();
        for ((fu, fh), (tu, th)) in pairs {
            if acl.get(&fu, &fh).is_none() || acl.get(&tu, &th).is_some() {
                failed.push(ident(&fu, &fh));
                continue;
            }
            let w = Self::where_user(&fu, &fh);
            for t in ["user", "db", "tables_priv"] {
                stmts.push(format!(
                    "UPDATE mysql.{t} SET User = {}, Host = {} WHERE {w}",
                    quote(&tu),
                    quote(&th)
                ));
            }
            // Later pairs see this one done (`a TO b, b TO c`).
            for a in &mut acl.accounts {
                if a.user == fu && a.host.eq_ignore_ascii_case(&fh) {
                    a.user = tu.clone();
                    a.host = th.clone();
                }
            }
            self.inst.acl.forget(&fu, &fh);
        }
        self.write_rows(&stmts)?;
        if !failed.is_empty() {
            return Err(SqlError::OperationFailed {
                op: "RENAME USER".into(),
                users: failed.join(","),
            });
        }
        Ok(Outcome::ok(0))
    }

    /// `SET PASSWORD [FOR u] = PASSWORD('pw') | 'hash'`.
    fn set_password(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("set")?;
        p.expect("password")?;
        let target = if p.eat("for") {
            Some(p.user(&self.sv.acct.account.clone())?)
        } else {
            None
        };
        if !p.punct('=') {
            return Err(p.err());
        }
        let given = if p.eat("password") {
            if !p.punct('(') {
                return Err(p.err());
            }
            let pw = p.string()?;
            if !p.punct(')') {
                return Err(p.err());
            }
            Ok(pw)
        } else {
            Err(p.string()?)
        };
        if !p.done() {
            return Err(p.err());
        }
        let (u, h) = match target {
            Some(t) => t,
            None => self
                .sv
                .acct
                .account
                .clone()
                .ok_or(SqlError::PasswordNoMatch)?,
        };
        if self.sv.acct.account.as_ref() != Some(&(u.clone(), h.clone())) {
            // Someone else's password: UPDATE on the mysql database (1044 otherwise).
            if self.checked().is_some() && !self.may_write_mysql() {
                return Err(SqlError::DbAccessDenied {
                    user: self.sv.acct.account.clone().unwrap_or_default().0,
                    host: self.sv.acct.account.clone().unwrap_or_default().1,
                    db: "mysql".into(),
                });
            }
        }
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let Some(acct) = acl.get(&u, &h).cloned() else {
            return Err(SqlError::PasswordNoMatch);
        };
        let auth = match given {
            Ok(pw) => from_password(acct.plugin, &pw),
            Err(hash) => match acct.plugin {
                Plugin::Native => native_value(&hash)?,
                other => Auth {
                    plugin: other,
                    value: hash,
                    sha2: String::new(),
                },
            },
        };
        self.inst.acl.forget(&u, &h);
        self.write_rows(&[format!(
            "UPDATE mysql.user SET plugin = {}, authentication_string = {}, sha2_digest = {} WHERE {}",
            quote(auth.plugin.name()),
            quote(&auth.value),
            quote(&auth.sha2),
            Self::where_user(&u, &h)
        )])?;
        Ok(Outcome::ok(0))
    }

    fn may_write_mysql(&self) -> bool {
        match self.checked() {
            None => true,
            Some((u, h, acl)) => {
                (acl.global(&u, &h) | acl.db_privs(&u, &h, "mysql")) & privs::UPDATE != 0
            }
        }
    }

    /// GRANT privs ON level TO users [WITH GRANT OPTION]: the account must hold GRANT
    /// OPTION and the privileges it gives, at that level or above.
    fn check_grantor(&self, level: &Level, bits: u64) -> Result<()> {
        let Some((u, h, acl)) = self.checked() else {
            return Ok(());
        };
        let (have, deny) = match level {
            Level::Global => (
                acl.global(&u, &h),
                SqlError::AccessDenied {
                    user: u.clone(),
                    host: h.clone(),
                    using: "YES",
                },
            ),
            Level::Db(db) => (
                acl.global(&u, &h) | acl.db_privs(&u, &h, db),
                SqlError::DbAccessDenied {
                    user: u.clone(),
                    host: h.clone(),
                    db: db.clone(),
                },
            ),
            Level::Table(db, t) => (
                acl.global(&u, &h) | acl.db_privs(&u, &h, db) | acl.table_privs(&u, &h, db, t),
                SqlError::TableAccessDenied {
                    command: "GRANT".into(),
                    user: self.sv.user.clone(),
                    host: acl::Peer::from_addr(&self.sv.host).name,
                    db: db.clone(),
                    table: t.clone(),
                },
            ),
        };
        if have & privs::GRANT == 0 || have & bits != bits {
            return Err(deny);
        }
        Ok(())
    }

    fn grant(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("grant")?;
        let (bits, opt_named) = p.privilege_list()?;
        p.expect("on")?;
        let level = p.level(self.sv.db.as_deref())?;
        p.expect("to")?;
        let specs = self.user_specs(p, true)?;
        let mut grant_option = opt_named;
        let mut max_conn = None;
        if p.eat("with") {
            loop {
                if p.eat("grant") {
                    p.expect("option")?;
                    grant_option = true;
                } else if let Some(n) = Self::resource_option(p)? {
                    max_conn = Some(n);
                } else {
                    break;
                }
            }
        }
        if !p.done() {
            return Err(p.err());
        }
        let mut bits = if bits == 0 {
            0
        } else {
            level_bits(&level, bits)?
        };
        if grant_option {
            bits |= privs::GRANT;
        }
        self.check_grantor(&level, bits)?;
        if let Level::Table(db, t) = &level {
            if self.inst.db.table(db, t).is_err() {
                return Err(SqlError::NoSuchTable {
                    db: db.clone(),
                    table: t.clone(),
                });
            }
        }
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let mut stmts = Vec::new();
        let mut missing = false;
        for s in &specs {
            match acl.get(&s.user, &s.host) {
                None => match &s.auth {
                    // GRANT … IDENTIFIED BY creates the account (MariaDB without
                    // NO_AUTO_CREATE_USER's refusal when a password is given).
                    Some(a) => {
                        self.require_create_user()?;
                        stmts.push(Self::insert_user(&s.user, &s.host, a, 0, false, 0));
                    }
                    None => {
                        missing = true;
                        continue;
                    }
                },
                Some(_) => {
                    if let Some(a) = &s.auth {
                        stmts.push(format!(
                            "UPDATE mysql.user SET plugin = {}, authentication_string = {}, sha2_digest = {} WHERE {}",
                            quote(a.plugin.name()),
                            quote(&a.value),
                            quote(&a.sha2),
                            Self::where_user(&s.user, &s.host)
                        ));
                    }
                }
            }
            let w = Self::where_user(&s.user, &s.host);
            if let Some(n) = max_conn {
                stmts.push(format!(
                    "UPDATE mysql.user SET max_user_connections = {n} WHERE {w}"
                ));
            }
            match &level {
                Level::Global => stmts.push(format!(
                    "UPDATE mysql.user SET Priv = Priv | {bits} WHERE {w}"
                )),
                Level::Db(db) => {
                    let old = acl.dbs.iter().find(|g| {
                        g.user == s.user && g.host.eq_ignore_ascii_case(&s.host) && g.db == *db
                    });
                    stmts.push(match old {
                        Some(_) => format!(
                            "UPDATE mysql.db SET Priv = Priv | {bits} WHERE {w} AND Db = {}",
                            quote(db)
                        ),
                        None => format!(
                            "INSERT INTO mysql.db VALUES ({}, {}, {}, {bits})",
                            quote(&s.host),
                            quote(db),
                            quote(&s.user)
                        ),
                    });
                }
                Level::Table(db, t) => {
                    let old = acl.tables.iter().find(|g| {
                        g.user == s.user
                            && g.host.eq_ignore_ascii_case(&s.host)
                            && g.db == *db
                            && g.table.eq_ignore_ascii_case(t)
                    });
                    stmts.push(match old {
                        Some(_) => format!(
                            "UPDATE mysql.tables_priv SET Priv = Priv | {bits} WHERE {w} AND Db = {} AND Table_name = {}",
                            quote(db),
                            quote(t)
                        ),
                        None => format!(
                            "INSERT INTO mysql.tables_priv VALUES ({}, {}, {}, {}, {bits})",
                            quote(&s.host),
                            quote(db),
                            quote(&s.user),
                            quote(t)
                        ),
                    });
                }
            }
        }
        self.write_rows(&stmts)?;
        if missing {
            return Err(SqlError::PasswordNoMatch);
        }
        Ok(Outcome::ok(0))
    }

    fn revoke(&mut self, p: &mut P<'_>) -> Result<Outcome> {
        p.expect("revoke")?;
        let save = p.i;
        // REVOKE ALL [PRIVILEGES], GRANT OPTION FROM users
        let all_form = p.eat("all") && {
            p.eat("privileges");
            p.punct(',') && p.eat("grant") && p.eat("option") && p.peek_is("from")
        };
        if all_form {
            p.expect("from")?;
            let specs = self.user_specs(p, false)?;
            if !p.done() {
                return Err(p.err());
            }
            self.require_create_user()?;
            self.implicit_commit()?;
            let acl = self.acl_now().unwrap_or_default();
            let mut stmts = Vec::new();
            let mut missing = Vec::new();
            for s in &specs {
                if acl.get(&s.user, &s.host).is_none() {
                    missing.push(ident(&s.user, &s.host));
                    continue;
                }
                let w = Self::where_user(&s.user, &s.host);
                stmts.push(format!("UPDATE mysql.user SET Priv = 0 WHERE {w}"));
                stmts.push(format!("DELETE FROM mysql.db WHERE {w}"));
                stmts.push(format!("DELETE FROM mysql.tables_priv WHERE {w}"));
            }
            self.write_rows(&stmts)?;
            if !missing.is_empty() {
                return Err(SqlError::OperationFailed {
                    op: "REVOKE".into(),
                    users: missing.join(","),
                });
            }
            return Ok(Outcome::ok(0));
        }
        p.i = save;
        let (bits, opt_named) = p.privilege_list()?;
        p.expect("on")?;
        let level = p.level(self.sv.db.as_deref())?;
        p.expect("from")?;
        let specs = self.user_specs(p, false)?;
        if !p.done() {
            return Err(p.err());
        }
        let mut bits = if bits == 0 {
            0
        } else {
            level_bits(&level, bits)?
        };
        if opt_named {
            bits |= privs::GRANT;
        }
        self.check_grantor(&level, bits)?;
        self.implicit_commit()?;
        let acl = self.acl_now().unwrap_or_default();
        let mut stmts = Vec::new();
        for s in &specs {
            let w = Self::where_user(&s.user, &s.host);
            let no_grant = || SqlError::NoSuchGrant {
                user: s.user.clone(),
                host: s.host.clone(),
            };
            if acl.get(&s.user, &s.host).is_none() {
                return Err(no_grant());
            }
            match &level {
                Level::Global => stmts.push(format!(
                    "UPDATE mysql.user SET Priv = Priv & ~{bits} WHERE {w}"
                )),
                Level::Db(db) => {
                    let Some(old) = acl.dbs.iter().find(|g| {
                        g.user == s.user && g.host.eq_ignore_ascii_case(&s.host) && g.db == *db
                    }) else {
                        return Err(no_grant());
                    };
                    let left = old.privs & !bits;
                    stmts.push(if left == 0 {
                        format!("DELETE FROM mysql.db WHERE {w} AND Db = {}", quote(db))
                    } else {
                        format!(
                            "UPDATE mysql.db SET Priv = {left} WHERE {w} AND Db = {}",
                            quote(db)
                        )
                    });
                }
                Level::Table(db, t) => {
                    let Some(old) = acl.tables.iter().find(|g| {
                        g.user == s.user
                            && g.host.eq_ignore_ascii_case(&s.host)
                            && g.db == *db
                            && g.table.eq_ignore_ascii_case(t)
                    }) else {
                        return Err(SqlError::NoSuchTableGrant {
                            user: s.user.clone(),
                            host: s.host.clone(),
                            table: t.clone(),
                        });
                    };
                    let left = old.privs & !bits;
                    let key = format!("{w} AND Db = {} AND Table_name = {}", quote(db), quote(t));
                    stmts.push(if left == 0 {
                        format!("DELETE FROM mysql.tables_priv WHERE {key}")
                    } else {
                        format!("UPDATE mysql.tables_priv SET Priv = {left} WHERE {key}")
                    });
                }
            }
        }
        self.write_rows(&stmts)?;
        Ok(Outcome::ok(0))
    }

    /// `FOR user` of SHOW GRANTS / SHOW CREATE USER; someone else's needs SELECT on
    /// `mysql` (1044).
    fn shown_account(&self, p: &mut P<'_>) -> Result<(String, String)> {
        let current = self.sv.acct.account.clone();
        let target = if p.eat("for") {
            p.user(&current)?
        } else {
            current
                .clone()
                .unwrap_or_else(|| ("root".into(), "localhost".into()))
        };
        if !p.done() {
            return Err(p.err());
        }
        if current.as_ref() != Some(&target) {
            if let Some((u, h, acl)) = self.checked() {
                if (acl.global(&u, &h) | acl.db_privs(&u, &h, "mysql")) & privs::SELECT == 0 {
                    return Err(SqlError::DbAccessDenied {
                        user: u,
                        host: h,
                        db: "mysql".into(),
                    });
                }
            }
        }
        Ok(target)
    }

    fn show_grants(&mut self, p: &mut P<'_>, sink: &mut dyn RowSink) -> Result<Outcome> {
        p.expect("show")?;
        p.expect("grants")?;
        let (u, h) = self.shown_account(p)?;
        let acl = self.acl_now().unwrap_or_default();
        let Some(a) = acl.get(&u, &h) else {
            return Err(SqlError::NoSuchGrant { user: u, host: h });
        };
        let to = bq(&a.user, &a.host);
        let opt = |bits: u64| {
            if bits & privs::GRANT != 0 {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        };
        // MariaDB: `WITH GRANT OPTION MAX_USER_CONNECTIONS n`, one WITH for both.
        let limit = match (a.privs & privs::GRANT != 0, a.max_user_connections) {
            (_, 0) => String::new(),
            (true, n) => format!(" MAX_USER_CONNECTIONS {n}"),
            (false, n) => format!(" WITH MAX_USER_CONNECTIONS {n}"),
        };
        let mut rows = vec![format!(
            "GRANT {} ON *.* TO {to}{}{}{limit}",
            privs::list(a.privs, privs::ALL_GLOBAL),
            auth_clause(a),
            opt(a.privs)
        )];
        for g in acl
            .dbs
            .iter()
            .filter(|g| g.user == a.user && g.host.eq_ignore_ascii_case(&a.host))
        {
            rows.push(format!(
                "GRANT {} ON `{}`.* TO {to}{}",
                privs::list(g.privs, privs::DB_ACLS),
                g.db.replace('`', "``"),
                opt(g.privs)
            ));
        }
        for g in acl
            .tables
            .iter()
            .filter(|g| g.user == a.user && g.host.eq_ignore_ascii_case(&a.host))
        {
            rows.push(format!(
                "GRANT {} ON `{}`.`{}` TO {to}{}",
                privs::list(g.privs, privs::TABLE_ACLS),
                g.db.replace('`', "``"),
                g.table.replace('`', "``"),
                opt(g.privs)
            ));
        }
        let col = format!("Grants for {}@{}", a.user, a.host);
        send_table(
            sink,
            &[(col.as_str(), FieldType::VarString)],
            rows.into_iter().map(|r| vec![Value::Str(r)]).collect(),
        )
    }

    fn show_create_user(&mut self, p: &mut P<'_>, sink: &mut dyn RowSink) -> Result<Outcome> {
        p.expect("show")?;
        p.expect("create")?;
        p.expect("user")?;
        let save = p.i;
        // SHOW CREATE USER u: `FOR` is not written here; shown_account reads `FOR u`.
        let (u, h) = if p.done() {
            self.shown_account(p)?
        } else {
            let current = self.sv.acct.account.clone();
            let t = p.user(&current)?;
            p.i = save;
            let toks: Vec<Tok> = std::iter::once(Tok::Word("for".into()))
                .chain(p.toks[save..].iter().cloned())
                .collect();
            let mut q = P {
                toks: &toks,
                i: 0,
                text: p.text,
            };
            let r = self.shown_account(&mut q)?;
            debug_assert_eq!(r, t);
            r
        };
        let acl = self.acl_now().unwrap_or_default();
        let Some(a) = acl.get(&u, &h) else {
            return Err(SqlError::OperationFailed {
                op: "SHOW CREATE USER".into(),
                users: ident(&u, &h),
            });
        };
        let text = format!(
            "CREATE USER {}{}{}{}",
            bq(&a.user, &a.host),
            auth_clause(a),
            match a.max_user_connections {
                0 => String::new(),
                n => format!(" WITH MAX_USER_CONNECTIONS {n}"),
            },
            if a.locked { " ACCOUNT LOCK" } else { "" }
        );
        let col = format!("CREATE USER for {}@{}", a.user, a.host);
        send_table(
            sink,
            &[(col.as_str(), FieldType::VarString)],
            vec![vec![Value::Str(text)]],
        )
    }
}

/// ` IDENTIFIED BY PASSWORD '…'` / ` IDENTIFIED VIA plugin USING '…'`, as SHOW GRANTS
/// writes an account's credentials.
fn auth_clause(a: &Account) -> String {
    match a.plugin {
        Plugin::Native if a.auth.is_empty() => String::new(),
        Plugin::Native => format!(" IDENTIFIED BY PASSWORD '{}'", a.auth),
        other => format!(
            " IDENTIFIED VIA {} USING '{}'",
            other.name(),
            a.auth.replace('\'', "\\'")
        ),
    }
}

/// The CTE names a statement defines (a relation of that name is no table).
fn cte_names(stmt: &sqlparser::ast::Statement) -> Vec<String> {
    use sqlparser::ast::{Visit, Visitor};
    struct V(Vec<String>);
    impl Visitor for V {
        type Break = ();
        fn pre_visit_query(
            &mut self,
            q: &sqlparser::ast::Query,
        ) -> std::ops::ControlFlow<Self::Break> {
            if let Some(w) = &q.with {
                for c in &w.cte_tables {
                    self.0.push(c.alias.name.value.clone());
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut v = V(Vec::new());
    let _ = stmt.visit(&mut v);
    v.0
}

/// Every table a statement names.
fn collect_relations(stmt: &sqlparser::ast::Statement, out: &mut Vec<sqlparser::ast::ObjectName>) {
    let _ = sqlparser::ast::visit_relations(stmt, |r| {
        out.push(r.clone());
        std::ops::ControlFlow::<()>::Continue(())
    });
}

impl Session<'_> {
    /// 1142 unless the session holds one of `bits` on `db`.`t` (SHOW COLUMNS needs SELECT,
    /// SHOW CREATE TABLE any table privilege).
    pub(crate) fn check_table(
        &self,
        db: Option<String>,
        t: &str,
        bits: u64,
        command: &'static str,
    ) -> Result<()> {
        let Some((u, h, acl)) = self.checked() else {
            return Ok(());
        };
        let Some(db) = db.or_else(|| self.sv.db.clone()) else {
            return Ok(());
        };
        let have = acl.global(&u, &h) | acl.db_privs(&u, &h, &db) | acl.table_privs(&u, &h, &db, t);
        if have & bits != 0 {
            return Ok(());
        }
        Err(SqlError::TableAccessDenied {
            command: command.into(),
            user: self.sv.user.clone(),
            host: acl::Peer::from_addr(&self.sv.host).name,
            db,
            table: t.into(),
        })
    }

    /// COM_REFRESH needs RELOAD, COM_SHUTDOWN SHUTDOWN (1227).
    pub fn check_command(&self, command: &str) -> Result<()> {
        match command {
            "reload" => self.require_global(privs::RELOAD, "RELOAD"),
            "shutdown" => self.require_global(privs::SHUTDOWN, "SHUTDOWN"),
            _ => Ok(()),
        }
    }
}
