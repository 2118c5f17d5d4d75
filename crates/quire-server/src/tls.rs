//! TLS for client connections (docs/protocol.md, "TLS"): the server's rustls configuration,
//! loaded from `ssl_cert` / `ssl_key`, or from a self-signed pair made in the data directory
//! at the first start, as MySQL 8 does.
//!
//! Invariants:
//! 1. A certificate file is either absent or whole: each is written under a temporary
//!    name, fsynced, then renamed (and the directory fsynced), key first.
//! 2. The self-signed pair is made only when neither file exists; a lone file (a crash
//!    between the two renames, or an operator's mistake) is replaced as a pair, never paired
//!    with a new other half.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The files a self-signed setup lives in, inside the data directory.
pub const CERT_FILE: &str = "server-cert.pem";
pub const KEY_FILE: &str = "server-key.pem";
/// A copy of the certificate, for clients to verify the server with (`--ssl-ca`).
pub const CA_FILE: &str = "ca.pem";

/// The certificate's common name, after MySQL's own auto-generated one.
const COMMON_NAME: &str = "Quire_Server_Auto_Generated_Server_Certificate";

/// Loads a PEM certificate chain and private key into a rustls server configuration. The
/// error names the file and what is wrong with it.
pub fn load(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("ssl_cert {}: {e}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("ssl_cert {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "ssl_cert {}: no PEM certificate in it",
            cert.display()
        ));
    }
    let key_der =
        PrivateKeyDer::from_pem_file(key).map_err(|e| format!("ssl_key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map(Arc::new)
        .map_err(|e| {
            format!(
                "ssl_cert {} with ssl_key {}: {e}",
                cert.display(),
                key.display()
            )
        })
}

/// The self-signed pair in `dir`, made now if it is not there (invariant 2). Returns the
/// certificate's and the key's paths.
pub fn self_signed(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let cert = dir.join(CERT_FILE);
    let key = dir.join(KEY_FILE);
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let made = make_self_signed().map_err(|e| format!("making a TLS certificate: {e}"))?;
    let write = |path: &Path, text: &str, mode: u32| {
        write_whole(path, text.as_bytes(), mode).map_err(|e| format!("{}: {e}", path.display()))
    };
    // Key first: a certificate on disk always has its key beside it.
    write(&key, &made.key_pem, 0o600)?;
    write(&cert, &made.cert_pem, 0o644)?;
    write(&dir.join(CA_FILE), &made.cert_pem, 0o644)?;
    tracing::info!(
        "made a self-signed TLS certificate: {} (clients verify with --ssl-ca={})",
        cert.display(),
        dir.join(CA_FILE).display()
    );
    Ok((cert, key))
}

struct Made {
    cert_pem: String,
    key_pem: String,
}

fn make_self_signed() -> Result<Made, rcgen::Error> {
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, COMMON_NAME);
    params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    let key = rcgen::KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok(Made {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Writes `bytes` to `path` so that the file is either absent or whole (invariant 1).
fn write_whole(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let tmp = path.with_extension("pem.tmp");
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_pair_is_made_once_and_loads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = self_signed(dir.path()).expect("made");
        let first = fs::read(&cert).expect("cert");
        assert!(load(&cert, &key).is_ok());
        // The second start reuses it.
        let (cert2, _) = self_signed(dir.path()).expect("again");
        assert_eq!(fs::read(cert2).expect("cert"), first);
        assert_eq!(fs::read(dir.path().join(CA_FILE)).expect("ca"), first);
        let mode = fs::metadata(&key).expect("key").permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_lone_certificate_is_replaced_as_a_pair() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = self_signed(dir.path()).expect("made");
        let first = fs::read(&cert).expect("cert");
        fs::remove_file(&key).expect("rm key");
        let (cert, key) = self_signed(dir.path()).expect("remade");
        assert_ne!(fs::read(&cert).expect("cert"), first);
        assert!(load(&cert, &key).is_ok());
    }

    #[test]
    fn bad_files_are_named_in_the_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let junk = dir.path().join("junk.pem");
        fs::write(&junk, "not a certificate").expect("write");
        let (cert, key) = self_signed(dir.path()).expect("made");
        let e = load(&junk, &key).expect_err("junk cert");
        assert!(e.contains("junk.pem"), "{e}");
        let e = load(&cert, &junk).expect_err("junk key");
        assert!(e.contains("ssl_key") && e.contains("junk.pem"), "{e}");
        let e = load(&dir.path().join("missing.pem"), &key).expect_err("missing");
        assert!(e.contains("missing.pem"), "{e}");
    }
}
