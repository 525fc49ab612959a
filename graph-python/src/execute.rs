//! Running a dask graph on `graph-exec`'s scheduler core: the native half of
//! `taskgraph.dask.get`.
//!
//! The graph is read once (as dask's local schedulers read it, see
//! [`Reading::Execute`]), ordered, and handed to a [`Scheduler`]. Each worker
//! thread (Python threads that `taskgraph.dask` starts, or the threads of a
//! pool the caller gives) takes ready tasks from it with the GIL released,
//! runs them with the GIL held, and hands their results back; a result goes
//! as soon as its last reader has run. Python is entered only to run a task
//! and to call the hooks that dask's callbacks hang on.
//!
//! Under a memory limit each result is measured (`dask.sizeof`, through
//! `taskgraph._sizes.SafeSizeof`), and the results the scheduler chooses to
//! spill are handed to a Python spiller (`taskgraph._spill.Spill`, pickle
//! protocol 5) and read back, through it, when a task reads them; their
//! slots in the result list hold a marker meanwhile. One worker reads a
//! result back while the others that need it wait, and its file goes once
//! it is read: a result spilled again is written again.
//!
//! No thread of a run may be left inside these frames when the interpreter
//! finalizes: one that takes the GIL back then is ended by a forced unwind,
//! which aborts the process. So after a success or an error `taskgraph.dask`
//! returns only once none is: it joins the threads of its own and, on a
//! pool, waits for the jobs running there ([`State::jobs`],
//! [`Execution::settle`]). After Ctrl-C it returns at once, as dask does
//! (a task may wait for the call to end); the threads that wait then (its
//! own, which are not daemons, or one that settles) keep the interpreter
//! from finalizing until the tasks end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use graph_core::{Dag, NodeId, Topology};
use graph_exec::panic_message;
use graph_exec::scheduler::{
    OrderProfile, Overflow, Scheduler, SchedulerConfig, Startable, run_order,
};
use graph_order::learn::Learning;
use graph_order::{OrderConfig, Strategy};
use pyo3::exceptions::{
    PyException, PyKeyError, PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet};
use rustc_hash::FxHashSet;
use self_cell::self_cell;

use crate::convert::{Converted, External, Reading, convert};
use crate::eval::TaskKeys;
use crate::learn::{self, Reorder};
use crate::signals::{Stop, detach_interruptible};
use crate::sizes::{Sizes, Sizing};
use crate::{ORDER_BESIDE, core_error, order_error, parse_strategy};

/// What the scheduler reads, owned by the run.
struct Inputs {
    topology: Arc<Topology>,
    needed: Vec<bool>,
    ranks: Vec<u32>,
    /// With several workers: the order's profile, in bytes where sizes are
    /// known (see [`OrderProfile`]).
    profile: Option<OrderProfile>,
    /// Per node, the bytes its result is expected to take, where the sizes
    /// given or found tell it (hints for the scheduler); empty when none do.
    expected: Vec<Option<u64>>,
    /// Per node, its kind for the scheduler (dask's `key_split` of its key),
    /// with `expected`.
    kinds: Vec<u32>,
    /// The order the run goes on by once it has learned the sizes of its
    /// results (see [`crate::learn`]).
    resumed: OnceLock<Resumed>,
}

/// The ranks (and, with several workers, the profile) of a second order.
struct Resumed {
    ranks: Vec<u32>,
    profile: Option<OrderProfile>,
}

self_cell!(
    /// The scheduler with the graph, ranks and bounds it reads.
    struct Core {
        owner: Inputs,
        #[covariant]
        dependent: Scheduler,
    }
);

/// What the workers share under one lock.
struct State {
    core: Core,
    /// Workers asleep, waiting for a task.
    idle: usize,
    /// No task starts any more: the run is done or failed.
    stop: bool,
    /// The first error: a task's, a hook's, or Ctrl-C.
    error: Option<PyErr>,
    /// The task whose error it is.
    failed: Option<NodeId>,
    /// A task the memory limit cannot hold, which stopped the run.
    overflow: Option<Overflow>,
    /// Tasks a worker took in a batch and handed back unrun, when one of
    /// the batch proved slow: other workers take these first.
    spare: Vec<NodeId>,
    /// Jobs running on the pool now (see [`Running`]): the run is not over
    /// for its caller until none is.
    jobs: usize,
    /// The sizes of the first results, while the run learns them.
    learning: Option<Learning>,
}

/// One run, shared by its workers.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    startable: Startable,
    /// Set with `State::stop`, for workers to look at between the tasks of a
    /// batch without the lock.
    stopped: AtomicBool,
    /// Set by a test: the next turn of a worker's loop panics.
    #[cfg(feature = "test-hooks")]
    panic_next: AtomicBool,
    topology: Arc<Topology>,
    /// Every node's key object (tasks first, then keys the graph names but
    /// lacks) and its hash.
    graph: TaskKeys,
    /// Each task's value in the graph.
    tasks: Vec<Py<PyAny>>,
    /// Each node's result while it is held; `None` otherwise.
    values: Py<PyList>,
    /// The requested keys' nodes, in the order asked.
    outputs: Vec<NodeId>,
    /// Per node: whether it is requested (its result is kept to the end).
    is_output: Vec<bool>,
    /// Called with a task's key just before it runs.
    pretask: Option<Py<PyAny>>,
    /// Called with a task's key, its result and the worker's thread id just
    /// after it ran.
    posttask: Option<Py<PyAny>>,
    /// How many workers the run is for.
    workers: usize,
    /// `dask.sizeof.sizeof` made safe (`taskgraph._sizes.SafeSizeof`), when
    /// results are measured (under a memory limit, or for `RunStats`).
    sizeof: Option<Py<PyAny>>,
    /// Writes results to disk and reads them back
    /// (`taskgraph._spill.Spill`), under a memory limit.
    spiller: Option<Py<PyAny>>,
    /// What a spilled result's slot in `values` holds.
    spilled_mark: Py<PyAny>,
    /// The spilled results a worker is reading back now; the others that
    /// need one wait on `read_back` until it is in memory.
    reading: Mutex<FxHashSet<usize>>,
    read_back: Condvar,
    /// `_thread.get_ident`: the worker id the `posttask` hook is given.
    get_ident: Py<PyAny>,
    /// Measures results while the run learns their sizes (`SafeSizeof`),
    /// where `sizeof` does not measure them all anyway.
    learn_sizeof: Option<Py<PyAny>>,
    /// Set while `learn_sizeof` measures every result: until the run has
    /// decided whether to order again.
    measuring: AtomicBool,
    /// What a second order is made from, where the run may make one.
    reorder: Option<Reorder>,
}

/// The most tasks a worker takes at once, while its tasks are quick: each
/// batch takes the scheduler's lock and the GIL once.
const BATCH: usize = 16;

/// A task quicker than this is quick: a worker whose tasks are takes them a
/// batch at a time. A slower one makes it take one at a time, leaving the
/// rest to idle workers.
const QUICK_TASK: Duration = Duration::from_micros(20);

/// How often the main thread, waiting, looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// What a worker does after taking the lock.
enum Step {
    /// Run the tasks taken.
    Run,
    /// Nothing to run yet: look for signals, then ask again.
    Signals,
    /// The run is over.
    Stop,
}

/// A dask graph being run: read, ordered and scheduled at construction; its
/// tasks run by [`Execution::work`] (on threads of the caller's) or
/// [`Execution::submit_to`] (on a pool), its results from
/// [`Execution::results`].
#[pyclass(frozen, module = "taskgraph._native")]
pub(crate) struct Execution {
    shared: Arc<Shared>,
}

#[pymethods]
impl Execution {
    /// Reads `dsk`, checks that every key of `keys` (a flat list) is in it
    /// and that what they need is, and orders it with `strategy` for
    /// `workers` workers.
    #[new]
    ///
    /// With `memory_limit` (bytes), `sizeof` measures each result and
    /// `spiller` writes the results the scheduler spills (`write(node,
    /// value, key) -> bool`, false for a value it cannot write), reads them
    /// back (`read(node, key)`, once per spill: the file goes) and drops
    /// them (`discard(node)`). With `sizeof` alone, results are measured
    /// for the statistics. A `sizeof` that raises an `Exception`, or gives
    /// what is not a size (see [`measured_bytes`]), counts the result as
    /// [`FALLBACK_RESULT_BYTES`]: `taskgraph.dask` hands over one that
    /// warns and never does.
    ///
    /// `sizes` and `layers` are `taskgraph.order`'s: where they tell sizes,
    /// the order weighs results by them, and the scheduler takes the sizes
    /// known as what results will take until it has measured results of
    /// their kind (dask's `key_split` of the key).
    ///
    /// With `learn_sizeof`, a graph of which nothing tells sizes, ordered
    /// by `"auto"`, learns them: its first results are measured, and where
    /// they prove to differ in size by orders of magnitude, the run goes on
    /// by an order in their bytes (see [`crate::learn`]).
    #[pyo3(signature = (
        dsk, keys, *, workers, strategy="auto", pretask=None, posttask=None,
        memory_limit=None, sizeof=None, spiller=None, sizes=None, layers=None,
        learn_sizeof=None,
    ))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new<'py>(
        dsk: &Bound<'py, PyAny>,
        keys: &Bound<'py, PyList>,
        workers: usize,
        strategy: &str,
        pretask: Option<Py<PyAny>>,
        posttask: Option<Py<PyAny>>,
        memory_limit: Option<u64>,
        sizeof: Option<Py<PyAny>>,
        spiller: Option<Py<PyAny>>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
        learn_sizeof: Option<Py<PyAny>>,
    ) -> PyResult<Execution> {
        if memory_limit.is_some() && (sizeof.is_none() || spiller.is_none()) {
            return Err(PyValueError::new_err(
                "a memory limit needs `sizeof` and `spiller`",
            ));
        }
        let py = dsk.py();
        let ReadRun {
            keys: node_keys,
            hashes,
            tasks,
            topology,
            needed,
            outputs,
            order,
            sizes,
            reorder,
        } = ReadRun::new(dsk, keys, strategy, sizes, layers)?;
        let total = needed.iter().filter(|&&n| n).count();
        // A run learns sizes where nothing told them and its order could
        // weigh them.
        let learns = learn_sizeof.is_some()
            && !sizes.any()
            && reorder.strategy == Strategy::Auto
            && total >= learn::SMALLEST_GRAPH;
        let learning = if learns {
            let bound: Vec<Bound<'py, PyAny>> =
                node_keys.iter().map(|k| k.bind(py).clone()).collect();
            Some(Learning::new(crate::sizes::groups(&bound)?))
        } else {
            None
        };
        let workers = workers.clamp(1, total.max(1));
        let (ranks, profile) = if workers == 1 {
            (order.into_priorities(), None)
        } else {
            let ranks = run_order(&topology, &needed, order.priorities())
                .map_err(|err| PyValueError::new_err(err.to_string()))?;
            // The order's own byte profile: each result weighing the size
            // the order weighed it by.
            let weighed: Vec<Option<u64>> = sizes.filled.iter().copied().map(Some).collect();
            let profile = OrderProfile::new(
                &topology,
                &topology,
                &needed,
                &ranks,
                &weighed,
                UNKNOWN_RESULT_BYTES,
            );
            (ranks, Some(profile))
        };
        // The reading and the order look for signals as they go; the rest
        // is a few short passes, with a look between them.
        py.check_signals()?;
        let mut is_output = vec![false; topology.node_count()];
        for node in &outputs {
            is_output[node.index()] = true;
        }
        let topology = Arc::new(topology);
        let (expected, kinds) = hints(sizes);
        let inputs = Inputs {
            topology: Arc::clone(&topology),
            needed,
            ranks,
            profile,
            expected,
            kinds,
            resumed: OnceLock::new(),
        };
        let core = Core::new(inputs, |inputs| {
            let mut config = SchedulerConfig::new(
                &inputs.topology,
                &inputs.topology,
                &inputs.needed,
                &inputs.ranks,
            );
            config.held_limit = inputs
                .profile
                .as_ref()
                .map(|profile| profile.held_limit(workers));
            config.memory_limit = memory_limit;
            config.expected_bytes = &inputs.expected;
            config.kinds = &inputs.kinds;
            Scheduler::new(&config)
        });
        let none = py.None().into_bound(py);
        let values = PyList::new(py, std::iter::repeat_n(none, node_keys.len()))?.unbind();
        Ok(Execution {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    core,
                    idle: 0,
                    stop: false,
                    error: None,
                    failed: None,
                    overflow: None,
                    spare: Vec::new(),
                    jobs: 0,
                    learning,
                }),
                wake: Condvar::new(),
                startable: Startable::default(),
                stopped: AtomicBool::new(false),
                #[cfg(feature = "test-hooks")]
                panic_next: AtomicBool::new(false),
                topology,
                graph: TaskKeys::new(py, node_keys, hashes)?,
                tasks,
                values,
                outputs,
                is_output,
                pretask,
                posttask,
                workers,
                sizeof,
                spiller,
                spilled_mark: py.get_type::<pyo3::types::PyAny>().call0()?.unbind(),
                reading: Mutex::new(FxHashSet::default()),
                read_back: Condvar::new(),
                get_ident: py.import("_thread")?.getattr("get_ident")?.unbind(),
                measuring: AtomicBool::new(learns),
                learn_sizeof: learn_sizeof.filter(|_| learns),
                reorder: learns.then_some(reorder),
            }),
        })
    }

    /// How many workers the run is for: the number asked, at most one per
    /// task to run.
    #[getter]
    fn workers(&self) -> usize {
        self.shared.workers
    }

    /// How many tasks the requested keys need.
    #[getter]
    fn tasks(&self) -> usize {
        lock(&self.shared.state)
            .core
            .borrow_owner()
            .needed
            .iter()
            .filter(|&&n| n)
            .count()
    }

    /// The most results held at once so far.
    #[getter]
    fn peak_held(&self) -> usize {
        lock(&self.shared.state).core.borrow_dependent().peak_held()
    }

    /// The most bytes of results in memory at once so far, as `sizeof`
    /// measured them (0 when results are not measured).
    #[getter]
    fn peak_bytes(&self) -> u64 {
        lock(&self.shared.state)
            .core
            .borrow_dependent()
            .peak_bytes()
    }

    /// The bytes of results written to disk so far.
    #[getter]
    fn spilled_bytes(&self) -> u64 {
        lock(&self.shared.state)
            .core
            .borrow_dependent()
            .spilled_bytes()
    }

    /// The tasks run so far.
    #[getter]
    fn tasks_run(&self) -> usize {
        lock(&self.shared.state).core.borrow_dependent().tasks_run()
    }

    /// Whether the run ended in an error (a task's, a hook's, Ctrl-C or the
    /// memory limit).
    #[getter]
    fn failed(&self) -> bool {
        let state = lock(&self.shared.state);
        state.error.is_some() || state.overflow.is_some()
    }

    /// Runs tasks on the calling thread until the run is over. Errors are
    /// kept for [`Execution::results`]. `main`: the caller is Python's main
    /// thread, which looks for Ctrl-C while it waits.
    #[pyo3(signature = (*, main=false))]
    fn work(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        self.shared.guarded(|| self.shared.work(py, main))
    }

    /// Runs the tasks on a pool: `submit(job)` is called with a callable per
    /// task (at most `workers` at once), which runs that task on whatever
    /// thread calls it. Returns when the run is over; jobs of it may still
    /// be running (see [`Execution::settle`]), and a job called after that
    /// returns at once.
    #[pyo3(signature = (submit, *, main=false))]
    fn submit_to(&self, py: Python<'_>, submit: &Bound<'_, PyAny>, main: bool) -> PyResult<()> {
        self.shared.guarded(|| {
            self.shared.submit_to(py, &self.shared, submit, main);
            Ok(())
        })
    }

    /// Waits, once the run is over, until no job of it is running on the
    /// pool. `main`: the caller is Python's main thread, and a Ctrl-C
    /// raises `KeyboardInterrupt` at once.
    #[pyo3(signature = (*, main=false))]
    fn settle(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        self.shared.settle(py, main)
    }

    /// Whether the run ended with `KeyboardInterrupt` (Ctrl-C).
    #[getter]
    fn interrupted(&self, py: Python<'_>) -> bool {
        lock(&self.shared.state)
            .error
            .as_ref()
            .is_some_and(|err| err.is_instance_of::<PyKeyboardInterrupt>(py))
    }

    /// For tests: the next turn of a worker's loop panics, as a bug in it
    /// would. Only with the `test-hooks` feature.
    #[cfg(feature = "test-hooks")]
    fn _panic_next(&self) {
        self.shared.panic_next.store(true, Ordering::Relaxed);
    }

    /// Ends the run with `RuntimeError(message)`: no task starts any more
    /// (the pool it was given can run no more of its tasks).
    fn abandon(&self, message: String) {
        self.shared.fail(PyRuntimeError::new_err(message), None);
    }

    /// Stops the run: no task starts any more.
    fn cancel(&self) {
        let mut state = lock(&self.shared.state);
        self.shared.halt(&mut state);
        drop(state);
        self.shared.wake.notify_all();
    }

    /// The key of the task that failed, if one did.
    fn failed_key(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let failed = lock(&self.shared.state).failed?;
        Some(self.shared.graph.keys[failed.index()].clone_ref(py))
    }

    /// Runs the failed task again on the calling thread (its inputs are
    /// still held), raising what it raises; raises the run's error if it
    /// does not fail again.
    fn rerun_failed(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(node) = lock(&self.shared.state).failed {
            self.shared.evaluate(py, node)?;
        }
        self.results(py).map(drop)
    }

    /// The requested keys' results, in the order asked; raises the run's
    /// first error.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut state = lock(&self.shared.state);
        if let Some(error) = &state.error {
            return Err(error.clone_ref(py));
        }
        if let Some(overflow) = state.overflow {
            drop(state);
            return Err(self.shared.overflow_error(py, overflow));
        }
        if !state.core.borrow_dependent().is_done() {
            state.stop = true;
            return Err(PyRuntimeError::new_err(
                "the run was stopped before it finished",
            ));
        }
        drop(state);
        let values = self.shared.values.bind(py);
        PyList::new(
            py,
            self.shared
                .outputs
                .iter()
                .map(|&node| self.shared.value(py, values, node))
                .collect::<PyResult<Vec<_>>>()?,
        )
    }
}

/// A dask graph read for a run: checked, with the requested keys found,
/// and ordered.
pub(crate) struct ReadRun {
    /// Every node's key object; tasks first, then keys the graph names but
    /// lacks.
    pub(crate) keys: Vec<Py<PyAny>>,
    /// Every node's `hash()` of its key.
    pub(crate) hashes: Vec<isize>,
    /// Each task's value in the graph.
    pub(crate) tasks: Vec<Py<PyAny>>,
    pub(crate) topology: Topology,
    /// Per node: whether the requested keys need it.
    pub(crate) needed: Vec<bool>,
    /// The requested keys' nodes, in the order asked.
    pub(crate) outputs: Vec<NodeId>,
    pub(crate) order: graph_order::Order,
    pub(crate) sizes: Sizes,
    /// What the order was made from, for another.
    pub(crate) reorder: Reorder,
}

impl ReadRun {
    /// Reads `dsk`, checks that every key of `keys` (a flat list) is in it
    /// and that what they need is, and orders it with `strategy`, by the
    /// sizes `sizes` and `layers` tell (`taskgraph.order`'s).
    pub(crate) fn new<'py>(
        dsk: &Bound<'py, PyAny>,
        keys: &Bound<'py, PyList>,
        strategy: &str,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<ReadRun> {
        let py = dsk.py();
        let strategy = parse_strategy(strategy)?;
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let Converted {
            keys: node_keys,
            task_count,
            offsets,
            targets,
            is_data,
            ranks: str_ranks,
            index,
            values: tasks,
        } = convert(dsk, None, External::AsDataNodes, Reading::Execute)?;
        let mut outputs = Vec::with_capacity(keys.len());
        for key in keys.iter() {
            let hash = key.hash()?;
            match index.find(&node_keys, hash, &key)? {
                Some(node) if (node as usize) < task_count => outputs.push(NodeId::from_u32(node)),
                _ => return Err(PyKeyError::new_err(key.unbind())),
            }
        }
        let sizes = Sizes::read(&sizing, &node_keys, &index)?;
        let node_keys: Vec<Py<PyAny>> = node_keys.into_iter().map(Bound::unbind).collect();
        let topology = py
            .detach(|| Topology::from_dependency_rows(offsets, targets))
            .map_err(|err| core_error(py, &node_keys, err))?;
        py.check_signals()?;
        let needed = topology
            .needed_by(&outputs)
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        missing_dependencies(py, &topology, &node_keys, task_count, &needed)?;
        let config = OrderConfig {
            strategy,
            is_data: &is_data,
            sizes: &sizes.filled,
        };
        let order =
            |stop: Stop<'_>| graph_order::order_unless(&topology, &str_ranks, &config, stop);
        // On large graphs the order runs beside a look for signals.
        let order = if topology.node_count() < ORDER_BESIDE {
            py.detach(|| order(&|| false))
        } else {
            detach_interruptible(py, order)?
        }
        .map_err(|err| order_error(py, &node_keys, err))?;
        Ok(ReadRun {
            keys: node_keys,
            hashes: index.hashes().to_vec(),
            tasks: tasks.into_iter().map(Bound::unbind).collect(),
            topology,
            needed,
            outputs,
            order,
            sizes,
            reorder: Reorder {
                strategy,
                tie_break: str_ranks,
                is_data,
            },
        })
    }
}

/// dask's error for a needed key the graph names but lacks.
fn missing_dependencies(
    py: Python<'_>,
    topology: &Topology,
    keys: &[Py<PyAny>],
    task_count: usize,
    needed: &[bool],
) -> PyResult<()> {
    let Some(missing) = (task_count..keys.len()).find(|&node| needed[node]) else {
        return Ok(());
    };
    let dependents = PySet::empty(py)?;
    for &dependent in topology.dependents(NodeId::new(missing)) {
        if needed[dependent.index()] {
            dependents.add(keys[dependent.index()].bind(py))?;
        }
    }
    let key = keys[missing].bind(py);
    Err(PyValueError::new_err(format!(
        "Missing dependency {} for dependents {}",
        key.str()?,
        dependents.repr()?
    )))
}

impl Shared {
    /// One worker: takes ready tasks (a batch at a time while they are
    /// quick) with the GIL released, runs them with it held, and reports
    /// them finished when it takes the next ones.
    fn work(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        let worker_id = self.get_ident.bind(py).call0()?;
        let mut taken: Vec<NodeId> = Vec::with_capacity(BATCH);
        let mut done: Vec<Done> = Vec::with_capacity(BATCH);
        let mut freed: Vec<NodeId> = Vec::new();
        let mut spill: Vec<NodeId> = Vec::new();
        let mut batch = 1;
        let many = self.workers > 1;
        loop {
            // A load first: every turn of every worker reads the flag, and
            // a swap would write its cache line each time.
            #[cfg(feature = "test-hooks")]
            assert!(
                !(self.panic_next.load(Ordering::Relaxed)
                    && self.panic_next.swap(false, Ordering::Relaxed)),
                "a worker's loop panicked (injected by a test)"
            );
            let step =
                py.detach(|| self.next(&mut done, &mut taken, &mut freed, &mut spill, batch, main));
            self.free(py, &mut freed);
            if let Err(err) = self.spill(py, &mut spill) {
                self.fail(err, None);
            }
            match step {
                Step::Stop => return Ok(()),
                Step::Signals => {
                    if let Err(err) = py.check_signals() {
                        self.fail(err, None);
                    }
                    continue;
                }
                Step::Run => {}
            }
            // One worker takes one task at a time, to follow the order
            // exactly; several take a batch while their tasks are quick, and
            // hand back the rest of one as soon as a task of it is not.
            let started = many.then(Instant::now);
            let mut ran = 0;
            for (k, &node) in taken.iter().enumerate() {
                if self.stopped.load(Ordering::Relaxed) {
                    return Ok(());
                }
                match self.execute(py, node, &worker_id) {
                    Ok(done_now) => done.push(done_now),
                    Err(err) => {
                        self.fail(err, Some(node));
                        return Ok(());
                    }
                }
                ran = k + 1;
                if let Some(started) = started
                    && started.elapsed() >= QUICK_TASK * ran as u32
                {
                    break;
                }
            }
            if ran < taken.len() {
                let mut state = lock(&self.state);
                state.spare.extend_from_slice(&taken[ran..]);
                drop(state);
                self.wake.notify_all();
            }
            taken.clear();
            if main && let Err(err) = py.check_signals() {
                self.fail(err, None);
            }
            if let Some(started) = started {
                batch = if started.elapsed() < QUICK_TASK * ran as u32 {
                    BATCH
                } else {
                    1
                };
            }
        }
    }

    /// Reports the tasks done and takes the next ones (up to `batch`),
    /// waiting while none is ready; called with the GIL released.
    fn next(
        &self,
        done: &mut Vec<Done>,
        taken: &mut Vec<NodeId>,
        freed: &mut Vec<NodeId>,
        spill: &mut Vec<NodeId>,
        batch: usize,
        main: bool,
    ) -> Step {
        let mut state = lock(&self.state);
        for done in done.drain(..) {
            state.finished(done, freed, spill);
        }
        state = self.learn(state);
        loop {
            if state.stop {
                self.halt(&mut state);
                drop(state);
                self.wake.notify_all();
                return Step::Stop;
            }
            while taken.len() < batch
                && let Some(node) = state.spare.pop()
            {
                taken.push(node);
            }
            state.take(taken, batch, spill);
            if !taken.is_empty() || !spill.is_empty() {
                // Spills are written with the GIL, before the tasks run.
                break;
            }
            if state.core.borrow_dependent().is_done() {
                state.stop = true;
                continue;
            }
            // Watch a moment for a task to become startable before sleeping
            // (see `Startable`).
            self.startable.clear();
            drop(state);
            self.startable.watch();
            state = lock(&self.state);
            if state.has_next() || state.stop {
                continue;
            }
            state.idle += 1;
            if main {
                let (guard, wait) = self
                    .wake
                    .wait_timeout(state, SIGNAL_POLL)
                    .unwrap_or_else(PoisonError::into_inner);
                state = guard;
                state.idle -= 1;
                if wait.timed_out() {
                    return Step::Signals;
                }
            } else {
                state = self
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.idle -= 1;
            }
        }
        let startable = state.has_next();
        self.startable.set(startable);
        if startable && state.idle > 0 {
            self.wake.notify_one();
        }
        Step::Run
    }

    /// Waits until no job of the run is running on the pool, once the run
    /// is stopped (none starts after that), without the GIL; the main
    /// thread looks for Ctrl-C meanwhile.
    fn settle(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        loop {
            let settled = py.detach(|| {
                let state = lock(&self.state);
                if state.jobs == 0 {
                    return true;
                }
                let (state, _) = self
                    .wake
                    .wait_timeout(state, SIGNAL_POLL)
                    .unwrap_or_else(PoisonError::into_inner);
                state.jobs == 0
            });
            if settled {
                return Ok(());
            }
            if main {
                py.check_signals()?;
            }
        }
    }

    /// Hands the run's tasks to the pool through `submit`, at most
    /// `workers` at once, until the run is over; errors end the run.
    fn submit_to(&self, py: Python<'_>, this: &Arc<Shared>, submit: &Bound<'_, PyAny>, main: bool) {
        let mut taken = Vec::new();
        let mut spill = Vec::new();
        loop {
            let step = py.detach(|| {
                let mut state = lock(&self.state);
                loop {
                    if state.stop {
                        self.halt(&mut state);
                        return Step::Stop;
                    }
                    let room = self
                        .workers
                        .saturating_sub(state.core.borrow_dependent().running());
                    state.take(&mut taken, room, &mut spill);
                    if !taken.is_empty() || !spill.is_empty() {
                        return Step::Run;
                    }
                    if state.core.borrow_dependent().is_done() {
                        state.stop = true;
                        return Step::Stop;
                    }
                    let (guard, wait) = self
                        .wake
                        .wait_timeout(state, SIGNAL_POLL)
                        .unwrap_or_else(PoisonError::into_inner);
                    state = guard;
                    if wait.timed_out() {
                        return Step::Signals;
                    }
                }
            });
            if main && let Err(err) = py.check_signals() {
                self.fail(err, None);
                return;
            }
            match step {
                Step::Stop => return,
                Step::Signals => continue,
                Step::Run => {}
            }
            if let Err(err) = self.spill(py, &mut spill) {
                self.fail(err, None);
                return;
            }
            for node in taken.drain(..) {
                let job = Job {
                    run: Arc::clone(this),
                    node,
                };
                if let Err(err) = submit.call1((job,)) {
                    self.fail(err, None);
                    return;
                }
            }
        }
    }

    /// Runs `f`, a worker's loop: a panic in it (a bug) fails the run with
    /// an error naming it, so that the other workers stop rather than wait
    /// for this one's tasks for ever.
    fn guarded(&self, f: impl FnOnce() -> PyResult<()>) -> PyResult<()> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
            let message = format!(
                "a worker thread of the run failed: {}",
                panic_message(&*payload)
            );
            self.fail(PyRuntimeError::new_err(message), None);
            Ok(())
        })
    }

    /// Records the run's first error and stops it.
    fn fail(&self, error: PyErr, node: Option<NodeId>) {
        let mut state = lock(&self.state);
        if state.error.is_none() && state.overflow.is_none() {
            state.error = Some(error);
            state.failed = node;
        }
        self.halt(&mut state);
        drop(state);
        self.wake.notify_all();
    }

    /// Stops the run: no task starts any more.
    fn halt(&self, state: &mut State) {
        state.stop = true;
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Drops the results no task reads any more, and their spill files.
    fn free(&self, py: Python<'_>, freed: &mut Vec<NodeId>) {
        let values = self.values.bind(py);
        for node in freed.drain(..) {
            let i = node.index();
            if self.is_output[i] {
                continue;
            }
            if let (Some(spiller), Ok(slot)) = (&self.spiller, values.get_item(i))
                && slot.is(&self.spilled_mark)
            {
                // A file not removed now goes with the directory at the end.
                let _ = spiller.call_method1(py, intern!(py, "discard"), (i,));
            }
            // In range: every node has a slot.
            let _ = values.set_item(i, py.None());
        }
    }

    /// Writes the results the scheduler chose to disk and drops them from
    /// memory; one that cannot be written stays, and the scheduler counts
    /// it there again.
    fn spill(&self, py: Python<'_>, nodes: &mut Vec<NodeId>) -> PyResult<()> {
        let Some(spiller) = &self.spiller else {
            nodes.clear();
            return Ok(());
        };
        if self.stopped.load(Ordering::Relaxed) {
            // The run is over: nothing is read back any more.
            nodes.clear();
            return Ok(());
        }
        let values = self.values.bind(py);
        let mut kept = Vec::new();
        for node in nodes.drain(..) {
            let i = node.index();
            let value = values.get_item(i)?;
            if value.is(&self.spilled_mark) || value.is_none() {
                continue;
            }
            let key = self.graph.keys[i].bind(py);
            let written = spiller
                .call_method1(py, intern!(py, "write"), (i, &value, key))?
                .is_truthy(py)?;
            if written {
                values.set_item(i, &self.spilled_mark)?;
            } else {
                kept.push(node);
            }
        }
        if !kept.is_empty() {
            let mut state = lock(&self.state);
            for node in kept {
                state
                    .core
                    .with_dependent_mut(|_, scheduler| scheduler.unspillable(node));
            }
        }
        Ok(())
    }

    /// The result of `node`, read back from disk if it was spilled. Its
    /// file goes once it is read, so several tasks that need it at once
    /// take turns: one reads it, the others wait for it in memory.
    fn value<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyList>,
        node: NodeId,
    ) -> PyResult<Bound<'py, PyAny>> {
        let i = node.index();
        let Some(spiller) = &self.spiller else {
            return values.get_item(i);
        };
        loop {
            let value = values.get_item(i)?;
            if !value.is(&self.spilled_mark) {
                return Ok(value);
            }
            // Nothing between the look at the slot and the claim lets
            // another thread take the GIL.
            if let Some(_reading) = ReadingBack::claim(self, i) {
                let key = self.graph.keys[i].bind(py);
                let value = spiller
                    .bind(py)
                    .call_method1(intern!(py, "read"), (i, key))?;
                values.set_item(i, &value)?;
                return Ok(value);
            }
            py.detach(|| {
                let mut reading = lock(&self.reading);
                while reading.contains(&i) {
                    reading = self
                        .read_back
                        .wait(reading)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            });
        }
    }

    /// The error for a task the memory limit cannot hold.
    fn overflow_error(&self, py: Python<'_>, overflow: Overflow) -> PyErr {
        let key = self.graph.keys[overflow.node.index()].bind(py);
        let key = key
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "<key>".to_owned());
        let what = if overflow.with_inputs {
            "with its inputs"
        } else {
            "for its result alone"
        };
        PyMemoryError::new_err(format!(
            "task {key} needs {} bytes {what}, more than the memory limit of {} bytes",
            overflow.bytes, overflow.limit
        ))
    }

    /// Once the run has measured enough results to decide, measures no
    /// more and, where their bytes matter, goes on by an order in them (see
    /// [`crate::learn`]).
    fn learn<'s>(&'s self, mut state: MutexGuard<'s, State>) -> MutexGuard<'s, State> {
        let Some(learning) = state.learning.take_if(|l| l.ready()) else {
            return state;
        };
        let sizes = learning.decide();
        self.measuring.store(false, Ordering::Relaxed);
        match sizes {
            Some(sizes) => self.reorder(state, &sizes),
            None => state,
        }
    }

    /// Orders the graph again by `sizes`, and has the scheduler go on by
    /// that order; the run goes on by its first order where the order gives
    /// up (the run stopped). The lock stays held: other workers
    /// would otherwise go on by the first order meanwhile, far past where
    /// the second takes over (a run orders again once, as long as it took
    /// to order at first).
    fn reorder<'s>(
        &'s self,
        mut state: MutexGuard<'s, State>,
        sizes: &[u64],
    ) -> MutexGuard<'s, State> {
        let Some(reorder) = &self.reorder else {
            return state;
        };
        let order = reorder.order(&self.topology, sizes, &|| {
            self.stopped.load(Ordering::Relaxed)
        });
        if let Ok(order) = order {
            state.resume(order.priorities(), self.workers);
        }
        state
    }

    /// Runs `node`'s task with its hooks and keeps its result, measuring it
    /// where results are measured.
    fn execute(
        &self,
        py: Python<'_>,
        node: NodeId,
        worker_id: &Bound<'_, PyAny>,
    ) -> PyResult<Done> {
        let key = self.graph.keys[node.index()].bind(py);
        if let Some(pretask) = &self.pretask {
            pretask.call1(py, (key,))?;
        }
        let value = self.evaluate(py, node)?;
        let bytes = match &self.sizeof {
            Some(sizeof) => Some(measured_bytes(py, sizeof, &value)?),
            None => None,
        };
        let learned = match (&self.learn_sizeof, bytes) {
            (_, Some(bytes)) => Some(bytes),
            (Some(sizeof), None) if self.measuring.load(Ordering::Relaxed) => {
                Some(measured_bytes(py, sizeof, &value)?)
            }
            _ => None,
        };
        self.values.bind(py).set_item(node.index(), &value)?;
        if let Some(posttask) = &self.posttask {
            posttask.call1(py, (key, value, worker_id))?;
        }
        Ok(Done {
            node,
            bytes: bytes.unwrap_or(0),
            learned,
        })
    }

    /// Computes `node`'s result from its inputs, as dask 2026.8 runs a task.
    fn evaluate<'py>(&self, py: Python<'py>, node: NodeId) -> PyResult<Bound<'py, PyAny>> {
        let task = self.tasks[node.index()].bind(py);
        let values = self.values.bind(py);
        self.graph
            .evaluate(task, self.topology.dependencies(node), &mut |dep| {
                self.value(py, values, dep)
            })
    }
}

/// A task a worker has run.
struct Done {
    node: NodeId,
    /// Its result's bytes as `sizeof` measured them (0 where results are
    /// not measured).
    bytes: u64,
    /// Its result's bytes, where measured for the run to learn from.
    learned: Option<u64>,
}

impl State {
    /// Reports a task finished; the results no task reads any more go to
    /// `freed`.
    fn finished(&mut self, done: Done, freed: &mut Vec<NodeId>, spill: &mut Vec<NodeId>) {
        let Done {
            node,
            bytes,
            learned,
        } = done;
        if let (Some(learning), Some(learned)) = (&mut self.learning, learned) {
            learning.measured(node, learned);
        }
        let result = self
            .core
            .with_dependent_mut(|_, scheduler| scheduler.finished(node, bytes, freed, spill));
        if let Err(overflow) = result {
            self.overflowed(overflow);
        }
    }

    /// Goes on by the order of `priorities` (one per node): the tasks
    /// started keep their places, the others follow by it, and with
    /// several workers the bound on the results held is drawn from what it
    /// holds from the first task not started on. The bound still counts
    /// results: one in bytes held two workers back to the time of one on
    /// the TPC-H-like query of `scripts/real_work_bench.py` (6.2 s against
    /// 4.9 s), for little on the graph of `test_bytes.py`'s producers.
    fn resume(&mut self, priorities: &[u32], workers: usize) {
        self.core.with_dependent_mut(|inputs, scheduler| {
            let Ok(ranks) = scheduler.resumed_ranks(&inputs.needed, priorities) else {
                return;
            };
            let profile = (workers > 1).then(|| {
                let topology = &inputs.topology;
                OrderProfile::new(
                    topology,
                    topology,
                    &inputs.needed,
                    &ranks,
                    &[],
                    UNKNOWN_RESULT_BYTES,
                )
            });
            if inputs.resumed.set(Resumed { ranks, profile }).is_err() {
                return;
            }
            if let Some(resumed) = inputs.resumed.get() {
                let (held, held_bytes) = scheduler.holding();
                let head = scheduler.started();
                let held_limit = resumed
                    .profile
                    .as_ref()
                    .map(|profile| profile.held_limit_from(workers, head, held, held_bytes));
                scheduler.reorder(&resumed.ranks, held_limit);
            }
        });
    }

    /// Stops the run for a task the memory limit cannot hold.
    fn overflowed(&mut self, overflow: Overflow) {
        if self.error.is_none() && self.overflow.is_none() {
            self.overflow = Some(overflow);
            self.failed = Some(overflow.node);
        }
        self.stop = true;
    }

    /// Whether a worker may find a task to take: one handed back, or one
    /// the scheduler may start.
    fn has_next(&self) -> bool {
        !self.spare.is_empty() || self.core.borrow_dependent().has_next()
    }

    /// Starts tasks until `taken` holds `up_to` or none is ready; the
    /// results to spill first go to `spill`.
    fn take(&mut self, taken: &mut Vec<NodeId>, up_to: usize, spill: &mut Vec<NodeId>) {
        while taken.len() < up_to && !self.stop {
            match self
                .core
                .with_dependent_mut(|_, scheduler| scheduler.start_next(spill))
            {
                Ok(Some(node)) => taken.push(node),
                Ok(None) => break,
                Err(overflow) => self.overflowed(overflow),
            }
        }
    }
}

/// A spilled result one worker is reading back, claimed in
/// [`Shared::reading`] until it is dropped; the workers waiting for it are
/// then woken, to find it in memory (or, if the read failed, to try it
/// themselves).
struct ReadingBack<'a> {
    run: &'a Shared,
    node: usize,
}

impl<'a> ReadingBack<'a> {
    /// Claims `node`, unless another worker is reading it back. (The
    /// guard is made only for a claim: one made and dropped for a refusal
    /// would take the lock still held here, and free another's claim.)
    fn claim(run: &'a Shared, node: usize) -> Option<ReadingBack<'a>> {
        let claimed = lock(&run.reading).insert(node);
        claimed.then(|| ReadingBack { run, node })
    }
}

impl Drop for ReadingBack<'_> {
    fn drop(&mut self) {
        lock(&self.run.reading).remove(&self.node);
        self.run.read_back.notify_all();
    }
}

/// What a result counts for when `sizeof` cannot tell (as
/// `distributed.sizeof.safe_sizeof` counts it).
const FALLBACK_RESULT_BYTES: u64 = 1_000_000;

/// The most bytes a result is taken to take: more than any machine holds
/// (256 TiB), and far enough below 2^64 that sums of them do not overflow.
const MAX_RESULT_BYTES: u64 = 1 << 48;

/// `sizeof(value)` as bytes: [`FALLBACK_RESULT_BYTES`] where it raises an
/// `Exception` or gives anything but an integer from 0 to
/// [`MAX_RESULT_BYTES`] (a measure only observes: it never fails the run).
/// `taskgraph._sizes.SafeSizeof` does the same and warns.
fn measured_bytes(py: Python<'_>, sizeof: &Py<PyAny>, value: &Bound<'_, PyAny>) -> PyResult<u64> {
    match sizeof.call1(py, (value,)) {
        Ok(bytes) => Ok(bytes
            .extract::<u64>(py)
            .ok()
            .filter(|&bytes| bytes <= MAX_RESULT_BYTES)
            .unwrap_or(FALLBACK_RESULT_BYTES)),
        Err(err) if err.is_instance_of::<PyException>(py) => Ok(FALLBACK_RESULT_BYTES),
        // Ctrl-C, or a task's `SystemExit` in `__sizeof__`: not a measure.
        Err(err) => Err(err),
    }
}

/// One task of a run, submitted to a pool: calling it runs the task.
#[pyclass(frozen, module = "taskgraph._native")]
struct Job {
    run: Arc<Shared>,
    node: NodeId,
}

#[pymethods]
impl Job {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let run = &self.run;
        // Counted while it runs, so that the call waits for it; a job the
        // pool calls after the run ended does nothing.
        let Some(_running) = Running::enter(run) else {
            return Ok(());
        };
        run.guarded(|| {
            self.call(py);
            Ok(())
        })
    }
}

/// A job of the run running on the pool, counted in [`State::jobs`] from
/// [`Running::enter`] until it is dropped (called with the GIL held, as is
/// every lock of the state but in `detach`).
struct Running<'a> {
    run: &'a Shared,
}

impl<'a> Running<'a> {
    /// Counts a job in, unless the run is over.
    fn enter(run: &'a Shared) -> Option<Running<'a>> {
        let mut state = lock(&run.state);
        if state.stop {
            return None;
        }
        state.jobs += 1;
        Some(Running { run })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.run.state);
        state.jobs -= 1;
        let settled = state.jobs == 0;
        drop(state);
        if settled {
            self.run.wake.notify_all();
        }
    }
}

impl Job {
    fn call(&self, py: Python<'_>) {
        let run = &self.run;
        if run.stopped.load(Ordering::Relaxed) {
            return;
        }
        let worker_id = run.get_ident.bind(py).call0();
        let done = match worker_id.and_then(|id| run.execute(py, self.node, &id)) {
            Ok(done) => done,
            Err(err) => {
                run.fail(err, Some(self.node));
                return;
            }
        };
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        py.detach(|| {
            let mut state = lock(&run.state);
            state.finished(done, &mut freed, &mut spill);
            drop(run.learn(state));
            run.wake.notify_all();
        });
        run.free(py, &mut freed);
        if let Err(err) = run.spill(py, &mut spill) {
            run.fail(err, None);
        }
    }
}

/// What a result of no known size weighs in the order's byte profile: a
/// small Python object.
const UNKNOWN_RESULT_BYTES: u64 = 64;

/// The scheduler's hints from the sizes given or found: the known sizes
/// (not the estimates: a result measured tells more than a guess) and each
/// node's group as its kind. Both empty when no size is known, as without
/// hints.
fn hints(sizes: Sizes) -> (Vec<Option<u64>>, Vec<u32>) {
    if !sizes.any() {
        return (Vec::new(), Vec::new());
    }
    let Sizes { known, groups, .. } = sizes;
    (known, groups)
}

/// Locks a mutex; a poisoned one is still usable, since every critical
/// section here leaves its data consistent.
pub(crate) fn lock<U>(mutex: &Mutex<U>) -> MutexGuard<'_, U> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
