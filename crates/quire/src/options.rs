//! my.cnf-style option files (`quire serve --defaults-file=FILE`), read as MariaDB reads
//! them, so an existing configuration carries over.
//!
//! - Groups: `[mysqld]`, `[server]`, `[mariadb]`, `[mariadbd]`, their `-10.11` forms, and
//!   `[quire]`; other groups (`[client]`, `[mysqldump]`, …) belong to other programs.
//! - `name = value`, `name=value` or a bare `name` (ON); `#` and `;` start comments, also
//!   after a value when preceded by a space; quotes around a value are removed; `\n`, `\t`,
//!   `\\`, `\s` in unquoted values are escapes.
//! - Names take dashes or underscores alike. Prefixes: `loose-` (no error if unknown),
//!   `skip-` and `disable-` (OFF), `enable-` (ON), `maximum-` (ignored with a warning).
//! - `!include FILE` and `!includedir DIR` (its `*.cnf` files, in name order).
//! - Options apply in file order; the command line comes after the file and wins.

use std::path::{Path, PathBuf};

/// One option as the file gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// Lower case, underscores, prefixes applied.
    pub name: String,
    pub value: String,
    /// `FILE:LINE`, for messages.
    pub at: String,
    /// `loose-`: an unknown name is not worth a warning.
    pub loose: bool,
}

const SERVER_GROUPS: &[&str] = &[
    "mysqld",
    "server",
    "mariadb",
    "mariadbd",
    "mysqld-10.11",
    "server-10.11",
    "mariadb-10.11",
    "mariadbd-10.11",
    "quire",
];

/// The server's options in `path` (and what it includes), in file order.
pub fn read(path: &Path) -> Result<Vec<Opt>, String> {
    let mut out = Vec::new();
    read_into(path, &mut out, 0)?;
    Ok(out)
}

fn read_into(path: &Path, out: &mut Vec<Opt>, depth: usize) -> Result<(), String> {
    // MariaDB stops at 10 levels of !include; a loop must not hang the start.
    if depth > 10 {
        return Err(format!("{}: !include nested too deeply", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut in_server_group = false;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), i + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('!') {
            let (directive, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let arg = relative(path, arg.trim());
            match directive {
                "include" => read_into(&arg, out, depth + 1)?,
                "includedir" => {
                    let mut files: Vec<PathBuf> = std::fs::read_dir(&arg)
                        .map_err(|e| format!("{at}: {}: {e}", arg.display()))?
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                        .collect();
                    files.sort();
                    for f in files {
                        read_into(&f, out, depth + 1)?;
                    }
                }
                other => return Err(format!("{at}: unknown directive !{other}")),
            }
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            let Some(group) = group.strip_suffix(']') else {
                return Err(format!("{at}: a group header without ']': {line}"));
            };
            in_server_group = SERVER_GROUPS.contains(&group.trim().to_ascii_lowercase().as_str());
            continue;
        }
        if !in_server_group {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(value_of(v.trim()))),
            None => (strip_comment(line).trim(), None),
        };
        if name.is_empty() {
            return Err(format!("{at}: an option without a name: {line}"));
        }
        out.push(option(name, value, at));
    }
    Ok(())
}

/// A path in a directive is taken relative to the including file's directory.
fn relative(file: &Path, arg: &str) -> PathBuf {
    let p = PathBuf::from(arg);
    match file.parent() {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p,
    }
}

fn option(name: &str, value: Option<String>, at: String) -> Opt {
    let mut n = name.to_ascii_lowercase().replace('-', "_");
    let mut loose = false;
    if let Some(rest) = n.strip_prefix("loose_") {
        n = rest.to_string();
        loose = true;
    }
    let mut value = value;
    for (prefix, v) in [("skip_", "OFF"), ("disable_", "OFF"), ("enable_", "ON")] {
        // skip_name_resolve and friends are names of their own, not skip- of a name.
        if let Some(rest) = n.strip_prefix(prefix) {
            if !is_own_name(&n) {
                n = rest.to_string();
                value = Some(v.to_string());
            }
            break;
        }
    }
    Opt {
        name: n,
        value: value.unwrap_or_else(|| "ON".to_string()),
        at,
        loose,
    }
}

/// Option names that start like a prefix but are whole names.
fn is_own_name(n: &str) -> bool {
    matches!(
        n,
        "skip_name_resolve" | "skip_networking" | "skip_external_locking" | "skip_show_database"
    )
}

/// A value: quotes removed (its text kept as written), else escapes read and a trailing
/// comment dropped.
fn value_of(v: &str) -> String {
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q) {
            if let Some(end) = inner.find(q) {
                return inner[..end].to_string();
            }
        }
    }
    let v = strip_comment(v).trim_end();
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('s') => out.push(' '),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The text before a `#` or `;` comment that follows whitespace.
fn strip_comment(s: &str) -> &str {
    let b = s.as_bytes();
    for i in 1..b.len() {
        if (b[i] == b'#' || b[i] == b';') && b[i - 1].is_ascii_whitespace() {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("my.cnf");
        std::fs::write(&p, text).expect("write");
        read(&p)
            .expect("read")
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect()
    }

    #[test]
    fn server_groups_are_read_in_order_and_others_skipped() {
        let got = parse(
            "# a comment\n[client]\nport=1\n[mysqld]\nport = 3310\ninnodb-buffer-pool-size=1G\n\
             [mysqldump]\nquick\n[quire]\nport=3311  # ours\nskip-name-resolve\n",
        );
        assert_eq!(
            got,
            vec![
                ("port".into(), "3310".into()),
                ("innodb_buffer_pool_size".into(), "1G".into()),
                ("port".into(), "3311".into()),
                ("skip_name_resolve".into(), "ON".into()),
            ]
        );
    }

    #[test]
    fn prefixes_quotes_and_escapes_read_as_mariadb_reads_them() {
        let got = parse(
            "[mysqld]\nloose-innodb_doublewrite=OFF\nskip-innodb-doublewrite\nenable-x\n\
             sql_mode = \"STRICT_TRANS_TABLES,ANSI_QUOTES\" # why\nsocket='/tmp/a b.sock'\n\
             init_connect=a\\sb\n",
        );
        assert_eq!(
            got,
            vec![
                ("innodb_doublewrite".into(), "OFF".into()),
                ("innodb_doublewrite".into(), "OFF".into()),
                ("x".into(), "ON".into()),
                ("sql_mode".into(), "STRICT_TRANS_TABLES,ANSI_QUOTES".into()),
                ("socket".into(), "/tmp/a b.sock".into()),
                ("init_connect".into(), "a b".into()),
            ]
        );
    }

    #[test]
    fn includes_are_followed_and_loops_stop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let conf_d = dir.path().join("conf.d");
        std::fs::create_dir(&conf_d).expect("mkdir");
        std::fs::write(conf_d.join("b.cnf"), "[mysqld]\nport=2\n").expect("write");
        std::fs::write(conf_d.join("a.cnf"), "[mysqld]\nport=1\n").expect("write");
        std::fs::write(conf_d.join("skip.txt"), "[mysqld]\nport=9\n").expect("write");
        let main = dir.path().join("my.cnf");
        std::fs::write(&main, "[mysqld]\nport=0\n!includedir conf.d\n").expect("write");
        let ports: Vec<String> = read(&main)
            .expect("read")
            .into_iter()
            .map(|o| o.value)
            .collect();
        assert_eq!(ports, ["0", "1", "2"]);
        let looped = dir.path().join("loop.cnf");
        std::fs::write(&looped, "!include loop.cnf\n").expect("write");
        assert!(read(&looped).expect_err("loop").contains("nested"));
        let bad = dir.path().join("bad.cnf");
        std::fs::write(&bad, "[mysqld\n").expect("write");
        assert!(read(&bad).expect_err("bad").contains("bad.cnf:1"));
    }
}
