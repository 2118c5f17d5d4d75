//! The simulated, fault-injecting file system (being written; see docs/io.md).
