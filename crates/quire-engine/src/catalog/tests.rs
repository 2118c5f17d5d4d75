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
        }],
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
