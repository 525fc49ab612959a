//! One worker's tasks, the results it holds and the messages it sends and
//! takes in. Which task runs next and when a result is freed or spilled is
//! graph-exec's scheduler; this carries it out and talks to the others.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use graph_core::{NodeId, Topology};
use graph_exec::TaskFailure;
use graph_exec::scheduler::Scheduler;
use graph_exec::store::ResultStore;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::InputHandle;

use super::{Leftovers, Outcome, Shared, WorkerResult, WorkerStats};
use crate::message::{Abort, Body, Message};
use crate::transfer::{self, Incoming, Outgoing, Piece, Received};
use crate::{Error, Runner};

/// What a worker sends into its dataflow's exchange channel.
pub(super) type Outbox<V> = InputHandle<u64, CapacityContainerBuilder<Vec<Message<V>>>>;

/// The most tasks a worker runs between two looks at its channels.
const BATCH: usize = 256;

/// How long a worker runs tasks between two looks at its channels.
const SLICE: Duration = Duration::from_micros(500);

/// The tasks of one worker and the results it holds. Which task runs next
/// and when a result is freed is graph-exec's [`Scheduler`], the executor
/// core every executor of the workspace shares; this adds the messages.
pub(super) struct State<'s, V> {
    shared: &'s Shared<V>,
    topology: &'s Topology,
    scheduler: Scheduler<'s>,
    me: u32,
    peers: u32,
    /// Per node: its result, while a task of this worker still reads it
    /// (in memory, or spilled to this worker's private directory).
    store: ResultStore<V>,
    /// Results the scheduler freed, to drop.
    freed: Vec<NodeId>,
    /// Results the scheduler chose to spill, to write to disk.
    spill: Vec<NodeId>,
    /// Large results on their way to other workers, in pieces.
    outgoing: Outgoing,
    /// Large results on their way here, in pieces.
    incoming: Incoming,
    /// Per worker: the last node sent to it (plus one), so that a result goes
    /// once to each worker however many of its tasks read it.
    sent_to: Vec<u32>,
    /// Worker 0 only: per output, its value.
    outputs: Vec<Option<V>>,
    /// Worker 0 only: per node, its position among the outputs plus one.
    output_slot: Vec<u32>,
    finished: Vec<Option<WorkerStats>>,
    abort: Option<Abort>,
    /// Whether messages were sent since the epoch last advanced.
    pub(super) unsent: bool,
    /// The bytes of whole results among them.
    unsent_bytes: u64,
    stats: WorkerStats,
    /// How many results are fed into this worker (an attempt after a loss).
    fed: usize,
    /// The tasks this worker has run or received the results of, when the
    /// run keeps what it holds for a further attempt after a loss.
    ran: Option<Vec<NodeId>>,
    /// Its results sent to other processes, when the run keeps what it
    /// holds and has no memory limit: should a reader's process be lost,
    /// the result is there to remake the reader's, rather than being made
    /// again itself (and what it was made from, and so on back).
    sent_copies: Option<Vec<(NodeId, V)>>,
}

impl<'s, V: timely::ExchangeData + Clone> State<'s, V> {
    pub(super) fn new(shared: &'s Shared<V>, me: usize, peers: usize) -> State<'s, V> {
        let graph = &*shared.graph;
        let topology = match &shared.attempt_topology {
            Some(topology) => topology,
            None => graph.topology().expect("checked before the run"),
        };
        let n = graph.len();
        let mut config = shared.ranking.config(topology, topology, &shared.needed);
        config.mine = Some(&shared.mine[me - shared.first_worker]);
        config.memory_limit = shared.worker_memory_limit;
        config.expected_bytes = &shared.expected_bytes;
        config.kinds = &shared.kinds;
        // A limit across processes is always the user's own: it holds from
        // the first task.
        config.measure_first = true;
        let scheduler = Scheduler::new(&config);
        let mut state = State {
            shared,
            topology,
            scheduler,
            me: me as u32,
            peers: peers as u32,
            store: ResultStore::new(n),
            freed: Vec::new(),
            spill: Vec::new(),
            outgoing: Outgoing::new(
                me as u32,
                peers,
                shared
                    .worker_memory_limit
                    .map_or(transfer::MAX_WINDOW, transfer::window),
            ),
            incoming: Incoming::new(peers),
            sent_to: vec![0; peers],
            outputs: Vec::new(),
            output_slot: Vec::new(),
            finished: Vec::new(),
            abort: None,
            unsent: false,
            unsent_bytes: 0,
            stats: WorkerStats {
                worker: me,
                ..WorkerStats::default()
            },
            fed: 0,
            ran: shared.keep.then(Vec::new),
            sent_copies: (shared.keep && shared.worker_memory_limit.is_none()).then(Vec::new),
        };
        if me == 0 {
            let outputs = shared.job.outputs();
            state.outputs = (0..outputs.len()).map(|_| None).collect();
            state.output_slot = vec![0; n];
            for (slot, node) in outputs.iter().enumerate() {
                state.output_slot[node.index()] = slot as u32 + 1;
            }
            state.finished = (0..peers).map(|_| None).collect();
        }
        state
    }

    /// Counts `count` results fed into this worker as no tasks run.
    pub(super) fn feeds(&mut self, count: usize) {
        self.fed = count;
    }

    pub(super) fn has_ready(&self) -> bool {
        self.abort.is_none() && self.scheduler.has_next()
    }

    /// Whether this worker has nothing left to run, send or (worker 0)
    /// receive: requested results in pieces need its credit to come.
    pub(super) fn finished(&self) -> bool {
        self.abort.is_some()
            || (self.scheduler.is_done()
                && self.outgoing.is_empty()
                && self.outputs.iter().all(Option::is_some))
    }

    /// Takes in a message: a result for this worker's tasks, a stop, or (at
    /// worker 0) a requested result or another worker's counters. The
    /// runner, where there is one, tells a result's size.
    pub(super) fn receive(
        &mut self,
        message: Message<V>,
        runner: Option<&dyn Runner<Value = V>>,
        input: Option<&mut Outbox<V>>,
    ) {
        match message.body {
            // After a stop, results are dropped: nothing runs any more. A
            // worker that has closed its input has no task left to read one.
            Body::Value { node, value } => {
                if let Some(input) = input
                    && self.abort.is_none()
                {
                    self.arrived(NodeId::from_u32(node), value, runner, input);
                }
            }
            Body::Piece(piece) => {
                if let Some(input) = input
                    && self.abort.is_none()
                {
                    self.piece(&piece, runner, input);
                }
            }
            Body::Credit { from, bytes } => self.outgoing.granted(from, bytes),
            Body::Abort(abort) => {
                if self.abort.is_none() {
                    self.abort = Some(abort);
                }
            }
            Body::Output { node, value } => {
                let slot = self.output_slot[node as usize];
                self.outputs[slot as usize - 1] = Some(value);
            }
            Body::Finished(stats) => {
                let worker = stats.worker;
                self.finished[worker] = Some(stats);
            }
        }
    }

    /// Takes in the result of `node`, computed by another worker.
    fn arrived(
        &mut self,
        node: NodeId,
        value: V,
        runner: Option<&dyn Runner<Value = V>>,
        input: &mut Outbox<V>,
    ) {
        let bytes = runner.map_or(0, |runner| runner.bytes(node, &value));
        // Another worker ran it: after a loss, that says it ran, should
        // that worker's process be the one lost.
        if let Some(seen) = &mut self.ran {
            seen.push(node);
        }
        if self.scheduler.reads(node) {
            self.store.put(node, value);
        }
        let arrived = self.scheduler.arrived(node, bytes, &mut self.spill);
        self.settle(arrived, input);
    }

    /// Takes in a piece of a large result: the first reserves room for the
    /// whole under the memory limit, the last decodes it.
    fn piece(
        &mut self,
        piece: &Piece,
        runner: Option<&dyn Runner<Value = V>>,
        input: &mut Outbox<V>,
    ) {
        let Piece {
            node,
            output,
            total,
            ..
        } = *piece;
        let failed = |message: String| Abort::Transfer {
            node,
            worker: self.me,
            message,
        };
        let encoded = match self.incoming.add(piece) {
            Ok(Received::Started) => {
                if !output {
                    let incoming =
                        self.scheduler
                            .incoming(NodeId::from_u32(node), total, &mut self.spill);
                    self.settle(incoming, input);
                }
                return;
            }
            Ok(Received::More) => return,
            Ok(Received::Whole(encoded)) => encoded,
            Err(message) => return self.abort(failed(message), input),
        };
        let Some(runner) = runner else {
            return;
        };
        let value: V = match runner.decode(&encoded) {
            Ok(value) => value,
            Err(err) => {
                return self.abort(failed(format!("its pieces do not decode: {err}")), input);
            }
        };
        drop(encoded);
        if output {
            let slot = self.output_slot[node as usize];
            self.outputs[slot as usize - 1] = Some(value);
        } else {
            self.arrived(NodeId::from_u32(node), value, Some(runner), input);
        }
    }

    /// Closes the epoch, which pushes what was sent out of timely's
    /// buffers to the workers it goes to.
    pub(super) fn flush(&mut self, input: &mut Outbox<V>) {
        let next = input.time() + 1;
        input.advance_to(next);
        self.unsent = false;
        self.unsent_bytes = 0;
    }

    /// Grants each worker the credit owed to it, and sends the pieces the
    /// credit lets out, each in an epoch of its own so that timely's
    /// buffers hold one at a time.
    pub(super) fn pump(&mut self, input: &mut Outbox<V>) {
        for (to, bytes) in self.incoming.take_owed() {
            self.unsent = true;
            input.send(Message {
                to,
                body: Body::Credit {
                    from: self.me,
                    bytes,
                },
            });
        }
        while self.abort.is_none()
            && let Some((to, piece)) = self.outgoing.next_piece()
        {
            input.send(Message {
                to,
                body: Body::Piece(piece),
            });
            self.flush(input);
        }
        let sending = self.outgoing.queued_bytes();
        self.scheduler.sending(sending, &mut self.spill);
        self.settle(Ok(()), input);
    }

    /// Runs ready tasks for a slice of time, sending their results.
    pub(super) fn run_ready(&mut self, runner: &mut dyn Runner<Value = V>, input: &mut Outbox<V>) {
        let started = Instant::now();
        let mut ran = 0;
        while self.abort.is_none() {
            let next = self.scheduler.start_next(&mut self.spill);
            let Some(node) = self.settle(next, input).flatten() else {
                break;
            };
            self.run_task(node, runner, input);
            ran += 1;
            // Results go out only when the worker next looks at its
            // channels: after a slow task at once, so that the workers that
            // wait for it never wait on this worker's next tasks as well.
            if ran >= BATCH || started.elapsed() > SLICE {
                break;
            }
        }
    }

    fn run_task(
        &mut self,
        node: NodeId,
        runner: &mut dyn Runner<Value = V>,
        input: &mut Outbox<V>,
    ) {
        // Why an input could not be read back from disk, for the error:
        // the runner itself only sees that the input is not there.
        let mut unread: Option<(NodeId, String)> = None;
        let store = &self.store;
        let result = catch_unwind(AssertUnwindSafe(|| {
            runner.run(node, &mut |dep: NodeId| {
                let read = store.get(dep, |file| bincode::deserialize_from(file));
                read.unwrap_or_else(|err| {
                    unread.get_or_insert((dep, err.to_string()));
                    None
                })
            })
        }))
        .unwrap_or_else(|payload| Err(TaskFailure::panic(None, &*payload)));
        let value = match (result, unread) {
            (Ok(value), _) => value,
            (Err(_), Some((missing, message))) => {
                let abort = Abort::ReadBack {
                    node: node.as_u32(),
                    input: missing.as_u32(),
                    worker: self.me,
                    message,
                };
                self.abort(abort, input);
                return;
            }
            (Err(failure), None) => {
                let abort = Abort::Task {
                    node: node.index() as u32,
                    worker: self.me,
                    failure,
                };
                self.abort(abort, input);
                return;
            }
        };
        if let Some(ran) = &mut self.ran {
            ran.push(node);
        }
        if let Some(progress) = &self.shared.progress {
            progress.ran(node);
        }
        if let Some(told) = &self.shared.told {
            told.ran(node);
        }
        let bytes = runner.bytes(node, &value);
        // Pieces bound memory under a limit; without one, only results too
        // large for one frame go in pieces.
        let large = match self.shared.worker_memory_limit {
            Some(_) => bytes >= transfer::LARGE,
            None => bytes >= transfer::WHOLE_MAX,
        };
        let mut encoded = Encoded::new(&value, &*runner, bytes, large);
        let elsewhere = self.send(node, &mut encoded, input);
        if elsewhere && let Some(copies) = &mut self.sent_copies {
            copies.push((node, value.clone()));
        }
        if self.output_slot.get(node.index()).is_some_and(|&s| s > 0) {
            let slot = self.output_slot[node.index()] as usize - 1;
            self.outputs[slot] = Some(value.clone());
        } else if self.me != 0 && self.shared.is_output[node.index()] {
            self.stats.outputs_sent += 1;
            self.deliver(node, 0, true, &mut encoded, input);
        }
        drop(encoded);
        let sending = self.outgoing.queued_bytes();
        self.scheduler.sending(sending, &mut self.spill);
        if self.scheduler.reads(node) {
            self.store.put(node, value);
        }
        let finished = self
            .scheduler
            .finished(node, bytes, &mut self.freed, &mut self.spill);
        for freed in self.freed.drain(..) {
            self.store.free(freed);
        }
        self.settle(finished, input);
    }

    /// Carries out what the scheduler decided: writes the results it chose
    /// to spill to disk; a result or task too large for the memory limit,
    /// or a disk that fails, stops the run. Gives back the scheduler's
    /// answer, or `None` once the run stops.
    fn settle<T>(
        &mut self,
        decided: Result<T, graph_exec::scheduler::Overflow>,
        input: &mut Outbox<V>,
    ) -> Option<T> {
        let decided = match decided {
            Ok(decided) => decided,
            Err(overflow) => {
                let abort = Abort::Memory {
                    node: overflow.node.as_u32(),
                    worker: self.me,
                    bytes: overflow.bytes,
                    limit: overflow.limit,
                    with_inputs: overflow.with_inputs,
                };
                self.abort(abort, input);
                return None;
            }
        };
        for node in std::mem::take(&mut self.spill) {
            let written = self
                .store
                .spill(node, |value, out| bincode::serialize_into(out, value));
            if let Err(err) = written {
                let abort = Abort::Spill {
                    node: node.as_u32(),
                    worker: self.me,
                    message: err.to_string(),
                };
                self.abort(abort, input);
                return None;
            }
        }
        self.stats.spilled_bytes = self.scheduler.spilled_bytes();
        Some(decided)
    }

    /// Sends `node`'s result once to every other worker with a task that
    /// reads it, counting the cut edges; whether it went to another process.
    fn send(&mut self, node: NodeId, value: &mut Encoded<'_, V>, input: &mut Outbox<V>) -> bool {
        let threads = self.shared.mine.len().max(1) as u32;
        let mut elsewhere = false;
        let placement = self.shared.job.placement();
        let size = self.shared.graph.task(node).size.unwrap_or(1);
        let stamp = node.index() as u32 + 1;
        for &dependent in self.topology.dependents(node) {
            let i = dependent.index();
            let to = placement[i];
            if !self.shared.needed[i] || to == self.me {
                continue;
            }
            self.stats.cut_edges += 1;
            self.stats.transfer_bytes += size;
            if self.sent_to[to as usize] != stamp {
                self.sent_to[to as usize] = stamp;
                self.stats.values_sent += 1;
                elsewhere |= to / threads != self.me / threads;
                self.deliver(node, to, false, value, input);
            }
        }
        elsewhere
    }

    /// Sends `node`'s result to worker `to`, for its tasks or (with
    /// `output`) as a requested result: a small one in a message of its
    /// own, a large one queued to go out in pieces.
    fn deliver(
        &mut self,
        node: NodeId,
        to: u32,
        output: bool,
        value: &mut Encoded<'_, V>,
        input: &mut Outbox<V>,
    ) {
        let node_u32 = node.index() as u32;
        if !value.large {
            let bytes = value.bytes;
            let value = value.value.clone();
            let body = if output {
                Body::Output {
                    node: node_u32,
                    value,
                }
            } else {
                Body::Value {
                    node: node_u32,
                    value,
                }
            };
            self.unsent = true;
            input.send(Message { to, body });
            // Whole results go out before they add up to more than a frame
            // may hold.
            self.unsent_bytes += bytes;
            if self.unsent_bytes >= transfer::WHOLE_MAX {
                self.flush(input);
            }
            return;
        }
        match value.encoded() {
            Ok(encoded) => self.outgoing.push(to, node_u32, output, encoded),
            Err(message) => {
                let abort = Abort::Transfer {
                    node: node_u32,
                    worker: to,
                    message,
                };
                self.abort(abort, input);
            }
        }
    }

    /// Stops this worker and tells every other one.
    pub(super) fn abort(&mut self, abort: Abort, input: &mut Outbox<V>) {
        self.outgoing.clear();
        self.incoming.clear();
        for to in (0..self.peers).filter(|&w| w != self.me) {
            input.send(Message {
                to,
                body: Body::Abort(abort.clone()),
            });
            self.unsent = true;
        }
        self.abort = Some(abort);
    }

    /// This worker's counters so far.
    pub(super) fn stats(&self) -> WorkerStats {
        WorkerStats {
            // Results fed into an attempt after a loss are no tasks run.
            tasks_run: self.scheduler.tasks_run().saturating_sub(self.fed),
            peak_held: self.scheduler.peak_held(),
            peak_bytes: self.scheduler.peak_bytes(),
            spilled_bytes: self.scheduler.spilled_bytes(),
            ..self.stats.clone()
        }
    }

    /// What this worker has after a loss, for a further attempt: the tasks
    /// it ran, and every result it holds (its own and those sent to it, in
    /// memory or read back from disk; at worker 0 the outputs gathered). A
    /// result that cannot be read back is left out: it is made again.
    pub(super) fn leftovers(&self) -> Leftovers<V> {
        let n = self.shared.graph.len();
        let mut held: Vec<(NodeId, V)> = (0..n)
            .filter_map(|i| {
                let node = NodeId::new(i);
                let value = self.store.get(node, |file| bincode::deserialize_from(file));
                value.ok().flatten().map(|value| (node, value))
            })
            .collect();
        for (node, value) in self.shared.job.outputs().iter().zip(&self.outputs) {
            if let Some(value) = value {
                held.push((*node, value.clone()));
            }
        }
        held.extend(self.sent_copies.iter().flatten().cloned());
        Leftovers {
            finished: self.ran.clone().unwrap_or_default(),
            held,
            watch: None,
        }
    }

    pub(super) fn into_result(mut self) -> WorkerResult<V> {
        let graph = &*self.shared.graph;
        let stats = self.stats();
        match self.abort.take() {
            Some(Abort::Task {
                node,
                worker,
                failure,
            }) => Err(Error::Task {
                key: graph.key(NodeId::from_u32(node)).clone(),
                op: failure.op,
                message: failure.message,
                panicked: failure.panicked,
                worker: worker as usize,
            }),
            Some(Abort::Runner { worker, message }) => Err(Error::Runner {
                worker: worker as usize,
                message,
            }),
            Some(Abort::Memory {
                node,
                worker,
                bytes,
                limit,
                with_inputs,
            }) => Err(Error::TooLarge {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                bytes,
                limit,
                with_inputs,
            }),
            Some(Abort::ReadBack {
                node,
                input,
                worker,
                message,
            }) => Err(Error::ReadBack {
                key: graph.key(NodeId::from_u32(node)).clone(),
                input: graph.key(NodeId::from_u32(input)).clone(),
                worker: worker as usize,
                message,
            }),
            Some(Abort::Transfer {
                node,
                worker,
                message,
            }) => Err(Error::Transfer {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                message,
            }),
            Some(Abort::Spill {
                node,
                worker,
                message,
            }) => Err(Error::Spill {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                message,
            }),
            None if self.me != 0 => Ok(None),
            None => {
                let outputs = self.shared.job.outputs();
                let mut values = Vec::with_capacity(outputs.len());
                for (node, value) in outputs.iter().zip(self.outputs) {
                    let value = value.ok_or_else(|| Error::Disconnected {
                        detail: format!(
                            "the result of {} never reached worker 0",
                            graph.key(*node)
                        ),
                    })?;
                    values.push((*node, value));
                }
                self.finished[0] = Some(stats);
                let workers = self
                    .finished
                    .into_iter()
                    .enumerate()
                    .map(|(worker, stats)| {
                        stats.ok_or_else(|| Error::Disconnected {
                            detail: format!("worker {worker} never reported its counters"),
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Some(Outcome { values, workers }))
            }
        }
    }
}

/// A result to send, and its encoding once one receiver needs it in pieces
/// (one encoding for all of them).
struct Encoded<'v, V> {
    value: &'v V,
    runner: &'v dyn Runner<Value = V>,
    /// Its size, as the runner measures it.
    bytes: u64,
    /// Whether it is large enough to go in pieces.
    large: bool,
    encoded: Option<Arc<Vec<u8>>>,
}

impl<'v, V: serde::Serialize> Encoded<'v, V> {
    pub(super) fn new(
        value: &'v V,
        runner: &'v dyn Runner<Value = V>,
        bytes: u64,
        large: bool,
    ) -> Encoded<'v, V> {
        Encoded {
            value,
            runner,
            bytes,
            large,
            encoded: None,
        }
    }

    fn encoded(&mut self) -> Result<Arc<Vec<u8>>, String> {
        if let Some(encoded) = &self.encoded {
            return Ok(Arc::clone(encoded));
        }
        let encoded = Arc::new(
            self.runner
                .encode(self.value)
                .map_err(|err| format!("it does not encode: {err}"))?,
        );
        self.encoded = Some(Arc::clone(&encoded));
        Ok(encoded)
    }
}
