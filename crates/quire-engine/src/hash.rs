//! The hash maps of hot paths. std's `HashMap` hashes with SipHash-1-3, which is built to
//! resist flooding by chosen keys and costs about 100 instructions for a short key; a
//! statement looks up a dozen maps (locks, tables, pages of an mtr, session variables), and
//! SipHash was 8 % of the server's instructions per sysbench update (callgrind). foldhash's
//! fast hasher is several times cheaper, and its seed is random per process, so keys a
//! client chooses (a row's key in the lock table) still cannot be aimed at one bucket
//! without knowing it.

/// A `HashMap` with foldhash's seeded fast hasher.
pub type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A `HashSet` with foldhash's seeded fast hasher.
pub type Set<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
