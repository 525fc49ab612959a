//! `Workers` (what tasks are placed on) and `Assignment` (where each task went).

use graph_core::NodeId;

use crate::Error;

/// The workers a graph is placed on: `k` workers, each with a number of
/// slots (threads, in dask's words; bands, in Mars'). A worker with two slots
/// is meant to take twice the load of a worker with one.
///
/// A `Workers` value always has at least one worker and every worker at
/// least one slot; the constructors check it, so the algorithms need not.
///
/// # Example
///
/// ```
/// use graph_assign::{Error, Workers};
///
/// let workers = Workers::new(4)?;
/// assert_eq!((workers.count(), workers.total_slots()), (4, 4));
/// let mixed = Workers::with_slots([2, 1, 1])?;
/// assert_eq!(mixed.slots(0), 2);
/// assert!(matches!(Workers::new(0), Err(Error::NoWorkers)));
/// assert!(matches!(Workers::with_slots([1, 0]), Err(Error::NoSlots { worker: 1 })));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workers {
    slots: Box<[u32]>,
}

impl Workers {
    /// `count` workers with one slot each.
    ///
    /// # Errors
    ///
    /// [`Error::NoWorkers`] if `count` is 0, [`Error::TooManyWorkers`] past
    /// `u32::MAX`.
    pub fn new(count: usize) -> Result<Workers, Error> {
        if count > u32::MAX as usize {
            return Err(Error::TooManyWorkers { count });
        }
        Workers::with_slots(std::iter::repeat_n(1, count))
    }

    /// One worker per entry, with that many slots.
    ///
    /// # Errors
    ///
    /// [`Error::NoWorkers`] if there are none, [`Error::NoSlots`] for a
    /// worker with 0 slots, [`Error::TooManyWorkers`] past `u32::MAX`.
    pub fn with_slots(slots: impl IntoIterator<Item = u32>) -> Result<Workers, Error> {
        let slots: Box<[u32]> = slots.into_iter().collect();
        if slots.is_empty() {
            return Err(Error::NoWorkers);
        }
        if slots.len() > u32::MAX as usize {
            return Err(Error::TooManyWorkers { count: slots.len() });
        }
        if let Some(worker) = slots.iter().position(|&s| s == 0) {
            return Err(Error::NoSlots { worker });
        }
        Ok(Workers { slots })
    }

    /// The number of workers, `k` (at least 1).
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    /// The slots of `worker`.
    ///
    /// # Panics
    ///
    /// If `worker >= self.count()`.
    pub fn slots(&self, worker: usize) -> u32 {
        self.slots[worker]
    }

    /// The slots of every worker, by worker index.
    pub fn all_slots(&self) -> &[u32] {
        &self.slots
    }

    /// The sum of all slots.
    pub fn total_slots(&self) -> u64 {
        self.slots.iter().map(|&s| u64::from(s)).sum()
    }

    /// Each worker's share of the total load: its slots over all slots.
    pub(crate) fn shares(&self) -> Vec<f64> {
        let total = self.total_slots() as f64;
        self.slots.iter().map(|&s| f64::from(s) / total).collect()
    }
}

/// Where each task runs: a worker index per node, for some number of
/// workers.
///
/// # Example
///
/// ```
/// use graph_assign::Assignment;
/// use graph_core::NodeId;
///
/// let assignment = Assignment::from_vec(vec![0, 1, 1], 2)?;
/// assert_eq!(assignment.worker(NodeId::new(2)), 1);
/// assert_eq!(assignment.tasks_per_worker(), [1, 2]);
/// assert_eq!(assignment.tasks_on(1).collect::<Vec<_>>(), [NodeId::new(1), NodeId::new(2)]);
/// assert!(Assignment::from_vec(vec![0, 2], 2).is_err());
/// # Ok::<(), graph_assign::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    workers: Vec<u32>,
    worker_count: usize,
}

impl Assignment {
    /// An assignment from a worker index per node, for `worker_count`
    /// workers.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchWorker`] if an entry is not below `worker_count`,
    /// [`Error::NoWorkers`] if `worker_count` is 0.
    pub fn from_vec(workers: Vec<u32>, worker_count: usize) -> Result<Assignment, Error> {
        if worker_count == 0 {
            return Err(Error::NoWorkers);
        }
        if let Some(node) = workers.iter().position(|&w| w as usize >= worker_count) {
            return Err(Error::NoSuchWorker {
                node: NodeId::new(node),
                worker: workers[node],
                workers: worker_count,
            });
        }
        Ok(Assignment {
            workers,
            worker_count,
        })
    }

    /// Wraps a vector the algorithms of this crate built, which is valid by
    /// construction.
    pub(crate) fn new_unchecked(workers: Vec<u32>, worker_count: usize) -> Assignment {
        debug_assert!(workers.iter().all(|&w| (w as usize) < worker_count));
        Assignment {
            workers,
            worker_count,
        }
    }

    /// The worker of `node`.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of the graph this assignment was made for.
    pub fn worker(&self, node: NodeId) -> usize {
        self.workers[node.index()] as usize
    }

    /// The worker of every node, by node index.
    pub fn as_slice(&self) -> &[u32] {
        &self.workers
    }

    /// The worker of every node, by node index.
    pub fn into_vec(self) -> Vec<u32> {
        self.workers
    }

    /// The number of tasks placed.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Whether no task was placed (the graph was empty).
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// The number of workers the tasks were placed on (some may have none).
    pub fn worker_count(&self) -> usize {
        self.worker_count
    }

    /// How many tasks each worker got, by worker index.
    pub fn tasks_per_worker(&self) -> Vec<usize> {
        let mut counts = vec![0; self.worker_count];
        for &w in &self.workers {
            counts[w as usize] += 1;
        }
        counts
    }

    /// The tasks on `worker`, in increasing node order.
    pub fn tasks_on(&self, worker: usize) -> impl Iterator<Item = NodeId> + '_ {
        self.workers
            .iter()
            .enumerate()
            .filter(move |&(_, &w)| w as usize == worker)
            .map(|(node, _)| NodeId::new(node))
    }
}
