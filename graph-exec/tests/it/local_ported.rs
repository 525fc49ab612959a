//! Ports of dask's `test_local.py` and of the `get` tests it shares with the
//! other schedulers (`GetFunctionTestMixin`), where they apply to this data
//! model: results shaped like the request, bad keys, nested tasks, deep
//! chains, callbacks, exceptions, and ordering by priority.

use std::sync::Mutex;

use graph_core::{Key, TaskGraph, Term};
use graph_exec::{
    Callbacks, Dynamic, Error, LocalExecutor, OpRegistry, Output, Request, RunOptions,
    execute_sequential,
};

/// `{'x': 1, 'y': (inc, 'x'), 'z': (add, 'x', 'y')}`, dask's `get` test graph.
fn xyz() -> TaskGraph {
    TaskGraph::builder()
        .task("x", Term::lit(1))
        .task("y", Term::call("inc", [Term::key("x")]))
        .task("z", Term::call("add", [Term::key("x"), Term::key("y")]))
        .build()
        .unwrap()
}

/// Runs with both executors and checks they agree.
fn get(graph: &TaskGraph, request: Request) -> Result<Output<Dynamic>, Error> {
    let registry = OpRegistry::builtins();
    let sequential = execute_sequential(graph, &registry, &request);
    let parallel =
        LocalExecutor::with_threads(2).run(graph, &registry, &request, &RunOptions::default());
    match (sequential, parallel) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.output, b.output);
            Ok(a.output)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            Err(a)
        }
        (a, b) => panic!("the executors disagree: {a:?} vs {b:?}"),
    }
}

fn int(i: i64) -> Output<Dynamic> {
    Output::Value(Dynamic::Int(i))
}

#[test]
fn test_get() {
    assert_eq!(get(&xyz(), Request::from("x")).unwrap(), int(1));
    assert_eq!(get(&xyz(), Request::from("y")).unwrap(), int(2));
    assert_eq!(get(&xyz(), Request::from("z")).unwrap(), int(3));
}

#[test]
fn test_badkey() {
    let err = get(&xyz(), Request::from("badkey")).unwrap_err();
    assert!(matches!(err, Error::UnknownKey { .. }), "{err}");
}

#[test]
fn test_nested_badkey() {
    let request = Request::List(vec![
        Request::from("x"),
        Request::List(vec![Request::from("badkey")]),
    ]);
    let err = get(&xyz(), request).unwrap_err();
    assert_eq!(
        err.to_string(),
        "requested key 'badkey' is not in the graph"
    );
}

#[test]
fn test_get_with_list() {
    assert_eq!(
        get(&xyz(), Request::list(["x", "y"])).unwrap(),
        Output::List(vec![int(1), int(2)])
    );
    assert_eq!(
        get(&xyz(), Request::list(["z", "x"])).unwrap(),
        Output::List(vec![int(3), int(1)])
    );
}

#[test]
fn test_get_with_nested_list() {
    let request = Request::List(vec![Request::list(["x"]), Request::list(["y"])]);
    assert_eq!(
        get(&xyz(), request).unwrap(),
        Output::List(vec![Output::List(vec![int(1)]), Output::List(vec![int(2)])])
    );
    let request = Request::List(vec![Request::list(["x", "y"]), Request::list(["z", "x"])]);
    assert_eq!(
        get(&xyz(), request).unwrap(),
        Output::List(vec![
            Output::List(vec![int(1), int(2)]),
            Output::List(vec![int(3), int(1)])
        ])
    );
}

#[test]
fn test_get_with_list_top_level() {
    // dask: {'a': [1, 2, 3], 'b': 'a', 'c': [1, (inc, 1)], 'd': [(sum, 'a')], 'e': ['a', 'b'], 'f': [[[(sum, 'a'), 'c'], (sum, 'b')], 2]}
    let graph = TaskGraph::builder()
        .task("a", Term::list([Term::lit(1), Term::lit(2), Term::lit(3)]))
        .task("b", Term::key("a"))
        .task(
            "c",
            Term::list([Term::lit(1), Term::call("inc", [Term::lit(1)])]),
        )
        .task("d", Term::list([Term::call("sum", [Term::key("a")])]))
        .task("e", Term::list([Term::key("a"), Term::key("b")]))
        .task(
            "f",
            Term::list([
                Term::list([
                    Term::list([Term::call("sum", [Term::key("a")]), Term::key("c")]),
                    Term::call("sum", [Term::key("b")]),
                ]),
                Term::lit(2),
            ]),
        )
        .build()
        .unwrap();
    let show = |request: &str| {
        get(&graph, Request::from(request))
            .unwrap()
            .value()
            .unwrap()
            .to_string()
    };
    assert_eq!(show("a"), "[1, 2, 3]");
    assert_eq!(show("b"), "[1, 2, 3]");
    assert_eq!(show("c"), "[1, 2]");
    assert_eq!(show("d"), "[6]");
    assert_eq!(show("e"), "[[1, 2, 3], [1, 2, 3]]");
    assert_eq!(show("f"), "[[[6, [1, 2]], 6], 2]");
}

#[test]
fn test_nested_tasks() {
    // dask: {'x': 1, 'y': (inc, 'x'), 'z': (add, (inc, 'x'), 'y')}
    let graph = TaskGraph::builder()
        .task("x", Term::lit(1))
        .task("y", Term::call("inc", [Term::key("x")]))
        .task(
            "z",
            Term::call("add", [Term::call("inc", [Term::key("x")]), Term::key("y")]),
        )
        .build()
        .unwrap();
    assert_eq!(get(&graph, Request::from("z")).unwrap(), int(4));
}

#[test]
fn test_get_stack_limit() {
    // dask: a chain of 10 000 `inc`s must not overflow the stack.
    let graph = graph_core::generate::chain(10_000);
    assert_eq!(
        get(&graph, Request::from(("chain", 9_999))).unwrap(),
        int(9_999)
    );
}

#[test]
fn test_exceptions_propagate() {
    let mut registry = OpRegistry::<Dynamic>::builtins();
    registry.register("raise_my_error", |_| Err("My Exception!".into()));
    let graph = TaskGraph::builder()
        .task("x", Term::call("raise_my_error", []))
        .build()
        .unwrap();
    let err = LocalExecutor::new()
        .run(
            &graph,
            &registry,
            &Request::from("x"),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("My Exception!"), "{err}");
}

/// Records callback events.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Callbacks for Recorder {
    fn start(&self, tasks: usize) {
        self.0.lock().unwrap().push(format!("start {tasks}"));
    }
    fn pretask(&self, key: &Key) {
        self.0
            .lock()
            .unwrap()
            .push(format!("pre {}", key.python_str()));
    }
    fn posttask(&self, key: &Key) {
        self.0
            .lock()
            .unwrap()
            .push(format!("post {}", key.python_str()));
    }
    fn finish(&self, failed: bool) {
        self.0.lock().unwrap().push(format!("finish {failed}"));
    }
}

#[test]
fn test_callback() {
    let recorder = Recorder::default();
    let options = RunOptions {
        callbacks: Some(&recorder),
        ..RunOptions::default()
    };
    LocalExecutor::with_threads(1)
        .run(
            &xyz(),
            &OpRegistry::builtins(),
            &Request::from("z"),
            &options,
        )
        .unwrap();
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            "start 3",
            "pre x",
            "post x",
            "pre y",
            "post y",
            "pre z",
            "post z",
            "finish false"
        ]
    );
}

#[test]
fn test_finish_always_called() {
    let recorder = Recorder::default();
    let options = RunOptions {
        callbacks: Some(&recorder),
        ..RunOptions::default()
    };
    let graph = TaskGraph::builder()
        .task("x", Term::call("div", [Term::lit(1), Term::lit(0)]))
        .build()
        .unwrap();
    LocalExecutor::with_threads(1)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("x"),
            &options,
        )
        .unwrap_err();
    assert_eq!(recorder.0.lock().unwrap().last().unwrap(), "finish true");
}

#[test]
fn test_ordering() {
    // dask: a wide graph whose tasks record when they run; with one worker,
    // tasks run in the order their priorities give.
    let mut graph = TaskGraph::new();
    for i in 0..10_i64 {
        graph.insert(("x", i), Term::lit(i)).unwrap();
    }
    let all = (0..10_i64).map(|i| Term::key(("x", i)));
    graph.insert("y", Term::call("list", all)).unwrap();
    let priorities: Vec<u32> = (0..10_u32).rev().chain([10]).collect();
    let recorder = Recorder::default();
    let options = RunOptions {
        priorities: Some(&priorities),
        callbacks: Some(&recorder),
        ..RunOptions::default()
    };
    LocalExecutor::with_threads(1)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("y"),
            &options,
        )
        .unwrap();
    let started: Vec<String> = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix("pre ").map(str::to_owned))
        .collect();
    let expected: Vec<String> = (0..10)
        .rev()
        .map(|i| format!("('x', {i})"))
        .chain(["y".to_owned()])
        .collect();
    assert_eq!(started, expected);
}

#[test]
fn only_the_needed_tasks_run() {
    let recorder = Recorder::default();
    let options = RunOptions {
        callbacks: Some(&recorder),
        ..RunOptions::default()
    };
    let graph = graph_core::generate::word_count();
    let run = LocalExecutor::with_threads(2)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("count2"),
            &options,
        )
        .unwrap();
    assert_eq!(run.output, int(2));
    assert_eq!(run.stats.tasks_run, 3, "words, val2, count2");
    assert_eq!(recorder.0.lock().unwrap()[0], "start 3");
}

#[test]
fn repeated_and_nested_references() {
    // dask: (add, 'x', 'x') and lists that name a key twice.
    let graph = TaskGraph::builder()
        .task("x", Term::lit(3))
        .task("y", Term::call("add", [Term::key("x"), Term::key("x")]))
        .task(
            "z",
            Term::list([
                Term::key("y"),
                Term::call("inc", [Term::key("x")]),
                Term::key("y"),
                Term::key("x"),
            ]),
        )
        .build()
        .unwrap();
    let value = get(&graph, Request::from("z")).unwrap();
    assert_eq!(value.value().unwrap().to_string(), "[6, 4, 6, 3]");
}
