//! Whether Graphviz is here, and whether it must be: where
//! `TASKGRAPH_GRAPHVIZ=require` (as CI sets it, having installed Graphviz) a
//! missing `dot` fails the tests that render instead of letting them pass
//! unrendered.

/// Whether the environment says Graphviz must be installed.
pub(crate) fn required() -> bool {
    std::env::var_os("TASKGRAPH_GRAPHVIZ").is_some_and(|v| v == "require")
}

/// Whether Graphviz's `dot` runs; a failed test if it does not and must.
pub(crate) fn has_dot() -> bool {
    let found = std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        found || !required(),
        "TASKGRAPH_GRAPHVIZ=require, but Graphviz's dot cannot be started"
    );
    found
}
