//! # `Db::check` for one table
//!
//! What it verifies (docs/catalog.md, docs/blob.md):
//! 1. every B-tree of the table (`BTree::verify`);
//! 2. every clustered record decodes, its key is its row's, and every off-page reference
//!    names a well-formed chain of its length in the table's space (`btree::blob::walk`);
//! 3. each secondary index holds the entry of every live clustered record's newest
//!    version, live; a delete-marked record's entry, if still there, is marked (purge may
//!    have removed it already); every live (unmarked) entry is such an entry.
//!    Delete-marked entries of older versions are allowed: purge removes them
//!    (docs/transactions.md, docs/purge.md);
//! 4. page accounting: every page in use in the table's space is allocation metadata, a
//!    page of one of its trees, or a page of a chain a record names, and exactly one of
//!    those; no page of a tree or chain is marked free. Chains that old versions in the
//!    history list own (the images of Update and Revive records) count as reached; a
//!    DeleteMark image owns none (they are its record's). Used pages nothing reaches are reported
//!    as `leaked:` lines, per kind (the only thing a crash may leave: docs/blob.md). The
//!    undo logs of transactions still active are not read: run it on a quiescent database.
//!
//! Meant for a quiescent table (as `quire check` runs it): it holds the table's DML lock
//! shared and its chain lock shared, but inserts may still run.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;

use super::{DbInner, Result, TableState};
use crate::btree::{blob, Direction};
use crate::page::{Header, PageId, PageNo, PageType};
use crate::row::{secondary, Stored, TrxId};

/// Pages listed per kind of leak; the count is always complete.
const SHOW_PAGES: usize = 10;

fn page_list(pages: &[PageNo]) -> String {
    let mut s: Vec<String> = pages
        .iter()
        .take(SHOW_PAGES)
        .map(|p| p.0.to_string())
        .collect();
    if pages.len() > SHOW_PAGES {
        s.push("...".into());
    }
    s.join(", ")
}

pub(super) fn check_table(db: &DbInner, t: &TableState) -> Result<Vec<String>> {
    let _s = t.dml.read();
    Ok(check_table_locked(db, t)?.0)
}

/// `check_table` with the table's DML lock held by the caller: the problems, and the
/// leaked pages (used, reached by nothing; empty when accounting was skipped).
fn check_table_locked(db: &DbInner, t: &TableState) -> Result<(Vec<String>, Vec<PageNo>)> {
    let engine = &db.engine;
    let _c = t.chains.read();
    let name = format!("{}.{}", t.def.db, t.def.name);
    let mut problems = Vec::new();
    for p in t.clustered.verify(engine) {
        problems.push(format!("{name} PRIMARY: {p}"));
    }
    // Per index: the entry of each record's newest version → its delete mark.
    let mut expected: Vec<BTreeMap<Vec<u8>, bool>> = vec![BTreeMap::new(); t.indexes.len()];
    // Chain pages, and whether every chain could be walked (accounting needs all of them).
    let mut chains: HashSet<PageNo> = HashSet::new();
    let mut chains_whole = true;
    for e in t.clustered.scan(
        engine,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    ) {
        let e = e?;
        let fields = match t.layout.decode(&e.value) {
            Ok(f) => f,
            Err(err) => {
                problems.push(format!("{name} PRIMARY: undecodable row: {err}"));
                continue;
            }
        };
        let mut chains_ok = true;
        for (c, f) in fields.fields.iter().enumerate() {
            let Stored::External { r, .. } = f else {
                continue;
            };
            let col = t.def.columns.get(c).map_or("?", |c| c.name.as_str());
            let at = format!("{name} PRIMARY: key {:02x?} column `{col}`", e.key);
            if r.space != t.def.space {
                problems.push(format!("{at}: off-page value in space {}", r.space));
                chains_ok = false;
                continue;
            }
            match blob::pages(engine, r) {
                Ok(pages) => {
                    for p in pages {
                        if !chains.insert(p) {
                            problems.push(format!("{at}: BLOB page {p} is in two chains"));
                        }
                    }
                }
                Err(err) => {
                    problems.push(format!("{at}: {err}"));
                    chains_ok = false;
                }
            }
        }
        chains_whole &= chains_ok;
        if !chains_ok {
            continue;
        }
        let row_id = fields.sys.row_id;
        let row = match fields.into_values(&t.layout, |r| super::blob::fetch(engine, r)) {
            Ok(r) => r,
            Err(err) => {
                problems.push(format!("{name} PRIMARY: undecodable row: {err}"));
                continue;
            }
        };
        let mut key = Vec::new();
        t.layout.encode_key(&row, row_id, &db.limits, &mut key)?;
        if key != e.key {
            problems.push(format!(
                "{name} PRIMARY: a row's key differs from its record"
            ));
        }
        for (i, ix) in t.indexes.iter().enumerate() {
            let mut rec = Vec::new();
            ix.layout
                .encode(&row, row_id, TrxId(0), &db.limits, &mut rec)?;
            expected[i].insert(secondary::key(&rec)?.to_vec(), e.delete_marked);
        }
    }
    for (i, ix) in t.indexes.iter().enumerate() {
        for p in ix.tree.verify(engine) {
            problems.push(format!("{name} {}: {p}", ix.def.name));
        }
        let mut missing = expected[i].clone();
        for e in ix.tree.scan(
            engine,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e?;
            match missing.remove(&e.key) {
                Some(marked) if marked != e.delete_marked => problems.push(format!(
                    "{name} {}: entry (key {:02x?}) is {} but its row is {}",
                    ix.def.name,
                    e.key,
                    if e.delete_marked {
                        "delete-marked"
                    } else {
                        "live"
                    },
                    if marked { "deleted" } else { "live" },
                )),
                Some(_) => {}
                // An older version's entry, waiting for purge.
                None if e.delete_marked => {}
                None => problems.push(format!(
                    "{name} {}: live secondary entry without its row version (key {:02x?})",
                    ix.def.name, e.key
                )),
            }
        }
        for (k, deleted) in missing {
            if deleted {
                // Purge removes a deleted row's entries before the record itself, in mtrs
                // of their own: a crash in between leaves the record without them, and
                // purge finishes the job after recovery (docs/purge.md).
                continue;
            }
            problems.push(format!(
                "{name} {}: clustered row without secondary entry (key {k:02x?})",
                ix.def.name
            ));
        }
    }
    if chains_whole {
        for p in history_chains(db, t)? {
            // An old version's chain: its own pages (never shared with a newer version),
            // or the chain of a delete-marked record, counted already.
            chains.insert(p);
        }
        let leaked = account(db, t, &name, &chains, &mut problems)?;
        return Ok((problems, leaked));
    } else {
        problems.push(format!(
            "{name}: page accounting skipped: some BLOB chain could not be walked"
        ));
    }
    Ok((problems, Vec::new()))
}

/// A problem line that is a leak report (wasted pages), not damage.
pub(super) fn is_leak(problem: &str) -> bool {
    problem.contains(": leaked: ")
}

/// Frees the pages `check` reports as leaked, table by table (each under its DML lock held
/// exclusively) and in the system space (under the DDL lock). A table (or the system space)
/// with any other problem is left alone and named in the returned messages. Only for a
/// database no session uses: old versions that active transactions hold in their undo are
/// not counted as reached, so [`super::DbInner::reclaim_leaked`] refuses while any
/// transaction is active.
pub(super) fn reclaim(
    db: &DbInner,
    tables: &[std::sync::Arc<TableState>],
) -> Result<(u64, Vec<String>)> {
    let mut freed = 0;
    let mut skipped = Vec::new();
    for t in tables {
        let _x = t.dml.write();
        let (problems, leaked) = check_table_locked(db, t)?;
        let name = format!("{}.{}", t.def.db, t.def.name);
        if problems.iter().any(|p| !is_leak(p)) {
            skipped.push(format!(
                "{name}: not reclaimed: it has damage `check` reports"
            ));
            continue;
        }
        freed += free_pages(db, t.def.space, &leaked)?;
    }
    let _ddl = db.ddl.lock();
    let (problems, leaked) = check_system_full(db)?;
    if problems.iter().any(|p| !is_leak(p)) {
        skipped.push("system.qsp: not reclaimed: it has damage `check` reports".into());
    } else {
        freed += free_pages(db, crate::page::SpaceId::SYSTEM, &leaked)?;
    }
    Ok((freed, skipped))
}

/// Frees `pages` of `space`, up to 64 per mtr, and waits for the log.
fn free_pages(db: &DbInner, space: crate::page::SpaceId, pages: &[PageNo]) -> Result<u64> {
    let mut lsn = crate::page::Lsn::ZERO;
    for chunk in pages.chunks(64) {
        let mut mtr = db.engine.mtr();
        for p in chunk {
            db.engine.free_page(&mut mtr, PageId::new(space, *p))?;
        }
        if let Some(l) = mtr.commit().map_err(crate::engine::EngineError::from)? {
            lsn = lsn.max(l);
        }
    }
    if lsn != crate::page::Lsn::ZERO {
        db.engine.commit_wait(lsn);
    }
    Ok(pages.len() as u64)
}

/// The system space: the undo system's structure (`UndoSys::verify`), and its page
/// accounting: every used page is allocation metadata, a page of the catalog tree, or an
/// undo page (TRX_SYS, rollback segment headers, logs), and none of those is free.
pub(super) fn check_system(db: &DbInner) -> Result<Vec<String>> {
    Ok(check_system_full(db)?.0)
}

fn check_system_full(db: &DbInner) -> Result<(Vec<String>, Vec<PageNo>)> {
    let engine = &db.engine;
    let mut problems: Vec<String> = db.undo.verify(engine)?;
    let space = crate::page::SpaceId::SYSTEM;
    let catalog = crate::btree::BTree::open(engine, space, crate::catalog::CATALOG_ROOT)?;
    let catalog_pages: BTreeSet<PageNo> = catalog.pages(engine)?.into_iter().collect();
    let mut reached = catalog_pages.clone();
    for p in db.undo.pages(engine)? {
        if !reached.insert(p) {
            problems.push(format!(
                "system.qsp: page {p} is in the catalog and the undo logs"
            ));
        }
    }
    let used: BTreeSet<PageNo> = engine.used_pages(space)?.into_iter().collect();
    let group = engine.page_size().get();
    for p in &reached {
        if !used.contains(p) {
            let of = if catalog_pages.contains(p) {
                "the catalog"
            } else {
                "the undo logs"
            };
            problems.push(format!(
                "system.qsp: page {p} of {of} is in use but marked free"
            ));
        }
    }
    let leaked: Vec<PageNo> = used
        .iter()
        .filter(|p| !p.0.is_multiple_of(group) && !reached.contains(p))
        .copied()
        .collect();
    if !leaked.is_empty() {
        problems.push(format!(
            "system.qsp: leaked: {} page(s) nothing references: pages {}",
            leaked.len(),
            page_list(&leaked)
        ));
    }
    Ok((problems, leaked))
}

/// The BLOB pages the old versions of `t`'s rows that the history list holds own: those
/// of Update and Revive images (each version's chains are its own, docs/blob.md
/// invariant 4), not those of DeleteMark images, which belong to the marked record.
fn history_chains(db: &DbInner, t: &TableState) -> Result<Vec<PageNo>> {
    let mut out = Vec::new();
    for log in db.undo.history_batch(&db.engine, usize::MAX, u64::MAX)? {
        let recs = db.undo.history_records(&db.engine, &log)?;
        if recs
            .iter()
            .any(|(_, r)| r.table_id == super::txn::ROLLED_BACK)
        {
            // Undone: the images are the restored records (or freed chains).
            continue;
        }
        for (_, r) in recs {
            if r.table_id != t.def.id || r.kind != crate::undo::UndoKind::Update {
                continue;
            }
            let p = super::txn::decode_update(&r.payload)?;
            if p.op == super::txn::Op::DeleteMark {
                // Not the image's own chains: they are the delete-marked record's (a delete
                // keeps them), counted by the clustered scan while the record is there.
                // Purge frees them with the record, before the log leaves the history, so
                // after a crash in between the log names freed pages no version can reach:
                // the record is gone, and no roll pointer leads to this undo record
                // (docs/purge.md, crash analysis).
                continue;
            }
            out.extend(super::blob::record_chain_pages(
                &db.engine,
                &t.layout,
                t.def.space,
                p.old,
            )?);
        }
    }
    Ok(out)
}

/// Invariant 4: every used page of the table's space is reached exactly once.
fn account(
    db: &DbInner,
    t: &TableState,
    name: &str,
    chains: &HashSet<PageNo>,
    problems: &mut Vec<String>,
) -> Result<Vec<PageNo>> {
    let engine = &db.engine;
    let space = t.def.space;
    let mut owner: HashMap<PageNo, String> = HashMap::new();
    let trees = std::iter::once(("PRIMARY".to_string(), &t.clustered))
        .chain(t.indexes.iter().map(|ix| (ix.def.name.clone(), &ix.tree)));
    for (ix, tree) in trees {
        match tree.pages(engine) {
            Ok(pages) => {
                for p in pages {
                    if let Some(other) = owner.insert(p, format!("index {ix}")) {
                        problems.push(format!("{name}: page {p} is in {other} and index {ix}"));
                    }
                }
            }
            Err(e) => {
                // verify has reported the damage; guessing leaks from half a tree would
                // only add noise.
                problems.push(format!("{name}: page accounting skipped: index {ix}: {e}"));
                return Ok(Vec::new());
            }
        }
    }
    for &p in chains {
        if let Some(other) = owner.insert(p, "a BLOB chain".into()) {
            problems.push(format!("{name}: page {p} is in {other} and a BLOB chain"));
        }
    }
    let used: BTreeSet<PageNo> = engine.used_pages(space)?.into_iter().collect();
    let mut free_but_reached: Vec<(PageNo, &String)> = owner
        .iter()
        .filter(|(p, _)| !used.contains(p))
        .map(|(p, o)| (*p, o))
        .collect();
    free_but_reached.sort();
    for (p, o) in free_but_reached {
        problems.push(format!("{name}: page {p} of {o} is marked free"));
    }
    // Allocation metadata: page 0 and the descriptor page of every later group of
    // `page_size` pages (docs/space-format.md).
    let group = engine.page_size().get();
    let mut leaked: BTreeMap<String, Vec<PageNo>> = BTreeMap::new();
    for &p in used
        .iter()
        .filter(|p| !p.0.is_multiple_of(group) && !owner.contains_key(p))
    {
        let kind = match engine.pool().get_shared(PageId::new(space, p)) {
            Ok(g) => {
                let h = Header::new(&g);
                match h.page_type() {
                    Some(PageType::Blob) => "BLOB page(s) no record references".to_string(),
                    Some(PageType::Index) => format!(
                        "index page(s) of no index of the table (index id {})",
                        crate::btree::node::index_id(&g)
                    ),
                    _ => format!(
                        "page(s) of type {} that nothing references",
                        h.page_type_raw()
                    ),
                }
            }
            Err(e) => format!("unreadable page(s) that nothing references ({e})"),
        };
        leaked.entry(kind).or_default().push(p);
    }
    let all: Vec<PageNo> = leaked.values().flatten().copied().collect();
    for (kind, pages) in leaked {
        problems.push(format!(
            "{name}: leaked: {} {kind}: pages {}",
            pages.len(),
            page_list(&pages)
        ));
    }
    Ok(all)
}
