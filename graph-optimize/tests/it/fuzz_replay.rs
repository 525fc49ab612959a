//! Replays every input the `optimize_preserves_results` fuzz target keeps
//! (seeds, and any input that once failed) through its checker, on stable
//! Rust.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};

#[test]
fn optimize_preserves_results() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/optimize_preserves_results");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        if let Ok(graph) = arbitrary_graph(&mut Unstructured::new(&data), false) {
            graphs += 1;
            graph_optimize::fuzz::optimize_preserves_results(&graph);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}
