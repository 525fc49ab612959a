//! `Startable`: the flag an idle worker watches before it sleeps.

use std::sync::atomic::{AtomicBool, Ordering};

/// How many times an idle worker looks at the flag before it sleeps: a few
/// microseconds.
const SPINS: u32 = 512;

/// Whether the scheduler had a task to start when its lock was last let go.
///
/// Quick tasks finish within microseconds, and sleeping on a condition
/// variable costs two system calls and a switch of threads, so a worker with
/// nothing to take first watches this flag a moment. Watching a flag rather
/// than the lock leaves the lock to the workers that have tasks: a chain
/// runs on one worker without the others taking the lock after each task.
#[derive(Debug, Default)]
pub(super) struct Startable(AtomicBool);

impl Startable {
    /// Records, as the scheduler's lock is let go, whether it has a task to
    /// start.
    pub(super) fn set(&self, startable: bool) {
        self.0.store(startable, Ordering::Release);
    }

    /// Records that nothing can start: called under the scheduler's lock by
    /// a worker that found nothing, before it lets the lock go and watches.
    pub(super) fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// Watches the flag for a few microseconds; whether a task became
    /// startable meanwhile (then the worker takes the lock again rather than
    /// sleeping).
    pub(super) fn watch(&self) -> bool {
        for _ in 0..SPINS {
            if self.0.load(Ordering::Acquire) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::Startable;

    #[test]
    fn a_watcher_sees_a_task_made_startable_and_nothing_else() {
        let startable = Startable::default();
        // An idle worker, under the lock, finds nothing to start, and
        // watches in vain.
        startable.clear();
        assert!(!startable.watch());
        // Another finishes a task and lets the lock go with one to start.
        startable.set(true);
        assert!(startable.watch());
    }
}
