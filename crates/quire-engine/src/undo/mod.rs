//! STUB for type-checking; replaced by the real module.
#![allow(unused)]
use crate::engine::Engine;
use crate::page::{Lsn, PageNo};
use crate::row::{RollPtr, TrxId};
#[derive(Debug, thiserror::Error)]
pub enum UndoError { #[error("x")] X }
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoKind { Insert, Update }
#[derive(Debug, Clone)]
pub struct UndoRecord { pub kind: UndoKind, pub undo_no: u64, pub table_id: u64, pub payload: Vec<u8> }
pub struct TrxUndo { trx: TrxId }
impl TrxUndo { pub fn new(trx: TrxId) -> TrxUndo { TrxUndo{trx} } pub fn trx(&self) -> TrxId { self.trx } pub fn is_empty(&self) -> bool { true } pub fn next_undo_no(&self) -> u64 { 0 } }
#[derive(Debug, Clone)]
pub struct HistoryLog { pub trx_id: TrxId, pub trx_no: u64, pub rseg: u8, pub first_page: PageNo }
pub struct RecoveredTrx { pub undo: TrxUndo }
pub struct Recovered { pub max_trx_id: TrxId, pub max_trx_no: u64, pub active: Vec<RecoveredTrx> }
pub struct UndoSys;
impl UndoSys {
    pub fn open(engine: &Engine) -> Result<(UndoSys, Recovered), UndoError> { todo!() }
    pub fn persist_max_trx_id(&self, engine: &Engine, id: TrxId) -> Result<Lsn, UndoError> { todo!() }
    pub fn append(&self, engine: &Engine, undo: &mut TrxUndo, kind: UndoKind, table_id: u64, payload: &[u8]) -> Result<(RollPtr, Lsn), UndoError> { todo!() }
    pub fn read(&self, engine: &Engine, ptr: RollPtr) -> Result<UndoRecord, UndoError> { todo!() }
    pub fn records_rev(&self, engine: &Engine, undo: &TrxUndo) -> Result<Vec<(RollPtr, UndoRecord)>, UndoError> { todo!() }
    pub fn commit(&self, engine: &Engine, undo: TrxUndo, trx_no: u64) -> Result<Option<Lsn>, UndoError> { todo!() }
    pub fn truncate(&self, engine: &Engine, undo: &mut TrxUndo, keep_from: u64) -> Result<(), UndoError> { todo!() }
    pub fn discard(&self, engine: &Engine, undo: TrxUndo) -> Result<Option<Lsn>, UndoError> { todo!() }
    pub fn history_len(&self) -> u64 { todo!() }
    pub fn history_batch(&self, engine: &Engine, n: usize, below_trx_no: u64) -> Result<Vec<HistoryLog>, UndoError> { todo!() }
    pub fn history_records(&self, engine: &Engine, log: &HistoryLog) -> Result<Vec<(RollPtr, UndoRecord)>, UndoError> { todo!() }
    pub fn history_remove(&self, engine: &Engine, log: &HistoryLog) -> Result<Lsn, UndoError> { todo!() }
    pub fn pages(&self, engine: &Engine) -> Result<Vec<PageNo>, UndoError> { todo!() }
    pub fn verify(&self, engine: &Engine) -> Result<Vec<String>, UndoError> { todo!() }
}
