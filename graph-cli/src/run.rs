//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]`, on this
//! machine's cores or, with `--processes N` or `--hostfile F --process I`,
//! across processes (see `distributed`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use graph_core::{Key, TaskGraph};
use graph_exec::{Callbacks, Dynamic, LocalExecutor, OpRegistry, Output, Request, Run, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// Arguments of `taskgraph run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The keys to compute, as a JSON array (default: the graph's leaves).
    #[arg(long)]
    keys: Option<String>,
    /// Worker threads (default: one per core; with processes, one per
    /// process).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print one JSON object: results, tasks run, peak held, seconds (and,
    /// across processes, the workers, cut edges and transfers).
    #[arg(long)]
    json: bool,
    /// Start N worker processes on this machine and run across them.
    #[arg(long, value_name = "N", conflicts_with_all = ["hostfile", "process"])]
    processes: Option<usize>,
    /// Join a run across hosts: one `host:port` per process, the same file
    /// on every host.
    #[arg(long, value_name = "FILE", requires = "process")]
    hostfile: Option<PathBuf>,
    /// This process's index in the hostfile; process 0 prints the results.
    #[arg(long, value_name = "I", requires = "hostfile")]
    process: Option<usize>,
    /// Across processes, where each task runs: the output of `taskgraph
    /// assign --json` for processes x threads workers (default: that
    /// command's placement).
    #[arg(long, value_name = "FILE")]
    assignment: Option<PathBuf>,
    /// Across processes, how many seconds to wait for the others to connect.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    connect_timeout: f64,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    results: Vec<(&'a Key, &'a Dynamic)>,
    tasks_run: usize,
    peak_held: usize,
    seconds: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    across: Option<&'a Across>,
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

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    if args.processes.is_some() || args.hostfile.is_some() {
        if !(args.connect_timeout.is_finite() && args.connect_timeout > 0.0) {
            anyhow::bail!("--connect-timeout must be a positive number of seconds");
        }
        let options = crate::distributed::Options {
            file: &args.file,
            keys: args.keys.as_deref(),
            threads: args.threads.max(1),
            json: args.json,
            assignment: args.assignment.as_deref(),
            connect_timeout: Duration::from_secs_f64(args.connect_timeout),
        };
        return match (args.processes, &args.hostfile, args.process) {
            (Some(processes), _, _) => crate::distributed::supervise(&options, processes),
            (None, Some(hostfile), Some(process)) => {
                crate::distributed::join(&options, hostfile, process)
            }
            _ => unreachable!("clap requires --hostfile and --process together"),
        };
    }
    if args.assignment.is_some() {
        anyhow::bail!("--assignment places tasks across processes: add --processes N");
    }
    let graph = crate::busy::read_graph(&args.file)?;
    let keys = crate::keys::requested(&graph, args.keys.as_deref())?;
    let priorities = {
        let _busy = crate::busy::Busy::start("ordering");
        priorities_for(&graph)?
    };
    let started = Instant::now();
    let run = execute(&graph, &keys, args.threads, priorities)?;
    let seconds = started.elapsed().as_secs_f64();
    let values: Vec<&Dynamic> = run
        .output
        .items()
        .unwrap_or_default()
        .iter()
        .filter_map(Output::value)
        .collect();
    report(
        args.json,
        &keys,
        &values,
        run.stats.tasks_run,
        run.stats.peak_held,
        seconds,
        None,
    )
}

/// Prints a run's results, one `key = value` line each and a summary, or one
/// JSON object.
pub(crate) fn report(
    json: bool,
    keys: &[Key],
    values: &[&Dynamic],
    tasks_run: usize,
    peak_held: usize,
    seconds: f64,
    across: Option<&Across>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let report = JsonReport {
            results: keys.iter().zip(values.iter().copied()).collect(),
            tasks_run,
            peak_held,
            seconds,
            across,
        };
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    for (key, value) in keys.iter().zip(values) {
        writeln!(out, "{key} = {value}")?;
    }
    match across {
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

/// The priorities the run follows: `graph-order`'s default order, as dask's
/// local schedulers follow `dask.order`.
fn priorities_for(graph: &TaskGraph) -> anyhow::Result<Option<Vec<u32>>> {
    let order = graph_order::order_graph(graph, &graph_order::OrderConfig::default())?;
    Ok(Some(order.into_priorities()))
}

/// Runs `keys` on `threads` threads (0: all cores) with the built-in ops,
/// showing a progress bar on a terminal once the run takes over a second.
pub(crate) fn execute(
    graph: &TaskGraph,
    keys: &[Key],
    threads: usize,
    priorities: Option<Vec<u32>>,
) -> anyhow::Result<Run<Dynamic>> {
    let request = Request::list(keys.iter().cloned());
    let progress = Progress::default();
    let options = RunOptions {
        priorities: priorities.as_deref(),
        callbacks: Some(&progress),
        ..RunOptions::default()
    };
    let run = LocalExecutor::with_threads(threads).run(
        graph,
        &OpRegistry::builtins(),
        &request,
        &options,
    );
    if let Some(bar) = progress.bar.get() {
        bar.finish_and_clear();
    }
    Ok(run?)
}

/// A progress bar on standard error that appears once a run has taken a
/// second, and only on a terminal.
#[derive(Default)]
struct Progress {
    total: AtomicU64,
    done: AtomicU64,
    started: OnceLock<Instant>,
    bar: OnceLock<ProgressBar>,
}

impl Callbacks for Progress {
    fn start(&self, tasks: usize) {
        self.total.store(tasks as u64, Ordering::Relaxed);
        let _ = self.started.set(Instant::now());
    }

    fn posttask(&self, _key: &Key) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        // Looking at the clock costs more than counting: every 4096 tasks.
        if done % 4096 != 0 {
            return;
        }
        if let Some(bar) = self.bar.get() {
            bar.set_position(done);
        } else if self
            .started
            .get()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(1))
            && std::io::stderr().is_terminal()
        {
            let bar = ProgressBar::new(self.total.load(Ordering::Relaxed));
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} tasks, {per_sec}, eta {eta}")
                    .expect("the template is valid"),
            );
            bar.set_position(done);
            let _ = self.bar.set(bar);
        }
    }
}
