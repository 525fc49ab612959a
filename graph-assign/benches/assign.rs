//! Benchmarks: `assign`, `assign_mars` and `assign_list` on 2-D array
//! graphs of 10^4, 10^5 and 10^6 tasks, placed on 16 workers (and on 4 for
//! `assign_list`).

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use graph_assign::{ListConfig, Workers, assign, assign_mars};
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

#[divan::bench(consts = [4, 16], args = [10_000, 100_000, 1_000_000], sample_count = 10)]
fn assign_list<const K: usize>(bencher: Bencher<'_, '_>, tasks: usize) {
    let dag = topology(tasks);
    let workers = Workers::new(K).expect("a few workers");
    bencher
        .counter(ItemsCount::new(dag.node_count()))
        .bench(|| {
            let assignment =
                graph_assign::assign_list(black_box(&dag), &workers, &ListConfig::default())
                    .expect("valid input");
            assert_eq!(assignment.len(), dag.node_count());
            assignment
        });
}
