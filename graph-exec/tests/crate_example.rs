//! The crate-level example: dask's word-count graph, run on all cores. Run as a
//! test without the test harness, so `main` is the test.

use graph_core::generate;
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Output, Request, RunOptions};

fn main() -> Result<(), graph_exec::Error> {
    let graph = generate::word_count();
    let registry = OpRegistry::<Dynamic>::builtins();
    let request = Request::list(["print1", "print2"]);
    let run = LocalExecutor::new().run(&graph, &registry, &request, &RunOptions::default())?;
    let sentences: Vec<String> = run
        .output
        .items()
        .unwrap()
        .iter()
        .map(|item| item.value().unwrap().to_string())
        .collect();
    assert_eq!(
        sentences,
        [
            "'word list has 2 occurrences of orange, out of 7 words'",
            "'word list has 2 occurrences of apple, out of 7 words'",
        ]
    );
    // print3 and what only it needs (count3, val3) did not run.
    assert_eq!(run.stats.tasks_run, 10);
    assert!(matches!(run.output, Output::List(_)));
    Ok(())
}
