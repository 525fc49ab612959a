//! The parallel executor gives the sequential executor's results, failures included.
#![no_main]

use std::sync::Once;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The `boom` op panics on purpose and the executors catch it; libFuzzer's
    // hook would abort on it. Any other panic is a finding: abort on it.
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if !info.to_string().contains("panicked on purpose") {
                eprintln!("{info}");
                std::process::abort();
            }
        }));
    });
    let mut u = arbitrary::Unstructured::new(data);
    if let Ok(graph) = graph_core::testing::arbitrary_graph(&mut u, true) {
        graph_exec::fuzz::parallel_equals_sequential(&graph);
    }
});
