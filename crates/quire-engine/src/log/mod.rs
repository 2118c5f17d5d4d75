//! The redo log (being written).
