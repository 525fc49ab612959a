//! Replays every input the `assign_total` fuzz target keeps (seeds, and any
//! input that once failed) through its checker, on stable Rust.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};

#[test]
fn assign_total() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/assign_total");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        let mut u = Unstructured::new(&data);
        if let Ok(graph) = arbitrary_graph(&mut u, false) {
            graphs += 1;
            // As the fuzz target reads it: the byte after the graph.
            let k = u
                .int_in_range(1..=graph_assign::fuzz::MAX_WORKERS)
                .unwrap_or(1);
            graph_assign::fuzz::assign_total(&graph, k);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}
