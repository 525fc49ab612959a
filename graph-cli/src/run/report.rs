//! What `taskgraph run` prints: the results and a summary, or one JSON
//! object.

use std::io::Write;

use graph_core::Key;
use graph_exec::Dynamic;
use serde::Serialize;

/// `{"results": [[KEY, VALUE], ...], "tasks_run": N, "peak_held": N,
/// "seconds": S}`, across processes also `"processes"`, `"workers"`,
/// `"cut_edges"`, `"transfer_bytes"` and `"values_sent"`, then
/// `"peak_bytes"` and `"spilled_bytes"`, and across processes last
/// `"attempts"`, `"lost_processes"` and `"recomputed_tasks"`.
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
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) recovered: Option<Recovered>,
}

/// What a run across processes did about lost processes: how many attempts
/// it took, which processes it lost (by their first numbers), and how many
/// tasks it ran again whose results were lost with them.
#[derive(Debug, Serialize)]
pub(crate) struct Recovered {
    pub(crate) attempts: usize,
    pub(crate) lost_processes: Vec<usize>,
    pub(crate) recomputed_tasks: usize,
}

impl Default for Recovered {
    fn default() -> Recovered {
        Recovered {
            attempts: 1,
            lost_processes: Vec::new(),
            recomputed_tasks: 0,
        }
    }
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
        if let Some(recovered) = self.recovered.as_ref().filter(|r| r.attempts > 1) {
            writeln!(
                out,
                "lost processes {:?}: went on in {} attempts, running {} tasks again",
                recovered.lost_processes, recovered.attempts, recovered.recomputed_tasks
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
