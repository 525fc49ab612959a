//! Replays every input the fuzz targets of `graph-core` keep (seeds, and any
//! input that once failed) through the same checkers, on stable Rust.

use std::path::Path;

fn replay(target: &str, check: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target);
    let inputs = graph_core::testing::fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    for (path, data) in inputs {
        let checked = std::panic::catch_unwind(|| check(&data));
        assert!(checked.is_ok(), "the checker failed on {}", path.display());
    }
}

#[test]
fn core_json_roundtrip() {
    replay("core_json_roundtrip", graph_core::fuzz::json_roundtrip);
}

#[test]
fn core_json_readers_agree() {
    replay(
        "core_json_readers_agree",
        graph_core::fuzz::json_readers_agree,
    );
}
