//! The checker behind the `order_valid` fuzz target, so that the target is a
//! short shim and `cargo test` can replay its inputs.

use graph_core::{Dag, TaskGraph, Topology};

use crate::{
    Order, OrderConfig, Strategy, diagnostics, lower_bound, lower_bound_bytes, max_bytes, order,
    order_graph,
};

/// `order_valid`: every strategy orders every task once with each dependency
/// first, the same way twice; `Auto` holds no more than `Dask`, and no order
/// holds fewer than the lower bound; and the same in bytes, each task
/// weighing its `size` or, without one, a size spread over six orders of
/// magnitude by its node.
pub fn order_valid(graph: &TaskGraph) {
    counts_valid(graph);
    bytes_valid(graph);
}

fn bytes_valid(graph: &TaskGraph) {
    let Ok(topology) = graph.topology() else {
        return;
    };
    let sizes: Vec<u64> = graph
        .iter()
        .enumerate()
        .map(|(i, (_, task))| {
            task.size
                .unwrap_or_else(|| 1 + (i as u64).wrapping_mul(2_654_435_761) % 1_000_000)
        })
        .collect();
    let bound = lower_bound_bytes(topology, &sizes).expect("one size per task");
    let bytes_of = |strategy: Strategy| {
        let config = OrderConfig {
            sizes: &sizes,
            ..OrderConfig::new(strategy)
        };
        let o = order(topology, &[], &config).expect("every strategy orders every DAG");
        assert_runs_each_once_after_its_inputs(topology, &o, strategy);
        let held = max_bytes(topology, &o, &sizes).expect("the order fits the graph");
        assert!(
            bound <= held,
            "{strategy:?} holds {held} bytes, below the bound {bound}"
        );
        held
    };
    let dask = bytes_of(Strategy::Dask);
    for strategy in [
        Strategy::TreeOptimal,
        Strategy::DepthFirst,
        Strategy::BreadthFirst,
        Strategy::Greedy,
    ] {
        bytes_of(strategy);
    }
    let auto = bytes_of(Strategy::Auto);
    assert!(
        auto <= dask,
        "Auto holds {auto} bytes, more than Dask's {dask}"
    );
}

fn counts_valid(graph: &TaskGraph) {
    let Ok(topology) = graph.topology() else {
        return;
    };
    let bound = lower_bound(topology).expect("a task graph's topology is acyclic");
    let pressure_of = |strategy: Strategy| {
        let config = OrderConfig::new(strategy);
        let order = order_graph(graph, &config).expect("every strategy orders every DAG");
        let again = order_graph(graph, &config).expect("and does so twice");
        assert_eq!(
            order.priorities(),
            again.priorities(),
            "{strategy:?} is deterministic"
        );
        assert_runs_each_once_after_its_inputs(topology, &order, strategy);
        let pressure = diagnostics(topology, &order)
            .expect("the order fits the graph")
            .max_pressure;
        assert!(
            bound <= pressure,
            "{strategy:?} holds {pressure}, below the lower bound {bound}"
        );
        pressure
    };
    let dask = pressure_of(Strategy::Dask);
    for strategy in [
        Strategy::TreeOptimal,
        Strategy::DepthFirst,
        Strategy::BreadthFirst,
        Strategy::Greedy,
    ] {
        pressure_of(strategy);
    }
    let auto = pressure_of(Strategy::Auto);
    assert!(auto <= dask, "Auto holds {auto}, more than Dask's {dask}");
}

/// `o` gives every task of `topology` one priority of its own, each task's
/// above its inputs'.
fn assert_runs_each_once_after_its_inputs(topology: &Topology, o: &Order, strategy: Strategy) {
    let mut seen = vec![false; topology.node_count()];
    for &priority in o.priorities() {
        let slot = &mut seen[priority as usize];
        assert!(!*slot, "{strategy:?} gives priority {priority} twice");
        *slot = true;
    }
    for node in topology.node_ids() {
        for &dep in topology.dependencies(node) {
            assert!(
                o.priority(dep) < o.priority(node),
                "{strategy:?} runs a task before its input"
            );
        }
    }
}
