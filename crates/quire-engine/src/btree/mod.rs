//! # B+trees over memcomparable byte keys
//!
//! A [`BTree`] maps unique byte keys, ordered by memcmp, to byte values. The row layer
//! encodes typed keys so that memcmp order is the SQL order, and moves large values off-page;
//! this layer only sees bytes. Pages are slotted ([`node`], docs/btree.md): records in a heap
//! growing up, a sorted slot directory growing down, binary search.
//!
//! ```text
//!                        root (fixed page: never moves)             level 2
//!                  /                 |                 \
//!            [ , k1 ) <-------> [k1, k2) <-------> [k2, ... )          level 1   prev/next links
//!           /    |   \            ...
//!        leaf <-> leaf <-> leaf <-> ...                                level 0   (records)
//! ```
//!
//! Invariants (checked by [`BTree::verify`]):
//! 1. Keys are strictly ascending within a page and across the pages of a level.
//! 2. Every key in the subtree of an internal record `(k_i, child_i)` lies in
//!    `[k_i, k_{i+1})`; the first record's key of an internal node is its lower fence and is
//!    never compared (routing falls back to the first child).
//! 3. The pages of a level form a doubly linked list (page header prev/next) in key order.
//! 4. A child is exactly one level below its parent; all leaves are at level 0.
//! 5. No page but the root is empty. The root page number never changes: a root split moves
//!    the root's records into two new children, and a root with one child absorbs it.
//! 6. Every change is a redo-logged mini-transaction, and a structure change (split, merge,
//!    redistribution, root raise or collapse) is one mtr, so recovery never sees half of one.
//!
//! 7. A structure change changes the root only while holding it X. It holds the root SX
//!    otherwise, so readers and leaf-only writers pass the root meanwhile.
//! 8. A structure change either commits whole or changes nothing: its mtr keeps before-images
//!    and rolls back on any error (a log frame too small for it, a failed allocation, a
//!    root it found it must change while holding it SX).
//!
//! Concurrency (docs/btree.md, "Latching"): readers descend with S latch coupling; a writer
//! first descends optimistically (S on internal pages, X on the leaf) and changes the leaf if
//! that needs no structure change, with no tree-wide latch. Otherwise it starts a new mtr and
//! descends pessimistically, latching the root first, SX (the root's SX latch serializes
//! structure changes of one tree, as InnoDB's index SX latch does, and lets readers pass) or X
//! when the change may reach the root, and then, level by level, X on the path node and its
//! left and right neighbours, left to right. So every latch is taken top-down and left to
//! right at a level (docs/mtr.md rule 1), and allocation metadata after all tree pages (rule 3).

pub mod blob;
pub mod node;
mod verify;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::buffer::{BufferError, BufferPool, PageRef};
use crate::mtr::{Mtr, MtrError, Slot};
use crate::page::{self, Header, Lsn, PageId, PageNo, PageType, SpaceId};
use node::{MtrPage, OwnedRec};

pub use verify::TreeStats;

/// Why the allocator could not allocate or free a page (its own error type, boxed: the
/// allocator's owner, the engine, sits above this layer).
pub type AllocFailure = Box<dyn std::error::Error + Send + Sync>;
pub type AllocResult<T> = std::result::Result<T, AllocFailure>;

#[derive(Debug, thiserror::Error)]
pub enum BTreeError {
    #[error("duplicate key")]
    DuplicateKey,
    #[error("key not found")]
    NotFound,
    #[error(
        "record too large: key {key_len} bytes, value {value_len} bytes; {page_size}-byte \
         pages take keys up to {max_key} bytes and records up to {max_record} bytes \
         (larger values go off-page)"
    )]
    TooLarge {
        key_len: usize,
        value_len: usize,
        page_size: usize,
        max_key: usize,
        max_record: usize,
    },
    #[error("index page {page}: {what}")]
    Corrupt { page: PageId, what: String },
    #[error("BLOB page {page}: {what}")]
    CorruptBlob { page: PageId, what: String },
    #[error("b-tree invariant broken: {0}")]
    Invariant(&'static str),
    #[error(transparent)]
    Mtr(#[from] MtrError),
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error("page allocation failed: {0}")]
    Alloc(AllocFailure),
    #[error(
        "one BLOB page needs {need} bytes of redo but an mtr holds at most {max}: \
         raise innodb_log_buffer_size"
    )]
    LogTooSmall { need: u64, max: u64 },
}

pub type Result<T> = std::result::Result<T, BTreeError>;

impl BTreeError {
    /// A page could not be allocated because its space could not grow: the disk is full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            BTreeError::Alloc(f) => {
                f.downcast_ref::<crate::EngineError>()
                    .is_some_and(crate::EngineError::is_disk_full)
                    || f.downcast_ref::<crate::alloc::AllocError>()
                        .is_some_and(crate::alloc::AllocError::is_disk_full)
            }
            BTreeError::Mtr(e) => e.is_disk_full(),
            BTreeError::Buffer(e) => e.is_disk_full(),
            _ => false,
        }
    }
}

/// What a tree needs from the layers around it: the buffer pool, mini-transactions and page
/// allocation. The engine implements it; this layer cannot use the engine (layering).
pub trait BTreeStore {
    fn pool(&self) -> &BufferPool;
    /// A new mini-transaction (after waiting for log space with no latch held).
    fn mtr(&self) -> Mtr<'_>;
    /// A new mini-transaction that may write `redo_bytes` more than an ordinary one (BLOB
    /// pages): it waits for that much more log space first.
    fn mtr_with_room(&self, redo_bytes: u64) -> Mtr<'_>;
    /// The most redo one mtr may hold (`Log::max_payload`).
    fn mtr_redo_max(&self) -> u64;
    fn alloc_page(&self, mtr: &mut Mtr<'_>, space: SpaceId) -> AllocResult<PageNo>;
    fn free_page(&self, mtr: &mut Mtr<'_>, page: PageId) -> AllocResult<()>;
    /// Where structure changes are counted.
    fn btree_counters(&self) -> &BTreeCounters;
}

/// Structure changes, by how they held the root (status counters `quire_btree_smo_*`).
#[derive(Debug, Default)]
pub struct BTreeCounters {
    /// Done holding the root SX: readers passed the root meanwhile.
    pub root_sx: AtomicU64,
    /// Done holding the root X (the change reached the root, or the root was a leaf).
    pub root_x: AtomicU64,
    /// Attempts that held the root SX, found they must change it, and started over with X.
    pub retries: AtomicU64,
    /// Structure changes that failed and were rolled back whole (invariant 8).
    pub rolled_back: AtomicU64,
}

fn count(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Work a caller does inside the mtr of one leaf change, so that it commits with the change
/// (docs/btree.md, "Operations"): the table layer writes the head of a BLOB chain in
/// [`LeafWork::value`] and frees replaced chains in [`LeafWork::after`]. Both run once every
/// tree page the change needs is X-latched (and split pages reserved), so the work may only
/// latch what comes later in the order: allocation metadata and pages it creates.
pub trait LeafWork {
    /// Redo bytes the work may add; the mtr waits for that much log room before latching.
    fn redo_bytes(&self) -> u64 {
        0
    }
    /// Runs before the record is written; returns its value, of the length announced to
    /// [`BTree::insert_with`] or [`BTree::update_with`]. Not called by a delete.
    fn value(&mut self, mtr: &mut Mtr<'_>) -> Result<Cow<'_, [u8]>>;
    /// Runs after the record is written or removed.
    fn after(&mut self, _mtr: &mut Mtr<'_>) -> Result<()> {
        Ok(())
    }
    /// The structure change this work ran in was rolled back (invariant 8): every page
    /// change the work made in its mtr is undone, so it may be asked to run again.
    fn rolled_back(&mut self) {}
}

/// The work of a plain insert or update: the value is known, nothing else to do.
struct Plain<'v>(&'v [u8]);

impl LeafWork for Plain<'_> {
    fn value(&mut self, _mtr: &mut Mtr<'_>) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(self.0))
    }
}

/// The work of a delete that has none beside removing the record (a secondary entry).
pub struct NoWork;

impl LeafWork for NoWork {
    fn value(&mut self, _mtr: &mut Mtr<'_>) -> Result<Cow<'_, [u8]>> {
        Err(BTreeError::Invariant("a delete asked for a value"))
    }
}

/// Calls `work.value` and checks it kept its announced length: the fit was decided on it.
fn produce<'w>(
    work: &'w mut dyn LeafWork,
    mtr: &mut Mtr<'_>,
    value_len: usize,
) -> Result<Cow<'w, [u8]>> {
    let v = work.value(mtr)?;
    if v.len() != value_len {
        return Err(BTreeError::Invariant(
            "leaf work produced a value of another length than announced",
        ));
    }
    Ok(v)
}

/// `flags` with the delete mark set as `mark` says (`None`: unchanged).
fn marked(flags: u8, mark: Option<bool>) -> u8 {
    match mark {
        None => flags,
        Some(true) => flags | node::FLAG_DELETED,
        Some(false) => flags & !node::FLAG_DELETED,
    }
}

/// Sets the delete mark of record `i` of `leaf` as `mark` says, logging only a change.
fn set_mark(mtr: &mut Mtr<'_>, leaf: Slot, i: usize, mark: Option<bool>) -> Result<()> {
    let old = node::rec(mtr.page(leaf), i).flags;
    let new = marked(old, mark);
    if new != old {
        node::set_flags(&mut mp(mtr, leaf), i, new)?;
    }
    Ok(())
}

/// What [`BTree::update_in_place_if`] asks about a record, `(value, delete_marked)`: its
/// new value, of the same length, or `None` to leave it alone.
pub type Patch<'a> = dyn FnMut(&[u8], bool) -> Option<Vec<u8>> + 'a;

/// A record found by a lookup or a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
    /// Delete-marked: logically deleted, kept for older read views until purge removes it.
    pub delete_marked: bool,
}

/// Scan direction of a [`Cursor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// A B+tree, named by its space and fixed root page. The handle is plain data: any number
/// of threads may use copies of it at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BTree {
    space: SpaceId,
    root: PageNo,
    index_id: u64,
}

/// What a pessimistic attempt did.
enum Smo {
    Done,
    /// A conditional change found its condition false under the latches: nothing changed.
    Nothing,
    /// The change must touch the root, which the attempt holds only SX; nothing was changed.
    NeedRootX,
}

/// One level of a pessimistic descent: the X-latched node (the root may be SX), its
/// X-latched neighbours at the same level, and the slot of its record in the parent.
#[derive(Debug, Clone, Copy)]
struct Step {
    slot: Slot,
    left: Option<Slot>,
    right: Option<Slot>,
    idx: usize,
}

/// Where a descent goes.
#[derive(Clone, Copy)]
enum Seek<'k> {
    /// The leaf that holds (or would hold) the key.
    At(&'k [u8]),
    /// The leftmost leaf.
    First,
    /// The leaf holding the largest key below (or, if inclusive, at) the bound; the
    /// rightmost leaf for `None`.
    Below(Option<&'k [u8]>, bool),
}

fn route(b: &[u8], seek: Seek<'_>) -> usize {
    match seek {
        Seek::At(k) => node::child_index(b, k),
        Seek::First => 0,
        Seek::Below(None, _) => node::n_recs(b) - 1,
        Seek::Below(Some(k), inclusive) => node::child_index_below(b, k, inclusive),
    }
}

/// What an insertion at a leaf may do to the tree ([`BTree::split_plan`]).
struct SplitPlan {
    /// Pages to allocate before the first change.
    pages: usize,
    /// The root takes a record or splits.
    root_changes: bool,
}

/// A rough upper bound on the redo of one structure change of a tree `height` levels deep:
/// at each level a split writes the new page and perhaps rewrites the old one, and a merge
/// rewrites a sibling and perhaps reorganizes the parent; a root raise adds a level. Used
/// to wait for that much log room before latching; a change larger than the largest log
/// frame is refused and rolled back (invariant 8), never half-done.
pub fn smo_redo_estimate(page_size: usize, height: usize) -> u64 {
    ((height + 2) * (2 * page_size + 1024)) as u64
}

/// More than the redo of the smallest structure change, the split of a root that is a leaf
/// (two new pages sharing its records, the root rewritten, two allocations). A log whose
/// frames are smaller could not let a table grow past one page, so `Engine::open` refuses it.
pub fn root_split_redo_max(page_size: usize) -> u64 {
    (3 * page_size + 1024) as u64
}

/// A leaf whose used bytes fall below this merges with (or borrows from) a sibling.
pub fn merge_threshold(page_size: usize) -> usize {
    node::capacity(page_size) / 4
}

/// The shortest key that separates two adjacent leaves: a prefix of `right_first` that is
/// still above `left_last` (suffix truncation keeps internal nodes small). Internal levels
/// pass their first key up unchanged.
fn separator(left_last: &[u8], right_first: &[u8], leaf: bool) -> Vec<u8> {
    debug_assert!(left_last < right_first);
    if leaf {
        for l in 1..right_first.len() {
            if &right_first[..l] > left_last {
                return right_first[..l].to_vec();
            }
        }
    }
    right_first.to_vec()
}

/// Where to cut `all` (a node's records plus the one being inserted at `pos`) in two. An
/// insert past the end of the rightmost page (ascending keys) leaves the old page full and
/// starts the new one with the new record alone; otherwise the halves get equal bytes.
fn split_point(all: &[OwnedRec], pos: usize, rightmost: bool) -> usize {
    let n = all.len();
    debug_assert!(n >= 2);
    if rightmost && pos == n - 1 {
        return n - 1;
    }
    let total: usize = all.iter().map(|r| r.size() + node::SLOT_SIZE).sum();
    let mut acc = 0;
    for (i, r) in all.iter().enumerate() {
        acc += r.size() + node::SLOT_SIZE;
        if acc * 2 >= total {
            // Take record i on the left if that leaves the halves closer to even.
            let m = if acc * 2 - total <= total - (acc - r.size() - node::SLOT_SIZE) * 2 {
                i + 1
            } else {
                i
            };
            return m.clamp(1, n - 1);
        }
    }
    n - 1
}

fn bytes_of(recs: &[OwnedRec]) -> usize {
    recs.iter().map(|r| r.size() + node::SLOT_SIZE).sum()
}

fn mp<'m, 'a>(mtr: &'m mut Mtr<'a>, slot: Slot) -> MtrPage<'m, 'a> {
    MtrPage { mtr, slot }
}

fn commit(mtr: Mtr<'_>) -> Result<Lsn> {
    Ok(mtr.commit()?.unwrap_or(Lsn::ZERO))
}

impl BTree {
    pub fn space(&self) -> SpaceId {
        self.space
    }
    pub fn root(&self) -> PageNo {
        self.root
    }
    pub fn index_id(&self) -> u64 {
        self.index_id
    }
    fn root_id(&self) -> PageId {
        PageId::new(self.space, self.root)
    }
    fn pid(&self, p: PageNo) -> PageId {
        PageId::new(self.space, p)
    }

    /// Creates an empty tree in `space`: allocates and initializes its root, a leaf. Returns
    /// the tree and the commit LSN (wait on it for durability).
    pub fn create<S: BTreeStore + ?Sized>(
        s: &S,
        space: SpaceId,
        index_id: u64,
    ) -> Result<(BTree, Lsn)> {
        let mut mtr = s.mtr();
        let root = s.alloc_page(&mut mtr, space).map_err(BTreeError::Alloc)?;
        let slot = mtr.create_page(PageId::new(space, root), PageType::Index)?;
        node::init(&mut mp(&mut mtr, slot), 0, index_id)?;
        let lsn = commit(mtr)?;
        Ok((
            BTree {
                space,
                root,
                index_id,
            },
            lsn,
        ))
    }

    /// Opens the tree rooted at `root` (as recorded by the catalog).
    pub fn open<S: BTreeStore + ?Sized>(s: &S, space: SpaceId, root: PageNo) -> Result<BTree> {
        let id = PageId::new(space, root);
        let g = s.pool().get_shared(id)?;
        if Header::new(&g).page_type() != Some(PageType::Index) {
            return Err(BTreeError::Corrupt {
                page: id,
                what: "the root is not an index page".into(),
            });
        }
        Ok(BTree {
            space,
            root,
            index_id: node::index_id(&g),
        })
    }

    /// Checks that a latched page belongs to this tree at the expected level.
    fn check_page(&self, b: &[u8], id: PageId, level: Option<u16>) -> Result<()> {
        let what = if Header::new(b).page_type() != Some(PageType::Index) {
            "not an index page"
        } else if node::index_id(b) != self.index_id {
            "belongs to another index"
        } else if level.is_some_and(|l| l != node::level(b)) {
            "at the wrong level"
        } else {
            return Ok(());
        };
        Err(BTreeError::Corrupt {
            page: id,
            what: what.into(),
        })
    }

    fn check_size(&self, page_size: usize, key: &[u8], value_len: usize) -> Result<()> {
        let (max_key, max_record) = (node::max_key(page_size), node::max_record(page_size));
        if key.len() > max_key || node::rec_size(key.len(), value_len) > max_record {
            return Err(BTreeError::TooLarge {
                key_len: key.len(),
                value_len,
                page_size,
                max_key,
                max_record,
            });
        }
        Ok(())
    }

    /// Descends with S latch coupling: the child is latched before the parent is released,
    /// so no structure change can slip in between. Returns the leaf and, if asked, its lower
    /// fence (the deepest separator the path branched right of).
    fn descend_s<'p>(
        &self,
        pool: &'p BufferPool,
        seek: Seek<'_>,
    ) -> Result<(PageRef<'p>, Option<Vec<u8>>)> {
        let mut id = self.root_id();
        let mut g = pool.get_shared(id)?;
        self.check_page(&g, id, None)?;
        let mut fence = None;
        loop {
            let lvl = node::level(&g);
            if lvl == 0 {
                return Ok((g, fence));
            }
            if node::n_recs(&g) == 0 {
                return Err(self.corrupt(id, "empty internal node"));
            }
            let i = route(&g, seek);
            let r = node::rec(&g, i);
            if i > 0 && matches!(seek, Seek::Below(..)) {
                fence = Some(r.key.to_vec());
            }
            let child = self.pid(r.child());
            let cg = pool.get_shared(child)?;
            self.check_page(&cg, child, Some(lvl - 1))?;
            g = cg;
            id = child;
        }
    }

    fn corrupt(&self, page: PageId, what: &str) -> BTreeError {
        BTreeError::Corrupt {
            page,
            what: what.into(),
        }
    }

    /// The optimistic descent of a writer: S coupling on internal pages, the leaf X-latched
    /// in `mtr`. Returns the leaf's slot, whether it is the root, and the tree's height as
    /// seen at the root. If the root was a leaf when peeked but has grown since, the slot
    /// holds the X-latched root (an internal node): the caller goes pessimistic.
    fn optimistic_leaf<'a>(
        &self,
        pool: &'a BufferPool,
        mtr: &mut Mtr<'a>,
        key: &[u8],
    ) -> Result<(Slot, bool, usize)> {
        let root = self.root_id();
        let mut g = pool.get_shared(root)?;
        self.check_page(&g, root, None)?;
        let height = usize::from(node::level(&g)) + 1;
        if height == 1 {
            drop(g);
            let slot = mtr.x_latch(root)?;
            return Ok((slot, true, height));
        }
        let mut id = root;
        loop {
            let lvl = node::level(&g);
            if node::n_recs(&g) == 0 {
                return Err(self.corrupt(id, "empty internal node"));
            }
            let child = self.pid(node::rec(&g, node::child_index(&g, key)).child());
            if lvl == 1 {
                let slot = mtr.x_latch(child)?;
                self.check_page(mtr.page(slot), child, Some(0))?;
                return Ok((slot, false, height));
            }
            let cg = pool.get_shared(child)?;
            self.check_page(&cg, child, Some(lvl - 1))?;
            g = cg;
            id = child;
        }
    }

    /// The pessimistic descent: the root first (X if `root_x`, else SX), then at each level
    /// the left neighbour, the path node and the right neighbour, X, left to right.
    /// Neighbours come from the parent, or from the parent's own neighbours at the edges, so
    /// nothing is latched out of order.
    fn descend_x(&self, mtr: &mut Mtr<'_>, key: &[u8], root_x: bool) -> Result<Vec<Step>> {
        let root = if root_x {
            mtr.x_latch(self.root_id())?
        } else {
            mtr.sx_latch(self.root_id())?
        };
        self.check_page(mtr.page(root), self.root_id(), None)?;
        let mut path = vec![Step {
            slot: root,
            left: None,
            right: None,
            idx: 0,
        }];
        loop {
            let Some(&st) = path.last() else {
                return Err(BTreeError::Invariant("empty path"));
            };
            let b = mtr.page(st.slot);
            let lvl = node::level(b);
            if lvl == 0 {
                return Ok(path);
            }
            let n = node::n_recs(b);
            if n == 0 {
                return Err(self.corrupt(mtr.page_id(st.slot), "empty internal node"));
            }
            let i = node::child_index(b, key);
            let child = node::rec(b, i).child();
            let left = if i > 0 {
                Some(node::rec(b, i - 1).child())
            } else {
                st.left.map(|l| self.edge_child(mtr, l, true)).transpose()?
            };
            let right = if i + 1 < n {
                Some(node::rec(b, i + 1).child())
            } else {
                st.right
                    .map(|r| self.edge_child(mtr, r, false))
                    .transpose()?
            };
            let mut latch = |p: PageNo| -> Result<Slot> {
                let s = mtr.x_latch(self.pid(p))?;
                self.check_page(mtr.page(s), self.pid(p), Some(lvl - 1))?;
                Ok(s)
            };
            let ls = left.map(&mut latch).transpose()?;
            let cs = latch(child)?;
            let rs = right.map(&mut latch).transpose()?;
            let h = Header::new(mtr.page(cs));
            if h.prev() != left.unwrap_or(PageNo::NULL) || h.next() != right.unwrap_or(PageNo::NULL)
            {
                return Err(self.corrupt(
                    self.pid(child),
                    "sibling links disagree with the parent level",
                ));
            }
            path.push(Step {
                slot: cs,
                left: ls,
                right: rs,
                idx: i,
            });
        }
    }

    /// The last (or first) child of an internal node.
    fn edge_child(&self, mtr: &Mtr<'_>, slot: Slot, last: bool) -> Result<PageNo> {
        let b = mtr.page(slot);
        let n = node::n_recs(b);
        if n == 0 {
            return Err(self.corrupt(mtr.page_id(slot), "empty internal node"));
        }
        Ok(node::rec(b, if last { n - 1 } else { 0 }).child())
    }

    /// Runs a leaf change: `optimistic(mtr, leaf, is_root)` on the optimistically latched
    /// leaf, returning false if the change needs a structure change; then, if needed,
    /// `pessimistic(mtr, path)` in a fresh, rollback-enabled mtr holding the path X and the
    /// root SX, or X when the change may reach the root (invariants 7 and 8).
    /// `room`: redo bytes beyond an ordinary change (see [`LeafWork::redo_bytes`]); `work`
    /// is told when an attempt it ran in was rolled back.
    fn modify<S, F, G>(
        &self,
        s: &S,
        key: &[u8],
        room: u64,
        work: &RefCell<&mut dyn LeafWork>,
        optimistic: F,
        mut pessimistic: G,
    ) -> Result<Lsn>
    where
        S: BTreeStore + ?Sized,
        F: FnOnce(&mut Mtr<'_>, Slot, bool) -> Result<bool>,
        G: FnMut(&mut Mtr<'_>, &mut Vec<Step>) -> Result<Smo>,
    {
        let mut mtr = if room == 0 {
            s.mtr()
        } else {
            s.mtr_with_room(room)
        };
        let (slot, is_root, mut height) = self.optimistic_leaf(s.pool(), &mut mtr, key)?;
        if node::level(mtr.page(slot)) == 0 {
            if optimistic(&mut mtr, slot, is_root)? {
                return commit(mtr);
            }
            if !mtr.is_empty() {
                return Err(BTreeError::Invariant(
                    "an optimistic attempt changed a page and gave up",
                ));
            }
        }
        // Holding a leaf, the root may not be latched (top-down order): start over. A root
        // that is (or was) a leaf is changed by any structure change: take it X at once.
        drop(mtr);
        let mut root_x = is_root;
        loop {
            // Wait for the log room a structure change of this height may take, before
            // latching anything (docs/mtr.md, "Log space"). Never for more than one frame:
            // no mtr can write more, and a wait past the log's capacity would never end.
            let smo = smo_redo_estimate(Self::page_size(s), height);
            let mut mtr = s.mtr_with_room((room + smo).min(s.mtr_redo_max()));
            mtr.enable_rollback();
            let mut path = self.descend_x(&mut mtr, key, root_x)?;
            height = path.len();
            let attempt = if path.len() == 1 && !root_x {
                // The tree shrank to a lone leaf root since the optimistic descent.
                Ok(Smo::NeedRootX)
            } else {
                pessimistic(&mut mtr, &mut path)
            };
            let counters = s.btree_counters();
            match attempt {
                Ok(Smo::Done) => {
                    count(if root_x {
                        &counters.root_x
                    } else {
                        &counters.root_sx
                    });
                    return commit(mtr);
                }
                Ok(Smo::Nothing) => {
                    debug_assert!(mtr.is_empty(), "a change that said it changed nothing");
                    return commit(mtr);
                }
                Ok(Smo::NeedRootX) => {
                    debug_assert!(!root_x, "asked for the root X while holding it X");
                    debug_assert!(mtr.is_empty(), "a change before asking for the root X");
                    mtr.rollback()?;
                    count(&counters.retries);
                    root_x = true;
                }
                Err(BTreeError::Mtr(MtrError::Misuse { page, .. }))
                    if !root_x && page == self.root_id() =>
                {
                    // The change reached the root though the prediction said it would not
                    // (a bug, but not a corruption: undo it all and redo it with the root X).
                    debug_assert!(false, "structure change reached a root held SX");
                    mtr.rollback()?;
                    work.borrow_mut().rolled_back();
                    count(&counters.retries);
                    root_x = true;
                }
                Err(e) => {
                    // A key found present or missing on this path changed nothing; only an
                    // attempt with changes to undo counts as a rolled-back structure change.
                    if !mtr.is_empty() {
                        count(&counters.rolled_back);
                    }
                    mtr.rollback()?;
                    work.borrow_mut().rolled_back();
                    return Err(e);
                }
            }
        }
    }

    fn page_size<S: BTreeStore + ?Sized>(s: &S) -> usize {
        s.pool().config().page_size.bytes()
    }

    // ------------------------------------------------------------------ reads

    /// Point lookup. Delete-marked records are returned, flagged: visibility is the caller's.
    pub fn get<S: BTreeStore + ?Sized>(&self, s: &S, key: &[u8]) -> Result<Option<Entry>> {
        let (leaf, _) = self.descend_s(s.pool(), Seek::At(key))?;
        Ok(node::search(&leaf, key).ok().map(|i| {
            let r = node::rec(&leaf, i);
            Entry {
                key: key.to_vec(),
                value: r.value.to_vec(),
                delete_marked: r.deleted(),
            }
        }))
    }

    /// A cursor over the keys in `(lower, upper)`, in either direction.
    pub fn scan<'t, S: BTreeStore + ?Sized>(
        &self,
        s: &'t S,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        dir: Direction,
    ) -> Cursor<'t, S> {
        Cursor {
            tree: *self,
            store: s,
            lower: lower.map(|k| k.to_vec()),
            upper: upper.map(|k| k.to_vec()),
            dir,
            buf: VecDeque::new(),
            last: None,
            done: false,
        }
    }

    // ------------------------------------------------------------------ changes

    /// Inserts a new key. A key that exists (even delete-marked) is [`BTreeError::DuplicateKey`].
    pub fn insert<S: BTreeStore + ?Sized>(&self, s: &S, key: &[u8], value: &[u8]) -> Result<Lsn> {
        self.insert_with(s, key, value.len(), &mut Plain(value))
    }

    /// Inserts a new key whose value `work` produces inside the insert's mtr, once the leaf
    /// (or, for a split, the path and the new pages) is latched; `value_len` is its length.
    /// `work` runs only if the key is absent and the record can be placed.
    pub fn insert_with<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        value_len: usize,
        work: &mut dyn LeafWork,
    ) -> Result<Lsn> {
        self.check_size(Self::page_size(s), key, value_len)?;
        let size = node::rec_size(key.len(), value_len);
        let room = work.redo_bytes();
        // One of the two closures runs `work`; a RefCell lends it to whichever does.
        let work = RefCell::new(work);
        self.modify(
            s,
            key,
            room,
            &work,
            |mtr, leaf, _| match node::search(mtr.page(leaf), key) {
                Ok(_) => Err(BTreeError::DuplicateKey),
                Err(_) if !node::fits(mtr.page(leaf), size) => Ok(false),
                Err(pos) => {
                    let mut w = work.borrow_mut();
                    let v = produce(&mut **w, mtr, value_len)?;
                    if !node::insert(&mut mp(mtr, leaf), pos, 0, key, &v)? {
                        return Err(BTreeError::Invariant("a record that fits did not insert"));
                    }
                    drop(v);
                    w.after(mtr)?;
                    Ok(true)
                }
            },
            |mtr, path| {
                let d = path.len() - 1;
                let pos = match node::search(mtr.page(path[d].slot), key) {
                    Ok(_) => return Err(BTreeError::DuplicateKey),
                    Err(pos) => pos,
                };
                let Some(mut spare) = self.reserve_split(s, mtr, path, size, key.len())? else {
                    return Ok(Smo::NeedRootX);
                };
                // An error from here on rolls the whole mtr back (invariant 8).
                let mut w = work.borrow_mut();
                let value = produce(&mut **w, mtr, value_len)?.into_owned();
                let rec = OwnedRec {
                    flags: 0,
                    key: key.to_vec(),
                    value,
                };
                self.insert_rec(mtr, path, d, pos, rec, &mut spare)?;
                w.after(mtr)?;
                self.free_spare(s, mtr, spare)?;
                Ok(Smo::Done)
            },
        )
    }

    /// Replaces the value of an existing key (delete mark unchanged).
    pub fn update<S: BTreeStore + ?Sized>(&self, s: &S, key: &[u8], value: &[u8]) -> Result<Lsn> {
        self.update_with(s, key, value.len(), &mut Plain(value))
    }

    /// Replaces the value of an existing key with one `work` produces inside the update's
    /// mtr (see [`BTree::insert_with`]); `work` runs only if the key exists.
    pub fn update_with<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        value_len: usize,
        work: &mut dyn LeafWork,
    ) -> Result<Lsn> {
        self.change_with(s, key, value_len, None, work)
    }

    /// Replaces the value of an existing key and sets its delete mark to `deleted`, in one
    /// mtr: MVCC writes a new version (DB_TRX_ID, DB_ROLL_PTR) and marks or revives the
    /// record at once, so no reader sees the one without the other.
    pub fn replace_with<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        value_len: usize,
        deleted: bool,
        work: &mut dyn LeafWork,
    ) -> Result<Lsn> {
        self.change_with(s, key, value_len, Some(deleted), work)
    }

    /// [`BTree::replace_with`] with a known value.
    pub fn replace<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        value: &[u8],
        deleted: bool,
    ) -> Result<Lsn> {
        self.change_with(s, key, value.len(), Some(deleted), &mut Plain(value))
    }

    fn change_with<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        value_len: usize,
        mark: Option<bool>,
        work: &mut dyn LeafWork,
    ) -> Result<Lsn> {
        self.check_size(Self::page_size(s), key, value_len)?;
        let room = work.redo_bytes();
        let work = RefCell::new(work);
        // Whether `update_value` can place the new value in the leaf (in place, or by
        // moving the record within the page): the same test it makes.
        let fits_in_leaf = |b: &[u8], i: usize| {
            let old = node::rec(b, i).value.len();
            value_len <= old || node::free_total(b) >= value_len - old
        };
        self.modify(
            s,
            key,
            room,
            &work,
            |mtr, leaf, _| match node::search(mtr.page(leaf), key) {
                Err(_) => Err(BTreeError::NotFound),
                Ok(i) if !fits_in_leaf(mtr.page(leaf), i) => Ok(false),
                Ok(i) => {
                    let mut w = work.borrow_mut();
                    let v = produce(&mut **w, mtr, value_len)?;
                    if !node::update_value(&mut mp(mtr, leaf), i, &v)? {
                        return Err(BTreeError::Invariant("a value that fits did not update"));
                    }
                    drop(v);
                    set_mark(mtr, leaf, i, mark)?;
                    w.after(mtr)?;
                    Ok(true)
                }
            },
            |mtr, path| {
                let d = path.len() - 1;
                let leaf = path[d].slot;
                let Ok(i) = node::search(mtr.page(leaf), key) else {
                    return Err(BTreeError::NotFound);
                };
                let mut w = work.borrow_mut();
                if fits_in_leaf(mtr.page(leaf), i) {
                    let v = produce(&mut **w, mtr, value_len)?;
                    if !node::update_value(&mut mp(mtr, leaf), i, &v)? {
                        return Err(BTreeError::Invariant("a value that fits did not update"));
                    }
                    drop(v);
                    set_mark(mtr, leaf, i, mark)?;
                    w.after(mtr)?;
                    return Ok(Smo::Done);
                }
                let flags = marked(node::rec(mtr.page(leaf), i).flags, mark);
                let size = node::rec_size(key.len(), value_len);
                let Some(mut spare) = self.reserve_split(s, mtr, path, size, key.len())? else {
                    return Ok(Smo::NeedRootX);
                };
                let value = produce(&mut **w, mtr, value_len)?.into_owned();
                node::remove(&mut mp(mtr, leaf), i)?;
                let rec = OwnedRec {
                    flags,
                    key: key.to_vec(),
                    value,
                };
                self.insert_rec(mtr, path, d, i, rec, &mut spare)?;
                w.after(mtr)?;
                self.free_spare(s, mtr, spare)?;
                Ok(Smo::Done)
            },
        )
    }

    /// Sets or clears the delete mark of a key: always in place, one byte of redo.
    pub fn set_delete_mark<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        deleted: bool,
    ) -> Result<Lsn> {
        let mark = |mtr: &mut Mtr<'_>, leaf: Slot| -> Result<()> {
            let Ok(i) = node::search(mtr.page(leaf), key) else {
                return Err(BTreeError::NotFound);
            };
            let old = node::rec(mtr.page(leaf), i).flags;
            let new = if deleted {
                old | node::FLAG_DELETED
            } else {
                old & !node::FLAG_DELETED
            };
            if new != old {
                node::set_flags(&mut mp(mtr, leaf), i, new)?;
            }
            Ok(())
        };
        // Only the leaf changes, and `modify` never runs this on a root held SX.
        self.modify(
            s,
            key,
            0,
            &RefCell::new(&mut NoWork),
            |mtr, leaf, _| mark(mtr, leaf).map(|()| true),
            |mtr, path| mark(mtr, path[path.len() - 1].slot).map(|()| Smo::Done),
        )
    }

    /// Removes a key physically (purge, or a table without MVCC). A leaf left below the fill
    /// threshold merges with or borrows from a sibling, in the same mtr.
    pub fn delete<S: BTreeStore + ?Sized>(&self, s: &S, key: &[u8]) -> Result<Lsn> {
        self.delete_with(s, key, &mut NoWork)
    }

    /// Removes a key and runs `work.after` in the same mtr (the table layer frees the
    /// record's BLOB chains there); `work.value` is not called.
    pub fn delete_with<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        work: &mut dyn LeafWork,
    ) -> Result<Lsn> {
        let threshold = merge_threshold(Self::page_size(s));
        let room = work.redo_bytes();
        let work = RefCell::new(work);
        self.modify(
            s,
            key,
            room,
            &work,
            |mtr, leaf, is_root| {
                let b = mtr.page(leaf);
                let Ok(i) = node::search(b, key) else {
                    return Err(BTreeError::NotFound);
                };
                let after = node::used(b) - node::rec(b, i).size() - node::SLOT_SIZE;
                if !is_root && after < threshold {
                    return Ok(false);
                }
                node::remove(&mut mp(mtr, leaf), i)?;
                work.borrow_mut().after(mtr)?;
                Ok(true)
            },
            |mtr, path| {
                let d = path.len() - 1;
                let leaf = path[d].slot;
                let Ok(i) = node::search(mtr.page(leaf), key) else {
                    return Err(BTreeError::NotFound);
                };
                if !mtr.is_x(path[0].slot) && self.merge_may_reach_root(mtr, path, i, threshold) {
                    return Ok(Smo::NeedRootX);
                }
                node::remove(&mut mp(mtr, leaf), i)?;
                self.rebalance(s, mtr, path, d, threshold)?;
                work.borrow_mut().after(mtr)?;
                Ok(Smo::Done)
            },
        )
    }

    /// Removes the record with `key` if `decide(value, delete_marked)`, asked under the
    /// leaf's X latch, says so, and runs `work.after` in the same mtr (see
    /// [`BTree::delete_with`]). Returns whether it removed it; a missing key is `false`.
    /// The check and the removal are one atomic step: a caller that read the record
    /// earlier, with no latch held since, decides again on what the record is *now*
    /// (purge, which takes no row lock: docs/purge.md). `decide` may be asked twice (once
    /// more if the removal needs a structure change) and must not latch pages.
    pub fn delete_if<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        decide: &mut dyn FnMut(&[u8], bool) -> bool,
        work: &mut dyn LeafWork,
    ) -> Result<bool> {
        let threshold = merge_threshold(Self::page_size(s));
        let room = work.redo_bytes();
        let work = RefCell::new(work);
        let decide = RefCell::new(decide);
        let removed = Cell::new(false);
        // Whether record `i` of the page goes: asked under the leaf's X latch.
        let wanted = |b: &[u8], i: usize| {
            let r = node::rec(b, i);
            (decide.borrow_mut())(r.value, r.deleted())
        };
        self.modify(
            s,
            key,
            room,
            &work,
            |mtr, leaf, is_root| {
                let b = mtr.page(leaf);
                let Ok(i) = node::search(b, key) else {
                    return Ok(true);
                };
                if !wanted(b, i) {
                    return Ok(true);
                }
                let after = node::used(b) - node::rec(b, i).size() - node::SLOT_SIZE;
                if !is_root && after < threshold {
                    return Ok(false);
                }
                node::remove(&mut mp(mtr, leaf), i)?;
                work.borrow_mut().after(mtr)?;
                removed.set(true);
                Ok(true)
            },
            |mtr, path| {
                let d = path.len() - 1;
                let leaf = path[d].slot;
                let Ok(i) = node::search(mtr.page(leaf), key) else {
                    return Ok(Smo::Nothing);
                };
                if !wanted(mtr.page(leaf), i) {
                    return Ok(Smo::Nothing);
                }
                if !mtr.is_x(path[0].slot) && self.merge_may_reach_root(mtr, path, i, threshold) {
                    return Ok(Smo::NeedRootX);
                }
                node::remove(&mut mp(mtr, leaf), i)?;
                self.rebalance(s, mtr, path, d, threshold)?;
                work.borrow_mut().after(mtr)?;
                removed.set(true);
                Ok(Smo::Done)
            },
        )?;
        Ok(removed.get())
    }

    /// Overwrites the value of the record with `key` in place with what `decide(value,
    /// delete_marked)` returns, asked under the leaf's X latch; `None` leaves it alone.
    /// The new value must have the old one's length (only the bytes that differ are
    /// written and logged). Returns whether it wrote; a missing key is `false`. Like
    /// [`BTree::delete_if`], check and change are one atomic step.
    pub fn update_in_place_if<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        key: &[u8],
        decide: &mut Patch<'_>,
    ) -> Result<bool> {
        let decide = RefCell::new(decide);
        let wrote = Cell::new(false);
        let patch = |mtr: &mut Mtr<'_>, leaf: Slot| -> Result<()> {
            let Ok(i) = node::search(mtr.page(leaf), key) else {
                return Ok(());
            };
            let r = node::rec(mtr.page(leaf), i);
            let Some(v) = (decide.borrow_mut())(r.value, r.deleted()) else {
                return Ok(());
            };
            node::patch_value(&mut mp(mtr, leaf), i, &v)?;
            wrote.set(true);
            Ok(())
        };
        // Only the leaf changes, in place: `modify` never runs this on a root held SX.
        self.modify(
            s,
            key,
            0,
            &RefCell::new(&mut NoWork),
            |mtr, leaf, _| patch(mtr, leaf).map(|()| true),
            |mtr, path| {
                let wrote_before = wrote.get();
                patch(mtr, path[path.len() - 1].slot)?;
                Ok(if wrote.get() && !wrote_before {
                    Smo::Done
                } else {
                    Smo::Nothing
                })
            },
        )?;
        Ok(wrote.get())
    }

    // ------------------------------------------------------------------ structure changes

    /// What the insertion of a `size`-byte record at the leaf of `path` may do, from the
    /// latched pages, before anything changes: the pages it may need (one per level that may
    /// split, two more for a root split) and whether it may change the root. Conservative in
    /// both: a separator pushed up is taken as long as the longest key involved, so a level
    /// said to fit does fit, and a root said unchanged is unchanged.
    fn split_plan(
        &self,
        mtr: &Mtr<'_>,
        path: &[Step],
        mut size: usize,
        mut key_len: usize,
    ) -> SplitPlan {
        let mut plan = SplitPlan {
            pages: 0,
            root_changes: false,
        };
        for d in (0..path.len()).rev() {
            let b = mtr.page(path[d].slot);
            if d == 0 {
                // Every level below split, or the leaf is the root: the root takes a record
                // or splits itself.
                plan.root_changes = true;
            }
            if node::fits(b, size) {
                break;
            }
            if d == 0 {
                plan.pages += 2;
                break;
            }
            plan.pages += 1;
            // The separator pushed up is at most as long as the longest key involved.
            key_len = (0..node::n_recs(b))
                .map(|i| node::rec(b, i).key.len())
                .fold(key_len, usize::max);
            size = node::rec_size(key_len, node::CHILD_SIZE);
        }
        plan
    }

    /// Whether removing record `i` from the leaf of `path` may change the root: a leaf left
    /// underfull merges or borrows, which changes its parent; a merge removes a record from
    /// the parent, which may leave it underfull in turn. Conservative: each internal node is
    /// taken to lose its largest record.
    fn merge_may_reach_root(
        &self,
        mtr: &Mtr<'_>,
        path: &[Step],
        i: usize,
        threshold: usize,
    ) -> bool {
        let mut d = path.len() - 1;
        let b = mtr.page(path[d].slot);
        let after = node::used(b).saturating_sub(node::rec(b, i).size() + node::SLOT_SIZE);
        let mut may = node::n_recs(b) <= 1 || after < threshold;
        while may && d > 1 {
            d -= 1;
            let b = mtr.page(path[d].slot);
            let biggest = (0..node::n_recs(b))
                .map(|j| node::rec(b, j).size())
                .max()
                .unwrap_or(0);
            let after = node::used(b).saturating_sub(biggest + node::SLOT_SIZE);
            may = node::n_recs(b) <= 1 || after < threshold;
        }
        // Here `may` says whether the node at depth 1 may be rebalanced, which changes its
        // parent, the root (or the leaf's own rebalance, when the leaf is at depth 1).
        may
    }

    /// Plans the insertion of a `size`-byte record at the leaf of `path` and allocates the
    /// pages it may need, before anything on the path changes; `None` (nothing allocated)
    /// if it may change a root this attempt holds only SX (invariant 7).
    fn reserve_split<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        path: &[Step],
        size: usize,
        key_len: usize,
    ) -> Result<Option<Vec<PageNo>>> {
        let plan = self.split_plan(mtr, path, size, key_len);
        if plan.root_changes && !mtr.is_x(path[0].slot) {
            return Ok(None);
        }
        self.reserve(s, mtr, plan.pages).map(Some)
    }

    /// Allocates `need` pages for a split before anything on the path changes.
    fn reserve<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        need: usize,
    ) -> Result<Vec<PageNo>> {
        let mut spare = Vec::with_capacity(need);
        for _ in 0..need {
            match s.alloc_page(mtr, self.space) {
                Ok(p) => spare.push(p),
                Err(e) => {
                    // Give back what was taken; the tree has not been touched.
                    let _ = self.free_spare(s, mtr, spare);
                    return Err(BTreeError::Alloc(e));
                }
            }
        }
        Ok(spare)
    }

    fn free_spare<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        spare: Vec<PageNo>,
    ) -> Result<()> {
        for p in spare {
            s.free_page(mtr, self.pid(p)).map_err(BTreeError::Alloc)?;
        }
        Ok(())
    }

    /// Inserts `rec` at slot `pos` of the node at depth `d`, splitting it (and, recursively,
    /// its ancestors) if it does not fit. New pages come from `spare`.
    fn insert_rec(
        &self,
        mtr: &mut Mtr<'_>,
        path: &mut [Step],
        d: usize,
        pos: usize,
        rec: OwnedRec,
        spare: &mut Vec<PageNo>,
    ) -> Result<()> {
        let slot = path[d].slot;
        if node::insert(&mut mp(mtr, slot), pos, rec.flags, &rec.key, &rec.value)? {
            return Ok(());
        }
        let b = mtr.page(slot);
        let lvl = node::level(b);
        let rightmost = Header::new(b).next().is_null();
        let mut all = node::records(b);
        all.insert(pos, rec);
        let m = split_point(&all, pos, rightmost);
        let sep = separator(&all[m - 1].key, &all[m].key, lvl == 0);
        let mut take = || {
            spare
                .pop()
                .ok_or(BTreeError::Invariant("split without a reserved page"))
        };
        if d == 0 {
            // Root split: the root's records move to two new children and the root, which
            // never moves, becomes their parent one level up.
            let (lp, rp) = (take()?, take()?);
            let ls = mtr.create_page(self.pid(lp), PageType::Index)?;
            node::rebuild(&mut mp(mtr, ls), lvl, self.index_id, &all[..m])?;
            mtr.write_u32(ls, page::OFF_NEXT, rp.0)?;
            let rs = mtr.create_page(self.pid(rp), PageType::Index)?;
            node::rebuild(&mut mp(mtr, rs), lvl, self.index_id, &all[m..])?;
            mtr.write_u32(rs, page::OFF_PREV, lp.0)?;
            let recs = [OwnedRec::child(&[], lp), OwnedRec::child(&sep, rp)];
            return node::rebuild(&mut mp(mtr, slot), lvl + 1, self.index_id, &recs);
        }
        let new = take()?;
        let me = mtr.page_id(slot).page_no;
        let old_next = Header::new(b).next();
        if pos >= m {
            node::truncate(&mut mp(mtr, slot), m)?;
        } else {
            node::truncate(&mut mp(mtr, slot), m - 1)?;
            let r = &all[pos];
            if !node::insert(&mut mp(mtr, slot), pos, r.flags, &r.key, &r.value)? {
                return Err(BTreeError::Invariant("the left half of a split overflows"));
            }
        }
        let ns = mtr.create_page(self.pid(new), PageType::Index)?;
        node::rebuild(&mut mp(mtr, ns), lvl, self.index_id, &all[m..])?;
        mtr.write_u32(ns, page::OFF_PREV, me.0)?;
        mtr.write_u32(ns, page::OFF_NEXT, old_next.0)?;
        mtr.write_u32(slot, page::OFF_NEXT, new.0)?;
        if let Some(r) = path[d].right {
            debug_assert_eq!(mtr.page_id(r).page_no, old_next);
            mtr.write_u32(r, page::OFF_PREV, new.0)?;
        }
        let parent_pos = path[d].idx + 1;
        self.insert_rec(
            mtr,
            path,
            d - 1,
            parent_pos,
            OwnedRec::child(&sep, new),
            spare,
        )
    }

    /// After a removal from the node at depth `d`: an empty non-root node leaves the tree; an
    /// underfull one merges into a sibling under the same parent if both fit in one page, or
    /// else takes records from it; a root left with one child absorbs it.
    fn rebalance<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        path: &mut Vec<Step>,
        d: usize,
        threshold: usize,
    ) -> Result<()> {
        let slot = path[d].slot;
        let b = mtr.page(slot);
        let (n, lvl) = (node::n_recs(b), node::level(b));
        if d == 0 {
            if lvl > 0 && n == 0 {
                // Every child is gone: the tree is empty again.
                return node::init(&mut mp(mtr, slot), 0, self.index_id);
            }
            if lvl > 0 && n == 1 {
                return self.collapse_root(s, mtr, path);
            }
            return Ok(());
        }
        if n > 0 && node::used(b) >= threshold {
            return Ok(());
        }
        if n == 0 {
            self.remove_node(s, mtr, path, d)?;
            return self.rebalance(s, mtr, path, d - 1, threshold);
        }
        let parent = path[d - 1].slot;
        let i = path[d].idx;
        let pn = node::n_recs(mtr.page(parent));
        let (into_left, sib) = match (i > 0, i + 1 < pn) {
            (true, _) => (true, path[d].left),
            (false, true) => (false, path[d].right),
            (false, false) => return Ok(()), // an only child: nothing to merge with
        };
        let sib = sib.ok_or(BTreeError::Invariant("same-parent sibling not latched"))?;
        // Internal nodes: the first key is the fence, so it becomes the parent's separator.
        let mut mine = node::records(mtr.page(slot));
        let mut theirs = node::records(mtr.page(sib));
        if lvl > 0 {
            let pb = mtr.page(parent);
            if into_left {
                mine[0].key = node::rec(pb, i).key.to_vec();
            } else {
                theirs[0].key = node::rec(pb, i + 1).key.to_vec();
            }
        }
        let combined: Vec<OwnedRec> = if into_left {
            theirs.into_iter().chain(mine).collect()
        } else {
            mine.into_iter().chain(theirs).collect()
        };
        let cap = node::capacity(mtr.page(slot).len());
        if bytes_of(&combined) <= cap {
            node::rebuild(&mut mp(mtr, sib), lvl, self.index_id, &combined)?;
            node::truncate(&mut mp(mtr, slot), 0)?;
            self.remove_node(s, mtr, path, d)?;
            return self.rebalance(s, mtr, path, d - 1, threshold);
        }
        // Redistribute: even the bytes out, and replace the separator between the two.
        let m = split_point(&combined, 0, false);
        let (l, r) = combined.split_at(m);
        let sep = separator(&l[l.len() - 1].key, &r[0].key, lvl == 0);
        let sep_idx = if into_left { i } else { i + 1 };
        let pb = mtr.page(parent);
        let old = node::rec(pb, sep_idx);
        let right_child = old.child();
        if node::free_total(pb) + old.size() < node::rec_size(sep.len(), node::CHILD_SIZE) {
            // The parent has no room for a longer separator: stay underfull rather than split
            // the parent on a delete (a legal state: only empty pages are not).
            return Ok(());
        }
        let (ls, rs) = if into_left { (sib, slot) } else { (slot, sib) };
        node::rebuild(&mut mp(mtr, ls), lvl, self.index_id, l)?;
        node::rebuild(&mut mp(mtr, rs), lvl, self.index_id, r)?;
        node::remove(&mut mp(mtr, parent), sep_idx)?;
        let child = OwnedRec::child(&sep, right_child);
        if !node::insert(&mut mp(mtr, parent), sep_idx, 0, &child.key, &child.value)? {
            return Err(BTreeError::Invariant(
                "separator did not fit after the check",
            ));
        }
        Ok(())
    }

    /// Unlinks the empty node at depth `d` from its level, removes it from its parent and
    /// frees its page.
    fn remove_node<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        path: &[Step],
        d: usize,
    ) -> Result<()> {
        let st = path[d];
        debug_assert_eq!(node::n_recs(mtr.page(st.slot)), 0);
        let h = Header::new(mtr.page(st.slot));
        let (prev, next) = (h.prev(), h.next());
        if let Some(l) = st.left {
            mtr.write_u32(l, page::OFF_NEXT, next.0)?;
        }
        if let Some(r) = st.right {
            mtr.write_u32(r, page::OFF_PREV, prev.0)?;
        }
        let parent = path[d - 1].slot;
        let pb = mtr.page(parent);
        if st.idx == 0 && node::n_recs(pb) > 1 {
            // The next record becomes the first: it takes over the parent's fence key, which
            // is below every key now under it (its own key is not, once it is the first
            // child's: keys must stay sorted for binary search).
            let fence = node::rec(pb, 0).key.to_vec();
            let heir = node::rec(pb, 1).child();
            node::remove(&mut mp(mtr, parent), 0)?;
            node::remove(&mut mp(mtr, parent), 0)?;
            let r = OwnedRec::child(&fence, heir);
            if !node::insert(&mut mp(mtr, parent), 0, 0, &r.key, &r.value)? {
                return Err(BTreeError::Invariant("a fence did not fit where it was"));
            }
        } else {
            node::remove(&mut mp(mtr, parent), st.idx)?;
        }
        s.free_page(mtr, mtr.page_id(st.slot))
            .map_err(BTreeError::Alloc)
    }

    /// A root with a single child takes over the child's records and level; the child's
    /// page is freed (the tree gets one level shorter, the root stays where it is).
    fn collapse_root<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        mtr: &mut Mtr<'_>,
        path: &[Step],
    ) -> Result<()> {
        let root = path[0].slot;
        let child = node::rec(mtr.page(root), 0).child();
        let st = path
            .get(1)
            .ok_or(BTreeError::Invariant("collapse without a child level"))?;
        let cs = [st.left, Some(st.slot), st.right]
            .into_iter()
            .flatten()
            .find(|&c| mtr.page_id(c).page_no == child)
            .ok_or(BTreeError::Invariant(
                "the root's last child is not latched",
            ))?;
        let cb = mtr.page(cs);
        let (lvl, recs) = (node::level(cb), node::records(cb));
        node::rebuild(&mut mp(mtr, root), lvl, self.index_id, &recs)?;
        s.free_page(mtr, self.pid(child)).map_err(BTreeError::Alloc)
    }

    /// A sample of the tree for statistics (docs/sql.md, "Statistics"): reads the internal
    /// pages level by level down to the leaves' parents, which list every leaf, then up to
    /// `sample` leaves spread evenly over them (all if there are no more), calling `visit`
    /// with each sampled leaf's records in key order as (key, delete-marked), and the key
    /// of the last record of the leaf before it (read too, so that a change of value
    /// between the two leaves is seen: distinct-value estimates need it). Returns the
    /// number of leaves and of internal pages. Pages are read one at a time under shared
    /// latches while the tree may change: a page that is no longer where it was (freed or
    /// reused by a concurrent split or merge) is left out, since the result is an estimate.
    pub fn sample_leaves<S: BTreeStore + ?Sized>(
        &self,
        s: &S,
        sample: usize,
        visit: &mut LeafVisitor<'_>,
    ) -> Result<(u64, u64)> {
        let mut level = vec![self.root];
        let mut internal = 0u64;
        let leaves = loop {
            let mut next = Vec::new();
            // Whether `next` lists leaves: the pages read were leaves (a root that is one)
            // or the leaves' parents. Leaves are not read here, only the sample below.
            let mut leaves_next = false;
            for &p in &level {
                let g = s.pool().get_shared(self.pid(p))?;
                if self.check_page(&g, self.pid(p), None).is_err() {
                    continue;
                }
                match node::level(&g) {
                    0 => next.push(p),
                    l => {
                        internal += 1;
                        next.extend((0..node::n_recs(&g)).map(|i| node::rec(&g, i).child()));
                        if l > 1 {
                            continue;
                        }
                    }
                }
                leaves_next = true;
            }
            if leaves_next || next.is_empty() {
                break next;
            }
            level = next;
        };
        let step = leaves.len().div_ceil(sample.max(1)).max(1);
        for (j, &p) in leaves.iter().enumerate().step_by(step) {
            let before = match j.checked_sub(1).and_then(|i| leaves.get(i)) {
                Some(&q) => {
                    let g = s.pool().get_shared(self.pid(q))?;
                    match self.check_page(&g, self.pid(q), Some(0)) {
                        Ok(()) => node::n_recs(&g)
                            .checked_sub(1)
                            .map(|i| node::rec(&g, i).key.to_vec()),
                        Err(_) => None,
                    }
                }
                None => None,
            };
            let g = s.pool().get_shared(self.pid(p))?;
            if self.check_page(&g, self.pid(p), Some(0)).is_err() {
                continue;
            }
            let recs: Vec<(&[u8], bool)> = (0..node::n_recs(&g))
                .map(|i| {
                    let r = node::rec(&g, i);
                    (r.key, r.deleted())
                })
                .collect();
            visit(&recs, before.as_deref());
        }
        Ok((leaves.len() as u64, internal))
    }

    /// Every page of the tree, the root first, level by level. Reads one page at a time: for
    /// a quiescent tree (drop, `Db::check`'s page accounting).
    pub fn pages<S: BTreeStore + ?Sized>(&self, s: &S) -> Result<Vec<PageNo>> {
        let mut pages = vec![self.root];
        let mut level = vec![self.root];
        while !level.is_empty() {
            let mut next = Vec::new();
            for &p in &level {
                let g = s.pool().get_shared(self.pid(p))?;
                self.check_page(&g, self.pid(p), None)?;
                if node::level(&g) > 0 {
                    next.extend((0..node::n_recs(&g)).map(|i| node::rec(&g, i).child()));
                }
            }
            pages.extend(next.iter().copied());
            level = next;
        }
        Ok(pages)
    }

    /// Frees every page of the tree. The first mtr empties the root, so the tree is whole
    /// (and empty) at every point; later mtrs free the other pages in batches. A crash between
    /// them leaks the pages not yet freed (docs/btree.md, "Left to do"). No other thread may
    /// use the tree meanwhile.
    pub fn drop_tree<S: BTreeStore + ?Sized>(self, s: &S) -> Result<Lsn> {
        let mut pages = self.pages(s)?;
        pages.retain(|&p| p != self.root);
        let mut mtr = s.mtr();
        let root = mtr.x_latch(self.root_id())?;
        node::init(&mut mp(&mut mtr, root), 0, self.index_id)?;
        commit(mtr)?;
        for batch in pages.chunks(64) {
            let mut mtr = s.mtr();
            for &p in batch {
                s.free_page(&mut mtr, self.pid(p))
                    .map_err(BTreeError::Alloc)?;
            }
            commit(mtr)?;
        }
        let mut mtr = s.mtr();
        s.free_page(&mut mtr, self.root_id())
            .map_err(BTreeError::Alloc)?;
        commit(mtr)
    }
}

/// A range scan. It holds no latch between calls: each refill descends to the next leaf
/// (forward it follows the `next` link while still holding the leaf, left to right; backward
/// it re-descends below the leaf's lower fence, since latching leftwards would break the
/// latch order). Keys come out strictly ordered; changes made meanwhile may or may not be
/// seen (read-committed per leaf; MVCC sits above).
pub struct Cursor<'t, S: BTreeStore + ?Sized> {
    tree: BTree,
    store: &'t S,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    dir: Direction,
    buf: VecDeque<Entry>,
    /// The key of the entry handed out last when the buffer ran empty: where the next
    /// refill starts.
    last: Option<Vec<u8>>,
    done: bool,
}

impl<S: BTreeStore + ?Sized> Cursor<'_, S> {
    fn above_upper(&self, k: &[u8]) -> bool {
        match &self.upper {
            Bound::Included(u) => k > u.as_slice(),
            Bound::Excluded(u) => k >= u.as_slice(),
            Bound::Unbounded => false,
        }
    }
    fn below_lower(&self, k: &[u8]) -> bool {
        match &self.lower {
            Bound::Included(l) => k < l.as_slice(),
            Bound::Excluded(l) => k <= l.as_slice(),
            Bound::Unbounded => false,
        }
    }

    fn entry(r: node::Rec<'_>) -> Entry {
        Entry {
            key: r.key.to_vec(),
            value: r.value.to_vec(),
            delete_marked: r.deleted(),
        }
    }

    fn refill_forward(&mut self) -> Result<()> {
        let pool = self.store.pool();
        let (from, exclusive) = match (&self.last, &self.lower) {
            (Some(k), _) => (Some(k.clone()), true),
            (None, Bound::Included(k)) => (Some(k.clone()), false),
            (None, Bound::Excluded(k)) => (Some(k.clone()), true),
            (None, Bound::Unbounded) => (None, false),
        };
        let seek = from.as_deref().map_or(Seek::First, Seek::At);
        let (mut g, _) = self.tree.descend_s(pool, seek)?;
        loop {
            let start = match from.as_deref() {
                None => 0,
                Some(k) => match node::search(&g, k) {
                    Ok(i) if exclusive => i + 1,
                    Ok(i) | Err(i) => i,
                },
            };
            for i in start..node::n_recs(&g) {
                let r = node::rec(&g, i);
                if self.above_upper(r.key) {
                    self.done = true;
                    break;
                }
                self.buf.push_back(Self::entry(r));
            }
            if !self.buf.is_empty() || self.done {
                return Ok(());
            }
            let next = Header::new(&g).next();
            if next.is_null() {
                self.done = true;
                return Ok(());
            }
            // Left to right at one level, still holding this leaf: the order allows it, and
            // the next leaf cannot be freed while its left neighbour is latched.
            let id = self.tree.pid(next);
            let ng = pool.get_shared(id)?;
            self.tree.check_page(&ng, id, Some(0))?;
            g = ng;
        }
    }

    fn refill_backward(&mut self) -> Result<()> {
        let pool = self.store.pool();
        let (mut bound, mut inclusive) = match (&self.last, &self.upper) {
            (Some(k), _) => (Some(k.clone()), false),
            (None, Bound::Included(k)) => (Some(k.clone()), true),
            (None, Bound::Excluded(k)) => (Some(k.clone()), false),
            (None, Bound::Unbounded) => (None, false),
        };
        loop {
            let (g, fence) = self
                .tree
                .descend_s(pool, Seek::Below(bound.as_deref(), inclusive))?;
            let end = match bound.as_deref() {
                None => node::n_recs(&g),
                Some(k) => match node::search(&g, k) {
                    Ok(i) if inclusive => i + 1,
                    Ok(i) | Err(i) => i,
                },
            };
            for i in (0..end).rev() {
                let r = node::rec(&g, i);
                if self.below_lower(r.key) {
                    self.done = true;
                    break;
                }
                self.buf.push_back(Self::entry(r));
            }
            if !self.buf.is_empty() || self.done {
                return Ok(());
            }
            // Nothing below the bound in this leaf: everything left lies below its fence.
            match fence {
                None => {
                    self.done = true;
                    return Ok(());
                }
                Some(f) => {
                    debug_assert!(bound.as_ref().is_none_or(|b| f <= *b));
                    bound = Some(f);
                    inclusive = false;
                }
            }
        }
    }
}

impl<S: BTreeStore + ?Sized> Iterator for Cursor<'_, S> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        if self.buf.is_empty() && !self.done {
            let r = match self.dir {
                Direction::Forward => self.refill_forward(),
                Direction::Backward => self.refill_backward(),
            };
            if let Err(e) = r {
                self.done = true;
                return Some(Err(e));
            }
        }
        let e = self.buf.pop_front()?;
        // The refill that comes when the buffer is empty goes on after the last key handed
        // out; it is kept only then, not copied for every entry.
        if self.buf.is_empty() && !self.done {
            self.last = Some(e.key.clone());
        }
        Some(Ok(e))
    }
}

/// What [`BTree::sample_leaves`] calls per sampled leaf: its records as (key,
/// delete-marked), and the last key of the leaf before it.
pub type LeafVisitor<'a> = dyn FnMut(&[(&[u8], bool)], Option<&[u8]>) + 'a;
