//! What Linux's `/proc` tells of other processes: their children, whether
//! they still run, and whether a process of a run across processes has
//! finished connecting to the others. The demo's lost processes and the
//! tests of runs across processes read processes through it alone.
//!
//! Elsewhere than on Linux every answer is empty: no child, not running,
//! no socket.

use std::time::{Duration, Instant};

/// The pids of `parent`'s children, in the order they started.
pub(crate) fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

/// Whether process `pid` still runs (it is there and not a zombie).
#[allow(dead_code, reason = "the tests of runs across processes read it")]
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        state != Some('Z') && state != Some('X')
    })
}

/// How many sockets process `pid` has open.
pub(crate) fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
            })
            .count()
    })
}

/// The most sockets a process of a run of `processes` has open while it
/// connects: its listener and two connections (data and heartbeat) to
/// each other process. Once connected it has more: its connections are
/// authenticated, and copies of them made for the run.
pub(crate) fn connecting_sockets(processes: usize) -> usize {
    1 + 2 * processes.saturating_sub(1)
}

/// Whether process `pid` of a run of `processes` has finished connecting
/// to the others (see [`connecting_sockets`]).
pub(crate) fn has_connected(pid: u32, processes: usize) -> bool {
    sockets_of(pid) > connecting_sockets(processes)
}

/// Waits until `condition` holds, looking every 5 ms, at most `limit`;
/// whether it did.
pub(crate) fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    condition()
}
