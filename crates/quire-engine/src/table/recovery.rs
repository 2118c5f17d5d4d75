//! # Rolling back the transactions a crash interrupted
//!
//! Redo recovery restores the pages, undo logs included; `UndoSys::open` then finds the
//! undo logs still marked active: transactions that had not committed. Their changes are
//! undone here, in the background, so that the database is usable at once
//! (docs/transactions.md, "Recovery"):
//!
//! 1. At open, before any session starts, every row such a transaction changed is locked
//!    again (X, on its clustered key) for it: a new transaction that touches one waits for
//!    the rollback instead of seeing or overwriting an uncommitted change. Until it ends,
//!    the transaction is active in `TrxSys`, so no snapshot sees its changes.
//! 2. A background thread applies its undo records newest first (`DbInner::undo_one`,
//!    idempotent, so a crash during this rollback just starts it again), ends the log as
//!    a normal rollback does, and releases the locks.

use std::sync::Arc;

use super::txn::{decode_insert, decode_update, ROLLED_BACK};
use super::{DbInner, Result};
use crate::lock::{LockKey, LockKind, LockMode, TrxLocks};
use crate::row::TrxId;
use crate::undo::{RecoveredTrx, TrxUndo, UndoKind};

/// A recovered transaction, its rows locked again, waiting for its rollback.
pub(super) struct Pending {
    undo: TrxUndo,
    locks: TrxLocks,
}

/// Step 1: lock every row the recovered transactions changed.
pub(super) fn relock(db: &Arc<DbInner>, active: Vec<RecoveredTrx>) -> Result<Vec<Pending>> {
    let mut out = Vec::with_capacity(active.len());
    for a in active {
        let id = a.undo.trx();
        let mut locks = TrxLocks::new(id);
        for (_, r) in db.undo.records_rev(&db.engine, &a.undo)? {
            if r.table_id == ROLLED_BACK {
                continue;
            }
            let Some(t) = db.table_by_id(r.table_id) else {
                continue;
            };
            let key = match r.kind {
                UndoKind::Insert => decode_insert(&r.payload)?.to_vec(),
                UndoKind::Update => decode_update(&r.payload)?.key.to_vec(),
            };
            // Nobody else holds a lock yet: this is granted at once.
            let granted = db.locks.try_lock(
                &mut locks,
                t.clustered.index_id(),
                &LockKey::Key(key),
                LockMode::Exclusive,
                LockKind::Record,
            );
            debug_assert!(granted, "a recovered row was locked before recovery");
        }
        tracing::info!(
            trx = id.0,
            rows = locks.len(),
            "rolling back a transaction active at the crash"
        );
        out.push(Pending {
            undo: a.undo,
            locks,
        });
    }
    Ok(out)
}

/// Step 2: roll each back and end it. Errors are logged: the transaction stays active
/// (its rows locked) and the next open tries again.
pub(super) fn roll_back(db: &DbInner, pending: Vec<Pending>) {
    for mut p in pending {
        let id = p.undo.trx();
        match roll_back_one(db, id, p.undo) {
            Ok(()) => {
                db.locks.release_all(&mut p.locks);
                tracing::info!(trx = id.0, "rolled back");
            }
            Err(e) => {
                tracing::error!(trx = id.0, error = %e, "rolling back a recovered transaction failed; it stays locked until the next start");
            }
        }
    }
}

fn roll_back_one(db: &DbInner, id: TrxId, mut undo: TrxUndo) -> Result<()> {
    let recs = db.undo.records_rev(&db.engine, &undo)?;
    for (ptr, r) in &recs {
        db.undo_one(id, *ptr, r)?;
    }
    let updates = recs
        .iter()
        .any(|(_, r)| r.kind == UndoKind::Update && r.table_id != ROLLED_BACK);
    if !updates {
        db.undo.discard(&db.engine, undo)?;
        db.trx.finish(id, false, None);
        return Ok(());
    }
    // As a normal rollback: the update log goes to purge, marked as rolled back.
    if !recs.iter().any(|(_, r)| r.table_id == ROLLED_BACK) {
        db.undo
            .append(&db.engine, &mut undo, UndoKind::Update, ROLLED_BACK, &[])?;
    }
    let no = db.trx.commit_no();
    let r = db.undo.commit(&db.engine, undo, no);
    db.trx.finish(id, false, Some(no));
    r?;
    Ok(())
}
