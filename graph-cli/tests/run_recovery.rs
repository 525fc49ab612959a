//! `taskgraph run --processes N` survives a lost process: a worker process
//! killed (SIGKILL) as the run starts or midway, the one that gathers the
//! results included, on a random graph, a shuffle and a tree of sleeping
//! tasks; the run goes on among the survivors and prints the results of the
//! local executor, with `"attempts"`, `"lost_processes"` and
//! `"recomputed_tasks"`. More losses than `--retries` end the run.

#![cfg(target_os = "linux")]

mod common;
mod run_distributed_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, taskgraph};
use run_distributed_common::{children_of, eventually, finish, path, signal, sockets_of};

/// A task `key` that sleeps `nap` seconds, then gives `value`.
fn sleepy(key: &str, value: String, nap: f64) -> String {
    format!(r#"{{"key":"{key}","task":{{"call":"sleep","args":[{value},{nap}]}}}}"#)
}

fn reference(key: &str) -> String {
    format!(r#"{{"ref":"{key}"}}"#)
}

/// A graph of sleeping tasks, about 2.5 s of work: `random` (each of 300
/// tasks adds two of the 30 before it), `shuffle` (16 mappers, then three
/// rounds of 16 reducers that each sum the round before) or `tree` (a
/// binary reduction of 128 leaves).
fn graph(dir: &Path, shape: &str) -> PathBuf {
    let mut tasks = Vec::new();
    match shape {
        "random" => {
            let mut state = 7_u64;
            let mut below = |bound: usize| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) as usize % bound
            };
            for i in 0..300_usize {
                let value = if i < 2 {
                    i.to_string()
                } else {
                    let lo = i.saturating_sub(30);
                    let a = lo + below(i - lo);
                    let b = lo + below(i - lo);
                    format!(
                        r#"{{"call":"add","args":[{},{}]}}"#,
                        reference(&format!("t-{a}")),
                        reference(&format!("t-{b}"))
                    )
                };
                tasks.push(sleepy(&format!("t-{i}"), value, 0.008));
            }
        }
        "shuffle" => {
            let width = 16;
            for m in 0..width {
                tasks.push(sleepy(&format!("map-{m}"), m.to_string(), 0.04));
            }
            for (stage, before) in [("a", "map"), ("b", "a"), ("c", "b")] {
                let inputs: Vec<String> = (0..width)
                    .map(|m| reference(&format!("{before}-{m}")))
                    .collect();
                for r in 0..width {
                    let value = format!(
                        r#"{{"call":"add","args":[{{"call":"sum","args":[{{"list":[{}]}}]}},{r}]}}"#,
                        inputs.join(",")
                    );
                    tasks.push(sleepy(&format!("{stage}-{r}"), value, 0.04));
                }
            }
        }
        _ => {
            let leaves = 128;
            for l in 0..leaves {
                tasks.push(sleepy(&format!("n-0-{l}"), l.to_string(), 0.01));
            }
            let (mut level, mut width) = (0, leaves);
            while width > 1 {
                for j in 0..width / 2 {
                    let value = format!(
                        r#"{{"call":"add","args":[{},{}]}}"#,
                        reference(&format!("n-{level}-{}", 2 * j)),
                        reference(&format!("n-{level}-{}", 2 * j + 1))
                    );
                    tasks.push(sleepy(&format!("n-{}-{j}", level + 1), value, 0.01));
                }
                level += 1;
                width /= 2;
            }
        }
    }
    let file = dir.join(format!("{shape}.json"));
    std::fs::write(
        &file,
        format!(
            r#"{{"format":"taskgraph-json/1","tasks":[{}]}}"#,
            tasks.join(",\n")
        ),
    )
    .unwrap();
    file
}

/// When the victim is killed.
#[derive(Clone, Copy, Debug)]
enum When {
    /// As soon as every process is connected, before much has run.
    Connected,
    /// This long after every process is connected.
    After(Duration),
}

struct Ended {
    code: Option<i32>,
    report: serde_json::Value,
    stderr: String,
}

/// `taskgraph run FILE --json --processes N ARGS`, killing the worker
/// processes `victims` (by number) `when`.
fn run_killing(
    file: &Path,
    processes: usize,
    victims: &[usize],
    when: When,
    args: &[&str],
) -> Ended {
    let n = processes.to_string();
    let mut supervisor = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
        .args(["run", path(file), "--json", "--processes", &n])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let workers = {
        let started = Instant::now();
        loop {
            let workers = children_of(supervisor.id());
            if workers.len() == processes || started.elapsed() > Duration::from_secs(20) {
                break workers;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    assert_eq!(workers.len(), processes, "every worker process starts");
    // Its listener, and a data and a heartbeat connection to each other.
    let connected = 1 + 2 * (processes - 1);
    for &pid in &workers {
        assert!(
            eventually(Duration::from_secs(30), || sockets_of(pid) >= connected),
            "worker {pid} connects"
        );
    }
    if let When::After(wait) = when {
        std::thread::sleep(wait);
    }
    // Children are listed in the order they were started: by number.
    for &victim in victims {
        signal(workers[victim], "-9");
    }
    let (status, stderr) = finish(&mut supervisor, Duration::from_secs(120));
    let mut stdout = String::new();
    if let Some(pipe) = supervisor.stdout.as_mut() {
        std::io::Read::read_to_string(pipe, &mut stdout).unwrap();
    }
    Ended {
        code: status.code(),
        report: serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null),
        stderr,
    }
}

fn local_results(file: &Path) -> serde_json::Value {
    let local = taskgraph(&["run", path(file), "--json"], b"");
    assert_eq!(local.code, Some(0), "{}", local.stderr);
    serde_json::from_str::<serde_json::Value>(&local.stdout).unwrap()["results"].clone()
}

/// The run went on after losing `lost` and gave the local results.
fn check_recovered(ended: &Ended, expected: &serde_json::Value, lost: &[usize], case: &str) {
    assert_eq!(ended.code, Some(0), "{case}: {}", ended.stderr);
    assert_eq!(&ended.report["results"], expected, "{case}");
    assert_eq!(ended.report["attempts"], 2, "{case}: {}", ended.stderr);
    assert_eq!(
        ended.report["lost_processes"],
        serde_json::json!(lost),
        "{case}"
    );
    assert!(ended.report["recomputed_tasks"].is_u64(), "{case}");
    for victim in lost {
        assert!(
            ended
                .stderr
                .contains(&format!("worker process {victim} (pid ")),
            "{case}: stderr names the lost process: {}",
            ended.stderr
        );
    }
    assert!(
        ended
            .stderr
            .contains("attempt 2 goes on with worker processes"),
        "{case}: {}",
        ended.stderr
    );
}

#[test]
fn a_worker_process_killed_midway_is_recovered_with_the_same_results() {
    let dir = scratch("recovery-midway");
    for shape in ["random", "shuffle", "tree"] {
        let file = graph(&dir, shape);
        let expected = local_results(&file);
        for (processes, victim) in [(3, 1), (2, 1)] {
            let ended = run_killing(
                &file,
                processes,
                &[victim],
                When::After(Duration::from_millis(300)),
                &[],
            );
            check_recovered(
                &ended,
                &expected,
                &[victim],
                &format!("{shape} over {processes}"),
            );
        }
    }
}

#[test]
fn the_process_that_gathers_the_results_can_be_lost() {
    let dir = scratch("recovery-gatherer");
    let file = graph(&dir, "random");
    let expected = local_results(&file);
    let ended = run_killing(&file, 3, &[0], When::After(Duration::from_millis(500)), &[]);
    check_recovered(&ended, &expected, &[0], "process 0 lost");
}

#[test]
fn a_process_lost_as_the_run_starts_is_recovered() {
    let dir = scratch("recovery-start");
    let file = graph(&dir, "tree");
    let expected = local_results(&file);
    let ended = run_killing(&file, 4, &[2], When::Connected, &["--threads", "2"]);
    check_recovered(&ended, &expected, &[2], "lost at the start");
}

#[test]
fn more_losses_than_retries_end_the_run_naming_them() {
    let dir = scratch("recovery-retries");
    let file = graph(&dir, "random");
    let ended = run_killing(
        &file,
        3,
        &[1, 2],
        When::After(Duration::from_millis(300)),
        &["--retries", "1"],
    );
    assert_eq!(ended.code, Some(2), "{}", ended.stderr);
    assert!(ended.stderr.contains("--retries 1"), "{}", ended.stderr);
    assert!(ended.stderr.contains("worker process"), "{}", ended.stderr);
}
