//! `taskgraph run` is parallel on tasks that take time: on a random DAG of
//! sleeping tasks, 4 threads and 4 processes each finish in a fraction of
//! one thread's time, with its results. Across processes that takes a
//! placement that keeps every process busy: the cut-minimizing one hands
//! each process a slice of the graph, and they wait on each other in a
//! pipeline. The assertions are ratios of runs of the same graph (the ideal
//! is a quarter), with margin for a loaded machine.

mod common;

use common::{scratch, taskgraph};
use graph_core::generate::Rng;
use graph_core::{Key, TaskGraph, Term, json};

/// `n` tasks that each sleep `seconds`, each reading one to three of the
/// `span` tasks before it, as the checksum of their values.
fn sleeping_random_dag(n: usize, span: usize, seconds: f64) -> TaskGraph {
    let mut rng = Rng::new(3);
    let key = |i: usize| Key::from(("t", i as i64));
    let mut graph = TaskGraph::with_capacity(n);
    for i in 0..n {
        let value = if i == 0 {
            Term::lit(1)
        } else {
            let inputs: Vec<Term> = (0..1 + rng.below(3))
                .map(|_| Term::Ref(key(i - 1 - rng.below(i.min(span)))))
                .collect();
            Term::call("checksum", inputs)
        };
        graph
            .insert(key(i), Term::call("sleep", [value, Term::lit(seconds)]))
            .unwrap();
    }
    graph
}

/// The results and the run's own seconds of `taskgraph run FILE ARGS --json`.
fn run(file: &str, args: &[&str]) -> (serde_json::Value, f64) {
    let mut all = vec!["run", file, "--json"];
    all.extend_from_slice(args);
    let run = taskgraph(&all, b"");
    assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let seconds = report["seconds"].as_f64().unwrap();
    (report["results"].clone(), seconds)
}

#[test]
fn threads_and_processes_finish_in_a_fraction_of_one_threads_time() {
    let dir = scratch("run-parallel");
    let file = dir.join("sleeping.json");
    json::write_path(&sleeping_random_dag(400, 30, 0.003), &file).unwrap();
    let file = file.to_str().unwrap();
    let (results, one) = run(file, &["--threads", "1"]);
    // On a graph like this one, following the order within a window of
    // ranks took 0.44 of one thread's time on 4 threads, and the
    // cut-minimizing placement 0.88 on 4 processes; now about 0.25 and 0.37
    // (process start-up included).
    for (args, most) in [(["--threads", "4"], 0.4), (["--processes", "4"], 0.6)] {
        // The best of three: a run across processes waits on their start-up,
        // which a loaded 2-core machine stretches now and then (0.53-0.88 s
        // against 1.3 s on one thread, alike before and after the byte
        // bound).
        let mut seconds = f64::INFINITY;
        for _ in 0..3 {
            let (theirs, took) = run(file, &args);
            assert_eq!(theirs, results, "{args:?}");
            seconds = seconds.min(took);
        }
        let ratio = seconds / one;
        assert!(
            ratio < most,
            "{args:?}: {seconds:.3} s against {one:.3} s on one thread (ratio {ratio:.2})"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
