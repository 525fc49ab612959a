//! The exit statuses of `taskgraph`, which scripts and the supervisor of
//! `run --processes` read.

/// Success.
pub(crate) const SUCCESS: u8 = 0;

/// A generic failure (`ExitCode::FAILURE`): never given by `taskgraph`
/// itself, taken as [`FAILED`] where read.
pub(crate) const FAILURE: i32 = 1;

/// A command that failed with an error of its own, said on standard error
/// as `error: ...` (clap's usage errors exit so too).
pub(crate) const FAILED: u8 = 2;

/// Interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP, as a shell reports
/// SIGINT.
pub(crate) const INTERRUPTED: i32 = 130;

/// Whether a process that exited with `code` ended of itself, with an error
/// of its own or interrupted, rather than crashing.
pub(crate) fn ended_of_itself(code: i32) -> bool {
    code == FAILURE || code == i32::from(FAILED) || code == INTERRUPTED
}
