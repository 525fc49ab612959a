//! `taskgraph assign FILE --workers K [--strategy time|cut|mars] [--json]`:
//! place a graph on workers and report the network cost and the balance.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use graph_assign::{
    Assignment, ListConfig, Metrics, Workers, assign, assign_list, assign_mars, costs_of, sizes_of,
};
use graph_core::{Key, NodeId, TaskGraph};
use serde::{Deserialize, Serialize};

/// Arguments of `taskgraph assign`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The number of workers to place the tasks on.
    #[arg(long, value_name = "K", value_parser = crate::flags::workers)]
    workers: usize,
    /// `time` (the placement of `run --processes`): every worker kept busy
    /// over the run by list scheduling, with a price on each cut edge;
    /// `cut` (or `auto`): the partitioner, fewest edges cut with loads within
    /// 3% (near METIS'); `mars`: Mars' initial assignment, for comparison.
    #[arg(long, value_enum, default_value_t = Placer::Time)]
    strategy: Placer,
    /// Print one JSON object, with the worker of every task, instead of a
    /// table.
    #[arg(long)]
    json: bool,
}

/// How to place the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Placer {
    /// `graph_assign::assign_list`, with sizes and costs from the file: the
    /// placement of a run across processes.
    Time,
    /// `graph_assign::assign`, with sizes and costs from the file.
    #[value(alias = "auto")]
    Cut,
    /// `graph_assign::assign_mars`.
    Mars,
}

/// What `taskgraph assign --json` prints, and what `taskgraph run
/// --assignment` reads back: `{"workers": K, "edge_cut": N,
/// "transfer_bytes": N, "imbalance": F, "assignment": [[KEY, WORKER], ...]}`.
/// A file written by hand may leave out the metrics.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct AssignReport {
    pub(crate) workers: usize,
    #[serde(default)]
    pub(crate) edge_cut: u64,
    #[serde(default)]
    pub(crate) transfer_bytes: u64,
    #[serde(default)]
    pub(crate) imbalance: f64,
    pub(crate) assignment: Vec<(Key, u32)>,
}

impl AssignReport {
    fn new(graph: &TaskGraph, assignment: &Assignment, metrics: &Metrics) -> AssignReport {
        AssignReport {
            workers: assignment.worker_count(),
            edge_cut: metrics.edge_cut,
            transfer_bytes: metrics.transfer_bytes,
            imbalance: metrics.imbalance,
            assignment: graph
                .keys()
                .cloned()
                .zip(assignment.as_slice().iter().copied())
                .collect(),
        }
    }

    /// Reads the report `taskgraph assign --json` wrote to `path`: the worker
    /// of every task of `graph`, for a run on `workers` workers.
    pub(crate) fn read_placement(
        path: &Path,
        graph: &TaskGraph,
        workers: usize,
    ) -> anyhow::Result<Vec<u32>> {
        let context = || format!("--assignment {}", path.display());
        let text = std::fs::read_to_string(path).with_context(context)?;
        let report: AssignReport = serde_json::from_str(&text).with_context(|| {
            format!(
                "{}: expected the JSON of `taskgraph assign --json`",
                context()
            )
        })?;
        if report.workers != workers {
            bail!(
                "{}: it places tasks on {} workers, but the run has {workers} (processes x threads)",
                context(),
                report.workers
            );
        }
        let mut placement: Vec<Option<u32>> = vec![None; graph.len()];
        for (key, worker) in report.assignment {
            let node = graph
                .node_id(&key)
                .with_context(|| format!("{}: task {key} is not in the graph", context()))?;
            if worker as usize >= workers {
                bail!(
                    "{}: task {key} is on worker {worker}, but there are {workers}",
                    context()
                );
            }
            placement[node.index()] = Some(worker);
        }
        placement
            .iter()
            .enumerate()
            .map(|(i, w)| {
                w.with_context(|| {
                    format!(
                        "{}: task {} has no worker",
                        context(),
                        graph.key(NodeId::new(i))
                    )
                })
            })
            .collect()
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::graph_file::read(&args.file)?;
    let workers = Workers::new(args.workers)?;
    let (assignment, metrics, elapsed) = {
        let _busy = crate::busy::Busy::start("placing");
        place(&graph, &workers, args.strategy)?
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    if args.json {
        let report = AssignReport::new(&graph, &assignment, &metrics);
        crate::json_out::write_spaced(&mut out, &report, 3)?;
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

/// Places `graph` with `placer`, timing the placement alone, and measures it
/// with the sizes and costs of the graph's metadata.
pub(crate) fn place(
    graph: &TaskGraph,
    workers: &Workers,
    placer: Placer,
) -> anyhow::Result<(Assignment, Metrics, Duration)> {
    let dag = graph.topology()?;
    let sizes = sizes_of(graph);
    let costs = costs_of(graph);
    let start = Instant::now();
    let assignment = match placer {
        Placer::Time => {
            let config = ListConfig {
                sizes: Some(&sizes),
                costs: costs.as_deref(),
                ..ListConfig::default()
            };
            assign_list(dag, workers, &config)?
        }
        Placer::Cut => assign(dag, workers, Some(&sizes), costs.as_deref())?,
        Placer::Mars => assign_mars(dag, workers)?,
    };
    let elapsed = start.elapsed();
    let metrics = Metrics::of(dag, workers, &assignment, Some(&sizes), costs.as_deref())?;
    Ok((assignment, metrics, elapsed))
}

/// Writes the metrics as rows of a two-column table, with the time the
/// placement took when given.
pub(crate) fn write_metrics(
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
