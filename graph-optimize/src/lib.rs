//! Graph simplification passes in the manner of `dask.optimization`: `cull`,
//! `inline`, `inline_functions`, `fuse_linear` and `fuse`, plus stage planning
//! (narrow chains coalesced, wide dependencies splitting stages) and barrier
//! nodes that turn m x n tracked edges into m + n.
//!
//! Each pass takes a [`TaskGraph`](graph_core::TaskGraph) and returns the
//! new one. A pass knows which task each reference of its output names, so
//! it hands the output those references
//! ([`TaskGraph::hint_references`](graph_core::TaskGraph::hint_references)):
//! the next pass, or anything else that asks the output for its topology,
//! compares keys instead of hashing them. [`optimize`] runs a pipeline of
//! passes over one shared dense state and reports what each did. Every
//! function checks its input graph once, through its topology: a reference
//! to a missing key or a cycle (a task that references itself is one) is an
//! [`Error::Graph`].
//!
//! | function | dask | what it does | returns |
//! |---|---|---|---|
//! | [`cull`] | `cull` | keeps what the requested keys need | `TaskGraph` |
//! | [`inline`] | `inline` | substitutes tasks (and constants) into their users | `TaskGraph` |
//! | [`inline_functions`] | `inline_functions` | inlines tasks made of cheap ops | `TaskGraph` |
//! | [`functions_of`] | `functions_of` | the ops a term calls | `BTreeSet<Op>` |
//! | [`fuse_linear`] | `fuse_linear` | merges linear chains | `TaskGraph` |
//! | [`fuse`] | `fuse` | merges chains and small reductions | `TaskGraph` |
//! | [`key_split`], [`fused_name`], [`fused_linear_name`] | `key_split`, renamers | dask's names | `String`, `Option<Key>` |
//! | [`optimize`], [`optimize_owned`] | | a pipeline with a report | `(TaskGraph, Report)` |
//! | [`plan_stages`], [`plan_shape_stages`], [`coalesce_stages`] | | stages split at wide edges | [`StagePlan`], `TaskGraph` |
//! | [`find_wide_edges`] | | the edges of complete bipartite blocks | [`WideEdges`] |
//! | [`insert_barriers`] | | m x n blocks become m + n edges | [`Barriers`] |
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
mod error;
mod fuse;
mod fuse_linear;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod inline;
mod names;
mod optimize;
mod stages;
mod wide;
mod work;

pub use barriers::{Barriers, Block, insert_barriers};
pub use cull::cull;
pub use error::Error;
pub use fuse::{DEFAULT_MAX_DEPTH, FuseConfig, fuse};
pub use fuse_linear::{FuseLinearConfig, fuse_linear};
pub use inline::{MAX_INLINED_TERM, functions_of, inline, inline_functions};
pub use names::{MAX_FUSED_KEY_LENGTH, fused_linear_name, fused_name, key_split};
pub use optimize::{OptimizeConfig, Pass, PassReport, Report, optimize, optimize_owned};
pub use stages::{
    StageConfig, StageFigures, StagePlan, StageSummary, coalesce_stages, plan_shape_stages,
    plan_stages,
};
pub use wide::{WideEdges, find_wide_edges};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
