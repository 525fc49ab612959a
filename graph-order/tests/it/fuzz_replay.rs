//! Replays every input the `order_valid` fuzz target keeps (seeds, and any
//! input that once failed) through its checker, on stable Rust.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};

#[test]
fn order_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/order_valid");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        if let Ok(graph) = arbitrary_graph(&mut Unstructured::new(&data), false) {
            graphs += 1;
            graph_order::fuzz::order_valid(&graph);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}
