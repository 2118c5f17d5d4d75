//! A deterministic, seeded, simulated file system for crash tests.
//!
//! Every later crash test stands on this module, so its semantics are exact and documented
//! here and in docs/io.md (cite that file, not this code's accidents).
//!
//! ```text
//!   write/set_len/allocate ──► inode.pending ──sync_data──► inode.durable
//!   create/delete/rename   ──► dir.pending   ──sync_dir───► dir.durable
//!                                  │
//!                          crash() │ each pending write: kept | dropped | torn | garbage
//!                                  │ each size change:   kept | dropped
//!                                  ▼ each directory:     a random prefix of its pending ops
//!                           a new SimVfs holding only the post-crash image
//! ```
//!
//! * Reads see the live state: the durable image with every pending op applied in order.
//! * `sync_data` makes all of that inode's pending ops durable (data and size). It does not
//!   touch directory entries: a new file survives a crash only once its directory is synced.
//! * An O_DIRECT write is pending like any other until a sync covers it. A write through a
//!   `dsync` handle is durable on return (it is recorded as a pending op that every crash
//!   keeps, so it lands in order after earlier pending writes).
//! * Directories themselves (`create_dir_all`) are durable at once: the engine creates its data
//!   directory once, and modelling lost directories would add nothing to its crash tests.
//!
//! # Invariants
//!
//! 1. For every inode, `live` equals `durable` with every op in `pending` applied in order.
//! 2. After `sync_data`, the inode's `pending` is empty and `durable == live`.
//! 3. For every directory, `live` equals `durable` with every op in `pending` applied in order.
//! 4. Every directory entry, durable or live, names an inode that exists in `inodes`.
//! 5. `op_count` grows by exactly one per successful mutating call, and `frozen`, once taken
//!    at `op_count == crash_point`, never changes.
//! 6. A call that fails (an injected fault or a refused request) changes no state and is not
//!    counted; except a fallocate on a full disk with [`SimVfs::set_partial_allocate`] on,
//!    which grows the file to the last byte the disk holds first (as ext4 does), counted as
//!    one op.
//!
//! [`SimVfs::check_invariants`] asserts 1, 3 and 4; `crash` calls it first.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{Create, DirectIo, ErrorKind, IoError, OpenOptions, Result, Vfs, VfsFile};

/// The unit of atomicity of the simulated disk: a write tears only at these boundaries.
pub const SECTOR_BYTES: u64 = 512;

/// O_DIRECT alignment granted by default (a 512-byte logical block device).
pub const DEFAULT_DIRECT_ALIGN: u32 = 512;

type Ino = u64;

/// What a pending write or size change did, in the order the caller made it.
#[derive(Debug, Clone)]
enum PendingOp {
    Write {
        offset: u64,
        data: Vec<u8>,
        /// Written through a `dsync` handle: durable on return, so every crash keeps it.
        forced: bool,
    },
    SetLen {
        len: u64,
        cause: SizeCause,
    },
}

/// Why a file's size changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeCause {
    Allocate,
    SetLen,
}

#[derive(Debug, Clone, Default)]
struct Inode {
    durable: Vec<u8>,
    pending: Vec<PendingOp>,
    live: Vec<u8>,
}

/// One directory operation: a set of entry changes applied atomically (a rename within one
/// directory sets the new name and removes the old one in one step).
#[derive(Debug, Clone)]
struct DirOp {
    desc: String,
    changes: Vec<(OsString, Option<Ino>)>,
}

#[derive(Debug, Clone, Default)]
struct Dir {
    durable: BTreeMap<OsString, Ino>,
    pending: Vec<DirOp>,
    live: BTreeMap<OsString, Ino>,
}

/// Everything a crash could leave behind: durable state plus pending ops.
#[derive(Debug, Clone, Default)]
struct Disk {
    inodes: BTreeMap<Ino, Inode>,
    dirs: BTreeMap<PathBuf, Dir>,
}

/// Which call a [`Fault`] matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOp {
    Open,
    Read,
    /// `write_all_at` and `write_vectored_at`.
    Write,
    /// `sync_data`.
    Sync,
    SyncDir,
    Allocate,
    SetLen,
    Delete,
    Rename,
    /// Every call above.
    Any,
}

/// An error to inject: the `nth` (1-based) call from now that matches `op` and
/// `path_contains` fails with `kind` (use [`ErrorKind::Io`] for EIO, [`ErrorKind::NoSpace`]
/// for ENOSPC), changing nothing. The fault then disarms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub op: FaultOp,
    /// Matches when the call's path (the path the file was opened with; for a rename either
    /// path; for `sync_dir` the directory) contains this string. `None` matches every path.
    pub path_contains: Option<String>,
    pub nth: u64,
    pub kind: ErrorKind,
}

impl Fault {
    /// EIO on the `nth` matching call.
    pub fn eio(op: FaultOp, nth: u64) -> Self {
        Fault {
            op,
            path_contains: None,
            nth,
            kind: ErrorKind::Io,
        }
    }
    /// ENOSPC on the `nth` matching call.
    pub fn enospc(op: FaultOp, nth: u64) -> Self {
        Fault {
            op,
            path_contains: None,
            nth,
            kind: ErrorKind::NoSpace,
        }
    }
    pub fn on_path(mut self, contains: &str) -> Self {
        self.path_contains = Some(contains.to_string());
        self
    }
}

#[derive(Debug, Clone)]
struct ArmedFault {
    fault: Fault,
    /// Matching calls still to let through before firing, counting the firing one.
    remaining: u64,
}

/// Counters of successful calls since creation (or [`SimVfs::reset_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// `write_all_at` and `write_vectored_at` calls.
    pub writes: u64,
    pub bytes_written: u64,
    /// `sync_data` calls.
    pub syncs: u64,
    pub dir_syncs: u64,
    pub allocates: u64,
    pub set_lens: u64,
    pub reads: u64,
    pub bytes_read: u64,
    pub creates: u64,
    pub deletes: u64,
    pub renames: u64,
    pub faults_fired: u64,
}

/// The fate policy of a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// Each pending write gets one of the four fates with equal odds; each size change is kept
    /// or dropped with equal odds; each directory keeps a random prefix of its pending ops.
    Random,
    /// Everything pending reaches the disk (the post-crash image equals the live state).
    KeepAll,
    /// Nothing pending reaches the disk (the image is exactly the durable state).
    DropAll,
    /// Every pending write spanning two or more sectors tears (a prefix or a suffix of its
    /// sectors lands); a single-sector write cannot tear, so it is dropped. Size changes are
    /// dropped; directories keep a random prefix.
    TearAll,
    /// Every pending write lands with a random non-empty set of its sectors overwritten by
    /// random bytes. Size changes are dropped; directories keep a random prefix.
    GarbageAll,
    /// Like `Random`, with these relative odds for writes.
    Weighted(FateWeights),
}

/// Relative odds of each write fate under [`CrashMode::Weighted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FateWeights {
    pub keep: u32,
    pub drop: u32,
    pub tear: u32,
    pub garbage: u32,
}

impl CrashMode {
    /// Every mode, so a test can loop over them.
    pub const ALL: [CrashMode; 5] = [
        CrashMode::Random,
        CrashMode::KeepAll,
        CrashMode::DropAll,
        CrashMode::TearAll,
        CrashMode::GarbageAll,
    ];
}

/// What happened to one pending write at a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteFate {
    Kept,
    Dropped,
    /// Only the first `sectors_kept` of the write's `sectors` reached the disk.
    TornPrefix {
        sectors_kept: u64,
        sectors: u64,
    },
    /// Only the last `sectors_kept` of the write's `sectors` reached the disk.
    TornSuffix {
        sectors_kept: u64,
        sectors: u64,
    },
    /// The write landed, but these sectors (absolute file sector numbers, offset / 512) hold
    /// random bytes over the part of the sector that the write covered.
    Garbage {
        sectors: Vec<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// A post-crash path of the file (the first in path order).
    pub path: PathBuf,
    pub offset: u64,
    pub len: u64,
    pub fate: WriteFate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeChangeReport {
    pub path: PathBuf,
    pub len: u64,
    pub cause: SizeCause,
    pub kept: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirReport {
    pub dir: PathBuf,
    /// The pending ops, in order, described ("create a", "rename a -> b", "delete b").
    pub pending: Vec<String>,
    /// How many of them (a prefix) survived.
    pub kept: usize,
}

/// The fate of everything that was pending at a crash. Writes and size changes are reported
/// for files that exist after the crash, in path order, then in the order they were made.
/// Writes made through a `dsync` handle were durable, so they are not listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrashReport {
    pub writes: Vec<WriteReport>,
    pub size_changes: Vec<SizeChangeReport>,
    pub dirs: Vec<DirReport>,
}

impl CrashReport {
    /// Absolute sector numbers of `path` that any write turned to garbage.
    pub fn garbage_sectors(&self, path: &Path) -> BTreeSet<u64> {
        self.writes
            .iter()
            .filter(|w| w.path == path)
            .flat_map(|w| match &w.fate {
                WriteFate::Garbage { sectors } => sectors.clone(),
                _ => Vec::new(),
            })
            .collect()
    }
}

struct State {
    disk: Disk,
    /// The crash image, taken when `op_count` reached `crash_point` (invariant 5).
    frozen: Option<Disk>,
    crash_point: Option<u64>,
    op_count: u64,
    next_ino: Ino,
    seed: u64,
    /// How many crashes led to this state: mixed into the crash RNG so that successive
    /// crashes of one run differ while staying deterministic.
    generation: u64,
    direct_align: u32,
    faults: Vec<ArmedFault>,
    /// The disk's size: a call that would make the live files (those a live directory
    /// entry names) hold more bytes than this fails with ENOSPC, changing nothing.
    capacity: Option<u64>,
    /// A fallocate that fills the disk keeps what it got (see invariant 6).
    partial_allocate: bool,
    stats: SimStats,
}

/// The largest file the simulated file system holds (EFBIG beyond, as a file system's own
/// limit): its files live in memory, and a damaged page number must not make it try to
/// hold terabytes (found by the pages fuzz target: a doublewrite copy naming a page 8 TiB
/// into its space).
pub const SIM_MAX_FILE_BYTES: u64 = 1 << 30;

/// The simulated file system. Clones share one state.
#[derive(Clone)]
pub struct SimVfs {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for SimVfs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("SimVfs")
            .field("seed", &st.seed)
            .field("generation", &st.generation)
            .field("op_count", &st.op_count)
            .field("files", &st.disk.inodes.len())
            .finish()
    }
}

/// Splits a path into its directory and file name. A bare name lives in ".".
fn split(path: &Path) -> (PathBuf, OsString) {
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (dir, name)
}

fn not_found(op: &'static str, path: &Path) -> IoError {
    IoError::new(op, path, ErrorKind::NotFound, "no such file or directory")
}

/// Applies a write's bytes at `offset`, growing `image` with zeros as needed.
fn put(image: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = offset as usize;
    let end = start + bytes.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(bytes);
}

fn apply_op(image: &mut Vec<u8>, op: &PendingOp) {
    match op {
        PendingOp::Write { offset, data, .. } => put(image, *offset, data),
        PendingOp::SetLen { len, .. } => image.resize(*len as usize, 0),
    }
}

fn apply_dir_op(entries: &mut BTreeMap<OsString, Ino>, op: &DirOp) {
    for (name, target) in &op.changes {
        match target {
            Some(ino) => entries.insert(name.clone(), *ino),
            None => entries.remove(name),
        };
    }
}

/// The byte ranges of a write split at absolute sector boundaries: `(sector, start, end)`
/// with `start..end` relative to the write's data.
fn sector_pieces(offset: u64, len: u64) -> Vec<(u64, usize, usize)> {
    let mut out = Vec::new();
    let end = offset + len;
    let mut pos = offset;
    while pos < end {
        let sector = pos / SECTOR_BYTES;
        let piece_end = ((sector + 1) * SECTOR_BYTES).min(end);
        out.push((
            sector,
            (pos - offset) as usize,
            (piece_end - offset) as usize,
        ));
        pos = piece_end;
    }
    out
}

/// Mixes the seed and the crash generation into one RNG seed (splitmix64 finalizer), so that
/// nearby seeds give unrelated streams.
fn mix(seed: u64, generation: u64) -> u64 {
    let mut z = seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl State {
    fn new(seed: u64, generation: u64, direct_align: u32, disk: Disk) -> Self {
        let next_ino = disk.inodes.keys().next_back().map_or(1, |i| i + 1);
        State {
            disk,
            frozen: None,
            crash_point: None,
            op_count: 0,
            next_ino,
            seed,
            generation,
            direct_align,
            faults: Vec::new(),
            capacity: None,
            partial_allocate: false,
            stats: SimStats::default(),
        }
    }

    /// Counts a call against the armed faults; returns the error if one fires.
    fn check_fault(&mut self, op: FaultOp, opname: &'static str, paths: &[&Path]) -> Result<()> {
        let mut fired = None;
        for (i, armed) in self.faults.iter_mut().enumerate() {
            let f = &armed.fault;
            let op_matches = f.op == FaultOp::Any || f.op == op;
            let path_matches = match &f.path_contains {
                None => true,
                Some(s) => paths
                    .iter()
                    .any(|p| p.to_string_lossy().contains(s.as_str())),
            };
            if !(op_matches && path_matches) {
                continue;
            }
            armed.remaining -= 1;
            if armed.remaining == 0 && fired.is_none() {
                fired = Some(i);
            }
        }
        if let Some(i) = fired {
            let armed = self.faults.remove(i);
            self.stats.faults_fired += 1;
            let path = paths.first().copied().unwrap_or(Path::new(""));
            return Err(IoError::new(
                opname,
                path,
                armed.fault.kind,
                format!("injected fault {:?}", armed.fault),
            ));
        }
        Ok(())
    }

    /// Bytes held by the live files: every inode a live directory entry names, counted once.
    fn used_bytes(&self) -> u64 {
        let live: BTreeSet<Ino> = self
            .disk
            .dirs
            .values()
            .flat_map(|d| d.live.values().copied())
            .collect();
        live.iter()
            .filter_map(|ino| self.disk.inodes.get(ino))
            .map(|n| n.live.len() as u64)
            .sum()
    }

    /// EFBIG past [`SIM_MAX_FILE_BYTES`], and ENOSPC if growing inode `ino` to `new_len`
    /// bytes would pass the disk's capacity.
    fn check_room(&self, ino: Ino, new_len: u64, opname: &'static str, path: &Path) -> Result<()> {
        if new_len > SIM_MAX_FILE_BYTES {
            return Err(IoError::new(
                opname,
                path,
                ErrorKind::Io,
                format!(
                    "File too large (os error 27; the simulated file system holds files of \
                     at most {SIM_MAX_FILE_BYTES} bytes)"
                ),
            ));
        }
        let Some(cap) = self.capacity else {
            return Ok(());
        };
        let cur = self.inode(ino).live.len() as u64;
        if new_len <= cur {
            return Ok(());
        }
        if self.used_bytes() + (new_len - cur) > cap {
            return Err(IoError::new(
                opname,
                path,
                ErrorKind::NoSpace,
                format!("No space left on device (simulated disk of {cap} bytes)"),
            ));
        }
        Ok(())
    }

    /// Records one successful mutating call and freezes the crash image at the crash point.
    fn mutated(&mut self) {
        self.op_count += 1;
        if self.crash_point == Some(self.op_count) {
            assert!(
                self.frozen.is_none(),
                "invariant 5: frozen image taken twice"
            );
            self.frozen = Some(self.disk.clone());
        }
    }

    fn dir_mut(&mut self, dir: &Path, op: &'static str) -> Result<&mut Dir> {
        self.disk
            .dirs
            .get_mut(dir)
            .ok_or_else(|| not_found(op, dir))
    }

    fn lookup_live(&self, path: &Path) -> Option<Ino> {
        let (dir, name) = split(path);
        self.disk.dirs.get(&dir)?.live.get(&name).copied()
    }

    fn lookup_durable(&self, path: &Path) -> Option<Ino> {
        let (dir, name) = split(path);
        self.disk.dirs.get(&dir)?.durable.get(&name).copied()
    }

    fn inode(&self, ino: Ino) -> &Inode {
        self.disk
            .inodes
            .get(&ino)
            .unwrap_or_else(|| panic!("invariant 4: inode {ino} missing"))
    }

    fn inode_mut(&mut self, ino: Ino) -> &mut Inode {
        self.disk
            .inodes
            .get_mut(&ino)
            .unwrap_or_else(|| panic!("invariant 4: inode {ino} missing"))
    }
}

/// What a crash leaves of `inode`: durable state, then each pending op with its fate.
struct Fates<'a> {
    rng: &'a mut StdRng,
    mode: CrashMode,
}

impl Fates<'_> {
    fn write_fate(&mut self, offset: u64, len: u64) -> WriteFate {
        let pieces = sector_pieces(offset, len);
        let n = pieces.len() as u64;
        let weights = match self.mode {
            CrashMode::KeepAll => return WriteFate::Kept,
            CrashMode::DropAll => return WriteFate::Dropped,
            CrashMode::TearAll => return self.tear(n),
            CrashMode::GarbageAll => return self.garbage(&pieces),
            CrashMode::Random => FateWeights {
                keep: 1,
                drop: 1,
                tear: 1,
                garbage: 1,
            },
            CrashMode::Weighted(w) => w,
        };
        let total = u64::from(weights.keep)
            + u64::from(weights.drop)
            + u64::from(weights.tear)
            + u64::from(weights.garbage);
        assert!(total > 0, "FateWeights must not all be zero");
        let mut r = self.rng.gen_range(0..total);
        if r < u64::from(weights.keep) {
            return WriteFate::Kept;
        }
        r -= u64::from(weights.keep);
        if r < u64::from(weights.drop) {
            return WriteFate::Dropped;
        }
        r -= u64::from(weights.drop);
        if r < u64::from(weights.tear) {
            return self.tear(n);
        }
        self.garbage(&pieces)
    }

    fn tear(&mut self, n: u64) -> WriteFate {
        if n < 2 {
            // One sector is the unit of atomicity: it lands whole or not at all.
            return WriteFate::Dropped;
        }
        let sectors_kept = self.rng.gen_range(1..n);
        if self.rng.gen_bool(0.5) {
            WriteFate::TornPrefix {
                sectors_kept,
                sectors: n,
            }
        } else {
            WriteFate::TornSuffix {
                sectors_kept,
                sectors: n,
            }
        }
    }

    fn garbage(&mut self, pieces: &[(u64, usize, usize)]) -> WriteFate {
        let mut sectors: Vec<u64> = pieces
            .iter()
            .filter(|_| self.rng.gen_bool(0.5))
            .map(|p| p.0)
            .collect();
        if sectors.is_empty() {
            let i = self.rng.gen_range(0..pieces.len());
            sectors.push(pieces[i].0);
        }
        WriteFate::Garbage { sectors }
    }

    fn size_kept(&mut self) -> bool {
        match self.mode {
            CrashMode::KeepAll => true,
            CrashMode::DropAll | CrashMode::TearAll | CrashMode::GarbageAll => false,
            CrashMode::Random | CrashMode::Weighted(_) => self.rng.gen_bool(0.5),
        }
    }

    fn dir_prefix(&mut self, n: usize) -> usize {
        match self.mode {
            CrashMode::KeepAll => n,
            CrashMode::DropAll => 0,
            _ => self.rng.gen_range(0..=n),
        }
    }

    /// Writes the parts of a pending write that its fate lets reach the disk.
    fn land(&mut self, image: &mut Vec<u8>, offset: u64, data: &[u8], fate: &WriteFate) {
        let pieces = sector_pieces(offset, data.len() as u64);
        let n = pieces.len() as u64;
        for (i, &(sector, start, end)) in pieces.iter().enumerate() {
            let i = i as u64;
            let lands = match fate {
                WriteFate::Kept | WriteFate::Garbage { .. } => true,
                WriteFate::Dropped => false,
                WriteFate::TornPrefix { sectors_kept, .. } => i < *sectors_kept,
                WriteFate::TornSuffix { sectors_kept, .. } => i >= n - sectors_kept,
            };
            if !lands {
                continue;
            }
            let at = offset + start as u64;
            match fate {
                WriteFate::Garbage { sectors } if sectors.contains(&sector) => {
                    let mut junk = vec![0u8; end - start];
                    self.rng.fill(&mut junk[..]);
                    put(image, at, &junk);
                }
                _ => put(image, at, &data[start..end]),
            }
        }
    }
}

impl SimVfs {
    /// An empty file system with the directories "/" and "." and the default O_DIRECT
    /// alignment (512).
    pub fn new(seed: u64) -> Self {
        let mut disk = Disk::default();
        disk.dirs.insert(PathBuf::from("/"), Dir::default());
        disk.dirs.insert(PathBuf::from("."), Dir::default());
        SimVfs {
            state: Arc::new(Mutex::new(State::new(seed, 0, DEFAULT_DIRECT_ALIGN, disk))),
        }
    }

    /// Sets the O_DIRECT alignment (memory, offset and length) granted to files opened with
    /// `direct` from now on. Panics unless it is a power of two of at least 512.
    pub fn with_direct_align(self, align: u32) -> Self {
        assert!(
            align.is_power_of_two() && align >= 512,
            "O_DIRECT alignment {align} must be a power of two >= 512"
        );
        self.state.lock().direct_align = align;
        self
    }

    pub fn seed(&self) -> u64 {
        self.state.lock().seed
    }

    /// Successful mutating calls so far: writes, vectored writes, syncs, allocate, set_len,
    /// create (an open that created the file), delete, rename, sync_dir.
    pub fn op_count(&self) -> u64 {
        self.state.lock().op_count
    }

    /// Freezes the crash image right after the `n`-th mutating call (counted from this
    /// `SimVfs`'s creation): later calls still succeed and change the live view, but never
    /// reach the image that [`SimVfs::crash`] uses. `n == op_count()` freezes now. Panics
    /// if `n` is already past or a crash point was set before (a bug in the test).
    pub fn set_crash_point(&self, n: u64) {
        let mut st = self.state.lock();
        assert!(st.crash_point.is_none(), "crash point already set");
        assert!(
            n >= st.op_count,
            "crash point {n} is already past (op_count {})",
            st.op_count
        );
        st.crash_point = Some(n);
        if n == st.op_count {
            st.frozen = Some(st.disk.clone());
        }
    }

    /// [`SimVfs::set_crash_point`] `k` mutating calls from now, counted under the same lock
    /// that counts the calls: background threads (the page cleaner, the log writer) cannot
    /// slip a call in between reading `op_count` and setting the point. Returns the point.
    pub fn set_crash_point_after(&self, k: u64) -> u64 {
        let mut st = self.state.lock();
        assert!(st.crash_point.is_none(), "crash point already set");
        let n = st.op_count + k;
        st.crash_point = Some(n);
        if n == st.op_count {
            st.frozen = Some(st.disk.clone());
        }
        n
    }

    /// Whether the crash image is frozen (the crash point was reached).
    pub fn is_frozen(&self) -> bool {
        self.state.lock().frozen.is_some()
    }

    /// Arms a fault (see [`Fault`]). Panics if `nth` is 0.
    pub fn inject(&self, fault: Fault) {
        assert!(fault.nth >= 1, "Fault::nth is 1-based");
        let remaining = fault.nth;
        self.state
            .lock()
            .faults
            .push(ArmedFault { fault, remaining });
    }

    /// Disarms every fault not yet fired.
    pub fn clear_faults(&self) {
        self.state.lock().faults.clear();
    }

    /// Sets the disk's size in bytes (`None`: unbounded, the default). A write, allocate or
    /// set_len that would make the live files hold more than this fails with
    /// [`ErrorKind::NoSpace`] and changes nothing (invariant 6); overwrites inside a file never
    /// fail. Lowering it below what is used makes every growth fail until files shrink, are
    /// deleted or it is raised: a disk that filled up and later had space freed.
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.state.lock().capacity = bytes;
    }

    /// With `on`, a fallocate that the disk cannot hold grows the file to the disk's last
    /// byte before failing with ENOSPC, as ext4 does; without (the default), it changes
    /// nothing.
    pub fn set_partial_allocate(&self, on: bool) {
        self.state.lock().partial_allocate = on;
    }

    /// Bytes the live files hold (what [`SimVfs::set_capacity`] limits).
    pub fn used_bytes(&self) -> u64 {
        self.state.lock().used_bytes()
    }

    pub fn stats(&self) -> SimStats {
        self.state.lock().stats
    }

    pub fn reset_stats(&self) {
        self.state.lock().stats = SimStats::default();
    }

    /// Crashes with [`CrashMode::Random`].
    pub fn crash(&self) -> (SimVfs, CrashReport) {
        self.crash_with(CrashMode::Random)
    }

    /// Simulates a power failure: returns a new, independent `SimVfs` holding what the disk
    /// would hold on reboot, and the fate of everything that was pending. The image is the
    /// frozen one if a crash point was reached, else the current state. `self` is unchanged
    /// (its open files keep working on the old state). The result is a function of the seed,
    /// the sequence of calls and the number of earlier crashes in this lineage.
    pub fn crash_with(&self, mode: CrashMode) -> (SimVfs, CrashReport) {
        self.crash_with_policy(&|_| mode)
    }

    /// Like [`SimVfs::crash_with`], with the crash mode chosen per file (and per directory,
    /// for its pending entries) by `policy`. Crash tests use it to model devices with
    /// different guarantees, e.g. atomic page writes for data files but tearing for the log.
    pub fn crash_with_policy(&self, policy: &dyn Fn(&Path) -> CrashMode) -> (SimVfs, CrashReport) {
        self.check_invariants();
        let st = self.state.lock();
        let disk = st.frozen.as_ref().unwrap_or(&st.disk);
        let mut rng = StdRng::seed_from_u64(mix(st.seed, st.generation));
        let mut fates = Fates {
            rng: &mut rng,
            mode: CrashMode::KeepAll,
        };
        let mut report = CrashReport::default();

        // Directories: a prefix of each one's pending ops survives.
        let mut dirs = BTreeMap::new();
        for (path, dir) in &disk.dirs {
            fates.mode = policy(path);
            let kept = fates.dir_prefix(dir.pending.len());
            let mut entries = dir.durable.clone();
            for op in &dir.pending[..kept] {
                apply_dir_op(&mut entries, op);
            }
            if !dir.pending.is_empty() {
                report.dirs.push(DirReport {
                    dir: path.clone(),
                    pending: dir.pending.iter().map(|o| o.desc.clone()).collect(),
                    kept,
                });
            }
            dirs.insert(
                path.clone(),
                Dir {
                    durable: entries.clone(),
                    pending: Vec::new(),
                    live: entries,
                },
            );
        }

        // Files: only inodes some surviving entry names; report each under its first path.
        let mut names: BTreeMap<Ino, PathBuf> = BTreeMap::new();
        for (dpath, dir) in &dirs {
            for (name, ino) in &dir.live {
                names.entry(*ino).or_insert_with(|| dpath.join(name));
            }
        }
        let mut by_path: Vec<(&PathBuf, Ino)> = names.iter().map(|(i, p)| (p, *i)).collect();
        by_path.sort();
        let mut inodes = BTreeMap::new();
        for (path, ino) in by_path {
            let node = disk
                .inodes
                .get(&ino)
                .unwrap_or_else(|| panic!("invariant 4: inode {ino} missing at crash"));
            let mut image = node.durable.clone();
            fates.mode = policy(path);
            for op in &node.pending {
                match op {
                    PendingOp::Write {
                        offset,
                        data,
                        forced,
                    } => {
                        if *forced {
                            put(&mut image, *offset, data);
                            continue;
                        }
                        let fate = fates.write_fate(*offset, data.len() as u64);
                        fates.land(&mut image, *offset, data, &fate);
                        report.writes.push(WriteReport {
                            path: path.clone(),
                            offset: *offset,
                            len: data.len() as u64,
                            fate,
                        });
                    }
                    PendingOp::SetLen { len, cause } => {
                        let kept = fates.size_kept();
                        if kept {
                            image.resize(*len as usize, 0);
                        }
                        report.size_changes.push(SizeChangeReport {
                            path: path.clone(),
                            len: *len,
                            cause: *cause,
                            kept,
                        });
                    }
                }
            }
            inodes.insert(
                ino,
                Inode {
                    durable: image.clone(),
                    pending: Vec::new(),
                    live: image,
                },
            );
        }
        let new_disk = Disk { inodes, dirs };
        let next = SimVfs {
            state: Arc::new(Mutex::new(State::new(
                st.seed,
                st.generation + 1,
                st.direct_align,
                new_disk,
            ))),
        };
        drop(st);
        next.check_invariants();
        (next, report)
    }

    /// Asserts invariants 1, 3 and 4 over the whole state. Costs a replay of every pending
    /// op, so it runs at crashes and in tests, not on every call.
    pub fn check_invariants(&self) {
        let st = self.state.lock();
        for (ino, node) in &st.disk.inodes {
            let mut image = node.durable.clone();
            for op in &node.pending {
                apply_op(&mut image, op);
            }
            assert!(
                image == node.live,
                "invariant 1: inode {ino}: durable + pending != live"
            );
        }
        for (path, dir) in &st.disk.dirs {
            let mut entries = dir.durable.clone();
            for op in &dir.pending {
                apply_dir_op(&mut entries, op);
            }
            assert!(
                entries == dir.live,
                "invariant 3: directory {}: durable + pending != live",
                path.display()
            );
            for ino in dir.durable.values().chain(dir.live.values()) {
                assert!(
                    st.disk.inodes.contains_key(ino),
                    "invariant 4: {} names missing inode {ino}",
                    path.display()
                );
            }
        }
    }

    /// The live contents of the file at `path` (what a read sees), or `None` if it does not
    /// exist.
    pub fn live_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.state.lock();
        let ino = st.lookup_live(path)?;
        Some(st.inode(ino).live.clone())
    }

    /// What would survive a crash that drops everything pending ([`CrashMode::DropAll`]):
    /// `None` if the file's directory entry is not durable, else its durable data (including
    /// `dsync` writes).
    pub fn durable_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.state.lock();
        let ino = st.lookup_durable(path)?;
        let node = st.inode(ino);
        let mut image = node.durable.clone();
        for op in &node.pending {
            if let PendingOp::Write {
                offset,
                data,
                forced: true,
            } = op
            {
                put(&mut image, *offset, data);
            }
        }
        Some(image)
    }

    /// Every live file, as full paths, sorted.
    pub fn list_files(&self) -> Vec<PathBuf> {
        let st = self.state.lock();
        let mut out: Vec<PathBuf> = st
            .disk
            .dirs
            .iter()
            .flat_map(|(d, dir)| dir.live.keys().map(move |n| d.join(n)))
            .collect();
        out.sort();
        out
    }

    /// Every file whose directory entry is durable, as full paths, sorted.
    pub fn list_durable_files(&self) -> Vec<PathBuf> {
        let st = self.state.lock();
        let mut out: Vec<PathBuf> = st
            .disk
            .dirs
            .iter()
            .flat_map(|(d, dir)| dir.durable.keys().map(move |n| d.join(n)))
            .collect();
        out.sort();
        out
    }

    /// Pending (unsynced) data and size ops of the file at `path`, `dsync` writes included.
    pub fn pending_ops(&self, path: &Path) -> Option<usize> {
        let st = self.state.lock();
        let ino = st.lookup_live(path)?;
        Some(st.inode(ino).pending.len())
    }
}

impl Vfs for SimVfs {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn VfsFile>> {
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Open, "open", &[path])?;
        let (dir, name) = split(path);
        if name.is_empty() {
            return Err(IoError::new(
                "open",
                path,
                ErrorKind::InvalidInput,
                "not a file name",
            ));
        }
        let existing = st.dir_mut(&dir, "open")?.live.get(&name).copied();
        let ino = match (existing, opts.create) {
            (Some(_), Create::New) => {
                return Err(IoError::new(
                    "open",
                    path,
                    ErrorKind::AlreadyExists,
                    "file exists",
                ))
            }
            (Some(ino), _) => ino,
            (None, Create::Existing) => return Err(not_found("open", path)),
            (None, Create::IfMissing | Create::New) => {
                let ino = st.next_ino;
                st.next_ino += 1;
                st.disk.inodes.insert(ino, Inode::default());
                let d = st.dir_mut(&dir, "open")?;
                let op = DirOp {
                    desc: format!("create {}", name.to_string_lossy()),
                    changes: vec![(name.clone(), Some(ino))],
                };
                apply_dir_op(&mut d.live, &op);
                d.pending.push(op);
                st.stats.creates += 1;
                st.mutated();
                ino
            }
        };
        let direct = opts.direct.then(|| DirectIo {
            mem_align: st.direct_align,
            offset_align: st.direct_align,
        });
        Ok(Arc::new(SimFile {
            state: Arc::clone(&self.state),
            ino,
            path: path.to_path_buf(),
            direct,
            dsync: opts.dsync,
            read_only: opts.read_only,
        }))
    }

    fn delete(&self, path: &Path) -> Result<()> {
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Delete, "delete", &[path])?;
        let (dir, name) = split(path);
        let d = st.dir_mut(&dir, "delete")?;
        if !d.live.contains_key(&name) {
            return Err(not_found("delete", path));
        }
        let op = DirOp {
            desc: format!("delete {}", name.to_string_lossy()),
            changes: vec![(name, None)],
        };
        apply_dir_op(&mut d.live, &op);
        d.pending.push(op);
        st.stats.deletes += 1;
        st.mutated();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Rename, "rename", &[from, to])?;
        let (fdir, fname) = split(from);
        let (tdir, tname) = split(to);
        let Some(ino) = st.lookup_live(from) else {
            return Err(not_found("rename", from));
        };
        if !st.disk.dirs.contains_key(&tdir) || tname.is_empty() {
            return Err(not_found("rename", to));
        }
        if fdir == tdir {
            if fname != tname {
                let d = st.dir_mut(&fdir, "rename")?;
                // One atomic directory op: after a crash either name points at the file,
                // never both or neither (rename(2)'s promise within a directory).
                let op = DirOp {
                    desc: format!(
                        "rename {} -> {}",
                        fname.to_string_lossy(),
                        tname.to_string_lossy()
                    ),
                    changes: vec![(tname, Some(ino)), (fname, None)],
                };
                apply_dir_op(&mut d.live, &op);
                d.pending.push(op);
            }
        } else {
            // Across directories each side is pending in its own directory and survives
            // with that directory's prefix: a crash may leave both names or neither until
            // both directories are synced.
            let add = DirOp {
                desc: format!(
                    "rename-in {} <- {}",
                    tname.to_string_lossy(),
                    from.display()
                ),
                changes: vec![(tname, Some(ino))],
            };
            let d = st.dir_mut(&tdir, "rename")?;
            apply_dir_op(&mut d.live, &add);
            d.pending.push(add);
            let remove = DirOp {
                desc: format!("rename-out {} -> {}", fname.to_string_lossy(), to.display()),
                changes: vec![(fname, None)],
            };
            let d = st.dir_mut(&fdir, "rename")?;
            apply_dir_op(&mut d.live, &remove);
            d.pending.push(remove);
        }
        st.stats.renames += 1;
        st.mutated();
        Ok(())
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let st = self.state.lock();
        Ok(st.lookup_live(path).is_some() || st.disk.dirs.contains_key(path))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let st = self.state.lock();
        let d = st
            .disk
            .dirs
            .get(dir)
            .ok_or_else(|| not_found("readdir", dir))?;
        // BTreeMap order is sorted order.
        Ok(d.live.keys().map(PathBuf::from).collect())
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let mut st = self.state.lock();
        for anc in dir.ancestors() {
            if anc.as_os_str().is_empty() {
                continue;
            }
            if st.lookup_live(anc).is_some() {
                return Err(IoError::new(
                    "mkdir",
                    anc,
                    ErrorKind::AlreadyExists,
                    "a file has this name",
                ));
            }
            st.disk.dirs.entry(anc.to_path_buf()).or_default();
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let mut st = self.state.lock();
        st.check_fault(FaultOp::SyncDir, "fsync dir", &[dir])?;
        let d = st.dir_mut(dir, "fsync dir")?;
        d.durable = d.live.clone();
        d.pending.clear();
        st.stats.dir_syncs += 1;
        st.mutated();
        Ok(())
    }
}

/// An open simulated file. Like a Unix fd it names an inode, not a path: it keeps working
/// after the file is renamed or deleted.
pub struct SimFile {
    state: Arc<Mutex<State>>,
    ino: Ino,
    path: PathBuf,
    direct: Option<DirectIo>,
    dsync: bool,
    read_only: bool,
}

impl fmt::Debug for SimFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimFile")
            .field("path", &self.path)
            .field("ino", &self.ino)
            .field("direct", &self.direct)
            .field("dsync", &self.dsync)
            .finish()
    }
}

impl SimFile {
    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.read_only {
            return Err(IoError::new(
                op,
                &self.path,
                ErrorKind::InvalidInput,
                "file opened read-only",
            ));
        }
        Ok(())
    }

    fn check_direct(&self, op: &'static str, offset: u64, segs: &[(usize, usize)]) -> Result<()> {
        match self.direct {
            Some(d) => d.check(op, &self.path, offset, segs),
            None => Ok(()),
        }
    }

    fn write(&self, bufs: &[&[u8]], offset: u64) -> Result<()> {
        self.check_writable("write")?;
        let segs: Vec<(usize, usize)> = bufs
            .iter()
            .map(|b| (b.as_ptr() as usize, b.len()))
            .collect();
        self.check_direct("write", offset, &segs)?;
        let data: Vec<u8> = bufs.concat();
        let len = data.len() as u64;
        if offset
            .checked_add(len)
            .filter(|e| usize::try_from(*e).is_ok())
            .is_none()
        {
            return Err(IoError::new(
                "write",
                &self.path,
                ErrorKind::InvalidInput,
                "range too large",
            ));
        }
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Write, "write", &[&self.path])?;
        st.check_room(self.ino, offset + len, "write", &self.path)?;
        let node = st.inode_mut(self.ino);
        if !data.is_empty() {
            put(&mut node.live, offset, &data);
            node.pending.push(PendingOp::Write {
                offset,
                data,
                forced: self.dsync,
            });
        }
        st.stats.writes += 1;
        st.stats.bytes_written += len;
        st.mutated();
        Ok(())
    }
}

impl VfsFile for SimFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.check_direct("read", offset, &[(buf.as_ptr() as usize, buf.len())])?;
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Read, "read", &[&self.path])?;
        let live = &st.inode(self.ino).live;
        let end = offset.checked_add(buf.len() as u64);
        match end {
            Some(end) if end <= live.len() as u64 => {
                buf.copy_from_slice(&live[offset as usize..end as usize]);
            }
            _ => {
                return Err(IoError::new(
                    "read",
                    &self.path,
                    ErrorKind::UnexpectedEof,
                    format!(
                        "{} bytes at offset {offset} past end of file ({} bytes)",
                        buf.len(),
                        live.len()
                    ),
                ))
            }
        }
        st.stats.reads += 1;
        st.stats.bytes_read += buf.len() as u64;
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        self.write(&[buf], offset)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> Result<()> {
        self.write(bufs, offset)
    }

    fn sync_data(&self) -> Result<()> {
        let mut st = self.state.lock();
        st.check_fault(FaultOp::Sync, "fdatasync", &[&self.path])?;
        let node = st.inode_mut(self.ino);
        debug_assert!(
            {
                let mut image = node.durable.clone();
                for op in &node.pending {
                    apply_op(&mut image, op);
                }
                image == node.live
            },
            "invariant 1 before sync"
        );
        node.durable = node.live.clone();
        node.pending.clear();
        st.stats.syncs += 1;
        st.mutated();
        Ok(())
    }

    fn allocate(&self, offset: u64, len: u64) -> Result<()> {
        self.check_writable("fallocate")?;
        let end = offset
            .checked_add(len)
            .filter(|e| usize::try_from(*e).is_ok())
            .ok_or_else(|| {
                IoError::new(
                    "fallocate",
                    &self.path,
                    ErrorKind::InvalidInput,
                    "range too large",
                )
            })?;
        {
            let mut st = self.state.lock();
            st.check_fault(FaultOp::Allocate, "fallocate", &[&self.path])?;
            if let Err(e) = st.check_room(self.ino, end, "fallocate", &self.path) {
                if st.partial_allocate {
                    // ext4 keeps the blocks it allocated before the disk filled, and the
                    // size that covers them, then reports ENOSPC.
                    let room = st.capacity.unwrap_or(0).saturating_sub(st.used_bytes());
                    let node = st.inode_mut(self.ino);
                    let got = node.live.len() as u64 + room;
                    if room > 0 && got < end {
                        node.live.resize(got as usize, 0);
                        node.pending.push(PendingOp::SetLen {
                            len: got,
                            cause: SizeCause::Allocate,
                        });
                        st.mutated();
                    }
                }
                return Err(e);
            }
            let node = st.inode_mut(self.ino);
            // Never shrinks; a range already inside the file changes nothing, but the call
            // still counts as an op.
            if end > node.live.len() as u64 {
                node.live.resize(end as usize, 0);
                node.pending.push(PendingOp::SetLen {
                    len: end,
                    cause: SizeCause::Allocate,
                });
            }
            st.stats.allocates += 1;
            st.mutated();
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.check_writable("ftruncate")?;
        if usize::try_from(len).is_err() {
            return Err(IoError::new(
                "ftruncate",
                &self.path,
                ErrorKind::InvalidInput,
                "length too large",
            ));
        }
        {
            let mut st = self.state.lock();
            st.check_fault(FaultOp::SetLen, "ftruncate", &[&self.path])?;
            st.check_room(self.ino, len, "ftruncate", &self.path)?;
            let node = st.inode_mut(self.ino);
            node.live.resize(len as usize, 0);
            node.pending.push(PendingOp::SetLen {
                len,
                cause: SizeCause::SetLen,
            });
            st.stats.set_lens += 1;
            st.mutated();
        }
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        let st = self.state.lock();
        Ok(st.inode(self.ino).live.len() as u64)
    }

    fn direct_io(&self) -> Option<DirectIo> {
        self.direct
    }

    /// The simulator models cached and O_DIRECT writes alike (neither is durable before a
    /// sync), so a file opened O_DIRECT switches by saying so.
    fn set_buffered(&self, _on: bool) -> Result<bool> {
        Ok(self.direct.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_split_at_absolute_sector_boundaries() {
        assert_eq!(sector_pieces(0, 1024), vec![(0, 0, 512), (1, 512, 1024)]);
        assert_eq!(
            sector_pieces(700, 1000),
            vec![(1, 0, 324), (2, 324, 836), (3, 836, 1000)]
        );
        assert_eq!(sector_pieces(5, 3), vec![(0, 0, 3)]);
        assert!(sector_pieces(5, 0).is_empty());
    }

    #[test]
    fn bare_names_live_in_dot() {
        assert_eq!(
            split(Path::new("a")),
            (PathBuf::from("."), OsString::from("a"))
        );
        assert_eq!(
            split(Path::new("/d/a")),
            (PathBuf::from("/d"), OsString::from("a"))
        );
    }

    #[test]
    fn weighted_mode_with_only_keep_keeps_everything() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut fates = Fates {
            rng: &mut rng,
            mode: CrashMode::Weighted(FateWeights {
                keep: 1,
                drop: 0,
                tear: 0,
                garbage: 0,
            }),
        };
        for _ in 0..100 {
            assert_eq!(fates.write_fate(0, 4096), WriteFate::Kept);
        }
    }

    #[test]
    fn crash_seeds_differ_per_generation() {
        assert_ne!(mix(1, 0), mix(1, 1));
        assert_ne!(mix(1, 0), mix(2, 0));
    }

    #[test]
    #[should_panic(expected = "already past")]
    fn crash_point_in_the_past_is_a_test_bug() {
        let vfs = SimVfs::new(0);
        vfs.open(Path::new("/a"), OpenOptions::create_new())
            .expect("create");
        vfs.set_crash_point(0);
    }
}
