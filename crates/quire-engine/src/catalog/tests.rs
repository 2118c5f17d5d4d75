use super::*;
use crate::row::{ColumnType, IntWidth, LobSize};

fn sample() -> TableDef {
    TableDef {
        id: 7,
        db: "shop".into(),
        name: "orders".into(),
        space: SpaceId(3),
        space_name: "shop.orders".into(),
        root: PageNo(4),
        columns: vec![
            Column::new(
                "id",
                ColumnType::Int {
                    width: IntWidth::Big,
                    unsigned: true,
                },
            ),
            Column::nullable("note", ColumnType::VarChar { max_chars: 100 }),
            Column::nullable("body", ColumnType::Text(LobSize::Regular)),
            Column::new(
                "price",
                ColumnType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ),
        ],
        primary_key: vec![0],
        auto_increment: Some(0),
        next_index_no: 3,
        indexes: vec![IndexDef {
            name: "by_note".into(),
            unique: true,
            index_no: 2,
            root: PageNo(9),
            columns: vec![IndexColumn {
                column: 1,
                prefix: Some(10),
                descending: true,
            }],
            usable_from: crate::row::TrxId(0),
            comment: String::new(),
        }],
        rebuilt_at: crate::row::TrxId(41),
        dropped: Vec::new(),
        slot_order: Vec::new(),
        comment: String::new(),
        checks: Vec::new(),
        collation: None,
    }
}

#[test]
fn table_record_round_trips() {
    let t = sample();
    t.validate().expect("valid");
    assert_eq!(decode_table(&encode_table(&t)).expect("decode"), t);
}

#[test]
fn decoding_a_damaged_table_record_is_an_error_never_a_panic() {
    let b = encode_table(&sample());
    for n in 0..b.len() {
        assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
    }
    let mut long = b.clone();
    long.push(0);
    assert!(decode_table(&long).is_err());
    // Every single-byte corruption decodes or fails cleanly.
    for i in 0..b.len() {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut c = b.clone();
            c[i] = v;
            if let Ok(t) = decode_table(&c) {
                let _ = t.validate();
            }
        }
    }
}

#[test]
fn names_are_restricted_so_space_names_are_unique() {
    for ok in [
        "a_b$9",
        "my-app",
        "a b",
        "a/b",
        "heiße",
        "日本語",
        "@0041",
        &"x".repeat(64),
    ] {
        assert!(check_name(ok).is_ok(), "{ok:?}");
    }
    for bad in ["", "a.b", "a ", "a\0b", "a😀", &"x".repeat(65)] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    // The names that were the only valid ones keep their files.
    assert_eq!(space_name("shop", "orders_2$"), "shop.orders_2$");
    assert_eq!(space_name("my-app", "heiße"), "my@002dapp.hei@00dfe");
    assert_eq!(space_name("a", "b/c"), "a.b@002fc");
    // One-to-one: a name that looks like an encoding is itself encoded.
    assert_ne!(space_name("a", "@002d"), space_name("a", "-"));
    // A file name is at most 255 bytes.
    let long = "é".repeat(64);
    assert!(check_table_names("d", &long).is_err());
    assert!(check_table_names("d", &"x".repeat(64)).is_ok());
}

#[test]
fn column_defaults_round_trip() {
    let mut t = sample();
    t.columns[1] = t.columns[1].clone().with_default("NULL");
    t.columns[3] = t.columns[3].clone().with_default("'0.00'");
    t.validate().expect("valid");
    let d = decode_table(&encode_table(&t)).expect("decode");
    assert_eq!(d.columns[1].default.as_deref(), Some("NULL"));
    assert_eq!(d.columns[3].default.as_deref(), Some("'0.00'"));
    assert_eq!(d.columns[0].default, None);
    assert_eq!(d, t);
    let mut long = sample();
    long.columns[1].default = Some("x".repeat(crate::row::DEFAULT_MAX_BYTES + 1));
    assert!(long.validate().is_err());
}

#[test]
fn table_record_written_before_defaults_decodes_with_none() {
    // Version 1 as written before column defaults: flags were 0 or 1 and nothing followed.
    let mut b = vec![1u8];
    b.extend_from_slice(&9u64.to_le_bytes());
    for s in ["d", "t"] {
        b.extend_from_slice(&(s.len() as u16).to_le_bytes());
        b.extend_from_slice(s.as_bytes());
    }
    b.extend_from_slice(&5u32.to_le_bytes());
    b.extend_from_slice(&3u16.to_le_bytes());
    b.extend_from_slice(b"d.t");
    b.extend_from_slice(&4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes()); // two columns
    for (name, nullable) in [("a", 0u8), ("b", 1u8)] {
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&[0, 3, 0]); // INT, width Int, signed
        b.push(nullable);
    }
    b.extend_from_slice(&1u16.to_le_bytes()); // primary key (a)
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes()); // no auto-increment
    b.extend_from_slice(&1u16.to_le_bytes()); // next index number
    b.extend_from_slice(&0u16.to_le_bytes()); // no indexes
    let t = decode_table(&b).expect("decodes");
    assert_eq!(t.columns.len(), 2);
    assert!(!t.columns[0].nullable && t.columns[1].nullable);
    assert!(t.columns.iter().all(|c| c.default.is_none()));
    // Today's encoding (version 2, with collations) reads back as the same table.
    assert_eq!(decode_table(&encode_table(&t)).expect("v2"), t);
    // A version 1 table with a string in a key is refused (its keys are binary).
    let ty_at = 1 + 8 + 3 + 3 + 4 + 2 + 3 + 4 + 2 + 2 + 1; // column a's type
    assert_eq!(&b[ty_at..ty_at + 3], &[0, 3, 0], "INT, width Int, signed");
    let mut with_string_key = b.clone();
    with_string_key.splice(ty_at..ty_at + 3, [5, 10, 0, 0, 0]); // VARCHAR(10)
    let err = decode_table(&with_string_key).expect_err("a string key in version 1");
    assert!(err.to_string().contains("before collations"), "{err}");
    // Unknown flag bits are damage.
    let mut bad = b.clone();
    let at = b.len() - 8 - 1; // the second column's flags
    bad[at] = 4;
    assert!(decode_table(&bad).is_err());
}

fn sample_view() -> ViewDef {
    ViewDef {
        db: "shop".into(),
        name: "big_orders".into(),
        columns: vec!["id".into(), "price".into()],
        definition: "select `orders`.`id` AS `id`,`orders`.`price` AS `price` from `orders`".into(),
        algorithm: 1,
        check_option: 2,
        security: 1,
        definer_user: "root".into(),
        definer_host: "localhost".into(),
        charset_client: "utf8mb4".into(),
        collation_connection: "utf8mb4_general_ci".into(),
    }
}

#[test]
fn a_view_record_round_trips() {
    let v = sample_view();
    assert_eq!(decode_view(&encode_view(&v)).expect("decode"), v);
}

#[test]
fn a_damaged_view_record_is_corrupt_not_a_panic() {
    let b = encode_view(&sample_view());
    for cut in 0..b.len() {
        assert!(matches!(
            decode_view(&b[..cut]),
            Err(CatalogError::Corrupt(_))
        ));
    }
    let mut bad_option = b.clone();
    let at = bad_option.len() - (2 + 4 + 2 + 9 + 2 + 7 + 2 + 18) - 3;
    bad_option[at] = 9;
    assert!(matches!(
        decode_view(&bad_option),
        Err(CatalogError::Corrupt(_))
    ));
    let mut trailing = b;
    trailing.push(0);
    assert!(matches!(
        decode_view(&trailing),
        Err(CatalogError::Corrupt(_))
    ));
}

#[test]
fn a_view_definition_past_the_limit_is_refused_before_encoding() {
    let mut v = sample_view();
    v.definition = "x".repeat(VIEW_TEXT_MAX + 1);
    assert!(matches!(v.validate(), Err(CatalogError::TooLong(_))));
}

fn sample_fk() -> ForeignKeyDef {
    ForeignKeyDef {
        child: 9,
        name: "orders_ibfk_1".into(),
        columns: vec!["customer".into(), "region".into()],
        parent_db: "shop".into(),
        parent_table: "customers".into(),
        parent_columns: vec!["id".into(), "region".into()],
        on_delete: FkAction::Cascade,
        on_update: FkAction::SetNull,
    }
}

#[test]
fn foreign_key_record_round_trips() {
    let f = sample_fk();
    assert_eq!(
        decode_foreign_key(&encode_foreign_key(&f)).expect("decode"),
        f
    );
}

#[test]
fn decoding_a_damaged_foreign_key_record_is_an_error_never_a_panic() {
    let b = encode_foreign_key(&sample_fk());
    for n in 0..b.len() {
        assert!(decode_foreign_key(&b[..n]).is_err(), "truncated at {n}");
    }
    let mut long = b.clone();
    long.push(0);
    assert!(decode_foreign_key(&long).is_err());
    let mut bad_action = b.clone();
    let last = bad_action.len() - 1;
    bad_action[last] = 9;
    assert!(decode_foreign_key(&bad_action).is_err());
}

#[test]
fn show_create_text_omits_restrict_and_set_default_and_qualifies_other_databases() {
    let mut f = sample_fk();
    assert_eq!(
        f.sql("shop"),
        "CONSTRAINT `orders_ibfk_1` FOREIGN KEY (`customer`, `region`) REFERENCES \
         `customers` (`id`, `region`) ON DELETE CASCADE ON UPDATE SET NULL"
    );
    f.on_delete = FkAction::Restrict;
    f.on_update = FkAction::SetDefault;
    assert_eq!(
        f.sql("other"),
        "CONSTRAINT `orders_ibfk_1` FOREIGN KEY (`customer`, `region`) REFERENCES \
         `shop`.`customers` (`id`, `region`)"
    );
}

#[test]
fn table_record_of_version_2_decodes_as_never_rebuilt() {
    // Version 2 is version 3 without the trailing rebuild mark.
    let mut b = encode_table(&sample());
    b.truncate(b.len() - 8);
    b[0] = 2;
    let t = decode_table(&b).expect("version 2 decodes");
    assert_eq!(t.rebuilt_at, crate::row::TrxId(0));
    assert_eq!(t.columns, sample().columns);
}

#[test]
fn enum_members_round_trip_in_declaration_order() {
    let mut t = sample();
    t.columns.push(
        Column::nullable("size", ColumnType::Enum { members: 3 })
            .with_members(vec!["small".into(), "it's".into(), String::new()])
            .with_default("'small'"),
    );
    t.validate().expect("valid");
    let b = encode_table(&t);
    let d = decode_table(&b).expect("decode");
    assert_eq!(d, t);
    assert_eq!(d.columns[4].members, ["small", "it's", ""]);
    // A record cut inside the member list is an error, never a panic.
    for n in 0..b.len() {
        assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
    }
    // Names must match the type's member count.
    let mut bad = t.clone();
    bad.columns[4].members.pop();
    assert!(bad.validate().is_err());
}

#[test]
fn json_mark_round_trips_and_needs_a_longtext() {
    let mut t = sample();
    let mut j = Column::nullable("doc", ColumnType::Text(LobSize::Long))
        .with_collation(crate::row::Collation::Utf8mb4Bin);
    j.json = true;
    t.columns.push(j);
    t.validate().expect("valid");
    let b = encode_table(&t);
    let d = decode_table(&b).expect("decode");
    assert_eq!(d, t);
    assert!(d.columns[4].json);
    assert!(!d.columns[0].json);
    // The mark on anything but a LONGTEXT is refused.
    let mut bad = t.clone();
    bad.columns[4].ty = ColumnType::Text(LobSize::Regular);
    assert!(bad.validate().is_err());
}

#[test]
fn year_columns_round_trip_as_type_tag_15() {
    let mut t = sample();
    t.columns
        .push(Column::nullable("born", ColumnType::Year).with_default("2000"));
    t.validate().expect("valid");
    let b = encode_table(&t);
    let d = decode_table(&b).expect("decode");
    assert_eq!(d, t);
    assert_eq!(d.columns[4].ty, ColumnType::Year);
}

#[test]
fn time_and_bit_columns_round_trip_as_type_tags_16_and_17() {
    let mut t = sample();
    t.columns
        .push(Column::nullable("at", ColumnType::Time { fsp: 3 }).with_default("'01:02:03.456'"));
    t.columns
        .push(Column::new("flags", ColumnType::Bit { bits: 12 }).with_default("b'101'"));
    t.validate().expect("valid");
    let b = encode_table(&t);
    let d = decode_table(&b).expect("decode");
    assert_eq!(d, t);
    assert_eq!(d.columns[4].ty, ColumnType::Time { fsp: 3 });
    assert_eq!(d.columns[5].ty, ColumnType::Bit { bits: 12 });
}

#[test]
fn instantly_added_columns_round_trip_with_their_values() {
    let mut t = sample();
    let lvl = Column::new(
        "level",
        ColumnType::Int {
            width: IntWidth::Int,
            unsigned: false,
        },
    );
    let bytes = crate::row::record::encode_field(&lvl, &crate::row::Value::Int(-3)).expect("field");
    t.columns.push(Column {
        instant: Some(crate::row::InstantValue::Field(bytes)),
        default: Some("-3".into()),
        ..lvl
    });
    t.columns.push(Column {
        instant: Some(crate::row::InstantValue::Null),
        ..Column::nullable("memo", ColumnType::VarChar { max_chars: 8 })
    });
    t.validate().expect("valid");
    let b = encode_table(&t);
    assert_eq!(decode_table(&b).expect("decode"), t);
    for n in 0..b.len() {
        assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
    }
}

#[test]
fn dropped_columns_and_a_slot_order_round_trip_as_version_4_and_others_stay_version_3() {
    let plain = sample();
    assert_eq!(
        encode_table(&plain)[0],
        3,
        "no physical section: an older Quire reads it"
    );
    let mut t = sample();
    // `price` was dropped (a ghost), then `flag` added first: slots note, body, price
    // (ghost, index 4 of columns ++ dropped), flag (index 0).
    let price = t.columns.pop().expect("price");
    let flag = Column {
        instant: Some(crate::row::InstantValue::Null),
        ..Column::nullable(
            "flag",
            ColumnType::Int {
                width: IntWidth::Tiny,
                unsigned: false,
            },
        )
    };
    t.columns.insert(0, flag);
    t.primary_key = vec![1];
    t.auto_increment = Some(1);
    t.indexes[0].columns[0].column = 2;
    t.dropped = vec![price];
    t.slot_order = vec![2, 3, 4, 0];
    t.validate().expect("valid");
    assert_eq!(
        t.layout().expect("layout").physical_order(),
        [
            "id",
            "DB_TRX_ID",
            "DB_ROLL_PTR",
            "note",
            "body",
            "price",
            "flag"
        ]
    );
    let b = encode_table(&t);
    assert_eq!(b[0], 4);
    assert_eq!(decode_table(&b).expect("decode"), t);
    for n in 0..b.len() {
        assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
    }
    // A slot order that leaves a column without a slot, gives one two, or puts the
    // instantly added column before an older one is refused.
    for bad in [
        vec![2, 3, 4],
        vec![2, 3, 4, 0, 0],
        vec![0, 2, 3, 4],
        vec![1, 2, 3, 4, 0],
    ] {
        let mut u = t.clone();
        u.slot_order = bad.clone();
        assert!(u.validate().is_err(), "{bad:?} accepted");
    }
}

/// `sample()` as record version 3, and with `price` dropped instantly (slots note, body,
/// price) as version 4: bytes written by Quire before column attributes and comments
/// existed (record version 5), which must keep decoding to the same tables.
const V3_BEFORE_ATTRIBUTES: &str = "030700000000000000040073686f7006006f7264657273030000000b0073686f702e6f726465727304000000040002006964000401000004006e6f7465056400000001000400626f64790801010005007072696365030a02000001000000010003000100070062795f6e6f74650102000900000001000100010a000000012900000000000000";
const V4_BEFORE_ATTRIBUTES: &str = "040700000000000000040073686f7006006f7264657273030000000b0073686f702e6f726465727304000000030002006964000401000004006e6f7465056400000001000400626f64790801010001000000010003000100070062795f6e6f74650102000900000001000100010a000000012900000000000000010005007072696365030a0200000300010002000300";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `sample()` with every attribute of record version 5: ON UPDATE on a TIMESTAMP and a
/// DATETIME, column, table and index comments (quotes and non-ASCII included).
fn sample_with_attributes() -> TableDef {
    let mut t = sample();
    t.columns.push(Column {
        on_update: true,
        default: Some("current_timestamp()".into()),
        ..Column::new("ts", ColumnType::Timestamp { fsp: 3 })
    });
    t.columns.push(Column {
        on_update: true,
        comment: "last change".into(),
        ..Column::nullable("dt", ColumnType::DateTime { fsp: 0 })
    });
    t.columns[1].comment = "it's the note: é ✓".into();
    t.comment = "orders, 'quoted'".into();
    t.indexes[0].comment = "find by note".into();
    t
}

#[test]
fn records_written_before_attributes_decode_unchanged_and_are_written_the_same() {
    let v3 = unhex(V3_BEFORE_ATTRIBUTES);
    let t = decode_table(&v3).expect("version 3 decodes");
    assert_eq!(t, sample());
    assert!(t.comment.is_empty() && t.indexes.iter().all(|ix| ix.comment.is_empty()));
    assert!(t
        .columns
        .iter()
        .all(|c| !c.on_update && c.comment.is_empty()));
    assert_eq!(
        encode_table(&t),
        v3,
        "a table without attributes stays version 3"
    );

    let v4 = unhex(V4_BEFORE_ATTRIBUTES);
    let t = decode_table(&v4).expect("version 4 decodes");
    assert_eq!(t.dropped.len(), 1);
    assert_eq!(t.slot_order, [1, 2, 3]);
    assert!(t.comment.is_empty());
    assert_eq!(
        encode_table(&t),
        v4,
        "a table with only a physical section stays version 4"
    );
}

#[test]
fn column_attributes_and_comments_round_trip_as_version_5() {
    let t = sample_with_attributes();
    t.validate().expect("valid");
    let b = encode_table(&t);
    assert_eq!(b[0], 5);
    assert_eq!(decode_table(&b).expect("decode"), t);
    for n in 0..b.len() {
        assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
    }
    // Each attribute alone makes the record version 5; the rest stay as they were.
    let mut each: Vec<TableDef> = Vec::new();
    let mut x = sample();
    x.comment = "c".into();
    each.push(x);
    let mut x = sample();
    x.indexes[0].comment = "c".into();
    each.push(x);
    let mut x = sample();
    x.columns[0].comment = "c".into();
    each.push(x);
    let mut x = sample();
    x.columns.push(Column {
        on_update: true,
        ..Column::nullable("ts", ColumnType::Timestamp { fsp: 0 })
    });
    each.push(x);
    for x in each {
        let b = encode_table(&x);
        assert_eq!(b[0], 5);
        assert_eq!(decode_table(&b).expect("decode"), x);
    }
    // With a physical section too (a dropped column keeps its comment).
    let mut x = sample_with_attributes();
    let mut price = x.columns.remove(3);
    price.comment = "was the price".into();
    x.dropped = vec![price];
    x.slot_order = vec![1, 2, 5, 3, 4];
    x.validate().expect("valid");
    let b = encode_table(&x);
    assert_eq!(b[0], 5);
    assert_eq!(decode_table(&b).expect("decode"), x);
}

#[test]
fn attribute_flags_outside_version_5_and_on_update_on_other_types_are_corrupt() {
    let v3 = unhex(V3_BEFORE_ATTRIBUTES);
    // The first column's flags byte: after the version, id, names, space, root, count,
    // the name `id` and its type (tag, width, unsigned).
    let at = 1 + 8 + (2 + 4) + (2 + 6) + 4 + (2 + 11) + 4 + 2 + (2 + 2) + 3;
    assert_eq!(v3[at], 0, "NOT NULL, no default");
    for flag in [16u8, 32] {
        let mut b = v3.clone();
        b[at] = flag;
        let err = decode_table(&b).expect_err("a version 5 flag in version 3");
        assert!(err.to_string().contains("unknown column flags"), "{err}");
    }
    // ON UPDATE on the BIGINT `id` in a version 5 record.
    let mut t = sample_with_attributes();
    t.columns[0].on_update = true;
    assert!(t.validate().is_err());
    let b = encode_table(&t);
    let err = decode_table(&b).expect_err("ON UPDATE on an integer");
    assert!(err.to_string().contains("ON UPDATE"), "{err}");
    // The index comment count must match the indexes.
    let mut b = encode_table(&sample_with_attributes());
    let n = b.len();
    let count_at = n - (2 + "find by note".len()) - 2;
    b[count_at] = 2;
    assert!(decode_table(&b).is_err());
}

#[test]
fn comments_past_mariadbs_limits_are_refused_before_encoding() {
    let mut t = sample();
    t.comment = "x".repeat(TABLE_COMMENT_MAX_CHARS);
    t.columns[1].comment = "é".repeat(COLUMN_COMMENT_MAX_CHARS);
    t.indexes[0].comment = "y".repeat(INDEX_COMMENT_MAX_CHARS);
    t.validate().expect("at the limits");
    for f in [
        |t: &mut TableDef| t.comment.push('x'),
        |t: &mut TableDef| t.columns[1].comment.push('x'),
        |t: &mut TableDef| t.indexes[0].comment.push('x'),
    ] {
        let mut u = t.clone();
        f(&mut u);
        assert!(matches!(u.validate(), Err(CatalogError::TooLong(_))));
    }
}

/// `sample_with_attributes()` as record version 5, bytes written by Quire before CHECK
/// constraints existed (record version 6): they decode to the same table, without checks,
/// and are written back the same.
const V5_BEFORE_CHECKS: &str = "050700000000000000040073686f7006006f7264657273030000000b0073686f702e6f726465727304000000060002006964000401000004006e6f74650564000000210015006974277320746865206e6f74653a20c3a920e29c930400626f64790801010005007072696365030a020000020074730c031200130063757272656e745f74696d657374616d702829020064740b0031000b006c617374206368616e676501000000010003000100070062795f6e6f74650102000900000001000100010a0000000129000000000000000000000010006f72646572732c202771756f7465642701000c0066696e64206279206e6f7465";

#[test]
fn records_written_before_checks_decode_unchanged_and_are_written_the_same() {
    let v5 = unhex(V5_BEFORE_CHECKS);
    let t = decode_table(&v5).expect("version 5 decodes");
    assert_eq!(t, sample_with_attributes());
    assert!(t.checks.is_empty());
    assert_eq!(
        encode_table(&t),
        v5,
        "a table without checks stays version 5"
    );
    // And a plain table stays version 3.
    assert_eq!(encode_table(&sample())[0], 3);
}

fn check(name: &str, column_level: bool, expr: &str) -> CheckDef {
    CheckDef {
        name: name.into(),
        column_level,
        expr: expr.into(),
    }
}

#[test]
fn check_constraints_round_trip_as_version_6() {
    for mut t in [sample(), sample_with_attributes()] {
        t.checks = vec![
            check("price", true, "`price` >= 0"),
            check(
                "CONSTRAINT_1",
                false,
                "`note` <> 'it''s é' or `note` is null",
            ),
        ];
        t.validate().expect("valid");
        let b = encode_table(&t);
        assert_eq!(b[0], 6);
        assert_eq!(decode_table(&b).expect("decode"), t);
        for n in 0..b.len() {
            assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
        }
    }
    // Dropping the last check writes the table as before.
    let mut t = sample();
    t.checks = vec![check("c", false, "1")];
    t.checks.clear();
    assert_eq!(encode_table(&t)[0], 3);
}

#[test]
fn duplicate_or_empty_checks_are_refused() {
    let mut t = sample();
    t.checks = vec![check("c1", false, "1"), check("C1", true, "2")];
    assert!(t.validate().is_err(), "names differ only in case");
    t.checks = vec![check("c1", false, "")];
    assert!(t.validate().is_err());
    // An empty expression in a record is corruption.
    t.checks = vec![check("c1", false, "x")];
    let mut b = encode_table(&t);
    let n = b.len();
    b[n - 3] = 0; // the expression's length, low byte: 1 → 0, leaving a trailing byte
    assert!(decode_table(&b).is_err());
    // A level byte other than 0 or 1.
    let mut b = encode_table(&t);
    b[n - 4] = 2;
    assert!(decode_table(&b).is_err());
}

#[test]
fn a_kept_table_collation_round_trips_as_version_7_and_unknown_codes_are_corrupt() {
    use crate::row::Collation;
    for c in Collation::ALL {
        let mut t = sample();
        t.collation = Some(c);
        t.validate().expect("valid");
        let b = encode_table(&t);
        assert_eq!(b[0], 7);
        assert_eq!(*b.last().expect("a byte"), c.code());
        assert_eq!(decode_table(&b).expect("decode"), t);
        assert_eq!(decode_table(&b).expect("decode").default_collation(), c);
        for n in 0..b.len() {
            assert!(decode_table(&b[..n]).is_err(), "prefix {n} accepted");
        }
        // A code no collation has is an error, never a silent utf8mb4_general_ci.
        let mut bad = b.clone();
        let last = bad.len() - 1;
        bad[last] = 0xEE;
        assert!(decode_table(&bad).is_err());
    }
    // Without one the record stays at its version and the columns say the collation.
    let t = sample();
    assert_eq!(encode_table(&t)[0], 3);
    assert_eq!(t.default_collation(), shared_collation(&t.columns));
}

#[test]
fn column_collation_codes_read_back_and_unknown_ones_are_corrupt() {
    use crate::row::Collation;
    let mut t = sample();
    let i = t
        .columns
        .iter()
        .position(|c| c.ty.is_string())
        .expect("a string column");
    for c in Collation::ALL {
        t.columns[i].collation = c;
        let d = decode_table(&encode_table(&t)).expect("decode");
        assert_eq!(d.columns[i].collation, c);
    }
    // The column's collation byte, found by encoding two collations and diffing.
    t.columns[i].collation = Collation::Utf8mb4UnicodeCi;
    let a = encode_table(&t);
    t.columns[i].collation = Collation::Utf8mb4Unicode520Ci;
    let b = encode_table(&t);
    let at = (0..a.len())
        .find(|&k| a[k] != b[k])
        .expect("one byte differs");
    assert_eq!((a[at], b[at]), (2, 3));
    // Codes 4..13 are the utf8mb3, latin1 and ascii collations (added, never renumbered);
    // 14 is no collation yet.
    for (code, c) in [
        (4, Collation::Utf8mb3GeneralCi),
        (8, Collation::Latin1SwedishCi),
        (13, Collation::AsciiBin),
    ] {
        let mut ok = a.clone();
        ok[at] = code;
        assert_eq!(decode_table(&ok).expect("decode").columns[i].collation, c);
    }
    let mut bad = a.clone();
    bad[at] = 14;
    assert!(decode_table(&bad).is_err());
}

#[test]
fn number_attributes_round_trip_and_only_they_change_the_record() {
    let int = |width, unsigned| ColumnType::Int { width, unsigned };
    let plain = sample();
    let plain_bytes = encode_table(&plain);
    let mut t = plain.clone();
    // TINYINT(1), INT(3) UNSIGNED ZEROFILL, BIGINT UNSIGNED ZEROFILL (the default width),
    // FLOAT(7,4) UNSIGNED, DECIMAL(13,10) UNSIGNED.
    let mut flag = Column::new("flag", int(IntWidth::Tiny, false));
    flag.display = Some(1);
    let mut day = Column::nullable("day", int(IntWidth::Int, true));
    day.display = Some(3);
    day.zerofill = true;
    let mut big = Column::new("big", int(IntWidth::Big, true));
    big.zerofill = true;
    let mut f = Column::nullable("f", ColumnType::Float);
    f.digits = Some((7, 4));
    f.unsigned = true;
    let mut lng = Column::new(
        "lng",
        ColumnType::Decimal {
            precision: 13,
            scale: 10,
        },
    );
    lng.unsigned = true;
    t.columns.extend([flag, day, big, f, lng]);
    t.validate().expect("valid");
    let b = encode_table(&t);
    assert_eq!(decode_table(&b).expect("decode"), t);
    // A table without attributes is written as before tag 18 existed: its first column
    // (after its 2-byte name) is tag 0, BIGINT UNSIGNED.
    let first_ty = 1 + 8 + (2 + 4) + (2 + 6) + 4 + (2 + 11) + 4 + 2 + (2 + 2);
    assert_eq!(
        &plain_bytes[first_ty..first_ty + 3],
        &[0, 4, 1],
        "BIGINT UNSIGNED"
    );
    assert_eq!(
        &b[first_ty..first_ty + 3],
        &[0, 4, 1],
        "unchanged beside tag 18"
    );
    let at = |name: &[u8]| {
        let mut key = vec![name.len() as u8, 0];
        key.extend_from_slice(name);
        b.windows(key.len())
            .position(|w| w == key.as_slice())
            .expect("column")
            + key.len()
    };
    // Tag 18, INT (tag 0: width 3, unsigned), display and zerofill bits, width 3.
    let day_ty = at(b"day");
    assert_eq!(&b[day_ty..day_ty + 6], &[18, 0, 3, 1, 1 | 2, 3]);
    // Tag 18, FLOAT (tag 1), unsigned and digits bits, M 7, D 4.
    let f_ty = at(b"f");
    assert_eq!(&b[f_ty..f_ty + 5], &[18, 1, 4 | 8, 7, 4]);
    // Attributes the type does not take are damage, in memory and on disk.
    let bad_def = |f: &dyn Fn(&mut TableDef)| {
        let mut x = t.clone();
        f(&mut x);
        x.validate().is_err()
    };
    assert!(
        !bad_def(&|x| x.columns[4].ty = int(IntWidth::Tiny, true)),
        "TINYINT(1) UNSIGNED"
    );
    assert!(
        bad_def(&|x| {
            x.columns[5].ty = int(IntWidth::Int, false);
        }),
        "ZEROFILL on a signed integer"
    );
    assert!(
        bad_def(&|x| x.columns[4].display = Some(0)),
        "display width 0"
    );
    assert!(
        bad_def(&|x| x.columns[1].display = Some(5)),
        "a width on a VARCHAR"
    );
    assert!(bad_def(&|x| x.columns[7].digits = Some((3, 4))), "D > M");
    assert!(bad_def(&|x| x.columns[7].digits = Some((40, 31))), "D > 30");
    assert!(
        bad_def(&|x| x.columns[8].digits = Some((5, 2))),
        "(M,D) on a DECIMAL"
    );
    assert!(
        bad_def(&|x| x.columns[4].unsigned = true),
        "UNSIGNED attribute on an INT"
    );
    let damaged = |i: usize, v: u8| {
        let mut x = b.clone();
        x[i] = v;
        decode_table(&x).is_err()
    };
    assert!(damaged(day_ty + 1, 4), "attributes on a CHAR");
    assert!(damaged(day_ty + 4, 0), "tag 18 without attributes");
    assert!(damaged(day_ty + 4, 16 | 1 | 2), "an unknown attribute bit");
    assert!(damaged(day_ty + 3, 0), "ZEROFILL on a signed integer");
    assert!(damaged(f_ty + 4, 9), "D > M");
}
