//! A run cut short with processes lost, recovered by a plan and an attempt among the survivors, gives a sequential fold's values.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(processes), Ok(seed)) = (u.int_in_range(2..=4_usize), u.arbitrary::<u64>()) else {
        return;
    };
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        graph_distributed::fuzz::recovery_equals_sequential(&graph, processes, seed);
    }
});
