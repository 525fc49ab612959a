//! Term rewriting over task graphs in the manner of `dask.rewrite`: rewrite
//! rules compiled into a discrimination net so that matching costs about the
//! size of a term rather than the number of rules, with bottom-up, top-level and
//! fixpoint strategies.
