//! Benchmarks of distributed runs.
fn main() {}
