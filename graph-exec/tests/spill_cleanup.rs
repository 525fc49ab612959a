//! Spilled results live in a private temporary directory that is removed
//! when the run ends, whether it succeeds or fails. One test in this file:
//! it points `TMPDIR` at a directory of its own and checks it is left empty.

use graph_core::generate::{self, Shape};
use graph_core::{TaskGraph, Term};
use graph_exec::{LocalExecutor, OpRegistry, Request, RunOptions};

#[test]
fn the_spill_directory_goes_when_the_run_ends() {
    let tmp = std::env::temp_dir().join(format!("graph-exec-spill-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    // SAFETY of the test: this binary runs this one test, so no other
    // thread reads the environment while it changes.
    unsafe_free_set_tmpdir(&tmp);
    let entries = || std::fs::read_dir(&tmp).unwrap().count();

    // A run that spills and succeeds.
    let graph = generate::with_value_bytes(&Shape::Shuffle.generate(400, 1), 10_000).unwrap();
    let options = RunOptions {
        memory_limit: Some(300_000),
        ..RunOptions::default()
    };
    let request = Request::list(graph.leaf_keys().unwrap());
    let run = LocalExecutor::with_threads(2)
        .run(&graph, &OpRegistry::builtins(), &request, &options)
        .unwrap();
    assert!(run.stats.spilled_bytes > 0, "the run spilled");
    assert_eq!(entries(), 0, "nothing is left behind a successful run");

    // A run that spills, then fails: the failing task reads every output,
    // so it runs last.
    let mut failing: TaskGraph = graph.clone();
    let outputs: Vec<Term> = graph
        .leaf_keys()
        .unwrap()
        .into_iter()
        .map(Term::key)
        .collect();
    let total = Term::call("max", [Term::list(outputs)]);
    failing
        .insert("boom", Term::call("div", [total, Term::lit(0)]))
        .unwrap();
    let err = LocalExecutor::with_threads(2)
        .run(
            &failing,
            &OpRegistry::builtins(),
            &Request::from("boom"),
            &options,
        )
        .unwrap_err();
    assert!(err.to_string().contains("division by zero"), "{err}");
    assert_eq!(entries(), 0, "nothing is left behind a failed run");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Points the temporary directory of this process at `dir`.
fn unsafe_free_set_tmpdir(dir: &std::path::Path) {
    // `std::env::set_var` is unsafe in edition 2024 and the workspace forbids
    // unsafe code; `tempfile` reads its directory from this override instead.
    tempfile::env::override_temp_dir(dir).expect("set once");
}
