use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Outcome, Value};

#[test]
fn smoke() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    let mut q = |sql: &str| {
        let mut c = CollectSink::default();
        let r = s.query(sql, &mut c);
        println!("{sql}\n  -> {r:?} {:?}", c.rows);
        (r, c.rows)
    };
    q("CREATE DATABASE sbtest");
    q("USE sbtest");
    q("CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */");
    q("INSERT INTO sbtest1(k, c, pad) VALUES(5, 'c1', 'p1'),(3, 'c2', 'p2'),(5, 'c3', 'p3')");
    q("CREATE INDEX k_1 ON sbtest1(k)");
    assert_eq!(
        q("SELECT c FROM sbtest1 WHERE id=2").1,
        vec![vec![Value::Str("c2".into())]]
    );
    q("SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 3 ORDER BY c DESC");
    q("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 3");
    q("SELECT DISTINCT k FROM sbtest1 WHERE id BETWEEN 1 AND 3 ORDER BY k");
    q("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (5, 7)");
    q("SELECT count(k) FROM sbtest1 WHERE k BETWEEN 1 AND 4 OR k BETWEEN 5 AND 5");
    let (r, _) = q("UPDATE sbtest1 SET k=k+1 WHERE id=1");
    assert!(matches!(
        r,
        Ok(Outcome::Ok {
            affected_rows: 1,
            ..
        })
    ));
    q("UPDATE sbtest1 SET c='zz' WHERE id=2");
    q("DELETE FROM sbtest1 WHERE id=3");
    q("INSERT INTO sbtest1 (id, k, c, pad) VALUES (3, 1, 'x', 'y')");
    let (r, _) = q("INSERT INTO sbtest1 (id, k, c, pad) VALUES (3, 1, 'x', 'y')");
    assert!(r.is_err());
    q("BEGIN");
    q("SELECT c FROM sbtest1 WHERE id=1 FOR UPDATE");
    q("UPDATE sbtest1 SET k=k+1 WHERE id=1");
    q("ROLLBACK");
    q("SELECT * FROM sbtest1");
    q("SELECT @@version_comment LIMIT 1");
    q("SELECT DATABASE(), USER(), 1+1, 7/2, NOW() IS NOT NULL");
    q("SHOW TABLES");
    q("SHOW CREATE TABLE sbtest1");
    q("DESCRIBE sbtest1");
    q("SHOW INDEX FROM sbtest1");
    q("EXPLAIN SELECT c FROM sbtest1 WHERE k = 5");
    q("SHOW VARIABLES LIKE 'innodb_flush%'");
    q("SET autocommit=0");
    q("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    q("SELECT @@autocommit, @@transaction_isolation");
    q("SELECT seq FROM seq_1_to_5");
    q("SELEC 1");
    q("SELECT nope FROM sbtest1");
    q("SELECT * FROM nope");
    q("DROP TABLE IF EXISTS sbtest1");
    let mut s2 = inst.session("root", "localhost");
    let info = s2.prepare("SELECT ? + 1, ?").expect("prepare");
    println!("{info:?}");
    let mut c = CollectSink::default();
    s2.execute(info.id, &[Value::Int(41), Value::Str("x".into())], &mut c)
        .expect("exec");
    println!("{:?}", c.rows);
}
