//! Extents, free lists and page allocation (being written).
