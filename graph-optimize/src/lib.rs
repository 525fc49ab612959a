//! Graph simplification passes in the manner of `dask.optimization`: `cull`,
//! `inline`, `inline_functions`, `fuse_linear` and `fuse`, plus stage planning
//! (narrow chains coalesced, wide dependencies splitting stages) and barrier
//! nodes that turn m x n tracked edges into m + n.
