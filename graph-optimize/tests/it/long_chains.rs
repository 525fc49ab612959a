//! Long chains through the whole pipeline: cheap ops inlined, then fused.
//! By default no fused term nests deeper than `DEFAULT_MAX_DEPTH` calls,
//! whatever each fused task held; asked for deeper terms, the pipeline builds
//! terms thousands of calls deep without recursing as deep. (Dropping or
//! comparing such a term recurses, in graph-core's types; the terms here are
//! as deep as a test thread's small stack lets those go.)

use graph_core::generate::chain;
use graph_core::{Body, Op, Term};
use graph_optimize::{
    DEFAULT_MAX_DEPTH, FuseConfig, MAX_INLINED_TERM, OptimizeConfig, optimize, optimize_owned,
};

/// How many calls a term nests, counted without recursion.
fn nesting(term: &Term) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(term, 1)];
    while let Some((term, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if let Term::Call { args: items, .. } | Term::List(items) = term {
            stack.extend(items.iter().map(|item| (item, depth + 1)));
        }
    }
    deepest
}

/// The deepest nesting of the graph's terms.
fn deepest(graph: &graph_core::TaskGraph) -> usize {
    graph
        .iter()
        .filter_map(|(_, task)| match &task.body {
            Body::Term(term) => Some(nesting(term)),
            Body::Opaque(_) => None,
        })
        .max()
        .unwrap()
}

#[test]
fn by_default_fused_terms_nest_at_most_the_default_depth() {
    // inline_functions leaves every 64th task, each holding 64 nested
    // calls; counted in tasks, fusing 256 of those would nest 16 000 calls,
    // more than an executor's or a reader's stack takes.
    let graph = chain(20_000);
    let config = OptimizeConfig {
        fast_ops: vec![Op::new("inc")],
        ..OptimizeConfig::default()
    };
    let (optimized, report) = optimize(&graph, &config).unwrap();
    // 313 tasks, and the chain's constant head, inlined and kept as dask's
    // inline keeps it.
    assert_eq!(report.passes[2].tasks_after, 314);
    let deepest = deepest(&optimized) - 1; // `nesting` counts the reference
    assert!(deepest <= DEFAULT_MAX_DEPTH, "{deepest}");
    assert!(deepest > DEFAULT_MAX_DEPTH - MAX_INLINED_TERM, "{deepest}");
}

#[test]
fn a_long_chain_of_cheap_ops_builds_deep_terms_without_deep_recursion() {
    let graph = chain(20_000);
    let config = OptimizeConfig {
        fast_ops: vec![Op::new("inc")],
        fuse: FuseConfig {
            // 40 of the tasks inline_functions leaves.
            max_depth: Some(40 * 64),
            ..FuseConfig::default()
        },
        ..OptimizeConfig::default()
    };
    let (optimized, report) = optimize(&graph, &config).unwrap();
    // inline_functions leaves every 64th task (its terms are capped), and
    // fuse joins up to 40 of those into one task; the chain's constant head
    // stays, inlined.
    assert_eq!(report.passes[2].tasks_after, 314);
    assert_eq!(optimized.len(), 9);
    let deepest = deepest(&optimized);
    assert!(deepest > 2_000, "{deepest}");
    let (owned, _) = optimize_owned(graph, &config).unwrap();
    assert_eq!(owned, optimized);
}
