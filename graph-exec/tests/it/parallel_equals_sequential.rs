//! The parallel executor gives the sequential oracle's results, on every
//! generated shape, with 1, 2 and 4 threads and any priorities.

use crate::common::{leaves, max_pressure, priorities_of};
use graph_core::generate::{Rng, Shape};
use graph_core::{Dag, NodeId};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, RunOptions, execute_sequential};

#[test]
fn every_shape_every_thread_count() {
    let registry = OpRegistry::<Dynamic>::builtins();
    for shape in Shape::ALL {
        for seed in 0..3 {
            let graph = shape.generate(300 + 400 * seed as usize, seed);
            let request = leaves(&graph);
            let oracle = execute_sequential(&graph, &registry, &request).unwrap();
            assert_eq!(oracle.stats.tasks_run, graph.len(), "{}", shape.name());
            for threads in [1, 2, 4] {
                let run = LocalExecutor::with_threads(threads)
                    .run(&graph, &registry, &request, &RunOptions::default())
                    .unwrap();
                assert_eq!(
                    run.output,
                    oracle.output,
                    "{} seed {seed} threads {threads}",
                    shape.name()
                );
                assert_eq!(run.stats.tasks_run, oracle.stats.tasks_run);
            }
        }
    }
}

#[test]
fn one_thread_holds_exactly_the_orders_max_pressure() {
    let registry = OpRegistry::<Dynamic>::builtins();
    for shape in Shape::ALL {
        let graph = shape.generate(500, 3);
        let topology = graph.topology().unwrap();
        // Two different valid orders: Kahn's, and a randomised one.
        let kahn = priorities_of(topology.topological_order());
        let mut rng = Rng::new(11);
        let mut waiting: Vec<usize> = topology
            .node_ids()
            .map(|n| topology.dependencies(n).len())
            .collect();
        let mut ready: Vec<NodeId> = topology
            .node_ids()
            .filter(|n| waiting[n.index()] == 0)
            .collect();
        let mut random_order = Vec::new();
        while !ready.is_empty() {
            let node = ready.swap_remove(rng.below(ready.len()));
            random_order.push(node);
            for &d in topology.dependents(node) {
                waiting[d.index()] -= 1;
                if waiting[d.index()] == 0 {
                    ready.push(d);
                }
            }
        }
        for priorities in [kahn, priorities_of(&random_order)] {
            let options = RunOptions {
                priorities: Some(&priorities),
                ..RunOptions::default()
            };
            let run = LocalExecutor::with_threads(1)
                .run(&graph, &registry, &leaves(&graph), &options)
                .unwrap();
            assert_eq!(
                run.stats.peak_held,
                max_pressure(topology, &priorities),
                "{}",
                shape.name()
            );
        }
    }
}

#[test]
fn sequential_frees_as_it_goes() {
    let registry = OpRegistry::<Dynamic>::builtins();
    let chain = graph_core::generate::chain(1_000);
    let run = execute_sequential(&chain, &registry, &leaves(&chain)).unwrap();
    assert_eq!(
        run.output.items().unwrap()[0].value(),
        Some(&Dynamic::Int(999))
    );
    assert_eq!(run.stats.peak_held, 1, "a chain holds one result at a time");
    let tree = graph_core::generate::tree(256, 4);
    let run = execute_sequential(&tree, &registry, &leaves(&tree)).unwrap();
    // Post-order over a 4-ary tree with 4 levels of sums: at the worst moment,
    // 3 finished siblings wait on each of the 3 upper levels, and 4 leaves wait
    // for their sum.
    assert_eq!(run.stats.peak_held, 3 * 3 + 4);
}
