//! `taskgraph`: the toolkit's command line. Each subcommand lives in a module
//! of its own with its clap arguments, its call of the libraries and its
//! output; `supervise` and `across` run a graph across processes, and
//! `demo` tells the whole story.

mod assign;
mod busy;
mod demo;
mod exit;
mod flags;
mod generate;
mod graph_file;
mod json_out;
mod keys;
mod optimize;
mod order;
mod procfs;
mod progress;
mod rewrite;
mod run;
mod signals;
mod stages;
mod stats;
mod viz;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A graph of a million tasks is millions of small allocations; mimalloc
/// makes them faster and smaller than the system allocator does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Starts this program again in this process, once, with the allocators'
/// settings it needs; both allocators read them only as a process starts.
///
/// - mimalloc gives freed memory back to the system after 10 ms rather
///   than its default 1 s: a run that frees a 30 MB result and makes
///   another within the second would otherwise hold both, which put runs
///   across processes 100 MB over `--memory-limit` (`MIMALLOC_PURGE_DELAY`).
/// - Under an address-space limit (`ulimit -v`), mimalloc's arena would
///   take 1 GiB of address space at once, and glibc's malloc 64 MiB for each
///   thread that calls it, so that a limit of a few hundred megabytes would
///   leave nothing for results, or, below, for the program itself
///   (`MIMALLOC_ARENA_RESERVE`, `MALLOC_ARENA_MAX`).
///
/// A setting the user gave is kept, and a process started with every
/// setting in place (as worker processes are) is not started again. Where
/// the new start fails, this one goes on as it is.
fn configure_allocators() {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;

        let mut settings = vec![("MIMALLOC_PURGE_DELAY", "10")];
        if graph_exec::memory::address_space_limit().is_some() {
            settings.extend([
                ("MIMALLOC_ARENA_RESERVE", "16MiB"),
                ("MALLOC_ARENA_MAX", "1"),
            ]);
        }
        settings.retain(|(name, _)| std::env::var_os(name).is_none());
        if settings.is_empty() {
            return;
        }
        let mut args = std::env::args_os();
        let (Some(arg0), Ok(exe)) = (args.next(), std::env::current_exe()) else {
            return;
        };
        // Returns only if the program could not be started again.
        let _ = std::process::Command::new(exe)
            .arg0(arg0)
            .args(args)
            .envs(settings)
            .exec();
    }
}

/// Task graphs: inspect, simplify, rewrite, order, place and run them.
///
/// Graphs are read as taskgraph-json/1 (plain or gzip; `-` reads standard
/// input).
#[derive(Debug, Parser)]
#[command(name = "taskgraph", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Tasks, edges, roots, leaves, depth and the widest nodes of a graph.
    Stats(stats::Args),
    /// Simplify a graph: cull, inline, inline_functions, fuse_linear, fuse.
    Optimize(optimize::Args),
    /// Rewrite every task's term with rules from a JSON file.
    Rewrite(rewrite::Args),
    /// Stages as BNDL and Spark plan them: split at wide (all-to-all) dependencies, each
    /// partition's narrow work coalesced, and the barriers a shuffle would take.
    Stages(stages::Args),
    /// A static order that keeps few results in memory, with its max pressure.
    Order(order::Args),
    /// Place tasks on workers: edge cut, transfer bytes, load imbalance.
    Assign(assign::Args),
    /// Run a graph with the built-in ops on all cores, or across processes, and print the results.
    Run(run::Args),
    /// Draw a graph coloured by its order, its memory diagnostics or by worker, with a legend,
    /// or collapsed into its groups (Graphviz DOT, SVG, PNG, PDF, or an interactive HTML page).
    Viz(viz::Args),
    /// Write a seeded test graph (chains, trees, 2-D array shapes, shuffles).
    Generate(generate::Args),
    /// The toolkit's story on dask's word-count graph.
    Demo(demo::Args),
}

fn main() -> ExitCode {
    configure_allocators();
    let cli = Cli::parse();
    // `run` (and `demo`, which runs across processes) stop their runs on a
    // signal themselves; elsewhere an interrupt leaves no temporary file.
    if !matches!(cli.command, Command::Run(_) | Command::Demo(_)) {
        signals::on_signal(|| signals::exit_interrupted("interrupted"));
    }
    let result = match cli.command {
        Command::Stats(args) => stats::run(&args),
        Command::Assign(args) => assign::run(&args),
        Command::Optimize(args) => optimize::run(&args),
        Command::Order(args) => order::run(&args),
        Command::Rewrite(args) => rewrite::run(&args),
        Command::Stages(args) => stages::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Viz(args) => viz::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Generate(args) => generate::run(&args),
    };
    match result {
        Ok(()) => ExitCode::from(exit::SUCCESS),
        // A reader that stops early (`taskgraph demo | head`) is not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::from(exit::SUCCESS),
        Err(err) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {err:#}");
            }
            ExitCode::from(exit::FAILED)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(is_broken_pipe_cause)
}

/// Whether an error is a write to a closed pipe, however it is wrapped: an
/// I/O error itself, serde_json's, or graph-core's (which names the output).
fn is_broken_pipe_cause(cause: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    if let Some(io) = cause.downcast_ref::<std::io::Error>() {
        return io.kind() == BrokenPipe;
    }
    if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
        return json.io_error_kind() == Some(BrokenPipe);
    }
    match cause.downcast_ref::<graph_core::json::Error>() {
        Some(graph_core::json::Error::Io(io)) => io.kind() == BrokenPipe,
        Some(graph_core::json::Error::In { error, .. }) => is_broken_pipe_cause(error.as_ref()),
        _ => false,
    }
}
