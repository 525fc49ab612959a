//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]` on this
//! machine's cores (`local`) or, with `--processes N` (`supervise`, which
//! starts its workers with `spawn`, speaks to them by `protocol` and goes on
//! after losses by `policy`) or `--hostfile F --process I` (`across`),
//! across processes.

mod across;
mod args;
mod local;
mod policy;
mod protocol;
mod report;
mod spawn;
mod supervise;

pub(crate) use self::across::SECRET_VARIABLE;
pub(crate) use self::args::Args;
pub(crate) use self::local::execute;
pub(crate) use self::spawn::{free_loopback_addresses, fresh_secret};

/// Runs as the arguments say: here, as the supervisor of worker processes,
/// or as one process of a run across hosts.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    if args.processes.is_none() {
        room_for_threads(args.threads)?;
    }
    match (args.processes, &args.hostfile, args.process) {
        (Some(processes), _, _) => supervise::run(args, processes),
        (None, Some(hostfile), Some(process)) => across::run(args, hostfile, process),
        _ => local::run(args),
    }
}

/// Under an address-space limit (`ulimit -v`), an error unless the run's
/// `threads` (0: one per core) fit in it: each reserves address space
/// before it holds anything, and one that finds none would abort the
/// process.
fn room_for_threads(threads: usize) -> anyhow::Result<()> {
    let Some(limit) = graph_exec::memory::address_space_limit() else {
        return Ok(());
    };
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        threads => threads,
    };
    // The threads of the run, and this one.
    let needed = graph_exec::memory::address_space_needed(threads + 1);
    if needed > limit {
        anyhow::bail!(
            "the address-space limit (ulimit -v) of {limit} bytes is too small for a run on \
             {threads} threads, which needs about {needed} bytes before it holds a result \
             ({} MiB a thread): raise the limit, or give fewer --threads",
            graph_exec::memory::THREAD_RESERVE >> 20
        );
    }
    Ok(())
}
