//! `assign` and `assign_mars` place every task once on an existing worker, deterministically; `assign` keeps its balance bound.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        let k = u.int_in_range(1..=graph_assign::fuzz::MAX_WORKERS).unwrap_or(1);
        graph_assign::fuzz::assign_total(&graph, k);
    }
});
