//! # quire-server: the MySQL wire protocol over quire-sql sessions
