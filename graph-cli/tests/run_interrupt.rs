//! SIGINT and SIGTERM end a run on this machine's cores promptly, whatever
//! its tasks are doing: no task starts after the signal, and a task that
//! would hold the run up longer than the grace period does not keep the
//! process alive. The process exits with 130 and leaves no spill directory
//! behind; so does each process of a run across hosts.

mod common;
mod run_distributed_common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::scratch;
use run_distributed_common::{eventually, finish, hostfile, leftovers, path, signal, start};

/// Four independent tasks that sleep for a minute each, and one that sums
/// them.
fn sleepers(dir: &Path) -> std::path::PathBuf {
    let mut tasks: Vec<String> = (0..4)
        .map(|i| format!(r#"{{"key": "s{i}", "task": {{"call": "sleep", "args": [{i}, 60]}}}}"#))
        .collect();
    tasks.push(
        r#"{"key": "total", "task": {"call": "sum", "args": [{"ref": "s0"}, {"ref": "s1"}, {"ref": "s2"}, {"ref": "s3"}]}}"#
            .to_owned(),
    );
    let file = dir.join("sleepers.json");
    std::fs::write(&file, common::document(&tasks)).unwrap();
    file
}

#[test]
#[cfg(unix)]
fn a_signal_ends_a_run_whose_tasks_take_a_minute_within_seconds() {
    let dir = scratch("interrupt-sleepers");
    let file = sleepers(&dir);
    for sig in ["-INT", "-TERM"] {
        for threads in ["1", "3"] {
            let mut run = start(&["run", path(&file), "--threads", threads], &[]);
            // Give the tasks time to start.
            std::thread::sleep(Duration::from_millis(500));
            let sent = Instant::now();
            signal(run.id(), sig);
            let (status, stderr) = finish(&mut run, Duration::from_secs(30));
            let took = sent.elapsed();
            assert_eq!(
                status.code(),
                Some(130),
                "{sig}, {threads} threads: {stderr}"
            );
            assert_eq!(stderr.trim_end(), "interrupted", "{sig}, {threads} threads");
            assert!(
                took < Duration::from_secs(10),
                "{sig}, {threads} threads: the process took {took:?} to end"
            );
        }
    }
}

/// [`common::spilling_graph`] and one more task, after everything else (it
/// reads the graph's leaves, small checksums), that sleeps for a minute: the
/// run is still going, its spilled results on disk, when the signal comes.
fn spilling_then_sleeping(dir: &Path) -> std::path::PathBuf {
    let file = common::spilling_graph(dir);
    let mut graph: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let tasks = graph["tasks"].as_array_mut().unwrap();
    let mut read = std::collections::HashSet::new();
    for task in tasks.iter() {
        refs(&task["task"], &mut read);
    }
    let inputs: Vec<serde_json::Value> = tasks
        .iter()
        .map(|task| task["key"].clone())
        .filter(|key| !read.contains(&key.to_string()))
        .map(|key| serde_json::json!({ "ref": key }))
        .collect();
    assert!(!inputs.is_empty());
    tasks.push(serde_json::json!({
        "key": "last",
        "task": {"call": "sleep", "args": [{"call": "len", "args": [{"call": "list", "args": inputs}]}, 60]},
    }));
    std::fs::write(&file, graph.to_string()).unwrap();
    file
}

#[test]
#[cfg(unix)]
fn a_signal_during_a_run_that_spills_leaves_no_spill_directory() {
    let dir = scratch("interrupt-spill");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = spilling_then_sleeping(&dir);
    for sig in ["-INT", "-TERM"] {
        for threads in ["1", "3"] {
            let mut run = start(
                &[
                    "run",
                    path(&file),
                    "--threads",
                    threads,
                    "--memory-limit",
                    "700KB",
                ],
                &[("TMPDIR", path(&tmp))],
            );
            assert!(
                eventually(Duration::from_secs(30), || !leftovers(&tmp).is_empty()),
                "{threads} threads: the run spills"
            );
            // Everything but the last task is done within a second or two.
            std::thread::sleep(Duration::from_secs(3));
            signal(run.id(), sig);
            let (status, stderr) = finish(&mut run, Duration::from_secs(30));
            assert_eq!(
                status.code(),
                Some(130),
                "{sig}, {threads} threads: {stderr}"
            );
            assert_eq!(
                leftovers(&tmp),
                Vec::<String>::new(),
                "{sig}, {threads} threads"
            );
        }
    }
}

#[test]
#[cfg(unix)]
fn a_signal_to_the_processes_of_a_hostfile_run_that_spills_leaves_no_spill_directory() {
    // Each process of a run across hosts spills into a directory of its
    // own; interrupted while a task holds it up, it removes that directory
    // as it exits.
    let dir = scratch("interrupt-spill-hostfile");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = spilling_then_sleeping(&dir);
    // The placement balances seconds, and the last task's minute outweighs
    // everything else: placed by itself, all the spilling work would go to
    // one process. Half the tasks to each instead.
    let graph: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let pairs: Vec<serde_json::Value> = graph["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, task)| serde_json::json!([task["key"], i % 2]))
        .collect();
    let placed = dir.join("assignment.json");
    std::fs::write(
        &placed,
        serde_json::json!({"workers": 2, "assignment": pairs}).to_string(),
    )
    .unwrap();
    let (hostfile, _) = hostfile(&dir, 2);
    let secret = [
        ("TASKGRAPH_SECRET", "a secret for the two processes"),
        ("TMPDIR", path(&tmp)),
    ];
    let mut processes: Vec<_> = ["0", "1"]
        .iter()
        .map(|process| {
            start(
                &[
                    "run",
                    path(&file),
                    "--hostfile",
                    path(&hostfile),
                    "--process",
                    process,
                    "--assignment",
                    path(&placed),
                    // Small enough that each process spills.
                    "--memory-limit",
                    "300KB",
                ],
                &secret,
            )
        })
        .collect();
    assert!(
        eventually(Duration::from_secs(30), || leftovers(&tmp).len() == 2),
        "both processes spill: {:?}",
        leftovers(&tmp)
    );
    std::thread::sleep(Duration::from_secs(3));
    for process in &processes {
        signal(process.id(), "-TERM");
    }
    for (i, process) in processes.iter_mut().enumerate() {
        let (status, stderr) = finish(process, Duration::from_secs(30));
        assert_eq!(status.code(), Some(130), "process {i}: {stderr}");
    }
    assert_eq!(leftovers(&tmp), Vec::<String>::new());
}

/// The keys (as JSON text) that `term` refers to.
fn refs(term: &serde_json::Value, found: &mut std::collections::HashSet<String>) {
    match term {
        serde_json::Value::Object(fields) => {
            if let Some(key) = fields.get("ref") {
                found.insert(key.to_string());
            }
            for value in fields.values() {
                refs(value, found);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                refs(item, found);
            }
        }
        _ => {}
    }
}
