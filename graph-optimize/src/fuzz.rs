//! The checker behind the `optimize_preserves_results` fuzz target, so that
//! the target is a short shim and `cargo test` can replay its inputs.

use std::hash::{DefaultHasher, Hash, Hasher};

use graph_core::{Body, Dag, Key, NodeId, Op, TaskGraph, Term, Topology, Value};

use crate::{
    FuseConfig, FuseLinearConfig, OptimizeConfig, Pass, StageConfig, coalesce_stages, cull,
    find_wide_edges, fuse, fuse_linear, inline, inline_functions, insert_barriers, optimize,
    optimize_owned, plan_stages,
};

/// `optimize_preserves_results`: every pass (cull, inline, inline_functions,
/// fuse_linear, fuse with several configurations, stage coalescing, with the
/// wide edges of complete bipartite blocks and of named ops, and pipelines
/// of them, the `stages` pass among them) gives a valid graph in which the requested keys have
/// the values they had (the references each pass hands its output are
/// checked against the output's bodies by a debug assertion, which fuzzing
/// builds enable); and `insert_barriers`
/// gives a topology in which every task still comes after its inputs.
///
/// Values are symbolic: an op is an uninterpreted function, so two graphs
/// give a key the same value only if its fully expanded term is the same.
/// That holds for any meaning of the ops, so it checks more than running one
/// executor would, and needs none.
///
/// # Panics
///
/// When a pass fails on a valid graph or changes a value.
pub fn optimize_preserves_results(graph: &TaskGraph) {
    let Ok(leaves) = graph.leaf_keys() else {
        return;
    };
    let some: Vec<Key> = leaves.iter().step_by(2).cloned().collect();
    let every_third: Vec<Key> = graph.keys().step_by(3).cloned().collect();
    let expected = values(graph, &leaves);
    let expect_same = |what: &str, out: Result<TaskGraph, crate::Error>, keys: &[Key]| {
        let out = out.unwrap_or_else(|err| panic!("{what} failed: {err}"));
        if let Err(err) = out.topology() {
            panic!("{what} made an invalid graph: {err}");
        }
        let wanted: Vec<u64> = keys
            .iter()
            .map(|key| expected[leaves.iter().position(|k| k == key).expect("a leaf")])
            .collect();
        assert_eq!(values(&out, keys), wanted, "{what} changed a value");
    };

    expect_same("cull", cull(graph, &leaves), &leaves);
    expect_same("cull to some keys", cull(graph, &some), &some);
    for constants in [false, true] {
        expect_same("inline", inline(graph, &[], constants), &leaves);
        let inlined = inline(graph, &every_third, constants);
        expect_same("inline of keys", inlined, &leaves);
    }
    let op_sets: [&[&str]; 3] = [
        &["inc"],
        &["inc", "neg", "identity"],
        &["inc", "neg", "identity", "add", "sum", "max"],
    ];
    for names in op_sets {
        let fast: Vec<Op> = names.iter().map(|name| Op::new(name)).collect();
        let inlined = inline_functions(graph, &leaves, &fast);
        expect_same("inline_functions", inlined, &leaves);
    }
    for (rename_keys, drop_aliases) in [(false, false), (true, false), (true, true)] {
        for max_depth in [None, Some(2)] {
            let config = FuseLinearConfig {
                keys: Some(leaves.clone()),
                rename_keys,
                drop_aliases,
                max_depth,
            };
            expect_same("fuse_linear", fuse_linear(graph, &config), &leaves);
            for ave_width in [1.0, 2.0, 3.0, 10.0] {
                let config = FuseConfig {
                    keys: Some(leaves.clone()),
                    ave_width,
                    rename_keys,
                    drop_aliases,
                    max_depth,
                    ..FuseConfig::default()
                };
                expect_same("fuse", fuse(graph, &config), &leaves);
            }
        }
    }
    for (wide, wide_blocks) in [(&[][..], true), (&["sum"], true), (&["sum"], false)] {
        let config = StageConfig {
            wide_blocks,
            wide_ops: wide.iter().map(|name| Op::new(name)).collect(),
            keys: leaves.clone(),
            ..StageConfig::default()
        };
        let plan = plan_stages(graph, &config).expect("a valid graph has stages");
        expect_same("coalesce_stages", coalesce_stages(graph, &plan), &leaves);
    }
    let every_pass = vec![
        Pass::Cull,
        Pass::Inline,
        Pass::InlineFunctions,
        Pass::FuseLinear,
        Pass::Fuse,
        Pass::Cull,
    ];
    let pipelines = [
        OptimizeConfig::default(),
        OptimizeConfig {
            passes: vec![
                Pass::Inline,
                Pass::Stages,
                Pass::Fuse,
                Pass::Stages,
                Pass::Cull,
            ],
            wide_ops: vec![Op::new("sum")],
            ..OptimizeConfig::default()
        },
        OptimizeConfig {
            passes: every_pass,
            inline_keys: every_third.clone(),
            fast_ops: vec![Op::new("inc"), Op::new("identity")],
            fuse: FuseConfig {
                ave_width: 2.0,
                drop_aliases: true,
                ..FuseConfig::default()
            },
            ..OptimizeConfig::default()
        },
    ];
    for config in pipelines {
        let (borrowed, _) = optimize(graph, &config).expect("a valid graph optimizes");
        let (owned, _) = optimize_owned(graph.clone(), &config).expect("and does so owned");
        assert_eq!(owned, borrowed, "optimize_owned differs from optimize");
        expect_same("optimize", Ok(borrowed), &leaves);
    }

    let topology = graph.topology().expect("checked above");
    let found: Vec<(NodeId, NodeId)> = find_wide_edges(topology).iter().collect();
    assert_eq!(
        found,
        wide_edges_by_definition(topology),
        "find_wide_edges differs from the definition"
    );
    for threshold in [1, 4] {
        let barriers = insert_barriers(topology, threshold).expect("a topology takes barriers");
        let order = barriers.topology.topological_order();
        let mut position = vec![0_usize; order.len()];
        for (i, node) in order.iter().enumerate() {
            position[node.index()] = i;
        }
        for node in topology.node_ids() {
            for &dep in topology.dependencies(node) {
                assert!(
                    position[dep.index()] < position[node.index()],
                    "with barriers, {} may run before its input {}",
                    graph.key(node),
                    graph.key(dep)
                );
            }
        }
    }
}

/// The edges `p -> c` of `dag` for which another task `c'` reads `p` and
/// another task `p'` is read by both `c` and `c'`, by dependent and then
/// dependency: [`find_wide_edges`]'s definition, checked by brute force in
/// O(E x d^2).
pub fn wide_edges_by_definition(dag: &Topology) -> Vec<(NodeId, NodeId)> {
    let reads = |c: NodeId, p: NodeId| dag.dependencies(c).contains(&p);
    let mut wide = Vec::new();
    for c in dag.node_ids() {
        let mut deps = dag.dependencies(c).to_vec();
        deps.sort_unstable();
        deps.dedup();
        for &p in &deps {
            let in_block = dag
                .dependents(p)
                .iter()
                .any(|&other| other != c && deps.iter().any(|&q| q != p && reads(other, q)));
            if in_block {
                wide.push((p, c));
            }
        }
    }
    wide
}

/// The symbolic values of `keys` in `graph` (see
/// [`optimize_preserves_results`]).
fn values(graph: &TaskGraph, keys: &[Key]) -> Vec<u64> {
    let mut memo = vec![None; graph.len()];
    keys.iter()
        .map(|key| {
            let node = graph
                .node_id(key)
                .unwrap_or_else(|| panic!("requested key {key} is gone"));
            value(graph, node, &mut memo)
        })
        .collect()
}

/// The symbolic value of a task: its body's, references replaced by the
/// values of the tasks they name.
fn value(graph: &TaskGraph, node: NodeId, memo: &mut Vec<Option<u64>>) -> u64 {
    if let Some(value) = memo[node.index()] {
        return value;
    }
    let value = match &graph.task(node).body {
        Body::Term(term) => term_value(graph, term, memo),
        Body::Opaque(deps) => {
            let mut hasher = DefaultHasher::new();
            "opaque".hash(&mut hasher);
            for dep in deps {
                let dep = graph
                    .node_id(dep)
                    .expect("a valid graph's references resolve");
                value(graph, dep, memo).hash(&mut hasher);
            }
            hasher.finish()
        }
    };
    memo[node.index()] = Some(value);
    value
}

fn term_value(graph: &TaskGraph, term: &Term, memo: &mut Vec<Option<u64>>) -> u64 {
    let mut hasher = DefaultHasher::new();
    match term {
        Term::Ref(key) => {
            let node = graph
                .node_id(key)
                .expect("a valid graph's references resolve");
            return value(graph, node, memo);
        }
        Term::Lit(literal) => {
            0_u8.hash(&mut hasher);
            match literal {
                Value::Null => 0_u8.hash(&mut hasher),
                Value::Bool(b) => (1_u8, b).hash(&mut hasher),
                Value::Int(i) => (2_u8, i).hash(&mut hasher),
                Value::Float(x) => (3_u8, x.to_bits()).hash(&mut hasher),
                Value::Str(s) => (4_u8, s).hash(&mut hasher),
            }
        }
        Term::Call { op, args } => {
            (1_u8, op.as_str(), args.len()).hash(&mut hasher);
            for arg in args {
                term_value(graph, arg, memo).hash(&mut hasher);
            }
        }
        Term::List(items) => {
            (2_u8, items.len()).hash(&mut hasher);
            for item in items {
                term_value(graph, item, memo).hash(&mut hasher);
            }
        }
    }
    hasher.finish()
}
