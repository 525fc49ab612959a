//! The recovery planner against an independent oracle: runs of generated
//! graphs (every shape of `graph_core::generate`) over 2-4 processes are cut
//! at a random point, with the results each process would hold then, and
//! random processes are lost. The plan must run exactly the tasks that are
//! needed and held by no survivor (found here by a fixpoint over all tasks,
//! not by the planner's walk), be runnable in its order from what it
//! fetches, fetch only from survivors that hold a result, and keep every
//! surviving task where it was.

use graph_core::generate::{Rng, Shape};
use graph_core::{Dag, NodeId, TaskGraph};
use graph_distributed::recovery::{Holdings, Recovery, plan_recovery};
use graph_distributed::{Error, Job};

/// The results each process holds when a run of `job` over `processes`
/// processes of `threads` workers has run its first `ran` tasks in
/// topological order: a result stays with its producer while a reader
/// there has not run (or while it is an output), and is sent to every
/// other process with a reader, which keeps it until its readers there
/// have run.
fn holdings_after(
    graph: &TaskGraph,
    job: &Job,
    threads: usize,
    processes: usize,
    ran: usize,
) -> Holdings {
    let topology = graph.topology().unwrap();
    let order = topology.topological_order();
    let done: Vec<bool> = {
        let mut done = vec![false; graph.len()];
        for node in &order[..ran] {
            done[node.index()] = true;
        }
        done
    };
    let process_of = |node: NodeId| job.placement()[node.index()] as usize / threads;
    let mut held = Holdings::new(graph.len());
    for &node in &order[..ran] {
        held.finished(node);
        for process in 0..processes {
            let readers_left = topology
                .dependents(node)
                .iter()
                .any(|&r| process_of(r) == process && !done[r.index()]);
            let output_here = process == process_of(node) && job.outputs().contains(&node);
            if readers_left || output_here {
                held.hold(node, process as u32);
            }
        }
    }
    held
}

/// The tasks that must run, by a fixpoint over every task: an output no
/// survivor holds, or an input no survivor holds of a task that must run.
fn needed(graph: &TaskGraph, job: &Job, held: &Holdings, alive: &[bool]) -> Vec<bool> {
    let topology = graph.topology().unwrap();
    let survives = |node: NodeId| held.holders(node).iter().any(|&p| alive[p as usize]);
    let mut must = vec![false; graph.len()];
    for &node in job.outputs() {
        must[node.index()] = !survives(node);
    }
    loop {
        let mut changed = false;
        for node in topology.node_ids() {
            if !must[node.index()] && !survives(node) {
                let read = topology.dependents(node).iter().any(|r| must[r.index()]);
                if read {
                    must[node.index()] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return must;
        }
    }
}

/// Every property of a plan, against the oracle.
fn check(
    graph: &TaskGraph,
    job: &Job,
    threads: usize,
    held: &Holdings,
    alive: &[bool],
    plan: &Recovery,
    case: &str,
) {
    let topology = graph.topology().unwrap();
    let must = needed(graph, job, held, alive);
    let mut runs = vec![false; graph.len()];
    for node in &plan.run {
        assert!(!runs[node.index()], "{case}: {node:?} runs twice");
        runs[node.index()] = true;
    }
    assert_eq!(runs, must, "{case}: the plan runs exactly what is needed");
    let recomputed = plan.run.iter().filter(|&&n| held.is_finished(n)).count();
    assert_eq!(plan.recomputed, recomputed, "{case}");
    // Fetched only from survivors that hold the result.
    let mut available = vec![false; graph.len()];
    for &(node, from) in &plan.fetch {
        assert!(
            alive[from as usize],
            "{case}: {node:?} fetched from lost {from}"
        );
        assert!(
            held.holders(node).contains(&from),
            "{case}: {from} does not hold {node:?}"
        );
        assert!(!runs[node.index()], "{case}: {node:?} both fetched and run");
        available[node.index()] = true;
    }
    // Runnable in its order, and every output there at the end.
    for &node in &plan.run {
        for dep in topology.dependencies(node) {
            assert!(
                available[dep.index()],
                "{case}: {node:?} runs before its input {dep:?}"
            );
        }
        available[node.index()] = true;
    }
    for node in job.outputs() {
        assert!(
            available[node.index()],
            "{case}: output {node:?} is missing"
        );
    }
    // Survivors keep their tasks; displaced ones go to survivors.
    for &node in &plan.run {
        let old = job.placement()[node.index()];
        let new = plan.placement[node.index()];
        assert!(
            alive[new as usize / threads],
            "{case}: {node:?} placed on a lost process"
        );
        if alive[old as usize / threads] {
            assert_eq!(old, new, "{case}: {node:?} moved off a survivor");
        }
    }
}

#[test]
fn plans_run_exactly_what_no_survivor_holds_and_is_still_needed() {
    let mut rng = Rng::new(30);
    let mut cases = 0;
    for shape in Shape::ALL {
        for size in [12, 60, 300] {
            for processes in 2..=4_usize {
                let graph = shape.generate(size, rng.next_u64());
                let n = graph.len();
                let threads = 1 + rng.below(2);
                let workers = processes * threads;
                let placement: Vec<u32> = (0..n).map(|_| rng.below(workers) as u32).collect();
                let leaves = graph.leaf_keys().unwrap();
                let outputs: Vec<NodeId> =
                    leaves.iter().map(|k| graph.node_id(k).unwrap()).collect();
                let job = Job::new(outputs, placement);
                for _ in 0..6 {
                    let ran = rng.below(n + 1);
                    let held = holdings_after(&graph, &job, threads, processes, ran);
                    let lost: Vec<usize> = {
                        let mut lost: Vec<usize> =
                            (0..processes).filter(|_| rng.below(2) == 0).collect();
                        if lost.is_empty() {
                            lost.push(rng.below(processes));
                        }
                        if lost.len() == processes {
                            lost.pop();
                        }
                        lost
                    };
                    let alive: Vec<bool> = (0..processes).map(|p| !lost.contains(&p)).collect();
                    let sizes: Vec<u64> = (0..n).map(|_| 1 + rng.below(1000) as u64).collect();
                    let case = format!(
                        "{} of {n} tasks over {processes}x{threads}, {ran} run, lost {lost:?}",
                        shape.name()
                    );
                    let plan =
                        plan_recovery(&graph, &job, processes, threads, &lost, &held, Some(&sizes))
                            .unwrap();
                    check(&graph, &job, threads, &held, &alive, &plan, &case);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 8 * 3 * 3 * 6);
}

#[test]
fn nothing_is_recomputed_before_the_first_task_and_only_lost_outputs_after_the_last() {
    let graph = graph_core::generate::tree(16, 4);
    let n = graph.len();
    let root = graph.node_id(&graph.leaf_keys().unwrap()[0]).unwrap();
    let placement: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
    let job = Job::new([root], placement);
    // Before anything ran: everything runs, nothing is recomputed, and the
    // lost process's tasks go to the two others.
    let held = holdings_after(&graph, &job, 1, 3, 0);
    let plan = plan_recovery(&graph, &job, 3, 1, &[1], &held, None).unwrap();
    assert_eq!(plan.run.len(), n);
    assert_eq!(plan.recomputed, 0);
    assert!(plan.fetch.is_empty());
    assert!(plan.placement.iter().all(|&w| w != 1));
    // After the last task: the output is held by its producer's process;
    // losing another costs nothing.
    let held = holdings_after(&graph, &job, 1, 3, n);
    let owner = job.placement()[root.index()] as usize;
    let other = (owner + 1) % 3;
    let plan = plan_recovery(&graph, &job, 3, 1, &[other], &held, None).unwrap();
    assert!(plan.run.is_empty());
    assert_eq!(plan.fetch, [(root, owner as u32)]);
    // Losing the output's process recomputes the root and what it reads
    // that no survivor kept: here every input, freed once the root ran.
    let plan = plan_recovery(&graph, &job, 3, 1, &[owner], &held, None).unwrap();
    assert_eq!(plan.recomputed, n);
}

#[test]
fn displaced_tasks_go_where_their_inputs_are() {
    // x on process 0, y on process 1, z (reading both, x ten times larger)
    // on process 2, which is lost: z goes to process 0.
    let graph = TaskGraph::builder()
        .opaque("x", [])
        .opaque("y", [])
        .opaque("z", ["x".into(), "y".into()])
        .build()
        .unwrap();
    let [x, y, z] = [0, 1, 2].map(NodeId::new);
    let job = Job::new([z], vec![0, 1, 2]);
    let mut held = Holdings::new(3);
    held.hold(x, 0);
    held.hold(y, 1);
    let plan = plan_recovery(&graph, &job, 3, 1, &[2], &held, Some(&[1000, 100, 1])).unwrap();
    assert_eq!(plan.run, [z]);
    assert_eq!(plan.placement[z.index()], 0);
    assert_eq!(plan.fetch, [(x, 0), (y, 1)]);
    let plan = plan_recovery(&graph, &job, 3, 1, &[2], &held, Some(&[100, 1000, 1])).unwrap();
    assert_eq!(plan.placement[z.index()], 1);
}

#[test]
fn losing_every_process_or_one_the_run_lacks_is_an_error() {
    let graph = graph_core::generate::chain(3);
    let job = Job::new([NodeId::new(2)], vec![0, 1, 0]);
    let held = Holdings::new(3);
    let err = plan_recovery(&graph, &job, 2, 1, &[1, 0, 1], &held, None).unwrap_err();
    assert!(
        matches!(&err, Error::NoSurvivors { lost } if lost == &[0, 1]),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "every process of the run was lost (processes 0, 1): nothing is left to go on with"
    );
    let err = plan_recovery(&graph, &job, 2, 1, &[2], &held, None).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoSuchProcess {
                process: 2,
                processes: 2
            }
        ),
        "{err}"
    );
    let err = plan_recovery(&graph, &job, 1, 1, &[0], &held, None).unwrap_err();
    assert!(matches!(err, Error::NoSuchWorker { .. }), "{err}");
}

#[test]
fn a_displaced_task_follows_its_recomputed_input() {
    // p runs on process 0; a and b (which reads a) were on process 2, lost
    // before either ran. a goes to the least loaded survivor, process 1, and
    // b after it, where a's result will be, although process 0 is as loaded.
    let graph = TaskGraph::builder()
        .opaque("p", [])
        .opaque("a", [])
        .opaque("b", ["a".into()])
        .build()
        .unwrap();
    let [p, a, b] = [0, 1, 2].map(NodeId::new);
    let job = Job::new([p, b], vec![0, 2, 2]);
    let held = Holdings::new(3);
    let plan = plan_recovery(&graph, &job, 3, 1, &[2], &held, Some(&[1, 1000, 1])).unwrap();
    assert_eq!(plan.run, [p, a, b]);
    assert_eq!(plan.placement, [0, 1, 1]);
}
