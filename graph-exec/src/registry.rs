//! `OpRegistry`: the functions a graph's op names stand for.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::OpError;

/// The function behind an op: its evaluated arguments in, its result out.
pub type OpFn<T> = dyn Fn(&[T]) -> Result<T, OpError> + Send + Sync;

/// Maps op names to functions over a value type `T`.
///
/// # Example
///
/// ```
/// use graph_exec::{Dynamic, OpRegistry};
///
/// let mut registry = OpRegistry::<i64>::new();
/// registry.register("add", |args: &[i64]| Ok(args.iter().sum()));
/// assert!(registry.contains("add"));
///
/// let builtins = OpRegistry::<Dynamic>::builtins();
/// let inc = builtins.get("inc").unwrap();
/// assert_eq!(inc(&[Dynamic::Int(41)]).unwrap(), Dynamic::Int(42));
/// ```
pub struct OpRegistry<T> {
    ops: FxHashMap<Arc<str>, Arc<OpFn<T>>>,
}

impl<T> OpRegistry<T> {
    /// A registry with no ops.
    pub fn new() -> Self {
        OpRegistry {
            ops: FxHashMap::default(),
        }
    }

    /// Adds (or replaces) the op `name`.
    pub fn register(
        &mut self,
        name: &str,
        op: impl Fn(&[T]) -> Result<T, OpError> + Send + Sync + 'static,
    ) -> &mut Self {
        self.ops.insert(name.into(), Arc::new(op));
        self
    }

    /// The function of op `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<OpFn<T>>> {
        self.ops.get(name)
    }

    /// Whether op `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.ops.contains_key(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.ops.keys().map(|name| &**name).collect();
        names.sort_unstable();
        names
    }
}

impl<T> Default for OpRegistry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for OpRegistry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.ops.keys().map(|name| &**name).collect();
        names.sort_unstable();
        f.debug_struct("OpRegistry").field("ops", &names).finish()
    }
}
