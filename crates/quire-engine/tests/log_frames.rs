//! Frames on disk: round trip, torn tails, stale laps, stale runs, wrap-around, checkpoint
//! slots, clear errors, and a log larger than 4 GiB.

use std::path::Path;
use std::sync::Arc;

use quire_engine::log::format::{self, CheckpointSlot, BLOCK, DATA_START, SLOT_OFFSETS};
use quire_engine::log::{FlushAtCommit, Log, LogConfig, LogError, LOG_FILE};
use quire_engine::page::Lsn;
use quire_io::os::OsVfs;
use quire_io::Vfs;
use rand::{Rng, SeedableRng};

fn config(file_size: u64, direct: bool) -> LogConfig {
    LogConfig {
        file_size,
        buffer_size: 64 << 10,
        flush_at_commit: FlushAtCommit::Durable,
        direct,
        dsync: false,
        preallocate: false,
        background_flush: false,
        prewrite_ahead: 0,
    }
}

fn vfs() -> Arc<dyn Vfs> {
    Arc::new(OsVfs::new())
}

fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

fn frames(log_dir: &Path, cfg: &LogConfig) -> Vec<(Lsn, Lsn, Vec<u8>)> {
    Log::open_for_recovery(vfs(), log_dir, cfg.clone())
        .expect("open for recovery")
        .map(|f| {
            let f = f.expect("frame");
            (f.start, f.end, f.payload)
        })
        .collect()
}

/// A log shut down (a durable flush) ends right after its last frame when buffered; with
/// O_DIRECT, after the padding frame that ends it on a block boundary (512 or 4096 here).
fn assert_padded_end(end: Lsn, last_frame_end: Lsn, direct: bool) {
    let gap = end.0 - last_frame_end.0;
    if !direct {
        assert_eq!(gap, 0, "buffered I/O never pads");
    } else {
        assert!(
            gap == 0 || ((12..=format::MAX_PADDING).contains(&gap) && end.0.is_multiple_of(512)),
            "the log resumes at {end}, after padding from {last_frame_end}"
        );
    }
}

#[test]
fn padding_frames_are_skipped_yet_checked() {
    // A durable write under O_DIRECT ends with a padding frame; the scan skips it. A stale
    // padding frame (a former lap, or a flipped bit) ends the log like a stale frame.
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, true);
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    if !log.direct_io() {
        eprintln!("O_DIRECT not granted here: nothing to pad");
        return;
    }
    let a = log.append(&payload(1, 100)).expect("a");
    log.commit_wait(a.end);
    let padded = log.current_lsn();
    assert!(
        padded > a.end && padded.0.is_multiple_of(512),
        "the commit padded"
    );
    assert_eq!(log.stats().padding_bytes, padded.0 - a.end.0);
    assert_eq!(log.flushed_lsn(), padded);
    let b = log.append(&payload(2, 100)).expect("b");
    log.shutdown();
    assert_eq!(
        b.start, padded,
        "the next frame starts on the block boundary"
    );
    let want = vec![
        (a.start, a.end, payload(1, 100)),
        (b.start, b.end, payload(2, 100)),
    ];
    assert_eq!(frames(dir.path(), &cfg), want);

    let path = dir.path().join(LOG_FILE);
    let bytes = std::fs::read(&path).expect("read");
    let pad_at = format::file_offset(a.end.0, 1 << 20) as usize;
    assert_ne!(bytes[pad_at + 3] & 0x80, 0, "a padding frame follows a");
    // A bit flipped inside the padding's zeros: its crc fails, the log ends after a.
    let mut bad = bytes.clone();
    bad[pad_at + 20] ^= 1;
    std::fs::write(&path, &bad).expect("write");
    assert_eq!(frames(dir.path(), &cfg), want[..1].to_vec());
    // The same padding frame one lap later (a stale lap): its crc covers the LSN.
    let mut stale = bytes.clone();
    let pad = format::encode_padding(Lsn(a.end.0 + (1 << 20)), 1, padded.0 - a.end.0);
    stale[pad_at..pad_at + pad.len()].copy_from_slice(&pad);
    std::fs::write(&path, &stale).expect("write");
    assert_eq!(frames(dir.path(), &cfg), want[..1].to_vec());
}

#[test]
fn frames_round_trip_through_reopen_in_both_io_modes() {
    for direct in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(1 << 20, direct);
        let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
        let mut want = Vec::new();
        for i in 0..300 {
            let p = payload(i, 1 + i * 13 % 700);
            let r = log.append(&p).expect("append");
            assert_eq!(r.end.0 - r.start.0, p.len() as u64 + 12);
            if i % 7 == 0 {
                log.commit_wait(r.end);
                assert!(log.flushed_lsn() >= r.end);
            }
            want.push((r.start, r.end, p));
        }
        log.shutdown();
        let got = frames(dir.path(), &cfg);
        assert_eq!(got, want, "direct={direct}");
        // Reopen, append more, reopen again: the log continues where it ended.
        let log = Log::open(vfs(), dir.path(), cfg.clone()).expect("open");
        assert_padded_end(log.current_lsn(), want.last().expect("frames").1, direct);
        assert_eq!(log.epoch(), 2);
        let r = log.append(b"after reopen").expect("append");
        log.shutdown();
        want.push((r.start, r.end, b"after reopen".to_vec()));
        assert_eq!(frames(dir.path(), &cfg), want, "direct={direct}");
    }
}

#[test]
fn a_torn_tail_ends_the_log_at_every_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, false);
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    let mut want = Vec::new();
    for i in 0..24 {
        let p = payload(i, 1 + (i * 37) % 150);
        let r = log.append(&p).expect("append");
        want.push((r.start, r.end, p));
    }
    log.shutdown();
    let path = dir.path().join(LOG_FILE);
    let original = std::fs::read(&path).expect("read log");
    let cap = 1 << 20;
    let first = format::file_offset(want[0].0 .0, cap);
    let last = format::file_offset(want.last().expect("frames").1 .0, cap);
    for cut in first..=last {
        std::fs::write(&path, &original[..cut as usize]).expect("truncate");
        let got = frames(dir.path(), &cfg);
        let expect: Vec<_> = want
            .iter()
            .filter(|f| format::file_offset(f.1 .0 - 1, cap) < cut)
            .cloned()
            .collect();
        assert_eq!(got, expect, "cut at file offset {cut}");
        // Now and then, reopen for appending after the cut and check the log continues.
        if cut % 97 == 0 {
            let log = Log::open(vfs(), dir.path(), cfg.clone()).expect("open");
            let end = expect.last().map(|f| f.1).unwrap_or(format::START_LSN);
            assert_eq!(log.current_lsn(), end);
            let r = log.append(b"resumed").expect("append");
            log.shutdown();
            let mut e2 = expect.clone();
            e2.push((r.start, r.end, b"resumed".to_vec()));
            assert_eq!(frames(dir.path(), &cfg), e2, "append after cut {cut}");
        }
    }
}

#[test]
fn garbage_after_the_end_is_never_returned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, false);
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    let mut want = Vec::new();
    for i in 0..50 {
        let p = payload(i, 100);
        let r = log.append(&p).expect("append");
        want.push((r.start, r.end, p));
    }
    let end = log.current_lsn();
    log.shutdown();
    let path = dir.path().join(LOG_FILE);
    let mut bytes = std::fs::read(&path).expect("read");
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let off = format::file_offset(end.0, 1 << 20) as usize;
    rng.fill(&mut bytes[off..off + (64 << 10)]);
    // Also a plausible header: a small length, the right epoch, garbage crc.
    bytes[off..off + 4].copy_from_slice(&20u32.to_le_bytes());
    bytes[off + 4..off + 8].copy_from_slice(&1u32.to_le_bytes());
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(frames(dir.path(), &cfg), want);
    // A flipped bit inside a middle frame ends the log just before it.
    let mid = format::file_offset(want[20].0 .0, 1 << 20) as usize + 30;
    bytes[mid] ^= 0x10;
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(frames(dir.path(), &cfg), want[..20].to_vec());
}

#[test]
fn wrap_around_the_circle_and_stale_laps() {
    // 64 KiB circle; 5 laps with checkpoints; every reopen returns exactly the frames after
    // the checkpoint, though the rest of the circle holds valid-looking frames of old laps.
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(64 << 10, true);
    let cap = cfg.capacity();
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    let max = log.max_payload() as usize;
    let mut since_ckpt = Vec::new();
    let mut i = 0;
    while log.current_lsn().0 < 5 * cap {
        let p = payload(i, 1 + (i * 101) % max);
        let r = log.append(&p).expect("append");
        since_ckpt.push((r.start, r.end, p));
        if log.checkpoint_age() > cap / 2 {
            let keep = since_ckpt.len() - 3;
            let at = since_ckpt[keep].0;
            log.checkpoint(at).expect("checkpoint");
            since_ckpt.drain(..keep);
        }
        i += 1;
    }
    log.shutdown();
    let got = frames(dir.path(), &cfg);
    assert_eq!(got, since_ckpt);
    assert!(
        got.iter()
            .any(|f| f.0 .0 / cap != (f.1 .0 - 1) / cap || f.0 .0 > 4 * cap),
        "the test should cross the end of the circle"
    );
    let log = Log::open(vfs(), dir.path(), cfg.clone()).expect("reopen");
    assert_padded_end(
        log.current_lsn(),
        since_ckpt.last().expect("frames").1,
        true,
    );
}

#[test]
fn a_stale_tail_of_an_earlier_run_is_not_resurrected() {
    // Run 1 writes A B C; a crash loses B but keeps C. Run 2 appends D exactly where B was
    // and as long as B, so C sits right after D with a valid LSN-based crc. The epoch check
    // must stop the scan after D.
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, false);
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    let a = log.append(&payload(1, 100)).expect("a");
    let b = log.append(&payload(2, 100)).expect("b");
    let _c = log.append(&payload(3, 100)).expect("c");
    log.shutdown();
    let path = dir.path().join(LOG_FILE);
    let mut bytes = std::fs::read(&path).expect("read");
    let off = format::file_offset(b.start.0, 1 << 20) as usize;
    bytes[off..off + 112].fill(0);
    std::fs::write(&path, &bytes).expect("write");

    let log = Log::open(vfs(), dir.path(), cfg.clone()).expect("open");
    assert_eq!(log.current_lsn(), a.end);
    let d = log.append(&payload(4, 100)).expect("d");
    assert_eq!(d.start, b.start);
    log.shutdown();
    let got = frames(dir.path(), &cfg);
    assert_eq!(
        got,
        vec![
            (a.start, a.end, payload(1, 100)),
            (d.start, d.end, payload(4, 100))
        ]
    );
}

#[test]
fn payload_limits_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = Log::create(vfs(), dir.path(), config(1 << 20, false)).expect("create");
    let max = log.max_payload();
    assert!(matches!(log.append(&[]), Err(LogError::EmptyPayload)));
    let big = vec![0u8; max as usize + 1];
    match log.append(&big) {
        Err(e @ LogError::PayloadTooLarge { .. }) => {
            assert!(e.to_string().contains("exceeds the maximum"), "{e}")
        }
        other => panic!("expected PayloadTooLarge, got {other:?}"),
    }
    log.append(&big[..max as usize]).expect("the maximum fits");
}

fn corrupt_at(path: &Path, off: u64) {
    let mut b = std::fs::read(path).expect("read");
    b[off as usize + 50] ^= 0xff;
    std::fs::write(path, b).expect("write");
}

#[test]
fn a_torn_checkpoint_slot_falls_back_to_the_other_and_two_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, false);
    let log = Log::create(vfs(), dir.path(), cfg.clone()).expect("create");
    let mut all = Vec::new();
    for i in 0..30 {
        let r = log.append(&payload(i, 50)).expect("append");
        all.push((r.start, r.end, payload(i, 50)));
    }
    log.checkpoint(all[10].0).expect("checkpoint 1 -> slot 1");
    log.checkpoint(all[20].0).expect("checkpoint 2 -> slot 0");
    log.shutdown();
    let path = dir.path().join(LOG_FILE);

    let rec = Log::open_for_recovery(vfs(), dir.path(), cfg.clone()).expect("open");
    assert_eq!(rec.checkpoint_lsn(), all[20].0);
    drop(rec);

    corrupt_at(&path, SLOT_OFFSETS[0]);
    let rec = Log::open_for_recovery(vfs(), dir.path(), cfg.clone()).expect("fallback");
    assert_eq!(rec.checkpoint_lsn(), all[10].0, "the older slot is used");
    drop(rec);
    assert_eq!(frames(dir.path(), &cfg), all[10..].to_vec());

    corrupt_at(&path, SLOT_OFFSETS[1]);
    let err = Log::open_for_recovery(vfs(), dir.path(), cfg.clone()).expect_err("both bad");
    let msg = err.to_string();
    assert!(matches!(err, LogError::Corrupt { .. }), "{msg}");
    assert!(
        msg.contains("redo.log") && msg.contains("checkpoint slot 0"),
        "{msg}"
    );
}

#[test]
fn missing_and_corrupt_files_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(1 << 20, false);
    let err = Log::open(vfs(), dir.path(), cfg.clone()).expect_err("missing");
    assert!(matches!(err, LogError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("redo.log"), "{err}");

    Log::create(vfs(), dir.path(), cfg.clone())
        .expect("create")
        .shutdown();
    let err = Log::create(vfs(), dir.path(), cfg.clone()).expect_err("exists");
    assert!(matches!(err, LogError::AlreadyExists { .. }), "{err}");

    let path = dir.path().join(LOG_FILE);
    corrupt_at(&path, 0);
    let err = Log::open(vfs(), dir.path(), cfg.clone()).expect_err("bad header");
    assert!(err.to_string().contains("header block checksum"), "{err}");

    std::fs::write(&path, b"QUIRELOG").expect("write");
    let err = Log::open(vfs(), dir.path(), cfg.clone()).expect_err("short");
    assert!(err.to_string().contains("shorter than its"), "{err}");

    std::fs::write(&path, vec![7u8; 20000]).expect("write");
    let err = Log::open(vfs(), dir.path(), cfg).expect_err("not a log");
    assert!(err.to_string().contains("bad magic"), "{err}");
}

#[test]
fn a_log_larger_than_4_gib_with_lsns_beyond_2_pow_32() {
    // A sparse 5 GiB circle. We plant a checkpoint at an LSN past 2^34 whose file position
    // is beyond 4 GiB and near the end of the circle, then append across the end.
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(5 << 30, true);
    let cap = cfg.capacity();
    Log::create(vfs(), dir.path(), cfg.clone())
        .expect("create")
        .shutdown();
    let path = dir.path().join(LOG_FILE);
    let ckpt = 3 * cap + cap - 3000;
    assert!(ckpt > 1 << 34 && format::file_offset(ckpt, cap) > 4 << 30);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        let mut b = vec![0u8; BLOCK as usize];
        CheckpointSlot {
            checkpoint_lsn: Lsn(ckpt),
            capacity: cap,
            seq: 2,
            epoch: 1,
            durable_lsn: Lsn(ckpt),
        }
        .encode(&mut b);
        f.write_all_at(&b, SLOT_OFFSETS[1]).expect("slot");
        let fr = format::encode_frame(Lsn(ckpt), 1, b"planted");
        f.write_all_at(&fr, format::file_offset(ckpt, cap))
            .expect("frame");
    }
    let log = Log::open(vfs(), dir.path(), cfg.clone()).expect("open");
    assert_eq!(log.capacity(), cap);
    assert_eq!(log.checkpoint_lsn(), Lsn(ckpt));
    let mut want = vec![(Lsn(ckpt), Lsn(ckpt + 19), b"planted".to_vec())];
    for i in 0..40 {
        let r = log.append(&payload(i, 200)).expect("append");
        want.push((r.start, r.end, payload(i, 200)));
    }
    assert!(
        log.current_lsn().0 > 4 * cap,
        "crossed the end of the circle"
    );
    log.shutdown();
    assert_eq!(frames(dir.path(), &cfg), want);
    let meta = std::fs::metadata(&path).expect("stat");
    assert_eq!(meta.len(), DATA_START + cap);
}
