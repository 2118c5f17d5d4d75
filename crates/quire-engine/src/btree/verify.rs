//! The B-tree check behind `quire check`: invariants 1-5 of [`super`], level by level.

use std::collections::HashSet;

use super::{node, BTree, BTreeStore};
use crate::page::{Header, PageNo, PageType};

/// What a check saw, for `quire check` and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeStats {
    /// Levels, leaves included (1 for a root that is a leaf).
    pub height: u32,
    pub pages: u64,
    pub leaf_records: u64,
    pub delete_marked: u64,
}

/// A page to visit, with the key range its parent allows: `[low, high)`.
struct Visit {
    page: PageNo,
    low: Option<Vec<u8>>,
    high: Option<Vec<u8>>,
}

impl BTree {
    /// Checks the whole tree; every problem names the space, the page and what is wrong.
    /// Meant for a quiescent tree (offline check, tests): it latches one page at a time.
    pub fn verify<S: BTreeStore + ?Sized>(&self, s: &S) -> Vec<String> {
        self.verify_stats(s).0
    }

    pub fn verify_stats<S: BTreeStore + ?Sized>(&self, s: &S) -> (Vec<String>, TreeStats) {
        let mut out = Vec::new();
        let mut stats = TreeStats::default();
        let space = self.space;
        let mut seen = HashSet::new();
        let mut level_pages = vec![Visit {
            page: self.root,
            low: None,
            high: None,
        }];
        let mut expect_level: Option<u16> = None;
        while !level_pages.is_empty() {
            stats.height += 1;
            let mut next = Vec::new();
            let count = level_pages.len();
            for (j, v) in level_pages.iter().enumerate() {
                let p = v.page;
                let mut problem =
                    |what: String| out.push(format!("space {space} page {p}: {what}"));
                if !seen.insert(p) {
                    problem("reached twice (a cycle or a shared child)".into());
                    continue;
                }
                let g = match s.pool().get_shared(self.pid(p)) {
                    Ok(g) => g,
                    Err(e) => {
                        problem(format!("cannot be read: {e}"));
                        continue;
                    }
                };
                stats.pages += 1;
                let h = Header::new(&g);
                if h.page_type() != Some(PageType::Index) {
                    problem(format!(
                        "page type {} is not an index page",
                        h.page_type_raw()
                    ));
                    continue;
                }
                if node::index_id(&g) != self.index_id {
                    problem(format!(
                        "index id {} but the tree is index {}",
                        node::index_id(&g),
                        self.index_id
                    ));
                }
                let lvl = node::level(&g);
                match expect_level {
                    None => expect_level = Some(lvl),
                    Some(e) if e != lvl => problem(format!("level {lvl}, expected {e}")),
                    _ => {}
                }
                let node_problems = node::check(&g);
                if !node_problems.is_empty() {
                    for w in node_problems {
                        problem(w);
                    }
                    continue;
                }
                let n = node::n_recs(&g);
                if n == 0 && p != self.root {
                    problem("empty non-root page".into());
                }
                if n == 0 && lvl > 0 {
                    problem("empty internal page".into());
                }
                // Sibling links (invariant 3).
                let want_prev = if j == 0 {
                    PageNo::NULL
                } else {
                    level_pages[j - 1].page
                };
                let want_next = if j + 1 == count {
                    PageNo::NULL
                } else {
                    level_pages[j + 1].page
                };
                if h.prev() != want_prev {
                    problem(format!(
                        "prev link {} but the left neighbour is {}",
                        h.prev(),
                        want_prev
                    ));
                }
                if h.next() != want_next {
                    problem(format!(
                        "next link {} but the right neighbour is {}",
                        h.next(),
                        want_next
                    ));
                }
                // Key ranges (invariants 1 and 2); an internal node's first key is its fence.
                let first_checked = usize::from(lvl > 0);
                for i in first_checked..n {
                    let k = node::rec(&g, i).key;
                    if v.low.as_deref().is_some_and(|lo| k < lo) {
                        problem(format!("record {i} is below the page's lower bound"));
                    }
                    if v.high.as_deref().is_some_and(|hi| k >= hi) {
                        problem(format!("record {i} is at or above the page's upper bound"));
                    }
                }
                if lvl == 0 {
                    stats.leaf_records += n as u64;
                    stats.delete_marked +=
                        (0..n).filter(|&i| node::rec(&g, i).deleted()).count() as u64;
                } else {
                    for i in 0..n {
                        let r = node::rec(&g, i);
                        next.push(Visit {
                            page: r.child(),
                            low: if i == 0 {
                                v.low.clone()
                            } else {
                                Some(r.key.to_vec())
                            },
                            high: if i + 1 < n {
                                Some(node::rec(&g, i + 1).key.to_vec())
                            } else {
                                v.high.clone()
                            },
                        });
                    }
                }
            }
            expect_level = expect_level.and_then(|l| l.checked_sub(1));
            if !next.is_empty() && expect_level.is_none() {
                out.push(format!("space {space}: children below level 0"));
                break;
            }
            level_pages = next;
        }
        (out, stats)
    }
}
