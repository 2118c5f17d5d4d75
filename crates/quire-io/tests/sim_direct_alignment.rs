//! Files opened with `direct` get O_DIRECT's alignment rules, enforced like the OS does.

use std::path::Path;

use quire_io::sim::SimVfs;
use quire_io::{AlignedBuf, DirectIo, ErrorKind, OpenOptions, Vfs};

#[test]
fn direct_open_grants_the_configured_alignment() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/a"), OpenOptions::create_new().direct(true))
        .expect("a");
    assert_eq!(
        f.direct_io(),
        Some(DirectIo {
            mem_align: 512,
            offset_align: 512
        })
    );
    let g = vfs
        .open(Path::new("/b"), OpenOptions::create_new())
        .expect("b");
    assert_eq!(g.direct_io(), None);
    let vfs = SimVfs::new(0).with_direct_align(4096);
    let f = vfs
        .open(Path::new("/a"), OpenOptions::create_new().direct(true))
        .expect("a");
    assert_eq!(
        f.direct_io(),
        Some(DirectIo {
            mem_align: 4096,
            offset_align: 4096
        })
    );
}

#[test]
fn misaligned_direct_io_is_invalid_input_and_changes_nothing() {
    let vfs = SimVfs::new(0).with_direct_align(4096);
    let f = vfs
        .open(Path::new("/a"), OpenOptions::create_new().direct(true))
        .expect("a");
    let mut buf = AlignedBuf::zeroed(16384, 4096);
    buf.fill(5);
    f.write_all_at(&buf[..8192], 0).expect("aligned");
    let kind = |r: quire_io::Result<()>| r.expect_err("refused").kind;
    assert_eq!(
        kind(f.write_all_at(&buf[512..4608], 0)),
        ErrorKind::InvalidInput,
        "memory"
    );
    assert_eq!(
        kind(f.write_all_at(&buf[..4096], 512)),
        ErrorKind::InvalidInput,
        "offset"
    );
    assert_eq!(
        kind(f.write_all_at(&buf[..512], 0)),
        ErrorKind::InvalidInput,
        "length"
    );
    assert_eq!(
        kind(f.write_vectored_at(&[&buf[..4096], &buf[4096..4096 + 512]], 0)),
        ErrorKind::InvalidInput,
        "vectored segment length"
    );
    let mut rbuf = AlignedBuf::zeroed(8192, 4096);
    assert_eq!(
        kind(f.read_exact_at(&mut rbuf[..512], 0)),
        ErrorKind::InvalidInput
    );
    f.read_exact_at(&mut rbuf, 0).expect("aligned read");
    assert!(rbuf.iter().all(|&b| b == 5));
    assert_eq!(vfs.stats().writes, 1, "refused writes are not counted");
    assert_eq!(vfs.op_count(), 2, "create + one write");
}

#[test]
fn buffered_files_accept_any_alignment() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/a"), OpenOptions::create_new())
        .expect("a");
    f.write_all_at(b"xyz", 3).expect("write");
    let mut b = [0u8; 6];
    f.read_exact_at(&mut b, 0).expect("read");
    assert_eq!(&b, b"\0\0\0xyz");
}
