//! `taskgraph demo` runs on its built-in graph and tells the whole story:
//! the graph, optimization, rewriting, order, placement, run (on all cores
//! and across two processes), picture, tasks that take time on one thread
//! and on four, and runs that lose a process (with a supervisor, and
//! across hosts with none).

use crate::common::{scratch, taskgraph_in};

#[test]
fn demo_tells_the_whole_story() {
    let dir = scratch("demo");
    let run = taskgraph_in(&dir, &["demo"], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for part in [
        "nwords  = len(split(words))",
        "Its shape: 14 tasks, 19 edges, 4 roots, 3 leaves, depth 4",
        "3 of 14 tasks changed",
        "Ordered with auto",
        "Placed on 2 workers",
        "print3 = 'word list has 3 occurrences of pear, out of 7 words'",
        "Run across 2 worker processes",
        "14 tasks run by 2 workers; ",
        "Tasks that take time: 8 chains of 25 tasks",
        "  4 threads: ",
        "  the same results",
        "Lose a process: ",
        "Lose a host: ",
        "without process 0 (this one is now process 0)",
    ] {
        assert!(
            run.stdout.contains(part),
            "missing {part:?} in\n{}",
            run.stdout
        );
    }
    // Both runs that lose a process give the root of the run without it.
    assert_eq!(
        run.stdout
            .matches("the sum of the leaves, as without the fault")
            .count(),
        2,
        "{}",
        run.stdout
    );
    for kind in ["order", "memorypressure", "worker", "collapsed"] {
        assert!(
            dir.join(format!("demo-{kind}.svg")).exists()
                || dir.join(format!("demo-{kind}.dot")).exists(),
            "demo-{kind}"
        );
    }
    // Two more runs at once replace nothing: each takes names no file has,
    // never one the other has taken and not yet written.
    let before = std::fs::read(dir.join("demo-order.svg")).ok();
    let (second, third) = std::thread::scope(|scope| {
        let second = scope.spawn(|| taskgraph_in(&dir, &["demo"], b""));
        let third = taskgraph_in(&dir, &["demo"], b"");
        (second.join().unwrap(), third)
    });
    let mut names = std::collections::BTreeSet::new();
    for again in [&run, &second, &third] {
        assert_eq!(again.code, Some(0), "{}", again.stderr);
        for name in pictures(&again.stdout) {
            assert!(dir.join(&name).exists(), "{name}");
            assert!(names.insert(name.clone()), "{name} reported twice");
        }
    }
    assert_eq!(names.len() % 3, 0, "{names:?}");
    assert!(names.iter().any(|name| name.starts_with("demo-order-3.")));
    assert_eq!(std::fs::read(dir.join("demo-order.svg")).ok(), before);
    assert_eq!(run.stderr, "");
    // Four threads run the chains side by side: the ratio of their times to
    // the best four threads can do, not a wall-clock limit.
    let ratios: Vec<f64> = run
        .stdout
        .lines()
        .filter_map(|line| {
            line.split_once(" s (")?
                .1
                .split_once("x the best")?
                .0
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(ratios.len(), 2, "{}", run.stdout);
    assert!(ratios[1] * 2.0 < ratios[0], "{}", run.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The pictures a demo reports writing: the names of its lines
/// `  demo-....svg: what it shows`.
fn pictures(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| {
            line.strip_prefix("  ")?
                .split_once(": ")
                .map(|(name, _)| name)
        })
        .filter(|name| {
            name.starts_with("demo") && [".svg", ".dot", ".html"].iter().any(|e| name.ends_with(e))
        })
        .map(str::to_owned)
        .collect()
}
