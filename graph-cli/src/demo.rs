//! `taskgraph demo`: the toolkit's story, step by step, on the word-count graph
//! of dask's optimization documentation.

use std::io::Write;

use graph_core::{Body, GraphStats, Key, TaskGraph, generate};
use graph_exec::Output;

/// Arguments of `taskgraph demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let graph = generate::word_count();
    writeln!(
        out,
        "The word-count graph of dask's optimization docs, {} tasks:",
        graph.len()
    )?;
    write_graph(&mut out, &graph)?;
    writeln!(out)?;
    let stats = GraphStats::of(graph.topology()?);
    writeln!(
        out,
        "Its shape: {} tasks, {} edges, {} roots, {} leaves, depth {}, widest fan-in {} and fan-out {}.",
        stats.tasks,
        stats.edges,
        stats.roots,
        stats.leaves,
        stats.depth,
        stats.max_in_degree,
        stats.max_out_degree
    )?;
    writeln!(out)?;

    writeln!(out, "Optimized as dask's optimization docs do it:")?;
    crate::optimize::demo_steps(&mut out)?;
    writeln!(out)?;

    let graph = crate::rewrite::demo_step(&mut out, &graph)?;
    writeln!(out)?;

    let priorities = crate::order::demo_step(&mut out, &graph)?;
    writeln!(out)?;

    writeln!(
        out,
        "Placed on 2 workers (fewest cut edges within 3% of a balanced load):"
    )?;
    crate::assign::demo_step(&mut out, &graph, 2)?;
    writeln!(out)?;

    let keys: Vec<Key> = ["print1", "print2", "print3"]
        .into_iter()
        .map(Key::from)
        .collect();
    writeln!(
        out,
        "Run on all cores with the built-in ops, asking for print1..3:"
    )?;
    let run = crate::run::execute(&graph, &keys, 0, Some(priorities.clone()))?;
    let values = run.output.items().unwrap_or_default();
    for (key, value) in keys.iter().zip(values.iter().filter_map(Output::value)) {
        writeln!(out, "  {} = {value}", key.python_str())?;
    }
    writeln!(
        out,
        "  {} tasks run, at most {} intermediate results held at once",
        run.stats.tasks_run, run.stats.peak_held
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Run across 2 worker processes (timely dataflow over loopback TCP), each task where it was placed:"
    )?;
    crate::distributed::demo_step(&mut out, &graph, &keys)?;
    writeln!(out)?;
    write_picture(&mut out, &graph, priorities)?;
    Ok(())
}

/// Writes each task as `key = term`, one per line.
pub(crate) fn write_graph(out: &mut impl Write, graph: &TaskGraph) -> std::io::Result<()> {
    let width = graph
        .keys()
        .map(|key| key.python_str().len())
        .max()
        .unwrap_or(0);
    for (key, task) in graph.iter() {
        let key = key.python_str();
        match &task.body {
            Body::Term(term) => writeln!(out, "  {key:<width$} = {term}")?,
            Body::Opaque(deps) => {
                let deps: Vec<String> = deps.iter().map(|dep| dep.python_str()).collect();
                writeln!(out, "  {key:<width$} = <opaque>({})", deps.join(", "))?;
            }
        }
    }
    Ok(())
}

/// Draws the graph coloured by its order into `demo.svg`, or `demo.dot` when
/// Graphviz is not installed.
fn write_picture(
    out: &mut impl Write,
    graph: &TaskGraph,
    priorities: Vec<u32>,
) -> anyhow::Result<()> {
    let dot = crate::viz::to_dot(graph, &crate::viz::Colours::Order(priorities))?;
    let svg = std::path::Path::new("demo.svg");
    match crate::viz::write(&dot, svg) {
        Ok(()) => writeln!(
            out,
            "The graph, coloured by its order (dark red first), is in demo.svg."
        )?,
        Err(err) => {
            crate::viz::write(&dot, std::path::Path::new("demo.dot"))?;
            writeln!(
                out,
                "The graph, coloured by its order, is in demo.dot ({err:#})."
            )?;
        }
    }
    Ok(())
}

/// Writes what a pass changed: each task that is new or has a new body as
/// `key = term`, then the keys it removed on one line.
pub(crate) fn write_changes(
    out: &mut impl Write,
    before: &TaskGraph,
    after: &TaskGraph,
) -> std::io::Result<()> {
    let changed: Vec<(&Key, &graph_core::Task)> = after
        .iter()
        .filter(|(key, task)| before.get(key) != Some(*task))
        .collect();
    let width = changed
        .iter()
        .map(|(key, _)| key.python_str().len())
        .max()
        .unwrap_or(0);
    for (key, task) in changed {
        let key = key.python_str();
        match &task.body {
            Body::Term(term) => writeln!(out, "  {key:<width$} = {term}")?,
            Body::Opaque(_) => writeln!(out, "  {key:<width$} = <opaque>")?,
        }
    }
    let removed: Vec<String> = before
        .keys()
        .filter(|key| after.get(key).is_none())
        .map(Key::python_str)
        .collect();
    if !removed.is_empty() {
        writeln!(out, "  (removed: {})", removed.join(", "))?;
    }
    Ok(())
}
