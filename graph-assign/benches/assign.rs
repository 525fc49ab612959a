//! Benchmarks: `assign` and `assign_mars` on 2-D array graphs of 10^4, 10^5
//! and 10^6 tasks, placed on 16 workers.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use graph_assign::{Workers, assign, assign_mars};
use graph_core::generate::Shape;
use graph_core::{Dag, Topology};

fn main() {
    divan::main();
}

const WORKERS: usize = 16;

fn topology(tasks: usize) -> Topology {
    Shape::ArrayOverlap
        .generate(tasks, 0)
        .topology()
        .expect("generated graphs are acyclic")
        .clone()
}

#[divan::bench(args = [10_000, 100_000, 1_000_000], sample_count = 10)]
fn assign_default(bencher: Bencher<'_, '_>, tasks: usize) {
    let dag = topology(tasks);
    let workers = Workers::new(WORKERS).expect("16 workers");
    bencher
        .counter(ItemsCount::new(dag.node_count()))
        .bench(|| {
            let assignment = assign(black_box(&dag), &workers, None, None).expect("valid input");
            assert_eq!(assignment.len(), dag.node_count());
            assignment
        });
}

#[divan::bench(args = [10_000, 100_000, 1_000_000], sample_count = 5)]
fn mars(bencher: Bencher<'_, '_>, tasks: usize) {
    let dag = topology(tasks);
    let workers = Workers::new(WORKERS).expect("16 workers");
    bencher
        .counter(ItemsCount::new(dag.node_count()))
        .bench(|| {
            let assignment = assign_mars(black_box(&dag), &workers).unwrap();
            assert_eq!(assignment.len(), dag.node_count());
            assignment
        });
}
