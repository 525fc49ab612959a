//! Running task graphs on one machine, in the manner of dask's local
//! schedulers.
//!
//! - [`OpRegistry`] maps a graph's op names to functions over a value type of
//!   the user's ([`TaskValue`]); [`OpRegistry::builtins`] is a ready-made
//!   library over [`Dynamic`] values.
//! - [`execute_sequential`] is the oracle: one task at a time, obviously right.
//! - [`LocalExecutor`] runs on all cores in the priority order of a static
//!   ordering, frees every intermediate result as soon as its last dependent has
//!   run, stops at the first failure, and reports [`Stats`]. On several
//!   threads it holds results within the order's profile
//!   ([`scheduler::OrderProfile`], [`scheduler::HeldLimit`]): in bytes where
//!   the tasks' sizes are known (about 1.1 times the order's peak bytes, plus
//!   one result per thread), else in count (1.1 times its max pressure, plus
//!   8); a memory limit ([`RunOptions::memory_limit`]) is a ceiling on top of
//!   that.
//! - [`scheduler::Scheduler`] is the executor core under every executor of
//!   the workspace (these threads, `taskgraph.dask.get`'s, and each worker of
//!   `graph-distributed`): a plain state machine of which tasks are ready,
//!   which starts next, which results are held, freed or spilled.
//!   [`scheduler`] holds it with what configures it, and
//!   [`scheduler::Ranking`], the one way an executor turns its order into
//!   it; [`pool`] is the worker loop every threaded executor runs over it
//!   (the lock, the idle workers' wait, how many tasks a worker takes at
//!   once); [`store`] keeps the results it holds (in memory or spilled),
//!   and [`memory`] asks the OS what memory there is.
//!
//! - [`CompiledGraph`] hands the tasks, compiled, to an executor of the
//!   caller's: it runs one task at a time on the inputs it is given.
//!
//! Only the tasks the requested keys need are run, and results come back in
//! the shape of the request ([`Request`], [`Output`]), as `dask.get` returns
//! them.
//!
//! # Example
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod builtins;
mod compiled;
mod error;
mod failure;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod local;
pub mod memory;
mod order;
mod plan;
pub mod pool;
mod rank_set;
mod registry;
mod request;
pub mod scheduler;
mod sequential;
pub mod store;
pub mod value;

pub use compiled::CompiledGraph;
pub use error::{Error, OpError};
pub use failure::{TaskFailure, panic_message};
pub use local::{Callbacks, LocalExecutor, RunOptions};
pub use plan::{OpTime, Stats};
pub use registry::{OpFn, OpRegistry};
pub use request::{Output, Request};
pub use sequential::{Run, execute_sequential};
pub use value::{Dynamic, Tagged, TaskValue};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
