//! `taskgraph assign FILE --workers K [--strategy auto|mars] [--json]`: place
//! a graph on workers and report the network cost and the balance.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use graph_assign::{Assignment, Metrics, Workers, assign, assign_mars, costs_of, sizes_of};
use graph_core::TaskGraph;

/// Arguments of `taskgraph assign`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The number of workers to place the tasks on.
    #[arg(long, value_name = "K")]
    workers: usize,
    /// `auto`: the partitioner (near METIS' cut, loads within 3%);
    /// `mars`: Mars' initial assignment, for comparison.
    #[arg(long, value_enum, default_value_t = Strategy::Auto)]
    strategy: Strategy,
    /// Print one JSON object, with the worker of every task, instead of a
    /// table.
    #[arg(long)]
    json: bool,
}

/// How to place the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Strategy {
    /// `graph_assign::assign`, with sizes and costs from the file.
    Auto,
    /// `graph_assign::assign_mars`.
    Mars,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::busy::read_graph(&args.file)?;
    let workers = Workers::new(args.workers)?;
    let (assignment, metrics, elapsed) = {
        let _busy = crate::busy::Busy::start("placing");
        place(&graph, &workers, args.strategy)?
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    if args.json {
        write_json(&mut out, &graph, &assignment, &metrics)?;
    } else {
        write_table(
            &mut out,
            &[
                ("tasks", graph.len().to_string()),
                ("workers", workers.count().to_string()),
                ("strategy", format!("{:?}", args.strategy).to_lowercase()),
            ],
        )?;
        write_metrics(&mut out, &metrics, Some(elapsed))?;
    }
    out.flush()?;
    Ok(())
}

/// Places `graph` with `strategy`, timing the placement alone, and measures
/// it with the sizes and costs of the graph's metadata.
pub(crate) fn place(
    graph: &TaskGraph,
    workers: &Workers,
    strategy: Strategy,
) -> anyhow::Result<(Assignment, Metrics, Duration)> {
    let dag = graph.topology()?;
    let sizes = sizes_of(graph);
    let costs = costs_of(graph);
    let start = Instant::now();
    let assignment = match strategy {
        Strategy::Auto => assign(dag, workers, Some(&sizes), costs.as_deref())?,
        Strategy::Mars => assign_mars(dag, workers),
    };
    let elapsed = start.elapsed();
    let metrics = Metrics::of(dag, workers, &assignment, Some(&sizes), costs.as_deref())?;
    Ok((assignment, metrics, elapsed))
}

/// `{"workers": K, "edge_cut": N, "transfer_bytes": N, "imbalance": F,
/// "assignment": [[KEY, WORKER], ...]}`, streamed so that a graph of a
/// million tasks needs no second copy in memory.
fn write_json(
    out: &mut impl Write,
    graph: &TaskGraph,
    assignment: &Assignment,
    metrics: &Metrics,
) -> anyhow::Result<()> {
    write!(
        out,
        "{{\"workers\": {}, \"edge_cut\": {}, \"transfer_bytes\": {}, \"imbalance\": ",
        assignment.worker_count(),
        metrics.edge_cut,
        metrics.transfer_bytes,
    )?;
    serde_json::to_writer(&mut *out, &metrics.imbalance)?;
    write!(out, ", \"assignment\": [")?;
    for (i, (key, &worker)) in graph.keys().zip(assignment.as_slice()).enumerate() {
        if i > 0 {
            write!(out, ", ")?;
        }
        write!(out, "[")?;
        serde_json::to_writer(&mut *out, key)?;
        write!(out, ", {worker}]")?;
    }
    writeln!(out, "]}}")?;
    Ok(())
}

/// Writes the metrics as rows of a two-column table, with the time the
/// placement took when given.
fn write_metrics(
    out: &mut impl Write,
    metrics: &Metrics,
    elapsed: Option<Duration>,
) -> std::io::Result<()> {
    let mut rows = vec![
        ("edge cut", metrics.edge_cut.to_string()),
        ("transfer bytes", metrics.transfer_bytes.to_string()),
        ("imbalance", format!("{:.4}", metrics.imbalance)),
    ];
    if let Some(elapsed) = elapsed {
        rows.push(("time", format!("{:.3} ms", elapsed.as_secs_f64() * 1e3)));
    }
    write_table(out, &rows)
}

fn write_table(out: &mut impl Write, rows: &[(&str, String)]) -> std::io::Result<()> {
    for (name, value) in rows {
        writeln!(out, "  {name:<16}{value:>12}")?;
    }
    Ok(())
}

/// The demo's placement step: places `graph` on `workers` workers with the
/// default strategy, writes each worker's tasks and the metrics, and
/// returns the worker of every task, by node.
pub(crate) fn demo_step(
    out: &mut impl Write,
    graph: &TaskGraph,
    workers: usize,
) -> anyhow::Result<Vec<u32>> {
    let workers = Workers::new(workers)?;
    let (assignment, metrics, _) = place(graph, &workers, Strategy::Auto)?;
    for worker in 0..workers.count() {
        let keys: Vec<String> = assignment
            .tasks_on(worker)
            .map(|node| graph.key(node).python_str())
            .collect();
        writeln!(out, "  worker {worker}: {}", keys.join(", "))?;
    }
    write_metrics(out, &metrics, None)?;
    Ok(assignment.into_vec())
}
