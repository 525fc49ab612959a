//! The parallel executor gives the sequential executor's results, failures included.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, true) {
        graph_exec::fuzz::parallel_equals_sequential(&graph);
    }
});
