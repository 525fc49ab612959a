//! Unit tests of the Fiduccia-Mattheyses refinement, the rebalancing and the
//! merging of stray pieces, on levels built straight from small graphs.

use graph_core::generate::{Rng, Shape};
use graph_core::{Dag, Topology};

use super::{Fm, merge_pieces};
use crate::inputs::dependency_post_order;
use crate::level::{Level, cut_weight};
use crate::refine::Refiner;
use crate::seed::blocks;

/// The finest level of `dag` in id order, unit weights.
fn level_of(dag: &Topology) -> Level {
    let n_nodes = dag.node_count();
    let order: Vec<u32> = (0..n_nodes as u32).collect();
    Level::from_dag(dag, &order, None, &vec![1.0; n_nodes])
}

fn loads_of(level: &Level, part: &[u32], n_parts: usize) -> Vec<f64> {
    let mut loads = vec![0.0; n_parts];
    for (node, &p) in part.iter().enumerate() {
        loads[p as usize] += level.node_weights[node];
    }
    loads
}

/// Every part may hold its share plus one node, or 3% over it.
fn limits_of(level: &Level, n_parts: usize) -> Vec<f64> {
    let share = level.node_count() as f64 / n_parts as f64;
    vec![(share * 1.03).max(share + 1.0); n_parts]
}

/// A ring of `n` nodes: 0 - 1 - ... - (n - 1) - 0.
fn ring(n: usize) -> Topology {
    let edges = (0..n - 1).map(|i| (i, i + 1)).chain([(0, n - 1)]);
    Topology::from_edges(n, edges).unwrap()
}

#[test]
fn searches_never_raise_the_cut_nor_break_a_limit() {
    for shape in Shape::ALL {
        for seed in 0..3 {
            let graph = shape.generate(1_500, seed);
            let dag = graph.topology().unwrap();
            let order = dependency_post_order(dag);
            let level = Level::from_dag(dag, &order, None, &vec![1.0; order.len()]);
            for n_parts in [2, 5, 16] {
                let label = format!("{} seed {seed}, {n_parts} parts", shape.name());
                let limits = limits_of(&level, n_parts);
                // Blocks of a random permutation: balanced, and a poor
                // start with a long boundary.
                let mut rng = Rng::new(seed);
                let mut shuffled: Vec<u32> = (0..level.node_count() as u32).collect();
                for i in (1..shuffled.len()).rev() {
                    shuffled.swap(i, rng.below(i + 1));
                }
                let targets = vec![level.node_count() as f64 / n_parts as f64; n_parts];
                let mut part = blocks(shuffled, &level.node_weights, &targets);
                let mut loads = loads_of(&level, &part, n_parts);
                let before = cut_weight(&level, &part);
                let gain = Fm::default().refine(&level, &mut part, &mut loads, &limits, 4);
                let after = cut_weight(&level, &part);
                assert!(after <= before, "{label}: {before} -> {after}");
                assert_eq!(gain, before as i64 - after as i64, "{label}: reported gain");
                assert!(gain > 0, "{label}: a random start leaves something to gain");
                assert_eq!(loads, loads_of(&level, &part, n_parts), "{label}: loads");
                for (p, &load) in loads.iter().enumerate() {
                    assert!(load <= limits[p], "{label}: part {p} has {load}");
                }
            }
        }
    }
}

#[test]
fn a_part_over_its_limit_only_sheds() {
    // Everything in part 0 of 3: the searches may only move nodes out of it.
    let graph = Shape::ArrayOverlap.generate(800, 0);
    let level = level_of(graph.topology().unwrap());
    let limits = limits_of(&level, 3);
    let mut part = vec![0; level.node_count()];
    part[0] = 1;
    part[1] = 2;
    let mut loads = loads_of(&level, &part, 3);
    let start = loads.clone();
    Fm::default().refine(&level, &mut part, &mut loads, &limits, 4);
    assert!(loads[0] <= start[0]);
    assert!(loads[1] <= limits[1] && loads[2] <= limits[2], "{loads:?}");
}

#[test]
fn zero_gain_moves_reach_the_optimal_bisection() {
    // Rings of 12 and 20 nodes in arcs of 2, alternating between two parts:
    // a cut of 6 (10). Any bisection of a ring cuts at least 2 edges. Every
    // single move is worth nothing until an arc is gone, so refinement that
    // only takes moves that lower the cut is stuck; the searches walk arcs
    // across (a part may hold two nodes over its share on the way) and
    // keep the balanced optimum.
    for n in [12, 20] {
        let dag = ring(n);
        let level = level_of(&dag);
        let start: Vec<u32> = (0..n as u32).map(|i| (i / 2) % 2).collect();
        let share = n as f64 / 2.0;
        let limits = vec![share + 2.0; 2];
        assert_eq!(cut_weight(&level, &start), n as u64 / 2);

        let mut greedy = Refiner::new(limits.clone(), 2);
        let mut part = start.clone();
        greedy.refine(&level, &mut part, 8, 0);
        assert_eq!(
            cut_weight(&level, &part),
            n as u64 / 2,
            "greedy passes are stuck"
        );

        let mut part = start;
        let mut loads = loads_of(&level, &part, 2);
        let gain = Fm::default().refine(&level, &mut part, &mut loads, &limits, 4);
        assert_eq!(cut_weight(&level, &part), 2, "{part:?}");
        assert_eq!(gain, n as i64 / 2 - 2);
        assert_eq!(loads, [share, share], "{part:?}");
    }
}

#[test]
fn an_optimal_partition_is_left_as_it_is() {
    // Two cliques of 6 joined by one edge, a clique per part: the searches
    // try moves, all of which raise the cut, and must undo every one.
    let mut edges = Vec::new();
    for base in [0, 6] {
        for a in base..base + 6 {
            for b in a + 1..base + 6 {
                edges.push((a, b));
            }
        }
    }
    edges.push((5, 6));
    let dag = Topology::from_edges(12, edges).unwrap();
    let level = level_of(&dag);
    let optimal: Vec<u32> = (0..12_u32).map(|i| i / 6).collect();
    let mut part = optimal.clone();
    let mut loads = loads_of(&level, &part, 2);
    let limits = vec![7.0, 7.0];
    let gain = Fm::default().refine(&level, &mut part, &mut loads, &limits, 4);
    assert_eq!(gain, 0);
    assert_eq!(part, optimal);
    assert_eq!(loads, [6.0, 6.0]);
}

#[test]
fn rebalancing_moves_the_cheapest_nodes_first() {
    // A chain of 12 split 8 / 4 with limits of 7: part 0 must give one node
    // to part 1, and the only one that costs nothing is at the boundary.
    let dag = Topology::from_edges(12, (0..11).map(|i| (i, i + 1))).unwrap();
    let level = level_of(&dag);
    let mut part: Vec<u32> = (0..12_u32).map(|i| u32::from(i >= 8)).collect();
    let mut loads = loads_of(&level, &part, 2);
    Fm::default().rebalance(&level, &mut part, &mut loads, &[7.0, 7.0]);
    assert_eq!(loads, [7.0, 5.0]);
    assert_eq!(cut_weight(&level, &part), 1);
    assert_eq!(part[7], 1);
}

#[test]
fn stray_pieces_go_home() {
    // A chain of 12: part 0 holds 0..=2 and a stray piece 6..=7 between two
    // pieces of part 1; the stray piece joins part 1, which has room, and
    // that joins part 1's pieces, so 8..=9 stays.
    let dag = Topology::from_edges(12, (0..11).map(|i| (i, i + 1))).unwrap();
    let level = level_of(&dag);
    let mut part = vec![0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2];
    let mut loads = loads_of(&level, &part, 3);
    let before = cut_weight(&level, &part);
    let gain = merge_pieces(&level, &mut part, &mut loads, &[8.0, 8.0, 8.0]);
    assert_eq!(part, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2]);
    assert_eq!((before, gain, cut_weight(&level, &part)), (4, 2, 2));
    assert_eq!(loads, [3.0, 7.0, 2.0]);

    // Without room where they would go, nothing moves.
    let mut part = vec![0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2];
    let mut loads = loads_of(&level, &part, 3);
    assert_eq!(
        merge_pieces(&level, &mut part, &mut loads, &[5.0, 5.0, 2.0]),
        0
    );
    assert_eq!(part, [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2]);
}

#[test]
fn a_piece_joined_by_an_earlier_move_stays() {
    // Part 0: 0..=1 and 4..=5; part 1: 2..=3 and 6..=9. Part 1's piece
    // 2..=3 moves to part 0, which joins part 0's pieces into one; its
    // piece 4..=5 must then not move, as that would raise the cut.
    let dag = Topology::from_edges(10, (0..9).map(|i| (i, i + 1))).unwrap();
    let level = level_of(&dag);
    let mut part = vec![0, 0, 1, 1, 0, 0, 1, 1, 1, 1];
    let mut loads = loads_of(&level, &part, 2);
    let before = cut_weight(&level, &part);
    let gain = merge_pieces(&level, &mut part, &mut loads, &[10.0, 10.0]);
    let after = cut_weight(&level, &part);
    assert_eq!(gain, before as i64 - after as i64);
    assert_eq!((before, after), (3, 1), "{part:?}");
}
