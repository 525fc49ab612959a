//! Building a `Topology`: from an edge list, and from a `TaskGraph`'s terms.

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher, black_box};
use graph_core::generate;
use graph_core::generate::Rng;
use graph_core::{Dag, Topology};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn main() {
    divan::main();
}

/// `n` nodes, each depending on two earlier nodes: `2n` edges.
fn random_edges(n: usize) -> Vec<(usize, usize)> {
    let mut rng = Rng::new(42);
    (1..n)
        .flat_map(|node| [rng.below(node), rng.below(node)].map(|dep| (dep, node)))
        .collect()
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn from_edges(bencher: Bencher<'_, '_>, n: usize) {
    let edges = random_edges(n);
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| edges.clone())
        .bench_values(|edges| {
            let topology = Topology::from_edges(n, edges).unwrap();
            assert_eq!(topology.node_count(), n);
            topology
        });
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn from_task_graph(bencher: Bencher<'_, '_>, n: usize) {
    let graph = generate::random_dag(n, 42);
    bencher
        .counter(ItemsCount::new(n))
        .with_inputs(|| graph.clone())
        .bench_refs(|graph| black_box(graph.topology().unwrap().edge_count()));
}
