//! # User locks: GET_LOCK, RELEASE_LOCK, IS_FREE_LOCK, IS_USED_LOCK, RELEASE_ALL_LOCKS
//!
//! Named advisory locks, as MariaDB has them: a lock belongs to a session, not to a
//! transaction (COMMIT and ROLLBACK keep it), a session may take the same name again (a
//! count, each RELEASE_LOCK gives one back), and a session's locks go when it ends.
//! Applications use them to run one migration or one cron job at a time (Rails takes one
//! around its migrations). Names are compared byte for byte, as in MariaDB 10.11 (`'job'`
//! and `'JOB'` are two locks).
//!
//! Invariants:
//! 1. A name is in `held` only with `count >= 1`, and has one owner.
//! 2. Every release that frees a name notifies `freed`; a waiter re-checks the name under
//!    the mutex after each wake (no lost wakeups: it checks before it waits, with the
//!    mutex held).
//! 3. A waiter wakes at least every `POLL` to look at its interrupt flag (KILL QUERY, the
//!    client gone) and its deadline.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// The longest a waiter sleeps before looking at its interrupt flag (invariant 3).
const POLL: Duration = Duration::from_millis(50);

#[derive(Debug)]
struct Holder {
    conn: u64,
    count: u64,
}

/// The instance's user locks.
#[derive(Debug, Default)]
pub struct UserLocks {
    held: Mutex<HashMap<String, Holder>>,
    freed: Condvar,
}

/// Why GET_LOCK did not take its lock.
#[derive(Debug, PartialEq, Eq)]
pub enum NotTaken {
    /// Another session held it for the whole timeout: GET_LOCK answers 0.
    TimedOut,
    /// The statement was killed while waiting: 1317.
    Interrupted,
}

impl UserLocks {
    /// GET_LOCK(name, timeout) for session `conn`: takes the lock (again, if `conn` holds
    /// it already), waiting up to `timeout` for another session to release it.
    pub fn get(
        &self,
        conn: u64,
        name: &str,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<(), NotTaken> {
        let deadline = Instant::now().checked_add(timeout);
        let mut held = self.held.lock();
        loop {
            match held.get_mut(name) {
                None => {
                    held.insert(name.to_string(), Holder { conn, count: 1 });
                    return Ok(());
                }
                Some(h) if h.conn == conn => {
                    h.count += 1;
                    return Ok(());
                }
                Some(_) => {}
            }
            if interrupted() {
                return Err(NotTaken::Interrupted);
            }
            let now = Instant::now();
            let left = match deadline {
                Some(d) if d <= now => return Err(NotTaken::TimedOut),
                Some(d) => d - now,
                None => POLL,
            };
            self.freed.wait_for(&mut held, left.min(POLL));
        }
    }

    /// RELEASE_LOCK(name) for session `conn`: `None` if no session holds it, `Some(false)`
    /// if another does, `Some(true)` once one of `conn`'s holds is given back.
    pub fn release(&self, conn: u64, name: &str) -> Option<bool> {
        let mut held = self.held.lock();
        let h = held.get_mut(name)?;
        if h.conn != conn {
            return Some(false);
        }
        h.count -= 1;
        if h.count == 0 {
            held.remove(name);
            self.freed.notify_all();
        }
        Some(true)
    }

    /// IS_USED_LOCK(name): the session holding it.
    pub fn holder(&self, name: &str) -> Option<u64> {
        self.held.lock().get(name).map(|h| h.conn)
    }

    /// RELEASE_ALL_LOCKS(), and a session's end: every hold of `conn`, counted.
    pub fn release_all(&self, conn: u64) -> u64 {
        let mut held = self.held.lock();
        let mut n = 0;
        held.retain(|_, h| {
            if h.conn == conn {
                n += h.count;
                false
            } else {
                true
            }
        });
        if n > 0 {
            self.freed.notify_all();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_counted_per_session_and_names_are_exact() {
        let l = UserLocks::default();
        let never = || false;
        assert_eq!(l.get(1, "job", Duration::ZERO, &never), Ok(()));
        assert_eq!(l.get(1, "job", Duration::ZERO, &never), Ok(()));
        assert_eq!(l.get(2, "JOB", Duration::ZERO, &never), Ok(()));
        assert_eq!(
            l.get(2, "job", Duration::from_millis(20), &never),
            Err(NotTaken::TimedOut)
        );
        assert_eq!(l.holder("job"), Some(1));
        assert_eq!(l.release(2, "job"), Some(false));
        assert_eq!(l.release(1, "job"), Some(true));
        assert_eq!(l.holder("job"), Some(1));
        assert_eq!(l.release(1, "job"), Some(true));
        assert_eq!(l.holder("job"), None);
        assert_eq!(l.release(1, "job"), None);
        assert_eq!(l.release_all(2), 1);
        assert_eq!(l.holder("JOB"), None);
    }

    #[test]
    fn a_waiter_gets_the_lock_when_its_holder_releases_or_is_interrupted() {
        let l = UserLocks::default();
        let never = || false;
        l.get(1, "m", Duration::ZERO, &never).expect("free");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| l.get(2, "m", Duration::from_secs(30), &never));
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(l.release_all(1), 1);
            assert_eq!(waiter.join().expect("waiter"), Ok(()));
        });
        assert_eq!(l.holder("m"), Some(2));
        let flag = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let check = || flag.load(std::sync::atomic::Ordering::Relaxed);
            let waiter = s.spawn(move || l.get(3, "m", Duration::from_secs(30), &check));
            std::thread::sleep(Duration::from_millis(50));
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(waiter.join().expect("waiter"), Err(NotTaken::Interrupted));
        });
    }
}
