//! [`Run`]: the one way into the runtime, set up step by step.

use std::fmt;
use std::sync::Arc;

use graph_core::TaskGraph;

use super::{Attempt, MakeRunner, Outcome, RunnerError, Stopped, run_with};
use crate::{Cluster, Error, Job, PreparedGraph, Runner};

/// A run of `job` on a graph across the workers of a cluster, each task on
/// the worker its placement names: made by [`Run::new`], set up by its
/// builder methods, and run by [`Run::run`] ([`Run::run_keeping`], which
/// gives back what a process holds when another is lost, or
/// [`Run::recover`], which goes on across lost processes). Every process of the cluster makes the
/// same run, with the same graph and job.
///
/// Each worker runs its ready tasks lowest priority first and sends each
/// result once to every other worker whose tasks read it (serialized when
/// the worker is in another process); a result is freed as soon as the last
/// task of its worker that reads it has run. The requested results are
/// gathered at worker 0, in process 0.
///
/// | to | call |
/// |---|---|
/// | run a job | `Run::new(graph, job, &cluster, make).run()` |
/// | keep what this process holds when another is lost, for a further attempt | `.run_keeping()` |
/// | run a further attempt after a loss, from a [`Recovery`](crate::recovery::Recovery) plan | `.attempt(Attempt::new(&plan, held))` |
/// | go on across lost processes without a supervisor | `.recover(retries, on)` |
///
/// # Example
///
/// Two workers in this process; the runner's tasks sum their inputs plus one.
///
/// ```
/// use std::sync::Arc;
///
/// use graph_core::{Dag, NodeId, TaskGraph, Term, Topology};
/// use graph_distributed::{Cluster, Job, Run, Runner};
/// use graph_exec::TaskFailure;
///
/// struct Count<'g>(&'g Topology);
///
/// impl Runner for Count<'_> {
///     type Value = u64;
///
///     fn run(
///         &mut self,
///         node: NodeId,
///         input: &mut dyn FnMut(NodeId) -> Option<u64>,
///     ) -> Result<u64, TaskFailure> {
///         let inputs = self.0.dependencies(node).iter().map(|&d| input(d).unwrap());
///         Ok(1 + inputs.sum::<u64>())
///     }
/// }
///
/// let graph = Arc::new(
///     TaskGraph::builder()
///         .task("a", Term::lit(1))
///         .task("b", Term::lit(1))
///         .task("c", Term::call("add", [Term::key("a"), Term::key("b")]))
///         .build()?,
/// );
/// let c = graph.node_id(&"c".into()).unwrap();
/// let job = Job::new([c], vec![0, 1, 0]);
/// let run = Run::new(graph, job, &Cluster::local(2), |graph, _worker| {
///     Ok(Box::new(Count(graph.topology()?)))
/// });
/// let outcome = run.run()?.expect("process 0 has the outcome");
/// assert_eq!(outcome.values, [(c, 3)]);
/// assert_eq!(outcome.cut_edges(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Run<V> {
    pub(crate) prepared: PreparedGraph,
    pub(crate) job: Job,
    pub(crate) cluster: Cluster,
    pub(crate) make_runner: Arc<MakeRunner<V>>,
    pub(crate) attempt: Option<Attempt<V>>,
}

impl<V: timely::ExchangeData + Clone> Run<V> {
    /// A run of `job` on `graph` across `cluster`, each worker's tasks run
    /// by the runner `make_runner` makes for it (given the graph and the
    /// worker's index). The graph is an `Arc<TaskGraph>`, or a
    /// [`PreparedGraph`] to run one graph several times: across processes,
    /// its tasks are then hashed for the job fingerprint once rather than
    /// per run.
    pub fn new<F>(
        graph: impl Into<PreparedGraph>,
        job: Job,
        cluster: &Cluster,
        make_runner: F,
    ) -> Run<V>
    where
        F: for<'g> Fn(&'g TaskGraph, usize) -> Result<Box<dyn Runner<Value = V> + 'g>, RunnerError>
            + Send
            + Sync
            + 'static,
    {
        Run {
            prepared: graph.into(),
            job,
            cluster: cluster.clone(),
            make_runner: Arc::new(make_runner),
            attempt: None,
        }
    }

    /// Makes this run a further attempt after processes were lost: it runs
    /// only the tasks of a [`Recovery`](crate::recovery::Recovery) plan's
    /// `run`, and starts from the results of its `fetch`, which the
    /// processes that hold them feed in ([`Attempt::new`]). Every process of
    /// the attempt makes it with the same graph, job and plan, and its own
    /// held results.
    ///
    /// The job places each task of the plan where the plan says and each
    /// fetched result on a worker of a process that holds it
    /// ([`Recovery::attempt_placement`](crate::recovery::Recovery::attempt_placement));
    /// the outputs are the run's. Fed results are not counted as tasks run.
    /// (`None`: the first attempt, as without the call.)
    ///
    /// # Example
    ///
    /// A chain `a -> b -> c` whose process 1, which ran `a` and `b`, was
    /// lost; process 0 still holds `b`'s result (10), and only `c` runs
    /// again.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use graph_core::{generate, Dag, NodeId, Topology};
    /// use graph_distributed::recovery::{Attempt, Holdings, plan_recovery};
    /// use graph_distributed::{Cluster, Job, Run, Runner};
    /// use graph_exec::TaskFailure;
    ///
    /// struct Count<'g>(&'g Topology);
    ///
    /// impl Runner for Count<'_> {
    ///     type Value = u64;
    ///
    ///     fn run(
    ///         &mut self,
    ///         node: NodeId,
    ///         input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ///     ) -> Result<u64, TaskFailure> {
    ///         let inputs = self.0.dependencies(node).iter().map(|&d| input(d).unwrap());
    ///         Ok(1 + inputs.sum::<u64>())
    ///     }
    /// }
    ///
    /// let graph = Arc::new(generate::chain(3));
    /// let [a, b, c] = [0, 1, 2].map(NodeId::new);
    /// let job = Job::new([c], vec![1, 1, 0]);
    /// let mut held = Holdings::new(3);
    /// held.finished(a);
    /// held.hold(b, 0);
    /// let plan = plan_recovery(&graph, &job, 2, 1, &[1], &held, None)?;
    /// let attempt = Job::new([c], plan.attempt_placement(1));
    /// let outcome = Run::new(Arc::clone(&graph), attempt, &Cluster::local(2), |graph, _worker| {
    ///     Ok(Box::new(Count(graph.topology()?)))
    /// })
    /// .attempt(Attempt::new(&plan, vec![(b, 10)]))
    /// .run()?
    /// .expect("process 0 has the outcome");
    /// assert_eq!(outcome.values, [(c, 11)]);
    /// assert_eq!(outcome.tasks_run(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt(mut self, attempt: impl Into<Option<Attempt<V>>>) -> Run<V> {
        self.attempt = attempt.into();
        self
    }

    /// Runs it.
    ///
    /// # Returns
    ///
    /// In process 0, the [`Outcome`]: the requested values and every
    /// worker's counters. In the other processes, `None`.
    ///
    /// # Errors
    ///
    /// Before anything runs: a bad job ([`Error::PlacementLength`],
    /// [`Error::NoSuchWorker`], [`Error::PriorityCount`],
    /// [`Error::UnknownOutput`]), the graph's own [`Error::Graph`], a
    /// cluster of several processes with no secret
    /// ([`transport::Error::NoSecret`](crate::transport::Error::NoSecret)),
    /// or a cluster that does not come together
    /// ([`transport::Error::Listen`](crate::transport::Error::Listen),
    /// [`transport::Error::ConnectTimeout`](crate::transport::Error::ConnectTimeout),
    /// [`transport::Error::Handshake`](crate::transport::Error::Handshake):
    /// among others, a process with another secret, or another job,
    /// [`HandshakeProblem::DifferentJob`](crate::HandshakeProblem::DifferentJob));
    /// for an attempt, [`Error::MissingResult`] when the job places a
    /// fetched result on a worker of this process that was given no value
    /// for it, or [`Error::MisplacedResult`] when a value is given for a
    /// node the plan does not fetch or on a worker of another process.
    /// While running: the first failing task as [`Error::Task`] (its key,
    /// op and worker), in every process; the loss of another process (an
    /// error whose [`kind`](Error::kind) is a loss: it went away, fell
    /// silent for the heartbeat timeout, or broke the protocol);
    /// [`Error::Interrupted`] when the cluster's
    /// [`CancelHandle`](crate::CancelHandle) is cancelled
    /// ([`Cluster::with_cancel`]).
    pub fn run(self) -> Result<Option<Outcome<V>>, Error> {
        self.run_with(false).map_err(Error::from)
    }

    /// Runs it as [`Run::run`] does, but when other processes are lost,
    /// gives back what this process still holds: the tasks its workers ran
    /// and the results they hold ([`Stopped::leftovers`]), for a further
    /// attempt among the survivors
    /// ([`next_attempt`](crate::recovery::next_attempt)). Across processes,
    /// each tells the others what it has run as it goes.
    ///
    /// # Errors
    ///
    /// As [`Run::run`], as [`Stopped::error`]; [`Stopped::leftovers`] is
    /// there when the error is the loss of another process.
    pub fn run_keeping(self) -> Result<Option<Outcome<V>>, Stopped<V>> {
        self.run_with(true)
    }

    fn run_with(self, keep: bool) -> Result<Option<Outcome<V>>, Stopped<V>> {
        run_with(
            self.prepared,
            self.job,
            &self.cluster,
            self.make_runner,
            self.attempt,
            keep,
        )
    }
}

impl<V> fmt::Debug for Run<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("job", &self.job)
            .field("cluster", &self.cluster)
            .field("attempt", &self.attempt.is_some())
            .finish_non_exhaustive()
    }
}

impl<V> From<Stopped<V>> for Error {
    fn from(stopped: Stopped<V>) -> Error {
        stopped.error
    }
}
