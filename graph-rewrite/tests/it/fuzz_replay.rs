//! Replays every input the `rewrite_fixpoint` fuzz target keeps (seeds, and
//! any input that once failed) through its checker, on stable Rust.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};
use graph_rewrite::fuzz::{RULE_BYTES, rewrite_fixpoint, rules_file};

#[test]
fn rewrite_fixpoint_inputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/rewrite_fixpoint");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        let (rules, rest) = data.split_at(data.len().min(RULE_BYTES));
        if let Ok(graph) = arbitrary_graph(&mut Unstructured::new(rest), false) {
            graphs += 1;
            rewrite_fixpoint(&graph, rules);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}

#[test]
fn rewrite_rules_file_inputs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/rewrite_rules_file");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    for (_, data) in inputs {
        rules_file(&data);
    }
}
