//! Every ordering strategy gives a valid, deterministic order; Auto never holds more than Dask.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        graph_order::fuzz::order_valid(&graph);
    }
});
