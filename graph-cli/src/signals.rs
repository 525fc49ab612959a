//! Signals: what SIGINT (Ctrl-C), SIGTERM and SIGHUP do to a command, and
//! the exit status and grace period of an interrupted run.

use std::time::Duration;

/// How long an interrupted process takes to end its run and remove its
/// temporary files before it exits regardless.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(2);

/// The exit status of an interrupted run (as a shell reports SIGINT).
pub(crate) const INTERRUPTED: i32 = 130;

/// Calls `handler` on SIGINT (Ctrl-C), SIGTERM or SIGHUP.
pub(crate) fn on_signal(handler: impl FnMut() + Send + 'static) {
    // Only one handler per process: `run` sets it once, for the supervisor
    // or for a worker process, never both.
    let _ = ctrlc::set_handler(handler);
}
