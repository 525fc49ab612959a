//! A spinner on standard error for steps that take more than a second, shown
//! only on a terminal.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::ProgressBar;

/// Shows `message` with a spinner once a second has passed, until dropped.
pub(crate) struct Busy {
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Busy {
    pub(crate) fn start(message: impl Into<String>) -> Busy {
        if !std::io::stderr().is_terminal() {
            return Busy {
                done: None,
                thread: None,
            };
        }
        let (done, finished) = mpsc::channel::<()>();
        let message = message.into();
        let thread = std::thread::spawn(move || {
            if finished.recv_timeout(Duration::from_secs(1)) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            let spinner = ProgressBar::new_spinner();
            spinner.set_message(message);
            spinner.enable_steady_tick(Duration::from_millis(100));
            // Until the sender is dropped.
            let _ = finished.recv();
            spinner.finish_and_clear();
        });
        Busy {
            done: Some(done),
            thread: Some(thread),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
