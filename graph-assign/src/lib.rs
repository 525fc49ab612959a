//! Placing tasks on workers: Mars' initial assignment, dask.distributed's
//! `decide_worker`, a partitioner that keeps the edge cut low within a balance
//! bound, a list scheduler that keeps every worker busy through the run, and
//! the metrics (edge cut, transfer bytes, load imbalance, simulated wall time)
//! to compare them by.
//!
//! - [`Workers`]: `k` workers with slots; [`Assignment`]: a worker per task.
//! - [`assign`] (the default, [`assign_with`] for every option): a multilevel
//!   partitioner seeded by a locality-keeping order (size-capped label
//!   propagation to coarsen, blocks of the order and grown regions to start,
//!   greedy and k-way Fiduccia-Mattheyses refinement on the way back); close
//!   to METIS' edge cut with every load within 3% of its share, in
//!   near-linear time.
//! - [`assign_list`]: list scheduling by upward rank (HEFT's priorities), run
//!   ahead of time: each worker runs the tasks whose inputs it holds and takes
//!   work from the others when it would be idle, so the graph finishes close
//!   to its lower bound where `assign`'s workers wait on each other.
//!   [`makespan`] simulates any placement's run under the same cost model
//!   ([`ListConfig`]), to compare placements by estimated wall time.
//! - [`assign_auto`]: the partitioner's placement, or the list schedule's
//!   where that is simulated to finish clearly sooner: few edges cut on
//!   quick tasks, every worker busy on long ones.
//! - [`assign_mars`]: Mars' `GraphAssigner` heuristic, deterministic.
//! - [`decide_worker`] and [`ClusterState`]: dask.distributed's rule for one ready
//!   task; [`assign_greedy`] applies it to a whole graph.
//! - [`Metrics`], [`edge_cut`], [`transfer_bytes`], [`imbalance`].
//! - [`sizes_of`], [`costs_of`]: per-task inputs from a graph's metadata.
//!
//! Every algorithm takes `&impl Dag` and per-task data as slices indexed by
//! node, so it runs on any graph and any sizes or costs a caller has. A
//! [`Topology`](graph_core::Topology) is used as it is; any other `Dag` is
//! checked once ([`Topology::checked`](graph_core::Topology::checked)), and a
//! cycle or a dependency out of range is refused with [`Error::Graph`].
//!
//! # Example
//!
//! Place an `(x + x.T).sum()` graph on four workers and compare with Mars:
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod auto;
mod decide_worker;
mod error;
mod fm;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod inputs;
mod level;
mod list;
mod mars;
mod metrics;
mod partition;
mod refine;
mod seed;
mod workers;

pub use auto::{AutoPlacement, AutoRule, Chosen, assign_auto};
pub use decide_worker::{ClusterState, DEFAULT_BANDWIDTH, assign_greedy, decide_worker};
pub use error::Error;
pub use inputs::{MAX_TOTAL_SECONDS, costs_of, sizes_of};
pub use list::{DEFAULT_TRANSFER_SECONDS, ListConfig, assign_list, makespan, makespan_bound};
pub use mars::{assign_mars, shuffle_reducers};
pub use metrics::{Metrics, edge_cut, imbalance, transfer_bytes};
pub use partition::{AssignConfig, DEFAULT_MAX_IMBALANCE, assign, assign_with};
pub use workers::{Assignment, Workers};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
