//! Semantic preservation: on generated graphs of every shape, evaluating the
//! requested keys after a pass (or a pipeline) gives what it gave before,
//! and each pass returns a valid graph.

use crate::common::{Evaluator, show_checked};
use graph_core::generate::{Shape, map_shuffle_map, word_count};
use graph_core::{Key, Op, TaskGraph};
use graph_optimize::{
    FuseConfig, FuseLinearConfig, OptimizeConfig, Pass, StageConfig, coalesce_stages, cull, fuse,
    fuse_linear, inline, inline_functions, optimize, optimize_owned, plan_stages,
};

/// The tasks no task depends on.
fn leaves(graph: &TaskGraph) -> Vec<Key> {
    graph.leaf_keys().unwrap()
}

fn graphs() -> Vec<(String, TaskGraph)> {
    let mut graphs = vec![("word-count".to_owned(), word_count())];
    for shape in Shape::ALL {
        for (size, seed) in [(20, 1), (60, 2), (200, 3), (500, 4)] {
            graphs.push((
                format!("{}-{size}-{seed}", shape.name()),
                shape.generate(size, seed),
            ));
        }
    }
    for shape in Shape::DENSE {
        for size in [8, 30] {
            graphs.push((format!("{}-{size}", shape.name()), shape.generate(size, 0)));
        }
    }
    for (m, n) in [(4, 2), (7, 3)] {
        graphs.push((format!("map-shuffle-map-{m}-{n}"), map_shuffle_map(m, n)));
    }
    graphs
}

fn ops(names: &[&str]) -> Vec<Op> {
    names.iter().map(|name| Op::new(name)).collect()
}

/// Checks that `out` computes `keys` as `graph` does.
fn same_results(name: &str, what: &str, graph: &TaskGraph, out: &TaskGraph, keys: &[Key]) {
    show_checked(out);
    let (before, after) = (Evaluator::new(graph), Evaluator::new(out));
    for key in keys {
        assert_eq!(before.get(key), after.get(key), "{name}, {what}: {key}");
    }
}

#[test]
fn every_pass_preserves_results() {
    // Not `add`: inlining a fast task copies it into every user, so with
    // `add` fast each diamond would double the size of the next (as in dask).
    let fast = ops(&["inc", "neg", "identity", "len", "split"]);
    for (name, graph) in graphs() {
        let keys = leaves(&graph);
        let some: Vec<Key> = keys.iter().step_by(3).cloned().collect();
        same_results(&name, "cull", &graph, &cull(&graph, &some).unwrap(), &some);
        for constants in [false, true] {
            let inlined = inline(&graph, &[], constants).unwrap();
            same_results(&name, "inline", &graph, &inlined, &keys);
        }
        let inlined = inline_functions(&graph, &keys, &fast).unwrap();
        same_results(&name, "inline_functions", &graph, &inlined, &keys);
        for rename_keys in [false, true] {
            for drop_aliases in [false, true] {
                let config = FuseLinearConfig {
                    keys: Some(keys.clone()),
                    rename_keys,
                    drop_aliases,
                    max_depth: Some(7),
                };
                let fused = fuse_linear(&graph, &config).unwrap();
                same_results(&name, "fuse_linear", &graph, &fused, &keys);
                for ave_width in [1.0, 2.0, 3.0, 10.0] {
                    let config = FuseConfig {
                        keys: Some(keys.clone()),
                        ave_width,
                        rename_keys,
                        drop_aliases,
                        max_depth: if ave_width > 5.0 { Some(5) } else { None },
                        ..FuseConfig::default()
                    };
                    let fused = fuse(&graph, &config).unwrap();
                    same_results(&name, &format!("fuse {ave_width}"), &graph, &fused, &keys);
                }
            }
        }
    }
}

#[test]
fn pipelines_preserve_results() {
    let all = vec![
        Pass::Cull,
        Pass::Inline,
        Pass::InlineFunctions,
        Pass::FuseLinear,
        Pass::Fuse,
        Pass::Cull,
    ];
    for (name, graph) in graphs() {
        let keys = leaves(&graph);
        let default = OptimizeConfig::default();
        let with_ops = OptimizeConfig {
            fast_ops: ops(&["inc", "identity", "len", "split"]),
            passes: all.clone(),
            fuse: FuseConfig {
                ave_width: 2.0,
                drop_aliases: true,
                ..FuseConfig::default()
            },
            ..OptimizeConfig::default()
        };
        // Inlining after fusing reads the order of a graph with renamed
        // tasks (each right before the task it was renamed from, which
        // becomes an alias of it: a constant, so inlined).
        let after_renames = OptimizeConfig {
            fast_ops: ops(&["inc", "identity"]),
            passes: vec![
                Pass::FuseLinear,
                Pass::Fuse,
                Pass::Inline,
                Pass::InlineFunctions,
                Pass::Fuse,
            ],
            ..OptimizeConfig::default()
        };
        let with_stages = OptimizeConfig {
            fast_ops: ops(&["inc"]),
            wide_ops: ops(&["sum"]),
            passes: vec![
                Pass::Cull,
                Pass::Inline,
                Pass::InlineFunctions,
                Pass::Stages,
                Pass::Fuse,
                Pass::Stages,
            ],
            ..OptimizeConfig::default()
        };
        let stages_after_renames = OptimizeConfig {
            passes: vec![Pass::FuseLinear, Pass::Fuse, Pass::Stages, Pass::Cull],
            ..OptimizeConfig::default()
        };
        for config in [
            default,
            with_ops,
            after_renames,
            with_stages,
            stages_after_renames,
        ] {
            let (optimized, report) = optimize(&graph, &config).unwrap();
            same_results(&name, "optimize", &graph, &optimized, &keys);
            let (owned, _) = optimize_owned(graph.clone(), &config).unwrap();
            assert_eq!(owned, optimized, "{name}: optimize_owned differs");
            assert_eq!(report.tasks_before, graph.len());
            assert_eq!(report.tasks_after, optimized.len());
            assert_eq!(report.passes.len(), config.passes.len());
            for pair in report.passes.windows(2) {
                assert_eq!(pair[0].tasks_after, pair[1].tasks_before);
            }
        }
    }
}

#[test]
fn coalescing_stages_preserves_results() {
    for (name, graph) in graphs() {
        let keys = leaves(&graph);
        for wide in [&[][..], &["sum"], &["sum", "add"]] {
            let config = StageConfig {
                wide_ops: ops(wide),
                keys: keys.clone(),
                ..StageConfig::default()
            };
            let plan = plan_stages(&graph, &config).unwrap();
            let coalesced = coalesce_stages(&graph, &plan).unwrap();
            assert_eq!(coalesced.len(), plan.task_count(), "{name}");
            same_results(&name, "stages", &graph, &coalesced, &keys);
        }
    }
}

#[test]
fn the_stages_pass_is_plan_and_coalesce() {
    for (name, graph) in graphs() {
        let keys = leaves(&graph);
        for wide in [&[][..], &["sum"]] {
            let config = OptimizeConfig {
                passes: vec![Pass::Stages],
                wide_ops: ops(wide),
                ..OptimizeConfig::default()
            };
            let (optimized, report) = optimize(&graph, &config).unwrap();
            let plan = plan_stages(
                &graph,
                &StageConfig {
                    wide_ops: ops(wide),
                    keys: keys.clone(),
                    ..StageConfig::default()
                },
            )
            .unwrap();
            assert_eq!(optimized, coalesce_stages(&graph, &plan).unwrap(), "{name}");
            assert_eq!(report.tasks_after, plan.task_count(), "{name}");
        }
    }
}

/// The same tasks in a new graph, which knows nothing of how they were made.
fn afresh(graph: &TaskGraph) -> TaskGraph {
    let mut fresh = TaskGraph::with_capacity(graph.len());
    for (key, task) in graph.iter() {
        fresh.insert_task(key.clone(), task.clone()).unwrap();
    }
    fresh
}

#[test]
fn passes_chain_through_returned_graphs() {
    // Each pass given the graph of the one before (which holds the
    // references that pass handed it) gives what it gives on the same tasks
    // read afresh.
    for (name, graph) in graphs() {
        let keys = leaves(&graph);
        let culled = cull(&graph, &keys).unwrap();
        let a = inline(&culled, &[], true).unwrap();
        let b = inline(&afresh(&culled), &[], true).unwrap();
        assert_eq!(a, b, "{name}");
        let config = FuseConfig {
            keys: Some(keys.clone()),
            ..FuseConfig::default()
        };
        let c = fuse(&a, &config).unwrap();
        let d = fuse(&afresh(&a), &config).unwrap();
        assert_eq!(c, d, "{name}");
        assert_eq!(c.references().unwrap(), d.references().unwrap(), "{name}");
        same_results(&name, "chain", &graph, &c, &keys);
    }
}
