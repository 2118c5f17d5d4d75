//! The result column of an expression.
