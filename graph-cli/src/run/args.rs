//! The arguments of `taskgraph run`.

use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `taskgraph run`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("recovering").args(["processes", "allow_shrink"]).multiple(true)))]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    pub(crate) file: PathBuf,
    /// The keys to compute, as a JSON array (default: the graph's leaves).
    #[arg(long)]
    pub(crate) keys: Option<String>,
    /// Worker threads, at most 256 (default: one per core; with processes,
    /// one per process).
    #[arg(long, default_value_t = 0, value_parser = crate::flags::threads)]
    pub(crate) threads: usize,
    /// Print one JSON object: results, tasks run, peak held, seconds (and,
    /// across processes, the workers, cut edges and transfers).
    #[arg(long)]
    pub(crate) json: bool,
    /// Start N worker processes on this machine (1 to 256) and run across
    /// them; they prove to each other that they know a fresh random secret.
    #[arg(long, value_name = "N", conflicts_with_all = ["hostfile", "process"], value_parser = crate::flags::processes)]
    pub(crate) processes: Option<usize>,
    /// Join a run across hosts: one `host:port` per process, the same file
    /// on every host. The processes must share a secret (TASKGRAPH_SECRET
    /// or --secret-file).
    #[arg(long, value_name = "FILE", requires = "process")]
    pub(crate) hostfile: Option<PathBuf>,
    /// This process's index in the hostfile; process 0 prints the results.
    #[arg(long, value_name = "I", requires = "hostfile", value_parser = crate::flags::process)]
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
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = crate::flags::seconds)]
    pub(crate) connect_timeout: f64,
    /// Across processes, how many seconds another process may stay silent
    /// (frozen, or cut off) before the run stops (more than 0, at most a
    /// day).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = crate::flags::seconds)]
    pub(crate) heartbeat_timeout: f64,
    /// With `--processes` (or `--allow-shrink`), how many processes the run
    /// may lose and go on (killed, crashed, or silent past the heartbeat
    /// timeout): the survivors keep the results they hold, the lost ones
    /// are computed again as far back as needed, and the results are those
    /// of a run without the fault. 0 stops at the first loss.
    #[arg(long, value_name = "R", default_value_t = 2, requires = "recovering",
          value_parser = crate::flags::retries)]
    pub(crate) retries: usize,
    /// With `--hostfile`, go on without a lost process (killed, crashed,
    /// its host gone, or silent past the heartbeat timeout), as
    /// `--processes` does: the survivors regroup, the lowest-numbered of
    /// them gathering the others, and go on when they are a majority of
    /// the processes (or half, with process 0); the lowest-numbered
    /// survivor prints the results. Give it to every process of the run.
    #[arg(long, requires = "hostfile", conflicts_with = "processes")]
    pub(crate) allow_shrink: bool,
    /// Started by `--processes`: end when standard input closes (the
    /// supervisor has died).
    #[arg(long, hide = true)]
    pub(crate) supervised: bool,
    /// Hold at most SIZE bytes of results in memory (per process across
    /// processes): plain bytes or with a unit, KB, MB, GB (powers of 1000)
    /// or KiB, MiB, GiB (powers of 1024), e.g. 128MB. Tasks wait for room,
    /// and results the order needs latest go to a private temporary
    /// directory until they are read.
    #[arg(long, value_name = "SIZE", value_parser = crate::flags::size)]
    pub(crate) memory_limit: Option<u64>,
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
