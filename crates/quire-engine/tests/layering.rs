//! The engine's modules form layers; a lower layer never uses an upper one (BRIEF,
//! "Architecture"). This test reads the sources and fails on any `crate::<upper>` path in a
//! lower module, so the rule holds without relying on review.

use std::fs;
use std::path::{Path, PathBuf};

/// Bottom-up. Keep in sync with the table in src/lib.rs.
const LAYERS: &[&str] = &[
    "hash",
    "page",
    "row",
    "lock",
    "space",
    "buffer",
    "log",
    "mtr",
    "doublewrite",
    "alloc",
    "btree",
    "catalog",
    "recovery",
    "check",
    "config",
    "engine",
    "undo",
    "trx",
    "table",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn layer_of(src: &Path, root: &Path) -> Option<usize> {
    let rel = src.strip_prefix(root).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    LAYERS.iter().position(|l| *l == name)
}

#[test]
fn lower_layers_never_use_upper_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut violations = Vec::new();
    for f in &files {
        let Some(me) = layer_of(f, &root) else {
            continue;
        };
        let text = fs::read_to_string(f).expect("read source");
        for (i, line) in text.lines().enumerate() {
            for (j, upper) in LAYERS.iter().enumerate().skip(me + 1) {
                let uses = line.contains(&format!("crate::{upper}::"))
                    || line.contains(&format!("crate::{upper};"))
                    || line.contains(&format!("crate::{{{upper}"))
                    || line.contains(&format!(", {upper}::"));
                if uses && line.contains("crate::") {
                    violations.push(format!(
                        "{}:{}: layer `{}` uses upper layer `{}`: {}",
                        f.display(),
                        i + 1,
                        LAYERS[me],
                        LAYERS[j],
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_module_is_assigned_a_layer() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    for line in lib.lines() {
        if let Some(m) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            assert!(LAYERS.contains(&m), "module `{m}` is missing from LAYERS");
        }
    }
}
