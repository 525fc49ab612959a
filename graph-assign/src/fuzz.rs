//! The checker behind the `assign_total` fuzz target, so that the target is
//! a short shim and `cargo test` can replay its inputs.

use graph_core::{Dag, TaskGraph, Topology};

use crate::{
    Assignment, AutoRule, Chosen, DEFAULT_MAX_IMBALANCE, ListConfig, Metrics, Workers, assign,
    assign_auto, assign_list, assign_mars, makespan, makespan_bound,
};

/// The most workers the fuzz inputs ask for (the byte after the graph picks
/// `1..=MAX_WORKERS`).
pub const MAX_WORKERS: usize = 24;

/// `assign_total`: [`assign`], [`assign_list`] and [`assign_mars`] place
/// every task of `graph` exactly once, on one of the `k` workers (`k` is
/// clamped to `1..=MAX_WORKERS`), and give the same placement twice;
/// [`assign`] keeps its balance bound, and the simulated wall time of
/// [`assign_list`]'s placement ([`makespan`]) is never below the bound no
/// schedule beats, `max(work / slots, critical path)`; [`assign_auto`]
/// (with a price on every received input) takes one of the two placements,
/// the partitioner's unless the other is simulated to be faster by its rule.
///
/// The bound is the one [`assign`] promises for any input: every load at
/// most `max(1.03 × share, share + heaviest task)`, where a share is the
/// worker's slots over all slots times the total load. Such a placement
/// always exists (list scheduling finds one), so it is checked whatever the
/// costs, slots and number of tasks, including more workers than tasks.
/// With unit costs and at least 34 tasks per slot, it is the plain 3%
/// (1.03 × share is then at least share + 1). [`assign_mars`] promises no
/// balance and is only checked for totality and determinism.
///
/// `assign` is run four ways: unit costs and sizes on `k` single-slot
/// workers; costs and sizes derived from the task index (zero costs, and
/// sizes up to `u64::MAX`, included); and both again on workers with 1 to 3
/// slots.
///
/// # Panics
///
/// When a property does not hold (that is the point).
pub fn assign_total(graph: &TaskGraph, k: usize) {
    let Ok(topology) = graph.topology() else {
        return;
    };
    let k = k.clamp(1, MAX_WORKERS);
    let n_nodes = topology.node_count();
    let costs: Vec<f64> = (0..n_nodes).map(|i| ((i * 7 + k) % 5) as f64).collect();
    let sizes: Vec<u64> = (0..n_nodes)
        .map(|i| match i % 4 {
            0 => 0,
            1 => u64::MAX - i as u64,
            _ => (i * 31 % 100) as u64,
        })
        .collect();
    let single = Workers::new(k).expect("1..=MAX_WORKERS workers");
    let slotted =
        Workers::with_slots((0..k).map(|w| 1 + (w % 3) as u32)).expect("every worker has a slot");
    for workers in [&single, &slotted] {
        for (sizes, costs) in [(None, None), (Some(&sizes[..]), Some(&costs[..]))] {
            let label = format!(
                "assign, {k} workers (slots {:?}), sizes {}, costs {}",
                workers.all_slots(),
                sizes.is_some(),
                costs.is_some()
            );
            let first = assign(topology, workers, sizes, costs).expect("valid input");
            let again = assign(topology, workers, sizes, costs).expect("valid input");
            assert_eq!(first, again, "{label}: deterministic");
            check_total(&label, topology, workers, &first);
            check_balance(&label, topology, workers, &first, costs);

            let config = ListConfig {
                sizes,
                costs,
                ..ListConfig::default()
            };
            let label = format!("assign_list, {}", &label["assign, ".len()..]);
            let first = assign_list(topology, workers, &config).expect("valid input");
            let again = assign_list(topology, workers, &config).expect("valid input");
            assert_eq!(first, again, "{label}: deterministic");
            check_total(&label, topology, workers, &first);
            let time = makespan(topology, workers, &first, &config).expect("it fits");
            let bound = makespan_bound(topology, workers, costs).expect("valid input");
            assert!(
                time >= bound * (1.0 - 1e-9),
                "{label}: a makespan of {time} below the bound {bound}"
            );

            let config = ListConfig {
                receive_seconds: 0.05,
                ..config
            };
            let rule = AutoRule::default();
            let auto = assign_auto(topology, workers, &config, rule).expect("valid input");
            let label = format!("assign_auto, {}", &label["assign_list, ".len()..]);
            check_total(&label, topology, workers, &auto.assignment);
            let (cut, list) = (
                assign(topology, workers, sizes, costs).expect("valid input"),
                assign_list(topology, workers, &config).expect("valid input"),
            );
            let cut_time = makespan(topology, workers, &cut, &config).expect("it fits");
            let list_time = makespan(topology, workers, &list, &config).expect("it fits");
            assert_eq!(
                (auto.cut_makespan, auto.time_makespan),
                (cut_time, list_time),
                "{label}"
            );
            let expected = if cut_time <= rule.slack * list_time {
                (Chosen::Cut, cut)
            } else {
                (Chosen::Time, list)
            };
            assert_eq!((auto.chosen, auto.assignment), expected, "{label}");
        }
        let first = assign_mars(topology, workers).expect("valid input");
        assert_eq!(
            first,
            assign_mars(topology, workers).expect("valid input"),
            "assign_mars, {k} workers: deterministic"
        );
        check_total("assign_mars", topology, workers, &first);
    }
}

/// Every task placed once, on a worker that exists.
fn check_total(label: &str, topology: &Topology, workers: &Workers, assignment: &Assignment) {
    assert_eq!(
        assignment.len(),
        topology.node_count(),
        "{label}: one worker per task"
    );
    assert_eq!(assignment.worker_count(), workers.count(), "{label}");
    for (node, &worker) in assignment.as_slice().iter().enumerate() {
        assert!(
            (worker as usize) < workers.count(),
            "{label}: task {node} on worker {worker} of {}",
            workers.count()
        );
    }
    let counted: usize = assignment.tasks_per_worker().iter().sum();
    assert_eq!(counted, topology.node_count(), "{label}: each task once");
}

/// Every load within `max(1.03 × share, share + heaviest task)`, up to
/// rounding.
fn check_balance(
    label: &str,
    topology: &Topology,
    workers: &Workers,
    assignment: &Assignment,
    costs: Option<&[f64]>,
) {
    let metrics = Metrics::of(topology, workers, assignment, None, costs).expect("it fits");
    let total: f64 = metrics.loads.iter().sum();
    let heaviest = costs.map_or(1.0, |costs| costs.iter().copied().fold(0.0, f64::max));
    for (worker, &load) in metrics.loads.iter().enumerate() {
        let share = total * f64::from(workers.slots(worker)) / workers.total_slots() as f64;
        let limit = (share * DEFAULT_MAX_IMBALANCE).max(share + heaviest);
        assert!(
            load <= limit + 1e-9 * total.max(1.0),
            "{label}: worker {worker} has load {load} over {limit} (share {share}, loads {:?})",
            metrics.loads
        );
    }
}
