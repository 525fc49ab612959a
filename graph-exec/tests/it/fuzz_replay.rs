//! Replays every input the `exec_parallel_equals_sequential` fuzz target keeps
//! (seeds, and any input that once failed) through its checker, on stable.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};

#[test]
fn exec_parallel_equals_sequential() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz/exec_parallel_equals_sequential");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        if let Ok(graph) = arbitrary_graph(&mut Unstructured::new(&data), true) {
            graphs += 1;
            graph_exec::fuzz::parallel_equals_sequential(&graph);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}
