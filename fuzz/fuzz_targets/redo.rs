//! The redo log's pure decoders, without a data directory: the header block and the
//! checkpoint slots (`log::format`), and a frame payload parsed into mini-transaction
//! records (`mtr::record::parse_all`) and applied to a page image (`mtr::record::apply`).
//! Recovery runs exactly these on what it reads from `redo.log`; the `pages` target reaches
//! them through recovery too, but at a few hundred runs a second, this one at thousands.
//!
//! Input: byte 0 picks the page size (4, 8 or 16 KiB); the rest is the payload. Decoding
//! may fail with an error; it must never panic, loop or allocate without bound.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_engine::log::format::{CheckpointSlot, FileHeader, BLOCK};
use quire_engine::mtr::record::{apply, parse_all};
use quire_engine::page::PageSize;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let Some(ps) = PageSize::new(4096 << (pick % 3)) else {
        return;
    };
    // The header and slot decoders take whole blocks: the payload, zero-padded or cut.
    let mut block = vec![0u8; BLOCK as usize];
    let n = payload.len().min(block.len());
    block[..n].copy_from_slice(&payload[..n]);
    let _ = FileHeader::decode(&block);
    let _ = CheckpointSlot::decode(&block);
    // Records: every one that parses is applied to a page (recovery checks the page id
    // first; `apply` must itself refuse ranges outside the page).
    if let Ok(records) = parse_all(payload, ps) {
        let mut page = vec![0u8; ps.bytes()];
        for r in &records {
            let _ = apply(r, &mut page);
        }
    }
});
