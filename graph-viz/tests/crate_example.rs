//! The crate-level example: draw a tree reduction coloured by memory
//! pressure, as DOT, and as a collapsed picture of its groups of tasks. Run
//! as a test without the harness, so `main` is the test.

use graph_viz::{Colour, Options, picture};

fn main() -> Result<(), graph_viz::Error> {
    // A tree reduction of 16 chunks: 31 tasks.
    let graph = graph_core::generate::tree(16, 2);
    let mut options = Options::default();
    options.colour = Colour::Memorypressure;

    let drawn = picture(&graph, "a tree", &options)?;
    assert_eq!(drawn.node_count(), graph.len());
    let dot = drawn.to_dot();
    assert!(dot.starts_with("digraph taskgraph {"));
    assert!(dot.contains("<B>memorypressure</B>"));

    // The same graph as its groups of tasks, one box per key name.
    options.collapse = true;
    let groups = picture(&graph, "a tree", &options)?;
    assert!(groups.node_count() < drawn.node_count());
    Ok(())
}
