//! A database's default collation (`CREATE DATABASE … CHARACTER SET/COLLATE`, catalog
//! database record version 3) is kept across a restart; a database made without one reads
//! back as the server's (version 2).

#[test]
fn a_database_keeps_its_own_collation_across_a_restart() {
    use quire_engine::row::Collation;
    let dir = tempfile::tempdir().expect("tmp");
    {
        let db = quire_engine::table::Db::open(dir.path(), quire_engine::config::Config::default())
            .expect("open");
        db.create_database("plain").expect("plain");
        db.create_database_with_collation("old", Some(Collation::Latin1SwedishCi))
            .expect("old");
        assert_eq!(
            db.database_collation("old"),
            Some(Collation::Latin1SwedishCi)
        );
        db.shutdown().expect("shutdown");
    }
    let db = quire_engine::table::Db::open(dir.path(), quire_engine::config::Config::default())
        .expect("reopen");
    assert_eq!(
        db.database_collation("plain"),
        None,
        "version 2: the server's"
    );
    assert_eq!(
        db.database_collation("old"),
        Some(Collation::Latin1SwedishCi)
    );
    db.drop_database("old").expect("drop");
    assert_eq!(db.database_collation("old"), None);
    db.shutdown().expect("shutdown");
}
