//! `PreparedGraph`: a graph to run across processes, with the digest of its
//! tasks kept for every run of it.

use std::sync::{Arc, OnceLock};

use graph_core::TaskGraph;

/// A task graph to run across processes, and the digest of its tasks that
/// the processes of a run compare before anything runs.
///
/// A run across processes hashes every task's key, body, size and cost
/// (about 55 ns a task), so that processes holding different graphs refuse
/// to run together ([`Error::Handshake`](crate::transport::Error::Handshake)).
/// [`Run::new`](crate::Run::new) takes the graph as an `Arc<TaskGraph>` or as a
/// `PreparedGraph`: the first run of a `PreparedGraph` across processes
/// computes the digest and keeps it, and its clones share it, so that
/// running one graph again (another job, another cluster) hashes only the
/// job. A graph behind an `Arc` cannot change while the `PreparedGraph`
/// holds it, so the kept digest stays true.
///
/// # Example
///
/// Two runs of one graph, the second without hashing its tasks again:
///
/// ```
/// use std::sync::Arc;
///
/// use graph_core::{Dag, NodeId, TaskGraph, Term, Topology};
/// use graph_distributed::{Cluster, Job, PreparedGraph, Run, Runner};
/// use graph_exec::TaskFailure;
///
/// struct Count<'g>(&'g Topology);
///
/// impl Runner for Count<'_> {
///     type Value = u64;
///     fn run(&mut self, node: NodeId, input: &mut dyn FnMut(NodeId) -> Option<u64>) -> Result<u64, TaskFailure> {
///         Ok(1 + self.0.dependencies(node).iter().map(|&d| input(d).unwrap()).sum::<u64>())
///     }
/// }
///
/// let graph = PreparedGraph::new(Arc::new(
///     TaskGraph::builder()
///         .task("a", Term::lit(1))
///         .task("b", Term::call("inc", [Term::key("a")]))
///         .build()?,
/// ));
/// let b = graph.graph().node_id(&"b".into()).unwrap();
/// for placement in [vec![0, 0], vec![0, 1]] {
///     let job = Job::new([b], placement);
///     let outcome = Run::new(graph.clone(), job, &Cluster::local(2), |graph, _| {
///         Ok(Box::new(Count(graph.topology()?)))
///     })
///     .run()?
///     .expect("process 0 gets the outcome");
///     assert_eq!(outcome.values, [(b, 2)]);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct PreparedGraph {
    graph: Arc<TaskGraph>,
    digest: Arc<OnceLock<[u8; 32]>>,
}

impl PreparedGraph {
    /// `graph`, its digest not computed yet (the first run across processes
    /// computes it).
    pub fn new(graph: Arc<TaskGraph>) -> PreparedGraph {
        PreparedGraph {
            graph,
            digest: Arc::default(),
        }
    }

    /// The graph.
    pub fn graph(&self) -> &Arc<TaskGraph> {
        &self.graph
    }

    /// The digest of the graph's tasks, computed on the first call.
    pub(crate) fn digest(&self) -> [u8; 32] {
        *self
            .digest
            .get_or_init(|| crate::fingerprint::graph_digest(&self.graph))
    }
}

impl From<Arc<TaskGraph>> for PreparedGraph {
    fn from(graph: Arc<TaskGraph>) -> PreparedGraph {
        PreparedGraph::new(graph)
    }
}

impl From<TaskGraph> for PreparedGraph {
    fn from(graph: TaskGraph) -> PreparedGraph {
        PreparedGraph::new(Arc::new(graph))
    }
}
