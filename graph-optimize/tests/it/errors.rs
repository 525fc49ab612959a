//! Errors: every pass reports bad input with messages that name keys, and
//! never panics on it.

use crate::common::{graph, keys};
use graph_core::{Key, TaskGraph, Term};
use graph_optimize::{
    Error, FuseConfig, FuseLinearConfig, OptimizeConfig, cull, fuse, fuse_linear, inline,
    inline_functions, optimize,
};

#[test]
fn a_missing_reference_names_both_keys() {
    let mut g = TaskGraph::new();
    g.insert("a", Term::call("inc", [Term::key("ghost")]))
        .unwrap();
    let msg = "task 'a' refers to missing key 'ghost'";
    assert_eq!(cull(&g, &keys(&["a"])).unwrap_err().to_string(), msg);
    assert_eq!(inline(&g, &[], true).unwrap_err().to_string(), msg);
    assert_eq!(
        fuse(&g, &FuseConfig::default()).unwrap_err().to_string(),
        msg
    );
    assert_eq!(
        optimize(&g, &OptimizeConfig::default())
            .unwrap_err()
            .to_string(),
        msg
    );
}

#[test]
fn a_cycle_names_its_keys() {
    let mut g = TaskGraph::new();
    g.insert("a", Term::call("inc", [Term::key("b")])).unwrap();
    g.insert("b", Term::call("inc", [Term::key("c")])).unwrap();
    g.insert("c", Term::call("inc", [Term::key("a")])).unwrap();
    let err = fuse(&g, &FuseConfig::default()).unwrap_err();
    assert!(matches!(err, Error::Graph(graph_core::Error::Cycle { .. })));
    assert_eq!(
        err.to_string(),
        "cycle: 'a' -> 'b' -> 'c' -> 'a' (each task depends on the next)"
    );
    // A task that references itself is a cycle, as in dask.
    let mut g = TaskGraph::new();
    g.insert("a", Term::call("inc", [Term::key("a")])).unwrap();
    let err = optimize(&g, &OptimizeConfig::default()).unwrap_err();
    assert!(matches!(err, Error::Graph(graph_core::Error::Cycle { .. })));
    assert_eq!(
        err.to_string(),
        "cycle: 'a' -> 'a' (each task depends on the next)"
    );
}

#[test]
fn unknown_keys_are_named_by_every_pass() {
    let g = graph("a = 1\nb = inc(a)");
    let bad = vec![Key::from(("x", 1))];
    let msg = "unknown key ('x', 1): no task has it";
    assert_eq!(cull(&g, &bad).unwrap_err().to_string(), msg);
    assert_eq!(inline(&g, &bad, true).unwrap_err().to_string(), msg);
    let fast = [graph_core::Op::new("inc")];
    assert_eq!(
        inline_functions(&g, &bad, &fast).unwrap_err().to_string(),
        msg
    );
    let config = FuseLinearConfig {
        keys: Some(bad.clone()),
        ..FuseLinearConfig::default()
    };
    assert_eq!(fuse_linear(&g, &config).unwrap_err().to_string(), msg);
    let config = FuseConfig {
        keys: Some(bad.clone()),
        ..FuseConfig::default()
    };
    assert_eq!(fuse(&g, &config).unwrap_err().to_string(), msg);
}
