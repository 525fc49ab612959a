//! The checker behind the `exec_parallel_equals_sequential` fuzz target, so
//! that the target is a short shim and `cargo test` can replay its inputs.

use graph_core::TaskGraph;

use crate::{Dynamic, Error, LocalExecutor, OpRegistry, Request, RunOptions, execute_sequential};

/// The built-in ops plus `fail` (always returns an error) and `boom` (always
/// panics).
pub fn registry_with_failures() -> OpRegistry<Dynamic> {
    let mut registry = OpRegistry::builtins();
    registry.register("fail", |_| Err("failed on purpose".into()));
    registry.register("boom", |_| panic!("panicked on purpose"));
    registry
}

/// `exec_parallel_equals_sequential`: running every leaf of `graph` in
/// parallel on 1, 2 and 3 threads gives the sequential executor's results, or,
/// when a task fails (an error or a panic), fails as well with a task error.
/// With one thread and the same order the error is the same one.
pub fn parallel_equals_sequential(graph: &TaskGraph) {
    let Ok(leaves) = graph.leaf_keys() else {
        return;
    };
    let registry = registry_with_failures();
    let request = Request::list(leaves);
    let oracle = execute_sequential(graph, &registry, &request);
    for threads in [1, 2, 3] {
        let run = LocalExecutor::with_threads(threads).run(
            graph,
            &registry,
            &request,
            &RunOptions::default(),
        );
        match (&oracle, &run) {
            (Ok(expected), Ok(got)) => {
                assert_eq!(got.output, expected.output, "{threads} threads");
                assert_eq!(
                    got.stats.tasks_run, expected.stats.tasks_run,
                    "{threads} threads"
                );
            }
            (Err(expected @ Error::Task { .. }), Err(got @ Error::Task { .. })) => {
                if threads == 1 {
                    assert_eq!(got.to_string(), expected.to_string());
                }
            }
            (expected, got) => {
                panic!("sequential gave {expected:?}, {threads} threads gave {got:?}")
            }
        }
    }
}
