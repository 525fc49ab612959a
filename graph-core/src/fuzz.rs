//! The checkers behind the fuzz targets of `graph-core`, so that the targets
//! are three-line shims and `cargo test` can replay their inputs.

use crate::json;

/// `core_json_roundtrip`: any bytes either fail to parse with an error, or
/// parse into a graph that writes out, reads back equal, and writes out again
/// byte for byte the same. Never a panic.
pub fn json_roundtrip(data: &[u8]) {
    let Ok(graph) = json::from_slice(data) else {
        return;
    };
    let text = json::to_string(&graph).expect("a graph read from JSON writes back");
    let again = json::from_slice(text.as_bytes()).expect("written JSON reads back");
    assert_eq!(again, graph, "round trip changed the graph");
    assert_eq!(
        json::to_string(&again).expect("writes again"),
        text,
        "second write differs"
    );
}
