//! The result columns of a prepared SELECT that are a bare parameter (`SELECT ? AS v`).
//!
//! At PREPARE a `?` has no type (Quire plans it as a string); MariaDB types such a column
//! at COM_STMT_EXECUTE by the type the client bound the parameter with (sql_prepare.cc,
//! `set_param_*`): a DOUBLE bound is a DOUBLE column, a TINY a TINYINT one, and drivers
//! decode the values by those columns (mysql2 reads `SELECT ? AS v` with 42 bound as the
//! number 42, not the string "42"). Only the column definitions change: the values are
//! the parameters' own, and the binary protocol writes them by the column's type.
//!
//! What MariaDB 10.11 sends for a non-NULL parameter (NOT NULL and BINARY flags, the
//! binary character set, UNSIGNED for an unsigned integer): TINY length 4, SHORT 6, LONG
//! 11, LONGLONG 21 (`Item_param::set_int`), DOUBLE 23 with NOT_FIXED_DEC decimals
//! (`set_double`), DATETIME 19 with 6 decimals when the value has a fraction, else 0
//! (`set_time`). Other types, and NULL, keep the planned column.

use quire_engine::row::Value;

use crate::expr::Expr;
use crate::func::types::NOT_FIXED_DEC;
use crate::meta::{charset, flags, ColumnMeta, FieldType, RowSink, SinkError};
use crate::stmt::Planned;

/// A parameter's type as COM_STMT_EXECUTE bound it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    pub ty: FieldType,
    pub unsigned: bool,
}

/// `(column, parameter)` of each result column of `p` that is a bare parameter.
pub(crate) fn bare_params(p: &Planned) -> Vec<(usize, usize)> {
    match p {
        Planned::Select(s) => s
            .items
            .iter()
            .enumerate()
            .filter_map(|(c, e)| match e {
                Expr::Param(i) => Some((c, *i)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The column MariaDB sends for a bare parameter bound as `t` with value `v` (module
/// comment); `None`: the planned column `base` stays.
pub(crate) fn param_column(base: &ColumnMeta, t: ParamType, v: &Value) -> Option<ColumnMeta> {
    if matches!(v, Value::Null) {
        return None;
    }
    let (length, decimals, integer) = match t.ty {
        FieldType::Tiny => (4, 0, true),
        FieldType::Short => (6, 0, true),
        FieldType::Long => (11, 0, true),
        FieldType::LongLong => (21, 0, true),
        FieldType::Double => (23, NOT_FIXED_DEC, false),
        FieldType::DateTime => match v {
            Value::DateTime(dt) => (19, if dt.micros != 0 { 6 } else { 0 }, false),
            _ => return None,
        },
        _ => return None,
    };
    let unsigned = if integer && t.unsigned {
        flags::UNSIGNED
    } else {
        0
    };
    Some(ColumnMeta {
        charset: charset::BINARY,
        length,
        ty: t.ty,
        flags: flags::NOT_NULL | flags::BINARY | unsigned,
        decimals,
        ..base.clone()
    })
}

/// A sink that sends the retyped columns in place of the planned ones.
pub(crate) struct Retyped<'a> {
    pub sink: &'a mut dyn RowSink,
    /// (column, the parameter's bound type, its value)
    pub cols: Vec<(usize, ParamType, Value)>,
}

impl RowSink for Retyped<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<(), SinkError> {
        let mut cols = cols.to_vec();
        for (c, t, v) in &self.cols {
            if let Some(slot) = cols.get_mut(*c) {
                if let Some(m) = param_column(slot, *t, v) {
                    *slot = m;
                }
            }
        }
        self.sink.columns(&cols)
    }

    fn row(&mut self, row: &[Value]) -> Result<(), SinkError> {
        self.sink.row(row)
    }

    fn local_infile(&mut self, name: &str) -> Option<Box<dyn std::io::Read + '_>> {
        self.sink.local_infile(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_engine::row::{Date, DateTime};

    fn t(ty: FieldType, unsigned: bool) -> ParamType {
        ParamType { ty, unsigned }
    }

    #[test]
    fn a_bare_parameter_is_typed_as_it_was_bound() {
        let base = ColumnMeta::computed("v", FieldType::VarString, 1020, 39);
        let m =
            param_column(&base, t(FieldType::Double, false), &Value::Double(1.25)).expect("typed");
        assert_eq!(
            (
                m.name.as_str(),
                m.ty,
                m.length,
                m.decimals,
                m.flags,
                m.charset
            ),
            ("v", FieldType::Double, 23, 31, 129, charset::BINARY)
        );
        let m = param_column(&base, t(FieldType::Tiny, true), &Value::UInt(1)).expect("typed");
        assert_eq!((m.ty, m.length, m.flags), (FieldType::Tiny, 4, 161));
        let m = param_column(&base, t(FieldType::LongLong, false), &Value::Int(-5)).expect("typed");
        assert_eq!((m.ty, m.length, m.flags), (FieldType::LongLong, 21, 129));
        let dt = |micros| DateTime {
            date: Date {
                year: 1990,
                month: 1,
                day: 1,
            },
            hour: 0,
            minute: 0,
            second: 0,
            micros,
        };
        let m = param_column(
            &base,
            t(FieldType::DateTime, false),
            &Value::DateTime(dt(0)),
        )
        .expect("typed");
        assert_eq!((m.ty, m.length, m.decimals), (FieldType::DateTime, 19, 0));
        let m = param_column(
            &base,
            t(FieldType::DateTime, false),
            &Value::DateTime(dt(500_000)),
        )
        .expect("typed");
        assert_eq!(m.decimals, 6);
        // NULL and the types not typed here keep the planned column.
        assert!(param_column(&base, t(FieldType::Double, false), &Value::Null).is_none());
        assert!(param_column(
            &base,
            t(FieldType::VarString, false),
            &Value::Str("x".into())
        )
        .is_none());
    }
}
