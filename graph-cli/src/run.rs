//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]`.

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
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print one JSON object: results, tasks run, peak held, seconds.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    results: Vec<(&'a Key, &'a Dynamic)>,
    tasks_run: usize,
    peak_held: usize,
    seconds: f64,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
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
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = JsonReport {
            results: keys.iter().zip(values).collect(),
            tasks_run: run.stats.tasks_run,
            peak_held: run.stats.peak_held,
            seconds,
        };
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        for (key, value) in keys.iter().zip(values) {
            writeln!(out, "{key} = {value}")?;
        }
        writeln!(
            out,
            "{} tasks run, at most {} intermediate results held, {:.3} s",
            run.stats.tasks_run, run.stats.peak_held, seconds
        )?;
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
