//! `Runner`: what runs a task on a worker, over the caller's ops and values.

use graph_core::NodeId;
use graph_exec::{CompiledGraph, Dynamic, Tagged, TaskFailure, TaskValue};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Runs tasks on one worker: the ops and the value type are the caller's.
///
/// Each worker gets its own runner (see [`Run`](crate::Run)); it is called
/// once per task placed on that worker, after every input of the task has
/// arrived.
///
/// # Example
///
/// A runner whose tasks add up their inputs, plus one:
///
/// ```
/// use graph_core::NodeId;
/// use graph_distributed::Runner;
/// use graph_exec::TaskFailure;
///
/// struct Count;
///
/// impl Runner for Count {
///     type Value = u64;
///
///     fn run(
///         &mut self,
///         node: NodeId,
///         input: &mut dyn FnMut(NodeId) -> Option<u64>,
///     ) -> Result<u64, TaskFailure> {
///         let _ = (node, input);
///         Ok(1)
///     }
/// }
/// ```
pub trait Runner {
    /// What tasks compute and send each other.
    type Value;

    /// Runs `node`'s task; `input` gives the value of each of its
    /// dependencies (all have arrived when `run` is called).
    ///
    /// # Errors
    ///
    /// The task's failure, which stops the whole run.
    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<Self::Value>,
    ) -> Result<Self::Value, TaskFailure>;

    /// The bytes `node`'s result `value` takes in memory, for a run under a
    /// memory limit ([`Job::with_memory_limit`](crate::Job::with_memory_limit)),
    /// and to choose how it travels: results of 64 MiB or more (64 KiB
    /// under a limit) go to other processes in pieces, smaller ones whole,
    /// in frames a receiver refuses past [`MAX_FRAME`](crate::MAX_FRAME).
    /// The default counts the value type's own size: a type whose values
    /// can hold gigabytes should say how many.
    fn bytes(&self, node: NodeId, value: &Self::Value) -> u64 {
        let _ = (node, value);
        std::mem::size_of::<Self::Value>() as u64
    }

    /// The bytes a large result (64 KiB or more by [`Runner::bytes`])
    /// travels as to another worker under a memory limit, in pieces;
    /// [`Runner::decode`] reads them back there. The default is the value's
    /// bincode encoding.
    ///
    /// # Errors
    ///
    /// Why the value cannot be written (it stops the run).
    fn encode(&self, value: &Self::Value) -> Result<Vec<u8>, String>
    where
        Self::Value: Serialize,
    {
        bincode::serialize(value).map_err(|err| err.to_string())
    }

    /// The value [`Runner::encode`] wrote as `bytes`.
    ///
    /// # Errors
    ///
    /// Why the bytes are not a value (it stops the run).
    fn decode(&self, bytes: &[u8]) -> Result<Self::Value, String>
    where
        Self::Value: DeserializeOwned,
    {
        bincode::deserialize(bytes).map_err(|err| err.to_string())
    }
}

/// graph-exec's compiled tasks over its built-in ops run as they are: each
/// task on its inputs' values, sent between processes in their tagged serde
/// form ([`Tagged`]).
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// use graph_core::{TaskGraph, Term};
/// use graph_distributed::{Cluster, Job, Run};
/// use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request};
///
/// let graph = Arc::new(
///     TaskGraph::builder()
///         .task("x", Term::lit(20))
///         .task("y", Term::call("add", [Term::key("x"), Term::key("x")]))
///         .build()?,
/// );
/// let y = graph.node_id(&"y".into()).unwrap();
/// let job = Job::new([y], vec![0, 1]);
/// let outcome = Run::new(Arc::clone(&graph), job, &Cluster::local(2), |graph, _| {
///     Ok(Box::new(CompiledGraph::new(graph, &OpRegistry::builtins(), &Request::from("y"))?))
/// })
/// .run()?
/// .expect("process 0 has the outcome");
/// assert_eq!(outcome.values[0].1.0, Dynamic::Int(40));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Runner for CompiledGraph<'_, Dynamic> {
    type Value = Tagged;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<Tagged>,
    ) -> Result<Tagged, TaskFailure> {
        self.run_task(node, |dep| input(dep).map(|tagged| tagged.0))
            .map(Tagged)
            .map_err(graph_exec::Error::into_failure)
    }

    fn bytes(&self, node: NodeId, value: &Tagged) -> u64 {
        self.result_bytes(node, &value.0)
    }

    /// [`Dynamic::encode`], into a buffer of the right size at once (a
    /// string is written whole, so its length is the value's).
    fn encode(&self, value: &Tagged) -> Result<Vec<u8>, String> {
        let estimate = value.0.size_bytes().unwrap_or(0);
        let mut out = Vec::new();
        out.try_reserve_exact(usize::try_from(estimate).unwrap_or(usize::MAX))
            .map_err(|_| format!("not enough memory to encode a value of {estimate} bytes"))?;
        value.0.encode(&mut out);
        Ok(out)
    }

    fn decode(&self, bytes: &[u8]) -> Result<Tagged, String> {
        Dynamic::decode(bytes)
            .map(Tagged)
            .map_err(|err| err.to_string())
    }
}
