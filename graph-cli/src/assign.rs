//! `taskgraph assign FILE --workers K [--strategy auto|time|cut|mars] [--json]`:
//! place a graph on workers and report the network cost, the balance and the
//! simulated wall time.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use graph_assign::{
    Assignment, AutoRule, Chosen, DEFAULT_BANDWIDTH, ListConfig, Metrics, Workers, assign,
    assign_auto, assign_list, assign_mars, makespan, makespan_bound, sizes_of,
};
use graph_core::{Key, NodeId, TaskGraph, Term};
use serde::{Deserialize, Serialize};

/// Arguments of `taskgraph assign`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The number of workers to place the tasks on.
    #[arg(long, value_name = "K", value_parser = crate::flags::workers)]
    workers: usize,
    /// `auto` (the placement of `run --processes`): the partitioner's, unless
    /// the list schedule is estimated to finish 1.25 times and 10 ms sooner;
    /// `cut`: the
    /// partitioner, fewest edges cut with loads within 3% (near METIS');
    /// `time`: every worker kept busy over the run by list scheduling, with a
    /// price on each cut edge; `mars`: Mars' initial assignment, for
    /// comparison.
    #[arg(long, value_enum, default_value_t = Placer::Auto)]
    strategy: Placer,
    /// Print one JSON object, with the worker of every task, instead of a
    /// table.
    #[arg(long)]
    json: bool,
}

/// How to place the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Placer {
    /// `graph_assign::assign_auto` under the estimated cost model: the
    /// placement of a run across processes.
    Auto,
    /// `graph_assign::assign_list` under the estimated cost model.
    Time,
    /// `graph_assign::assign`, with the sizes and estimated costs.
    Cut,
    /// `graph_assign::assign_mars`.
    Mars,
}

/// What `taskgraph assign --json` prints, and what `taskgraph run
/// --assignment` reads back: `{"workers": K, "edge_cut": N,
/// "transfer_bytes": N, "imbalance": F, "makespan": S, "makespan_bound": S,
/// "assignment": [[KEY, WORKER], ...]}`, with the simulated wall time and
/// its bound in estimated seconds (see [`Estimate`]). A file written by hand
/// may leave out the metrics.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct AssignReport {
    pub(crate) workers: usize,
    #[serde(default)]
    pub(crate) edge_cut: u64,
    #[serde(default)]
    pub(crate) transfer_bytes: u64,
    #[serde(default)]
    pub(crate) imbalance: f64,
    #[serde(default)]
    pub(crate) makespan: f64,
    #[serde(default)]
    pub(crate) makespan_bound: f64,
    pub(crate) assignment: Vec<(Key, u32)>,
}

impl AssignReport {
    fn new(graph: &TaskGraph, placed: &Placed) -> AssignReport {
        let Placed {
            assignment,
            metrics,
            ..
        } = placed;
        AssignReport {
            workers: assignment.worker_count(),
            edge_cut: metrics.edge_cut,
            transfer_bytes: metrics.transfer_bytes,
            imbalance: metrics.imbalance,
            makespan: placed.makespan,
            makespan_bound: placed.makespan_bound,
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
    let placed = {
        let _busy = crate::busy::Busy::start("placing");
        place(&graph, &workers, args.strategy)?
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    if args.json {
        let report = AssignReport::new(&graph, &placed);
        crate::json_out::write_spaced(&mut out, &report, 3)?;
    } else {
        let strategy = match (args.strategy, placed.chosen) {
            (Placer::Auto, Some(Chosen::Cut)) => "auto (cut)".to_owned(),
            (Placer::Auto, Some(Chosen::Time)) => "auto (time)".to_owned(),
            (placer, _) => format!("{placer:?}").to_lowercase(),
        };
        write_table(
            &mut out,
            &[
                ("tasks", graph.len().to_string()),
                ("workers", workers.count().to_string()),
                ("strategy", strategy),
            ],
        )?;
        write_metrics(&mut out, &placed, Some(placed.elapsed))?;
    }
    out.flush()?;
    Ok(())
}

/// A placement and what was measured of it.
pub(crate) struct Placed {
    pub(crate) assignment: Assignment,
    pub(crate) metrics: Metrics,
    /// Which placement `auto` took; `None` for the other placers.
    pub(crate) chosen: Option<Chosen>,
    /// The simulated wall time under the estimated cost model, in seconds.
    pub(crate) makespan: f64,
    /// `max(work / workers, critical path)` under the same model.
    pub(crate) makespan_bound: f64,
    /// The time the placement alone took.
    pub(crate) elapsed: Duration,
}

/// The cost model every placement of the command line is made and measured
/// under, in seconds, estimated from the graph: each task takes its `cost`
/// where the file gives one, else [`Estimate::TASK_SECONDS`] plus the
/// seconds of every built-in `sleep` in it; a result read on another worker
/// arrives [`Estimate::TRANSFER_SECONDS`] after it is made (plus its `size`
/// over dask's default bandwidth) and costs the reader
/// [`Estimate::RECEIVE_SECONDS`] of work.
pub(crate) struct Estimate {
    sizes: Vec<u64>,
    costs: Vec<f64>,
}

impl Estimate {
    /// A task of the built-in ops without a `cost` (they take microseconds).
    pub(crate) const TASK_SECONDS: f64 = 1e-6;
    /// The latency of a result sent between worker processes.
    pub(crate) const TRANSFER_SECONDS: f64 = 1e-4;
    /// A worker's time to receive one result from another process: about
    /// what `run --processes` spends per cut edge on quick tasks.
    pub(crate) const RECEIVE_SECONDS: f64 = 5e-6;
    /// The least wall time `auto` trades edges for: less than worker
    /// processes take to start.
    pub(crate) const MIN_GAIN_SECONDS: f64 = 0.01;

    pub(crate) fn of(graph: &TaskGraph) -> Estimate {
        let costs = graph
            .iter()
            .map(|(_, task)| {
                task.cost
                    .unwrap_or_else(|| Self::TASK_SECONDS + task.body.term().map_or(0.0, sleeps))
            })
            .collect();
        Estimate {
            sizes: sizes_of(graph),
            costs,
        }
    }

    pub(crate) fn config(&self) -> ListConfig<'_> {
        ListConfig {
            sizes: Some(&self.sizes),
            costs: Some(&self.costs),
            transfer_seconds: Self::TRANSFER_SECONDS,
            bandwidth: DEFAULT_BANDWIDTH,
            receive_seconds: Self::RECEIVE_SECONDS,
        }
    }
}

/// The seconds of the built-in `sleep`s in `term` whose duration is a
/// literal number (as the op takes it: between 0 and 3600).
fn sleeps(term: &Term) -> f64 {
    match term {
        Term::Call { op, args } => {
            let own = match (op.as_str(), args.as_slice()) {
                ("sleep", [_, Term::Lit(seconds)]) => match seconds {
                    graph_core::Value::Int(s) => *s as f64,
                    graph_core::Value::Float(s) => *s,
                    _ => 0.0,
                },
                _ => 0.0,
            };
            own.clamp(0.0, 3600.0) + args.iter().map(sleeps).sum::<f64>()
        }
        Term::List(items) => items.iter().map(sleeps).sum(),
        Term::Lit(_) | Term::Ref(_) => 0.0,
    }
}

/// Places `graph` with `placer`, timing the placement alone, and measures it
/// with the sizes and estimated costs of the graph.
pub(crate) fn place(
    graph: &TaskGraph,
    workers: &Workers,
    placer: Placer,
) -> anyhow::Result<Placed> {
    let dag = graph.topology()?;
    let estimate = Estimate::of(graph);
    let config = estimate.config();
    let start = Instant::now();
    // `auto` simulated its placement already.
    let (assignment, chosen, simulated) = match placer {
        Placer::Auto => {
            let rule = AutoRule {
                min_gain: Estimate::MIN_GAIN_SECONDS,
                ..AutoRule::default()
            };
            let auto = assign_auto(dag, workers, &config, rule)?;
            let span = auto.makespan();
            (auto.assignment, Some(auto.chosen), Some(span))
        }
        Placer::Time => (assign_list(dag, workers, &config)?, None, None),
        Placer::Cut => (
            assign(dag, workers, config.sizes, config.costs)?,
            None,
            None,
        ),
        Placer::Mars => (assign_mars(dag, workers)?, None, None),
    };
    let elapsed = start.elapsed();
    let metrics = Metrics::of(dag, workers, &assignment, config.sizes, config.costs)?;
    Ok(Placed {
        makespan: match simulated {
            Some(span) => span,
            None => makespan(dag, workers, &assignment, &config)?,
        },
        makespan_bound: makespan_bound(dag, workers, config.costs)?,
        assignment,
        metrics,
        chosen,
        elapsed,
    })
}

/// Writes the metrics as rows of a two-column table, with the time the
/// placement took when given.
pub(crate) fn write_metrics(
    out: &mut impl Write,
    placed: &Placed,
    elapsed: Option<Duration>,
) -> std::io::Result<()> {
    let metrics = &placed.metrics;
    let mut rows = vec![
        ("edge cut", metrics.edge_cut.to_string()),
        ("transfer bytes", metrics.transfer_bytes.to_string()),
        ("imbalance", format!("{:.4}", metrics.imbalance)),
        ("makespan", seconds(placed.makespan)),
        ("bound", seconds(placed.makespan_bound)),
    ];
    if let Some(elapsed) = elapsed {
        rows.push(("time", format!("{:.3} ms", elapsed.as_secs_f64() * 1e3)));
    }
    write_table(out, &rows)
}

/// A simulated time, to three significant digits in a unit that suits it.
fn seconds(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.3} us", seconds * 1e6)
    }
}

fn write_table(out: &mut impl Write, rows: &[(&str, String)]) -> std::io::Result<()> {
    for (name, value) in rows {
        writeln!(out, "  {name:<16}{value:>12}")?;
    }
    Ok(())
}
