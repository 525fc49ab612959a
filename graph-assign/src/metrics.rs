//! How good a placement is: edge cut, transfer bytes and load imbalance.

use graph_core::{Dag, Topology};

use crate::inputs::{check_len, check_sizes, loads};
use crate::{Assignment, Error, Workers};

/// The three numbers a placement is judged by.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, Metrics, Workers};
/// use graph_core::Topology;
///
/// // 0 -> 1 -> 2, with 2 on its own worker.
/// let dag = Topology::from_edges(3, [(0, 1), (1, 2)])?;
/// let workers = Workers::new(2)?;
/// let assignment = Assignment::from_vec(vec![0, 0, 1], 2)?;
/// let metrics = Metrics::of(&dag, &workers, &assignment, Some(&[10, 20, 30]), None)?;
/// assert_eq!((metrics.edge_cut, metrics.transfer_bytes), (1, 20));
/// assert_eq!(metrics.imbalance, 2.0 / 1.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// Edges whose two ends are on different workers.
    pub edge_cut: u64,
    /// The cut edges weighted by the size of the producer's result.
    pub transfer_bytes: u64,
    /// The largest load over its fair share (see [`imbalance`]).
    pub imbalance: f64,
    /// Each worker's load: the sum of its tasks' costs (or task count).
    pub loads: Vec<f64>,
}

impl Metrics {
    /// Measures `assignment` of `dag` on `workers`; `sizes` and `costs` as
    /// for [`transfer_bytes`] and [`imbalance`].
    ///
    /// # Errors
    ///
    /// As [`transfer_bytes`] and [`imbalance`].
    ///
    /// # Complexity
    ///
    /// O(V + E) time, O(k) auxiliary space.
    pub fn of(
        dag: &impl Dag,
        workers: &Workers,
        assignment: &Assignment,
        sizes: Option<&[u64]>,
        costs: Option<&[f64]>,
    ) -> Result<Metrics, Error> {
        let (edge_cut, transfer_bytes) = cut(&*Topology::checked(dag)?, assignment, sizes)?;
        let loads = worker_loads(workers, assignment, costs)?;
        Ok(Metrics {
            edge_cut,
            transfer_bytes,
            imbalance: imbalance_of(workers, &loads),
            loads,
        })
    }
}

/// The number of edges whose two ends are on different workers: what
/// graph partitioners (METIS, KaHIP) minimize.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG, [`Error::LengthMismatch`] if the
/// assignment is not for this graph.
///
/// # Complexity
///
/// O(V + E) time, O(1) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, edge_cut};
/// use graph_core::Topology;
///
/// let dag = Topology::from_edges(3, [(0, 1), (1, 2)])?;
/// assert_eq!(edge_cut(&dag, &Assignment::from_vec(vec![0, 1, 0], 2)?)?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn edge_cut(dag: &impl Dag, assignment: &Assignment) -> Result<u64, Error> {
    Ok(cut(&*Topology::checked(dag)?, assignment, None)?.0)
}

/// The bytes that cross the network: every cut edge counts the size of the
/// producer's result (`sizes`, 1 byte per task when `None`). A result read by
/// two tasks on the same other worker counts twice, as two cut edges do.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG, [`Error::LengthMismatch`] if the
/// assignment or `sizes` is not for this graph.
///
/// # Complexity
///
/// O(V + E) time, O(1) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, transfer_bytes};
/// use graph_core::Topology;
///
/// let dag = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let assignment = Assignment::from_vec(vec![0, 1, 1], 2)?;
/// assert_eq!(transfer_bytes(&dag, &assignment, Some(&[100, 7, 0]))?, 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn transfer_bytes(
    dag: &impl Dag,
    assignment: &Assignment,
    sizes: Option<&[u64]>,
) -> Result<u64, Error> {
    Ok(cut(&*Topology::checked(dag)?, assignment, sizes)?.1)
}

/// The load imbalance: the largest ratio of a worker's load to its fair
/// share, where a load is the sum of the costs of its tasks (1 per task when
/// `costs` is `None`) and a worker's fair share is the total load times its
/// slots over all slots. With one slot per worker this is the largest load
/// over the average load. 1.0 is perfect balance, and also the value for a
/// graph with no load at all.
///
/// # Errors
///
/// [`Error::WorkerCountMismatch`] if the assignment is for a different
/// number of workers, [`Error::LengthMismatch`] or [`Error::BadCost`] for
/// `costs` that do not fit.
///
/// # Complexity
///
/// O(V + k) time, O(k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, Workers, imbalance};
///
/// let assignment = Assignment::from_vec(vec![0, 0, 0, 1], 2)?;
/// assert_eq!(imbalance(&Workers::new(2)?, &assignment, None)?, 1.5);
/// let costs = [1.0, 1.0, 1.0, 3.0];
/// assert_eq!(imbalance(&Workers::new(2)?, &assignment, Some(&costs))?, 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn imbalance(
    workers: &Workers,
    assignment: &Assignment,
    costs: Option<&[f64]>,
) -> Result<f64, Error> {
    Ok(imbalance_of(
        workers,
        &worker_loads(workers, assignment, costs)?,
    ))
}

fn cut(
    dag: &Topology,
    assignment: &Assignment,
    sizes: Option<&[u64]>,
) -> Result<(u64, u64), Error> {
    let n_nodes = dag.node_count();
    check_len("assignment", assignment.len(), n_nodes)?;
    check_sizes(sizes, n_nodes)?;
    let part = assignment.as_slice();
    let (mut edges, mut bytes) = (0_u64, 0_u64);
    for node in dag.node_ids() {
        let size = sizes.map_or(1, |sizes| sizes[node.index()]);
        for &dependent in dag.dependents(node) {
            if part[dependent.index()] != part[node.index()] {
                edges += 1;
                bytes = bytes.saturating_add(size);
            }
        }
    }
    Ok((edges, bytes))
}

pub(crate) fn worker_loads(
    workers: &Workers,
    assignment: &Assignment,
    costs: Option<&[f64]>,
) -> Result<Vec<f64>, Error> {
    if assignment.worker_count() != workers.count() {
        return Err(Error::WorkerCountMismatch {
            assignment: assignment.worker_count(),
            workers: workers.count(),
        });
    }
    let task_loads = loads(costs, assignment.len())?;
    let mut res = vec![0.0; workers.count()];
    for (&worker, load) in assignment.as_slice().iter().zip(task_loads) {
        res[worker as usize] += load;
    }
    Ok(res)
}

pub(crate) fn imbalance_of(workers: &Workers, loads: &[f64]) -> f64 {
    let total: f64 = loads.iter().sum();
    if total <= 0.0 {
        return 1.0;
    }
    workers
        .shares()
        .iter()
        .zip(loads)
        .map(|(share, load)| load / (total * share))
        .fold(0.0, f64::max)
}
