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
    /// Hold at most SIZE bytes of results in memory (per process across
    /// processes): plain bytes or with a unit, KB, MB, GB (powers of 1000)
    /// or KiB, MiB, GiB (powers of 1024), e.g. 128MB. Tasks wait for room,
    /// and results the order needs latest go to a private temporary
    /// directory until they are read.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) memory_limit: Option<u64>,
}

/// A size in bytes: a number, and optionally a unit (KB, MB, GB, KiB, MiB,
/// GiB; any case; a space before it allowed).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}: write bytes, or KB, MB, GB, KiB, MiB, GiB"
            ));
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        format!("{text:?} is not a size: write bytes, or a number with KB, MB, GB, KiB, MiB, GiB")
    })?;
    let bytes = value * factor as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!(
            "{text:?}: a size must be at least 1 byte and below 2^64"
        ));
    }
    Ok(bytes as u64)
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
/// "seconds": S}`, across processes also `"processes"`, `"workers"`,
/// `"cut_edges"`, `"transfer_bytes"` and `"values_sent"`, and then
/// `"peak_bytes"` and `"spilled_bytes"`.
#[derive(Serialize)]
pub(crate) struct RunReport<'a> {
    pub(crate) results: Vec<(&'a Key, &'a Dynamic)>,
    pub(crate) tasks_run: usize,
    pub(crate) peak_held: usize,
    pub(crate) seconds: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) across: Option<Across>,
    /// The most bytes of intermediate results in memory at once (by a
    /// worker, across processes).
    pub(crate) peak_bytes: u64,
    /// The bytes of results written to disk under `--memory-limit`.
    pub(crate) spilled_bytes: u64,
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
        if self.spilled_bytes > 0 {
            writeln!(
                out,
                "{} bytes of results were spilled to disk to stay within the memory limit",
                self.spilled_bytes
            )?;
        }
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
    let run = execute(&graph, &keys, args.threads, &priorities, args.memory_limit)?;
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
        peak_bytes: run.stats.peak_bytes,
        spilled_bytes: run.stats.spilled_bytes,
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
/// within `memory_limit` bytes if given, showing a progress bar on a
/// terminal once the run takes over a second.
pub(crate) fn execute(
    graph: &TaskGraph,
    keys: &[Key],
    threads: usize,
    priorities: &[u32],
    memory_limit: Option<u64>,
) -> anyhow::Result<Run<Dynamic>> {
    let request = Request::list(keys.iter().cloned());
    let progress = Progress::default();
    let options = RunOptions {
        priorities: Some(priorities),
        callbacks: Some(&progress),
        memory_limit,
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

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_in_bytes_and_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("128MB"), Ok(128_000_000));
        assert_eq!(parse_size("128 MiB"), Ok(128 << 20));
        assert_eq!(parse_size("1.5gb"), Ok(1_500_000_000));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        for bad in ["", "0", "-1MB", "NaN", "inf", "12 parsecs", "1e400", "MB"] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
    }
}
