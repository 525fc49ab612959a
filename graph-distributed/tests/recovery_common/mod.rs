//! What the recovery tests share: a runner whose values mix each task's node
//! with its inputs' (so that a wrong or missing input shows), recording the
//! tasks it runs and sleeping as long as asked, and the values a sequential
//! fold gives.

#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use graph_core::{Dag, NodeId, TaskGraph, Topology};
use graph_distributed::{Runner, RunnerError};
use graph_exec::TaskFailure;

/// Each task's value: its node mixed with its inputs'.
pub struct Mix<'g> {
    pub topology: &'g Topology,
    /// The tasks run, in the order they ran.
    pub ran: Arc<Mutex<Vec<NodeId>>>,
    /// How long each task sleeps.
    pub nap: Duration,
}

pub fn mix(node: NodeId, inputs: impl Iterator<Item = u64>) -> u64 {
    inputs.fold(node.as_u32() as u64 * 0x9e37_79b9 + 1, |acc, x| {
        acc.rotate_left(7) ^ x.wrapping_mul(0x100_0000_01b3)
    })
}

impl Runner for Mix<'_> {
    type Value = u64;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ) -> Result<u64, TaskFailure> {
        if !self.nap.is_zero() {
            std::thread::sleep(self.nap);
        }
        self.ran.lock().unwrap().push(node);
        let inputs: Vec<u64> = self
            .topology
            .dependencies(node)
            .iter()
            .map(|&dep| input(dep).expect("every input is there"))
            .collect();
        Ok(mix(node, inputs.into_iter()))
    }
}

/// A runner that records nothing anyone reads and does not sleep.
pub fn quick(
    graph: &TaskGraph,
    _worker: usize,
) -> Result<Box<dyn Runner<Value = u64> + '_>, RunnerError> {
    Ok(Box::new(Mix {
        topology: graph.topology()?,
        ran: Arc::default(),
        nap: Duration::ZERO,
    }))
}

/// Every task's value, in topological order.
pub fn oracle(graph: &TaskGraph) -> Vec<u64> {
    let topology = graph.topology().unwrap();
    let mut values = vec![0; graph.len()];
    for &node in topology.topological_order() {
        let inputs = topology
            .dependencies(node)
            .iter()
            .map(|d| values[d.index()]);
        values[node.index()] = mix(node, inputs);
    }
    values
}
