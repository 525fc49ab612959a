//! The crate-level example: build a graph, write it as JSON, read it back,
//! measure it. Run as a test without the test harness, so `main` is the test.

use graph_core::{GraphStats, Key, TaskGraph, Term, json};

fn main() -> Result<(), graph_core::json::Error> {
    // x = 1; y = inc(x); ('z', 0) = add(x, y)
    let graph = TaskGraph::builder()
        .task("x", Term::lit(1))
        .task("y", Term::call("inc", [Term::key("x")]))
        .task(
            ("z", 0),
            Term::call("add", [Term::key("x"), Term::key("y")]),
        )
        .build()?;

    let text = json::to_string(&graph)?;
    assert_eq!(json::from_slice(text.as_bytes())?, graph);

    let stats = GraphStats::of(graph.topology()?);
    assert_eq!((stats.tasks, stats.edges, stats.depth), (3, 3, 3));
    let z = graph.get(&Key::from(("z", 0))).unwrap();
    assert_eq!(z.body.term().unwrap().to_string(), "add(x, y)");
    Ok(())
}
