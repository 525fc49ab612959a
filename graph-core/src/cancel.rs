//! `CancelHandle`: a run stopped from another thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Stops a run from another thread: no new task starts, running ones finish,
/// and the run ends with its error for a cancelled run (graph-exec's
/// `Error::Cancelled`, graph-distributed's `Error::Interrupted`). A connection
/// still being made stops waiting too.
///
/// # Example
///
/// ```
/// use graph_core::CancelHandle;
///
/// let cancel = CancelHandle::new();
/// let seen_elsewhere = cancel.clone();
/// assert!(!seen_elsewhere.is_cancelled());
/// cancel.cancel();
/// assert!(seen_elsewhere.is_cancelled());
/// assert_eq!(cancel, seen_elsewhere);
/// assert_ne!(cancel, CancelHandle::new());
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// Cancels every run that holds this handle.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Two handles are equal when they are clones of one.
impl PartialEq for CancelHandle {
    fn eq(&self, other: &CancelHandle) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CancelHandle {}
