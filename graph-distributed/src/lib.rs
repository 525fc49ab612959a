//! Running one task graph across processes and hosts, on timely dataflow.
//!
//! When one machine is not enough, the same graph and the same ops run across
//! processes: a [`Run`] starts timely dataflow workers in every process of a
//! [`Cluster`] (connected over TCP: one `host:port` per process, as timely's
//! own hostfile), and each worker runs the tasks a [`Job`]'s placement gives
//! it, in the job's priority order among its ready tasks. A result travels,
//! serialized, only to the workers whose tasks read it, through a timely
//! exchange channel that routes each message to the worker it names; each
//! worker frees a result once its last reader there has run. The requested
//! results are gathered at worker 0.
//!
//! The crate knows nothing of ops: a [`Runner`] of the caller's runs each
//! task on the values of its inputs (the `taskgraph` command wires in
//! `graph-exec`'s compiled tasks). Placement and priorities are plain data
//! (`graph-assign` and `graph-order` give them, or anything else).
//!
//! The processes connect through [`transport`] (the `graph-transport`
//! crate): they prove to each other that they know a shared secret
//! ([`Cluster::with_secret`]) and agree on a fingerprint of the whole job,
//! task bodies included, before any data moves; a stranger's connection is
//! dropped and the process goes on waiting for the real one.
//!
//! A failing task stops every worker and comes back from every process as
//! [`Error::Task`], naming its key, op and worker; a process that dies ends
//! the run in the others with [`transport::Error::Lost`], and one that
//! stops answering (frozen, or cut off) with [`transport::Error::Silent`]
//! after the heartbeat timeout, never a hang. Every frame that arrives on a
//! data connection is checked before timely reads it: one its sender could
//! not have sent (garbage, a length past [`MAX_FRAME`]) ends the run with
//! [`transport::Error::Malformed`], and one that stops arriving midway with
//! [`transport::Error::Stalled`]. [`Error::kind`] alone says which errors
//! are losses ([`ErrorKind`]).
//!
//! After a loss the survivors can go on: a run that keeps its leftovers
//! ([`Run::run_keeping`]) gives back what each still holds
//! ([`Leftovers`](recovery::Leftovers)), [`plan_recovery`](recovery::plan_recovery)
//! says what a further attempt among them must run (only the tasks that are
//! still needed and whose results no survivor holds, placed by where their
//! inputs are), and [`Run::attempt`] runs it, the survivors feeding in the
//! results they hold ([`Attempt`](recovery::Attempt)), with the results of a
//! run without the fault. Without a supervisor, the survivors find each
//! other with [`regroup`](recovery::regroup): the run's heartbeats go on
//! ([`Watch`](recovery::Watch)), and the survivor of the lowest number
//! gathers the others' reports and tells each the next attempt's
//! [`Cluster`]; [`Run::recover`] does all of it, attempt after attempt.

mod error;
mod fingerprint;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod job;
mod losses;
mod message;
mod prepared;
mod recovering;
pub mod recovery;
mod run;
mod runner;
mod transfer;

pub use error::{Error, ErrorKind};
pub use graph_core::CancelHandle;
/// The processes' connections, heartbeats and regrouping, on which the run
/// goes; its errors are [`Error::Transport`]'s.
pub use graph_transport as transport;
pub use graph_transport::{
    Cluster, ClusterProblem, HandshakeProblem, HostfileProblem, MAX_FRAME, MAX_PROCESSES,
    MAX_WORKERS, MIN_SECRET_BYTES, Progress, Stray,
};
pub use job::Job;
pub use prepared::PreparedGraph;
pub use run::{MakeRunner, Outcome, Run, RunnerError, WorkerStats, quiet_timely_panics};
pub use runner::Runner;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
