//! Unit tests of the scheduler: held results within the order's rise, in count
//! and in bytes, the ready queue, spilling, and a run that goes on by a new order.

use graph_core::{Dag, NodeId, Topology};

use super::{ByteLimit, HeldLimit, Ready, Scheduler, SchedulerConfig};

/// Under a bound on held results, a task ahead of the order starts
/// while it leaves room for the order to go on, and waits when it would
/// not; the order's next task needs room for its own result only.
#[test]
fn a_held_limit_lets_tasks_run_ahead_within_it() {
    // Three chains of two, 0 -> 1, 2 -> 3, 4 -> 5, run in that order:
    // one result held at a time.
    let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
    let needed = [true; 6];
    let ranks = [0, 1, 2, 3, 4, 5];
    let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
    assert_eq!(rise, [1, 0, 1, 0, 1, 0]);
    let mut scheduler = Scheduler::new(&SchedulerConfig {
        data: &topology,
        sched: &topology,
        needed: &needed,
        mine: None,
        ranks: &ranks,
        held_limit: Some(super::HeldLimit {
            limit: 2,
            rise: &rise,
            bytes: None,
        }),
        memory_limit: None,
        expected_bytes: &[],
        kinds: &[],
        measure_first: false,
    });
    let (mut freed, mut spill) = (Vec::new(), Vec::new());
    let next = |scheduler: &mut Scheduler<'_>| {
        scheduler
            .start_next(&mut Vec::new())
            .unwrap()
            .map(NodeId::index)
    };
    // The order's first task, then the second chain beside it: two
    // results to come, within the limit.
    assert_eq!(next(&mut scheduler), Some(0));
    assert_eq!(next(&mut scheduler), Some(2));
    // A third would make three.
    assert_eq!(next(&mut scheduler), None);
    assert!(!scheduler.has_next());
    scheduler
        .finished(NodeId::new(0), 1, &mut freed, &mut spill)
        .unwrap();
    // 1 is the order's next task; 4 still has no room.
    assert_eq!(next(&mut scheduler), Some(1));
    assert_eq!(next(&mut scheduler), None);
    scheduler
        .finished(NodeId::new(2), 1, &mut freed, &mut spill)
        .unwrap();
    // 3, the order's next task, holds nothing (nothing reads it); 4,
    // next after it, needs room for its own result, which 1 makes by
    // freeing 0 when it has run.
    assert_eq!(next(&mut scheduler), Some(3));
    assert_eq!(next(&mut scheduler), None);
    scheduler
        .finished(NodeId::new(1), 1, &mut freed, &mut spill)
        .unwrap();
    assert_eq!(freed, [NodeId::new(0)]);
    assert_eq!(next(&mut scheduler), Some(4));
    assert_eq!(scheduler.peak_held(), 2);
}

/// Independent nodes come out lowest rank first, ties by node id,
/// whether the ranks are distinct (the bit set) or tie or spread far
/// (the heap).
#[test]
fn ready_nodes_come_out_by_rank_then_node() {
    let n = 300_usize;
    let topology = Topology::from_edges(n, std::iter::empty::<(usize, usize)>()).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut distinct: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        distinct.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let tied: Vec<u32> = (0..n).map(|_| (next() % 7) as u32).collect();
    let spread: Vec<u32> = distinct.iter().map(|&r| r * 1000).collect();
    let needed = vec![true; n];
    for (ranks, ranked) in [(&distinct, true), (&tied, false), (&spread, false)] {
        let mut scheduler = Scheduler::new(&SchedulerConfig {
            data: &topology,
            sched: &topology,
            needed: &needed,
            mine: None,
            ranks,
            held_limit: None,
            memory_limit: None,
            expected_bytes: &[],
            kinds: &[],
            measure_first: false,
        });
        assert_eq!(matches!(scheduler.ready, Ready::Ranked { .. }), ranked);
        let mut expected: Vec<usize> = (0..n).collect();
        expected.sort_by_key(|&i| (ranks[i], i));
        let mut spill = Vec::new();
        let given: Vec<usize> = std::iter::from_fn(|| scheduler.start_next(&mut spill).unwrap())
            .map(NodeId::index)
            .collect();
        assert_eq!(given, expected);
    }
}

/// A seeded xorshift generator.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// A random DAG of `n` tasks (edges from lower to higher ids) and, in a
/// scheduling topology over it, `barriers` further nodes, each after a
/// few tasks and before a few later ones; every node needed.
fn random_graph(next: &mut impl FnMut() -> u64, n: usize, barriers: usize) -> (Topology, Topology) {
    let mut edges = std::collections::BTreeSet::new();
    for j in 1..n {
        for _ in 0..next() % 4 {
            edges.insert(((next() % j as u64) as usize, j));
        }
    }
    let data = Topology::from_edges(n, edges.iter().copied()).unwrap();
    let mut sched_edges = edges.clone();
    for b in 0..barriers {
        let cut = 1 + (next() % (n as u64 - 1)) as usize;
        sched_edges.insert(((next() % cut as u64) as usize, n + b));
        sched_edges.insert((n + b, cut + (next() % (n - cut) as u64) as usize));
    }
    let sched = Topology::from_edges(n + barriers, sched_edges).unwrap();
    (data, sched)
}

/// The byte rise by its definition: per rank `r`, the most bytes held
/// before any rank from `r` on (or after the last), less those held
/// before `r`, where a result is held before rank `k` if its task's
/// rank is below `k` and some reader's is not.
fn byte_rise_by_definition(data: &Topology, ranks: &[u32], sizes: &[u64]) -> Vec<u64> {
    let m = ranks.len();
    let held_before = |k: usize| -> u64 {
        data.node_ids()
            .filter(|&node| {
                (ranks[node.index()] as usize) < k
                    && data
                        .dependents(node)
                        .iter()
                        .any(|r| ranks[r.index()] as usize >= k)
            })
            .map(|node| sizes[node.index()])
            .sum()
    };
    let before: Vec<u64> = (0..=m).map(held_before).collect();
    (0..m)
        .map(|r| before[r..].iter().max().unwrap() - before[r])
        .collect()
}

/// `byte_rise` agrees with its definition on random graphs, orders and
/// sizes, barriers holding nothing; with every size 1 it is
/// `pressure_rise`.
#[test]
fn byte_rise_is_the_rise_of_the_bytes_held() {
    let mut next = rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let n = 2 + (next() % 30) as usize;
        let barriers = if case % 2 == 0 {
            0
        } else {
            (next() % 4) as usize
        };
        let (data, sched) = random_graph(&mut next, n, barriers);
        let needed = vec![true; n + barriers];
        let priorities: Vec<u32> = (0..n + barriers).map(|_| (next() % 1000) as u32).collect();
        let ranks = super::run_order(&sched, &needed, &priorities).unwrap();
        let sizes: Vec<u64> = (0..n).map(|_| next() % 10_000).collect();
        let rise = super::byte_rise(&data, &sched, &needed, &ranks, &sizes);
        // By definition, over the tasks alone: barriers hold nothing, so
        // their ranks count as ranks at which nothing changes.
        let mut extended = sizes.clone();
        extended.resize(n + barriers, 0);
        let data_ext = Topology::from_edges(
            n + barriers,
            data.node_ids().flat_map(|node| {
                data.dependents(node)
                    .iter()
                    .map(move |r| (node.index(), r.index()))
                    .collect::<Vec<_>>()
            }),
        )
        .unwrap();
        assert_eq!(
            rise,
            byte_rise_by_definition(&data_ext, &ranks, &extended),
            "case {case}"
        );
        let ones = super::byte_rise(&data, &sched, &needed, &ranks, &vec![1; n]);
        let pressure = super::pressure_rise(&data, &sched, &needed, &ranks);
        assert_eq!(
            ones,
            pressure.iter().map(|&p| u64::from(p)).collect::<Vec<_>>(),
            "case {case}"
        );
    }
}

fn next_of(scheduler: &mut Scheduler<'_>) -> Option<usize> {
    scheduler
        .start_next(&mut Vec::new())
        .unwrap()
        .map(NodeId::index)
}

/// In bytes, a large result ahead of the order waits where a small one
/// starts; counting results, both would start.
#[test]
fn a_byte_limit_holds_back_large_results() {
    // Three chains, 0 -> 1, 2 -> 3, 4 -> 5, in that order; 0 and 2 give
    // 100 bytes, the others 1.
    let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
    let needed = [true; 6];
    let ranks = [0, 1, 2, 3, 4, 5];
    let sizes = [100, 1, 100, 1, 1, 1];
    let expected = sizes.map(Some);
    let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
    let byte_rise = super::byte_rise(&topology, &topology, &needed, &ranks, &sizes);
    assert_eq!(byte_rise, [100, 0, 100, 0, 1, 0]);
    let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    config.expected_bytes = &expected;
    // Counting, the three chains start side by side.
    config.held_limit = Some(HeldLimit::for_threads(&rise));
    let mut scheduler = Scheduler::new(&config);
    let started: Vec<_> = std::iter::from_fn(|| next_of(&mut scheduler)).collect();
    assert_eq!(started, [0, 2, 4]);
    // In 150 bytes, 2's 100 bytes do not fit beside 0's; 4's one does.
    config.held_limit = Some(HeldLimit {
        bytes: Some(ByteLimit {
            limit: 150,
            rise: &byte_rise,
        }),
        ..HeldLimit::for_threads(&rise)
    });
    let mut scheduler = Scheduler::new(&config);
    let started: Vec<_> = std::iter::from_fn(|| next_of(&mut scheduler)).collect();
    assert_eq!(started, [0, 4]);
    let (mut freed, mut spill) = (Vec::new(), Vec::new());
    scheduler
        .finished(NodeId::new(0), 100, &mut freed, &mut spill)
        .unwrap();
    // 1, the order's next task, then 2 once 1 has freed 0's bytes.
    assert_eq!(next_of(&mut scheduler), Some(1));
    assert_eq!(next_of(&mut scheduler), None);
    scheduler
        .finished(NodeId::new(1), 1, &mut freed, &mut spill)
        .unwrap();
    assert_eq!(next_of(&mut scheduler), Some(2));
}

/// In bytes, where the order leaves freedom the ready task that frees
/// the most bytes starts first.
#[test]
fn ahead_of_the_order_the_most_freeing_task_goes_first() {
    // 0 (slow) -> 1; 2 -> 4; 3; and 5 gathers 1, 3 and 4. In that order.
    let topology = Topology::from_edges(6, [(0, 1), (2, 4), (1, 5), (3, 5), (4, 5)]).unwrap();
    let needed = [true; 6];
    let ranks = [0, 1, 2, 3, 4, 5];
    let expected = [Some(10), Some(10), Some(100), Some(10), Some(10), Some(10)];
    let sizes = expected.map(Option::unwrap);
    let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
    let byte_rise = super::byte_rise(&topology, &topology, &needed, &ranks, &sizes);
    let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    config.expected_bytes = &expected;
    config.held_limit = Some(HeldLimit {
        bytes: Some(ByteLimit {
            limit: 1_000,
            rise: &byte_rise,
        }),
        ..HeldLimit::for_threads(&rise)
    });
    let mut scheduler = Scheduler::new(&config);
    let (mut freed, mut spill) = (Vec::new(), Vec::new());
    assert_eq!(next_of(&mut scheduler), Some(0));
    // Neither 2 nor 3 frees anything: the order decides.
    assert_eq!(next_of(&mut scheduler), Some(2));
    scheduler
        .finished(NodeId::new(2), 100, &mut freed, &mut spill)
        .unwrap();
    // While 0 runs, 1 waits: 3 and 4 are ahead of the order, and 4
    // frees 2's 100 bytes.
    assert_eq!(next_of(&mut scheduler), Some(4));
    assert_eq!(next_of(&mut scheduler), Some(3));

    // Counting results, the order decides.
    config.held_limit = Some(HeldLimit::for_threads(&rise));
    let mut scheduler = Scheduler::new(&config);
    assert_eq!(next_of(&mut scheduler), Some(0));
    assert_eq!(next_of(&mut scheduler), Some(2));
    scheduler
        .finished(NodeId::new(2), 100, &mut freed, &mut spill)
        .unwrap();
    assert_eq!(next_of(&mut scheduler), Some(3));
}

/// Under a memory limit, a result larger than was set aside for it
/// makes room at once: the results needed latest are spilled to get
/// back under the limit.
#[test]
fn a_result_larger_than_expected_spills_at_once() {
    // 0 and 1 feed 2, expected at 4 bytes each under a limit of 10.
    let topology = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
    let needed = [true; 3];
    let ranks = [0, 1, 2];
    let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    config.memory_limit = Some(10);
    config.expected_bytes = &[Some(4), Some(4), Some(1)];
    let mut scheduler = Scheduler::new(&config);
    let (mut freed, mut spill) = (Vec::new(), Vec::new());
    assert_eq!(next_of(&mut scheduler), Some(0));
    assert_eq!(next_of(&mut scheduler), Some(1));
    // 0 takes 8: with 1's 4 still set aside, 12 would be in memory.
    scheduler
        .finished(NodeId::new(0), 8, &mut freed, &mut spill)
        .unwrap();
    assert_eq!(spill, [NodeId::new(0)]);
    assert_eq!(next_of(&mut scheduler), None);
    spill.clear();
    scheduler
        .finished(NodeId::new(1), 4, &mut freed, &mut spill)
        .unwrap();
    assert!(spill.is_empty());
    assert_eq!(scheduler.peak_bytes(), 8);
}

/// A run that goes on by a new order mid-way: the started tasks keep
/// their places, the rest follow the new order one at a time, and the
/// held bound's head moves to the new order's first task not started.
#[test]
fn a_run_goes_on_by_a_new_order() {
    let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
    let needed = [true; 6];
    let ranks = [0, 1, 2, 3, 4, 5];
    let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
    let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    config.held_limit = Some(HeldLimit::for_threads(&rise));
    let mut scheduler = Scheduler::new(&config);
    let (mut freed, mut spill) = (Vec::new(), Vec::new());
    assert_eq!(next_of(&mut scheduler), Some(0));
    scheduler
        .finished(NodeId::new(0), 8, &mut freed, &mut spill)
        .unwrap();
    assert_eq!(next_of(&mut scheduler), Some(1)); // running while reordered
    let resumed = scheduler
        .resumed_ranks(&needed, &[4, 5, 2, 3, 0, 1])
        .unwrap();
    assert_eq!(resumed, [0, 1, 4, 5, 2, 3]);
    let new_rise = super::pressure_rise(&topology, &topology, &needed, &resumed);
    scheduler.reorder(&resumed, Some(HeldLimit::for_threads(&new_rise)));
    assert_eq!(scheduler.held_limit.as_ref().map(|b| b.head), Some(2));
    let mut ran = Vec::new();
    scheduler
        .finished(NodeId::new(1), 8, &mut freed, &mut spill)
        .unwrap();
    while let Some(node) = next_of(&mut scheduler) {
        ran.push(node);
        scheduler
            .finished(NodeId::new(node), 8, &mut freed, &mut spill)
            .unwrap();
    }
    assert_eq!(ran, [4, 5, 2, 3]);
    assert!(scheduler.is_done() && scheduler.peak_held() <= 1);
}
