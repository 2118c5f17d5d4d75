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
        }],
        rebuilt_at: crate::row::TrxId(41),
        dropped: Vec::new(),
        slot_order: Vec::new(),
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
    assert!(check_name("a_b$9").is_ok());
    for bad in ["", "a.b", "a/b", "a b", &"x".repeat(65)] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
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
