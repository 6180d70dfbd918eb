//! (placeholder, see vision/mod.rs)
