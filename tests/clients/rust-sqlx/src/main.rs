//! A scripted session of sqlx's MySQL driver against a MySQL-protocol server (issue 17).
//!
//! ```text
//! cargo run -- --port 3307
//! ```
//!
//! sqlx runs every query with arguments as a server-side prepared statement (it has no
//! client-side interpolation); `raw_sql` runs text without arguments through COM_QUERY, which
//! is how the text protocol's decoding is checked. Every result is checked exactly; the first
//! mismatch exits 1 with what differed. Passes against MariaDB 10.11, which is how the
//! expectations were checked.

use std::fmt::Debug;
use std::str::FromStr;
use std::time::{Duration, Instant};

use bigdecimal::BigDecimal;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use futures_util::TryStreamExt;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection, MySqlDatabaseError, MySqlRow};
use sqlx::{AssertSqlSafe, Connection, Row};

const BLOB_LEN: usize = 4 * 1024 * 1024;
const STREAM_ROWS: i64 = 100_000;

const TABLE: &str = "CREATE TABLE t (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64),
  amount DECIMAL(20,6),
  big_dec DECIMAL(38,30),
  d DATE,
  dt DATETIME(6),
  ts TIMESTAMP NULL,
  dbl DOUBLE,
  u64 BIGINT UNSIGNED,
  data LONGBLOB,
  note TEXT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

const COLS: &str = "name, amount, big_dec, d, dt, ts, dbl, u64, data, note";

/// One row of `t`; `None` is NULL.
#[derive(Debug, Clone, PartialEq)]
struct TRow {
    name: Option<String>,
    amount: Option<BigDecimal>,
    big_dec: Option<BigDecimal>,
    d: Option<NaiveDate>,
    dt: Option<NaiveDateTime>,
    ts: Option<DateTime<Utc>>,
    dbl: Option<f64>,
    u64: Option<u64>,
    data: Option<Vec<u8>>,
    note: Option<String>,
}

struct Mismatch(String);
type Res<T> = Result<T, Mismatch>;

impl From<sqlx::Error> for Mismatch {
    fn from(e: sqlx::Error) -> Self {
        Mismatch(format!("unexpected error: {e}"))
    }
}

fn check<T: PartialEq + Debug>(what: &str, got: T, want: T) -> Res<()> {
    if got == want {
        Ok(())
    } else {
        Err(Mismatch(format!("{what}: got {got:?}, want {want:?}")))
    }
}

fn dec(s: &str) -> BigDecimal {
    BigDecimal::from_str(s).expect("a decimal literal")
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a date")
}

fn datetime(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> NaiveDateTime {
    date(y, mo, d)
        .and_hms_micro_opt(h, mi, s, us)
        .expect("a time")
}

/// The rows every driver's session writes and reads back (the same values in each language).
fn rows() -> Vec<TRow> {
    vec![
        TRow {
            name: Some("alpha".into()),
            amount: Some(dec("12345678901234.123456")),
            big_dec: Some(dec("99999999.999999999999999999999999999999")),
            d: Some(date(2024, 2, 29)),
            dt: Some(datetime(2024, 2, 29, 12, 34, 56, 789012)),
            ts: Some(datetime(2024, 2, 29, 23, 59, 59, 0).and_utc()),
            dbl: Some(0.1),
            u64: Some(18446744073709551615),
            data: Some((0..=255).collect()),
            note: Some("Grüße, 日本語, emoji 🎉, ñ".into()),
        },
        TRow {
            name: Some("beta".into()),
            amount: Some(dec("-99999999999999.999999")),
            big_dec: Some(dec("-0.000000000000000000000000000001")),
            d: Some(date(1000, 1, 1)),
            dt: Some(datetime(1000, 1, 1, 0, 0, 0, 0)),
            ts: Some(datetime(1970, 1, 1, 0, 0, 1, 0).and_utc()),
            dbl: Some(-1.7976931348623157e308),
            u64: Some(0),
            data: Some(Vec::new()),
            note: Some(String::new()),
        },
        TRow {
            name: Some("gamma".into()),
            amount: Some(dec("0.000001")),
            big_dec: Some(dec("3.141592653589793238462643383279")),
            d: Some(date(9999, 12, 31)),
            dt: Some(datetime(9999, 12, 31, 23, 59, 59, 999999)),
            ts: Some(datetime(2038, 1, 19, 3, 14, 7, 0).and_utc()),
            dbl: Some(5e-324),
            u64: Some(9223372036854775808),
            data: Some(b"\x00'\"\\\n\r\x1a%_".to_vec()),
            note: Some("it's \"quoted\" \\ back\nslash ?".into()),
        },
        TRow {
            name: None,
            amount: None,
            big_dec: None,
            d: None,
            dt: None,
            ts: None,
            dbl: None,
            u64: None,
            data: None,
            note: None,
        },
    ]
}

fn read_row(r: &MySqlRow) -> Res<(i32, TRow)> {
    Ok((
        r.try_get("id")?,
        TRow {
            name: r.try_get("name")?,
            amount: r.try_get("amount")?,
            big_dec: r.try_get("big_dec")?,
            d: r.try_get("d")?,
            dt: r.try_get("dt")?,
            ts: r.try_get("ts")?,
            dbl: r.try_get("dbl")?,
            u64: r.try_get("u64")?,
            data: r.try_get("data")?,
            note: r.try_get("note")?,
        },
    ))
}

/// Decimals compare by value and by scale (the text the server sent).
fn same_row(what: &str, got: &TRow, want: &TRow) -> Res<()> {
    for (col, g, w) in [
        ("amount", &got.amount, &want.amount),
        ("big_dec", &got.big_dec, &want.big_dec),
    ] {
        check(
            &format!("{what} column {col}"),
            g.as_ref().map(|d| d.to_string()),
            w.as_ref().map(|d| d.to_string()),
        )?;
    }
    if got.data.as_ref().map(Vec::len) != want.data.as_ref().map(Vec::len) || got.data != want.data
    {
        return Err(Mismatch(format!(
            "{what} column data: got {:?}, want {:?}",
            got.data, want.data
        )));
    }
    check(what, got, want)
}

fn blob_bytes(n: usize) -> Vec<u8> {
    // A 32-bit LCG, the same in every language's session.
    let mut state: u32 = 1;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1103515245).wrapping_add(12345);
            (state >> 16) as u8
        })
        .collect()
}

async fn round_trip(c: &mut MySqlConnection) -> Res<()> {
    sqlx::raw_sql("DELETE FROM t").execute(&mut *c).await?;
    let mut ids = Vec::new();
    let insert = format!("INSERT INTO t ({COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for r in rows() {
        let res = sqlx::query(AssertSqlSafe(insert.as_str()))
            .bind(r.name.clone())
            .bind(r.amount.clone())
            .bind(r.big_dec.clone())
            .bind(r.d)
            .bind(r.dt)
            .bind(r.ts)
            .bind(r.dbl)
            .bind(r.u64)
            .bind(r.data.clone())
            .bind(r.note.clone())
            .execute(&mut *c)
            .await?;
        check("insert rows affected", res.rows_affected(), 1)?;
        let id = res.last_insert_id();
        if ids.last().is_some_and(|&l| id <= l) {
            return Err(Mismatch(format!(
                "auto-increment ids not increasing: {ids:?} then {id}"
            )));
        }
        ids.push(id);
    }
    let select = format!("SELECT id, {COLS} FROM t WHERE id = ?");
    for (id, want) in ids.iter().zip(rows()) {
        let row = sqlx::query(AssertSqlSafe(select.as_str()))
            .bind(*id)
            .fetch_one(&mut *c)
            .await?;
        let (got_id, got) = read_row(&row)?;
        check("row id", got_id as u64, *id)?;
        same_row(&format!("row {id}"), &got, &want)?;
    }
    // The same rows through the text protocol (raw_sql: COM_QUERY, no arguments).
    let text = sqlx::raw_sql(AssertSqlSafe(format!(
        "SELECT id, {COLS} FROM t ORDER BY id"
    )))
    .fetch_all(&mut *c)
    .await?;
    check("text row count", text.len(), rows().len())?;
    for ((row, id), want) in text.iter().zip(&ids).zip(rows()) {
        let (got_id, got) = read_row(row)?;
        check("text row id", got_id as u64, *id)?;
        same_row(&format!("text row {id}"), &got, &want)?;
    }
    // By a temporal, a DECIMAL, an unsigned and a NULL parameter.
    let id = |r: MySqlRow| r.try_get::<i32, _>(0).map(|i| i as u64);
    let q = |sql| sqlx::query(sql);
    check(
        "select by date",
        id(q("SELECT id FROM t WHERE d = ?")
            .bind(date(2024, 2, 29))
            .fetch_one(&mut *c)
            .await?)?,
        ids[0],
    )?;
    check(
        "select by datetime(6)",
        id(q("SELECT id FROM t WHERE dt = ?")
            .bind(datetime(9999, 12, 31, 23, 59, 59, 999999))
            .fetch_one(&mut *c)
            .await?)?,
        ids[2],
    )?;
    check(
        "select by decimal",
        id(q("SELECT id FROM t WHERE amount = ?")
            .bind(dec("-99999999999999.999999"))
            .fetch_one(&mut *c)
            .await?)?,
        ids[1],
    )?;
    check(
        "select by u64",
        id(q("SELECT id FROM t WHERE u64 = ?")
            .bind(u64::MAX)
            .fetch_one(&mut *c)
            .await?)?,
        ids[0],
    )?;
    check(
        "select null-safe",
        id(q("SELECT id FROM t WHERE name <=> ?")
            .bind(None::<String>)
            .fetch_one(&mut *c)
            .await?)?,
        ids[3],
    )?;
    let dbl: f64 = q("SELECT dbl FROM t WHERE dbl < ?")
        .bind(-1e308)
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    check("select by double", dbl, -1.7976931348623157e308)?;
    check(
        "select by timestamp",
        id(q("SELECT id FROM t WHERE ts = ?")
            .bind(datetime(2038, 1, 19, 3, 14, 7, 0).and_utc())
            .fetch_one(&mut *c)
            .await?)?,
        ids[2],
    )?;
    Ok(())
}

async fn count(c: &mut MySqlConnection, name: &str) -> Res<i64> {
    Ok(sqlx::query("SELECT COUNT(*) FROM t WHERE name = ?")
        .bind(name)
        .fetch_one(c)
        .await?
        .try_get(0)?)
}

async fn transactions(opts: &MySqlConnectOptions) -> Res<()> {
    let mut a = MySqlConnection::connect_with(opts).await?;
    let mut b = MySqlConnection::connect_with(opts).await?;
    let mut tx = a.begin().await?;
    sqlx::query("INSERT INTO t (name) VALUES (?)")
        .bind("txn-commit")
        .execute(&mut *tx)
        .await?;
    check(
        "uncommitted row seen by another connection",
        count(&mut b, "txn-commit").await?,
        0,
    )?;
    tx.commit().await?;
    check(
        "committed row seen by another connection",
        count(&mut b, "txn-commit").await?,
        1,
    )?;
    let mut tx = a.begin().await?;
    sqlx::query("INSERT INTO t (name) VALUES (?)")
        .bind("txn-rollback")
        .execute(&mut *tx)
        .await?;
    check(
        "own uncommitted row",
        count(&mut tx, "txn-rollback").await?,
        1,
    )?;
    tx.rollback().await?;
    check(
        "rolled-back row, other connection",
        count(&mut b, "txn-rollback").await?,
        0,
    )?;
    check(
        "rolled-back row, own connection",
        count(&mut a, "txn-rollback").await?,
        0,
    )?;
    a.close().await?;
    b.close().await?;
    Ok(())
}

fn expect_error<T: Debug>(
    what: &str,
    r: Result<T, sqlx::Error>,
    number: u16,
    state: &str,
    message: &str,
) -> Res<()> {
    match r {
        Err(sqlx::Error::Database(e)) => {
            let e = e.downcast_ref::<MySqlDatabaseError>();
            check(&format!("{what} error number"), e.number(), number)?;
            check(&format!("{what} SQLSTATE"), e.code(), Some(state))?;
            check(&format!("{what} message"), e.message(), message)
        }
        other => Err(Mismatch(format!(
            "{what}: got {other:?}, want error {number}"
        ))),
    }
}

async fn errors(c: &mut MySqlConnection, opts: &MySqlConnectOptions) -> Res<()> {
    let ins = "INSERT INTO t (id, name) VALUES (?, ?)";
    sqlx::query(ins)
        .bind(1_000_000)
        .bind("dup")
        .execute(&mut *c)
        .await?;
    let r = sqlx::query(ins)
        .bind(1_000_000)
        .bind("dup2")
        .execute(&mut *c)
        .await;
    expect_error(
        "duplicate key",
        r,
        1062,
        "23000",
        "Duplicate entry '1000000' for key 'PRIMARY'",
    )?;
    let name = "SELECT name FROM t WHERE id = ?";
    let got: String = sqlx::query(name)
        .bind(1_000_000)
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    check("row after 1062", got.as_str(), "dup")?;

    let mut a = MySqlConnection::connect_with(opts).await?;
    let mut b = MySqlConnection::connect_with(opts).await?;
    let mut ta = a.begin().await?;
    let got: String = sqlx::query("SELECT name FROM t WHERE id = ? FOR UPDATE")
        .bind(1_000_000)
        .fetch_one(&mut *ta)
        .await?
        .try_get(0)?;
    check("lock holder", got.as_str(), "dup")?;
    sqlx::raw_sql("SET innodb_lock_wait_timeout=1")
        .execute(&mut b)
        .await?;
    let mut tb = b.begin().await?;
    let start = Instant::now();
    let r = sqlx::query("UPDATE t SET name = ? WHERE id = ?")
        .bind("blocked")
        .bind(1_000_000)
        .execute(&mut *tb)
        .await;
    let waited = start.elapsed();
    expect_error(
        "lock wait timeout",
        r,
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )?;
    if waited < Duration::from_millis(900) || waited > Duration::from_secs(10) {
        return Err(Mismatch(format!(
            "lock wait lasted {waited:?}, want about 1 s"
        )));
    }
    tb.rollback().await?;
    ta.rollback().await?;
    let got: String = sqlx::query(name)
        .bind(1_000_000)
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    check("row unchanged after timeout", got.as_str(), "dup")?;
    a.close().await?;
    b.close().await?;
    Ok(())
}

async fn big_blob(c: &mut MySqlConnection) -> Res<()> {
    let limit: u64 = sqlx::query("SELECT @@max_allowed_packet")
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    // A prepared statement sends the blob as is, in one packet of its size plus a header.
    if limit < BLOB_LEN as u64 + 1024 {
        return Err(Mismatch(format!(
            "max_allowed_packet {limit} is below the 4 MiB blob"
        )));
    }
    let data = blob_bytes(BLOB_LEN);
    let res = sqlx::query("INSERT INTO t (name, data) VALUES (?, ?)")
        .bind("blob")
        .bind(&data)
        .execute(&mut *c)
        .await?;
    let id = res.last_insert_id();
    let n: i64 = sqlx::query("SELECT LENGTH(data) FROM t WHERE id = ?")
        .bind(id)
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    check("blob length on the server", n, BLOB_LEN as i64)?;
    let got: Vec<u8> = sqlx::query("SELECT data FROM t WHERE id = ?")
        .bind(id)
        .fetch_one(&mut *c)
        .await?
        .try_get(0)?;
    if got != data {
        return Err(Mismatch(format!(
            "4 MiB blob differs: {} bytes read",
            got.len()
        )));
    }
    Ok(())
}

async fn stream(c: &mut MySqlConnection) -> Res<()> {
    sqlx::raw_sql(
        "CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(32), v DECIMAL(12,2)) ENGINE=InnoDB",
    )
    .execute(&mut *c)
    .await?;
    sqlx::raw_sql(AssertSqlSafe(format!(
        "INSERT INTO big SELECT seq, CONCAT('row-', seq), seq / 100 FROM seq_1_to_{STREAM_ROWS}"
    )))
    .execute(&mut *c)
    .await?;
    // fetch() yields rows as they are read off the socket.
    let mut rows = sqlx::query("SELECT id, s, v FROM big WHERE id > ? ORDER BY id")
        .bind(0)
        .fetch(&mut *c);
    let mut n: i64 = 0;
    let mut crc = crc32fast::Hasher::new();
    while let Some(r) = rows.try_next().await? {
        n += 1;
        let (id, s, v): (i32, String, BigDecimal) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        if i64::from(id) != n
            || s != format!("row-{n}")
            || v.to_string() != format!("{}.{:02}", n / 100, n % 100)
        {
            return Err(Mismatch(format!(
                "streamed row {n}: got ({id}, {s:?}, {v})"
            )));
        }
        crc.update(s.as_bytes());
    }
    drop(rows);
    check("streamed row count", n, STREAM_ROWS)?;
    let mut want = crc32fast::Hasher::new();
    for i in 1..=STREAM_ROWS {
        want.update(format!("row-{i}").as_bytes());
    }
    check("streamed crc32 of s", crc.finalize(), want.finalize())
}

async fn session(
    host: &str,
    port: u16,
    user: &str,
    password: &str,
    step: &mut &'static str,
) -> Res<()> {
    let mut base = MySqlConnectOptions::new()
        .host(host)
        .port(port)
        .username(user);
    // sqlx scrambles an empty password into a non-empty answer, which servers refuse.
    if !password.is_empty() {
        base = base.password(password);
    }
    let db = "drv_rust_sqlx";
    let mut c = MySqlConnection::connect_with(&base).await?;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {db}")))
        .execute(&mut c)
        .await?;
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {db}")))
        .execute(&mut c)
        .await?;
    c.close().await?;
    let opts = base.database(db);
    let mut c = MySqlConnection::connect_with(&opts).await?;
    sqlx::raw_sql(TABLE).execute(&mut c).await?;
    *step = "round trip";
    round_trip(&mut c).await?;
    *step = "transactions";
    transactions(&opts).await?;
    *step = "errors";
    errors(&mut c, &opts).await?;
    *step = "4 MiB blob";
    big_blob(&mut c).await?;
    *step = "stream";
    stream(&mut c).await?;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE {db}")))
        .execute(&mut c)
        .await?;
    c.close().await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (mut host, mut port, mut user, mut password) = (
        "127.0.0.1".to_string(),
        3307u16,
        "root".to_string(),
        String::new(),
    );
    while let (Some(k), Some(v)) = (args.next(), args.next()) {
        match k.as_str() {
            "--host" => host = v,
            "--port" => port = v.parse().expect("--port is a number"),
            "--user" => user = v,
            "--password" => password = v,
            other => panic!("unknown option {other}"),
        }
    }
    let mut step = "connect";
    match session(&host, port, &user, &password, &mut step).await {
        Ok(()) => println!("rust-sqlx: all checks passed"),
        Err(Mismatch(m)) => {
            eprintln!("rust-sqlx: {step}: {m}");
            std::process::exit(1);
        }
    }
}
