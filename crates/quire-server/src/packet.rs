//! Packet framing: every message is one or more packets of a 3-byte little-endian length,
//! a 1-byte sequence id and the payload.
//!
//! ```text
//!   ┌──────────┬─────┬──────────────────────┐
//!   │ len (3B) │ seq │ payload (len bytes)  │   len < 0xFFFFFF: the last packet
//!   └──────────┴─────┴──────────────────────┘
//! ```
//!
//! Invariants:
//! 1. A payload of 0xFFFFFF bytes means "more follows": a message of n × 0xFFFFFF bytes ends
//!    with an empty packet, so a reader always stops at a packet shorter than 0xFFFFFF.
//! 2. Sequence ids count up by one (wrapping) across the packets of one exchange, in both
//!    directions; a command resets them to 0 ([`PacketIo::reset_seq`]).
//! 3. A message larger than `max_allowed_packet` is refused before its body is read, so a
//!    client cannot make the server allocate more than the limit.
//! 4. Writes go to a buffer, flushed at the end of each command and whenever it passes
//!    [`FLUSH_AT`]: a result set streams, never sits in memory whole.
//! 5. Reads go through a buffer of [`READ_AHEAD`] bytes only once read-ahead is on (after
//!    the handshake: a client sends its TLS ClientHello right behind its SslRequest, and
//!    those bytes belong to TLS, not to us). Then one `recv` usually brings a whole command
//!    (header and body) instead of two; a body larger than the buffer is read straight
//!    into the message. Nothing is buffered when the stream is handed out to change.

use std::io::{self, Read, Write};

/// The largest payload one packet carries.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// The write buffer is flushed to the socket past this size (rows stream in ~64 KiB writes).
pub const FLUSH_AT: usize = 64 * 1024;

/// Bytes one read may bring ahead of what the current message needs (invariant 5).
pub const READ_AHEAD: usize = 16 * 1024;

/// Why a packet could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The socket failed, timed out or was closed: nothing more can be said to the client.
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    /// A message over `max_allowed_packet` (error 1153, then the connection closes).
    #[error("packet of {len} bytes or more is over max_allowed_packet {max}")]
    TooLarge { len: usize, max: usize },
    /// A packet arrived with an unexpected sequence id (error 1156, then close).
    #[error("packet out of order: expected sequence id {expected}, got {got}")]
    OutOfOrder { expected: u8, got: u8 },
}

/// One connection's framed stream: reads whole messages, buffers writes.
pub struct PacketIo<S> {
    stream: S,
    seq: u8,
    wbuf: Vec<u8>,
    max_packet: usize,
    /// Read-ahead buffer (invariant 5): bytes `rstart..rend` are read and not yet used.
    /// Empty (no allocation) until read-ahead is turned on.
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    /// Bytes of messages read and written (headers included): `Bytes_received` and
    /// `Bytes_sent`, and a statement's `Bytes_sent` in the slow log.
    bytes_in: u64,
    bytes_out: u64,
}

impl<S: Read + Write> PacketIo<S> {
    pub fn new(stream: S, max_packet: usize) -> Self {
        PacketIo {
            stream,
            seq: 0,
            wbuf: Vec::with_capacity(FLUSH_AT + 1024),
            max_packet,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            bytes_in: 0,
            bytes_out: 0,
        }
    }

    /// Bytes read and written so far (headers included).
    pub fn bytes(&self) -> (u64, u64) {
        (self.bytes_in, self.bytes_out)
    }

    /// Turns read-ahead on (invariant 5): call once the handshake is over.
    pub fn read_ahead(&mut self) {
        if self.rbuf.is_empty() {
            self.rbuf = vec![0; READ_AHEAD];
        }
    }

    /// Fills `out` from the read-ahead buffer, then from the stream (invariant 5).
    fn read_exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        self.bytes_in += out.len() as u64;
        let have = (self.rend - self.rstart).min(out.len());
        out[..have].copy_from_slice(&self.rbuf[self.rstart..self.rstart + have]);
        self.rstart += have;
        if self.rstart == self.rend {
            (self.rstart, self.rend) = (0, 0);
        }
        let rest = &mut out[have..];
        if rest.is_empty() {
            return Ok(());
        }
        if rest.len() >= self.rbuf.len() {
            // Read-ahead off, or a body larger than the buffer: straight into the message.
            return self.stream.read_exact(rest);
        }
        // The buffer is empty here (what it held went into `out`): read at least `rest`.
        while self.rend < rest.len() {
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.rend += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        rest.copy_from_slice(&self.rbuf[..rest.len()]);
        self.rstart = rest.len();
        if self.rstart == self.rend {
            (self.rstart, self.rend) = (0, 0);
        }
        Ok(())
    }

    pub fn stream(&self) -> &S {
        &self.stream
    }

    /// The stream itself, to upgrade it to TLS in place: the sequence ids go on across
    /// the upgrade (docs/protocol.md, "TLS"). Nothing may be buffered either way then.
    pub fn stream_mut(&mut self) -> &mut S {
        debug_assert!(
            self.wbuf.is_empty() && self.rstart == self.rend,
            "unflushed writes or unread bytes across a stream change"
        );
        &mut self.stream
    }

    /// Reads and drops what the peer still sends, read-ahead first, for a connection that
    /// refused a message and is about to close (the rest of that message is never framed).
    /// `Ok(0)` at the end of the stream, as `Read::read`.
    pub fn discard_input(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        let buffered = self.rend - self.rstart;
        (self.rstart, self.rend) = (0, 0);
        if buffered > 0 {
            return Ok(buffered);
        }
        self.stream.read(scratch)
    }

    /// The next command starts a new exchange (invariant 2).
    pub fn reset_seq(&mut self) {
        self.seq = 0;
    }

    pub fn set_max_packet(&mut self, max: usize) {
        self.max_packet = max;
    }

    /// Reads one message, joining packets of 0xFFFFFF bytes (invariant 1).
    pub fn read_message(&mut self) -> Result<Vec<u8>, FrameError> {
        let mut msg = Vec::new();
        loop {
            let mut header = [0u8; 4];
            self.read_exact(&mut header)?;
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            let got = header[3];
            if got != self.seq {
                return Err(FrameError::OutOfOrder {
                    expected: self.seq,
                    got,
                });
            }
            self.seq = self.seq.wrapping_add(1);
            // Invariant 3: refuse before reading (or allocating for) the body.
            if msg.len() + len > self.max_packet {
                return Err(FrameError::TooLarge {
                    len: msg.len() + len,
                    max: self.max_packet,
                });
            }
            let start = msg.len();
            msg.resize(start + len, 0);
            self.read_exact(&mut msg[start..])?;
            if len < MAX_PAYLOAD {
                return Ok(msg);
            }
        }
    }

    /// Queues one message, split into packets of at most 0xFFFFFF bytes (invariant 1).
    pub fn write_message(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            // n <= 0xFFFFFF, so the three low bytes carry it whole.
            let len = n as u32;
            self.wbuf.extend_from_slice(&[
                len as u8,
                (len >> 8) as u8,
                (len >> 16) as u8,
                self.seq,
            ]);
            self.seq = self.seq.wrapping_add(1);
            self.bytes_out += 4 + n as u64;
            self.wbuf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if self.wbuf.len() >= FLUSH_AT {
                self.flush()?;
            }
            if n < MAX_PAYLOAD {
                return Ok(());
            }
        }
    }

    /// Sends everything queued.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            self.stream.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        self.stream.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream that reads from `input` and records what is written.
    struct Pipe {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }
    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }
    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn io(input: Vec<u8>, max: usize) -> PacketIo<Pipe> {
        PacketIo::new(
            Pipe {
                input: Cursor::new(input),
                output: Vec::new(),
            },
            max,
        )
    }

    fn roundtrip(len: usize) {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut w = io(Vec::new(), usize::MAX);
        w.write_message(&payload).unwrap();
        w.flush().unwrap();
        let wire = std::mem::take(&mut w.stream.output);
        let mut r = io(wire, usize::MAX);
        assert_eq!(r.read_message().unwrap(), payload);
    }

    #[test]
    fn small_message_is_one_packet() {
        let mut w = io(Vec::new(), 1024);
        w.write_message(b"abc").unwrap();
        w.flush().unwrap();
        assert_eq!(w.stream.output, [3, 0, 0, 0, b'a', b'b', b'c']);
    }

    #[test]
    fn large_messages_split_and_join_at_16_mib() {
        roundtrip(0);
        roundtrip(MAX_PAYLOAD - 1);
        roundtrip(MAX_PAYLOAD);
        roundtrip(MAX_PAYLOAD + 1);
        roundtrip(2 * MAX_PAYLOAD);
    }

    #[test]
    fn exact_multiple_of_max_payload_ends_with_an_empty_packet() {
        let mut w = io(Vec::new(), usize::MAX);
        w.write_message(&vec![7u8; MAX_PAYLOAD]).unwrap();
        w.flush().unwrap();
        let out = &w.stream.output;
        assert_eq!(out.len(), 4 + MAX_PAYLOAD + 4);
        assert_eq!(&out[4 + MAX_PAYLOAD..], &[0, 0, 0, 1]);
    }

    #[test]
    fn sequence_ids_count_up_and_mismatch_is_refused() {
        let mut r = io(vec![1, 0, 0, 0, 9, 1, 0, 0, 5, 8], 1024);
        assert_eq!(r.read_message().unwrap(), [9]);
        match r.read_message() {
            Err(FrameError::OutOfOrder {
                expected: 1,
                got: 5,
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn oversized_message_is_refused_before_its_body() {
        let mut r = io(vec![0xff, 0xff, 0x00, 0], 1000);
        assert!(matches!(
            r.read_message(),
            Err(FrameError::TooLarge {
                len: 0xffff,
                max: 1000
            })
        ));
    }

    #[test]
    fn a_refused_message_is_discarded_read_ahead_first_then_from_the_stream() {
        // The header of a 2000-byte message and the first bytes of its body arrive together.
        let mut input = vec![0xd0, 0x07, 0x00, 0];
        input.extend(vec![9u8; 2000]);
        let mut r = io(input, 1000);
        r.read_ahead();
        assert!(matches!(
            r.read_message(),
            Err(FrameError::TooLarge { len: 2000, .. })
        ));
        let mut scratch = [0u8; 512];
        let mut dropped = 0;
        loop {
            match r.discard_input(&mut scratch).unwrap() {
                0 => break,
                n => dropped += n,
            }
        }
        assert_eq!(dropped, 2000);
        // Nothing is left buffered: the stream may be handed out.
        let _ = r.stream_mut();
    }

    #[test]
    fn truncated_packet_is_an_io_error() {
        let mut r = io(vec![5, 0, 0, 0, 1, 2], 1000);
        assert!(matches!(r.read_message(), Err(FrameError::Io(_))));
        let mut r = io(vec![5, 0, 0, 0, 1, 2], 1000);
        r.read_ahead();
        assert!(matches!(r.read_message(), Err(FrameError::Io(_))));
    }

    /// A stream that hands out at most `step` bytes per read, counting the reads.
    struct Trickle {
        input: Cursor<Vec<u8>>,
        step: usize,
        reads: usize,
    }
    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            let n = buf.len().min(self.step);
            self.input.read(&mut buf[..n])
        }
    }
    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Messages as the wire has them, each starting its own exchange (sequence id 0).
    fn wire(payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            let mut w = io(Vec::new(), usize::MAX);
            w.write_message(p).unwrap();
            w.flush().unwrap();
            out.extend_from_slice(&w.stream.output);
        }
        out
    }

    #[test]
    fn read_ahead_gives_the_same_messages_whatever_the_reads_bring() {
        let payloads: Vec<Vec<u8>> = [0usize, 1, 5, 300, READ_AHEAD - 4, READ_AHEAD + 7, 3]
            .iter()
            .map(|&n| (0..n).map(|i| (i % 253) as u8).collect())
            .collect();
        let bytes = wire(&payloads);
        for step in [1, 3, 4, 5, 100, READ_AHEAD, usize::MAX] {
            let mut r = PacketIo::new(
                Trickle {
                    input: Cursor::new(bytes.clone()),
                    step,
                    reads: 0,
                },
                usize::MAX,
            );
            r.read_ahead();
            for p in &payloads {
                r.reset_seq();
                assert_eq!(&r.read_message().unwrap(), p, "step {step}");
            }
            r.reset_seq();
            assert!(
                matches!(r.read_message(), Err(FrameError::Io(_))),
                "the end of the stream"
            );
        }
    }

    #[test]
    fn with_read_ahead_a_small_command_takes_one_read() {
        let bytes = wire(&[b"SELECT 1".to_vec(), b"SELECT 2".to_vec()]);
        let mut r = PacketIo::new(
            Trickle {
                input: Cursor::new(bytes.clone()),
                step: usize::MAX,
                reads: 0,
            },
            1024,
        );
        r.read_ahead();
        assert_eq!(r.read_message().unwrap(), b"SELECT 1");
        assert_eq!(r.stream.reads, 1, "header and body in one read");
        r.reset_seq();
        assert_eq!(r.read_message().unwrap(), b"SELECT 2");
        assert_eq!(r.stream.reads, 1, "the second came with the first");
        // Without read-ahead (the handshake), nothing is read past the message.
        let mut r = PacketIo::new(
            Trickle {
                input: Cursor::new(bytes),
                step: usize::MAX,
                reads: 0,
            },
            1024,
        );
        assert_eq!(r.read_message().unwrap(), b"SELECT 1");
        assert_eq!(r.stream.input.position(), 12);
    }
}
