//! A memory limit holds whatever the graph's `size`s say: true, far too
//! small, or absent, and whether or not the results of an op vary in size.
//! Results are measured; a task's result is expected to take the largest of
//! its op's measured so far, and under
//! `RunOptions::measure_first` the first task of each op runs alone until
//! its result is measured. `peak_bytes` is the most held at once, counted
//! before anything spills.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use graph_core::{TaskGraph, Term};
use graph_exec::{LocalExecutor, OpError, OpRegistry, Request, RunOptions, TaskValue};

/// The bytes of results alive now, and the most at any moment.
static LIVE: AtomicU64 = AtomicU64::new(0);
static MOST: AtomicU64 = AtomicU64::new(0);
/// Taken by each test, so that one at a time counts [`LIVE`].
static SERIAL: Mutex<()> = Mutex::new(());

/// A result of so many bytes, counted in [`LIVE`] from its making to the
/// drop of its last clone; or a literal number, which takes nothing.
#[derive(Clone, Debug)]
enum Tracked {
    Result(Arc<Block>),
    Number(u64),
}

#[derive(Debug)]
struct Block(u64);

impl Tracked {
    fn new(bytes: u64) -> Tracked {
        let live = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
        MOST.fetch_max(live, Ordering::SeqCst);
        Tracked::Result(Arc::new(Block(bytes)))
    }

    fn bytes(&self) -> u64 {
        match self {
            Tracked::Result(block) => block.0,
            Tracked::Number(_) => 8,
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        LIVE.fetch_sub(self.0, Ordering::SeqCst);
    }
}

impl TaskValue for Tracked {
    fn from_literal(literal: &graph_core::Value) -> Result<Tracked, OpError> {
        match literal {
            graph_core::Value::Int(n) => Ok(Tracked::Number(*n as u64)),
            _ => Err("only sizes".into()),
        }
    }
    fn from_list(_: Vec<Tracked>) -> Tracked {
        Tracked::new(8)
    }
    fn size_bytes(&self) -> Option<u64> {
        Some(self.bytes())
    }
    fn spill(&self, out: &mut dyn Write) -> Result<(), OpError> {
        out.write_all(&self.bytes().to_le_bytes())?;
        Ok(())
    }
    fn unspill(input: &mut dyn Read) -> Result<Tracked, OpError> {
        let mut bytes = [0; 8];
        input.read_exact(&mut bytes)?;
        Ok(Tracked::new(u64::from_le_bytes(bytes)))
    }
}

const RESULT: u64 = 1_000_000;

/// 16 results of 1 MB (each `size` as given), read in pairs, and the pairs
/// read by one task.
fn pairs(size: Option<u64>) -> TaskGraph {
    pairs_of(|_| RESULT, size)
}

/// 16 results of one op, the `i`th of `bytes(i)` (each `size` as given),
/// read in pairs, and the pairs read by one task.
fn pairs_of(bytes: impl Fn(i64) -> u64, size: Option<u64>) -> TaskGraph {
    let mut builder = TaskGraph::builder();
    for i in 0..16 {
        builder = builder.task(("m", i), Term::call("make", [Term::lit(bytes(i) as i64)]));
        if let Some(bytes) = size {
            builder = builder.size(bytes);
        }
    }
    for i in 0..8 {
        let read = [Term::key(("m", 2 * i)), Term::key(("m", 2 * i + 1))];
        builder = builder.task(("p", i), Term::call("join", read));
    }
    let all = (0..8).map(|i| Term::key(("p", i)));
    builder
        .task("all", Term::call("join", all))
        .build()
        .unwrap()
}

fn registry() -> OpRegistry<Tracked> {
    let mut registry = OpRegistry::new();
    registry.register("make", |a: &[Tracked]| {
        // Long enough that the threads' tasks overlap.
        std::thread::sleep(Duration::from_millis(20));
        match a[0] {
            Tracked::Number(bytes) => Ok(Tracked::new(bytes)),
            Tracked::Result(_) => Err("make takes a number".into()),
        }
    });
    registry.register("join", |_| Ok(Tracked::new(8)));
    registry
}

#[test]
fn the_limit_holds_whatever_the_sizes_say() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let limit = 3 * RESULT + RESULT / 2;
    for (name, size) in [
        ("true", Some(RESULT)),
        ("1 byte", Some(1)),
        ("absent", None),
    ] {
        let graph = pairs(size);
        LIVE.store(0, Ordering::SeqCst);
        MOST.store(0, Ordering::SeqCst);
        let options = RunOptions {
            memory_limit: Some(limit),
            measure_first: true,
            ..RunOptions::default()
        };
        let run = LocalExecutor::with_threads(8)
            .run(&graph, &registry(), &Request::from("all"), &options)
            .unwrap();
        drop(run.output);
        let most = MOST.load(Ordering::SeqCst);
        assert!(
            most <= limit,
            "sizes {name}: {most} bytes of results at once under a limit of {limit}"
        );
        // What was held at once, as measured: at least a pair's inputs, and
        // never more than was alive (results the threads hold before they
        // report them are not seen).
        let peak = run.stats.peak_bytes;
        assert!(
            (2 * RESULT..=most).contains(&peak),
            "sizes {name}: peak_bytes {peak}, most {most}"
        );
    }
}

/// Results of one op that vary in size: the first (run alone, to be
/// measured) of 1 MB, the next seven of a sixteenth of that, the last eight
/// of 1 MB again. Expected at the mean of those measured, the large ones
/// would start side by side on far less than they take and carry the run
/// over the limit; expected at the largest, none takes more than was set
/// aside for it.
#[test]
fn the_limit_is_a_ceiling_when_results_vary() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let limit = 3 * RESULT + RESULT / 2;
    let bytes = |i: i64| {
        if (1..8).contains(&i) {
            RESULT / 16
        } else {
            RESULT
        }
    };
    for (name, size) in [("true at most", Some(RESULT)), ("absent", None)] {
        let graph = pairs_of(bytes, size);
        LIVE.store(0, Ordering::SeqCst);
        MOST.store(0, Ordering::SeqCst);
        let options = RunOptions {
            memory_limit: Some(limit),
            measure_first: true,
            ..RunOptions::default()
        };
        let run = LocalExecutor::with_threads(8)
            .run(&graph, &registry(), &Request::from("all"), &options)
            .unwrap();
        drop(run.output);
        let most = MOST.load(Ordering::SeqCst);
        let peak = run.stats.peak_bytes;
        assert!(
            most <= limit && peak <= limit,
            "sizes {name}: {most} bytes of results at once, peak_bytes {peak}, under a limit of {limit}"
        );
    }
}
