//! Ports of dask's tests of its private helpers `ndependencies` and
//! `_connecting_to_roots`, against our [`dask_metrics`]. dask also asserts
//! that equal root *sets* are shared objects (a memory optimisation); we keep
//! no sets at all (one 64-bit mask per task), so those identity checks become
//! checks of the counts, which is all the ordering reads.

use crate::common;
use crate::common::Case;
use graph_core::Dag;
use graph_order::internals::{DaskMetrics, dask_metrics};

fn metrics(case: &Case) -> DaskMetrics {
    dask_metrics(case.topology()).expect("acyclic")
}

/// Looks up `(connected_roots, max_dependents)` by key.
fn at(case: &Case, m: &DaskMetrics, key: &str) -> (u32, u32) {
    let i = case.node(&format!("'{key}'")).index();
    (m.connected_roots[i], m.max_dependents[i])
}

fn check(case: &Case, m: &DaskMetrics, expected: &[(&str, u32, u32)]) {
    for &(key, roots, max_dependents) in expected {
        assert_eq!(at(case, m, key), (roots, max_dependents), "{key}");
    }
}

/// `test_connecting_to_roots_single_root`, both directions.
#[test]
fn connecting_to_roots_single_root() {
    let case = Case::parse(include_str!("../data/dask/47_0.txt"));
    let m = metrics(&case);
    check(
        &case,
        &m,
        &[("a", 0, 2), ("b1", 1, 2), ("b2", 1, 2), ("c", 1, 2)],
    );
    let leaves = |k: &str| m.connected_leaves[case.node(&format!("'{k}'")).index()];
    assert_eq!(
        [leaves("c"), leaves("a"), leaves("b1"), leaves("b2")],
        [0, 1, 1, 1]
    );
}

/// `test_connecting_to_roots_tree_reduction`.
#[test]
fn connecting_to_roots_tree_reduction() {
    let case = Case::parse(include_str!("../data/dask/48_0.txt"));
    let m = metrics(&case);
    check(
        &case,
        &m,
        &[
            ("a0", 0, 1),
            ("a3", 0, 1),
            ("b1", 1, 1),
            ("b4", 1, 1),
            ("c1", 2, 1),
            ("c2", 2, 1),
            ("d", 4, 1),
        ],
    );
    for v in case.topology().node_ids() {
        let key = case.graph.key(v).python_str();
        assert_eq!(
            m.connected_leaves[v.index()],
            u32::from(key != "d"),
            "{key}"
        );
    }
}

/// `test_connecting_to_roots_long_linear_chains`: the chains below `a0` and
/// `a1` each see one root.
#[test]
fn connecting_to_roots_long_linear_chains() {
    let case = Case::parse(include_str!("../data/dask/49_0.txt"));
    let m = metrics(&case);
    for key in ["b0", "c0", "d0", "d1", "e1", "b1", "c1", "d2", "d3"] {
        assert_eq!(at(&case, &m, key).0, 1, "{key}");
    }
    assert_eq!(at(&case, &m, "f").0, 2);
}

/// `test_connecting_to_roots_asym`: the root counts, and dask's closed form
/// `max_dependents[k] = max(|dependents[r]| for r in roots[k])` (or
/// `|dependents[k]|` for a root), checked against root sets found by search.
#[test]
fn connecting_to_roots_asym() {
    let case = Case::parse(include_str!("../data/dask/51_0.txt"));
    let m = metrics(&case);
    let expected_roots = [
        ("a0", 0),
        ("a4", 0),
        ("b1", 2),
        ("c1", 2),
        ("c2", 2),
        ("d1", 2),
        ("b2", 1),
        ("b3", 1),
        ("c3", 2),
        ("d2", 3),
    ];
    for (key, roots) in expected_roots {
        assert_eq!(at(&case, &m, key).0, roots, "{key}");
    }
    let dag = case.topology();
    for v in dag.node_ids() {
        let mut stack = vec![v];
        let mut seen = vec![false; dag.node_count()];
        let mut roots = Vec::new();
        while let Some(x) = stack.pop() {
            for &d in dag.dependencies(x) {
                if !seen[d.index()] {
                    seen[d.index()] = true;
                    if dag.dependencies(d).is_empty() {
                        roots.push(d);
                    }
                    stack.push(d);
                }
            }
        }
        let expected = if roots.is_empty() {
            dag.dependents(v).len()
        } else {
            roots
                .iter()
                .map(|&r| dag.dependents(r).len())
                .max()
                .unwrap()
        };
        assert_eq!(m.connected_roots[v.index()] as usize, roots.len());
        assert_eq!(m.max_dependents[v.index()] as usize, expected);
    }
}

/// `test_gh_3055_explicit`, first half: `('e', 0)` descends from two roots.
#[test]
fn gh_3055_connected_roots() {
    for swap in common::VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/42_0.txt"), swap);
        let m = metrics(&case);
        assert_eq!(m.connected_roots.len(), 20);
        assert_eq!(m.connected_roots[case.node("('e', 0)").index()], 2);
    }
}

/// `test_stacklimit`: `ndependencies` on a 10 000-task chain, no recursion;
/// `total_dependencies` of the k-th task is k.
#[test]
fn stacklimit() {
    let mut text = String::from("x1 <-\n");
    for k in 2..=10_000 {
        text.push_str(&format!("x{k} <- x{}\n", k - 1));
    }
    let case = Case::parse(&text);
    let m = metrics(&case);
    for k in [1_u64, 2, 5_000, 10_000] {
        assert_eq!(m.total_dependencies[case.node(&format!("x{k}")).index()], k);
    }
}

/// `ndependencies`' documented example and its diamond: paths, not ancestors.
#[test]
fn total_dependencies_count_paths() {
    let case = Case::parse("d <-\nb <- d\nc <- d\na <- b, c\n");
    let m = metrics(&case);
    let t = |k: &str| m.total_dependencies[case.node(k).index()];
    assert_eq!([t("d"), t("b"), t("c"), t("a")], [1, 2, 2, 5]);
}

/// `test_connected_roots_deduplication_mem_usage` guards dask's memory on a
/// large SVD graph. Our equivalent guarantee is structural: one mask per
/// task, so counts are capped at 64 buckets however many roots there are.
/// On a wide random graph, counts stay within that cap and never exceed the
/// number of roots.
#[test]
fn connected_roots_bounded_memory() {
    let graph = graph_core::generate::random_dag(20_000, 3);
    let topology = graph.topology().expect("acyclic");
    let m = dask_metrics(topology).expect("acyclic");
    let roots = topology
        .node_ids()
        .filter(|&v| topology.dependencies(v).is_empty())
        .count() as u32;
    assert!(roots > 64);
    assert!(m.connected_roots.iter().all(|&c| c <= 64 && c <= roots));
    assert!(m.connected_roots.iter().any(|&c| c > 1));
}
