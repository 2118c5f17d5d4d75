//! Slotted-page unit tests on plain buffers: the same code the tree runs through an mtr.

use super::node::{self, OwnedRec};
use super::{separator, split_point};
use crate::page::{self, PageId, PageNo, PageType, SpaceId};

const PS: usize = 4096;

fn page() -> Vec<u8> {
    let mut b = vec![0u8; PS];
    page::init_header(&mut b, PageId::new(SpaceId(1), PageNo(3)), PageType::Index);
    node::init(&mut b, 0, 7).expect("init");
    b
}

fn keys(b: &[u8]) -> Vec<Vec<u8>> {
    (0..node::n_recs(b))
        .map(|i| node::rec(b, i).key.to_vec())
        .collect()
}

fn put(b: &mut Vec<u8>, key: &[u8], value: &[u8]) -> bool {
    let pos = node::search(b, key).expect_err("new key");
    node::insert(b, pos, 0, key, value).expect("insert")
}

#[test]
fn inserts_in_any_order_come_out_sorted_and_binary_search_finds_each() {
    let mut b = page();
    let order = [5u8, 1, 9, 3, 7, 0, 8, 2, 6, 4];
    for k in order {
        assert!(put(&mut b, &[k], &[k; 10]));
    }
    assert_eq!(keys(&b), (0u8..10).map(|k| vec![k]).collect::<Vec<_>>());
    for k in 0u8..10 {
        let i = node::search(&b, &[k]).expect("found");
        assert_eq!(node::rec(&b, i).value, &[k; 10]);
    }
    assert_eq!(node::search(&b, &[10]), Err(10));
    assert_eq!(node::search(&b, &[4, 0]), Err(5));
    assert!(node::check(&b).is_empty(), "{:?}", node::check(&b));
}

#[test]
fn removal_leaves_garbage_that_reorganize_reclaims() {
    let mut b = page();
    for k in 0u8..20 {
        assert!(put(&mut b, &[k], &[k; 50]));
    }
    let used_full = node::used(&b);
    for k in (0u8..20).step_by(2) {
        let i = node::search(&b, &[k]).expect("found");
        node::remove(&mut b, i).expect("remove");
    }
    assert_eq!(node::n_recs(&b), 10);
    assert!(node::garbage(&b) > 0);
    assert_eq!(node::used(&b), used_full - 10 * (node::rec_size(1, 50) + 2));
    assert!(node::check(&b).is_empty(), "{:?}", node::check(&b));
    let free_before = node::free_total(&b);
    node::reorganize(&mut b).expect("reorganize");
    assert_eq!(node::garbage(&b), 0);
    assert_eq!(node::free_total(&b), free_before);
    assert_eq!(node::free_contiguous(&b), free_before);
    assert_eq!(
        keys(&b),
        (1u8..20).step_by(2).map(|k| vec![k]).collect::<Vec<_>>()
    );
    for k in (1u8..20).step_by(2) {
        let i = node::search(&b, &[k]).expect("found");
        assert_eq!(node::rec(&b, i).value, &[k; 50]);
    }
    assert!(node::check(&b).is_empty());
}

#[test]
fn insert_reorganizes_when_only_fragmented_space_is_left() {
    let mut b = page();
    let v = vec![1u8; 200];
    let mut k = 0u8;
    while put(&mut b, &[k], &v) {
        k += 1;
    }
    // Full: free a record in the middle, then the same size fits only after compaction.
    let i = node::search(&b, &[3]).expect("found");
    node::remove(&mut b, i).expect("remove");
    assert!(node::free_contiguous(&b) < node::rec_size(1, 200) + 2);
    assert!(put(&mut b, &[3], &v));
    assert_eq!(node::garbage(&b), 0, "the insert compacted the page");
    assert!(node::check(&b).is_empty());
}

#[test]
fn a_full_page_refuses_an_insert_and_stays_unchanged() {
    let mut b = page();
    let v = vec![9u8; 300];
    let mut k = 0u8;
    while put(&mut b, &[k], &v) {
        k += 1;
    }
    let before = b.clone();
    assert!(!put(&mut b, &[200], &v));
    assert_eq!(b, before);
    assert!(node::free_total(&b) < node::rec_size(1, 300) + 2);
}

#[test]
fn update_in_place_when_it_fits_else_moves_the_record() {
    let mut b = page();
    for k in 0u8..5 {
        assert!(put(&mut b, &[k], &[k; 20]));
    }
    let i = node::search(&b, &[2]).expect("found");
    let off = node::rec(&b, i).off;
    assert!(node::update_value(&mut b, i, &[7; 20]).expect("same size"));
    assert_eq!(node::rec(&b, i).off, off, "same size: in place");
    assert!(node::update_value(&mut b, i, &[8; 5]).expect("shrink"));
    assert_eq!(node::rec(&b, i).off, off, "shorter: in place");
    assert_eq!(node::garbage(&b), 15);
    assert!(node::update_value(&mut b, i, &[6; 100]).expect("grow"));
    assert_ne!(
        node::rec(&b, i).off,
        off,
        "longer: rewritten at the heap top"
    );
    assert_eq!(node::rec(&b, i).value, &[6; 100]);
    assert_eq!(keys(&b).len(), 5);
    assert!(node::check(&b).is_empty(), "{:?}", node::check(&b));
}

#[test]
fn delete_mark_sets_one_flag_and_keeps_the_record() {
    let mut b = page();
    assert!(put(&mut b, b"a", b"1"));
    node::set_flags(&mut b, 0, node::FLAG_DELETED).expect("mark");
    assert!(node::rec(&b, 0).deleted());
    assert_eq!(node::rec(&b, 0).value, b"1");
    node::set_flags(&mut b, 0, 0).expect("unmark");
    assert!(!node::rec(&b, 0).deleted());
}

#[test]
fn truncate_keeps_a_prefix_and_counts_the_rest_as_garbage() {
    let mut b = page();
    for k in 0u8..10 {
        assert!(put(&mut b, &[k], &[k; 30]));
    }
    node::truncate(&mut b, 4).expect("truncate");
    assert_eq!(keys(&b), (0u8..4).map(|k| vec![k]).collect::<Vec<_>>());
    assert_eq!(node::garbage(&b), 6 * node::rec_size(1, 30));
    assert!(node::check(&b).is_empty());
}

#[test]
fn rebuild_writes_exactly_the_given_records() {
    let mut b = page();
    let recs: Vec<OwnedRec> = (0u8..6)
        .map(|k| OwnedRec {
            flags: if k == 2 { node::FLAG_DELETED } else { 0 },
            key: vec![b'k', k],
            value: vec![k; usize::from(k)],
        })
        .collect();
    node::rebuild(&mut b, 0, 7, &recs).expect("rebuild");
    assert_eq!(node::records(&b), recs);
    assert_eq!(node::index_id(&b), 7);
    assert!(node::check(&b).is_empty());
}

#[test]
fn at_least_four_maximal_records_fit_a_page() {
    for ps in [4096usize, 16384, 65536] {
        let max = node::max_record(ps);
        assert!(4 * (max + node::SLOT_SIZE) <= node::capacity(ps));
        assert!(node::max_key(ps) + node::REC_HEADER + node::CHILD_SIZE <= max);
        assert!(ps - 8 < 1 << 16, "slot offsets fit in u16");
    }
    let mut b = page();
    let max = node::max_record(PS);
    for k in 0u8..4 {
        let v = vec![k; max - node::REC_HEADER - 1];
        assert!(put(&mut b, &[k], &v), "record {k} of maximal size fits");
    }
}

#[test]
fn check_reports_keys_out_of_order_and_bad_accounting() {
    let mut b = page();
    assert!(put(&mut b, b"a", b"1"));
    assert!(put(&mut b, b"b", b"2"));
    // Swap the two slots.
    let de = PS - page::TRAILER_SIZE;
    let (s0, s1) = (de - 2, de - 4);
    let (x, y) = ([b[s0], b[s0 + 1]], [b[s1], b[s1 + 1]]);
    b[s0..s0 + 2].copy_from_slice(&y);
    b[s1..s1 + 2].copy_from_slice(&x);
    assert!(node::check(&b).iter().any(|p| p.contains("out of order")));
    let mut c = page();
    assert!(put(&mut c, b"a", b"1"));
    c[node::OFF_GARBAGE] = 3;
    assert!(node::check(&c).iter().any(|p| p.contains("accounting")));
}

#[test]
fn child_routing_picks_the_last_separator_at_or_below_the_key() {
    let mut b = page();
    let recs = vec![
        OwnedRec::child(b"", PageNo(10)),
        OwnedRec::child(b"g", PageNo(11)),
        OwnedRec::child(b"p", PageNo(12)),
    ];
    node::rebuild(&mut b, 1, 7, &recs).expect("rebuild");
    let child = |k: &[u8]| node::rec(&b, node::child_index(&b, k)).child().0;
    assert_eq!(child(b"a"), 10);
    assert_eq!(child(b"g"), 11);
    assert_eq!(child(b"h"), 11);
    assert_eq!(child(b"z"), 12);
    let below = |k: &[u8], inc| node::rec(&b, node::child_index_below(&b, k, inc)).child().0;
    assert_eq!(below(b"g", false), 10);
    assert_eq!(below(b"g", true), 11);
    assert_eq!(below(b"q", false), 12);
}

#[test]
fn separators_are_the_shortest_prefix_above_the_left_half() {
    assert_eq!(separator(b"apple", b"banana", true), b"b");
    assert_eq!(separator(b"abc", b"abd", true), b"abd");
    assert_eq!(separator(b"ab", b"abc", true), b"abc");
    assert_eq!(separator(b"a", b"zz", false), b"zz");
}

#[test]
fn ascending_inserts_split_at_the_end_and_random_ones_in_the_middle() {
    let recs: Vec<OwnedRec> = (0u8..10)
        .map(|k| OwnedRec {
            flags: 0,
            key: vec![k],
            value: vec![0; 100],
        })
        .collect();
    assert_eq!(split_point(&recs, 9, true), 9);
    assert_eq!(split_point(&recs, 9, false), 5);
    assert_eq!(split_point(&recs, 3, true), 5);
}

mod search_model {
    use super::*;
    use proptest::prelude::*;

    // Keys over a small alphabet and lengths around the 4- and 8-byte words `cmp_keys`
    // compares first, so that prefixes, equal words and length ties all come up.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(0x7f), Just(0xff)],
            0..13,
        )
    }

    proptest! {
        #[test]
        fn cmp_keys_is_memcmp_order(a in key(), b in key()) {
            prop_assert_eq!(node::cmp_keys(&a, &b), a.cmp(&b));
        }

        #[test]
        fn search_agrees_with_a_linear_scan(
            stored in proptest::collection::btree_set(key(), 0..60),
            probes in proptest::collection::vec(key(), 1..20),
        ) {
            let mut b = page();
            for k in &stored {
                prop_assert!(put(&mut b, k, b"v"));
            }
            let sorted: Vec<&Vec<u8>> = stored.iter().collect();
            for p in probes.iter().chain(stored.iter()) {
                let want = match sorted.iter().position(|k| *k == p) {
                    Some(i) => Ok(i),
                    None => Err(sorted.iter().filter(|k| k.as_slice() < p.as_slice()).count()),
                };
                prop_assert_eq!(node::search(&b, p), want);
            }
        }
    }
}
