//! Graph simplification passes in the manner of `dask.optimization`: `cull`,
//! `inline`, `inline_functions`, `fuse_linear` and `fuse`, plus stage planning
//! (narrow chains coalesced, wide dependencies splitting stages) and barrier
//! nodes that turn m x n tracked edges into m + n.
//!
//! Each pass takes a [`TaskGraph`] and returns an
//! [`Optimized`]: the new graph and its [`Dependencies`], which the next pass
//! accepts so that it need not resolve keys again. [`optimize`] runs a
//! pipeline of passes over one shared dense state and reports what each did.
//!
//! | function | dask | what it does |
//! |---|---|---|
//! | [`cull`] | `cull` | keeps what the requested keys need |
//! | [`inline`] | `inline` | substitutes tasks (and constants) into their users |
//! | [`inline_functions`] | `inline_functions` | inlines tasks made of cheap ops |
//! | [`functions_of`] | `functions_of` | the ops a term calls |
//! | [`fuse_linear`] | `fuse_linear` | merges linear chains |
//! | [`fuse`] | `fuse` | merges chains and small reductions |
//! | [`key_split`], [`fused_name`], [`fused_linear_name`] | `key_split`, renamers | dask's names |
//! | [`optimize`], [`optimize_owned`] | | a pipeline with a report |
//! | [`plan_stages`], [`coalesce_stages`] | | stages split at wide edges |
//! | [`insert_barriers`] | | m x n blocks become m + n edges |
//!
//! Where these differ from dask (stable names, opaque tasks, dropping
//! aliases), each function's documentation says so.
//!
//! # Example
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod barriers;
mod cull;
mod deps;
mod error;
mod fuse;
mod fuse_linear;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod inline;
mod names;
mod optimize;
mod stages;
mod work;

use graph_core::TaskGraph;

pub use barriers::{Barriers, Block, insert_barriers};
pub use cull::cull;
pub use deps::Dependencies;
pub use error::Error;
pub use fuse::{DEFAULT_MAX_DEPTH, FuseConfig, fuse};
pub use fuse_linear::{FuseLinearConfig, fuse_linear};
pub use inline::{MAX_INLINED_TERM, functions_of, inline, inline_functions};
pub use names::{MAX_FUSED_KEY_LENGTH, fused_linear_name, fused_name, key_split};
pub use optimize::{OptimizeConfig, Pass, PassReport, Report, optimize, optimize_owned};
pub use stages::{StageConfig, StagePlan, coalesce_stages, plan_stages};

/// What a pass returns: the new graph and its dependencies, to hand to the
/// next pass.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimized {
    /// The graph.
    pub graph: TaskGraph,
    /// Its dependencies, row `n` for the task with node id `n`.
    pub dependencies: Dependencies,
}
