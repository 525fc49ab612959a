//! The checkers behind the `distributed_equals_sequential` and
//! `distributed_recovery` fuzz targets, so that the targets are short
//! shims and `cargo test` can replay their inputs.

use std::sync::Arc;

use graph_core::{Dag, NodeId, TaskGraph, Topology};

use graph_exec::TaskFailure;

use crate::recovery::{Attempt, Holdings, plan_recovery};
use crate::{Cluster, Error, Job, Run, Runner};

/// `distributed_equals_sequential`: on `workers` (1 to 4) workers of one
/// process, under a placement, priorities and requested nodes drawn from
/// `seed`, a run gives every requested node the value a sequential fold over
/// the graph gives it, runs each needed task once on its worker, and counts
/// exactly the needed edges the placement cuts. A third of the tasks (drawn
/// from `seed`) say their results are large, and half the runs are under a
/// memory limit (one that never binds), so that those results travel in
/// pieces within the receivers' credit. When `seed` also picks a failing task, the
/// run fails with that task, on its worker.
pub fn distributed_equals_sequential(graph: &TaskGraph, workers: usize, seed: u64) {
    let Ok(topology) = graph.topology() else {
        return;
    };
    let n = graph.len();
    if n == 0 {
        return;
    }
    let workers = workers.clamp(1, 4);
    let mut state = seed;
    let mut draw = move |bound: usize| (splitmix(&mut state) % bound as u64) as usize;
    let placement: Vec<u32> = (0..n).map(|_| draw(workers) as u32).collect();
    let priorities: Vec<u32> = (0..n).map(|_| draw(1 << 20) as u32).collect();
    let outputs: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependents(node).is_empty() || draw(4) == 0)
        .collect();
    let needed = topology
        .needed_by(&outputs)
        .expect("the outputs are nodes of the graph");
    let needed_nodes: Vec<NodeId> = topology.node_ids().filter(|n| needed[n.index()]).collect();
    let failing = (draw(4) == 0).then(|| needed_nodes[draw(needed_nodes.len())]);
    let large: Vec<bool> = (0..n).map(|_| draw(3) == 0).collect();

    let mut job = Job::new(outputs.iter().copied(), placement.clone()).with_priorities(priorities);
    if draw(2) == 0 {
        job = job.with_memory_limit(1 << 40);
    }
    let result = Run::new(
        Arc::new(graph.clone()),
        job,
        &Cluster::local(workers),
        move |graph, _| {
            let topology = graph.topology()?;
            Ok(Box::new(Fold {
                topology,
                failing,
                large: large.clone(),
            }))
        },
    )
    .run();

    if let Some(node) = failing {
        match result {
            Err(Error::Task { key, worker, .. }) => {
                assert_eq!(&key, graph.key(node), "the failing task is reported");
                assert_eq!(worker, placement[node.index()] as usize, "on its worker");
            }
            other => panic!("task {} fails, but the run gave {other:?}", graph.key(node)),
        }
        return;
    }
    let outcome = result
        .expect("a run without a failing task succeeds")
        .expect("one process is process 0");
    let expected = fold(topology);
    let got: Vec<(NodeId, u64)> = outcome.values.clone();
    let want: Vec<(NodeId, u64)> = outputs.iter().map(|&o| (o, expected[o.index()])).collect();
    assert_eq!(got, want, "the requested values");
    assert_eq!(
        outcome.tasks_run(),
        needed_nodes.len(),
        "each needed task runs once"
    );
    for stats in &outcome.workers {
        let placed = needed_nodes
            .iter()
            .filter(|n| placement[n.index()] as usize == stats.worker)
            .count();
        assert_eq!(
            stats.tasks_run, placed,
            "worker {} runs its own tasks",
            stats.worker
        );
    }
    let cut = needed_nodes
        .iter()
        .flat_map(|&n| topology.dependencies(n).iter().map(move |&d| (d, n)))
        .filter(|&(d, n)| placement[d.index()] != placement[n.index()])
        .count();
    assert_eq!(
        outcome.cut_edges(),
        cut,
        "the cut edges are the placement's"
    );
    assert!(outcome.values_sent() <= cut);
}

/// Each task: its index mixed with its inputs in dependency order.
struct Fold<'g> {
    topology: &'g Topology,
    failing: Option<NodeId>,
    /// Per task: whether its result says it is large.
    large: Vec<bool>,
}

impl Runner for Fold<'_> {
    type Value = u64;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ) -> Result<u64, TaskFailure> {
        if self.failing == Some(node) {
            return Err(TaskFailure::new("fail", "failed on purpose"));
        }
        let mut inputs = Vec::new();
        for &dep in self.topology.dependencies(node) {
            inputs.push(input(dep).expect("every input has arrived"));
        }
        Ok(mix(node, &inputs))
    }

    fn bytes(&self, node: NodeId, _value: &u64) -> u64 {
        if self.large[node.index()] {
            crate::transfer::LARGE
        } else {
            8
        }
    }
}

fn mix(node: NodeId, inputs: &[u64]) -> u64 {
    inputs
        .iter()
        .enumerate()
        .fold(node.index() as u64 + 1, |acc, (i, &x)| {
            acc.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(x.rotate_left(i as u32 % 64))
        })
}

/// Every node's value, computed one node at a time in topological order.
fn fold(topology: &Topology) -> Vec<u64> {
    let mut values = vec![0; topology.node_count()];
    for &node in topology.topological_order() {
        let inputs: Vec<u64> = topology
            .dependencies(node)
            .iter()
            .map(|d| values[d.index()])
            .collect();
        values[node.index()] = mix(node, &inputs);
    }
    values
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `distributed_recovery`: a run of `graph` over 2 to 4 processes of
/// one or two workers (drawn from `seed`, with the placement, the requested
/// nodes, how far the run got and which processes are lost) is cut short;
/// what each process holds then is what the runtime keeps (a result with
/// its producer while a reader there or an output needs it, with each
/// reader's process until its readers there ran, and, as without a memory
/// limit, with its producer once sent to another process). The recovery
/// plan then runs no task whose result a survivor holds, every task it runs
/// is needed, and the attempt on the survivors, fed their results, gives
/// every requested node the sequential fold's value and runs exactly the
/// plan's tasks.
pub fn recovery_equals_sequential(graph: &TaskGraph, processes: usize, seed: u64) {
    let Ok(topology) = graph.topology() else {
        return;
    };
    let n = graph.len();
    if n == 0 {
        return;
    }
    let processes = processes.clamp(2, 4);
    let mut state = seed;
    let mut draw = move |bound: usize| (splitmix(&mut state) % bound as u64) as usize;
    let threads = 1 + draw(2);
    let workers = processes * threads;
    let placement: Vec<u32> = (0..n).map(|_| draw(workers) as u32).collect();
    let outputs: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependents(node).is_empty() || draw(4) == 0)
        .collect();
    let job = Job::new(outputs.iter().copied(), placement.clone());
    let process_of = |node: NodeId| placement[node.index()] as usize / threads;

    // The run gets through its first `ran` tasks in a topological order.
    let order = topology.topological_order();
    let ran = draw(n + 1);
    let mut done = vec![false; n];
    for node in &order[..ran] {
        done[node.index()] = true;
    }
    let mut held = Holdings::new(n);
    for &node in &order[..ran] {
        held.finished(node);
        let producer = process_of(node);
        if outputs.contains(&node) {
            held.hold(node, producer as u32);
        }
        for &reader in topology.dependents(node) {
            let at = process_of(reader);
            if at != producer {
                held.hold(node, producer as u32);
            }
            if !done[reader.index()] {
                held.hold(node, at as u32);
            }
        }
    }
    let mut lost: Vec<usize> = (0..processes).filter(|_| draw(2) == 0).collect();
    if lost.is_empty() {
        lost.push(draw(processes));
    }
    if lost.len() == processes {
        lost.pop();
    }
    let alive: Vec<bool> = (0..processes).map(|p| !lost.contains(&p)).collect();
    let plan = plan_recovery(graph, &job, processes, threads, &lost, &held, None)
        .expect("a plan for a valid job and at least one survivor");
    let survives = |node: NodeId| held.holders(node).iter().any(|&p| alive[p as usize]);
    let needed = topology
        .needed_by(&outputs)
        .expect("the outputs are nodes of the graph");
    for &node in &plan.run {
        assert!(
            !survives(node),
            "{node:?} runs although a survivor holds it"
        );
        assert!(
            needed[node.index()],
            "{node:?} runs although nothing needs it"
        );
    }

    let expected = fold(topology);
    let attempt_job = Job::new(outputs.iter().copied(), plan.attempt_placement(threads));
    let fed: Vec<(NodeId, u64)> = plan
        .fetch
        .iter()
        .map(|&(node, _)| (node, expected[node.index()]))
        .collect();
    let outcome = Run::new(
        Arc::new(graph.clone()),
        attempt_job,
        &Cluster::local(plan.survivors.len() * threads),
        move |graph, _| {
            Ok(Box::new(Fold {
                topology: graph.topology()?,
                failing: None,
                large: vec![false; graph.len()],
            }))
        },
    )
    .attempt(Attempt::new(&plan, fed))
    .run()
    .expect("the attempt succeeds")
    .expect("one process is process 0");
    let want: Vec<(NodeId, u64)> = outputs.iter().map(|&o| (o, expected[o.index()])).collect();
    assert_eq!(outcome.values, want, "the requested values");
    assert_eq!(
        outcome.tasks_run(),
        plan.run.len(),
        "the plan's tasks run, once each"
    );
}
