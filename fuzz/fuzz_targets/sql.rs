//! The SQL entry point: `Session::query` on a database in the simulated file system with
//! the tables of `quire_fuzz::SCHEMA`. The input is statement text, split as a
//! multi-statement COM_QUERY is (`dispatch::split_statements`); each statement runs in a
//! new session of a new `Instance` (so `SET GLOBAL` does not outlive the input), as root.
//! An error is a fine answer; a panic, an abort or a hang is a bug.
//!
//! Limits, so that the fuzzer does not spend its time in statements that are slow on
//! purpose: the input is at most 4 KiB and 16 statements, recursive CTEs stop after 100
//! rounds (the session's own `max_recursive_iterations`), lock waits after 1 s, and
//! texts with SLEEP are skipped (it waits by design).

#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_fuzz::{make_schema, only_waits, with_db, writes_host_files, Discard};

const MAX_INPUT: usize = 4096;
const MAX_STATEMENTS: usize = 16;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT || only_waits(data) || writes_host_files(data) {
        return;
    }
    let sql = quire_sql::dispatch::statement_text(data);
    with_db(make_schema, |db| {
        let inst = quire_sql::Instance::new(db);
        let mut s = inst.session("root", "localhost");
        for set in [
            "SET SESSION max_recursive_iterations = 100",
            "SET SESSION innodb_lock_wait_timeout = 1",
            "USE fz",
        ] {
            // The schema may have been dropped by an earlier input: then no database.
            let _ = s.query(set, &mut Discard::default());
        }
        let parts = quire_sql::dispatch::split_statements(&sql, s.backslash_escapes());
        for part in parts.into_iter().take(MAX_STATEMENTS) {
            let _ = s.query(part, &mut Discard::default());
        }
    });
});
