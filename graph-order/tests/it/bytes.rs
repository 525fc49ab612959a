//! Orders in bytes: where results differ in size, `Auto` minimizes the bytes
//! held, Liu's tree order and the exact search in bytes are optimal (held to
//! a brute force over every done-set on small graphs), the byte lower bound
//! is below every order, and sizes that are all alike change no order.

use crate::common::{STRATEGIES, assert_valid};
use graph_core::generate::{self, Rng, Shape};
use graph_core::{Dag, TaskGraph, Topology};
use graph_order::internals::{exact_search_bytes, liu};
use graph_order::{
    Order, OrderConfig, Strategy, byte_diagnostics, lower_bound_bytes, max_bytes, max_pressure,
    order, ranks_by_str,
};

const PRODUCER: u64 = 4_000_000;
const SMALL: u64 = 8;

/// `producers` results of `PRODUCER` bytes, each read by `readers` small
/// tasks (reader `r` of producer `p` weighing `reader_size(p, r)`), every
/// reader's result gathered by one sink. With `grouped`, the sink lists the
/// first readers of every producer, then the second ones, and so on (the
/// order that tempts a depth-first order into holding every producer).
fn producers(
    producers: usize,
    readers: usize,
    grouped: bool,
    reader_size: impl Fn(usize, usize) -> u64,
) -> (Topology, Vec<u64>) {
    let n = producers * (readers + 1) + 1;
    let sink = n - 1;
    let reader = |p: usize, r: usize| producers + p * readers + r;
    let mut edges = Vec::new();
    let mut sizes = vec![PRODUCER; producers];
    for p in 0..producers {
        for r in 0..readers {
            edges.push((p, reader(p, r)));
        }
    }
    sizes.resize(n, 0);
    for p in 0..producers {
        for r in 0..readers {
            sizes[reader(p, r)] = reader_size(p, r);
        }
    }
    let mut gathered = Vec::new();
    if grouped {
        for r in 0..readers {
            gathered.extend((0..producers).map(|p| reader(p, r)));
        }
    } else {
        gathered.extend((0..producers).flat_map(|p| (0..readers).map(move |r| reader(p, r))));
    }
    edges.extend(gathered.into_iter().map(|r| (r, sink)));
    (Topology::from_edges(n, edges).unwrap(), sizes)
}

fn auto_with(dag: &Topology, sizes: &[u64]) -> Order {
    let config = OrderConfig {
        sizes,
        ..OrderConfig::default()
    };
    order(dag, &[], &config).unwrap()
}

/// The graph: 40 producers of 4 MB, each read by a length and a
/// checksum, all 80 small results gathered by one task. Counted in results
/// every order holds 80 before the sink; in bytes the best holds one
/// producer and the small results.
#[test]
fn producers_read_twice_are_held_one_at_a_time() {
    for grouped in [false, true] {
        let (dag, sizes) = producers(40, 2, grouped, |_, _| SMALL);
        let o = auto_with(&dag, &sizes);
        let bytes = max_bytes(&dag, &o, &sizes).unwrap();
        let small = 80 * SMALL;
        assert!(bytes <= 2 * PRODUCER + small, "grouped {grouped}: {bytes}");
        let lower = lower_bound_bytes(&dag, &sizes).unwrap();
        assert!(lower <= bytes);
        // Without sizes the same graph's count-optimal orders are free to
        // hold every producer; at least one strategy does.
        let worst = STRATEGIES
            .iter()
            .map(|&s| {
                let o = order(&dag, &[], &OrderConfig::new(s)).unwrap();
                max_bytes(&dag, &o, &sizes).unwrap()
            })
            .max()
            .unwrap();
        if grouped {
            assert!(worst >= 20 * PRODUCER, "{worst}");
        }
    }
}

/// Three readers, and readers of uneven sizes (some as large as a
/// producer): still about one producer at a time.
#[test]
fn three_readers_and_uneven_readers() {
    for grouped in [false, true] {
        let (dag, sizes) = producers(30, 3, grouped, |_, _| SMALL);
        let o = auto_with(&dag, &sizes);
        let bytes = max_bytes(&dag, &o, &sizes).unwrap();
        assert!(bytes <= 2 * PRODUCER + 90 * SMALL, "three readers: {bytes}");

        let uneven = |p: usize, r: usize| {
            if r == 0 {
                10 + p as u64
            } else {
                1_000 * (r as u64)
            }
        };
        let (dag, sizes) = producers(30, 3, grouped, uneven);
        let small: u64 = (0..30)
            .flat_map(|p| (0..3).map(move |r| uneven(p, r)))
            .sum();
        let o = auto_with(&dag, &sizes);
        let bytes = max_bytes(&dag, &o, &sizes).unwrap();
        assert!(bytes <= 2 * PRODUCER + small, "uneven readers: {bytes}");
    }
}

/// Every subset of done tasks, by dynamic programming: the least max bytes
/// of any order (graphs of up to 16 tasks).
fn brute_force(dag: &Topology, sizes: &[u64]) -> u64 {
    let n = dag.node_count();
    assert!(n <= 16);
    let full = (1_u32 << n) - 1;
    let weight = |v: usize| {
        if dag.dependents(graph_core::NodeId::new(v)).is_empty() {
            0
        } else {
            sizes[v]
        }
    };
    let held = |done: u32| -> u64 {
        (0..n)
            .filter(|&v| done >> v & 1 == 1)
            .filter(|&v| {
                dag.dependents(graph_core::NodeId::new(v))
                    .iter()
                    .any(|w| done >> w.index() & 1 == 0)
            })
            .map(weight)
            .sum()
    };
    let mut best = vec![u64::MAX; 1 << n];
    best[full as usize] = 0;
    for done in (0..full).rev() {
        let now = held(done);
        let mut least = u64::MAX;
        for v in 0..n {
            if done >> v & 1 == 1 {
                continue;
            }
            let ready = dag
                .dependencies(graph_core::NodeId::new(v))
                .iter()
                .all(|d| done >> d.index() & 1 == 1);
            if ready {
                least = least.min(best[(done | 1 << v) as usize]);
            }
        }
        best[done as usize] = now.max(least);
    }
    best[0]
}

/// A random in-forest of `n` tasks (each task's dependent is a later one,
/// or none) with sizes spread over three orders of magnitude.
fn random_in_forest(n: usize, rng: &mut Rng) -> (Topology, Vec<u64>) {
    let mut edges = Vec::new();
    for v in 0..n - 1 {
        if rng.below(8) > 0 {
            edges.push((v, v + 1 + rng.below(n - v - 1)));
        }
    }
    let sizes = (0..n).map(|_| random_size(rng)).collect();
    (Topology::from_edges(n, edges).unwrap(), sizes)
}

fn random_size(rng: &mut Rng) -> u64 {
    match rng.below(3) {
        0 => 1 + rng.below(9) as u64,
        1 => 10 + rng.below(90) as u64,
        _ => 100 + rng.below(900) as u64,
    }
}

/// A random DAG of `n` tasks: each task reads up to three earlier ones.
fn random_dag(n: usize, rng: &mut Rng) -> (Topology, Vec<u64>) {
    let mut edges = Vec::new();
    for v in 1..n {
        for _ in 0..rng.below(4) {
            edges.push((rng.below(v), v));
        }
    }
    let sizes = (0..n).map(|_| random_size(rng)).collect();
    (Topology::from_edges(n, edges).unwrap(), sizes)
}

/// Liu's generalized pebbling is the optimum on in-forests, its order
/// attains it, and `TreeOptimal` in bytes gives that order.
#[test]
fn liu_is_optimal_on_in_forests() {
    let mut rng = Rng::new(7);
    for case in 0..300 {
        let n = 2 + rng.below(13);
        let (dag, sizes) = random_in_forest(n, &mut rng);
        let (priorities, value) = liu(&dag, &sizes).unwrap().expect("an in-forest");
        assert_valid(&dag, &priorities);
        let o = Order::from_priorities(&dag, priorities).unwrap();
        assert_eq!(max_bytes(&dag, &o, &sizes).unwrap(), value, "case {case}");
        assert_eq!(value, brute_force(&dag, &sizes), "case {case}: {sizes:?}");
        assert_eq!(
            lower_bound_bytes(&dag, &sizes).unwrap(),
            value,
            "case {case}"
        );
    }
}

/// The exact search in bytes proves the brute force's optimum on small
/// DAGs, and `Auto` in bytes is never below it (nor, on these, above the
/// search: its budget suffices).
#[test]
fn the_exact_search_in_bytes_finds_the_optimum() {
    let mut rng = Rng::new(11);
    for case in 0..200 {
        let n = 2 + rng.below(13);
        let (dag, sizes) = random_dag(n, &mut rng);
        let optimum = brute_force(&dag, &sizes);
        let (found, proven) = exact_search_bytes(&dag, &sizes, 1_000_000).unwrap();
        assert!(proven, "case {case}");
        assert_eq!(found, optimum, "case {case}: {sizes:?}");
        let auto = max_bytes(&dag, &auto_with(&dag, &sizes), &sizes).unwrap();
        assert_eq!(auto, optimum, "case {case}");
        assert!(lower_bound_bytes(&dag, &sizes).unwrap() <= optimum);
    }
}

fn generated() -> Vec<(String, TaskGraph)> {
    let mut graphs = Vec::new();
    for shape in Shape::ALL {
        for tasks in [30, 200] {
            graphs.push((
                format!("{} {tasks}", shape.name()),
                shape.generate(tasks, 3),
            ));
        }
    }
    for seed in 0..3 {
        graphs.push((format!("random {seed}"), generate::random_dag(150, seed)));
    }
    graphs
}

/// Every strategy, but the long exact search only on small graphs (it is
/// `Auto`'s search with a larger budget).
fn strategies(dag: &Topology) -> impl Iterator<Item = Strategy> {
    let small = dag.node_count() <= 64;
    STRATEGIES
        .into_iter()
        .chain([Strategy::Greedy])
        .filter(move |&s| small || s != Strategy::Exhaustive)
}

/// Sizes that are all alike (1, or 7 everywhere) give every strategy its
/// order without sizes, and bytes are that size times the results held.
#[test]
fn sizes_all_alike_change_no_order() {
    for (name, graph) in generated() {
        let dag = graph.topology().unwrap();
        let ranks = ranks_by_str(graph.keys());
        for strategy in strategies(dag) {
            let plain = order(dag, &ranks, &OrderConfig::new(strategy)).unwrap();
            for size in [1, 7] {
                let sizes = vec![size; dag.node_count()];
                let config = OrderConfig {
                    sizes: &sizes,
                    ..OrderConfig::new(strategy)
                };
                let weighed = order(dag, &ranks, &config).unwrap();
                assert_eq!(plain, weighed, "{name} {strategy:?} size {size}");
                assert_eq!(
                    max_bytes(dag, &plain, &sizes).unwrap(),
                    size * u64::from(max_pressure(dag, &plain).unwrap()),
                    "{name}"
                );
            }
        }
    }
}

/// With sizes that differ, every strategy gives a valid order, the byte
/// series agrees with its maximum, no order is below the byte bound, and
/// `Auto` is never above any other heuristic in bytes.
#[test]
fn orders_in_bytes_are_valid_and_auto_is_best() {
    let mut rng = Rng::new(5);
    for (name, graph) in generated() {
        let dag = graph.topology().unwrap();
        let sizes: Vec<u64> = (0..dag.node_count())
            .map(|_| random_size(&mut rng) * 1_000)
            .collect();
        let ranks = ranks_by_str(graph.keys());
        let lower = lower_bound_bytes(dag, &sizes).unwrap();
        let config = |strategy| OrderConfig {
            sizes: &sizes,
            ..OrderConfig::new(strategy)
        };
        let auto = order(dag, &ranks, &config(Strategy::Auto)).unwrap();
        let auto_bytes = max_bytes(dag, &auto, &sizes).unwrap();
        for strategy in strategies(dag) {
            let o = order(dag, &ranks, &config(strategy)).unwrap();
            assert_valid(dag, o.priorities());
            let d = byte_diagnostics(dag, &o, &sizes).unwrap();
            assert_eq!(d.pressure.iter().max().copied().unwrap_or(0), d.max_bytes);
            assert!(lower <= d.max_bytes, "{name} {strategy:?}");
            if !matches!(strategy, Strategy::Exhaustive) {
                assert!(auto_bytes <= d.max_bytes, "{name} {strategy:?}");
            }
        }
    }
}

/// Sizes of the wrong length are refused, naming them.
#[test]
fn sizes_of_the_wrong_length_are_refused() {
    let dag = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
    let config = OrderConfig {
        sizes: &[1, 2],
        ..OrderConfig::default()
    };
    let err = order(&dag, &[], &config).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sizes has 2 entries, but the graph has 3 nodes"
    );
    let o = order(&dag, &[], &OrderConfig::default()).unwrap();
    assert!(max_bytes(&dag, &o, &[1]).is_err());
    assert!(lower_bound_bytes(&dag, &[]).is_err());
}

/// Sizes near `u64::MAX` saturate rather than wrap.
#[test]
fn huge_sizes_saturate() {
    let dag = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
    let sizes = [u64::MAX, u64::MAX - 1, 0];
    let o = auto_with(&dag, &sizes);
    assert_eq!(max_bytes(&dag, &o, &sizes).unwrap(), u64::MAX);
    assert_eq!(lower_bound_bytes(&dag, &sizes).unwrap(), u64::MAX);
    // A small graph of sizes near 2^64, by the strategies that weigh them.
    let (dag, _) = producers(3, 2, true, |_, _| 0);
    let sizes: Vec<u64> = (0..dag.node_count() as u64).map(|i| u64::MAX - i).collect();
    for strategy in [
        Strategy::Auto,
        Strategy::Exhaustive,
        Strategy::Greedy,
        Strategy::TreeOptimal,
    ] {
        let config = OrderConfig {
            sizes: &sizes,
            ..OrderConfig::new(strategy)
        };
        let o = order(&dag, &[], &config).unwrap();
        assert_eq!(
            max_bytes(&dag, &o, &sizes).unwrap(),
            u64::MAX,
            "{strategy:?}"
        );
    }
}

/// Generated graphs with their outputs gathered by one sink (dask's
/// `finalize`): `Auto` in bytes holds at most what it holds without the
/// sink plus the outputs.
#[test]
fn a_gathering_sink_costs_at_most_its_inputs() {
    for (name, graph) in [
        ("overlap", generate::array_overlap(12, 18)),
        ("cumsum", generate::array_cumsum(12, 18)),
        ("shuffle", generate::shuffle(40, 40)),
    ] {
        let dag = graph.topology().unwrap();
        let n = dag.node_count();
        let sinks: Vec<usize> = (0..n)
            .filter(|&v| dag.dependents(graph_core::NodeId::new(v)).is_empty())
            .collect();
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for v in dag.node_ids() {
            for d in dag.dependencies(v) {
                edges.push((d.index(), v.index()));
            }
        }
        edges.extend(sinks.iter().map(|&s| (s, n)));
        let gathered = Topology::from_edges(n + 1, edges).unwrap();
        // Inputs of 4 MB, everything after them a quarter of that, outputs
        // small.
        let mut sizes: Vec<u64> = (0..n)
            .map(|v| {
                let node = graph_core::NodeId::new(v);
                match (
                    dag.dependencies(node).is_empty(),
                    dag.dependents(node).is_empty(),
                ) {
                    (true, _) => 4_000_000,
                    (_, true) => 16,
                    _ => 1_000_000,
                }
            })
            .collect();
        let alone = max_bytes(dag, &auto_with(dag, &sizes), &sizes).unwrap();
        sizes.push(8);
        let with = max_bytes(&gathered, &auto_with(&gathered, &sizes), &sizes).unwrap();
        assert!(
            with <= alone + 16 * sinks.len() as u64,
            "{name}: {with} against {alone}"
        );
    }
}

/// dask's own graph of a map_overlap whose blocks are each reduced
/// (dask/dask#5824), as `dask.compute` hands it to a scheduler: with its
/// `finalize` task gathering the 216 outputs, and each chunk's bytes from
/// dask's array metadata. `Auto` in bytes holds no more than
/// `dask.order.order` does (72.7 MB, recorded in the file); ordered with
/// the gathering task in, the best candidate held 547 MB.
#[test]
fn dask_map_overlap_with_its_finalize_holds_what_dask_holds() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/overlap_reduced_finalize.json.gz"
    );
    let shape = graph_core::json::read_shape_path(path).unwrap();
    let sizes = graph_order::shape_sizes(&shape).expect("every task has a size");
    let ties = ranks_by_str(shape.keys());
    let config = OrderConfig {
        sizes: &sizes,
        is_data: shape.literals(),
        ..OrderConfig::default()
    };
    let o = order(shape.topology(), &ties, &config).unwrap();
    let held = max_bytes(shape.topology(), &o, &sizes).unwrap();
    assert!(held <= 72_704_576, "{held}");
}
