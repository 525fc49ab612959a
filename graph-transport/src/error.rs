//! The error type of `graph-transport`.

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can stop the processes of a run from reaching each
/// other, or keep them from staying in touch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A cluster description that cannot work.
    #[error("bad cluster: {problem}")]
    Cluster {
        /// What is wrong.
        problem: ClusterProblem,
    },
    /// A hostfile that cannot be read or parsed.
    #[error("hostfile {}{}: {problem}", path.display(), line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Hostfile {
        /// The file.
        path: PathBuf,
        /// The line at fault, if one is.
        line: Option<usize>,
        /// What is wrong.
        problem: HostfileProblem,
    },
    /// This process could not listen on its own address.
    #[error("process {process} cannot listen on {address}: {error}")]
    Listen {
        /// This process.
        process: usize,
        /// Its address.
        address: String,
        /// Why not. (Not a `source()`: the message already says it, and
        /// error chains would print it twice.)
        error: std::io::Error,
    },
    /// Another process did not connect in time.
    #[error(
        "process {process} ({address}) did not connect within {} s; is it running?{}",
        seconds(waited),
        strays(dropped, *dropped_count)
    )]
    ConnectTimeout {
        /// The process that did not connect.
        process: usize,
        /// Its address.
        address: String,
        /// How long this process waited.
        waited: Duration,
        /// The first few connections this process dropped meanwhile: from
        /// strangers, or from processes with another secret.
        dropped: Vec<Stray>,
        /// How many connections it dropped in all.
        dropped_count: usize,
    },
    /// A connection that is not another process of this run, or another
    /// process of the run that does not run the same job.
    #[error("handshake with {} failed: {problem}", who(*process, peer))]
    Handshake {
        /// Who connected, as far as known (an address).
        peer: String,
        /// The process index it has (dialled) or proved, if any.
        process: Option<usize>,
        /// What is wrong.
        problem: HandshakeProblem,
    },
    /// A cluster of several processes with neither a shared secret nor
    /// leave to run without one.
    #[error(
        "a run across processes needs a shared secret to keep strangers out \
         (Cluster::with_secret), or to be marked insecure (Cluster::insecure)"
    )]
    NoSecret,
    /// Another process stopped answering (it is frozen, or the network
    /// between the two is cut) before the run finished.
    #[error(
        "process {process} ({address}) has not answered for {} s (is it frozen, or is the network cut?); the run was stopped",
        seconds(waited)
    )]
    Silent {
        /// The silent process.
        process: usize,
        /// Its address.
        address: String,
        /// How long it had been silent.
        waited: Duration,
    },
    /// Another process went away (it died, or its connection closed)
    /// before the run finished.
    #[error("process {process} ({address}) went away before the run finished (did it die?)")]
    Lost {
        /// The process.
        process: usize,
        /// Its address.
        address: String,
    },
    /// Another process stopped with an error of its own (a task of its
    /// failed), which it reports itself: the run ends for every process.
    #[error("process {process} ({address}) stopped with an error of its own, which it reports")]
    PeerFailed {
        /// The process.
        process: usize,
        /// Its address.
        address: String,
    },
    /// After a loss, the processes still in touch are not a majority of
    /// the run's (nor half of them with its process 0): they may be one side
    /// of a cut network, and the other side may go on, so these stop.
    #[error(
        "after the loss of process{} {}, only process{} {} of {processes} are still in touch: not \
         a majority, so the run stops here (the others may go on)",
        if lost.len() == 1 { "" } else { "es" },
        ProcessList(lost),
        if survivors.len() == 1 { "" } else { "es" },
        ProcessList(survivors)
    )]
    NoMajority {
        /// The processes still in touch, by their numbers in the run that
        /// lost the others.
        survivors: Vec<usize>,
        /// The processes lost.
        lost: Vec<usize>,
        /// The processes of that run.
        processes: usize,
    },
    /// Another process was lost while the processes were still connecting
    /// ([`Cluster::with_lost_signal`](crate::Cluster::with_lost_signal)).
    #[error("another process was lost while the processes were connecting")]
    LostWhileConnecting,
    /// Regrouping after a loss failed: the process that gathered the
    /// survivors went away, or said something that cannot be read.
    #[error("regrouping after a loss: {problem}")]
    Regroup {
        /// What went wrong.
        problem: RegroupProblem,
    },
    /// What came on the data connection from another process could not
    /// have come from that process (garbage, or a frame header out of
    /// bounds): the connection was tampered with, or the peer is broken.
    #[error(
        "the data connection from process {process} ({address}) carried a malformed frame ({problem}); the run was stopped"
    )]
    Malformed {
        /// The process at the other end.
        process: usize,
        /// Its address.
        address: String,
        /// What was wrong.
        problem: FrameProblem,
    },
    /// The data connection from another process stopped in the middle of
    /// a frame for the heartbeat timeout while its heartbeats went on.
    #[error(
        "the data connection from process {process} ({address}) stalled in the middle of a frame for {} s; the run was stopped",
        seconds(waited)
    )]
    Stalled {
        /// The process at the other end.
        process: usize,
        /// Its address.
        address: String,
        /// How long nothing came.
        waited: Duration,
    },
    /// Connecting was cancelled ([`Cluster::with_cancel`](crate::Cluster::with_cancel)).
    #[error("the run was interrupted")]
    Interrupted,
    /// The communication layer could not start.
    #[error("timely dataflow could not start: {message}")]
    Timely {
        /// Its message.
        message: String,
    },
}

/// What went wrong regrouping after a loss (see [`regroup`](crate::regroup)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegroupProblem {
    /// The process that gathers the survivors went away.
    #[error("process {process} ({address}), which gathers the survivors, went away: {error}")]
    LeaderGone {
        /// Its number in the stopped attempt.
        process: usize,
        /// Its address.
        address: String,
        /// What its connection said.
        error: std::io::Error,
    },
    /// The process that gathers the survivors does not answer.
    #[error("process {process} ({address}) gathers the survivors, but does not answer")]
    LeaderSilent {
        /// Its number in the stopped attempt.
        process: usize,
        /// Its address.
        address: String,
    },
    /// The process that gathers the survivors sent what no survivor sends.
    #[error("process {process} ({address}), which gathers the survivors, sent {what}")]
    Unreadable {
        /// Its number in the stopped attempt.
        process: usize,
        /// Its address.
        address: String,
        /// What it sent.
        what: &'static str,
    },
    /// The survivors were gathered without this process.
    #[error("the survivors were gathered without this process")]
    LeftOut,
    /// A survivor's report cannot be read.
    #[error("the report of process {process} cannot be read")]
    Report {
        /// The survivor, by its number in the stopped attempt.
        process: usize,
    },
}

/// What was wrong with a frame on a data connection: what its sender could
/// not have sent. Worker ranges are `(first, end)`, the end excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameProblem {
    /// A frame announced more bytes than any frame may have.
    #[error(
        "a frame announces {length} bytes, more than the limit of {}",
        crate::MAX_FRAME
    )]
    TooLong {
        /// The bytes announced.
        length: u64,
    },
    /// A frame came from a worker that is not one of the sending process's.
    #[error(
        "a frame from worker {worker}, not one of that process's workers ({} to {})",
        workers.0,
        workers.1 - 1
    )]
    FromStranger {
        /// The worker the frame names.
        worker: u64,
        /// The sending process's workers.
        workers: (u64, u64),
    },
    /// A frame was for workers that are not all this process's.
    #[error(
        "a frame for workers {first} to {}, not this process's workers ({} to {})",
        end.wrapping_sub(1),
        workers.0,
        workers.1 - 1
    )]
    ForStrangers {
        /// The first worker the frame is for.
        first: u64,
        /// Past the last.
        end: u64,
        /// This process's workers.
        workers: (u64, u64),
    },
    /// A frame of no bytes that is not the one that ends the connection.
    #[error("a frame of no bytes that does not end the connection")]
    Empty,
    /// Bytes came after the frame that ends the connection.
    #[error("{bytes} bytes after the frame that ends the connection")]
    AfterTheEnd {
        /// How many.
        bytes: usize,
    },
}

/// What is wrong with a cluster description.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterProblem {
    /// No process address was given.
    #[error("no process addresses")]
    NoAddresses,
    /// This process's index is not one of the processes.
    #[error("process index {process} is out of range for {processes} processes")]
    ProcessOutOfRange {
        /// The index given.
        process: usize,
        /// How many processes there are.
        processes: usize,
    },
    /// A process was given no worker thread.
    #[error("a process needs at least one thread")]
    NoThreads,
    /// More processes than a run may have.
    #[error("{processes} processes, more than the {max} a run may have")]
    TooManyProcesses {
        /// How many were given.
        processes: usize,
        /// The most a run may have.
        max: usize,
    },
    /// More workers (processes x threads) than a run may have.
    #[error(
        "{processes} processes x {threads} threads is more than the {max} workers a run may have"
    )]
    TooManyWorkers {
        /// Processes.
        processes: usize,
        /// Threads per process.
        threads: usize,
        /// The most workers a run may have.
        max: usize,
    },
    /// A secret too short to keep strangers from guessing it.
    #[error(
        "a secret of {bytes} bytes is too short to keep strangers out: use at least {min} random bytes"
    )]
    ShortSecret {
        /// Its length.
        bytes: usize,
        /// The shortest allowed.
        min: usize,
    },
}

/// What is wrong with a hostfile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostfileProblem {
    /// It cannot be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// A line that is not `host:port`.
    #[error("`{text}` is not host:port")]
    NotHostPort {
        /// The line, trimmed.
        text: String,
    },
    /// It lists no process.
    #[error("it lists no process")]
    Empty,
}

/// Why a connection is not another process of this run, or why two
/// processes of a run cannot run together.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeProblem {
    /// The connection failed while greeting. (Not a `source()`: the message
    /// says it.)
    #[error("the connection failed: {0}")]
    Io(std::io::Error),
    /// The other side said nothing in time.
    #[error("no greeting within {} s", seconds(waited))]
    Silent {
        /// How long this process waited.
        waited: Duration,
    },
    /// The other side started the handshake but did not finish it in time.
    #[error("the handshake did not finish within {} s", seconds(waited))]
    Slow {
        /// How long this process waited.
        waited: Duration,
    },
    /// The other side closed the connection in the middle of the handshake.
    #[error("it hung up during the handshake")]
    HungUp,
    /// The other side closed the connection once it had seen this
    /// process's proof of the secret: it holds another secret.
    #[error("it hung up on this process's proof of the secret (does it use another secret?)")]
    HungUpAfterProof,
    /// The other side's greeting is not a taskgraph process's.
    #[error("not a taskgraph process (wrong greeting)")]
    WrongGreeting,
    /// The other side speaks another version of the protocol.
    #[error("it speaks another version of the protocol (another taskgraph release?)")]
    OtherVersion,
    /// The other side dialled for something this listener does not do: a
    /// process regrouping after a loss that reached one running the next
    /// attempt, say.
    #[error("it dialled for something else (channel {channel})")]
    OtherChannel {
        /// The channel it asked for.
        channel: u32,
    },
    /// The other side does not prove it knows the run's secret.
    #[error("it does not know this run's secret (is the secret the same for every process?)")]
    WrongSecret,
    /// The other side runs with another number of processes.
    #[error("it expects {theirs} processes, this process {ours}")]
    ProcessCount {
        /// Its number.
        theirs: u64,
        /// Ours.
        ours: u64,
    },
    /// The other side runs with another number of threads per process.
    #[error(
        "process {process} runs {theirs} threads, this process {ours}; every process must run as many"
    )]
    ThreadCount {
        /// Its index.
        process: u32,
        /// Its threads.
        theirs: u32,
        /// Ours.
        ours: u32,
    },
    /// The other side claims an index it cannot have.
    #[error("it says it is process {process}")]
    WrongProcess {
        /// The index it claims.
        process: u32,
    },
    /// The other side runs another job or graph.
    #[error(
        "process {process} runs a different job: its graph (task keys or bodies), requested keys, \
         placement or priorities differ from this process's (job fingerprint {}, this process {}); \
         every process must run the same graph with the same options",
        short_hex(theirs),
        short_hex(ours)
    )]
    DifferentJob {
        /// Its index.
        process: u32,
        /// Its fingerprint of the job (SHA-256).
        theirs: [u8; 32],
        /// Ours.
        ours: [u8; 32],
    },
    /// A process connected that should have been dialled, or twice.
    #[error(
        "unexpected connection from process {process} (are two processes started with the same index?)"
    )]
    Unexpected {
        /// Its index.
        process: usize,
    },
    /// The other side already has this process's connection.
    #[error(
        "it already has a connection from process {process} (are two processes started with the same index?)"
    )]
    AlreadyConnected {
        /// This process's index.
        process: u32,
    },
    /// The other side refused the connection.
    #[error("it refused the connection")]
    Refused,
    /// Too many connections were in their handshakes at once: this one was
    /// closed unheard.
    #[error("too many connections at once; closed unheard")]
    Crowded,
    /// This machine gave no random numbers for a challenge.
    #[error("no random numbers for a challenge: {message}")]
    Random {
        /// The system's error.
        message: String,
    },
}

impl HandshakeProblem {
    /// An I/O error in words: a timeout or a closed connection says so.
    pub(crate) fn io(err: std::io::Error) -> HandshakeProblem {
        match err.kind() {
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe => HandshakeProblem::HungUp,
            _ => HandshakeProblem::Io(err),
        }
    }
}

/// A connection a process dropped while it waited for the others.
#[derive(Debug, thiserror::Error)]
#[error("from {peer}: {problem}")]
pub struct Stray {
    /// Where it came from.
    pub peer: String,
    /// What was wrong with it.
    pub problem: HandshakeProblem,
}

/// A duration in seconds as a person reads it: `5`, `0.3`.
fn seconds(duration: &Duration) -> String {
    let tenths = (duration.as_secs_f64() * 10.0).round() / 10.0;
    format!("{tenths}")
}

fn who(process: Option<usize>, peer: &str) -> String {
    match process {
        Some(process) => format!("process {process} ({peer})"),
        None => peer.to_string(),
    }
}

fn strays(dropped: &[Stray], count: usize) -> String {
    if count == 0 {
        return String::new();
    }
    let mut text = format!(
        " ({count} other connection{} dropped: ",
        if count == 1 { " was" } else { "s were" }
    );
    for (i, stray) in dropped.iter().enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(&stray.to_string());
    }
    if count > dropped.len() {
        text.push_str("; ...");
    }
    text.push(')');
    text
}

fn short_hex(bytes: &[u8; 32]) -> String {
    bytes[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// Process numbers as an error message lists them: `0, 2, 3`.
///
/// # Example
///
/// ```
/// use graph_transport::ProcessList;
///
/// assert_eq!(ProcessList(&[0, 2, 3]).to_string(), "0, 2, 3");
/// ```
pub struct ProcessList<'a>(pub &'a [usize]);

impl std::fmt::Display for ProcessList<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, process) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{process}")?;
        }
        Ok(())
    }
}
