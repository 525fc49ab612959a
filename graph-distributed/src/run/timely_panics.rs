//! Everything that knows what timely's panics say: a worker's panic that is
//! a broken connection, the process at the other end of one (from the names
//! of timely's threads), and the hook that keeps those panics off standard
//! error.

use std::time::Instant;

use crate::Error;
use graph_transport::Monitor;

/// What a panic in a worker thread means for the run when it comes from
/// timely's communication layer: a broken connection.
pub(super) fn disconnection(panic: &str) -> Option<String> {
    (panic.contains("MergeQueue poisoned") || panic.starts_with("timely communication error"))
        .then(|| "the connection to another process broke (did it die?)".to_string())
}

/// How long a process whose data connection broke waits for its heartbeats
/// to say which process went away: the heartbeat connection of a process
/// that died closes at the same moment, and its reader takes at most a
/// slice of its read timeout to see it.
const LOSS_HEARD_WITHIN: std::time::Duration = std::time::Duration::from_millis(300);

/// The error of a run whose data connection broke ([`Error::Disconnected`],
/// which names no process: timely's worker threads do not know which
/// connection it was). The heartbeats' word if they have one within
/// [`LOSS_HEARD_WITHIN`]; else the process at the other end of the first
/// connection that timely's threads found broken since `started`, as
/// [`graph_transport::Error::Lost`]; else the disconnection as it is.
pub(super) fn broken_connection(
    detail: String,
    monitor: Option<&Monitor>,
    started: Instant,
    addresses: &[String],
) -> Error {
    if let Some(monitor) = monitor {
        let deadline = Instant::now() + LOSS_HEARD_WITHIN;
        loop {
            if let Some(problem) = monitor.problem() {
                return problem.into();
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    match broken::first_since(started) {
        Some(process) if process < addresses.len() => graph_transport::Error::Lost {
            process,
            address: addresses[process].clone(),
        }
        .into(),
        _ => Error::Disconnected { detail },
    }
}

/// The connections that timely's threads found broken, by the process at
/// their other end: each of timely's threads serves one connection and is
/// named for its process (`timely:send-2`, `timely:recv-2`), and its panic
/// is the only word of the break. Recorded by the hook of
/// [`quiet_timely_panics`].
mod broken {
    use std::sync::{Mutex, PoisonError};
    use std::time::Instant;

    /// Enough for every connection of the runs of one process in a row.
    const KEPT: usize = 64;

    static BROKEN: Mutex<Vec<(Instant, usize)>> = Mutex::new(Vec::new());

    /// The process a thread of timely's that serves one connection is
    /// named for, `None` for any other thread name.
    pub(super) fn process_of(thread: &str) -> Option<usize> {
        let rest = thread
            .strip_prefix("timely:send-")
            .or_else(|| thread.strip_prefix("timely:recv-"))?;
        rest.parse().ok()
    }

    /// Records that the thread named `thread` found its connection broken.
    pub(super) fn record(thread: &str) {
        let Some(process) = process_of(thread) else {
            return;
        };
        let mut broken = BROKEN.lock().unwrap_or_else(PoisonError::into_inner);
        if broken.len() == KEPT {
            broken.remove(0);
        }
        broken.push((Instant::now(), process));
    }

    /// The process of the first connection found broken after `since`.
    pub(super) fn first_since(since: Instant) -> Option<usize> {
        let broken = BROKEN.lock().unwrap_or_else(PoisonError::into_inner);
        broken
            .iter()
            .find(|&&(at, _)| at > since)
            .map(|&(_, process)| process)
    }
}

/// Keeps the panics of timely's threads (and of its teardown of
/// connections) off standard error: they panic when a connection breaks,
/// and a run reports that as an error of its own ([`transport::Error::Lost`](crate::transport::Error::Lost),
/// [`Error::Disconnected`]). Other panics are printed as before. Call it
/// once, early, in a process that runs across processes.
pub fn quiet_timely_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let timely_thread = thread
            .name()
            .is_some_and(|name| name.starts_with("timely:"));
        if let Some(name) = thread.name() {
            broken::record(name);
        }
        let in_timely = info
            .location()
            .is_some_and(|at| at.file().contains("timely_communication"));
        if !(timely_thread || in_timely) {
            default(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_of_a_connection_name_its_process() {
        assert_eq!(broken::process_of("timely:recv-3"), Some(3));
        assert_eq!(broken::process_of("timely:send-12"), Some(12));
        assert_eq!(broken::process_of("timely:work-0"), None);
        assert_eq!(broken::process_of("timely:recv-"), None);
        assert_eq!(broken::process_of("main"), None);
    }

    #[test]
    fn a_broken_connection_names_the_process_at_its_other_end() {
        let addresses = ["a:1".to_string(), "b:2".to_string(), "c:3".to_string()];
        let detail = || "the connection to another process broke (did it die?)".to_string();
        // A break of an earlier run is not this one's.
        broken::record("timely:recv-2");
        let started = Instant::now();
        let unnamed = broken_connection(detail(), None, started, &addresses);
        assert!(matches!(unnamed, Error::Disconnected { .. }), "{unnamed}");
        broken::record("timely:work-0");
        broken::record("timely:send-1");
        broken::record("timely:recv-2");
        let named = broken_connection(detail(), None, started, &addresses);
        assert_eq!(
            named.to_string(),
            "process 1 (b:2) went away before the run finished (did it die?)"
        );
    }
}
