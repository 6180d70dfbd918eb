//! The analysis driver, driven in-process.
