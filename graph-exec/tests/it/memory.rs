//! A run that respects memory: with many threads the results held stay
//! within 1.1 times the order's max pressure, plus 8, plus one per thread;
//! under a memory limit it holds back tasks and spills results, gives
//! the results of an unlimited run, and names the task whose result alone
//! does not fit.

use crate::common::{leaves, max_pressure};
use graph_core::generate::{self, Shape};
use graph_core::{Dag, Key, TaskGraph, Term};
use graph_exec::{
    Dynamic, Error, LocalExecutor, OpError, OpRegistry, Request, RunOptions, TaskValue,
};
use graph_order::{OrderConfig, order_graph};

#[test]
fn many_threads_hold_within_the_bound() {
    let registry = OpRegistry::<Dynamic>::builtins();
    for shape in Shape::ALL {
        let graph = shape.generate(100_000, 5);
        let order = order_graph(&graph, &OrderConfig::default()).unwrap();
        let pressure = max_pressure(graph.topology().unwrap(), order.priorities());
        let options = RunOptions {
            priorities: Some(order.priorities()),
            ..RunOptions::default()
        };
        for threads in [2, 4] {
            let bound = pressure + pressure / 10 + 8 + threads;
            let run = LocalExecutor::with_threads(threads)
                .run(&graph, &registry, &leaves(&graph), &options)
                .unwrap();
            assert!(
                run.stats.peak_held <= bound,
                "{} on {threads} threads held {} results, the order {pressure}, the bound {bound}",
                shape.name(),
                run.stats.peak_held
            );
        }
    }
}

/// Runs `graph` on `threads` threads in its static order, within `limit`.
fn run_within(graph: &TaskGraph, threads: usize, limit: Option<u64>) -> graph_exec::Run<Dynamic> {
    let order = order_graph(graph, &OrderConfig::default()).unwrap();
    let options = RunOptions {
        priorities: Some(order.priorities()),
        memory_limit: limit,
        ..RunOptions::default()
    };
    LocalExecutor::with_threads(threads)
        .run(graph, &OpRegistry::builtins(), &leaves(graph), &options)
        .unwrap()
}

#[test]
fn a_limit_spills_and_keeps_the_results() {
    for shape in Shape::ALL {
        let graph = generate::with_value_bytes(&shape.generate(1_500, 2), 4_000).unwrap();
        let free = run_within(&graph, 2, None);
        assert!(free.stats.peak_bytes > 0 && free.stats.spilled_bytes == 0);
        // A third of what the unlimited run holds, and room for a task's
        // inputs and result.
        let widest = graph
            .topology()
            .unwrap()
            .node_ids()
            .map(|n| graph.topology().unwrap().dependencies(n).len() as u64 + 1)
            .max()
            .unwrap();
        let limit = (free.stats.peak_bytes / 3).max(widest * 4_200);
        for threads in [1, 2, 4] {
            let limited = run_within(&graph, threads, Some(limit));
            assert_eq!(
                limited.output,
                free.output,
                "{} on {threads} threads",
                shape.name()
            );
            assert!(
                limited.stats.peak_bytes <= limit,
                "{} on {threads} threads held {} bytes, limit {limit}",
                shape.name(),
                limited.stats.peak_bytes
            );
            if free.stats.peak_bytes > limit + widest * 4_200 {
                assert!(
                    limited.stats.spilled_bytes > 0,
                    "{} spilled nothing",
                    shape.name()
                );
            }
        }
    }
}

#[test]
fn a_result_larger_than_the_limit_names_its_task() {
    let graph = TaskGraph::builder()
        .task("small", Term::call("blob", [Term::lit(100)]))
        .task(
            ("big", 1),
            Term::call("blob", [Term::lit(1_000_000), Term::key("small")]),
        )
        .task("sum", Term::call("checksum", [Term::key(("big", 1))]))
        .build()
        .unwrap();
    let options = RunOptions {
        memory_limit: Some(100_000),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(2)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("sum"),
            &options,
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::TooLarge { key, .. } if *key == Key::from(("big", 1))),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("task ('big', 1): its result takes 1000"),
        "{err}"
    );
}

/// A value type that does not know how to spill itself.
#[derive(Clone, Debug, PartialEq)]
struct Plain(Vec<u8>);

impl TaskValue for Plain {
    fn from_literal(literal: &graph_core::Value) -> Result<Plain, OpError> {
        match literal {
            graph_core::Value::Int(n) => Ok(Plain(vec![0; *n as usize])),
            _ => Err("only sizes".into()),
        }
    }
    fn from_list(items: Vec<Plain>) -> Plain {
        Plain(items.into_iter().flat_map(|p| p.0).collect())
    }
    fn size_bytes(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }
}

#[test]
fn a_value_type_that_cannot_spill_says_so() {
    // Ten roots of 1 kB each, all read by one task: ten times what the
    // limit lets stay in memory, so something must spill.
    let mut graph = TaskGraph::new();
    for i in 0..10 {
        graph.insert(("root", i), Term::lit(1_000)).unwrap();
    }
    let refs = (0..10).map(|i| Term::key(("root", i)));
    graph.insert("all", Term::list(refs)).unwrap();
    let mut registry = OpRegistry::<Plain>::new();
    registry.register("unused", |a| Ok(a[0].clone()));
    let options = RunOptions {
        memory_limit: Some(3_000),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(1)
        .run(&graph, &registry, &Request::from("all"), &options)
        .unwrap_err();
    // The roots spill while waiting; that fails for this type.
    assert!(err.to_string().contains("cannot be spilled"), "{err}");
}

/// Ten roots of 1 kB, each read before a gate (by a task, `nothing`, that
/// keeps nothing) and after it: under a limit of 3 kB most wait on disk
/// while the gate runs, and are read back after it. The output, `all`, is
/// empty.
fn gated_roots() -> TaskGraph {
    let mut graph = TaskGraph::new();
    for i in 0..10 {
        graph.insert(("root", i), Term::lit(1_000)).unwrap();
        let root = Term::key(("root", i));
        graph
            .insert(("seen", i), Term::call("nothing", [root]))
            .unwrap();
    }
    let seen = (0..10).map(|i| Term::key(("seen", i)));
    graph.insert("gate", Term::call("nothing", seen)).unwrap();
    for i in 0..10 {
        let again = Term::list([Term::key(("root", i)), Term::key("gate")]);
        graph.insert(("again", i), again).unwrap();
        let done = Term::call("nothing", [Term::key(("again", i))]);
        graph.insert(("done", i), done).unwrap();
    }
    let all = Term::list((0..10).map(|i| Term::key(("done", i))));
    graph.insert("all", all).unwrap();
    graph
}

/// A value type that, as it spills, looks at every spill directory and
/// file of the machine's temporary directory.
#[derive(Clone, Debug, PartialEq)]
struct Watched(Vec<u8>);

/// What `Watched::spill` saw: directories and files, each with its mode.
#[cfg(unix)]
static SEEN: std::sync::Mutex<Vec<(bool, u32)>> = std::sync::Mutex::new(Vec::new());

/// When the test began: spill directories older than that (left by a run
/// killed outright, say) are not looked at.
static BEGAN: std::sync::OnceLock<std::time::SystemTime> = std::sync::OnceLock::new();

impl TaskValue for Watched {
    fn from_literal(literal: &graph_core::Value) -> Result<Watched, OpError> {
        match literal {
            graph_core::Value::Int(n) => Ok(Watched(vec![7; *n as usize])),
            _ => Err("only sizes".into()),
        }
    }
    fn from_list(items: Vec<Watched>) -> Watched {
        Watched(items.into_iter().flat_map(|p| p.0).collect())
    }
    fn size_bytes(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }
    fn spill(&self, out: &mut dyn std::io::Write) -> Result<(), OpError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &std::path::Path| {
                std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777)
            };
            let mut seen = SEEN.lock().unwrap();
            for dir in std::fs::read_dir(std::env::temp_dir())?.flatten() {
                let name = dir.file_name();
                let recent = dir
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| BEGAN.get().is_some_and(|&began| t >= began));
                if name.to_string_lossy().starts_with("taskgraph-spill-") && recent {
                    seen.push((true, mode(&dir.path())));
                    for file in std::fs::read_dir(dir.path())?.flatten() {
                        seen.push((false, mode(&file.path())));
                    }
                }
            }
        }
        out.write_all(&self.0)?;
        Ok(())
    }
    fn unspill(input: &mut dyn std::io::Read) -> Result<Watched, OpError> {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes)?;
        Ok(Watched(bytes))
    }
}

#[test]
fn spilled_results_are_private_to_their_owner() {
    // Directory times may be coarser than the clock: a second's margin.
    BEGAN.get_or_init(|| std::time::SystemTime::now() - std::time::Duration::from_secs(1));
    let graph = gated_roots();
    let mut registry = OpRegistry::<Watched>::new();
    registry.register("nothing", |_| Ok(Watched(Vec::new())));
    let options = RunOptions {
        memory_limit: Some(3_000),
        ..RunOptions::default()
    };
    let run = LocalExecutor::with_threads(1)
        .run(&graph, &registry, &Request::from("all"), &options)
        .unwrap();
    assert_eq!(run.output, graph_exec::Output::Value(Watched(Vec::new())));
    assert!(run.stats.spilled_bytes > 0);
    #[cfg(unix)]
    {
        // Every spill directory and file there, this run's and any other
        // test's running meanwhile: 0700 and 0600, whatever the umask.
        let seen = SEEN.lock().unwrap();
        assert!(seen.iter().any(|&(dir, _)| dir), "{seen:?}");
        assert!(seen.iter().any(|&(dir, _)| !dir), "{seen:?}");
        for &(dir, mode) in seen.iter() {
            assert_eq!(mode, if dir { 0o700 } else { 0o600 }, "{seen:?}");
        }
    }
}

/// A value type whose spilled results cannot be read back.
#[derive(Clone, Debug, PartialEq)]
struct Unreadable(Vec<u8>);

impl TaskValue for Unreadable {
    fn from_literal(literal: &graph_core::Value) -> Result<Unreadable, OpError> {
        match literal {
            graph_core::Value::Int(n) => Ok(Unreadable(vec![1; *n as usize])),
            _ => Err("only sizes".into()),
        }
    }
    fn from_list(items: Vec<Unreadable>) -> Unreadable {
        Unreadable(items.into_iter().flat_map(|p| p.0).collect())
    }
    fn size_bytes(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }
    fn spill(&self, out: &mut dyn std::io::Write) -> Result<(), OpError> {
        out.write_all(&self.0)?;
        Ok(())
    }
    fn unspill(_: &mut dyn std::io::Read) -> Result<Unreadable, OpError> {
        Err("the bytes on disk are damaged".into())
    }
}

#[test]
fn a_result_that_cannot_be_read_back_is_named_with_its_file() {
    let graph = gated_roots();
    let mut registry = OpRegistry::<Unreadable>::new();
    registry.register("nothing", |_| Ok(Unreadable(Vec::new())));
    let options = RunOptions {
        memory_limit: Some(3_000),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(1)
        .run(&graph, &registry, &Request::from("all"), &options)
        .unwrap_err();
    // The cause, not "scheduled before its input was computed".
    let text = err.to_string();
    assert!(matches!(err, Error::ReadBack { .. }), "{text}");
    assert!(text.contains("its input ('root', "), "{text}");
    assert!(text.contains("taskgraph-spill-"), "{text}");
    assert!(text.ends_with("the bytes on disk are damaged"), "{text}");
}
