//! Prepared statements in the binary protocol: COM_STMT_PREPARE, EXECUTE,
//! SEND_LONG_DATA, CLOSE, RESET, FETCH.
//!
//! The session owns the statements (their SQL and plan); the connection keeps only what
//! the wire needs between packets: the parameter types of the last execution (a client
//! may send them once) and the long data accumulated per parameter.

use quire_sql::{charset, flags, ColumnMeta, FieldType, SqlError, Value};

use crate::charset::WireCharset;

use crate::conn::{affected_rows, finish_statement, CmdResult, Conn, StatementTimer};
use crate::errors::proto;
use crate::reply::{eof_packet, Reader};
use crate::resultset::{column_definition, ColumnWire, ResultSink, RowFormat};
use crate::stmt_params::{bound_types, decode_params, parse_header, ParamType};

/// What the connection remembers of one prepared statement.
#[derive(Debug, Default, Clone)]
pub struct StmtState {
    pub types: Vec<ParamType>,
    pub long_data: Vec<Option<Vec<u8>>>,
    /// Long data past max_allowed_packet was sent: the next execution fails with 1153.
    pub long_data_overflow: bool,
}

impl StmtState {
    fn new(params: usize) -> Self {
        StmtState {
            types: Vec::new(),
            long_data: vec![None; params],
            long_data_overflow: false,
        }
    }
    fn clear_long_data(&mut self) {
        self.long_data.iter_mut().for_each(|d| *d = None);
        self.long_data_overflow = false;
    }
}

/// The definition sent for each `?` at prepare time: a VARCHAR placeholder, as MariaDB
/// sends (the real types come with each execution).
fn param_placeholder() -> ColumnMeta {
    ColumnMeta {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: "?".into(),
        org_name: String::new(),
        charset: charset::BINARY,
        length: 0,
        ty: FieldType::VarString,
        flags: flags::BINARY,
        decimals: 0,
        json: false,
    }
}

impl Conn<'_> {
    pub(crate) fn com_stmt_prepare(&mut self, body: &[u8]) -> CmdResult {
        let sql = self.statement_text(body);
        self.session.info().set_command("Prepare", Some(&sql));
        let info = match self.session.prepare(&sql) {
            Ok(i) => i,
            Err(e) => {
                self.send_sql_err(&e)?;
                return Ok(());
            }
        };
        // COM_STMT_PREPARE_OK.
        let mut ok = Vec::with_capacity(12);
        ok.push(0x00);
        ok.extend_from_slice(&info.id.to_le_bytes());
        let ncols = u16::try_from(info.columns.len()).unwrap_or(u16::MAX);
        ok.extend_from_slice(&ncols.to_le_bytes());
        ok.extend_from_slice(&info.params.to_le_bytes());
        ok.push(0x00);
        ok.extend_from_slice(&self.session.warning_count().to_le_bytes());
        self.write(&ok)?;
        let deprecate_eof = self.deprecate_eof();
        if info.params > 0 {
            let wire = ColumnWire {
                cs: WireCharset::Utf8,
                ..self.column_wire()
            };
            let def = column_definition(&param_placeholder(), false, wire);
            for _ in 0..info.params {
                self.write(&def)?;
            }
            if !deprecate_eof {
                self.write(&eof_packet(0, 0))?;
            }
        }
        if ncols > 0 {
            for c in &info.columns {
                self.write(&column_definition(c, false, self.column_wire()))?;
            }
            if !deprecate_eof {
                self.write(&eof_packet(0, 0))?;
            }
        }
        self.stmts
            .insert(info.id, StmtState::new(usize::from(info.params)));
        Ok(())
    }

    pub(crate) fn com_stmt_execute(&mut self, body: &[u8]) -> CmdResult {
        let mut r = Reader::new(body);
        let header = parse_header(&mut r)?;
        let id = header.stmt_id;
        let Some(count) = self.session.param_count(id) else {
            // The session's own answer for an unknown id (1243), connection kept.
            self.send_sql_err(&SqlError::UnknownStatement {
                id,
                what: "mysqld_stmt_execute",
            })?;
            return Ok(());
        };
        let count = usize::from(count);
        let client = self.client_charset();
        let state = self
            .stmts
            .entry(id)
            .or_insert_with(|| StmtState::new(count));
        state.long_data.resize(count, None);
        if state.long_data_overflow {
            state.clear_long_data();
            self.send_err(&proto::packet_too_large())?;
            return Ok(());
        }
        let params = decode_params(&mut r, count, &mut state.types, &state.long_data);
        // Long data is for one execution (MySQL clears it after each).
        state.clear_long_data();
        let types = bound_types(&state.types);
        let params = match params {
            // A latin1 or ascii client's string parameters are text in its set (the
            // charset module).
            Ok(p) if client != WireCharset::Utf8 => one_byte_params(p, &state.types, client),
            Ok(p) => p,
            Err(_) => {
                self.send_sql_err(&SqlError::WrongArguments("mysqld_stmt_execute".into()))?;
                return Ok(());
            }
        };
        self.session.info().set_command("Execute", None);
        let timer = StatementTimer::start(&self.io);
        let deprecate_eof = self.deprecate_eof();
        let wire = self.column_wire();
        let mut sink =
            ResultSink::new(&mut self.io, RowFormat::Binary, deprecate_eof).with_wire(wire);
        let result = self.session.execute_typed(id, &params, &types, &mut sink);
        let (rows_sent, affected) = (sink.rows(), affected_rows(&result));
        finish_statement(&self.session, result, sink, false)?;
        // The text is built only for a statement that goes to the log.
        let stmt = timer.finish(&self.io, "", rows_sent, affected);
        if self.shared.slow_log.is_slow(&self.session, &stmt) {
            let text = self
                .session
                .prepared_sql(id)
                .map(|sql| crate::slowlog::with_parameters(sql, &params))
                .unwrap_or_default();
            self.slow_log(&crate::slowlog::Statement {
                text: &text,
                ..stmt
            });
        }
        Ok(())
    }

    /// No reply, even for an unknown statement (the client does not read one).
    pub(crate) fn com_stmt_send_long_data(&mut self, body: &[u8]) -> CmdResult {
        self.session.count_stmt_command("Com_stmt_send_long_data");
        let mut r = Reader::new(body);
        let id = r.u32()?;
        let param = usize::from(r.u16()?);
        let data = r.rest();
        let max = self.shared.max_allowed_packet();
        if let Some(state) = self.stmts.get_mut(&id) {
            if let Some(slot) = state.long_data.get_mut(param) {
                let buf = slot.get_or_insert_with(Vec::new);
                if buf.len() + data.len() > max {
                    state.long_data_overflow = true;
                } else {
                    buf.extend_from_slice(data);
                }
            }
        }
        Ok(())
    }

    /// No reply.
    pub(crate) fn com_stmt_close(&mut self, body: &[u8]) -> CmdResult {
        let id = Reader::new(body).u32()?;
        self.stmts.remove(&id);
        self.session.close_prepared(id);
        Ok(())
    }

    pub(crate) fn com_stmt_reset(&mut self, body: &[u8]) -> CmdResult {
        let id = Reader::new(body).u32()?;
        if let Some(state) = self.stmts.get_mut(&id) {
            state.clear_long_data();
        }
        match self.session.reset_prepared(id) {
            Ok(()) => self.send_ok(0, 0, "")?,
            Err(e) => self.send_sql_err(&e)?,
        }
        Ok(())
    }

    /// Cursors are never opened (an execution sends its whole result), so there is
    /// nothing to fetch from.
    pub(crate) fn com_stmt_fetch(&mut self, body: &[u8]) -> CmdResult {
        self.session.count_stmt_command("Com_stmt_fetch");
        let mut r = Reader::new(body);
        let id = r.u32()?;
        let _rows = r.u32()?;
        let e = if self.session.param_count(id).is_none() {
            SqlError::UnknownStatement {
                id,
                what: "mysqld_stmt_fetch",
            }
        } else {
            SqlError::Unsupported("COM_STMT_FETCH without an open cursor".into())
        };
        self.send_sql_err(&e)?;
        Ok(())
    }

    fn write(&mut self, payload: &[u8]) -> CmdResult {
        self.io
            .write_message(payload)
            .map_err(|_| crate::conn::CmdError::Close)
    }
}

/// A latin1 or ascii client's parameters: the values of the text types (VARCHAR,
/// VAR_STRING, STRING, ENUM, SET, JSON) are bytes of `cs`, decoded; the BLOB types stay
/// bytes, as MariaDB keeps them binary (`charset` invariant 3).
fn one_byte_params(
    params: Vec<Value>,
    types: &[crate::stmt_params::ParamType],
    cs: WireCharset,
) -> Vec<Value> {
    params
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let text = types
                .get(i)
                .is_some_and(|t| matches!(t.ty, 15 | 245 | 247 | 248 | 253 | 254));
            match v {
                Value::Str(s) if text && !s.is_ascii() => {
                    Value::Str(cs.decode(s.as_bytes()).into_owned())
                }
                Value::Bytes(b) if text => Value::Str(cs.decode(&b).into_owned()),
                v => v,
            }
        })
        .collect()
}
