//! # Status counters of an open database
//!
//! The engine's (redo, buffer pool, doublewrite) and the transaction layer's, under
//! InnoDB's status names where the meaning is the same, `quire_` names otherwise.

use std::sync::atomic::Ordering;

use super::DbInner;

impl DbInner {
    /// Every counter, as (name, value).
    pub fn stats(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .engine
            .stats()
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        let l = self.locks.stats();
        let c = &self.counters;
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let ours: [(&str, u64); 22] = [
            ("Innodb_history_list_length", self.undo.history_len()),
            ("quire_trx_active", self.trx.active_count()),
            ("quire_trx_commits", self.trx.commits()),
            ("quire_trx_rollbacks", self.trx.rollbacks()),
            ("quire_read_views_open", self.trx.views_open()),
            ("quire_read_view_mutex_uses", self.trx.view_mutex_uses()),
            ("quire_versions_built", get(&c.versions_built)),
            (
                "quire_secondary_clustered_visits",
                get(&c.secondary_clustered_visits),
            ),
            ("Innodb_row_lock_waits", l.waits),
            ("Innodb_row_lock_current_waits", l.current_waits),
            ("Innodb_row_lock_time", l.wait_time_ms),
            ("Innodb_deadlocks", l.deadlocks),
            ("quire_lock_timeouts", l.timeouts),
            ("quire_purge_records_removed", get(&c.purge_records)),
            ("quire_purge_batches", get(&c.purge_batches)),
            ("quire_purge_trx_purged", get(&c.purge_logs)),
            (
                "quire_purge_batch_size_effective",
                get(&c.purge_batch_effective),
            ),
            ("quire_purge_lag_delay_us", get(&c.lag_delay_us)),
            ("quire_purge_trx_id_resets", get(&c.purge_trx_id_resets)),
            ("Innodb_rows_inserted", get(&c.rows_inserted)),
            ("Innodb_rows_updated", get(&c.rows_updated)),
            ("Innodb_rows_deleted", get(&c.rows_deleted)),
        ];
        out.extend(ours.into_iter().map(|(n, v)| (n.to_string(), v)));
        out
    }

    /// `Innodb_history_list_length` alone: an atomic read, cheap enough to sample often
    /// (`quire bench` samples it every 10 ms for `history_max`).
    pub fn history_len(&self) -> u64 {
        self.undo.history_len()
    }

    /// The statistics epoch (`statistics.rs`, invariant 3): a plan made from kept
    /// statistics at one epoch may be made again at another.
    pub fn stats_epoch(&self) -> u64 {
        self.stats_epoch.load(Ordering::Acquire)
    }

    /// One counter of [`DbInner::stats`].
    pub fn stat(&self, name: &str) -> Option<u64> {
        self.stats()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}
