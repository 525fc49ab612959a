//! Replays every input the `distributed_equals_sequential` and
//! `distributed_recovery` fuzz targets keep (seeds, and any input that
//! once failed) through their checkers, on stable Rust.

use std::path::Path;

use arbitrary::Unstructured;
use graph_core::testing::{arbitrary_graph, fuzz_inputs};

#[test]
fn distributed_equals_sequential() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/distributed_equals_sequential");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        let mut u = Unstructured::new(&data);
        let (Ok(workers), Ok(seed)) = (u.int_in_range(1..=4_usize), u.arbitrary::<u64>()) else {
            continue;
        };
        if let Ok(graph) = arbitrary_graph(&mut u, false) {
            graphs += 1;
            graph_distributed::fuzz::distributed_equals_sequential(&graph, workers, seed);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}

#[test]
fn recovery_equals_sequential() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/distributed_recovery");
    let inputs = fuzz_inputs(&dir).unwrap();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let mut graphs = 0;
    for (_, data) in inputs {
        let mut u = Unstructured::new(&data);
        let (Ok(processes), Ok(seed)) = (u.int_in_range(2..=4_usize), u.arbitrary::<u64>()) else {
            continue;
        };
        if let Ok(graph) = arbitrary_graph(&mut u, false) {
            graphs += 1;
            graph_distributed::fuzz::recovery_equals_sequential(&graph, processes, seed);
        }
    }
    assert!(graphs > 0, "no input made a graph");
}
