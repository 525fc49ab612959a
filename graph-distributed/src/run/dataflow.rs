//! One worker's timely dataflow: an exchange channel that routes each
//! message to the worker it names, and the loop that takes in messages, runs
//! ready tasks, sends what they give and ends when every worker has.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::rc::Rc;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::Duration;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use graph_core::NodeId;
use graph_exec::TaskFailure;

use super::worker::{Outbox, State};
use super::{Shared, WorkerResult};
use crate::Runner;
use crate::message::{Abort, Body, Message};

/// How long an idle worker sleeps before it looks again, at most.
const PARK: Duration = Duration::from_millis(100);

/// One worker's share of the run.
pub(super) fn work<V: timely::ExchangeData + Clone>(
    worker: &mut Worker,
    shared: &Shared<V>,
) -> WorkerResult<V> {
    let inbox: Rc<RefCell<Vec<Message<V>>>> = Rc::default();
    let mut input: Outbox<V> = InputHandle::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let inbox = Rc::clone(&inbox);
        scope
            .input_from(&mut input)
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|message: &Message<V>| u64::from(message.to)),
                "Deliver",
                move |_capability, _info| {
                    move |input, _output| {
                        input.for_each(|_time, data| inbox.borrow_mut().append(data));
                    }
                },
            )
            .probe_with(&probe);
    });

    let graph = &*shared.graph;
    let me = worker.index();
    let mut state = State::new(shared, me, worker.peers());
    let fed = std::mem::take(
        &mut shared
            .fed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(me - shared.first_worker)
            .map(std::mem::take)
            .unwrap_or_default(),
    );
    state.feeds(fed.len());
    let mut runner = match (shared.make_runner)(graph, me) {
        Ok(runner) if fed.is_empty() => Some(runner),
        Ok(runner) => Some(Box::new(Fed::new(runner, fed)) as Box<dyn Runner<Value = V> + '_>),
        Err(error) => {
            state.abort(
                Abort::Runner {
                    worker: me as u32,
                    message: error.to_string(),
                },
                &mut input,
            );
            None
        }
    };
    let mut input = Some(input);
    loop {
        // A turn of the loop panics when timely finds a connection broken:
        // what this worker holds is put aside first, for a further attempt.
        let turn = catch_unwind(AssertUnwindSafe(|| {
            if let Some(err) = shared.stop_reason() {
                return Turn::Stop(err);
            }
            let delivered = std::mem::take(&mut *inbox.borrow_mut());
            for message in delivered {
                state.receive(message, runner.as_deref(), input.as_mut());
            }
            if let (Some(runner), Some(handle)) = (runner.as_mut(), input.as_mut()) {
                state.run_ready(&mut **runner, handle);
            }
            if let Some(handle) = input.as_mut() {
                state.pump(handle);
            }
            if state.unsent
                && let Some(handle) = input.as_mut()
            {
                state.flush(handle);
            }
            if state.finished()
                && let Some(mut handle) = input.take()
            {
                if me != 0 {
                    handle.send(Message {
                        to: 0,
                        body: Body::Finished(state.stats()),
                    });
                }
                handle.close();
            }
            if probe.done() {
                shared.completed.fetch_add(1, Ordering::SeqCst);
                return Turn::Done;
            }
            if state.has_ready() && input.is_some() {
                worker.step();
            } else {
                worker.step_or_park(Some(PARK));
            }
            Turn::Go
        }));
        match turn {
            Ok(Turn::Go) => {}
            // The dataflow has ended everywhere: the run is done, and what
            // this worker holds is needed by no further attempt.
            Ok(Turn::Done) => break,
            Ok(Turn::Stop(err)) => {
                if err.kind().is_loss() {
                    shared.keep_leftovers(|| state.leftovers());
                }
                return Err(err);
            }
            Err(payload) => {
                shared.keep_leftovers(|| state.leftovers());
                resume_unwind(payload);
            }
        }
    }
    runner.take();
    state.into_result()
}

/// How a turn of a worker's loop ends.
enum Turn {
    /// On to the next turn.
    Go,
    /// The dataflow has ended everywhere.
    Done,
    /// The run stops early.
    Stop(crate::Error),
}

/// A worker's runner in an attempt after a loss: the results fed in are
/// given as they are (once each), every other task runs.
struct Fed<'g, V> {
    inner: Box<dyn Runner<Value = V> + 'g>,
    values: HashMap<NodeId, V>,
}

impl<'g, V> Fed<'g, V> {
    fn new(inner: Box<dyn Runner<Value = V> + 'g>, values: Vec<(NodeId, V)>) -> Fed<'g, V> {
        Fed {
            inner,
            values: values.into_iter().collect(),
        }
    }
}

impl<V: timely::ExchangeData> Runner for Fed<'_, V> {
    type Value = V;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<V>,
    ) -> Result<V, TaskFailure> {
        match self.values.remove(&node) {
            Some(value) => Ok(value),
            None => self.inner.run(node, input),
        }
    }

    fn bytes(&self, node: NodeId, value: &V) -> u64 {
        self.inner.bytes(node, value)
    }

    fn encode(&self, value: &V) -> Result<Vec<u8>, String> {
        self.inner.encode(value)
    }

    fn decode(&self, bytes: &[u8]) -> Result<V, String> {
        self.inner.decode(bytes)
    }
}
