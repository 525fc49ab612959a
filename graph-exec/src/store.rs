//! `ResultStore`: where an executor keeps its tasks' results while tasks
//! still read them: in memory, on disk under a memory limit, or nowhere.
//!
//! The [`Scheduler`](crate::scheduler::Scheduler) decides what is held, spilled and
//! freed; the store carries it out, for the local executor's threads and a
//! distributed worker alike: one slot per task, a private spill directory
//! made on the first spill and removed with everything in it when the store
//! drops, and errors (never panics) when the disk fails.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use graph_core::NodeId;

/// Where each task's result is. Shared by reference among threads: each
/// slot has a lock of its own.
///
/// # Example
///
/// ```
/// use graph_core::NodeId;
/// use graph_exec::store::ResultStore;
///
/// let store: ResultStore<String> = ResultStore::new(2);
/// let a = NodeId::new(0);
/// store.put(a, "forty-two".to_owned());
/// // Spilled, the value is on disk only; read back, it is in memory again.
/// store.spill(a, |value, out| out.write_all(value.as_bytes()))?;
/// let read = |input: &mut dyn std::io::BufRead| {
///     let mut text = String::new();
///     input.read_to_string(&mut text).map(|_| text)
/// };
/// assert_eq!(store.get(a, read)?, Some("forty-two".to_owned()));
/// assert_eq!(store.get(NodeId::new(1), read)?, None);
/// store.free(a);
/// assert_eq!(store.into_values(), [None, None]);
/// # Ok::<(), graph_exec::store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct ResultStore<T> {
    slots: Vec<Mutex<Slot<T>>>,
    /// The private directory spilled results go to, made on the first spill
    /// and removed (with what is in it) when the store drops.
    dir: OnceLock<graph_core::file::PrivateTempDir>,
}

/// Where one result is.
#[derive(Debug)]
enum Slot<T> {
    /// Nowhere: not computed, or freed.
    Empty,
    /// In memory.
    Value(T),
    /// On disk, in the spill directory.
    Spilled,
}

/// Why a result could not be spilled or read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The spill directory could not be made, or the result not written.
    #[error("{0}")]
    Spill(String),
    /// A spilled result could not be read back from its file.
    #[error("{}: {message}", path.display())]
    ReadBack {
        /// The file.
        path: PathBuf,
        /// Why not.
        message: String,
    },
}

impl<T: Clone> ResultStore<T> {
    /// An empty store for `nodes` results.
    pub fn new(nodes: usize) -> ResultStore<T> {
        ResultStore {
            slots: (0..nodes).map(|_| Mutex::new(Slot::Empty)).collect(),
            dir: OnceLock::new(),
        }
    }

    /// Keeps `value` as `node`'s result, in memory.
    pub fn put(&self, node: NodeId, value: T) {
        *self.slot(node) = Slot::Value(value);
    }

    /// `node`'s result, if it is here: read back with `read` if it was
    /// spilled (and kept in memory again, its file removed).
    ///
    /// # Errors
    ///
    /// [`StoreError::ReadBack`] when the file cannot be opened or `read`
    /// fails on it, naming the file.
    pub fn get<E: std::fmt::Display>(
        &self,
        node: NodeId,
        read: impl FnOnce(&mut dyn BufRead) -> Result<T, E>,
    ) -> Result<Option<T>, StoreError> {
        let mut slot = self.slot(node);
        match &*slot {
            Slot::Value(value) => Ok(Some(value.clone())),
            Slot::Empty => Ok(None),
            Slot::Spilled => {
                let path = self.path(node).ok_or_else(|| StoreError::ReadBack {
                    path: PathBuf::new(),
                    message: "there is no spill directory".to_owned(),
                })?;
                let failed = |message: String| StoreError::ReadBack {
                    path: path.clone(),
                    message,
                };
                let file = std::fs::File::open(&path).map_err(|err| failed(err.to_string()))?;
                let value =
                    read(&mut BufReader::new(file)).map_err(|err| failed(err.to_string()))?;
                let _ = std::fs::remove_file(&path);
                *slot = Slot::Value(value.clone());
                Ok(Some(value))
            }
        }
    }

    /// Writes `node`'s result to disk with `write` and drops it from
    /// memory; nothing to do if it is not in memory.
    ///
    /// # Errors
    ///
    /// [`StoreError::Spill`] when the spill directory cannot be made or the
    /// result cannot be written; it then stays in memory.
    pub fn spill<E: std::fmt::Display>(
        &self,
        node: NodeId,
        write: impl FnOnce(&T, &mut dyn Write) -> Result<(), E>,
    ) -> Result<(), StoreError> {
        let mut slot = self.slot(node);
        let Slot::Value(value) = &*slot else {
            return Ok(());
        };
        let dir = self
            .make_dir()
            .map_err(|err| StoreError::Spill(err.to_string()))?;
        let file = graph_core::file::create_private(&spill_file(dir, node))
            .map_err(|err| StoreError::Spill(err.to_string()))?;
        let mut out = BufWriter::new(file);
        write(value, &mut out).map_err(|err| StoreError::Spill(err.to_string()))?;
        out.flush()
            .map_err(|err| StoreError::Spill(err.to_string()))?;
        *slot = Slot::Spilled;
        Ok(())
    }

    /// Drops `node`'s result, and its file if it was spilled.
    pub fn free(&self, node: NodeId) {
        let old = std::mem::replace(&mut *self.slot(node), Slot::Empty);
        if matches!(old, Slot::Spilled)
            && let Some(path) = self.path(node)
        {
            // A file not removed now goes with the directory at the end.
            let _ = std::fs::remove_file(path);
        }
    }

    /// Every result in memory, by node (`None` for the others); the spill
    /// directory is removed.
    pub fn into_values(self) -> Vec<Option<T>> {
        self.slots
            .into_iter()
            .map(
                |slot| match slot.into_inner().unwrap_or_else(PoisonError::into_inner) {
                    Slot::Value(value) => Some(value),
                    Slot::Empty | Slot::Spilled => None,
                },
            )
            .collect()
    }

    fn slot(&self, node: NodeId) -> MutexGuard<'_, Slot<T>> {
        // A poisoned slot is still usable: no critical section leaves it
        // half-changed.
        self.slots[node.index()]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The spill directory, made (private to its owner) on the first spill.
    fn make_dir(&self) -> std::io::Result<&Path> {
        if let Some(dir) = self.dir.get() {
            return Ok(dir.path());
        }
        let made = graph_core::file::private_temp_dir("taskgraph-spill-")?;
        // Two threads spilling first at once each make one; the one not kept
        // is removed as it drops.
        Ok(self.dir.get_or_init(|| made).path())
    }

    /// The file `node`'s result is spilled to, once there is a spill
    /// directory.
    fn path(&self, node: NodeId) -> Option<PathBuf> {
        Some(spill_file(self.dir.get()?.path(), node))
    }
}

/// The file `node`'s result is spilled to in `dir`.
fn spill_file(dir: &Path, node: NodeId) -> PathBuf {
    dir.join(format!("n{}", node.index()))
}
