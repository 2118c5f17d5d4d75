//! System variables: InnoDB's names where the meaning is the same, `quire_` for new ones.

use crate::session::Instance;

pub(crate) fn global_u64(_inst: &Instance<'_>, name: &str) -> Option<u64> {
    match name {
        "max_connections" => Some(151),
        "max_allowed_packet" => Some(16 * 1024 * 1024),
        "wait_timeout" => Some(28800),
        _ => None,
    }
}
