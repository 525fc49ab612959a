//! Benchmarks of every ordering strategy and of `diagnostics` on each
//! generator shape at 10^4, 10^5 and 10^6 tasks.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use graph_core::Topology;
use graph_core::generate::Shape;
use graph_order::{Order, OrderConfig, Strategy, diagnostics, order};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn topology(shape: Shape, n: usize) -> Topology {
    shape
        .generate(n, 7)
        .topology()
        .expect("generated graphs are acyclic")
        .clone()
}

fn bench_strategy(bencher: Bencher<'_, '_>, shape: Shape, n: usize, strategy: Strategy) {
    let dag = topology(shape, n);
    let tasks = dag.node_count_for_bench();
    bencher
        .counter(ItemsCount::new(tasks))
        .bench_local(|| order(black_box(&dag), &[], &OrderConfig::new(strategy)).expect("acyclic"));
}

/// Sizes that differ over three orders of magnitude, seeded by node.
fn sizes(n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| 1_000 * (1 + i.wrapping_mul(2_654_435_761) % 1_000))
        .collect()
}

/// `Auto` in bytes: the same shapes with sizes that differ, against
/// `auto/*` in the same run ("ordering with sizes within 1.2x of without").
fn bench_bytes(bencher: Bencher<'_, '_>, shape: Shape, n: usize) {
    let dag = topology(shape, n);
    let sizes = sizes(dag.node_count_for_bench());
    let config = OrderConfig {
        sizes: &sizes,
        ..OrderConfig::default()
    };
    bencher
        .counter(ItemsCount::new(sizes.len()))
        .bench_local(|| order(black_box(&dag), &[], &config).expect("acyclic"));
}

#[divan::bench_group(sample_count = 5, sample_size = 1)]
mod auto_bytes {
    use super::*;

    #[divan::bench(args = SIZES, consts = [0, 1, 2, 3, 4, 5, 6, 7])]
    fn shape<const S: usize>(bencher: Bencher<'_, '_>, n: usize) {
        bench_bytes(bencher, Shape::ALL[S], n);
    }
}

trait Count {
    fn node_count_for_bench(&self) -> usize;
}

impl Count for Topology {
    fn node_count_for_bench(&self) -> usize {
        graph_core::Dag::node_count(self)
    }
}

macro_rules! strategy_benches {
    ($($name:ident => $strategy:expr),* $(,)?) => {$(
        #[divan::bench_group(sample_count = 5, sample_size = 1)]
        mod $name {
            use super::*;

            #[divan::bench(args = SIZES)]
            fn chain(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::Chain, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn tree(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::Tree, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn diamonds(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::Diamonds, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn random(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::Random, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn array_sum_transpose(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::ArraySumTranspose, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn array_overlap(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::ArrayOverlap, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn array_cumsum(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::ArrayCumsum, n, $strategy) }
            #[divan::bench(args = SIZES)]
            fn shuffle(b: Bencher<'_, '_>, n: usize) { bench_strategy(b, Shape::Shuffle, n, $strategy) }
        }
    )*};
}

strategy_benches! {
    auto => Strategy::Auto,
    dask => Strategy::Dask,
    tree_optimal => Strategy::TreeOptimal,
}

/// `diagnostics` of the `Auto` order, on every shape.
#[divan::bench_group(sample_count = 5, sample_size = 1)]
mod diagnostics_auto {
    use super::*;

    #[divan::bench(args = SIZES, consts = [0, 1, 2, 3, 4, 5, 6, 7])]
    fn shape<const S: usize>(bencher: Bencher<'_, '_>, n: usize) {
        let dag = topology(Shape::ALL[S], n);
        let ordered: Order = order(&dag, &[], &OrderConfig::default()).expect("acyclic");
        bencher
            .counter(ItemsCount::new(dag.node_count_for_bench()))
            .bench_local(|| {
                diagnostics(black_box(&dag), &ordered)
                    .expect("valid order")
                    .max_pressure
            });
    }
}
