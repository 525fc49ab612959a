//! `assign_list` keeps every worker busy: its simulated makespan is close to
//! the lower bound (total work over the slots, or the critical path) on
//! chains, grids, trees and random graphs, and no worse than the
//! cut-minimizing `assign`, which makes workers wait on each other; and
//! `makespan` never reports less than that bound.

use crate::common;
use graph_assign::{
    Assignment, AutoRule, Chosen, Error, ListConfig, Workers, assign, assign_auto, assign_list,
    edge_cut, makespan, makespan_bound,
};
use graph_core::generate::{self, Rng, Shape};
use graph_core::{Dag, NodeId, Topology};

fn lower_bound(dag: &Topology, workers: &Workers, costs: Option<&[f64]>) -> f64 {
    makespan_bound(dag, workers, costs).unwrap()
}

/// Makespan, lower bound and edge cut of a placement, with the default
/// cost model.
fn figures(dag: &Topology, workers: &Workers, assignment: &Assignment) -> (f64, f64, u64) {
    let config = ListConfig::default();
    let span = makespan(dag, workers, assignment, &config).unwrap();
    let bound = lower_bound(dag, workers, None);
    assert!(
        span >= bound - 1e-9,
        "makespan {span} below the bound {bound}"
    );
    (span, bound, edge_cut(dag, assignment).unwrap())
}

/// `chains` independent chains of `len` tasks; chain `c` is tasks
/// `c * len..(c + 1) * len`.
fn chains(chains: usize, len: usize) -> Topology {
    let edges = (0..chains).flat_map(|c| (1..len).map(move |i| (c * len + i - 1, c * len + i)));
    Topology::from_edges(chains * len, edges).unwrap()
}

/// A `side` x `side` wavefront: cell `(i, j)`, task `i * side + j`, reads
/// `(i - 1, j)` and `(i, j - 1)`.
fn wavefront(side: usize) -> Topology {
    let mut edges = Vec::new();
    for i in 0..side {
        for j in 0..side {
            if i > 0 {
                edges.push(((i - 1) * side + j, i * side + j));
            }
            if j > 0 {
                edges.push((i * side + j - 1, i * side + j));
            }
        }
    }
    Topology::from_edges(side * side, edges).unwrap()
}

/// `n` tasks, each after the first reading 1 to 3 random tasks among the
/// `window` before it.
fn random_dag(n: usize, window: usize, seed: u64) -> Topology {
    let mut rng = Rng::new(seed);
    let mut edges = Vec::new();
    for node in 1..n {
        let lowest = node.saturating_sub(window);
        for _ in 0..1 + rng.below(3) {
            edges.push((lowest + rng.below(node - lowest), node));
        }
    }
    Topology::from_edges(n, edges).unwrap()
}

fn random_placement(n: usize, k: usize, seed: u64) -> Assignment {
    let mut rng = Rng::new(seed);
    Assignment::from_vec((0..n).map(|_| rng.below(k) as u32).collect(), k).unwrap()
}

#[test]
fn independent_chains_stay_whole_two_per_worker() {
    let dag = chains(8, 200);
    let workers = Workers::new(4).unwrap();
    let placed = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    common::assert_valid("chains", &dag, &workers, &placed);
    let workers_of: Vec<u32> = (0..8)
        .map(|c| {
            let chain = &placed.as_slice()[c * 200..(c + 1) * 200];
            assert!(chain.iter().all(|&w| w == chain[0]), "chain {c}: {chain:?}");
            chain[0]
        })
        .collect();
    assert_eq!(placed.tasks_per_worker(), [400; 4], "{workers_of:?}");
    let (span, bound, cut) = figures(&dag, &workers, &placed);
    assert_eq!((span, bound, cut), (400.0, 400.0, 0));
}

#[test]
fn wavefront_grid_finishes_near_the_bound_with_a_small_cut() {
    let dag = wavefront(40);
    let workers = Workers::new(4).unwrap();
    let placed = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    common::assert_valid("grid", &dag, &workers, &placed);
    let (span, bound, cut) = figures(&dag, &workers, &placed);
    let (_, _, random_cut) = figures(&dag, &workers, &random_placement(1600, 4, 1));
    assert!(span <= 1.3 * bound, "makespan {span}, bound {bound}");
    assert!(cut * 5 < random_cut, "cut {cut}, random {random_cut}");
}

#[test]
fn random_dag_finishes_well_before_the_partitioner() {
    let dag = random_dag(2_000, 60, 7);
    let workers = Workers::new(4).unwrap();
    let placed = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    common::assert_valid("random", &dag, &workers, &placed);
    let (span, bound, cut) = figures(&dag, &workers, &placed);
    assert!(span <= 1.3 * bound, "makespan {span}, bound {bound}");
    let (_, _, random_cut) = figures(&dag, &workers, &random_placement(2_000, 4, 1));
    assert!(cut < random_cut, "cut {cut}, random {random_cut}");
    // `assign` gives each worker a slice of the graph, and each slice waits
    // on the one before it.
    let partitioned = assign(&dag, &workers, None, None).unwrap();
    let (theirs, _, _) = figures(&dag, &workers, &partitioned);
    assert!(2.0 * span < theirs, "list {span}, assign {theirs}");
}

#[test]
fn tree_reduction_finishes_near_the_bound() {
    let graph = generate::tree(1_024, 4);
    let dag = common::topology(&graph);
    let workers = Workers::new(4).unwrap();
    let placed = assign_list(dag, &workers, &ListConfig::default()).unwrap();
    common::assert_valid("tree", dag, &workers, &placed);
    let (span, bound, cut) = figures(dag, &workers, &placed);
    assert!(span <= 1.3 * bound, "makespan {span}, bound {bound}");
    let partitioned = assign(dag, &workers, None, None).unwrap();
    let (theirs, _, their_cut) = figures(dag, &workers, &partitioned);
    assert!(span <= theirs, "list {span}, assign {theirs}");
    // Each worker reduces its own block of leaves: only the last sums read
    // other workers' results.
    assert!(cut <= their_cut + 5, "cut {cut}, assign {their_cut}");
}

#[test]
fn every_shape_is_no_slower_than_the_partitioner_and_above_the_bound() {
    for k in [4, 16] {
        let workers = Workers::new(k).unwrap();
        for shape in Shape::ALL {
            for seed in 0..3 {
                let graph = shape.generate(2_000, seed);
                let dag = common::topology(&graph);
                let label = format!("{} seed {seed} k = {k}", shape.name());
                let placed = assign_list(dag, &workers, &ListConfig::default()).unwrap();
                common::assert_valid(&label, dag, &workers, &placed);
                // `figures` checks the lower bound.
                let (span, bound, _) = figures(dag, &workers, &placed);
                let partitioned = assign(dag, &workers, None, None).unwrap();
                let (theirs, _, _) = figures(dag, &workers, &partitioned);
                assert!(
                    span <= 1.02 * theirs && span <= 1.3 * bound,
                    "{label}: list {span}, assign {theirs}, bound {bound}"
                );
            }
        }
    }
}

#[test]
fn placement_is_deterministic_and_fits_the_workers() {
    let graph = generate::random_dag(3_000, 5);
    let dag = common::topology(&graph);
    let n = dag.node_count();
    let costs: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.5).collect();
    let sizes: Vec<u64> = (0..n as u64).map(|i| (i % 5) * 40_000_000).collect();
    let config = ListConfig {
        sizes: Some(&sizes),
        costs: Some(&costs),
        transfer_seconds: 0.1,
        bandwidth: 1e9,
        receive_seconds: 0.01,
    };
    for workers in [
        Workers::new(1).unwrap(),
        Workers::new(3).unwrap(),
        Workers::with_slots([4, 1, 2]).unwrap(),
        Workers::with_slots([u32::MAX, 1]).unwrap(),
    ] {
        let label = format!("{:?}", workers.all_slots());
        let first = assign_list(dag, &workers, &config).unwrap();
        assert_eq!(
            first,
            assign_list(dag, &workers, &config).unwrap(),
            "{label}"
        );
        common::assert_valid(&label, dag, &workers, &first);
        let span = makespan(dag, &workers, &first, &config).unwrap();
        let bound = lower_bound(dag, &workers, Some(&costs));
        assert!(span >= bound - 1e-9, "{label}: {span} < {bound}");
        let one = Assignment::from_vec(vec![0; n], workers.count()).unwrap();
        let serial = makespan(dag, &workers, &one, &config).unwrap();
        assert!(span <= serial, "{label}: {span} > {serial} on worker 0");
    }
}

#[test]
fn more_slots_take_more_tasks() {
    let dag = chains(12, 50);
    let workers = Workers::with_slots([2, 1]).unwrap();
    let placed = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    assert_eq!(placed.tasks_per_worker(), [400, 200]);
    let span = makespan(&dag, &workers, &placed, &ListConfig::default()).unwrap();
    assert_eq!(span, 200.0);
}

#[test]
fn large_results_keep_their_readers_on_their_worker() {
    // 0 feeds 1 and 2: with small results the readers run side by side;
    // a gigabyte takes 10 s to move, longer than running them one after
    // the other.
    let dag = Topology::from_edges(3, [(0, 1), (0, 2)]).unwrap();
    let workers = Workers::new(2).unwrap();
    let small = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    assert_eq!(small.as_slice(), [0, 0, 1]);
    let sizes = [1_000_000_000, 8, 8];
    let config = ListConfig {
        sizes: Some(&sizes),
        ..ListConfig::default()
    };
    let large = assign_list(&dag, &workers, &config).unwrap();
    assert_eq!(large.as_slice(), [0, 0, 0]);
    assert_eq!(makespan(&dag, &workers, &large, &config).unwrap(), 3.0);
    assert_eq!(makespan(&dag, &workers, &small, &config).unwrap(), 12.25);
}

#[test]
fn zero_costs_and_zero_transfers_still_give_a_schedule() {
    let dag = wavefront(10);
    let workers = Workers::new(3).unwrap();
    let config = ListConfig {
        costs: Some(&[0.0; 100]),
        transfer_seconds: 0.0,
        ..ListConfig::default()
    };
    let placed = assign_list(&dag, &workers, &config).unwrap();
    common::assert_valid("zero", &dag, &workers, &placed);
    assert_eq!(makespan(&dag, &workers, &placed, &config).unwrap(), 0.0);
}

#[test]
fn empty_graph_has_an_empty_placement_and_no_makespan() {
    let dag = Topology::from_edges(0, []).unwrap();
    let workers = Workers::new(3).unwrap();
    let placed = assign_list(&dag, &workers, &ListConfig::default()).unwrap();
    assert!(placed.is_empty());
    assert_eq!(placed.worker_count(), 3);
    let span = makespan(&dag, &workers, &placed, &ListConfig::default()).unwrap();
    assert_eq!(span, 0.0);
}

/// Two tasks that depend on each other.
struct Loop;

impl Dag for Loop {
    fn node_count(&self) -> usize {
        2
    }
    fn dependencies(&self, node: NodeId) -> &[NodeId] {
        const ZERO: [NodeId; 1] = [NodeId::from_u32(0)];
        const ONE: [NodeId; 1] = [NodeId::from_u32(1)];
        if node.index() == 0 { &ONE } else { &ZERO }
    }
}

#[test]
fn bad_input_is_an_error() {
    let dag = chains(1, 3);
    let workers = Workers::new(2).unwrap();
    let list = |config: ListConfig<'_>| assign_list(&dag, &workers, &config).unwrap_err();
    assert!(matches!(
        list(ListConfig {
            sizes: Some(&[1, 2]),
            ..ListConfig::default()
        }),
        Error::LengthMismatch { what: "sizes", .. }
    ));
    assert!(matches!(
        list(ListConfig {
            costs: Some(&[1.0]),
            ..ListConfig::default()
        }),
        Error::LengthMismatch { what: "costs", .. }
    ));
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let costs = [1.0, bad, 1.0];
        let err = list(ListConfig {
            costs: Some(&costs),
            ..ListConfig::default()
        });
        assert!(
            matches!(err, Error::BadCost { node, .. } if node == NodeId::new(1)),
            "{err}"
        );
        let err = list(ListConfig {
            transfer_seconds: bad,
            ..ListConfig::default()
        });
        assert!(matches!(err, Error::BadTransferSeconds { .. }), "{err}");
    }
    for bad in [0.0, -1.0, f64::NAN] {
        let err = list(ListConfig {
            bandwidth: bad,
            ..ListConfig::default()
        });
        assert!(matches!(err, Error::BadBandwidth { .. }), "{err}");
    }
    assert_eq!(
        list(ListConfig {
            transfer_seconds: -0.5,
            ..ListConfig::default()
        })
        .to_string(),
        "transfer time -0.5 is not a finite number of seconds, at least 0"
    );
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let err = list(ListConfig {
            receive_seconds: bad,
            ..ListConfig::default()
        });
        assert!(matches!(err, Error::BadReceiveSeconds { .. }), "{err}");
    }
    for (slack, min_gain) in [(0.5, 0.0), (f64::NAN, 0.0), (1.25, -1.0), (1.25, f64::NAN)] {
        let rule = AutoRule { slack, min_gain };
        let err = assign_auto(&dag, &workers, &ListConfig::default(), rule).unwrap_err();
        assert!(matches!(err, Error::BadAutoRule { .. }), "{err}");
    }
    assert_eq!(
        list(ListConfig {
            bandwidth: 0.0,
            ..ListConfig::default()
        })
        .to_string(),
        "bandwidth 0 is not a positive number of bytes per second"
    );
    let config = ListConfig::default();
    assert!(matches!(
        assign_list(&Loop, &workers, &config),
        Err(Error::Graph(_))
    ));
    let two = Assignment::from_vec(vec![0, 1], 2).unwrap();
    assert!(matches!(
        makespan(&Loop, &workers, &two, &config),
        Err(Error::Graph(_))
    ));
    assert!(matches!(
        makespan(&dag, &workers, &two, &config),
        Err(Error::LengthMismatch {
            what: "assignment",
            ..
        })
    ));
    let three = Assignment::from_vec(vec![0, 1, 2], 3).unwrap();
    assert!(matches!(
        makespan(&dag, &workers, &three, &config),
        Err(Error::WorkerCountMismatch {
            assignment: 3,
            workers: 2
        })
    ));
}

/// Each input received from another worker costs its reader
/// `receive_seconds` on top of the latency: 0 -> 2 <- 1 with 0 and 1 apart.
#[test]
fn received_inputs_cost_their_reader() {
    let dag = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
    let workers = Workers::new(2).unwrap();
    let config = ListConfig {
        transfer_seconds: 0.25,
        receive_seconds: 0.5,
        ..ListConfig::default()
    };
    let split = Assignment::from_vec(vec![0, 1, 0], 2).unwrap();
    // 1 s for 0 and 1 side by side, 1's result arrives at 1.25, and 2 runs
    // 1 s plus 0.5 s for it.
    assert_eq!(makespan(&dag, &workers, &split, &config).unwrap(), 2.75);
    let apart = Assignment::from_vec(vec![0, 0, 1], 2).unwrap();
    assert_eq!(makespan(&dag, &workers, &apart, &config).unwrap(), 4.25);
    let together = Assignment::from_vec(vec![0, 0, 0], 2).unwrap();
    assert_eq!(makespan(&dag, &workers, &together, &config).unwrap(), 3.0);
}

/// Quick tasks whose messages cost more than they do: `assign_auto` keeps
/// the partitioner's placement wherever the list schedule cuts more (the
/// chains and diamonds it keeps whole on one worker cut less still; every
/// placement of the shuffle cuts about as much).
#[test]
fn auto_keeps_the_partitioners_cut_on_quick_tasks() {
    for shape in Shape::ALL {
        let graph = shape.generate(5_000, 0);
        let dag = common::topology(&graph);
        let costs = vec![1e-6; dag.node_count()];
        let config = ListConfig {
            costs: Some(&costs),
            transfer_seconds: 1e-4,
            receive_seconds: 5e-6,
            ..ListConfig::default()
        };
        for k in [4, 16] {
            let workers = Workers::new(k).unwrap();
            let auto = assign_auto(&dag, &workers, &config, AutoRule::default()).unwrap();
            let cut = assign(&dag, &workers, None, Some(&costs)).unwrap();
            let label = format!("{} on {k}", shape.name());
            let spans = (auto.chosen, auto.cut_makespan, auto.time_makespan);
            assert!(spans.1 > 0.0 && spans.2 > 0.0, "{label}");
            if ![Shape::Chain, Shape::Diamonds, Shape::Shuffle].contains(&shape) {
                assert_eq!(auto.chosen, Chosen::Cut, "{label}: {spans:?}");
                assert!(auto.assignment == cut, "{label}");
            }
            let (ours, partitioner) = (
                edge_cut(&dag, &auto.assignment).unwrap(),
                edge_cut(&dag, &cut).unwrap(),
            );
            assert!(
                ours as f64 <= 1.2 * partitioner as f64 + 2.0,
                "{label}: {ours} against {partitioner}"
            );
        }
    }
}

/// Tasks of 4 ms on a random DAG whose tasks read recent ones: the
/// partitioner's parts would run one after the other, and `assign_auto`
/// takes the list schedule, near the bound.
#[test]
fn auto_takes_the_list_schedule_where_the_parts_would_wait() {
    let dag = random_dag(2_000, 60, 1);
    let costs = vec![0.004; dag.node_count()];
    let config = ListConfig {
        costs: Some(&costs),
        transfer_seconds: 1e-4,
        receive_seconds: 5e-6,
        ..ListConfig::default()
    };
    let workers = Workers::new(4).unwrap();
    let auto = assign_auto(&dag, &workers, &config, AutoRule::default()).unwrap();
    let spans = (auto.chosen, auto.cut_makespan, auto.time_makespan);
    assert_eq!(auto.chosen, Chosen::Time, "{spans:?}");
    assert!(auto.cut_makespan > 2.0 * auto.time_makespan, "{spans:?}");
    let bound = lower_bound(&dag, &workers, Some(&costs));
    assert!(
        auto.makespan() <= 1.1 * bound,
        "{} against {bound}",
        auto.makespan()
    );
    assert!(auto.assignment == assign_list(&dag, &workers, &config).unwrap());
    // A gain of less than the rule's seconds keeps the partitioner's.
    let rule = AutoRule {
        min_gain: auto.cut_makespan,
        ..AutoRule::default()
    };
    let patient = assign_auto(&dag, &workers, &config, rule).unwrap();
    assert_eq!(patient.chosen, Chosen::Cut);
    assert!(patient.assignment == assign(&dag, &workers, None, Some(&costs)).unwrap());
}
