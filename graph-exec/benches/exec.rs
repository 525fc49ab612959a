//! Executor overhead on trivial tasks (chains, trees, random DAGs, shuffles),
//! and parallel speedup on tasks that do 10 or 100 microseconds of real work.

use std::time::{Duration, Instant};

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use graph_core::generate::Shape;
use graph_core::{Key, TaskGraph, Term};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Request, RunOptions, execute_sequential};

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
const SHAPES: [Shape; 4] = [Shape::Chain, Shape::Tree, Shape::Random, Shape::Shuffle];

fn main() {
    divan::main();
}

fn prepared(shape: Shape, n: usize) -> (TaskGraph, Request) {
    let graph = shape.generate(n, 42);
    graph.topology().unwrap();
    let request = Request::list(graph.leaf_keys().unwrap());
    (graph, request)
}

#[divan::bench(args = SIZES, consts = [0, 1, 2, 3], sample_count = 5)]
fn sequential<const SHAPE: usize>(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, request) = prepared(SHAPES[SHAPE], n);
    let registry = OpRegistry::<Dynamic>::builtins();
    bencher.counter(ItemsCount::new(graph.len())).bench(|| {
        execute_sequential(black_box(&graph), &registry, &request)
            .unwrap()
            .stats
            .tasks_run
    });
}

#[divan::bench(args = SIZES, consts = [0, 1, 2, 3], sample_count = 5)]
fn local_1_thread<const SHAPE: usize>(bencher: Bencher<'_, '_>, n: usize) {
    local(bencher, SHAPES[SHAPE], n, 1);
}

#[divan::bench(args = SIZES, consts = [0, 1, 2, 3], sample_count = 5)]
fn local_2_threads<const SHAPE: usize>(bencher: Bencher<'_, '_>, n: usize) {
    local(bencher, SHAPES[SHAPE], n, 2);
}

fn local(bencher: Bencher<'_, '_>, shape: Shape, n: usize, threads: usize) {
    let (graph, request) = prepared(shape, n);
    let registry = OpRegistry::<Dynamic>::builtins();
    let executor = LocalExecutor::with_threads(threads);
    bencher.counter(ItemsCount::new(graph.len())).bench(|| {
        executor
            .run(
                black_box(&graph),
                &registry,
                &request,
                &RunOptions::default(),
            )
            .unwrap()
            .stats
            .tasks_run
    });
}

/// 2 000 independent tasks that each spin for `MICROS` microseconds, summed by
/// one task: the speedup of 2 threads over one.
fn busy_graph(micros: i64) -> TaskGraph {
    let mut graph = TaskGraph::new();
    let n = 2_000_i64;
    for i in 0..n {
        graph
            .insert(("work", i), Term::call("spin", [Term::lit(micros)]))
            .unwrap();
    }
    graph
        .insert(
            "total",
            Term::call("sum", [Term::list((0..n).map(|i| Term::key(("work", i))))]),
        )
        .unwrap();
    graph
}

fn spin_registry() -> OpRegistry<Dynamic> {
    let mut registry = OpRegistry::builtins();
    registry.register("spin", |args| {
        let Dynamic::Int(micros) = args[0] else {
            return Err("spin takes microseconds".into());
        };
        let until = Instant::now() + Duration::from_micros(micros as u64);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        Ok(Dynamic::Int(1))
    });
    registry
}

#[divan::bench(args = [10, 100], consts = [1, 2], sample_count = 5)]
fn busy_tasks<const THREADS: usize>(bencher: Bencher<'_, '_>, micros: i64) {
    let graph = busy_graph(micros);
    let registry = spin_registry();
    let executor = LocalExecutor::with_threads(THREADS);
    let request = Request::Key(Key::from("total"));
    bencher.counter(ItemsCount::new(graph.len())).bench(|| {
        let run = executor
            .run(&graph, &registry, &request, &RunOptions::default())
            .unwrap();
        assert_eq!(run.output.value(), Some(&Dynamic::Int(2_000)));
    });
}
