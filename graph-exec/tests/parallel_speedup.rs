//! Parallel first: on graphs whose tasks take time (each sleeps a few
//! milliseconds, so the time is the schedule's and not the CPU's), four
//! threads finish in a fraction of one thread's time, in the static order's
//! priorities, with the same results and the results held within the bound.
//!
//! The assertions are ratios of two runs of the same graph, with a margin
//! wide enough for a loaded machine: the ideal is a quarter (the bound
//! `max(work / 4, critical path)` over the work), a schedule that follows
//! the order too closely takes all of one thread's time on the chains and
//! the grid.

mod common;

use std::time::{Duration, Instant};

use common::{leaves, max_pressure};
use graph_core::generate::Rng;
use graph_core::{Key, TaskGraph, Term};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Run, RunOptions};
use graph_order::{OrderConfig, order_graph};

/// How long each task sleeps.
const SLEEP: f64 = 0.003;

/// A task that sleeps, then gives the sum of its inputs plus one.
fn sleeping(inputs: &[Key]) -> Term {
    let value = Term::call(
        "add",
        [
            Term::call("sum", [Term::list(inputs.iter().cloned().map(Term::Ref))]),
            Term::lit(1),
        ],
    );
    Term::call("sleep", [value, Term::lit(SLEEP)])
}

/// Builds a graph from `(key, inputs)` pairs, inputs first.
fn graph_of(tasks: impl IntoIterator<Item = (Key, Vec<Key>)>) -> TaskGraph {
    let mut graph = TaskGraph::new();
    for (key, inputs) in tasks {
        graph.insert(key, sleeping(&inputs)).unwrap();
    }
    graph
}

fn cell(name: &str, i: usize, j: usize) -> Key {
    Key::from((name, i as i64, j as i64))
}

/// `n` independent chains of `length` tasks.
fn chains(n: usize, length: usize) -> TaskGraph {
    graph_of((0..n).flat_map(|c| {
        (0..length).map(move |i| {
            let inputs = if i == 0 {
                Vec::new()
            } else {
                vec![cell("chain", c, i - 1)]
            };
            (cell("chain", c, i), inputs)
        })
    }))
}

/// A `side` x `side` wavefront: each cell reads the one above and the one
/// to its left.
fn grid(side: usize) -> TaskGraph {
    graph_of((0..side).flat_map(|i| {
        (0..side).map(move |j| {
            let mut inputs = Vec::new();
            if i > 0 {
                inputs.push(cell("grid", i - 1, j));
            }
            if j > 0 {
                inputs.push(cell("grid", i, j - 1));
            }
            (cell("grid", i, j), inputs)
        })
    }))
}

/// A 4-ary reduction tree over `leaves` leaves (a power of 4).
fn tree(leaves: usize) -> TaskGraph {
    let mut tasks: Vec<(Key, Vec<Key>)> = (0..leaves)
        .map(|i| (cell("tree", 0, i), Vec::new()))
        .collect();
    let (mut level, mut width) = (0, leaves);
    while width > 1 {
        for i in 0..width / 4 {
            let inputs = (0..4).map(|k| cell("tree", level, 4 * i + k)).collect();
            tasks.push((cell("tree", level + 1, i), inputs));
        }
        level += 1;
        width /= 4;
    }
    graph_of(tasks)
}

/// `n` tasks, each reading one to three of the `span` tasks before it.
fn random(n: usize, span: usize) -> TaskGraph {
    let mut rng = Rng::new(7);
    let tasks: Vec<(Key, Vec<Key>)> = (0..n)
        .map(|i| {
            let mut inputs: Vec<usize> = if i == 0 {
                Vec::new()
            } else {
                (0..1 + rng.below(3))
                    .map(|_| i - 1 - rng.below(i.min(span)))
                    .collect()
            };
            inputs.sort_unstable();
            inputs.dedup();
            let inputs = inputs.into_iter().map(|d| cell("random", 0, d)).collect();
            (cell("random", 0, i), inputs)
        })
        .collect();
    graph_of(tasks)
}

/// Runs `graph` on `threads` threads in its static order; the run and its
/// wall time.
fn timed(graph: &TaskGraph, threads: usize, priorities: &[u32]) -> (Run<Dynamic>, Duration) {
    let options = RunOptions {
        priorities: Some(priorities),
        ..RunOptions::default()
    };
    let started = Instant::now();
    let run = LocalExecutor::with_threads(threads)
        .run(graph, &OpRegistry::builtins(), &leaves(graph), &options)
        .unwrap();
    (run, started.elapsed())
}

#[test]
fn four_threads_finish_in_a_fraction_of_one_threads_time() {
    for (name, graph) in [
        ("8 chains of 12", chains(8, 12)),
        ("10x10 grid", grid(10)),
        ("4-ary tree of 64 leaves", tree(64)),
        ("random DAG of 100", random(100, 20)),
    ] {
        let order = order_graph(&graph, &OrderConfig::default()).unwrap();
        let pressure = max_pressure(graph.topology().unwrap(), order.priorities());
        let (one, one_time) = timed(&graph, 1, order.priorities());
        let (four, four_time) = timed(&graph, 4, order.priorities());
        assert_eq!(four.output, one.output, "{name}");
        let ratio = four_time.as_secs_f64() / one_time.as_secs_f64();
        assert!(
            ratio < 0.55,
            "{name}: 4 threads took {four_time:?}, 1 thread {one_time:?} (ratio {ratio:.2})"
        );
        let bound = pressure + pressure / 10 + 8 + 4;
        assert!(
            four.stats.peak_held <= bound,
            "{name}: 4 threads held {} results, the bound {bound}",
            four.stats.peak_held
        );
    }
}
