//! A progress bar for `taskgraph run`: the executor's callbacks drive a bar
//! on standard error that appears once a run has taken a second, and only
//! on a terminal.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use graph_core::Key;
use graph_exec::Callbacks;
use indicatif::{ProgressBar, ProgressStyle};

/// The run's progress, counted by the executor's callbacks.
#[derive(Default)]
pub(crate) struct Progress {
    total: AtomicU64,
    done: AtomicU64,
    started: OnceLock<Instant>,
    bar: OnceLock<ProgressBar>,
}

impl Progress {
    /// Takes the bar off the terminal, if it was shown.
    pub(crate) fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

impl Callbacks for Progress {
    fn start(&self, tasks: usize) {
        self.total.store(tasks as u64, Ordering::Relaxed);
        let _ = self.started.set(Instant::now());
    }

    fn posttask(&self, _key: &Key) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        // Looking at the clock costs more than counting: every 4096 tasks.
        if !done.is_multiple_of(4096) {
            return;
        }
        if let Some(bar) = self.bar.get() {
            bar.set_position(done);
        } else if self
            .started
            .get()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(1))
            && std::io::stderr().is_terminal()
        {
            let bar = ProgressBar::new(self.total.load(Ordering::Relaxed));
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} tasks, {per_sec}, eta {eta}")
                    .expect("the template is valid"),
            );
            bar.set_position(done);
            let _ = self.bar.set(bar);
        }
    }
}
