use std::cmp::Ordering;
use std::collections::HashMap;

use proptest::prelude::*;

use super::record::{self, Stored};
use super::secondary::{self, IndexColumn};
use super::*;
use crate::page::{PageNo, PageSize, SpaceId};

fn int(w: IntWidth, unsigned: bool) -> ColumnType {
    ColumnType::Int { width: w, unsigned }
}

fn key1(ty: ColumnType, nullable: bool) -> KeyLayout {
    let c = if nullable {
        Column::nullable("c", ty)
    } else {
        Column::new("c", ty)
    };
    KeyLayout::new(vec![KeyPart::new(c)]).expect("layout")
}

fn enc(k: &KeyLayout, vals: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    k.encode(vals, &RowLimits::default(), &mut out)
        .expect("encode key");
    out
}

fn users() -> RowLayout {
    RowLayout::new(
        vec![
            Column::new("id", int(IntWidth::Big, false)),
            Column::nullable("name", ColumnType::VarChar { max_chars: 10 }),
            Column::nullable("age", int(IntWidth::Tiny, true)),
            Column::nullable("bio", ColumnType::Text(LobSize::Medium)),
            Column::new("score", ColumnType::Double),
        ],
        &[0],
    )
    .expect("layout")
}

/// An in-memory stand-in for the B-tree's BLOB chains.
#[derive(Default)]
struct Blobs(HashMap<u32, Vec<u8>>);

impl Blobs {
    fn encode(
        &mut self,
        l: &RowLayout,
        vals: &[Value],
        sys: &SysFields,
        lim: &RowLimits,
    ) -> Vec<u8> {
        let off = l.plan_off_page(vals, sys, lim).expect("plan");
        let mut refs = Vec::new();
        for c in off {
            let b = match &vals[c] {
                Value::Str(s) => s.as_bytes().to_vec(),
                Value::Bytes(b) => b.clone(),
                v => panic!("off-page {v:?}"),
            };
            let page = self.0.len() as u32 + 3;
            refs.push((c, ExternRef::new(SpaceId(9), PageNo(page), b.len() as u64)));
            self.0.insert(page, b);
        }
        let mut out = Vec::new();
        l.encode(vals, sys, &refs, lim, &mut out).expect("encode");
        out
    }
    fn decode(&self, l: &RowLayout, rec: &[u8]) -> Vec<Value> {
        l.decode(rec)
            .expect("decode")
            .into_values(l, |r| {
                self.0
                    .get(&r.first_page.0)
                    .cloned()
                    .ok_or(RowError::Corrupt("no such blob"))
            })
            .expect("values")
    }
    /// `RowLayout::decode_values`: the read path's decoding, of the columns in `cols`.
    fn decode_values(&self, l: &RowLayout, rec: &[u8], cols: Option<&[bool]>) -> Vec<Value> {
        l.decode_values(rec, cols, |r| {
            self.0
                .get(&r.first_page.0)
                .cloned()
                .ok_or(RowError::Corrupt("no such blob"))
        })
        .expect("values")
    }
}

fn sys(trx: u64) -> SysFields {
    SysFields {
        trx_id: TrxId(trx),
        roll_ptr: RollPtr::new(false, 5, PageNo(77), 300),
        row_id: None,
    }
}

#[test]
fn null_sorts_before_every_value() {
    let k = key1(int(IntWidth::Int, false), true);
    let null = enc(&k, &[Value::Null]);
    for v in [i64::from(i32::MIN), -1, 0, 1, i64::from(i32::MAX)] {
        assert!(null < enc(&k, &[Value::Int(v)]), "NULL vs {v}");
    }
    let s = key1(ColumnType::VarChar { max_chars: 4 }, true);
    assert!(enc(&s, &[Value::Null]) < enc(&s, &[Value::Str(String::new())]));
}

#[test]
fn negative_ints_sort_before_positive() {
    for w in [
        IntWidth::Tiny,
        IntWidth::Small,
        IntWidth::Medium,
        IntWidth::Int,
        IntWidth::Big,
    ] {
        let k = key1(int(w, false), false);
        let (lo, hi) = w.signed_range();
        let vals = [lo, lo + 1, -1, 0, 1, hi - 1, hi];
        let keys: Vec<_> = vals.iter().map(|&v| enc(&k, &[Value::Int(v)])).collect();
        assert!(keys.windows(2).all(|p| p[0] < p[1]), "{w:?}");
        assert!(keys.iter().all(|k| k.len() == w.bytes()));
    }
}

#[test]
fn string_prefix_sorts_first() {
    let k = key1(ColumnType::VarBinary { max_len: 10 }, false);
    let order: [&[u8]; 7] = [b"", b"\0", b"\0\0", b"\0\x01", b"a", b"a\0", b"ab"];
    let keys: Vec<_> = order
        .iter()
        .map(|b| enc(&k, &[Value::Bytes(b.to_vec())]))
        .collect();
    assert!(keys.windows(2).all(|p| p[0] < p[1]), "{keys:?}");
}

#[test]
fn string_field_does_not_leak_into_the_next() {
    // ("a", 2) < ("ab", 1): the terminator ends "a" before the next field is compared.
    let c = |n: &str, ty| Column::new(n, ty);
    let k = KeyLayout::new(vec![
        KeyPart::new(c("s", ColumnType::VarChar { max_chars: 5 })),
        KeyPart::new(c("i", int(IntWidth::Int, false))),
    ])
    .expect("layout");
    let a = enc(&k, &[Value::Str("a".into()), Value::Int(2)]);
    let b = enc(&k, &[Value::Str("ab".into()), Value::Int(1)]);
    assert!(a < b);
}

#[test]
fn negative_zero_equals_zero_and_nan_is_rejected() {
    let k = key1(ColumnType::Double, false);
    assert_eq!(
        enc(&k, &[Value::Double(-0.0)]),
        enc(&k, &[Value::Double(0.0)])
    );
    assert!(enc(&k, &[Value::Double(-1e300)]) < enc(&k, &[Value::Double(-1e-300)]));
    let mut out = Vec::new();
    let err = k
        .encode(&[Value::Double(f64::NAN)], &RowLimits::default(), &mut out)
        .expect_err("NaN");
    assert!(matches!(
        err,
        RowError::Value {
            kind: ValueError::NotFinite,
            ..
        }
    ));
}

#[test]
fn descending_part_reverses_order_and_puts_null_last() {
    let c = Column::nullable("c", ColumnType::VarChar { max_chars: 5 });
    let k = KeyLayout::new(vec![KeyPart::new(c).descending()]).expect("layout");
    let s = |x: &str| enc(&k, &[Value::Str(x.into())]);
    assert!(s("b") < s("ab") && s("ab") < s("a") && s("a") < s(""));
    assert!(s("") < enc(&k, &[Value::Null]));
    assert_eq!(k.decode_parts(&s("ab")).expect("decode"), vec![None]);
    assert_eq!(k.skip(&s("ab"), 1), Ok(s("ab").len()));
}

#[test]
fn oversized_varchar_is_rejected() {
    let l = users();
    let vals = vec![
        Value::Int(1),
        Value::Str("ééééééééééé".into()), // 11 characters
        Value::Null,
        Value::Null,
        Value::Double(1.0),
    ];
    let err = l.validate(&vals).expect_err("too long");
    assert_eq!(
        err,
        RowError::TooLong {
            column: "name".into(),
            max: 10,
            len: 11,
            unit: "characters"
        }
    );
    // Ten two-byte characters fit: the limit counts characters, not bytes.
    let mut ok = vals.clone();
    ok[1] = Value::Str("éééééééééé".into());
    l.validate(&ok).expect("fits");
}

#[test]
fn bad_values_get_typed_errors() {
    let l = users();
    let row = |i: usize, v: Value| {
        let mut r = vec![
            Value::Int(1),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Double(0.0),
        ];
        r[i] = v;
        l.validate(&r).map(|_| ())
    };
    assert!(matches!(
        row(2, Value::UInt(256)),
        Err(RowError::Value {
            kind: ValueError::OutOfRange,
            ..
        })
    ));
    assert!(matches!(
        row(2, Value::Int(-1)),
        Err(RowError::Value {
            kind: ValueError::OutOfRange,
            ..
        })
    ));
    assert!(matches!(
        row(0, Value::Null),
        Err(RowError::NullNotAllowed { .. })
    ));
    assert!(matches!(
        row(0, Value::Str("1".into())),
        Err(RowError::WrongType { .. })
    ));
    assert!(matches!(
        l.validate(&[Value::Int(1)]),
        Err(RowError::WrongColumnCount {
            expected: 5,
            found: 1
        })
    ));
}

#[test]
fn decimal_rescales_exactly_and_rejects_rounding() {
    let c = Column::new(
        "d",
        ColumnType::Decimal {
            precision: 5,
            scale: 2,
        },
    );
    let one_five = Value::Decimal(Decimal::new(15, 1));
    let v = c.canonical(&one_five).expect("1.5");
    assert_eq!(*v, Value::Decimal(Decimal::new(150, 2)));
    assert!(c.canonical(&Value::Decimal(Decimal::new(1555, 3))).is_err());
    assert!(c
        .canonical(&Value::Decimal(Decimal::new(100_000, 2)))
        .is_err());
    c.canonical(&Value::Decimal(Decimal::new(-99_999, 2)))
        .expect("-999.99");
    assert_eq!(Decimal::new(-5, 2).to_string(), "-0.05");
    assert_eq!(decimal_bytes(2), 1);
    assert_eq!(decimal_bytes(18), 8);
    assert_eq!(decimal_bytes(38), 16);
}

#[test]
fn the_zero_date_is_stored_and_packs_below_every_date() {
    let d = Column::new("d", ColumnType::Date);
    d.canonical(&Value::Date(Date::ZERO)).expect("zero date");
    // A zero month or day is a value (MariaDB stores it unless NO_ZERO_IN_DATE); a month
    // past 12 or a day past the month's last is not.
    for ok in [
        Date::new(2024, 0, 1),
        Date::new(2024, 2, 0),
        Date::new(2024, 0, 31),
    ] {
        d.canonical(&Value::Date(ok)).expect("zero part");
        assert_eq!(Date::unpack(ok.packed()).expect("unpacks"), ok);
    }
    for bad in [
        Date::new(2024, 13, 1),
        Date::new(2023, 2, 29),
        Date::new(2024, 1, 32),
    ] {
        assert!(d.canonical(&Value::Date(bad)).is_err(), "{bad:?}");
    }
    assert!(Date::new(2024, 0, 1).packed() < Date::new(2024, 1, 1).packed());
    let in_range_but_no_day = Value::DateTime(DateTime::new(Date::new(2020, 0, 15), 0, 0, 0, 0));
    assert!(Column::new("t", ColumnType::Timestamp { fsp: 0 })
        .canonical(&in_range_but_no_day)
        .is_err());
    assert!(Date::ZERO.packed() < Date::new(0, 1, 1).packed());
    assert_eq!(
        Date::unpack(Date::ZERO.packed()).expect("unpacks"),
        Date::ZERO
    );
    let zero = Value::DateTime(DateTime::new(Date::ZERO, 0, 0, 0, 0));
    Column::new("t", ColumnType::Timestamp { fsp: 0 })
        .canonical(&zero)
        .expect("zero timestamp");
    Column::new("t", ColumnType::DateTime { fsp: 0 })
        .canonical(&zero)
        .expect("zero datetime");
}

#[test]
fn invalid_dates_and_timestamps_out_of_range_are_rejected() {
    let d = Column::new("d", ColumnType::Date);
    assert!(d.canonical(&Value::Date(Date::new(2023, 2, 29))).is_err());
    d.canonical(&Value::Date(Date::new(2024, 2, 29)))
        .expect("leap day");
    let ts = Column::new("t", ColumnType::Timestamp { fsp: 0 });
    let at = |y| Value::DateTime(DateTime::new(Date::new(y, 6, 1), 0, 0, 0, 0));
    ts.canonical(&at(2000)).expect("in range");
    assert!(ts.canonical(&at(2040)).is_err());
    let dt = Column::new("t", ColumnType::DateTime { fsp: 3 });
    let frac = |us| Value::DateTime(DateTime::new(Date::new(2000, 1, 1), 1, 2, 3, us));
    dt.canonical(&frac(123_000)).expect("3 digits");
    assert!(matches!(
        dt.canonical(&frac(123_400)),
        Err(RowError::Value {
            kind: ValueError::TooPrecise { fsp: 3 },
            ..
        })
    ));
}

#[test]
fn key_longer_than_the_limit_is_rejected() {
    let k = key1(ColumnType::VarBinary { max_len: 60_000 }, false);
    let lim = RowLimits::default();
    let mut out = Vec::new();
    // 1600 zero bytes escape to 3200 bytes: over 3072 although the value is shorter.
    let err = k
        .encode(&[Value::Bytes(vec![0; 1600])], &lim, &mut out)
        .expect_err("too long");
    assert_eq!(
        err,
        RowError::KeyTooLong {
            len: 3202,
            max: 3072
        }
    );
    assert!(out.is_empty());
}

#[test]
fn limits_follow_the_page_size() {
    let l4 = RowLimits::for_page(PageSize::new(4096).expect("4K"));
    let l16 = RowLimits::default();
    let l64 = RowLimits::for_page(PageSize::new(65536).expect("64K"));
    assert_eq!(
        (l4.max_key_bytes, l16.max_key_bytes, l64.max_key_bytes),
        (768, 3072, 3072)
    );
    assert_eq!(l16.extern_threshold, 4096);
    assert_eq!(l16.max_record_bytes, 8064);
    assert_eq!(l16.blob_part_max, 16384 - 48);
}

#[test]
fn blob_column_needs_a_prefix_in_a_key() {
    let err = RowLayout::new(
        vec![Column::new("b", ColumnType::Blob(LobSize::Regular))],
        &[0],
    );
    assert!(matches!(err, Err(RowError::Schema(_))));
    let err = RowLayout::new(vec![Column::nullable("b", int(IntWidth::Int, false))], &[0]);
    assert!(matches!(err, Err(RowError::Schema(_))));
}

#[test]
fn physical_order_puts_hidden_columns_after_the_key() {
    assert_eq!(
        users().physical_order(),
        [
            "id",
            "DB_TRX_ID",
            "DB_ROLL_PTR",
            "name",
            "age",
            "bio",
            "score"
        ]
    );
    let nopk =
        RowLayout::new(vec![Column::new("a", int(IntWidth::Int, false))], &[]).expect("layout");
    assert_eq!(
        nopk.physical_order(),
        ["DB_ROW_ID", "DB_TRX_ID", "DB_ROLL_PTR", "a"]
    );
}

#[test]
fn row_round_trips_with_nulls_and_blobs() {
    let l = users().with_extern_prefix(16);
    let lim = RowLimits::default();
    let mut blobs = Blobs::default();
    let big = "x".repeat(10_000);
    for vals in [
        vec![
            Value::Int(-7),
            Value::Null,
            Value::UInt(200),
            Value::Str(big.clone()),
            Value::Double(2.5),
        ],
        vec![
            Value::Int(8),
            Value::Str("ok".into()),
            Value::Null,
            Value::Null,
            Value::Double(-0.5),
        ],
        vec![
            Value::Int(9),
            Value::Str("".into()),
            Value::UInt(0),
            Value::Str("short".into()),
            Value::Double(0.0),
        ],
    ] {
        let rec = blobs.encode(&l, &vals, &sys(42), &lim);
        assert!(rec.len() <= lim.max_record_bytes);
        assert_eq!(blobs.decode(&l, &rec), vals);
        let f = l.decode(&rec).expect("decode");
        assert_eq!(f.sys, sys(42));
        assert_eq!(
            record::has_external(&rec).expect("info"),
            vals[3] == Value::Str(big.clone())
        );
    }
    let rec = blobs.encode(
        &l,
        &[
            Value::Int(1),
            Value::Null,
            Value::Null,
            Value::Str(big.clone()),
            Value::Double(1.0),
        ],
        &sys(1),
        &lim,
    );
    match l.field(&rec, 3).expect("field") {
        Stored::External { r, prefix } => {
            assert_eq!(r.len, 10_000);
            assert_eq!(prefix, b"xxxxxxxxxxxxxxxx");
        }
        f => panic!("expected off-page, got {f:?}"),
    }
}

#[test]
fn rows_over_the_limit_move_the_longest_values_off_page() {
    let cols = (0..4)
        .map(|i| Column::new(format!("v{i}"), ColumnType::VarChar { max_chars: 4000 }))
        .collect();
    let l = RowLayout::new(cols, &[]).expect("layout");
    let lim = RowLimits::default();
    // Each under the 4096 threshold, together over 8064: the two longest go off-page.
    let vals: Vec<Value> = [4000, 3900, 3800, 3700]
        .iter()
        .map(|&n| Value::Str("a".repeat(n)))
        .collect();
    let s = SysFields {
        row_id: Some(RowId(5)),
        ..sys(3)
    };
    assert_eq!(l.plan_off_page(&vals, &s, &lim).expect("plan"), vec![0, 1]);
    let mut blobs = Blobs::default();
    let rec = blobs.encode(&l, &vals, &s, &lim);
    assert_eq!(blobs.decode(&l, &rec), vals);
    assert_eq!(l.decode(&rec).expect("decode").sys.row_id, Some(RowId(5)));
}

#[test]
fn oversized_row_is_rejected() {
    let cols = (0..40)
        .map(|i| Column::new(format!("c{i}"), ColumnType::Binary { len: 255 }))
        .collect();
    let l = RowLayout::new(cols, &[]).expect("layout");
    let vals = vec![Value::Bytes(vec![1; 255]); 40];
    let s = SysFields {
        row_id: Some(RowId(1)),
        ..sys(1)
    };
    let err = l
        .plan_off_page(&vals, &s, &RowLimits::default())
        .expect_err("too big");
    assert!(matches!(err, RowError::RowTooLarge { max: 8064, .. }));
    let mut out = Vec::new();
    assert!(l
        .encode(&vals, &s, &[], &RowLimits::default(), &mut out)
        .is_err());
    assert!(out.is_empty());
}

#[test]
fn trx_id_is_readable_in_place() {
    let l = users();
    let vals = vec![
        Value::Int(1),
        Value::Str("n".into()),
        Value::Null,
        Value::Null,
        Value::Double(1.0),
    ];
    let mut rec = Vec::new();
    l.encode(
        &vals,
        &sys(0xABCD_EF01_2345),
        &[],
        &RowLimits::default(),
        &mut rec,
    )
    .expect("encode");
    assert_eq!(record::trx_id(&rec), Ok(TrxId(0xABCD_EF01_2345)));
    assert_eq!(record::roll_ptr(&rec), Ok(sys(0).roll_ptr));
    let rp = RollPtr::new(true, 127, PageNo(u32::MAX - 1), u16::MAX);
    record::set_sys(&mut rec, TrxId::MAX, rp).expect("set");
    assert_eq!(record::trx_id(&rec), Ok(TrxId::MAX));
    let r = record::roll_ptr(&rec).expect("roll ptr");
    assert_eq!(
        (r.is_insert(), r.rseg(), r.page_no(), r.offset()),
        (true, 127, PageNo(u32::MAX - 1), u16::MAX)
    );
    assert!(!record::is_delete_marked(&rec).expect("info"));
    record::set_delete_marked(&mut rec, true).expect("mark");
    let f = l.decode(&rec).expect("decode");
    assert!(f.delete_marked);
    assert_eq!(f.sys.trx_id, TrxId::MAX);
    assert_eq!(l.field(&rec, 1), Ok(Stored::Inline(Value::Str("n".into()))));
    assert_eq!(l.field(&rec, 0), Ok(Stored::Inline(Value::Int(1))));
}

#[test]
fn secondary_record_carries_its_trx_id_in_place() {
    let l = users();
    let idx = SecondaryLayout::new(
        &l,
        vec![
            IndexColumn::new(1),
            IndexColumn {
                prefix: Some(3),
                ..IndexColumn::new(3)
            },
        ],
    )
    .expect("index");
    let row = vec![
        Value::Int(5),
        Value::Null,
        Value::Null,
        Value::Str("abcdef".into()),
        Value::Double(1.0),
    ];
    let mut rec = Vec::new();
    idx.encode(&row, None, TrxId(99), &RowLimits::default(), &mut rec)
        .expect("encode");
    assert_eq!(secondary::trx_id(&rec), Ok(TrxId(99)));
    secondary::set_trx_id(&mut rec, TrxId(100)).expect("set");
    secondary::set_delete_marked(&mut rec, true).expect("mark");
    let d = idx.decode(&rec).expect("decode");
    // A string's key part is its sort key, not its value.
    assert_eq!(d.key, vec![Some(Value::Null), None]);
    assert_eq!(d.pk, vec![Some(Value::Int(5))]);
    assert_eq!((d.trx_id, d.delete_marked), (TrxId(100), true));
    let mut search = Vec::new();
    idx.encode_search(&[Value::Null], &RowLimits::default(), &mut search)
        .expect("search");
    let key = secondary::key(&rec).expect("key");
    assert!(key.starts_with(&search));
    let n = idx.secondary_part_len(key).expect("len");
    assert_eq!(
        idx.key_layout().decode_part_at(key, 2),
        Ok(Some(Value::Int(5)))
    );
    assert!(n < key.len());
}

#[test]
fn truncated_and_garbled_records_are_corrupt_not_panics() {
    let l = users();
    let vals = vec![
        Value::Int(1),
        Value::Str("name".into()),
        Value::UInt(3),
        Value::Str("bio".into()),
        Value::Double(1.0),
    ];
    let mut rec = Vec::new();
    l.encode(&vals, &sys(1), &[], &RowLimits::default(), &mut rec)
        .expect("encode");
    for n in 0..rec.len() {
        assert!(l.decode(&rec[..n]).is_err(), "prefix of {n} bytes decoded");
    }
    let mut longer = rec.clone();
    longer.push(0);
    assert!(l.decode(&longer).expect_err("trailing").is_corruption());
}

// ---- property tests ----

fn arb_key_type() -> impl Strategy<Value = ColumnType> {
    let w = prop_oneof![
        Just(IntWidth::Tiny),
        Just(IntWidth::Small),
        Just(IntWidth::Medium),
        Just(IntWidth::Int),
        Just(IntWidth::Big)
    ];
    prop_oneof![
        (w, any::<bool>()).prop_map(|(width, unsigned)| ColumnType::Int { width, unsigned }),
        Just(ColumnType::Float),
        Just(ColumnType::Double),
        (1u8..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(precision, scale)| ColumnType::Decimal { precision, scale }),
        (1u32..8).prop_map(|n| ColumnType::Char { max_chars: n }),
        (1u32..8).prop_map(|n| ColumnType::VarChar { max_chars: n }),
        (1u32..6).prop_map(|len| ColumnType::Binary { len }),
        (1u32..8).prop_map(|max_len| ColumnType::VarBinary { max_len }),
        Just(ColumnType::Date),
        (0u8..=6).prop_map(|fsp| ColumnType::DateTime { fsp }),
        (0u8..=6).prop_map(|fsp| ColumnType::Timestamp { fsp }),
        (0u8..=6).prop_map(|fsp| ColumnType::Time { fsp }),
        (1u8..=64).prop_map(|bits| ColumnType::Bit { bits }),
    ]
}

fn arb_any_type() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        4 => arb_key_type(),
        1 => Just(ColumnType::Text(LobSize::Regular)),
        1 => Just(ColumnType::Blob(LobSize::Regular)),
        1 => Just(ColumnType::VarChar { max_chars: 1500 }),
    ]
}

fn small_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()],
        0..=max,
    )
}

fn arb_non_null(ty: ColumnType) -> BoxedStrategy<Value> {
    match ty {
        ColumnType::Int {
            width,
            unsigned: true,
        } => (0..=width.unsigned_max()).prop_map(Value::UInt).boxed(),
        ColumnType::Int { width, .. } => {
            let (lo, hi) = width.signed_range();
            prop_oneof![Just(lo), Just(hi), Just(0), -2i64..2, lo..=hi]
                .prop_map(Value::Int)
                .boxed()
        }
        ColumnType::Time { fsp } => {
            let max = Time::MAX_MICROS;
            let unit = 10i64.pow(6 - u32::from(fsp));
            prop_oneof![Just(max), Just(-max), Just(0), Just(-1), -max..=max]
                .prop_map(move |m| Value::Time(Time::from_micros(m / unit * unit)))
                .boxed()
        }
        ColumnType::Bit { bits } => {
            let max = crate::row::bit_max(bits);
            prop_oneof![Just(0), Just(max), 0..=max]
                .prop_map(Value::UInt)
                .boxed()
        }
        ColumnType::Year => prop_oneof![Just(0u64), 1901u64..=2155]
            .prop_map(Value::UInt)
            .boxed(),
        ColumnType::Float => any::<f32>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Double(f64::from(f)))
            .boxed(),
        ColumnType::Double => prop_oneof![
            Just(-0.0),
            Just(0.0),
            any::<f64>().prop_filter("finite", |f| f.is_finite())
        ]
        .prop_map(Value::Double)
        .boxed(),
        ColumnType::Decimal { precision, scale } => {
            let m = 10i128.pow(u32::from(precision)) - 1;
            prop_oneof![
                Just(-m),
                Just(m),
                (-1000i128..1000).prop_map(move |u| u.clamp(-m, m)),
                -m..=m
            ]
            .prop_map(move |u| Value::Decimal(Decimal::new(u, scale)))
            .boxed()
        }
        ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars } => {
            let max = (max_chars as usize).min(2000);
            prop_oneof![
                prop::collection::vec(
                    prop_oneof![
                        Just('\0'),
                        Just('a'),
                        Just('A'),
                        Just('b'),
                        Just('é'),
                        Just('ä'),
                        Just(' '),
                        Just(' '),
                        Just('\t'),
                        // Where the UCA collations differ: expansions, ignorables,
                        // combining marks, a space's weight, implicit weights.
                        Just('ß'),
                        Just('s'),
                        Just('\u{AD}'),
                        Just('\u{301}'),
                        Just('\u{A0}'),
                        Just('\u{FDFA}'),
                        Just('中'),
                        Just('😀'),
                        any::<char>()
                    ],
                    0..=max.min(8)
                )
                .prop_map(|c| c.into_iter().collect::<String>()),
                (0..=max).prop_map(|n| "z".repeat(n)),
            ]
            .prop_map(Value::Str)
            .boxed()
        }
        ColumnType::Text(_) => (0usize..6000, any::<char>())
            .prop_map(|(n, c)| {
                Value::Str(std::iter::repeat_n(c, n / c.len_utf8().max(1)).collect())
            })
            .boxed(),
        ColumnType::Binary { len } => prop::collection::vec(
            prop_oneof![Just(0u8), Just(0xFFu8), any::<u8>()],
            len as usize,
        )
        .prop_map(Value::Bytes)
        .boxed(),
        ColumnType::VarBinary { max_len } => {
            small_bytes(max_len as usize).prop_map(Value::Bytes).boxed()
        }
        ColumnType::Blob(_) => {
            prop_oneof![small_bytes(20), (0usize..6000).prop_map(|n| vec![7u8; n])]
                .prop_map(Value::Bytes)
                .boxed()
        }
        ColumnType::Date => arb_date(0..=9999).prop_map(Value::Date).boxed(),
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            let years = if matches!(ty, ColumnType::Timestamp { .. }) {
                1971..=2037
            } else {
                0..=9999
            };
            let unit = 10u32.pow(u32::from(6 - fsp));
            (arb_date(years), 0u8..24, 0u8..60, 0u8..60, 0u32..=999_999)
                .prop_map(move |(d, h, m, s, us)| {
                    Value::DateTime(DateTime::new(d, h, m, s, us / unit * unit))
                })
                .boxed()
        }
        // Not drawn by the generic strategies (their values need the column's members):
        // the enum_* tests below cover ENUM and SET; '' is a value of both.
        ColumnType::Enum { .. } | ColumnType::Set { .. } => Just(Value::Str(String::new())).boxed(),
    }
}

fn arb_date(years: std::ops::RangeInclusive<u16>) -> impl Strategy<Value = Date> {
    (years, 1u8..=12, 1u8..=28).prop_map(|(y, m, d)| Date::new(y, m, d))
}

fn arb_value(c: &Column) -> BoxedStrategy<Value> {
    if c.nullable {
        prop_oneof![1 => Just(Value::Null), 4 => arb_non_null(c.ty)].boxed()
    } else {
        arb_non_null(c.ty)
    }
}

fn arb_parts(
    types: impl Strategy<Value = ColumnType>,
    n: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<KeyPart>> {
    let colls = 0..Collation::ALL.len();
    prop::collection::vec((types, any::<bool>(), any::<bool>(), colls), n).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (ty, nullable, desc, coll))| KeyPart {
                column: Column {
                    name: format!("c{i}"),
                    ty,
                    nullable,
                    default: None,
                    collation: Collation::ALL[coll],
                    members: Vec::new(),
                    json: false,
                    instant: None,
                    on_update: false,
                    comment: String::new(),
                    display: None,
                    zerofill: false,
                    unsigned: false,
                    digits: None,
                },
                prefix: None,
                descending: desc,
            })
            .collect()
    })
}

fn arb_tuple(parts: &[KeyPart]) -> BoxedStrategy<Vec<Value>> {
    parts
        .iter()
        .map(|p| arb_value(&p.column))
        .collect::<Vec<_>>()
        .boxed()
}

fn cmp_sql(parts: &[KeyPart], a: &[Value], b: &[Value]) -> Ordering {
    for ((p, x), y) in parts.iter().zip(a).zip(b) {
        let o = x.cmp_in(y, p.column.collation);
        let o = if p.descending { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn canon(cols: &[Column], v: &[Value]) -> Vec<Value> {
    cols.iter()
        .zip(v)
        .map(|(c, v)| c.canonical(v).expect("valid").into_owned())
        .collect()
}

fn arb_table() -> impl Strategy<Value = (RowLayout, Vec<Value>)> {
    (
        arb_parts(arb_key_type(), 0..3),
        prop::collection::vec((arb_any_type(), any::<bool>()), 1..7),
    )
        .prop_flat_map(|(pk, rest)| {
            let mut cols: Vec<Column> = pk
                .iter()
                .map(|p| {
                    Column::new(p.column.name.clone(), p.column.ty)
                        .with_collation(p.column.collation)
                })
                .collect();
            let npk = cols.len();
            cols.extend(
                rest.into_iter()
                    .enumerate()
                    .map(|(i, (ty, nullable))| Column {
                        name: format!("r{i}"),
                        ty,
                        nullable,
                        default: None,
                        collation: Collation::ALL[i % Collation::ALL.len()],
                        members: Vec::new(),
                        json: false,
                        instant: None,
                        on_update: false,
                        comment: String::new(),
                        display: None,
                        zerofill: false,
                        unsigned: false,
                        digits: None,
                    }),
            );
            let layout = RowLayout::new(cols.clone(), &(0..npk).collect::<Vec<_>>())
                .expect("layout")
                .with_extern_prefix(10);
            let vals = cols.iter().map(arb_value).collect::<Vec<_>>();
            (Just(layout), vals)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn key_order_equals_sql_order(
        (parts, a, b) in arb_parts(arb_key_type(), 1..4)
            .prop_flat_map(|p| { let (x, y) = (arb_tuple(&p), arb_tuple(&p)); (Just(p), x, y) })
    ) {
        let k = KeyLayout::new(parts.clone()).expect("layout");
        let cols: Vec<Column> = parts.iter().map(|p| p.column.clone()).collect();
        let (ca, cb) = (canon(&cols, &a), canon(&cols, &b));
        let (ea, eb) = (enc(&k, &a), enc(&k, &b));
        prop_assert_eq!(ea.cmp(&eb), cmp_sql(&parts, &ca, &cb));
        // Keys decode back (covering reads), but for strings, whose parts hold sort keys;
        // -0.0 comes back as 0.0, which compares equal.
        let da = k.decode_parts(&ea).expect("decode");
        let da: Vec<Value> = da.into_iter().zip(&ca).zip(&parts).map(|((d, c), p)| {
            assert_eq!(d.is_none(), p.holds_weights() && !matches!(c, Value::Null));
            d.unwrap_or_else(|| c.clone())
        }).collect();
        prop_assert_eq!(cmp_sql(&parts, &da, &ca), Ordering::Equal);
        prop_assert_eq!(enc(&k, &da), ea.clone());
        prop_assert_eq!(k.skip(&ea, parts.len()).expect("skip"), ea.len());
    }

    /// The read path's decoding (`decode_values`) gives what `decode` gives, and under a
    /// projection the chosen columns' values with NULL for the others.
    #[test]
    fn projected_reads_decode_the_chosen_columns(
        (layout, vals) in arb_table(),
        mask in prop::collection::vec(any::<bool>(), 0..12),
        trx in 0..=TrxId::MAX.0,
    ) {
        let lim = RowLimits::default();
        let mut s = sys(trx);
        if layout.has_row_id() {
            s.row_id = Some(RowId(trx ^ 0x5555));
        }
        if layout.plan_off_page(&vals, &s, &lim).is_err() {
            return Ok(());
        }
        let mut blobs = Blobs::default();
        let rec = blobs.encode(&layout, &vals, &s, &lim);
        let whole = blobs.decode(&layout, &rec);
        prop_assert_eq!(&blobs.decode_values(&layout, &rec, None), &whole);
        let got = blobs.decode_values(&layout, &rec, Some(&mask));
        prop_assert_eq!(got.len(), whole.len());
        for (i, (g, w)) in got.iter().zip(&whole).enumerate() {
            // A column past the mask's end is read.
            if mask.get(i).copied().unwrap_or(true) {
                prop_assert_eq!(g, w, "column {}", i);
            } else {
                prop_assert_eq!(g, &Value::Null, "column {}", i);
            }
        }
    }

    #[test]
    fn rows_round_trip((layout, vals) in arb_table(), trx in 0..=TrxId::MAX.0, small_page in any::<bool>()) {
        let lim = RowLimits::for_page(PageSize::new(if small_page { 4096 } else { 16384 }).expect("page size"));
        let mut s = sys(trx);
        if layout.has_row_id() {
            s.row_id = Some(RowId(trx ^ 0x5555));
        }
        let plan = layout.plan_off_page(&vals, &s, &lim);
        let Ok(_) = plan else {
            // Only size can fail for generated values.
            prop_assert!(matches!(plan, Err(RowError::RowTooLarge { .. } | RowError::KeyTooLong { .. })), "{plan:?}");
            return Ok(());
        };
        let mut blobs = Blobs::default();
        let rec = blobs.encode(&layout, &vals, &s, &lim);
        prop_assert!(rec.len() <= lim.max_record_bytes);
        prop_assert_eq!(blobs.decode(&layout, &rec), canon(layout.columns(), &vals));
        let f = layout.decode(&rec).expect("decode");
        prop_assert_eq!(f.sys, s);
        prop_assert_eq!(record::trx_id(&rec), Ok(TrxId(trx)));
        for (i, field) in f.fields.iter().enumerate() {
            prop_assert_eq!(&layout.field(&rec, i).expect("field"), field);
        }
        let mut key = Vec::new();
        layout.encode_key(&vals, s.row_id, &lim, &mut key).expect("key");
        prop_assert_eq!(record::key(&rec).expect("key"), &key[..]);
    }

    #[test]
    fn secondary_records_round_trip((layout, vals) in arb_table(), pick in prop::collection::vec(any::<prop::sample::Index>(), 1..3), trx in 0..=TrxId::MAX.0) {
        let n = layout.columns().len();
        let cols: Vec<IndexColumn> = pick.iter().map(|i| {
            let c = i.index(n);
            let ty = layout.columns()[c].ty;
            let prefix = (ty.is_lob() || ty.max_bytes() > 1000).then_some(5);
            IndexColumn { prefix, ..IndexColumn::new(c) }
        }).collect();
        let idx = SecondaryLayout::new(&layout, cols.clone()).expect("index");
        let lim = RowLimits::default();
        let row_id = layout.has_row_id().then_some(RowId(trx));
        let mut rec = Vec::new();
        idx.encode(&vals, row_id, TrxId(trx), &lim, &mut rec).expect("encode");
        prop_assert_eq!(secondary::trx_id(&rec), Ok(TrxId(trx)));
        let d = idx.decode(&rec).expect("decode");
        let c = canon(layout.columns(), &vals);
        for (ic, got) in cols.iter().zip(&d.key) {
            let want = &c[ic.column];
            let Some(got) = got else {
                // A string's part holds its sort key.
                prop_assert!(layout.columns()[ic.column].ty.is_string());
                continue;
            };
            match (ic.prefix, want) {
                (Some(p), Value::Str(s)) => prop_assert_eq!(got, &Value::Str(s.chars().take(p as usize).collect())),
                (Some(p), Value::Bytes(b)) => prop_assert_eq!(got, &Value::Bytes(b.iter().copied().take(p as usize).collect())),
                _ => prop_assert_eq!(got.cmp_sql(want), Ordering::Equal),
            }
        }
        let pk: Vec<Value> = match row_id {
            Some(id) => vec![Value::UInt(id.0)],
            None => layout.primary_key().iter().map(|&i| c[i].clone()).collect(),
        };
        prop_assert_eq!(d.pk.len(), pk.len());
        for (a, b) in d.pk.iter().zip(&pk) {
            match a {
                Some(a) => prop_assert_eq!(a.cmp_sql(b), Ordering::Equal),
                None => prop_assert!(matches!(b, Value::Str(_))),
            }
        }
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics((layout, _vals) in arb_table(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = layout.decode(&bytes);
        for i in 0..layout.columns().len() {
            let _ = layout.field(&bytes, i);
        }
        let _ = layout.key_layout().decode(&bytes);
        let _ = record::trx_id(&bytes);
        let _ = record::roll_ptr(&bytes);
        let _ = secondary::trx_id(&bytes);
        if let Ok(idx) = SecondaryLayout::new(&layout, vec![IndexColumn { prefix: Some(3), ..IndexColumn::new(0) }]) {
            let _ = idx.decode(&bytes);
        }
    }

    #[test]
    fn decoding_damaged_records_never_panics((layout, vals) in arb_table(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let lim = RowLimits::default();
        let mut s = sys(7);
        s.row_id = layout.has_row_id().then_some(RowId(1));
        let Ok(plan) = layout.plan_off_page(&vals, &s, &lim) else { return Ok(()) };
        let refs: Vec<_> = plan.iter().map(|&c| {
            let len = match &vals[c] { Value::Str(x) => x.len(), Value::Bytes(b) => b.len(), _ => 0 };
            (c, ExternRef::new(SpaceId(1), PageNo(2), len as u64))
        }).collect();
        let mut rec = Vec::new();
        layout.encode(&vals, &s, &refs, &lim, &mut rec).expect("encode");
        for (i, b) in flips {
            let at = i.index(rec.len());
            rec[at] ^= b | 1;
        }
        let _ = layout.decode(&rec);
        for i in 0..layout.columns().len() {
            let _ = layout.field(&rec, i);
        }
    }
}

#[test]
fn blob_parts_fill_a_page_and_read_back() {
    let lim = RowLimits::for_page(PageSize::new(4096).expect("4K"));
    let mut page = vec![0u8; 4096];
    let data = vec![0xAB; 5000];
    let n = write_blob_part(&mut page, &data);
    assert_eq!(n, lim.blob_part_max);
    assert_eq!(read_blob_part(&page).expect("read"), &data[..n]);
    page[32..36].copy_from_slice(&5000u32.to_le_bytes());
    assert!(read_blob_part(&page).expect_err("too long").is_corruption());
    let r = ExternRef::new(SpaceId(1), PageNo(4), 5000);
    assert_eq!(r.pages(lim.blob_part_max), 2);
}

/// An ENUM column of `n` members named `m1`, `m2`, … (general_ci), NOT NULL.
fn enum_column(name: &str, n: u16) -> Column {
    Column::new(name, ColumnType::Enum { members: n })
        .with_collation(Collation::Utf8mb4GeneralCi)
        .with_members((1..=n).map(|i| format!("m{i}")).collect())
}

#[test]
fn enum_is_stored_as_its_index_in_one_or_two_bytes() {
    assert_eq!(ColumnType::Enum { members: 255 }.fixed_size(), Some(1));
    assert_eq!(ColumnType::Enum { members: 256 }.fixed_size(), Some(2));
    for n in [3u16, 300] {
        let c = enum_column("e", n);
        let k = KeyLayout::new(vec![KeyPart::new(c.clone())]).expect("layout");
        let w = if n > 255 { 2 } else { 1 };
        // The key is the big-endian index: m3 is 3, the error value '' is 0.
        let key = enc(&k, &[Value::Str("m3".into())]);
        assert_eq!(key.len(), w);
        assert_eq!(key[w - 1], 3);
        assert!(enc(&k, &[Value::Str(String::new())])
            .iter()
            .all(|b| *b == 0));
        // Decoding the key gives the member's name back (a covering read).
        assert_eq!(
            k.decode(&key).expect("decode"),
            vec![Value::Str("m3".into())]
        );
    }
}

#[test]
fn enum_takes_members_in_its_collation_and_refuses_others() {
    let c = enum_column("e", 3);
    let canon = |s: &str| c.canonical(&Value::Str(s.into())).map(|v| v.into_owned());
    assert_eq!(canon("M2"), Ok(Value::Str("m2".into())));
    assert_eq!(canon("m2  "), Ok(Value::Str("m2".into())));
    assert_eq!(canon(""), Ok(Value::Str(String::new())));
    assert!(matches!(
        canon("m4"),
        Err(RowError::Value {
            kind: ValueError::NotAMember,
            ..
        })
    ));
    assert!(matches!(
        c.canonical(&Value::Int(1)),
        Err(RowError::WrongType { .. })
    ));
    // The member list must match the type.
    let short = Column::new("e", ColumnType::Enum { members: 2 }).with_members(vec!["a".into()]);
    assert!(RowLayout::new(vec![short], &[]).is_err());
}

#[test]
fn enum_rows_round_trip_with_the_key_in_member_order() {
    let l = RowLayout::new(
        vec![
            enum_column("k", 300),
            Column::nullable("e", ColumnType::Enum { members: 2 })
                .with_members(vec!["b".into(), "a".into()]),
        ],
        &[0],
    )
    .expect("layout");
    let lim = RowLimits::default();
    for vals in [
        vec![Value::Str("m299".into()), Value::Str("a".into())],
        vec![Value::Str("m1".into()), Value::Null],
        vec![Value::Str(String::new()), Value::Str(String::new())],
    ] {
        let mut blobs = Blobs::default();
        let rec = blobs.encode(&l, &vals, &sys(1), &lim);
        assert_eq!(blobs.decode(&l, &rec), vals);
    }
}

proptest! {
    #[test]
    fn enum_key_order_is_member_order(n in 1u16..600, a in 0u16..600, b in 0u16..600, desc in any::<bool>()) {
        let c = enum_column("e", n);
        let (a, b) = (a % (n + 1), b % (n + 1));
        let name = |i: u16| c.member_name(i).map(str::to_string).unwrap_or_default();
        let part = if desc { KeyPart::new(c.clone()).descending() } else { KeyPart::new(c.clone()) };
        let k = KeyLayout::new(vec![part]).expect("layout");
        let (ka, kb) = (enc(&k, &[Value::Str(name(a))]), enc(&k, &[Value::Str(name(b))]));
        let want = if desc { b.cmp(&a) } else { a.cmp(&b) };
        prop_assert_eq!(ka.cmp(&kb), want);
        prop_assert_eq!(k.decode(&ka).expect("decode"), vec![Value::Str(name(a))]);
    }
}

/// A SET column of `n` members named `m1`, `m2`, … (general_ci), nullable.
fn set_column(name: &str, n: u8) -> Column {
    Column::nullable(name, ColumnType::Set { members: n })
        .with_collation(Collation::Utf8mb4GeneralCi)
        .with_members((1..=n).map(|i| format!("m{i}")).collect())
}

#[test]
fn set_is_stored_as_its_bitmask_with_canonical_text() {
    assert_eq!(
        [1u8, 8, 9, 17, 25, 32, 33, 64].map(|n| ColumnType::Set { members: n }.fixed_size()),
        [1, 1, 2, 3, 4, 4, 8, 8].map(Some)
    );
    let c = set_column("s", 3);
    let canon = |s: &str| c.canonical(&Value::Str(s.into())).map(|v| v.into_owned());
    assert_eq!(canon("M3,m1,m3"), Ok(Value::Str("m1,m3".into())));
    assert_eq!(canon(""), Ok(Value::Str(String::new())));
    assert!(canon("m1,m4").is_err());
    let k = KeyLayout::new(vec![KeyPart::new(c.clone())]).expect("layout");
    let key = enc(&k, &[Value::Str("m1,m3".into())]);
    assert_eq!(key, [super::key::NOT_NULL, 0b101]);
    assert_eq!(
        k.decode(&key).expect("decode"),
        vec![Value::Str("m1,m3".into())]
    );
    let l = RowLayout::new(
        vec![
            Column::new("id", int(IntWidth::Int, false)),
            set_column("s", 64),
        ],
        &[0],
    )
    .expect("layout");
    let all: Vec<String> = (1..=64).map(|i| format!("m{i}")).collect();
    let mut blobs = Blobs::default();
    for vals in [
        vec![Value::Int(1), Value::Str(all.join(","))],
        vec![Value::Int(2), Value::Null],
        vec![Value::Int(3), Value::Str("m64".into())],
    ] {
        let rec = blobs.encode(&l, &vals, &sys(1), &RowLimits::default());
        assert_eq!(blobs.decode(&l, &rec), vals);
    }
}

proptest! {
    #[test]
    fn set_key_order_is_bitmask_order(n in 1u8..=64, a in any::<u64>(), b in any::<u64>()) {
        let c = set_column("s", n);
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let (a, b) = (a & all, b & all);
        let text = |m: u64| c.set_text(m).expect("members");
        let k = KeyLayout::new(vec![KeyPart::new(c.clone())]).expect("layout");
        let (ka, kb) = (enc(&k, &[Value::Str(text(a))]), enc(&k, &[Value::Str(text(b))]));
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        prop_assert_eq!(c.set_mask(&text(a)), Some(a));
    }
}

#[test]
fn year_is_one_byte_of_year_minus_1900_with_zero_for_0000() {
    assert_eq!(ColumnType::Year.fixed_size(), Some(1));
    let c = Column::nullable("y", ColumnType::Year);
    let k = KeyLayout::new(vec![KeyPart::new(Column::new("y", ColumnType::Year))]).expect("layout");
    for (y, b) in [(0u64, 0u8), (1901, 1), (2024, 124), (2155, 255)] {
        assert_eq!(enc(&k, &[Value::UInt(y)]), vec![b]);
        assert_eq!(k.decode(&[b]).expect("decode"), vec![Value::UInt(y)]);
    }
    // Signed integers are taken; anything outside 0 and 1901..=2155 is refused.
    assert_eq!(
        c.canonical(&Value::Int(2000)).map(|v| v.into_owned()),
        Ok(Value::UInt(2000))
    );
    for bad in [
        Value::Int(-1),
        Value::UInt(1900),
        Value::UInt(2156),
        Value::UInt(1),
    ] {
        assert!(matches!(
            c.canonical(&bad),
            Err(RowError::Value {
                kind: ValueError::OutOfRange,
                ..
            })
        ));
    }
    let l = RowLayout::new(vec![Column::new("id", ColumnType::Year), c], &[0]).expect("layout");
    let lim = RowLimits::default();
    for vals in [
        vec![Value::UInt(0), Value::UInt(2155)],
        vec![Value::UInt(1901), Value::Null],
    ] {
        let mut blobs = Blobs::default();
        let rec = blobs.encode(&l, &vals, &sys(1), &lim);
        assert_eq!(blobs.decode(&l, &rec), vals);
    }
}

proptest! {
    #[test]
    fn year_key_order_is_year_order(a in 1900u64..=2155, b in 1900u64..=2155, desc in any::<bool>()) {
        // 1900 stands for the zero year 0000, which sorts first.
        let y = |x: u64| if x == 1900 { 0 } else { x };
        let part = KeyPart::new(Column::new("y", ColumnType::Year));
        let part = if desc { part.descending() } else { part };
        let k = KeyLayout::new(vec![part]).expect("layout");
        let (ka, kb) = (enc(&k, &[Value::UInt(y(a))]), enc(&k, &[Value::UInt(y(b))]));
        let want = if desc { b.cmp(&a) } else { a.cmp(&b) };
        prop_assert_eq!(ka.cmp(&kb), want);
    }
}

/// The users table with two columns added instantly: a NOT NULL INT read as 7 by older
/// records, and a nullable VARCHAR read as NULL.
fn users_added() -> RowLayout {
    let mut cols = users().columns().to_vec();
    let seven = Column::new("level", int(IntWidth::Int, false));
    let bytes = record::encode_field(&seven, &Value::Int(7)).expect("field");
    cols.push(Column {
        instant: Some(InstantValue::Field(bytes)),
        ..seven
    });
    cols.push(Column {
        instant: Some(InstantValue::Null),
        ..Column::nullable("note", ColumnType::VarChar { max_chars: 20 })
    });
    RowLayout::new(cols, &[0]).expect("layout with added columns")
}

#[test]
fn records_written_before_an_instant_add_read_the_added_values() {
    let (old, new) = (users(), users_added());
    let lim = RowLimits::default();
    let sys = SysFields::default();
    let mut rec = Vec::new();
    let row = vec![
        Value::Int(1),
        Value::Str("ann".into()),
        Value::Null,
        Value::Str("bio".into()),
        Value::Double(2.5),
    ];
    old.encode(&row, &sys, &[], &lim, &mut rec).expect("encode");
    let fields = new.decode(&rec).expect("decode with the new layout");
    let vals: Vec<Value> = fields
        .fields
        .into_iter()
        .map(|f| match f {
            Stored::Inline(v) => v,
            other => panic!("inline expected: {other:?}"),
        })
        .collect();
    let mut want = row.clone();
    want.extend([Value::Int(7), Value::Null]);
    assert_eq!(vals, want);
    assert_eq!(
        new.field(&rec, 5).expect("field"),
        Stored::Inline(Value::Int(7))
    );
    assert_eq!(
        new.field(&rec, 1).expect("field"),
        Stored::Inline(Value::Str("ann".into()))
    );
    // A record of the new layout holds every column, and the old layout refuses it.
    let mut full = row.clone();
    full.extend([Value::Int(9), Value::Str("x".into())]);
    let mut rec2 = Vec::new();
    new.encode(&full, &sys, &[], &lim, &mut rec2)
        .expect("encode");
    let back = new.decode(&rec2).expect("decode");
    assert_eq!(back.fields[5], Stored::Inline(Value::Int(9)));
    assert_eq!(back.fields[6], Stored::Inline(Value::Str("x".into())));
    assert!(matches!(old.decode(&rec2), Err(RowError::Corrupt(_))));
    // A record with fewer fields than the table ever had is corrupt.
    let mut short = rec.clone();
    let n_at = 3 + record::key(&rec).expect("key").len() + 13;
    short[n_at] -= 1;
    assert!(matches!(new.decode(&short), Err(RowError::Corrupt(_))));
}

#[test]
fn instant_columns_must_be_last_and_outside_the_key() {
    let added = users_added();
    let mut cols = added.columns().to_vec();
    // Not last: an ordinary column after an instant one.
    cols.push(Column::new("plain", int(IntWidth::Int, false)));
    assert!(RowLayout::new(cols, &[0]).is_err());
    // In the primary key.
    assert!(RowLayout::new(added.columns().to_vec(), &[0, 5]).is_err());
    // NULL for a NOT NULL column.
    let mut cols = users().columns().to_vec();
    cols.push(Column {
        instant: Some(InstantValue::Null),
        ..Column::new("x", int(IntWidth::Int, false))
    });
    assert!(RowLayout::new(cols, &[0]).is_err());
    // Field bytes that are not the column's.
    let mut cols = users().columns().to_vec();
    cols.push(Column {
        instant: Some(InstantValue::Field(vec![1, 2, 3])),
        ..Column::new("x", int(IntWidth::Int, false))
    });
    assert!(RowLayout::new(cols, &[0]).is_err());
}

#[test]
fn time_is_six_bytes_of_biased_microseconds_and_orders_by_duration() {
    let ty = ColumnType::Time { fsp: 3 };
    assert_eq!(ty.fixed_size(), Some(6));
    let k = KeyLayout::new(vec![KeyPart::new(Column::new("t", ty))]).expect("layout");
    let max = Time::MAX_MICROS;
    let keys: Vec<Vec<u8>> = [-max + 999, -1_000, 0, 1_000, max - 999]
        .iter()
        .map(|m| enc(&k, &[Value::Time(Time::from_micros(*m))]))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    // Zero is the bias, 2^47: the sign bit of 48 set, nothing else.
    assert_eq!(keys[2], vec![0x80, 0, 0, 0, 0, 0]);
    let c = Column::nullable("t", ty);
    for bad in [max + 1, -(max + 1)] {
        assert!(matches!(
            c.canonical(&Value::Time(Time::from_micros(bad))),
            Err(RowError::Value {
                kind: ValueError::OutOfRange,
                ..
            })
        ));
    }
    // Finer than TIME(3): refused (the SQL layer cuts first).
    assert!(matches!(
        c.canonical(&Value::Time(Time::from_micros(1))),
        Err(RowError::Value {
            kind: ValueError::TooPrecise { fsp: 3 },
            ..
        })
    ));
    let l = RowLayout::new(vec![Column::new("id", ty), c], &[0]).expect("layout");
    let lim = RowLimits::default();
    let vals = vec![
        Value::Time(Time::from_micros(-max + 999)),
        Value::Time(Time::from_parts(false, 26, 3, 4, 500_000)),
    ];
    let mut blobs = Blobs::default();
    let rec = blobs.encode(&l, &vals, &sys(1), &lim);
    assert_eq!(blobs.decode(&l, &rec), vals);
}

#[test]
fn bit_is_its_value_in_the_fewest_whole_bytes() {
    for (bits, bytes) in [(1u8, 1usize), (8, 1), (9, 2), (12, 2), (63, 8), (64, 8)] {
        assert_eq!(ColumnType::Bit { bits }.fixed_size(), Some(bytes));
    }
    let ty = ColumnType::Bit { bits: 12 };
    let k = KeyLayout::new(vec![KeyPart::new(Column::new("b", ty))]).expect("layout");
    assert_eq!(enc(&k, &[Value::UInt(0xABC)]), vec![0x0A, 0xBC]);
    assert_eq!(
        k.decode(&[0x0F, 0xFF]).expect("decode"),
        vec![Value::UInt(4095)]
    );
    assert!(k
        .decode(&[0x10, 0x00])
        .expect_err("13 bits")
        .is_corruption());
    let c = Column::new("b", ty);
    assert_eq!(
        c.canonical(&Value::Int(5)).map(|v| v.into_owned()),
        Ok(Value::UInt(5))
    );
    for bad in [Value::UInt(4096), Value::Int(-1)] {
        assert!(matches!(
            c.canonical(&bad),
            Err(RowError::Value {
                kind: ValueError::OutOfRange,
                ..
            })
        ));
    }
    assert!(ColumnType::Bit { bits: 0 }.check().is_err());
    assert!(ColumnType::Bit { bits: 65 }.check().is_err());
    let wide = Column::new("w", ColumnType::Bit { bits: 64 });
    let l = RowLayout::new(vec![Column::new("id", ty), wide], &[0]).expect("layout");
    let vals = vec![Value::UInt(1), Value::UInt(u64::MAX)];
    let mut blobs = Blobs::default();
    let rec = blobs.encode(&l, &vals, &sys(1), &RowLimits::default());
    assert_eq!(blobs.decode(&l, &rec), vals);
}
