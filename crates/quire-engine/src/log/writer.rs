//! # The log: appends, group commit, checkpoints
//!
//! ```text
//!  LSN:  checkpoint ≤ flushed ≤ stable ≤ written ≤ filled ≤ reserved
//!        |reusable  | durable |never    | in the OS| copied   | being copied
//!        |after ckpt|         |rewritten| cache    | in order | (out of order)
//! ```
//!
//! Invariants (checked by [`Shared::check_invariants`] after every write and checkpoint):
//! 1. `checkpoint ≤ flushed ≤ stable ≤ written ≤ filled ≤ reserved`; all only grow.
//! 2. No file write touches log at or after `checkpoint + capacity`: appenders reserve only
//!    up to `checkpoint + capacity − SLACK`, padding only fills to the next block boundary
//!    inside that slack (asserted before each write).
//! 3. An appender copies into the ring only when `end ≤ written + ring size`.
//! 4. `flushed` advances only after a sync (or an O_DSYNC write) covering it, and only to a
//!    `stable` LSN.
//! 5. The checkpoint LSN is published only after its slot is durable.
//! 6. `stable` is a frame boundary and a multiple of the I/O block (1 when buffered), or,
//!    until the first padded write after an open, the checkpoint LSN (nothing before it is
//!    needed). The writer rewrites only the block holding `written`, so no byte below
//!    `stable` is ever
//!    written again (until the circle comes round, after a checkpoint passed it). Hence an
//!    acknowledged (durable) byte is never rewritten, and a garbage write at a crash cannot
//!    reach it (lesson 3's O_DIRECT partial-block rewrite, made safe by padding).
//! 7. A reserved range never waits for a checkpoint: appenders wait for log space *before*
//!    reserving. So a writer waiting for `filled` waits only for copies, never for itself.
//! 8. Log space is claimed before LSNs are reserved (buffer invariant 4: `reserved ≤
//!    claimed`), and `claimed` = `reserved` + what every open [`LogReservation`] may still
//!    append + one padding allowance ([`format::MAX_PADDING`]) per open reservation.
//!    [`Log::free_check`] grants a reservation only while `claimed ≤ checkpoint +
//!    space_limit − overdraft`, waiting for it with no latch held; a frame inside its
//!    reservation then claims nothing and never waits for a checkpoint, so a mini-transaction
//!    never waits for log space while holding page latches, and the page cleaner can always
//!    flush the page that holds the checkpoint back. A frame larger than its reservation
//!    claims the excess up to `checkpoint + space_limit`, from the overdraft (room for one
//!    largest frame beyond the smallest reservation) kept free by the grants: it waits only
//!    if over-budget mtrs together overrun the overdraft before a checkpoint frees it (the
//!    documented bound; counted, `reservation_overruns`). Paddings claim without a bound:
//!    at most one follows each frame, and each frame's reservation carried its allowance,
//!    so `reserved ≤ checkpoint + space_limit + MAX_PADDING ≤ checkpoint + capacity`
//!    (asserted at each append in debug builds; docs/redo-log.md, "Reservations").
//!
//! State transitions: `append` moves `reserved` (and `filled`, through publication);
//! [`Shared::write_phase`] moves `written` and `stable` (and `reserved`/`filled` by a
//! padding frame); [`Shared::flush_phase`] moves `flushed`; [`Shared::checkpoint`] moves
//! `checkpoint`.
//!
//! **Group commit, write and sync split** (lesson 3, as InnoDB's `write_lock` and
//! `flush_lock`): a committer enters the *write gate*, takes the write lock, writes
//! everything filled (padding the O_DIRECT tail so it ends on a block boundary), advances
//! `written`/`stable` and lets go; then enters the *flush gate*, syncs once and advances
//! `flushed` to the `stable` it read before the sync. Committers whose LSN is already covered
//! return without I/O, so one write and one sync serve a whole group, and group N+1 writes
//! while group N syncs. The others sleep at the gate and are woken together when it is left
//! (`gate.rs`: queued on a mutex, they were let in one after another, a lock convoy). The
//! write lock and the flush gate are never held together.
//! Appenders waiting for ring space never block on the write lock (they `try_lock` it or
//! wait for `written`), because its holder may be waiting for *their* copies.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use quire_io::{AlignedBuf, Vfs};

use super::buffer::LogBuffer;
use super::file::LogFile;
use super::flusher::{self, FlushAtCommit, Stop};
use super::format::{self, CheckpointSlot, BLOCK, FRAME_OVERHEAD, SLOT_OFFSETS};
use super::gate::Gate;
use super::prewrite::{self, Prewrite};
use super::reader::LogReader;
use super::{LogConfig, LogError, Result};
use crate::page::Lsn;

/// Log kept free ahead of the checkpoint: a padding frame (up to [`format::MAX_PADDING`])
/// and the zeros of an O_DIRECT tail block must never land on un-checkpointed log
/// (invariant 2), and padding must never wait for space (invariant 7).
pub(crate) const SLACK: u64 = 2 * BLOCK;
const _: () = assert!(SLACK >= format::MAX_PADDING);
const _: () = assert!(SLACK < format::MIN_CAPACITY / 4);
/// The write-lock holder writes at most this much per write call (and frees ring space as it goes).
const CHUNK: u64 = 1 << 20;
/// Backstop for waits: a lost wake-up costs at most this.
const WAIT_TICK: Duration = Duration::from_millis(10);
/// The least a [`LogReservation`] holds: an ordinary mini-transaction's worst case. Larger
/// mtrs (B-tree structure changes, BLOB pages) ask [`Log::free_check`] for more.
pub const MTR_RESERVATION: u64 = 64 << 10;
// A grant, its padding allowance and the overdraft fit in the smallest log with room to
// spare (a frame is at most a quarter of the capacity), so every grant is satisfiable.
const _: () =
    assert!(2 * (format::MIN_CAPACITY / 4) + format::MAX_PADDING + SLACK <= format::MIN_CAPACITY);

/// The LSN range of one appended frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LsnRange {
    pub start: Lsn,
    /// The commit LSN of the mini-transaction: pass it to [`Log::commit_wait`].
    pub end: Lsn,
}

/// Counters, in InnoDB's names where the meaning is the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogStats {
    /// `Innodb_os_log_written`: bytes written to the file, O_DIRECT rewrites and padding
    /// included.
    pub os_log_written: u64,
    /// `Innodb_log_writes`: write calls.
    pub log_writes: u64,
    /// `Innodb_os_log_fsyncs`: syncs of the log file (data and checkpoints).
    pub os_log_fsyncs: u64,
    /// `Innodb_log_waits`: appends and reservations that had to wait for ring or log space.
    pub log_waits: u64,
    /// `quire_log_reservation_overruns`: frames larger than the reservation their mtr made
    /// at `free_check` (their excess came from the overdraft; invariant 8).
    pub reservation_overruns: u64,
    /// Calls of `commit_wait`.
    pub commits: u64,
    /// `quire_log_padding_bytes`: log spent on padding frames, which end an O_DIRECT sync
    /// on a block boundary so that durable bytes are never rewritten.
    pub padding_bytes: u64,
    /// Zeros written ahead of the log in its file's first lap (`prewrite`), so that
    /// commits do not pay for the file system's first writes.
    pub prewritten_bytes: u64,
    /// `Innodb_checkpoint_age`: current − checkpoint LSN.
    pub checkpoint_age: u64,
    pub current_lsn: Lsn,
    pub written_lsn: Lsn,
    pub flushed_lsn: Lsn,
    pub checkpoint_lsn: Lsn,
    pub capacity: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub os_log_written: AtomicU64,
    pub log_writes: AtomicU64,
    pub os_log_fsyncs: AtomicU64,
    pub log_waits: AtomicU64,
    pub reservation_overruns: AtomicU64,
    pub commits: AtomicU64,
    pub padding_bytes: AtomicU64,
}

/// The writer's private state, under the write lock.
#[derive(Debug)]
pub(crate) struct WriterState {
    /// The partial last block at `written` (O_DIRECT): rewritten, extended, by the next
    /// write.
    pub tail: AlignedBuf,
    pub staging: AlignedBuf,
}

impl WriterState {
    pub fn new(file: &LogFile, tail: &[u8]) -> WriterState {
        let mut t = file.buf(BLOCK as usize);
        t[..tail.len()].copy_from_slice(tail);
        WriterState {
            tail: t,
            staging: file.buf((CHUNK + 2 * BLOCK) as usize),
        }
    }
}

/// Which slot the next checkpoint goes to.
#[derive(Debug)]
pub(crate) struct CkptState {
    pub seq: u64,
    pub next_slot: usize,
}

type PressureHook = Arc<dyn Fn(Lsn) + Send + Sync>;

/// Everything the appenders, the writers and the background thread share.
pub(crate) struct Shared {
    pub vfs: Arc<dyn Vfs>,
    pub dir: PathBuf,
    pub config: LogConfig,
    /// This run's epoch (durable in a checkpoint slot before the first append).
    pub epoch: u32,
    flush_at_commit: AtomicU8,
    pub buf: LogBuffer,
    pub written: AtomicU64,
    /// Invariant 6: written, a frame boundary, and a multiple of the I/O block (or the
    /// checkpoint, at open).
    pub stable: AtomicU64,
    pub flushed: AtomicU64,
    pub checkpoint: AtomicU64,
    /// Bytes of log allowed ahead of the checkpoint: capacity − SLACK, lowered early by a
    /// shrinking resize.
    pub space_limit: AtomicU64,
    pub max_payload: AtomicU64,
    /// The current file; replaced only by resize, holding the writer and checkpoint mutexes.
    pub file: RwLock<Arc<LogFile>>,
    /// The write lock (InnoDB's `write_lock`): writes to the file, moves `written`.
    pub writer: Mutex<WriterState>,
    /// Committers enter here to take the write lock for a group ([`Gate`]): the others
    /// sleep until the group is written, rather than queue on `writer` one after another.
    write_gate: Gate,
    /// The flush gate (InnoDB's `flush_lock`): its one holder syncs and moves `flushed`;
    /// the other committers sleep until then ([`Gate`]). Never held with `writer`.
    flush_gate: Gate,
    pub ckpt: Mutex<CkptState>,
    pub resize_lock: Mutex<()>,
    /// `innodb_log_file_buffering` in force: writes go through the file system cache. The
    /// file keeps O_DIRECT's alignment either way (invariant 6 is unchanged); a resize
    /// puts its new file in this mode.
    pub buffered: std::sync::atomic::AtomicBool,
    wait_mx: Mutex<()>,
    wait_cv: Condvar,
    waiters: AtomicUsize,
    /// Threads waiting to claim log space: a release wakes waiters only if there are some.
    claim_waiters: AtomicUsize,
    pub counters: Counters,
    hook: RwLock<Option<PressureHook>>,
    /// Zeros written ahead of the log in the file's first lap (`prewrite`).
    pub prewrite: Prewrite,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("dir", &self.dir)
            .field("epoch", &self.epoch)
            .field("buf", &self.buf)
            .field("written", &self.written)
            .field("stable", &self.stable)
            .field("flushed", &self.flushed)
            .field("checkpoint", &self.checkpoint)
            .finish()
    }
}

/// Where a newly opened or created log starts.
pub(crate) struct Start {
    pub file: LogFile,
    pub end: Lsn,
    pub checkpoint: Lsn,
    pub ckpt: CkptState,
    pub epoch: u32,
    /// The bytes of the block holding `end`, before `end` (O_DIRECT tail).
    pub tail: Vec<u8>,
    /// Durable and never to be rewritten up to here (invariant 6): `end` itself only if it
    /// is a multiple of the I/O block; the scan's last such frame boundary otherwise.
    pub stable: Lsn,
    /// The file's `created_lsn` (header): its first lap is `[created, created + capacity)`.
    pub created: Lsn,
}

impl Shared {
    pub(crate) fn new(vfs: Arc<dyn Vfs>, dir: PathBuf, config: LogConfig, s: Start) -> Shared {
        let ring = config.ring_size();
        let capacity = s.file.capacity;
        let never_direct = s.file.io_block == 1;
        let writer = WriterState::new(&s.file, &s.tail);
        let ahead = if vfs.first_writes_cost_more() {
            config.prewrite_ahead
        } else {
            0
        };
        Shared {
            prewrite: Prewrite::new(ahead, s.created.0, capacity),
            vfs,
            dir,
            epoch: s.epoch,
            flush_at_commit: AtomicU8::new(config.flush_at_commit.as_innodb()),
            config,
            buf: LogBuffer::new(ring, s.end.0),
            written: AtomicU64::new(s.end.0),
            stable: AtomicU64::new(s.stable.0),
            flushed: AtomicU64::new(s.stable.0),
            checkpoint: AtomicU64::new(s.checkpoint.0),
            space_limit: AtomicU64::new(capacity - SLACK),
            max_payload: AtomicU64::new(format::max_payload(ring, capacity)),
            file: RwLock::new(Arc::new(s.file)),
            writer: Mutex::new(writer),
            write_gate: Gate::default(),
            flush_gate: Gate::default(),
            ckpt: Mutex::new(s.ckpt),
            resize_lock: Mutex::new(()),
            buffered: std::sync::atomic::AtomicBool::new(never_direct),
            wait_mx: Mutex::new(()),
            wait_cv: Condvar::new(),
            waiters: AtomicUsize::new(0),
            claim_waiters: AtomicUsize::new(0),
            counters: Counters::default(),
            hook: RwLock::new(None),
        }
    }

    // ---- waiting -------------------------------------------------------------------------

    /// Wakes every waiter, if there is one. Callers change the state first (SeqCst), and
    /// waiters count themselves before re-checking it, so no wake-up is lost.
    pub(crate) fn wake(&self) {
        if self.waiters.load(SeqCst) > 0 {
            let _g = self.wait_mx.lock();
            self.wait_cv.notify_all();
        }
    }

    /// Blocks until `ready()` or `timeout`; returns `ready()`'s last answer. `ready` must not
    /// take `wait_mx` (it may take the tracker's mutex).
    fn wait_for(&self, ready: &mut dyn FnMut() -> bool, timeout: Duration) -> bool {
        if ready() {
            return true;
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut g = self.wait_mx.lock();
            self.waiters.fetch_add(1, SeqCst);
            let ok = ready();
            if !ok {
                self.wait_cv.wait_for(&mut g, WAIT_TICK);
            }
            self.waiters.fetch_sub(1, SeqCst);
            drop(g);
            if ok || ready() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
        }
    }

    fn wait_until(&self, mut ready: impl FnMut() -> bool) {
        while !self.wait_for(&mut ready, Duration::from_secs(3600)) {}
    }

    // ---- appending -----------------------------------------------------------------------

    /// Checks a payload's length; returns its frame length.
    fn frame_len(&self, payload: &[u8]) -> Result<u64> {
        let len = payload.len() as u64;
        if len == 0 {
            return Err(LogError::EmptyPayload);
        }
        let max = self.max_payload.load(SeqCst);
        if len > max {
            return Err(LogError::PayloadTooLarge { len, max });
        }
        Ok(len + FRAME_OVERHEAD)
    }

    /// An append without a reservation of its own: claims exactly its frame first (waiting
    /// for a checkpoint if need be, before holding any LSN), then appends inside the claim.
    pub(crate) fn append(&self, payload: &[u8]) -> Result<LsnRange> {
        let frame_len = self.frame_len(payload)?;
        self.grant(frame_len);
        let mut unused = frame_len;
        let r = self.append_reserved(payload, &mut unused);
        self.release(unused);
        r
    }

    /// Appends one frame inside a reservation with `unused` bytes left (invariant 8): no
    /// wait for a checkpoint unless the frame overruns the reservation by more than the
    /// overdraft has left.
    pub(crate) fn append_reserved(&self, payload: &[u8], unused: &mut u64) -> Result<LsnRange> {
        let frame_len = self.frame_len(payload)?;
        let len = frame_len - FRAME_OVERHEAD;
        let mut waited = false;
        if frame_len > *unused {
            let excess = frame_len - *unused;
            self.counters.reservation_overruns.fetch_add(1, SeqCst);
            tracing::warn!(
                target: "quire::log",
                "a mini-transaction wrote {frame_len} bytes of redo, {excess} more than it \
                 reserved: it should ask free_check for more"
            );
            if !self.buf.try_claim(excess, self.space_end()) {
                // Beyond the documented bound: wait, holding the caller's latches.
                waited = true;
                self.counters.log_waits.fetch_add(1, SeqCst);
                self.claim_waiting(excess, &|| self.space_end());
            }
            *unused += excess;
        }
        *unused -= frame_len;
        // Room: log space was claimed (invariant 8), so reserving needs no bound; then ring
        // space, then the completion window. Neither of the last two needs a checkpoint,
        // and an earlier range's conditions are implied by a later one's, which is what
        // makes a writer's wait for earlier copies finite (docs/redo-log.md).
        let start = self.buf.reserve(frame_len);
        // The claim kept the frame within `checkpoint + space_limit + MAX_PADDING`; the file
        // is what must not be overrun (a shrinking resize lowers the limit before the file).
        debug_assert!(
            start + frame_len <= self.checkpoint.load(SeqCst) + self.file.read().capacity,
            "invariant 8: frame [{start}, {}) past the space the checkpoint leaves",
            start + frame_len
        );
        let end = start + frame_len;
        let ring = self.buf.size();
        if end > self.written.load(SeqCst) + ring {
            if !waited {
                self.counters.log_waits.fetch_add(1, SeqCst);
            }
            self.make_ring_room(end - ring);
        }
        if !self.buf.window_ok(start) {
            self.wait_until(|| {
                self.buf.advance();
                self.buf.window_ok(start)
            });
        }
        debug_assert!(end <= self.written.load(SeqCst) + ring, "invariant 3");

        let epoch = self.epoch;
        self.buf
            .copy_in(start, &format::frame_header(len as u32, epoch));
        self.buf.copy_in(start + 8, payload);
        let crc = format::frame_crc(Lsn(start), epoch, payload);
        self.buf.copy_in(end - 4, &crc.to_le_bytes());
        self.buf.publish(start, frame_len);
        self.wake();
        Ok(LsnRange {
            start: Lsn(start),
            end: Lsn(end),
        })
    }

    /// The LSN up to which log may be claimed without overwriting un-checkpointed log: the
    /// bound of an over-budget frame's claim.
    fn space_end(&self) -> u64 {
        self.checkpoint.load(SeqCst) + self.space_limit.load(SeqCst)
    }

    /// Log kept free by the grants for frames that overrun their reservation: the largest
    /// frame beyond the smallest reservation (0 when no frame can be larger than that).
    fn overdraft(&self) -> u64 {
        (self.max_payload.load(SeqCst) + FRAME_OVERHEAD).saturating_sub(MTR_RESERVATION)
    }

    /// The bound of `claimed` for a new reservation: the overdraft stays free.
    fn grant_end(&self) -> u64 {
        // Saturating: a shrinking resize lowers the limit and the frame size one at a time.
        self.space_end().saturating_sub(self.overdraft())
    }

    /// What a reservation asked for `len` bytes holds: at least [`MTR_RESERVATION`] (the
    /// overdraft covers any frame beyond that), at most one frame (no mtr writes more).
    pub(crate) fn reservation_len(&self, len: u64) -> u64 {
        len.max(MTR_RESERVATION)
            .min(self.max_payload.load(SeqCst) + FRAME_OVERHEAD)
    }

    /// Claims `len` bytes plus a padding allowance below [`Self::grant_end`], waiting for a
    /// checkpoint if need be. The caller must hold no page latch (invariant 8).
    pub(crate) fn grant(&self, len: u64) {
        let total = len + format::MAX_PADDING;
        debug_assert!(
            total + self.overdraft() <= self.space_limit.load(SeqCst),
            "a grant of {total} bytes could never fit"
        );
        if self.buf.try_claim(total, self.grant_end()) {
            return;
        }
        self.counters.log_waits.fetch_add(1, SeqCst);
        self.claim_waiting(total, &|| self.grant_end());
    }

    /// Gives back what a reservation did not use, with its padding allowance.
    pub(crate) fn release(&self, unused: u64) {
        self.buf.unclaim(unused + format::MAX_PADDING);
        // Read after the change (SeqCst): a claimer counts itself before it re-checks.
        if self.claim_waiters.load(SeqCst) > 0 {
            self.wake();
        }
    }

    /// Blocks until `len` bytes are claimed below `limit()`, ringing the pressure hook (the
    /// page cleaner's doorbell) with the LSN the checkpoint must reach while it waits. Room
    /// comes from a checkpoint or from reservations given back.
    fn claim_waiting(&self, len: u64, limit: &dyn Fn() -> u64) {
        self.claim_waiters.fetch_add(1, SeqCst);
        loop {
            if self.buf.try_claim(len, limit()) {
                break;
            }
            let over = (self.buf.claimed() + len).saturating_sub(limit());
            let need = Lsn(self.checkpoint.load(SeqCst) + over);
            let hook = self.hook.read().clone();
            if let Some(h) = hook {
                h(need);
            }
            tracing::debug!(target: "quire::log", "log full: waiting for a checkpoint at {need}");
            self.wait_for(
                &mut || self.buf.claimed() + len <= limit(),
                Duration::from_millis(100),
            );
        }
        self.claim_waiters.fetch_sub(1, SeqCst);
    }

    /// Makes `written ≥ need` without blocking on the write lock: either we take it, or its
    /// holder will write what we need (it writes everything filled while it waits).
    fn make_ring_room(&self, need: u64) {
        loop {
            if self.written.load(SeqCst) >= need {
                return;
            }
            if let Some(mut w) = self.writer.try_lock() {
                if self.written.load(SeqCst) < need {
                    self.write_phase(&mut w, need, false);
                }
                drop(w);
                self.wake();
                return;
            }
            self.wait_until(|| self.written.load(SeqCst) >= need || !self.writer.is_locked());
        }
    }

    pub(crate) fn set_pressure_hook(&self, hook: Option<PressureHook>) {
        *self.hook.write() = hook;
    }

    // ---- writing -------------------------------------------------------------------------

    fn is_done(&self, lsn: u64, durable: bool) -> bool {
        if durable {
            self.flushed.load(SeqCst) >= lsn
        } else {
            self.written.load(SeqCst) >= lsn
        }
    }

    /// Whether the write phase has done its part for `lsn`: written, and for a durable
    /// request written up to a `stable` LSN, so the sync can cover it.
    fn is_written(&self, lsn: u64, durable: bool) -> bool {
        if durable {
            self.stable.load(SeqCst) >= lsn
        } else {
            self.written.load(SeqCst) >= lsn
        }
    }

    pub(crate) fn write_up_to(&self, lsn: Lsn, durable: bool) {
        let lsn = lsn.0;
        let reserved = self.buf.reserved();
        assert!(
            lsn <= reserved,
            "write_up_to({lsn}) is beyond the current LSN {reserved}"
        );
        if self.is_done(lsn, durable) {
            return;
        }
        while !self.is_written(lsn, durable) {
            if self.write_gate.try_enter() {
                let mut w = self.writer.lock();
                if !self.is_written(lsn, durable) {
                    self.write_phase(&mut w, lsn, durable);
                }
                drop(w);
                self.write_gate
                    .leave(|t| self.is_written((t >> 1) as u64, t & 1 == 1));
                self.wake();
                break;
            }
            let token = ((lsn as usize) << 1) | usize::from(durable);
            self.write_gate
                .wait(token, || self.is_written(lsn, durable));
        }
        if durable {
            self.flush_phase(lsn);
        }
        self.check_invariants();
    }

    /// Writes and syncs everything filled so far.
    pub(crate) fn flush_all(&self) {
        let f = self.buf.advance();
        self.write_up_to(Lsn(f), true);
    }

    /// Under the write lock: write everything filled until `filled ≥ lsn`; if `durable`,
    /// until `stable ≥ lsn`, which with O_DIRECT means ending the log on a block boundary
    /// with a padding frame (buffered, every frame boundary is stable).
    fn write_phase(&self, w: &mut WriterState, lsn: u64, durable: bool) {
        let file = Arc::clone(&self.file.read());
        let b = file.io_block;
        if !durable || b == 1 {
            self.write_until(w, &file, lsn);
            debug_assert!(!durable || self.stable.load(SeqCst) >= lsn);
            return;
        }
        // Pad at the end of *all* reservations (≥ lsn): the group takes in every frame
        // being copied. Those appenders finish without a checkpoint (invariant 7) and the
        // padding needs no log space of its own (SLACK), so nothing here waits for one.
        let (at, len) = self.buf.reserve_padding(b);
        let ckpt = self.checkpoint.load(SeqCst);
        assert!(
            at >= lsn && at + len <= ckpt + file.capacity,
            "invariant 2: padding [{at}, {}) would overwrite log after checkpoint {ckpt}",
            at + len
        );
        self.fill_to(w, &file, at);
        if len > 0 {
            let pad = format::encode_padding(Lsn(at), self.epoch, len);
            // Room in the ring: the whole blocks below `at` are written, so
            // `at + len ≤ written + b + MAX_PADDING` < `written + ring` (invariant 3).
            debug_assert!(at + len <= self.written.load(SeqCst) + self.buf.size());
            self.buf.copy_in(at, &pad);
            self.buf.publish(at, len);
            self.counters.padding_bytes.fetch_add(len, SeqCst);
            self.buf.advance();
        }
        // One write through the padding's end, so `stable` lands on it; frames filled
        // meanwhile go with the next write.
        let written = self.written.load(SeqCst);
        self.write_range(w, &file, written, at + len, true);
        assert!(
            self.stable.load(SeqCst) >= lsn,
            "invariant 6: padding made {lsn} stable"
        );
    }

    /// Writes everything filled until `filled ≥ lsn`, waiting for copies in progress.
    fn write_until(&self, w: &mut WriterState, file: &LogFile, lsn: u64) {
        loop {
            let filled = self.buf.advance();
            let written = self.written.load(SeqCst);
            if filled > written {
                self.write_range(w, file, written, filled, true);
            }
            if filled >= lsn {
                return;
            }
            self.wait_until(|| {
                self.buf.next_published() || self.buf.filled() > self.written.load(SeqCst)
            });
        }
    }

    /// Waits until `filled ≥ lsn`, writing meanwhile only whole blocks (so the partial last
    /// block is written once, by the caller, and appenders waiting for ring room still get
    /// it: a frame is at most a quarter of the ring, a block at most 4 KiB).
    fn fill_to(&self, w: &mut WriterState, file: &LogFile, lsn: u64) {
        let b = file.io_block;
        let whole = |f: u64| f - f % b;
        loop {
            let filled = self.buf.advance();
            if filled >= lsn {
                return;
            }
            let written = self.written.load(SeqCst);
            if whole(filled) > written {
                self.write_range(w, file, written, whole(filled), false);
            }
            self.wait_until(|| {
                let filled = self.buf.filled();
                self.buf.next_published()
                    || filled >= lsn
                    || whole(filled) > self.written.load(SeqCst)
            });
        }
    }

    /// Through the flush gate: one sync covers everything stable when it starts, which is at
    /// least `lsn` (the write phase made it so); committers covered by an earlier sync
    /// return without one.
    fn flush_phase(&self, lsn: u64) {
        while self.flushed.load(SeqCst) < lsn {
            if !self.flush_gate.try_enter() {
                // A sync is running: sleep until it ends (it may cover `lsn`).
                self.flush_gate
                    .wait(lsn as usize, || self.flushed.load(SeqCst) >= lsn);
                continue;
            }
            if self.flushed.load(SeqCst) < lsn {
                // Read before the sync: a sync covers the writes completed before it started.
                let target = self.stable.load(SeqCst);
                assert!(target >= lsn, "the write phase made {lsn} stable");
                if !self.config.dsync {
                    let file = Arc::clone(&self.file.read());
                    file.handle.sync_data();
                    self.counters.os_log_fsyncs.fetch_add(1, SeqCst);
                }
                // Invariant 4. (With O_DSYNC the writes were durable on return.)
                self.flushed.fetch_max(target, SeqCst);
                tracing::trace!(target: "quire::trace", "log synced to {target}");
            }
            self.flush_gate
                .leave(|t| self.flushed.load(SeqCst) >= t as u64);
        }
    }

    /// Writes ring bytes `[from, to)` to the file in chunks, advancing `written` after each.
    /// `frame_end` says `to` is a frame boundary (a `filled` value, or a padding's end), so
    /// that, on a block boundary, it becomes `stable`.
    fn write_range(
        &self,
        w: &mut WriterState,
        file: &LogFile,
        from: u64,
        to: u64,
        frame_end: bool,
    ) {
        let b = file.io_block;
        let cap = file.capacity;
        // Invariant 2: never write over log the checkpoint still needs.
        let ckpt = self.checkpoint.load(SeqCst);
        assert!(
            to.div_ceil(b) * b <= ckpt + cap,
            "invariant 2: writing up to {to} would overwrite log after checkpoint {ckpt}"
        );
        // Invariant 6: the rewritten prefix lies in `stable`'s block or after it (the same
        // block only when `stable` is an unaligned checkpoint at open: nothing before it is
        // needed).
        debug_assert!({
            let stable = self.stable.load(SeqCst);
            from - from % b >= stable - stable % b
        });
        let mut pos = from;
        while pos < to {
            let blk_start = pos - pos % b;
            let wrap = (pos / cap + 1) * cap;
            let end = to.min(wrap).min(blk_start + CHUNK);
            let prefix = (pos - blk_start) as usize;
            let n = (end - pos) as usize;
            let total = (prefix + n).div_ceil(b as usize) * b as usize;
            let staging = &mut w.staging[..total];
            staging[..prefix].copy_from_slice(&w.tail[..prefix]);
            self.buf.copy_out(pos, &mut staging[prefix..prefix + n]);
            staging[prefix + n..].fill(0);
            // Prewrite invariant 2: never beside a chunk of zeros being written.
            self.prewrite.before_write(blk_start + total as u64);
            file.write_data(blk_start, staging);
            tracing::trace!(target: "quire::trace", "log write [{pos}, {end}) at block {blk_start}, {total} bytes");
            // Keep the new partial last block for the next write's rewrite.
            let last_blk = end - end % b;
            let keep = (end - last_blk) as usize;
            let at = (last_blk - blk_start) as usize;
            w.tail[..keep].copy_from_slice(&w.staging[at..at + keep]);

            self.counters.os_log_written.fetch_add(total as u64, SeqCst);
            self.counters.log_writes.fetch_add(1, SeqCst);
            self.written.store(end, SeqCst);
            self.wake();
            self.prewrite.after_write(end);
            pos = end;
        }
        if frame_end && to.is_multiple_of(b) {
            self.stable.fetch_max(to, SeqCst);
            if self.config.dsync {
                // Durable on return (O_DSYNC), and stable: acknowledge (invariant 4).
                self.flushed.fetch_max(to, SeqCst);
            }
        }
    }

    /// Invariant 1, loading the smaller LSNs first so that concurrent growth cannot make a
    /// true relation look false.
    pub(crate) fn check_invariants(&self) {
        let ckpt = self.checkpoint.load(SeqCst);
        let flushed = self.flushed.load(SeqCst);
        let stable = self.stable.load(SeqCst);
        let written = self.written.load(SeqCst);
        let filled = self.buf.filled();
        let reserved = self.buf.reserved();
        // `claimed` may go down, but never below `reserved`: read after it.
        let claimed = self.buf.claimed();
        assert!(
            ckpt <= flushed
                && flushed <= stable
                && stable <= written
                && written <= filled
                && filled <= reserved,
            "invariant 1: checkpoint {ckpt} ≤ flushed {flushed} ≤ stable {stable} ≤ written \
             {written} ≤ filled {filled} ≤ reserved {reserved}"
        );
        assert!(
            reserved <= claimed,
            "invariant 8: reserved {reserved} ≤ claimed {claimed}"
        );
    }

    // ---- checkpoints ---------------------------------------------------------------------

    pub(crate) fn checkpoint(&self, lsn: Lsn) -> Result<()> {
        let reserved = self.buf.reserved();
        assert!(
            lsn.0 <= reserved,
            "checkpoint({lsn}) is beyond the current LSN {reserved}"
        );
        if lsn.0 <= self.checkpoint.load(SeqCst) {
            return Ok(());
        }
        // The checkpoint must never be ahead of the durable log (invariant 1).
        self.write_up_to(lsn, true);
        let mut c = self.ckpt.lock();
        if lsn.0 <= self.checkpoint.load(SeqCst) {
            return Ok(());
        }
        let file = Arc::clone(&self.file.read());
        let slot = CheckpointSlot {
            checkpoint_lsn: lsn,
            capacity: file.capacity,
            seq: c.seq + 1,
            epoch: self.epoch,
            durable_lsn: Lsn(self.flushed.load(SeqCst)),
        };
        self.write_slot(&file, c.next_slot, &slot);
        tracing::trace!(target: "quire::trace", "checkpoint {lsn} seq {} durable {}", slot.seq, slot.durable_lsn);
        c.seq += 1;
        c.next_slot ^= 1;
        // Invariant 5: published only now that the slot is durable.
        self.checkpoint.store(lsn.0, SeqCst);
        drop(c);
        self.wake();
        self.check_invariants();
        Ok(())
    }

    /// Writes and syncs checkpoint slot `i`.
    pub(crate) fn write_slot(&self, file: &LogFile, i: usize, slot: &CheckpointSlot) {
        let mut b = file.buf(BLOCK as usize);
        slot.encode(&mut b);
        file.write_block(SLOT_OFFSETS[i], &b);
        if !self.config.dsync {
            file.handle.sync_data();
        }
        self.counters.os_log_fsyncs.fetch_add(1, SeqCst);
    }

    pub(crate) fn flush_at_commit(&self) -> FlushAtCommit {
        FlushAtCommit::from_innodb(self.flush_at_commit.load(SeqCst)).unwrap_or_default()
    }
}

/// Log space held for one mini-transaction, from before it latches anything until it has
/// appended (invariant 8). Dropping it gives back what was not used.
#[must_use = "a reservation holds log space until it is dropped"]
pub struct LogReservation<'a> {
    shared: &'a Shared,
    /// Bytes of frame this reservation may still append without claiming more.
    unused: u64,
}

impl LogReservation<'_> {
    /// Bytes of frame that still fit in this reservation.
    pub fn unused(&self) -> u64 {
        self.unused
    }
}

impl std::fmt::Debug for LogReservation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReservation")
            .field("unused", &self.unused)
            .finish()
    }
}

impl Drop for LogReservation<'_> {
    fn drop(&mut self) {
        self.shared.release(self.unused);
        #[cfg(debug_assertions)]
        HELD.with(|h| h.set(h.get().saturating_sub(1)));
    }
}

#[cfg(debug_assertions)]
thread_local! {
    /// Reservations made by [`Log::free_check`] on this thread and not yet dropped.
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The redo log. Share it with `Arc<Log>`; every method takes `&self`.
#[derive(Debug)]
pub struct Log {
    shared: Arc<Shared>,
    stop: Arc<Stop>,
    bg: Mutex<Option<JoinHandle<()>>>,
    prewriter: Mutex<Option<JoinHandle<()>>>,
}

impl Log {
    pub(crate) fn start(shared: Shared) -> Result<Log> {
        let shared = Arc::new(shared);
        let stop = Arc::new(Stop::default());
        // A thread that cannot start is an I/O-class error naming the directory.
        let started = |h: std::io::Result<JoinHandle<()>>, what: &'static str| {
            h.map_err(|e| LogError::Io(quire_io::IoError::from_std(what, &shared.dir, &e)))
        };
        let bg = if shared.config.background_flush {
            Some(started(
                flusher::spawn(Arc::clone(&shared), Arc::clone(&stop)),
                "spawn log flush thread",
            )?)
        } else {
            None
        };
        let prewriter = if shared.prewrite.ahead > 0 {
            Some(started(
                prewrite::spawn(Arc::clone(&shared)),
                "spawn log prewrite thread",
            )?)
        } else {
            None
        };
        Ok(Log {
            shared,
            stop,
            bg: Mutex::new(bg),
            prewriter: Mutex::new(prewriter),
        })
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Appends one mini-transaction's redo as one frame and returns its LSN range. Blocks
    /// while the ring or the log is full. Errors only for an empty or oversized payload.
    pub fn append(&self, payload: &[u8]) -> Result<LsnRange> {
        self.shared.append(payload)
    }

    /// Writes (and, if `durable`, syncs) the log up to at least `lsn`, which must not be
    /// beyond [`Log::current_lsn`]. One write and one sync serve every committer waiting (group commit).
    pub fn write_up_to(&self, lsn: Lsn, durable: bool) {
        self.shared.write_up_to(lsn, durable)
    }

    /// What a transaction commit waits for, per `innodb_flush_log_at_trx_commit`.
    pub fn commit_wait(&self, lsn: Lsn) {
        self.shared.counters.commits.fetch_add(1, SeqCst);
        match self.shared.flush_at_commit() {
            FlushAtCommit::Durable => self.shared.write_up_to(lsn, true),
            FlushAtCommit::WriteOnly => self.shared.write_up_to(lsn, false),
            FlushAtCommit::Lazy => {}
        }
    }

    /// `SET GLOBAL innodb_flush_log_at_trx_commit`.
    pub fn set_flush_at_commit(&self, v: FlushAtCommit) {
        self.shared.flush_at_commit.store(v.as_innodb(), SeqCst);
    }
    pub fn flush_at_commit(&self) -> FlushAtCommit {
        self.shared.flush_at_commit()
    }

    /// Writes and syncs everything appended so far.
    pub fn flush_all(&self) {
        self.shared.flush_all()
    }

    /// Records that every page modified by log before `lsn` is on disk: writes the other
    /// checkpoint slot and syncs it, freeing the log before `lsn`. `lsn` must be a frame
    /// boundary (an mtr's start, or [`Log::current_lsn`]). A lower `lsn` than the current
    /// checkpoint is a no-op.
    pub fn checkpoint(&self, lsn: Lsn) -> Result<()> {
        self.shared.checkpoint(lsn)
    }

    /// Reserves log space for one mini-transaction of up to `len` bytes of redo (at least
    /// [`MTR_RESERVATION`], at most one frame), blocking until it fits ahead of the
    /// checkpoint (InnoDB's `log_free_check`, made a reservation: invariant 8). The mtr
    /// layer calls it *before* latching pages, holding no latch and no other reservation, and
    /// appends with [`Log::append_reserved`]: that append never waits for a checkpoint, so
    /// no latch the page cleaner needs is ever held by a thread waiting for log space.
    /// Dropping the reservation gives back what was not used.
    pub fn free_check(&self, len: u64) -> LogReservation<'_> {
        #[cfg(debug_assertions)]
        HELD.with(|h| {
            debug_assert_eq!(
                h.get(),
                0,
                "invariant 8: log space asked for while this thread holds a reservation (a \
                 nested mini-transaction may wait for log space holding latches)"
            );
            h.set(h.get() + 1);
        });
        let unused = self.shared.reservation_len(len);
        self.shared.grant(unused);
        LogReservation {
            shared: &self.shared,
            unused,
        }
    }

    /// Appends one frame inside `reservation` (see [`Log::free_check`]): never waits for a
    /// checkpoint unless the frame overruns the reservation by more than the overdraft has
    /// left (invariant 8). Errors only for an empty or oversized payload.
    pub fn append_reserved(
        &self,
        payload: &[u8],
        reservation: &mut LogReservation<'_>,
    ) -> Result<LsnRange> {
        debug_assert!(
            std::ptr::eq(reservation.shared, &*self.shared),
            "a reservation of another log"
        );
        self.shared
            .append_reserved(payload, &mut reservation.unused)
    }

    /// Sets the callback an append calls when it blocks on a full log, with the LSN the
    /// checkpoint must reach. It should only signal the page cleaner (it runs on the
    /// appending thread).
    pub fn set_pressure_hook(&self, hook: impl Fn(Lsn) + Send + Sync + 'static) {
        self.shared.set_pressure_hook(Some(Arc::new(hook)));
    }

    /// Reads the frames from `from` up to the written LSN.
    pub fn scan(&self, from: Lsn) -> Result<LogReader> {
        let file = Arc::clone(&self.shared.file.read());
        LogReader::new(file, from, Some(self.written_lsn()))
    }

    /// The LSN the next append starts at.
    pub fn current_lsn(&self) -> Lsn {
        Lsn(self.shared.buf.reserved())
    }
    pub fn written_lsn(&self) -> Lsn {
        Lsn(self.shared.written.load(SeqCst))
    }
    /// Durable up to here: commits at or below it survive a crash.
    pub fn flushed_lsn(&self) -> Lsn {
        Lsn(self.shared.flushed.load(SeqCst))
    }
    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.shared.checkpoint.load(SeqCst))
    }
    /// `Innodb_checkpoint_age`.
    pub fn checkpoint_age(&self) -> u64 {
        let ckpt = self.shared.checkpoint.load(SeqCst);
        self.shared.buf.reserved() - ckpt
    }
    /// Bytes in the circular data area (`innodb_log_file_size`).
    pub fn capacity(&self) -> u64 {
        self.shared.file.read().capacity
    }
    /// The largest payload [`Log::append`] can take now without waiting for a checkpoint
    /// (log claimed by open reservations is not free).
    pub fn free_space(&self) -> u64 {
        let sh = &self.shared;
        sh.grant_end()
            .saturating_sub(sh.buf.claimed())
            .saturating_sub(format::MAX_PADDING + FRAME_OVERHEAD)
    }
    /// How full the log is, 0.0 to 1.0: the page cleaner's signal for adaptive flushing
    /// (lesson 2: flush by checkpoint age, not only by dirty-page percentage).
    pub fn fill_ratio(&self) -> f64 {
        let limit = self.shared.space_limit.load(SeqCst).max(1);
        self.checkpoint_age() as f64 / limit as f64
    }
    /// The largest payload [`Log::append`] accepts.
    pub fn max_payload(&self) -> u64 {
        self.shared.max_payload.load(SeqCst)
    }
    /// This run's epoch.
    pub fn epoch(&self) -> u32 {
        self.shared.epoch
    }
    /// Whether writes go through O_DIRECT.
    pub fn direct_io(&self) -> bool {
        self.shared.file.read().io_block > 1 && !self.shared.buffered.load(SeqCst)
    }

    /// Whether the file was opened with O_DIRECT, so that [`Log::set_buffered`] can switch.
    pub fn can_be_direct(&self) -> bool {
        self.shared.file.read().io_block > 1
    }

    /// `innodb_log_file_buffering`, live (lesson 3): `on` sends the log's writes through
    /// the file system cache, `off` back to O_DIRECT. Commits that only write
    /// (`innodb_flush_log_at_trx_commit=2`) then cost a copy into the cache instead of a
    /// device round trip; durable commits sync either way, and a sync covers the writes of
    /// both modes. Returns the mode now in force (`true`: buffered), which is always
    /// buffered for a file the system would not open with O_DIRECT.
    pub fn set_buffered(&self, on: bool) -> Result<bool> {
        // Not while a resize swaps the file: it puts the new one in the recorded mode.
        let _no_resize = self.shared.resize_lock.lock();
        let file = Arc::clone(&self.shared.file.read());
        if file.io_block == 1 {
            return Ok(true);
        }
        let switched = file.handle.inner().set_buffered(on)?;
        let now = on && switched;
        self.shared.buffered.store(now, SeqCst);
        Ok(now)
    }

    pub fn stats(&self) -> LogStats {
        let c = &self.shared.counters;
        LogStats {
            os_log_written: c.os_log_written.load(SeqCst),
            log_writes: c.log_writes.load(SeqCst),
            os_log_fsyncs: c.os_log_fsyncs.load(SeqCst),
            log_waits: c.log_waits.load(SeqCst),
            reservation_overruns: c.reservation_overruns.load(SeqCst),
            commits: c.commits.load(SeqCst),
            padding_bytes: c.padding_bytes.load(SeqCst),
            prewritten_bytes: self.shared.prewrite.bytes.load(SeqCst),
            checkpoint_lsn: self.checkpoint_lsn(),
            flushed_lsn: self.flushed_lsn(),
            written_lsn: self.written_lsn(),
            current_lsn: self.current_lsn(),
            checkpoint_age: self.checkpoint_age(),
            capacity: self.capacity(),
        }
    }

    /// Stops the background thread, then writes and syncs everything appended.
    pub fn shutdown(self) {
        self.stop_background();
        self.shared.flush_all();
    }

    fn stop_background(&self) {
        self.stop.stop();
        self.shared.prewrite.stop();
        if let Some(h) = self.bg.lock().take() {
            if h.join().is_err() {
                tracing::error!(target: "quire::log", "the log flush thread panicked");
            }
        }
        if let Some(h) = self.prewriter.lock().take() {
            if h.join().is_err() {
                tracing::error!(target: "quire::log", "the log prewrite thread panicked");
            }
        }
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        // Dropping without `shutdown` (a test simulating a crash, or a panic) only stops the
        // thread: writing here could hide a bug that lost a write.
        self.stop_background();
    }
}
