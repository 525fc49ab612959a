//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]` on this
//! machine's cores or, with `--processes N` (see `supervise`) or `--hostfile
//! F --process I` (see `across`), across processes.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use graph_core::{Key, TaskGraph};
use graph_exec::{
    CancelHandle, Dynamic, LocalExecutor, OpRegistry, Output, Request, Run, RunOptions,
};
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
    /// Worker threads, at most 256 (default: one per core; with processes,
    /// one per process).
    #[arg(long, default_value_t = 0, value_parser = parse_threads)]
    pub(crate) threads: usize,
    /// Print one JSON object: results, tasks run, peak held, seconds (and,
    /// across processes, the workers, cut edges and transfers).
    #[arg(long)]
    pub(crate) json: bool,
    /// Start N worker processes on this machine (1 to 256) and run across
    /// them; they prove to each other that they know a fresh random secret.
    #[arg(long, value_name = "N", conflicts_with_all = ["hostfile", "process"], value_parser = parse_processes)]
    pub(crate) processes: Option<usize>,
    /// Join a run across hosts: one `host:port` per process, the same file
    /// on every host. The processes must share a secret (TASKGRAPH_SECRET
    /// or --secret-file).
    #[arg(long, value_name = "FILE", requires = "process")]
    pub(crate) hostfile: Option<PathBuf>,
    /// This process's index in the hostfile; process 0 prints the results.
    #[arg(long, value_name = "I", requires = "hostfile", value_parser = parse_process)]
    pub(crate) process: Option<usize>,
    /// Read the run's shared secret from FILE rather than from the
    /// TASKGRAPH_SECRET environment variable (whitespace around it removed
    /// from either); at least 16 bytes, the same on every process. FILE
    /// holds at most 64 KiB, and other users should not be able to read it
    /// (a warning says so).
    #[arg(
        long,
        value_name = "FILE",
        requires = "hostfile",
        conflicts_with = "processes"
    )]
    pub(crate) secret_file: Option<PathBuf>,
    /// Run across hosts without a secret: anyone who can reach the ports can
    /// join the run. Only on a trusted network.
    #[arg(long, requires = "hostfile", conflicts_with_all = ["secret_file", "processes"])]
    pub(crate) insecure: bool,
    /// Across processes, where each task runs: the output of `taskgraph
    /// assign --json` for processes x threads workers (default: that
    /// command's placement).
    #[arg(long, value_name = "FILE")]
    pub(crate) assignment: Option<PathBuf>,
    /// Across processes, how many seconds to wait for the others to connect
    /// (more than 0, at most a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = parse_seconds)]
    pub(crate) connect_timeout: f64,
    /// Across processes, how many seconds another process may stay silent
    /// (frozen, or cut off) before the run stops (more than 0, at most a
    /// day).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = parse_seconds)]
    pub(crate) heartbeat_timeout: f64,
    /// Started by `--processes`: end when standard input closes (the
    /// supervisor has died).
    #[arg(long, hide = true)]
    pub(crate) supervised: bool,
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
    let not_a_size = || {
        format!("{text:?} is not a size: write bytes, or a number with KB, MB, GB, KiB, MiB, GiB")
    };
    // Exactly, in integers: a float would round 2^64 - 2 and let 1.5 bytes
    // pass as 1.
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') || fraction.len() > 18 {
        return Err(not_a_size());
    }
    let digits = |part: &str| -> Result<u128, String> {
        if part.is_empty() {
            Ok(0)
        } else {
            part.parse::<u128>().map_err(|_| not_a_size())
        }
    };
    let scale = 10_u128.pow(fraction.len() as u32);
    let bytes = digits(whole)?
        .checked_mul(u128::from(factor))
        .zip(digits(fraction)?.checked_mul(u128::from(factor)))
        .and_then(|(whole, fraction)| {
            (fraction % scale == 0).then(|| whole.checked_add(fraction / scale))?
        });
    let Some(bytes) = bytes else {
        return Err(format!(
            "{text:?}: a size must be a whole number of bytes, below 2^64"
        ));
    };
    match u64::try_from(bytes) {
        Ok(bytes) if bytes >= 1 => Ok(bytes),
        _ => Err(format!(
            "{text:?}: a size must be at least 1 byte and below 2^64"
        )),
    }
}

/// The most processes a run may have, and worker threads per process.
pub(crate) const MAX_PROCESSES: usize = graph_distributed::MAX_PROCESSES;
pub(crate) const MAX_THREADS: usize = 256;

/// A number of seconds: finite, more than 0, at most a day.
fn parse_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| "give a number of seconds".to_string())?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err("give a number of seconds more than 0 and at most 86400 (a day)".to_string());
    }
    Ok(seconds)
}

fn parse_count(text: &str, low: usize, high: usize, what: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(format!("give {what} from {low} to {high}")),
    }
}

fn parse_threads(text: &str) -> Result<usize, String> {
    parse_count(
        text,
        0,
        MAX_THREADS,
        "a number of threads (0: one per core)",
    )
}

fn parse_processes(text: &str) -> Result<usize, String> {
    parse_count(text, 1, MAX_PROCESSES, "a number of processes")
}

fn parse_process(text: &str) -> Result<usize, String> {
    parse_count(text, 0, MAX_PROCESSES - 1, "a process index")
}

impl Args {
    /// How long to wait for the other processes of a run.
    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.connect_timeout)
    }

    /// How long another process may stay silent.
    pub(crate) fn heartbeat_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.heartbeat_timeout)
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
    // Ctrl-C (or SIGTERM) stops the run: the running tasks finish, spilled
    // results are deleted, and the process exits with status 130.
    let cancel = CancelHandle::new();
    {
        let cancel = cancel.clone();
        crate::supervise::on_signal(move || cancel.cancel());
    }
    let memory_limit = args
        .memory_limit
        .unwrap_or_else(graph_exec::default_memory_limit);
    let started = Instant::now();
    let run = execute(
        &graph,
        &keys,
        args.threads,
        &priorities,
        Some(memory_limit),
        Some(cancel.clone()),
    );
    if cancel.is_cancelled() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("interrupted");
        }
        std::process::exit(crate::supervise::INTERRUPTED);
    }
    let run = run?;
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
    // The order `taskgraph order` gives.
    let shape = graph_core::Shape::of(graph)?;
    let order = crate::order::order_shape(&shape, graph_order::Strategy::Auto)?;
    Ok(order.into_priorities())
}

/// Runs `keys` on `threads` threads (0: all cores) with the built-in ops,
/// within `memory_limit` bytes if given (and no value of the built-in ops
/// larger than that), until `cancel` says stop, showing a progress bar on a
/// terminal once the run takes over a second.
pub(crate) fn execute(
    graph: &TaskGraph,
    keys: &[Key],
    threads: usize,
    priorities: &[u32],
    memory_limit: Option<u64>,
    cancel: Option<CancelHandle>,
) -> anyhow::Result<Run<Dynamic>> {
    let request = Request::list(keys.iter().cloned());
    let progress = Progress::default();
    let options = RunOptions {
        priorities: Some(priorities),
        callbacks: Some(&progress),
        memory_limit,
        cancel,
        ..RunOptions::default()
    };
    let registry = match memory_limit {
        Some(limit) => OpRegistry::builtins_with_value_limit(limit),
        None => OpRegistry::builtins(),
    };
    let run = LocalExecutor::with_threads(threads).run(graph, &registry, &request, &options);
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
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size(".5kb"), Ok(500));
        // Exactly, to the last byte below 2^64.
        assert_eq!(parse_size("18446744073709551614"), Ok(u64::MAX - 1));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "0",
            "-1MB",
            "NaN",
            "inf",
            "12 parsecs",
            "1e400",
            "MB",
            ".",
            "1.2.3",
            "18446744073709551616",
            "20000000000GB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
        // No fraction of a byte.
        for fraction in ["1.5", "0.5b", "1.0001KB", "0.3KiB"] {
            let err = parse_size(fraction).unwrap_err();
            assert!(err.contains("whole number of bytes"), "{fraction}: {err}");
        }
    }

    #[test]
    fn seconds_are_finite_positive_and_at_most_a_day() {
        assert_eq!(super::parse_seconds("0.5"), Ok(0.5));
        assert_eq!(super::parse_seconds("86400"), Ok(86_400.0));
        for bad in [
            "", "0", "-1", "NaN", "inf", "-inf", "1e300", "1e19", "86401", "x",
        ] {
            assert!(super::parse_seconds(bad).is_err(), "{bad:?}");
        }
    }
}
