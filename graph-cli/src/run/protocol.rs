//! What the supervisor of `taskgraph run --processes N` and its worker
//! processes say to each other when a process is lost, so that the run goes
//! on among the survivors.
//!
//! A worker whose run loses another process keeps what it holds and says
//! so on its standard error, in one [`Report`] line: the tasks it ran and
//! the results it holds. The supervisor tells every other worker at once
//! ([`ToWorker::Lost`]), so that one still connecting stops waiting for the
//! lost process and reports too; it waits for a report from every process
//! still alive, numbers the survivors afresh, and answers each on its
//! standard input with one [`Instruction`] line: where the next attempt
//! listens, the process's new number, which processes were lost, and every
//! survivor's report. Each survivor then makes the same recovery plan and
//! joins the next attempt. A worker also sends [`NOTE`] lines, which the
//! supervisor shows on its own standard error as they come, and every
//! [`PROGRESS_EVERY`] a [`PROGRESS`] line of the tasks it has run, from
//! which the supervisor tells the survivors what a lost process had done.

use serde::{Deserialize, Serialize};

/// How a report line starts.
pub(crate) const REPORT: &str = "\u{1}taskgraph-report ";
/// How a line the supervisor shows as it comes starts.
pub(crate) const NOTE: &str = "\u{1}taskgraph-note ";
/// How a line starts that lists tasks a worker process has run since its
/// last such line (a JSON array of node numbers), so that the supervisor
/// knows what a process had done should it be lost.
pub(crate) const PROGRESS: &str = "\u{1}taskgraph-progress ";

/// How often a worker process says what it has run.
pub(crate) const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// What a worker process holds after a loss, by node number.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Report {
    /// The tasks it ran.
    pub(crate) finished: Vec<u32>,
    /// The results it holds.
    pub(crate) held: Vec<u32>,
    /// The processes it lost because they stopped answering (by their
    /// numbers in the attempt): frozen, paused, or cut off, they may still
    /// be running, and the supervisor stops them.
    #[serde(default)]
    pub(crate) silent: Vec<usize>,
}

/// A line from the supervisor to a worker process.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ToWorker {
    /// A process of attempt `attempt` was lost: a worker still connecting
    /// for it stops, and reports.
    Lost {
        /// The attempt, from 1.
        attempt: usize,
    },
    /// How the next attempt goes.
    Go(Instruction),
}

/// What the supervisor tells a surviving worker process: how the next
/// attempt goes.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Instruction {
    /// The attempt's number, from 1 (the first run).
    pub(crate) attempt: usize,
    /// The hostfile of the attempt: one address per survivor.
    pub(crate) hostfile: std::path::PathBuf,
    /// This process's number in the attempt.
    pub(crate) process: usize,
    /// The processes lost, by their numbers in the attempt that lost them.
    pub(crate) lost: Vec<usize>,
    /// Every process lost since the run began, by its first number.
    pub(crate) lost_processes: Vec<usize>,
    /// Each survivor's report, by its number in the attempt that lost a
    /// process; and for each lost process, the tasks it said it had run.
    pub(crate) reports: Vec<(usize, Report)>,
}
