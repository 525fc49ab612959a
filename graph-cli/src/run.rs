//! `taskgraph run FILE [--keys JSON] [--threads N] [--json]` on this
//! machine's cores (`local`) or, with `--processes N` (`supervise`) or
//! `--hostfile F --process I` (`across`), across processes.

mod across;
mod args;
mod local;
mod recovery;
mod report;
mod supervise;

pub(crate) use self::across::SECRET_VARIABLE;
pub(crate) use self::args::Args;
pub(crate) use self::local::execute;
pub(crate) use self::supervise::{free_loopback_addresses, fresh_secret};

/// Runs as the arguments say: here, as the supervisor of worker processes,
/// or as one process of a run across hosts.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    match (args.processes, &args.hostfile, args.process) {
        (Some(processes), _, _) => supervise::run(args, processes),
        (None, Some(hostfile), Some(process)) => across::run(args, hostfile, process),
        _ => local::run(args),
    }
}
