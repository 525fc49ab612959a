//! The processes of a run across hosts: how they find each other, prove
//! that they belong to the same run, and stay in touch while it runs.
//!
//! A [`Cluster`] names the processes of a run (one `host:port` each, as
//! timely dataflow's hostfile), this process's place among them, the
//! secret they share and how long they wait for each other. [`connect`]
//! makes two connections between every pair of processes, one for data and
//! one for heartbeats; each proves, by an HMAC challenge over the shared
//! secret, that its other end knows the secret and agrees on a fingerprint
//! of the job (a stranger's connection is dropped, and the process goes on
//! waiting for the real one). Over the data connections it builds timely's
//! allocators, each frame checked as it arrives: one its sender could not
//! have sent (garbage, a length past [`MAX_FRAME`]) stops the run with
//! [`Error::Malformed`], and one that stops midway with [`Error::Stalled`].
//!
//! The heartbeats ([`Monitor`]) tell each process when another dies
//! ([`Error::Lost`]), stops answering ([`Error::Silent`]) or stops with an
//! error of its own ([`Error::PeerFailed`]), never a hang; they also carry
//! the tasks each process has run (a [`Progress`]). After a loss the
//! heartbeats go on ([`Watch`]) while the survivors [`regroup`]: the one of
//! the lowest number gathers the others' reports and tells each the
//! cluster of the next attempt, when they are a majority of the run.
//!
//! The crate knows nothing of tasks but their numbers: `graph-distributed`
//! runs a task graph on it.

mod cluster;
mod connect;
mod error;
mod frames;
mod handshake;
mod heartbeat;
mod progress;
mod regroup;

pub use cluster::{Cluster, MAX_PROCESSES, MAX_WORKERS, MIN_SECRET_BYTES};
pub use connect::{Connected, connect};
pub use error::{
    ClusterProblem, Error, FrameProblem, HandshakeProblem, HostfileProblem, ProcessList,
    RegroupProblem, Stray,
};
pub use frames::MAX_FRAME;
pub use heartbeat::{Monitor, Watch};
pub use progress::Progress;
pub use regroup::{Regrouped, regroup};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
