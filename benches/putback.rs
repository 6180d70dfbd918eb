//! Put-back search benchmark (filled in with the rules engine).
fn main() {}
