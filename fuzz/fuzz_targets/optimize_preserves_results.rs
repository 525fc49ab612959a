//! Every optimization pass keeps the values of the requested keys; barriers keep every input first.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        graph_optimize::fuzz::optimize_preserves_results(&graph);
    }
});
