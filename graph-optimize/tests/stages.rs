//! Stage planning: wide edges split stages, narrow work coalesces into one
//! task per partition and stage, and results do not change.

mod common;

use common::{Evaluator, graph, key, keys, show_checked};
use expect_test::expect;
use graph_core::generate::{chain, shuffle_split};
use graph_core::{Key, Op};
use graph_optimize::{Error, StageConfig, coalesce_stages, plan_stages};

fn wide(ops: &[&str]) -> StageConfig {
    StageConfig {
        wide_ops: ops.iter().map(|op| Op::new(op)).collect(),
        ..StageConfig::default()
    }
}

#[test]
fn a_shuffle_splits_two_stages() {
    let graph = shuffle_split(3, 2);
    let plan = plan_stages(&graph, &wide(&["sum"])).unwrap();
    assert_eq!(plan.stage_count, 2);
    let coalesced = coalesce_stages(&graph, &plan).unwrap();
    // Each input has two users, so it stays; its pieces are narrow but used
    // by a wide op, so they stay in stage 0; the outputs make stage 1.
    expect![[r#"
        ('input', 0) = 0
        ('input', 1) = 1
        ('input', 2) = 2
        ('output', 0) = sum([('split', 0, 0), ('split', 1, 0), ('split', 2, 0)])
        ('output', 1) = sum([('split', 0, 1), ('split', 1, 1), ('split', 2, 1)])
        ('split', 0, 0) = add(('input', 0), 0)
        ('split', 0, 1) = add(('input', 0), 1)
        ('split', 1, 0) = add(('input', 1), 0)
        ('split', 1, 1) = add(('input', 1), 1)
        ('split', 2, 0) = add(('input', 2), 0)
        ('split', 2, 1) = add(('input', 2), 1)
    "#]]
    .assert_eq(&show_checked(&coalesced));
}

#[test]
fn narrow_chains_coalesce_per_partition() {
    // Two partitions, each mapped twice (narrow), then an all-to-all sum,
    // then a narrow step on each side of it.
    let g = graph(
        "
        ('x', 0) = 1
        ('x', 1) = 2
        ('a', 0) = inc(('x', 0))
        ('a', 1) = inc(('x', 1))
        ('b', 0) = neg(('a', 0))
        ('b', 1) = neg(('a', 1))
        total = sum([('b', 0), ('b', 1)])
        out = inc(total)
        ",
    );
    let plan = plan_stages(&g, &wide(&["sum"])).unwrap();
    let stages: Vec<Vec<Key>> = plan
        .stages()
        .iter()
        .map(|stage| stage.iter().map(|&n| g.key(n).clone()).collect())
        .collect();
    assert_eq!(stages, [keys(&["('b', 0)", "('b', 1)"]), keys(&["out"])]);
    let coalesced = coalesce_stages(&g, &plan).unwrap();
    expect![[r#"
        ('b', 0) = neg(inc(1))
        ('b', 1) = neg(inc(2))
        out = inc(sum([('b', 0), ('b', 1)]))
    "#]]
    .assert_eq(&show_checked(&coalesced));
    let out = key("out");
    assert_eq!(
        Evaluator::new(&g).get(&out),
        Evaluator::new(&coalesced).get(&out)
    );

    // A wide edge named by its keys splits as well; kept keys stay tasks.
    let config = StageConfig {
        wide_edges: vec![(key("('a', 0)"), key("('b', 0)"))],
        keys: keys(&["('x', 1)"]),
        ..wide(&["sum"])
    };
    let plan = plan_stages(&g, &config).unwrap();
    let coalesced = coalesce_stages(&g, &plan).unwrap();
    expect![[r#"
        ('a', 0) = inc(1)
        ('b', 0) = neg(('a', 0))
        ('b', 1) = neg(inc(('x', 1)))
        ('x', 1) = 2
        out = inc(sum([('b', 0), ('b', 1)]))
    "#]]
    .assert_eq(&show_checked(&coalesced));
    assert_eq!(plan.stage_count, 3);
}

#[test]
fn long_chains_are_cut_at_the_depth_limit() {
    let graph = chain(10);
    let config = StageConfig {
        max_depth: Some(3),
        ..StageConfig::default()
    };
    let plan = plan_stages(&graph, &config).unwrap();
    assert_eq!(plan.task_count(), 4);
    let coalesced = coalesce_stages(&graph, &plan).unwrap();
    expect![[r#"
        ('chain', 2) = inc(inc(0))
        ('chain', 5) = inc(inc(inc(('chain', 2))))
        ('chain', 8) = inc(inc(inc(('chain', 5))))
        ('chain', 9) = inc(('chain', 8))
    "#]]
    .assert_eq(&show_checked(&coalesced));
}

#[test]
fn errors_name_keys() {
    let g = graph("a = 1\nb = inc(a)\nc = inc(b)");
    let config = StageConfig {
        wide_edges: vec![(key("a"), key("c"))],
        ..StageConfig::default()
    };
    let err = plan_stages(&g, &config).unwrap_err();
    assert!(matches!(err, Error::NotAnEdge { .. }));
    assert_eq!(
        err.to_string(),
        "no edge 'a' -> 'c': 'c' does not depend on 'a'"
    );
    let config = StageConfig {
        keys: keys(&["zzz"]),
        ..StageConfig::default()
    };
    let err = plan_stages(&g, &config).unwrap_err();
    assert_eq!(err.to_string(), "unknown key 'zzz': no task has it");
    let plan = plan_stages(&chain(5), &StageConfig::default()).unwrap();
    assert!(matches!(
        coalesce_stages(&g, &plan).unwrap_err(),
        Error::PlanLength { .. }
    ));
    // A plan for another graph of the same size.
    let other = graph(
        "a = 1
b = inc(a)
c = add(b, a)",
    );
    let plan = plan_stages(&chain(3), &StageConfig::default()).unwrap();
    let err = coalesce_stages(&other, &plan).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the stage plan does not fit the graph: task 'a' cannot join the task that uses it"
    );
}
