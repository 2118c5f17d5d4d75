//! Functions of everyday applications that fit no other family: the IP address functions
//! (INET_ATON, INET_NTOA, INET6_ATON, INET6_NTOA, IS_IPV4, IS_IPV6, IS_IPV4_COMPAT,
//! IS_IPV4_MAPPED), MAKE_SET, EXPORT_SET, PASSWORD, UUID_SHORT and CONVERT_TZ (offsets
//! only: Quire has no time zone tables), with MariaDB 10.11's
//! answers (NULL for what it cannot read, never an error).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use quire_engine::row::Value;

use crate::error::Result;
use crate::expr::Env;

/// The functions of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MiscFn {
    InetAton,
    InetNtoa,
    Inet6Aton,
    Inet6Ntoa,
    IsIpv4,
    IsIpv6,
    IsIpv4Compat,
    IsIpv4Mapped,
    MakeSet,
    ExportSet,
    Password,
    /// ED25519_PASSWORD(pw): the value `IDENTIFIED VIA ed25519 USING '…'` takes (MariaDB's
    /// auth_ed25519 plugin adds it as a UDF; Quire has the plugin built in, and so this).
    Ed25519Password,
    UuidShort,
    ConvertTz,
}

impl MiscFn {
    /// The function called `name`, with its least and most argument counts.
    pub fn by_name(name: &str) -> Option<(MiscFn, usize, usize)> {
        Some(match name {
            "inet_aton" => (MiscFn::InetAton, 1, 1),
            "inet_ntoa" => (MiscFn::InetNtoa, 1, 1),
            "inet6_aton" => (MiscFn::Inet6Aton, 1, 1),
            "inet6_ntoa" => (MiscFn::Inet6Ntoa, 1, 1),
            "is_ipv4" => (MiscFn::IsIpv4, 1, 1),
            "is_ipv6" => (MiscFn::IsIpv6, 1, 1),
            "is_ipv4_compat" => (MiscFn::IsIpv4Compat, 1, 1),
            "is_ipv4_mapped" => (MiscFn::IsIpv4Mapped, 1, 1),
            "make_set" => (MiscFn::MakeSet, 2, usize::MAX),
            "export_set" => (MiscFn::ExportSet, 3, 5),
            "password" => (MiscFn::Password, 1, 1),
            "ed25519_password" => (MiscFn::Ed25519Password, 1, 1),
            "uuid_short" => (MiscFn::UuidShort, 0, 0),
            "convert_tz" => (MiscFn::ConvertTz, 3, 3),
            _ => return None,
        })
    }
}

fn text(v: &Value) -> String {
    crate::types::to_text(v.clone())
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => text(other).into_bytes(),
    }
}

fn flag(b: bool) -> Value {
    Value::Int(i64::from(b))
}

pub fn eval(f: MiscFn, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let a = |i: usize| args.get(i).unwrap_or(&Value::Null);
    // MAKE_SET skips NULL strings; the others are NULL for a NULL argument (IS_* are 0).
    Ok(match f {
        MiscFn::UuidShort => Value::UInt(uuid_short()),
        MiscFn::MakeSet => {
            let Some(bits) = crate::func::cast::to_int(a(0), env) else {
                return Ok(Value::Null);
            };
            let bits = bits as u64;
            let picked: Vec<String> = args[1..]
                .iter()
                .enumerate()
                .filter(|(i, v)| *i < 64 && bits >> i & 1 == 1 && !matches!(v, Value::Null))
                .map(|(_, v)| text(v))
                .collect();
            Value::Str(picked.join(","))
        }
        _ if matches!(a(0), Value::Null) => match f {
            MiscFn::IsIpv4 | MiscFn::IsIpv6 | MiscFn::IsIpv4Compat | MiscFn::IsIpv4Mapped => {
                flag(false)
            }
            MiscFn::Password => Value::Str(String::new()),
            _ => Value::Null,
        },
        MiscFn::ConvertTz => {
            if args.iter().any(|v| matches!(v, Value::Null)) {
                return Ok(Value::Null);
            }
            // A named zone needs the time zone tables, which Quire (as a MariaDB without
            // them loaded) does not have: NULL.
            let (Some(from), Some(to)) = (tz_offset(&text(a(1))), tz_offset(&text(a(2)))) else {
                return Ok(Value::Null);
            };
            let zeros = crate::func::datetime::Zeros::Allowed;
            let Some(t) = crate::func::datetime::to_datetime(a(0), env, zeros) else {
                return Ok(Value::Null);
            };
            let local = crate::func::datetime::to_unix_us(&t.dt);
            let utc = local - from * 1_000_000;
            // Outside the TIMESTAMP range MariaDB gives the value back unconverted.
            if !(1_000_000..=2_147_483_647_000_000).contains(&utc) {
                return Ok(Value::DateTime(t.dt));
            }
            Value::DateTime(crate::func::datetime::from_unix_us(utc + to * 1_000_000))
        }
        MiscFn::InetAton => inet_aton(&text(a(0))).map_or(Value::Null, Value::UInt),
        MiscFn::InetNtoa => match crate::func::cast::to_int(a(0), env) {
            Some(n) if (0..=i128::from(u32::MAX)).contains(&n) => {
                Value::Str(Ipv4Addr::from(n as u32).to_string())
            }
            _ => Value::Null,
        },
        MiscFn::Inet6Aton => {
            let s = text(a(0));
            if let Some(v4) = ipv4(&s) {
                Value::Bytes(v4.octets().to_vec())
            } else if let Some(v6) = ipv6(&s) {
                Value::Bytes(v6.octets().to_vec())
            } else {
                Value::Null
            }
        }
        MiscFn::Inet6Ntoa => {
            let Value::Bytes(b) = a(0) else {
                return Ok(Value::Null);
            };
            match b.len() {
                4 => Value::Str(Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
                16 => {
                    let mut o = [0u8; 16];
                    o.copy_from_slice(b);
                    Value::Str(inet6_text(&o))
                }
                _ => Value::Null,
            }
        }
        MiscFn::IsIpv4 => flag(ipv4(&text(a(0))).is_some()),
        MiscFn::IsIpv6 => flag(ipv6(&text(a(0))).is_some()),
        MiscFn::IsIpv4Compat => {
            let b = bytes(a(0));
            flag(b.len() == 16 && b[..12].iter().all(|&x| x == 0) && b[12..] != [0, 0, 0, 0])
        }
        MiscFn::IsIpv4Mapped => {
            let b = bytes(a(0));
            flag(b.len() == 16 && b[..10].iter().all(|&x| x == 0) && b[10..12] == [0xff, 0xff])
        }
        MiscFn::ExportSet => {
            let Some(bits) = crate::func::cast::to_int(a(0), env) else {
                return Ok(Value::Null);
            };
            if args.iter().any(|v| matches!(v, Value::Null)) {
                return Ok(Value::Null);
            }
            let (on, off) = (text(a(1)), text(a(2)));
            let sep = if args.len() > 3 {
                text(a(3))
            } else {
                ",".into()
            };
            let n = match args.get(4) {
                Some(v) => match crate::func::cast::to_int(v, env) {
                    Some(n) if (0..=64).contains(&n) => n as usize,
                    _ => 64,
                },
                None => 64,
            };
            let bits = bits as u64;
            let parts: Vec<&str> = (0..n)
                .map(|i| {
                    if bits >> i & 1 == 1 {
                        on.as_str()
                    } else {
                        off.as_str()
                    }
                })
                .collect();
            Value::Str(parts.join(&sep))
        }
        MiscFn::Ed25519Password => Value::Bytes(crate::acl::ed25519_hash(&text(a(0))).into_bytes()),
        MiscFn::Password => {
            // MariaDB: PASSWORD(NULL) is '' too.
            let pw = match a(0) {
                Value::Null => Vec::new(),
                v => bytes(v),
            };
            if pw.is_empty() {
                Value::Str(String::new())
            } else {
                use sha1::Digest;
                let twice = sha1::Sha1::digest(sha1::Sha1::digest(&pw));
                let hex: String = twice.iter().map(|b| format!("{b:02X}")).collect();
                Value::Str(format!("*{hex}"))
            }
        }
    })
}

/// MariaDB's INET_ATON: up to four dot-separated numbers of at most 255; a short form
/// (`127.1`) puts its last number in the low byte.
fn inet_aton(s: &str) -> Option<u64> {
    let (mut result, mut byte, mut dots) = (0u64, 0u64, 0u32);
    let mut last = None;
    for c in s.chars() {
        match c {
            '0'..='9' => {
                byte = byte * 10 + u64::from(c as u8 - b'0');
                if byte > 255 {
                    return None;
                }
            }
            '.' => {
                // No limit on the parts: MariaDB shifts on (`1.2.3.4.5` is 4328719365).
                dots += 1;
                result = (result << 8) + byte;
                byte = 0;
            }
            _ => return None,
        }
        last = Some(c);
    }
    match last {
        None | Some('.') => None,
        Some(_) => {
            let shift = match dots {
                1 => 16,
                2 => 8,
                _ => 0,
            };
            Some(((result << shift) << 8) + byte)
        }
    }
}

/// A time zone as an offset from UTC in seconds (`tz.rs`): SYSTEM (UTC), UTC, or an
/// offset as MariaDB reads one. `None`: anything else (a named zone, which needs the time
/// zone tables).
pub fn tz_offset(s: &str) -> Option<i64> {
    crate::tz::Zone::parse(s).map(crate::tz::Zone::offset_s)
}

/// A dotted quad, as INET6_ATON and IS_IPV4 read one (four numbers, no short form).
fn ipv4(s: &str) -> Option<Ipv4Addr> {
    s.parse().ok()
}

fn ipv6(s: &str) -> Option<Ipv6Addr> {
    s.parse().ok()
}

/// INET6_NTOA's text: IPv4-compatible (`::1.2.3.4`) and IPv4-mapped (`::ffff:1.2.3.4`)
/// addresses end in their dotted quad, as MariaDB writes them; the rest as RFC 5952.
fn inet6_text(o: &[u8; 16]) -> String {
    let v4 = || Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let zeros10 = o[..10].iter().all(|&x| x == 0);
    if zeros10 && o[10..12] == [0xff, 0xff] {
        return format!("::ffff:{}", v4());
    }
    if zeros10 && o[10..12] == [0, 0] && o[12..14] != [0, 0] {
        return format!("::{}", v4());
    }
    Ipv6Addr::from(*o).to_string()
}

/// UUID_SHORT(): MariaDB's `(server_id & 255) << 56 | server start seconds << 24`, plus one
/// per call. Quire's server_id is 1.
fn uuid_short() -> u64 {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        AtomicU64::new((1u64 << 56) | ((start & 0xFF_FFFF_FFFF) << 24))
    });
    next.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_zone_offsets_are_read_within_mariadbs_range() {
        assert_eq!(tz_offset("SYSTEM"), Some(0));
        assert_eq!(tz_offset("+00:00"), Some(0));
        assert_eq!(tz_offset("+5:30"), Some(19_800));
        assert_eq!(tz_offset("-12:59"), Some(-46_740));
        assert_eq!(tz_offset("+13:00"), Some(46_800));
        assert_eq!(tz_offset("utc"), Some(0));
        for bad in [
            "+13:01",
            "-13:00",
            "+01:60",
            "Europe/Berlin",
            "+1",
            "1:00",
            "",
        ] {
            assert_eq!(tz_offset(bad), None, "{bad}");
        }
    }

    #[test]
    fn inet_aton_reads_short_forms_as_mariadb() {
        assert_eq!(inet_aton("10.0.0.1"), Some(167_772_161));
        assert_eq!(inet_aton("127.1"), Some(2_130_706_433));
        assert_eq!(inet_aton("1.2.3"), Some(0x0102_0003));
        assert_eq!(inet_aton("1.2.3.4.5"), Some(4_328_719_365));
        assert_eq!(inet_aton("256.1.1.1"), None);
        assert_eq!(inet_aton("1.2."), None);
        assert_eq!(inet_aton(""), None);
    }
}
