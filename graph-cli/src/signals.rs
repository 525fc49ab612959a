//! Signals: what SIGINT (Ctrl-C), SIGTERM and SIGHUP do to a command, and
//! the exit status and grace period of an interrupted run.

use std::io::Write;
use std::time::Duration;

use graph_core::CancelHandle;

use crate::exit::INTERRUPTED;

/// How long an interrupted process takes to end its run and remove its
/// temporary files before it exits regardless.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(2);

/// Calls `handler` on SIGINT (Ctrl-C), SIGTERM or SIGHUP.
pub(crate) fn on_signal(handler: impl FnMut() + Send + 'static) {
    // Only one handler per process: `run` sets it once, for the supervisor
    // or for a worker process, never both.
    let _ = ctrlc::set_handler(handler);
}

/// Stops a run on a signal: its workers stop at their next look, and the
/// run ends, removing its temporary files, with its caller exiting with
/// [`INTERRUPTED`]. Should a long task hold the run up, the process removes
/// them itself and exits [`STOP_GRACE`] later, saying `message` as the run
/// would have.
pub(crate) fn stop(cancel: &CancelHandle, message: String) {
    cancel.cancel();
    std::thread::spawn(move || {
        std::thread::sleep(STOP_GRACE);
        exit_interrupted(&message)
    });
}

/// Ends the process on a signal: removes its temporary files, stops the
/// Graphviz renders it runs, says `message` and exits with [`INTERRUPTED`].
pub(crate) fn exit_interrupted(message: &str) -> ! {
    graph_core::file::remove_temporary_files();
    graph_viz::stop_renders();
    let _ = writeln!(std::io::stderr(), "{message}");
    std::process::exit(INTERRUPTED)
}
