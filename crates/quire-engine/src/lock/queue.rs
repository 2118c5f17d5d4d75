//! One key's lock queue and the compatibility rules (docs/locking.md has the matrix).
//!
//! A queue holds the *granted* locks, one entry per transaction with its locks on the key
//! merged (a record part and a gap part, each S or X or absent), and the *waiting* requests
//! in arrival order. Everything here runs under the shard mutex of the key.

use std::sync::Arc;

use super::{LockKind, LockMode, TrxShared};
use crate::row::TrxId;

impl LockKind {
    /// Locks the record itself (Record, NextKey).
    pub(super) fn has_record(self) -> bool {
        matches!(self, LockKind::Record | LockKind::NextKey)
    }

    /// Locks the gap before the record (Gap, NextKey). InsertIntention is a gap *request*
    /// but holds nothing.
    pub(super) fn has_gap(self) -> bool {
        matches!(self, LockKind::Gap | LockKind::NextKey)
    }
}

/// Record parts: only S and S are compatible.
pub(super) fn compatible(a: LockMode, b: LockMode) -> bool {
    a == LockMode::Shared && b == LockMode::Shared
}

/// `held` is at least as strong as `want`.
fn at_least(held: LockMode, want: LockMode) -> bool {
    held == LockMode::Exclusive || want == LockMode::Shared
}

fn stronger(a: Option<LockMode>, b: LockMode) -> LockMode {
    match a {
        Some(LockMode::Exclusive) => LockMode::Exclusive,
        _ => b,
    }
}

/// A transaction's locks on one key, merged, each part at its strongest mode. Gap parts of
/// either mode are equivalent for conflicts (gap locks only inhibit inserts); the mode is kept
/// because inheritance copies it, and coverage follows it as InnoDB's does (an X gap request
/// is not covered by an S gap lock: it goes to the table, never waits, and upgrades the part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Parts {
    pub rec: Option<LockMode>,
    pub gap: Option<LockMode>,
}

impl Parts {
    /// A request these parts already cover: nothing to do, nothing to allocate.
    /// InsertIntention is never covered: it is a check against *other* transactions.
    pub fn covers(self, mode: LockMode, kind: LockKind) -> bool {
        if kind == LockKind::InsertIntention {
            return false;
        }
        let rec = !kind.has_record() || self.rec.is_some_and(|r| at_least(r, mode));
        let gap = !kind.has_gap() || self.gap.is_some_and(|g| at_least(g, mode));
        rec && gap
    }

    pub fn add(&mut self, mode: LockMode, kind: LockKind) {
        if kind.has_record() {
            self.rec = Some(stronger(self.rec, mode));
        }
        if kind.has_gap() {
            self.gap = Some(stronger(self.gap, mode));
        }
    }

    pub fn is_empty(self) -> bool {
        self.rec.is_none() && self.gap.is_none()
    }
}

pub(super) struct Granted {
    pub trx: Arc<TrxShared>,
    pub parts: Parts,
}

pub(super) struct Waiting {
    pub trx: Arc<TrxShared>,
    pub mode: LockMode,
    pub kind: LockKind,
}

#[derive(Default)]
pub(super) struct Queue {
    pub granted: Vec<Granted>,
    /// Arrival order: fairness and the blocker rules look at the requests *ahead*.
    pub waiting: Vec<Waiting>,
}

impl Queue {
    pub fn is_empty(&self) -> bool {
        self.granted.is_empty() && self.waiting.is_empty()
    }

    pub fn parts_of(&self, trx: TrxId) -> Parts {
        self.granted
            .iter()
            .find(|g| g.trx.id == trx)
            .map_or(Parts::default(), |g| g.parts)
    }

    pub fn waiting_pos(&self, trx: TrxId) -> Option<usize> {
        self.waiting.iter().position(|w| w.trx.id == trx)
    }

    /// The transactions a request of `trx` standing at waiting position `pos` waits for
    /// (`pos = waiting.len()` for a new request). Empty means grantable. A transaction may
    /// appear twice (granted S and waiting for X); callers dedupe.
    ///
    /// * Record parts wait for other transactions' granted record parts they conflict with,
    ///   and, for fairness, for conflicting record requests waiting ahead, unless `trx`
    ///   already holds a record part here: then a waiter ahead may be waiting for `trx`
    ///   itself, and queueing behind it would be a deadlock of our own making.
    /// * Gap parts never wait.
    /// * InsertIntention waits for other transactions' gap parts, granted or requested
    ///   ahead (a waiting NextKey: once granted it must find the gap as it was, as InnoDB).
    pub fn blockers(
        &self,
        trx: TrxId,
        mode: LockMode,
        kind: LockKind,
        pos: usize,
    ) -> impl Iterator<Item = &Arc<TrxShared>> + '_ {
        let holds_record = kind.has_record() && self.parts_of(trx).rec.is_some();
        let granted = self
            .granted
            .iter()
            .filter(move |g| {
                g.trx.id != trx
                    && match kind {
                        LockKind::InsertIntention => g.parts.gap.is_some(),
                        LockKind::Gap => false,
                        LockKind::Record | LockKind::NextKey => {
                            g.parts.rec.is_some_and(|r| !compatible(r, mode))
                        }
                    }
            })
            .map(|g| &g.trx);
        let ahead = self.waiting[..pos.min(self.waiting.len())]
            .iter()
            .filter(move |w| {
                w.trx.id != trx
                    && match kind {
                        LockKind::InsertIntention => w.kind.has_gap(),
                        LockKind::Gap => false,
                        LockKind::Record | LockKind::NextKey => {
                            !holds_record && w.kind.has_record() && !compatible(w.mode, mode)
                        }
                    }
            })
            .map(|w| &w.trx);
        granted.chain(ahead)
    }

    pub fn is_blocked(&self, trx: TrxId, mode: LockMode, kind: LockKind, pos: usize) -> bool {
        self.blockers(trx, mode, kind, pos).next().is_some()
    }

    /// Adds a granted request to `trx`'s entry. A granted InsertIntention is not kept:
    /// nothing ever waits for one.
    pub fn grant(&mut self, trx: &Arc<TrxShared>, mode: LockMode, kind: LockKind) {
        if kind == LockKind::InsertIntention {
            return;
        }
        if let Some(g) = self.granted.iter_mut().find(|g| g.trx.id == trx.id) {
            g.parts.add(mode, kind);
        } else {
            let mut parts = Parts::default();
            parts.add(mode, kind);
            self.granted.push(Granted {
                trx: Arc::clone(trx),
                parts,
            });
        }
    }

    /// Removes `trx`'s waiting request; true if it had one.
    pub fn remove_waiting(&mut self, trx: TrxId) -> bool {
        match self.waiting_pos(trx) {
            Some(i) => {
                self.waiting.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes everything of `trx`; true if something was removed.
    pub fn release(&mut self, trx: TrxId) -> bool {
        let before = self.granted.len() + self.waiting.len();
        self.granted.retain(|g| g.trx.id != trx);
        self.waiting.retain(|w| w.trx.id != trx);
        before != self.granted.len() + self.waiting.len()
    }

    /// Grants, in arrival order, every waiting request that nothing blocks any more, and
    /// wakes its owner (invariant 3). One pass suffices: granting or removing a request only
    /// changes what the requests *behind* it see.
    pub fn regrant(&mut self) {
        let mut i = 0;
        while i < self.waiting.len() {
            let (trx, mode, kind) = {
                let w = &self.waiting[i];
                (w.trx.id, w.mode, w.kind)
            };
            if self.is_blocked(trx, mode, kind, i) {
                i += 1;
                continue;
            }
            let w = self.waiting.remove(i);
            self.grant(&w.trx, w.mode, w.kind);
            // Its owner re-checks under this shard mutex: finding its request gone from
            // `waiting` means granted.
            w.trx.cv.notify_one();
        }
    }

    /// Invariants 1–3 of the module, for this queue. Debug builds check them after every
    /// change; O(n²), queues are short.
    pub fn check(&self) {
        for (i, g) in self.granted.iter().enumerate() {
            assert!(!g.parts.is_empty(), "empty granted entry");
            for h in &self.granted[i + 1..] {
                assert!(
                    g.trx.id != h.trx.id,
                    "two granted entries of {:?}",
                    g.trx.id
                );
                if let (Some(a), Some(b)) = (g.parts.rec, h.parts.rec) {
                    assert!(
                        compatible(a, b),
                        "conflicting record locks granted: {:?} {a:?} and {:?} {b:?}",
                        g.trx.id,
                        h.trx.id
                    );
                }
            }
        }
        for (i, w) in self.waiting.iter().enumerate() {
            assert!(
                self.waiting[i + 1..].iter().all(|v| v.trx.id != w.trx.id),
                "two waiting requests of {:?}",
                w.trx.id
            );
            assert!(
                w.kind != LockKind::Gap,
                "a gap request never waits ({:?})",
                w.trx.id
            );
            assert!(
                self.is_blocked(w.trx.id, w.mode, w.kind, i),
                "waiting request of {:?} is grantable: a lost wakeup",
                w.trx.id
            );
        }
    }
}
