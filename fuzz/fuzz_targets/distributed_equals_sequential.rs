//! A run on timely workers gives a sequential fold's values, whatever the placement and priorities.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(workers), Ok(seed)) = (u.int_in_range(1..=4_usize), u.arbitrary::<u64>()) else {
        return;
    };
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        graph_distributed::fuzz::distributed_equals_sequential(&graph, workers, seed);
    }
});
