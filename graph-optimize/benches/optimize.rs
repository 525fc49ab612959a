//! Benchmarks of every pass and of the default pipeline on generated graphs
//! of 10^4, 10^5 and 10^6 tasks (generation is not timed).

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use graph_core::generate::Shape;
use graph_core::{Dag, Key, Op, TaskGraph};
use graph_optimize::{
    FuseConfig, FuseLinearConfig, OptimizeConfig, StageConfig, coalesce_stages, cull,
    find_wide_edges, fuse, fuse_linear, inline, inline_functions, insert_barriers, optimize,
    optimize_owned, plan_stages,
};

#[global_allocator]
static ALLOC: divan::AllocProfiler<mimalloc::MiMalloc> =
    divan::AllocProfiler::new(mimalloc::MiMalloc);

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// A dask-like array graph (`map_overlap` then a tree sum) of about `n`
/// tasks, and its leaves.
fn array(n: usize) -> (TaskGraph, Vec<Key>) {
    with_leaves(Shape::ArrayOverlap.generate(n, 1))
}

/// A random DAG of `n` tasks, and its leaves.
fn random(n: usize) -> (TaskGraph, Vec<Key>) {
    with_leaves(Shape::Random.generate(n, 1))
}

fn with_leaves(graph: TaskGraph) -> (TaskGraph, Vec<Key>) {
    let topology = graph.topology().expect("generated graphs are valid");
    let leaves = topology
        .node_ids()
        .filter(|&n| topology.dependents(n).is_empty())
        .map(|n| graph.key(n).clone())
        .collect();
    (graph, leaves)
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn cull_random(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = random(n);
    let half: Vec<Key> = keys.iter().step_by(2).cloned().collect();
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| cull(black_box(&graph), &half).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn inline_constants_random(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, _) = random(n);
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| inline(black_box(&graph), &[], true).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn inline_functions_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = array(n);
    let fast = [Op::new("identity"), Op::new("inc")];
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| inline_functions(black_box(&graph), &keys, &fast).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn fuse_linear_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = array(n);
    let config = FuseLinearConfig {
        keys: Some(keys),
        ..FuseLinearConfig::default()
    };
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| fuse_linear(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn fuse_random(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = random(n);
    let config = FuseConfig {
        keys: Some(keys),
        ..FuseConfig::default()
    };
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| fuse(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn fuse_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = array(n);
    let config = FuseConfig {
        keys: Some(keys),
        ave_width: 2.0,
        ..FuseConfig::default()
    };
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| fuse(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn optimize_random(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, _) = random(n);
    let config = OptimizeConfig::default();
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| optimize(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn optimize_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, _) = array(n);
    let config = OptimizeConfig {
        fast_ops: vec![Op::new("identity")],
        ..OptimizeConfig::default()
    };
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| optimize(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn optimize_owned_random(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, _) = random(n);
    let config = OptimizeConfig::default();
    bencher
        .counter(ItemsCount::new(graph.len()))
        .with_inputs(|| graph.clone())
        .bench_values(|graph| optimize_owned(graph, &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn optimize_owned_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, _) = array(n);
    let config = OptimizeConfig {
        fast_ops: vec![Op::new("identity")],
        ..OptimizeConfig::default()
    };
    bencher
        .counter(ItemsCount::new(graph.len()))
        .with_inputs(|| graph.clone())
        .bench_values(|graph| optimize_owned(graph, &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn optimize_chain(bencher: Bencher<'_, '_>, n: usize) {
    let graph = Shape::Chain.generate(n, 1);
    let config = OptimizeConfig::default();
    bencher
        .counter(ItemsCount::new(graph.len()))
        .bench(|| optimize(black_box(&graph), &config).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn stages_array(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, keys) = array(n);
    let config = StageConfig {
        wide_ops: vec![Op::new("sum")],
        keys,
        ..StageConfig::default()
    };
    bencher.counter(ItemsCount::new(graph.len())).bench(|| {
        let plan = plan_stages(black_box(&graph), &config).unwrap();
        coalesce_stages(&graph, &plan).unwrap()
    });
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn barriers_shuffle(bencher: Bencher<'_, '_>, n: usize) {
    // About n edges: sqrt(n) mappers all feeding sqrt(n) reducers.
    let side = (n as f64).sqrt() as usize;
    let graph = graph_core::generate::shuffle(side, side);
    let topology = graph.topology().unwrap().clone();
    bencher
        .counter(ItemsCount::new(topology.edge_count()))
        .bench(|| insert_barriers(black_box(&topology), 16).unwrap());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn wide_edges_shuffle(bencher: Bencher<'_, '_>, n: usize) {
    // About n edges, all wide: sqrt(n) mappers all read by sqrt(n) reducers.
    let side = (n as f64).sqrt() as usize;
    let graph = graph_core::generate::shuffle(side, side);
    let topology = graph.topology().unwrap().clone();
    bencher
        .counter(ItemsCount::new(topology.edge_count()))
        .bench(|| find_wide_edges(black_box(&topology)));
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn wide_edges_array(bencher: Bencher<'_, '_>, n: usize) {
    // No block at all: every task's readers are walked and none is shared.
    let (graph, _) = array(n);
    let topology = graph.topology().unwrap().clone();
    bencher
        .counter(ItemsCount::new(topology.edge_count()))
        .bench(|| find_wide_edges(black_box(&topology)));
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn stages_summary_shuffle(bencher: Bencher<'_, '_>, n: usize) {
    // `taskgraph stages` past reading the file: plan and summary.
    let side = (n as f64).sqrt() as usize;
    let graph = graph_core::generate::shuffle(side, side);
    bencher
        .counter(ItemsCount::new(graph.topology().unwrap().edge_count()))
        .bench(|| {
            let plan = plan_stages(black_box(&graph), &StageConfig::default()).unwrap();
            plan.summary(graph.topology().unwrap()).unwrap()
        });
}
