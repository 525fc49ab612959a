//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]` on this
//! machine's cores or, with `--processes N` (see `supervise`) or `--hostfile
//! F --process I` (see `across`), across processes.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use graph_core::{Key, TaskGraph};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Output, Request, Run, RunOptions};
use serde::Serialize;

use crate::progress::Progress;

/// Arguments of `taskgraph run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    pub(crate) file: PathBuf,
    /// The keys to compute, as a JSON array (default: the graph's leaves).
    #[arg(long)]
    pub(crate) keys: Option<String>,
    /// Worker threads (default: one per core; with processes, one per
    /// process).
    #[arg(long, default_value_t = 0)]
    pub(crate) threads: usize,
    /// Print one JSON object: results, tasks run, peak held, seconds (and,
    /// across processes, the workers, cut edges and transfers).
    #[arg(long)]
    pub(crate) json: bool,
    /// Start N worker processes on this machine and run across them.
    #[arg(long, value_name = "N", conflicts_with_all = ["hostfile", "process"])]
    pub(crate) processes: Option<usize>,
    /// Join a run across hosts: one `host:port` per process, the same file
    /// on every host.
    #[arg(long, value_name = "FILE", requires = "process")]
    pub(crate) hostfile: Option<PathBuf>,
    /// This process's index in the hostfile; process 0 prints the results.
    #[arg(long, value_name = "I", requires = "hostfile")]
    pub(crate) process: Option<usize>,
    /// Across processes, where each task runs: the output of `taskgraph
    /// assign --json` for processes x threads workers (default: that
    /// command's placement).
    #[arg(long, value_name = "FILE")]
    pub(crate) assignment: Option<PathBuf>,
    /// Across processes, how many seconds to wait for the others to connect.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) connect_timeout: f64,
}

impl Args {
    /// How long to wait for the other processes of a run.
    pub(crate) fn connect_timeout(&self) -> anyhow::Result<Duration> {
        if !(self.connect_timeout.is_finite() && self.connect_timeout > 0.0) {
            anyhow::bail!("--connect-timeout must be a positive number of seconds");
        }
        Ok(Duration::from_secs_f64(self.connect_timeout))
    }
}

/// `{"results": [[KEY, VALUE], ...], "tasks_run": N, "peak_held": N,
/// "seconds": S}`, and across processes also `"processes"`, `"workers"`,
/// `"cut_edges"`, `"transfer_bytes"` and `"values_sent"`.
#[derive(Serialize)]
pub(crate) struct RunReport<'a> {
    pub(crate) results: Vec<(&'a Key, &'a Dynamic)>,
    pub(crate) tasks_run: usize,
    pub(crate) peak_held: usize,
    pub(crate) seconds: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) across: Option<Across>,
}

/// What a run across processes adds to the report.
#[derive(Serialize)]
pub(crate) struct Across {
    pub(crate) processes: usize,
    pub(crate) workers: usize,
    pub(crate) cut_edges: usize,
    pub(crate) transfer_bytes: u64,
    pub(crate) values_sent: usize,
}

impl RunReport<'_> {
    /// Prints the report: one `key = value` line per result and a summary,
    /// or the JSON object.
    pub(crate) fn print(&self, json: bool) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if json {
            return crate::json_out::write_compact(&mut out, self);
        }
        for (key, value) in &self.results {
            writeln!(out, "{key} = {value}")?;
        }
        let (tasks_run, peak_held, seconds) = (self.tasks_run, self.peak_held, self.seconds);
        match &self.across {
            None => writeln!(
                out,
                "{tasks_run} tasks run, at most {peak_held} intermediate results held, {seconds:.3} s"
            )?,
            Some(across) => writeln!(
                out,
                "{tasks_run} tasks run on {} workers in {} processes, at most {peak_held} \
                 intermediate results held by a worker, {} cut edges ({} transfer bytes), \
                 {} results sent, {seconds:.3} s",
                across.workers,
                across.processes,
                across.cut_edges,
                across.transfer_bytes,
                across.values_sent
            )?,
        }
        Ok(())
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    match (args.processes, &args.hostfile, args.process) {
        (Some(processes), _, _) => return crate::supervise::run(args, processes),
        (None, Some(hostfile), Some(process)) => {
            return crate::across::run(args, hostfile, process);
        }
        _ => {}
    }
    if args.assignment.is_some() {
        anyhow::bail!("--assignment places tasks across processes: add --processes N");
    }
    let graph = crate::graph_file::read(&args.file)?;
    let keys = crate::keys::requested(&graph, args.keys.as_deref())?;
    let priorities = {
        let _busy = crate::busy::Busy::start("ordering");
        priorities_for(&graph)?
    };
    let started = Instant::now();
    let run = execute(&graph, &keys, args.threads, &priorities)?;
    let seconds = started.elapsed().as_secs_f64();
    let values = run
        .output
        .items()
        .unwrap_or_default()
        .iter()
        .filter_map(Output::value);
    RunReport {
        results: keys.iter().zip(values).collect(),
        tasks_run: run.stats.tasks_run,
        peak_held: run.stats.peak_held,
        seconds,
        across: None,
    }
    .print(args.json)
}

/// The priorities a run follows: `graph-order`'s default order, as dask's
/// local schedulers follow `dask.order`.
pub(crate) fn priorities_for(graph: &TaskGraph) -> anyhow::Result<Vec<u32>> {
    let order = graph_order::order_graph(graph, &graph_order::OrderConfig::default())?;
    Ok(order.into_priorities())
}

/// Runs `keys` on `threads` threads (0: all cores) with the built-in ops,
/// showing a progress bar on a terminal once the run takes over a second.
pub(crate) fn execute(
    graph: &TaskGraph,
    keys: &[Key],
    threads: usize,
    priorities: &[u32],
) -> anyhow::Result<Run<Dynamic>> {
    let request = Request::list(keys.iter().cloned());
    let progress = Progress::default();
    let options = RunOptions {
        priorities: Some(priorities),
        callbacks: Some(&progress),
        ..RunOptions::default()
    };
    let run = LocalExecutor::with_threads(threads).run(
        graph,
        &OpRegistry::builtins(),
        &request,
        &options,
    );
    progress.finish();
    Ok(run?)
}
