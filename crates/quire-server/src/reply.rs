//! The generic server replies: OK, ERR, EOF, and the length-encoded integers and strings
//! every other packet is made of.

use crate::errors::WireError;

/// `SERVER_STATUS_*` bits the server sets.
pub mod status {
    pub const IN_TRANS: u16 = 0x0001;
    pub const AUTOCOMMIT: u16 = 0x0002;
    /// Another result of the same multi-statement COM_QUERY follows.
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    /// sql_mode has NO_BACKSLASH_ESCAPES: a client that quotes values itself (PyMySQL,
    /// mysqlclient's `escape_string`) doubles quotes instead of backslashing them.
    pub const NO_BACKSLASH_ESCAPES: u16 = 0x0200;
}

pub fn put_lenenc_int(buf: &mut Vec<u8>, n: u64) {
    match n {
        0..=250 => buf.push(n as u8),
        251..=0xFFFF => {
            buf.push(0xFC);
            buf.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buf.push(0xFD);
            buf.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            buf.push(0xFE);
            buf.extend_from_slice(&n.to_le_bytes());
        }
    }
}

pub fn put_lenenc_str(buf: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(buf, s.len() as u64);
    buf.extend_from_slice(s);
}

/// What an OK packet reports.
#[derive(Debug, Clone, Default)]
pub struct OkInfo<'a> {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
    pub info: &'a str,
}

/// OK (header 0x00), or the OK that ends a result set under CLIENT_DEPRECATE_EOF
/// (header 0xFE).
pub fn ok_packet(ok: &OkInfo<'_>, header: u8) -> Vec<u8> {
    let mut buf = Vec::with_capacity(16 + ok.info.len());
    buf.push(header);
    put_lenenc_int(&mut buf, ok.affected_rows);
    put_lenenc_int(&mut buf, ok.last_insert_id);
    buf.extend_from_slice(&ok.status.to_le_bytes());
    buf.extend_from_slice(&ok.warnings.to_le_bytes());
    // The protocol documents the info as the rest of the packet, but MariaDB's server
    // writes it length-encoded (net_send_ok: net_store_data) and Connector/C reads it so:
    // a bare string is "malformed packet" (2027) to the mariadb client and sysbench.
    if !ok.info.is_empty() {
        put_lenenc_int(&mut buf, ok.info.len() as u64);
        buf.extend_from_slice(ok.info.as_bytes());
    }
    buf
}

/// The pre-DEPRECATE_EOF end of column definitions and rows.
pub fn eof_packet(status: u16, warnings: u16) -> Vec<u8> {
    let mut buf = vec![0xFE];
    buf.extend_from_slice(&warnings.to_le_bytes());
    buf.extend_from_slice(&status.to_le_bytes());
    buf
}

/// ERR. `with_state` is false only before the client has said it speaks the 4.1 protocol
/// (the 1040 sent in place of the greeting), when a client would read the marker as text.
pub fn err_packet(e: &WireError, with_state: bool) -> Vec<u8> {
    err_packet_in(e, with_state, crate::charset::WireCharset::Utf8)
}

/// An ERR packet whose message is in the client's `character_set_results` (MariaDB
/// converts its messages, which name the client's tables and values, to it).
pub fn err_packet_in(e: &WireError, with_state: bool, cs: crate::charset::WireCharset) -> Vec<u8> {
    let mut buf = Vec::with_capacity(9 + e.message.len());
    buf.push(0xFF);
    buf.extend_from_slice(&e.code.to_le_bytes());
    if with_state {
        buf.push(b'#');
        debug_assert_eq!(e.state.len(), 5);
        buf.extend_from_slice(e.state.as_bytes());
    }
    buf.extend_from_slice(&cs.encode(&e.message));
    buf
}

/// A reader over a command's payload that reports running off the end instead of
/// panicking: every field of a client packet is read through it.
pub struct Reader<'a> {
    buf: &'a [u8],
}

/// The packet ended early or holds an impossible value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.buf.len() < n {
            return Err(Malformed);
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
    pub fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub fn lenenc_int(&mut self) -> Result<u64, Malformed> {
        match self.u8()? {
            n @ 0..=250 => Ok(u64::from(n)),
            0xFC => Ok(u64::from(self.u16()?)),
            0xFD => {
                let b = self.bytes(3)?;
                Ok(u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16)
            }
            0xFE => self.u64(),
            // 0xFB is NULL and 0xFF an error marker: not lengths.
            _ => Err(Malformed),
        }
    }
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.lenenc_int()?;
        let n = usize::try_from(n).map_err(|_| Malformed)?;
        self.bytes(n)
    }
    /// A NUL-terminated string (the NUL is consumed), or the rest when there is none.
    pub fn null_terminated(&mut self) -> &'a [u8] {
        match self.buf.iter().position(|&b| b == 0) {
            Some(i) => {
                let s = &self.buf[..i];
                self.buf = &self.buf[i + 1..];
                s
            }
            None => self.rest(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_ints_roundtrip_at_every_width() {
        for n in [
            0,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_lenenc_int(&mut buf, n);
            let mut r = Reader::new(&buf);
            assert_eq!(r.lenenc_int(), Ok(n));
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn reader_reports_short_input_instead_of_panicking() {
        let mut r = Reader::new(&[0xFC, 1]);
        assert_eq!(r.lenenc_int(), Err(Malformed));
        let mut r = Reader::new(&[5, b'a']);
        assert_eq!(r.lenenc_bytes(), Err(Malformed));
        let mut r = Reader::new(&[0xFE, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(r.lenenc_bytes(), Err(Malformed));
    }

    #[test]
    fn ok_packet_layout() {
        let ok = OkInfo {
            affected_rows: 3,
            last_insert_id: 300,
            status: status::AUTOCOMMIT,
            warnings: 1,
            info: "hi",
        };
        assert_eq!(
            ok_packet(&ok, 0),
            [0, 3, 0xFC, 44, 1, 2, 0, 1, 0, 2, b'h', b'i']
        );
    }
}
