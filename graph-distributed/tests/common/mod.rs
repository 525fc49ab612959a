//! Helpers shared by graph-distributed's tests: a runner over graph-exec's
//! built-in ops, and clusters of in-test "processes" on loopback.

#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener;
use std::sync::Arc;
use std::thread;

use graph_core::{Key, NodeId, TaskGraph};
use graph_distributed::{Cluster, Error, Job, Outcome, Run};
use graph_exec::{CompiledGraph, OpRegistry, Request, Tagged};

/// Runs `job` in one process with `cluster`'s threads, with the built-in ops.
pub fn run_exec(
    graph: &Arc<TaskGraph>,
    job: Job,
    cluster: &Cluster,
) -> Result<Option<Outcome<Tagged>>, Error> {
    let outputs = job.outputs().to_vec();
    Run::new(Arc::clone(graph), job, cluster, move |graph, _worker| {
        let request = Request::list(outputs.iter().map(|&n| graph.key(n).clone()));
        Ok(Box::new(CompiledGraph::new(
            graph,
            &OpRegistry::builtins(),
            &request,
        )?))
    })
    .run()
}

/// The secret the in-test processes share.
pub const SECRET: &[u8] = b"the tests' shared secret";

/// Process `process` of a cluster at `addresses`, with the tests' secret.
pub fn member(addresses: &[String], process: usize, threads: usize) -> Cluster {
    Cluster::new(addresses.to_vec(), process, threads)
        .unwrap()
        .with_secret(SECRET)
        .unwrap()
}

/// `n` free loopback addresses.
pub fn loopback(n: usize) -> Vec<String> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect()
}

/// An address where no process of any test listens: the tests listen on
/// 127.0.0.1 only, and a port of it given back to the system (as `loopback`
/// gives them) may be taken by another test meanwhile, which would answer a
/// process dialling it. For a peer that must never come.
pub fn nobody_at() -> String {
    let port = loopback(1)[0].rsplit(':').next().unwrap().to_owned();
    format!("127.0.0.2:{port}")
}

/// Runs `job` as `processes` processes of `threads` threads each, every
/// process on its own thread of this test and its own loopback port; returns
/// every process's result, by process.
pub fn run_processes(
    graph: &Arc<TaskGraph>,
    job: &Job,
    processes: usize,
    threads: usize,
) -> Vec<Result<Option<Outcome<Tagged>>, Error>> {
    let addresses = loopback(processes);
    let handles: Vec<_> = (0..processes)
        .map(|process| {
            let cluster = member(&addresses, process, threads);
            let (graph, job) = (Arc::clone(graph), job.clone());
            thread::spawn(move || run_exec(&graph, job, &cluster))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// The requested nodes: every leaf of the graph.
pub fn leaf_nodes(graph: &TaskGraph) -> Vec<NodeId> {
    graph
        .leaf_keys()
        .unwrap()
        .iter()
        .map(|k| graph.node_id(k).unwrap())
        .collect()
}

/// The sequential oracle's value of each node in `outputs`.
pub fn oracle(graph: &TaskGraph, outputs: &[NodeId]) -> Vec<(NodeId, Tagged)> {
    let keys: Vec<Key> = outputs.iter().map(|&n| graph.key(n).clone()).collect();
    let run = graph_exec::execute_sequential(graph, &OpRegistry::builtins(), &Request::list(keys))
        .unwrap();
    let items = run.output.items().unwrap();
    outputs
        .iter()
        .zip(items)
        .map(|(&node, item)| (node, Tagged(item.value().unwrap().clone())))
        .collect()
}

/// graph-assign's default placement on `workers` workers and graph-order's
/// default priorities.
pub fn job_for(graph: &TaskGraph, outputs: Vec<NodeId>, workers: usize) -> Job {
    let topology = graph.topology().unwrap();
    let placement = graph_assign::assign(
        topology,
        &graph_assign::Workers::new(workers).unwrap(),
        None,
        None,
    )
    .unwrap();
    let order = graph_order::order_graph(graph, &graph_order::OrderConfig::default()).unwrap();
    Job::new(outputs, placement.into_vec()).with_priorities(order.into_priorities())
}
