//! Fixpoint stops within its limit and reports why truthfully; parallel rewriting equals sequential.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (rules, rest) = data.split_at(data.len().min(graph_rewrite::fuzz::RULE_BYTES));
    let mut u = arbitrary::Unstructured::new(rest);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, false) {
        graph_rewrite::fuzz::rewrite_fixpoint(&graph, rules);
    }
});
