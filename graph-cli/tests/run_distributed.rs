//! `taskgraph run --processes N` and `--hostfile F --process I`: the same
//! results as the local executor, across real processes on loopback; a failing
//! op and a killed process end the run with an error.

mod common;
mod run_distributed_common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_fields, scratch, taskgraph};
use run_distributed_common::{
    assignment_with, children_of, failing_chain, finish, hostfile, path, slow_chain,
};

#[test]
fn processes_give_the_local_executors_results() {
    let dir = scratch("distributed-same");
    for shape in ["array-sum-transpose", "shuffle", "tree", "random"] {
        let file = dir.join(format!("{shape}.json"));
        let generated = taskgraph(
            &["generate", shape, "--tasks", "600", "-o", path(&file)],
            b"",
        );
        assert_eq!(generated.code, Some(0), "{}", generated.stderr);
        let local = taskgraph(&["run", path(&file), "--json"], b"");
        assert_eq!(local.code, Some(0), "{}", local.stderr);
        let local: serde_json::Value = serde_json::from_str(&local.stdout).unwrap();
        for (processes, threads) in [("2", "1"), ("4", "1"), ("2", "2")] {
            let run = taskgraph(
                &[
                    "run",
                    path(&file),
                    "--json",
                    "--processes",
                    processes,
                    "--threads",
                    threads,
                ],
                b"",
            );
            assert_eq!(
                run.code,
                Some(0),
                "{shape} {processes}x{threads}: {}",
                run.stderr
            );
            assert_fields(
                run.stdout.trim(),
                &[
                    "results",
                    "tasks_run",
                    "peak_held",
                    "seconds",
                    "processes",
                    "workers",
                    "cut_edges",
                    "transfer_bytes",
                    "values_sent",
                    "peak_bytes",
                    "spilled_bytes",
                    "attempts",
                    "lost_processes",
                    "recomputed_tasks",
                ],
            );
            let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            assert_eq!(
                report["results"], local["results"],
                "{shape} {processes}x{threads}"
            );
            assert_eq!(report["tasks_run"], local["tasks_run"]);
        }
    }
}

#[test]
fn the_cut_edges_are_what_assign_predicted() {
    let dir = scratch("distributed-cut");
    let file = dir.join("g.json");
    taskgraph(
        &[
            "generate",
            "array-cumsum",
            "--tasks",
            "800",
            "-o",
            path(&file),
        ],
        b"",
    );
    let placed = taskgraph(&["assign", path(&file), "--workers", "2", "--json"], b"");
    let assignment = dir.join("a.json");
    std::fs::write(&assignment, &placed.stdout).unwrap();
    let placed: serde_json::Value = serde_json::from_str(&placed.stdout).unwrap();
    let run = taskgraph(
        &[
            "run",
            path(&file),
            "--json",
            "--processes",
            "2",
            "--assignment",
            path(&assignment),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["cut_edges"], placed["edge_cut"]);
    assert_eq!(report["transfer_bytes"], placed["transfer_bytes"]);
}

#[test]
fn a_failing_op_on_a_nonzero_worker_is_reported() {
    let dir = scratch("distributed-fail");
    let file = failing_chain(&dir, "chain.json", 10, 0.0, 6);
    for (processes, threads, worker) in [("2", "1", 1), ("4", "1", 3), ("2", "2", 3)] {
        let workers = processes.parse::<usize>().unwrap() * threads.parse::<usize>().unwrap();
        let assignment = assignment_with(&dir, 10, workers, 6, worker);
        let run = taskgraph(
            &[
                "run",
                path(&file),
                "--processes",
                processes,
                "--threads",
                threads,
                "--assignment",
                path(&assignment),
            ],
            b"",
        );
        assert_eq!(run.code, Some(2));
        assert_eq!(
            run.stderr,
            format!("error: task 'x-6' failed on worker {worker} in op `div`: division by zero\n")
        );
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_killed_worker_process_ends_the_run_with_an_error() {
    let dir = scratch("distributed-kill");
    let file = slow_chain(&dir, "chain.json", 200, 0, 0.02);
    let assignment = assignment_with(&dir, 200, 2, 6, 1);
    let mut supervisor = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
        .args([
            "run",
            path(&file),
            "--processes",
            "2",
            "--assignment",
            path(&assignment),
            "--retries",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let workers = loop {
        let workers = children_of(supervisor.id());
        if workers.len() == 2 || started.elapsed() > Duration::from_secs(20) {
            break workers;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(workers.len(), 2, "both worker processes start");
    std::thread::sleep(Duration::from_millis(500));
    let victim = workers[1];
    assert!(
        Command::new("kill")
            .args(["-9", &victim.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let (status, stderr) = finish(&mut supervisor, Duration::from_secs(30));
    assert_eq!(status.code(), Some(2));
    assert!(
        stderr.contains(&format!("(pid {victim}) was killed by signal 9")),
        "{stderr}"
    );
}

#[test]
fn a_killed_host_ends_the_run_in_the_other_processes() {
    let dir = scratch("distributed-kill-host");
    let file = slow_chain(&dir, "chain.json", 200, 0, 0.02);
    let assignment = assignment_with(&dir, 200, 2, 6, 1);
    let (hostfile, ports) = hostfile(&dir, 2);
    let start = |process: &str| {
        Command::new(env!("CARGO_BIN_EXE_taskgraph"))
            .env("TASKGRAPH_SECRET", "a secret for the two processes")
            .args([
                "run",
                path(&file),
                "--hostfile",
                path(&hostfile),
                "--process",
                process,
            ])
            .args(["--assignment", path(&assignment), "--connect-timeout", "10"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut first = start("0");
    let mut second = start("1");
    std::thread::sleep(Duration::from_millis(800));
    second.kill().unwrap();
    second.wait().unwrap();
    let (status, stderr) = finish(&mut first, Duration::from_secs(40));
    assert_eq!(status.code(), Some(2));
    // On a slow machine the second process may die before it connects.
    let lost = format!(
        "error: process 1 ({}) went away before the run finished (did it die?)\n",
        ports[1]
    );
    let never = format!(
        "error: process 1 ({}) did not connect within 10 s; is it running?\n",
        ports[1]
    );
    assert!(stderr == lost || stderr == never, "{stderr}");
}

#[test]
fn distributed_options_are_checked() {
    let dir = scratch("distributed-options");
    let file = slow_chain(&dir, "chain.json", 10, 0, 0.0);
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", path(&file), "--assignment", "a.json"],
            "error: --assignment places tasks across processes: add --processes N\n",
        ),
        (
            &["run", "-", "--processes", "2"],
            "error: --processes reads the graph in every process: give a file, not standard input\n",
        ),
        (
            &[
                "run",
                path(&file),
                "--hostfile",
                "/nonexistent/hosts",
                "--process",
                "0",
            ],
            "error: hostfile /nonexistent/hosts: No such file or directory (os error 2)\n",
        ),
    ];
    for (args, expected) in cases {
        let run = taskgraph(args, b"");
        assert_eq!(run.code, Some(2), "{args:?}");
        assert_eq!(run.stderr, expected);
    }
    // Every number is checked before anything starts, naming its flag.
    let seconds = "give a number of seconds more than 0 and at most 86400 (a day)";
    for flag in ["--connect-timeout", "--heartbeat-timeout"] {
        for bad in [
            "NaN", "inf", "-inf", "1e300", "1e19", "0", "-1", "86401", "soon",
        ] {
            let value = format!("{flag}={bad}");
            let run = taskgraph(&["run", path(&file), "--processes", "2", &value], b"");
            assert_eq!(run.code, Some(2), "{value}");
            let why = if bad == "soon" {
                "give a number of seconds"
            } else {
                seconds
            };
            assert!(
                run.stderr.starts_with(&format!(
                    "error: invalid value '{bad}' for '{flag} <SECONDS>': {why}\n"
                )),
                "{value}: {}",
                run.stderr
            );
        }
    }
    let counts: [(&str, &str, &str); 6] = [
        (
            "--processes",
            "0",
            "<N>': give a number of processes from 1 to 256",
        ),
        (
            "--processes",
            "257",
            "<N>': give a number of processes from 1 to 256",
        ),
        (
            "--threads",
            "257",
            "<THREADS>': give a number of threads (0: one per core) from 0 to 256",
        ),
        (
            "--threads",
            "-1",
            "<THREADS>': give a number of threads (0: one per core) from 0 to 256",
        ),
        (
            "--process",
            "256",
            "<I>': give a process index from 0 to 255",
        ),
        ("--process", "x", "<I>': give a process index from 0 to 255"),
    ];
    for (flag, bad, why) in counts {
        let value = format!("{flag}={bad}");
        let mut args = vec!["run", path(&file), &value];
        if flag == "--process" {
            args.extend(["--hostfile", "hosts"]);
        }
        let run = taskgraph(&args, b"");
        assert_eq!(run.code, Some(2), "{value}");
        assert!(
            run.stderr
                .starts_with(&format!("error: invalid value '{bad}' for '{flag} {why}\n")),
            "{value}: {}",
            run.stderr
        );
    }
    let run = taskgraph(
        &["run", path(&file), "--processes", "8", "--threads", "200"],
        b"",
    );
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: --processes 8 x --threads 200 is 1600 workers, more than the 1024 a run may have\n"
    );
    let wrong = assignment_with(&dir, 10, 3, 6, 1);
    let run = taskgraph(
        &[
            "run",
            path(&file),
            "--processes",
            "2",
            "--assignment",
            path(&wrong),
        ],
        b"",
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .ends_with("it places tasks on 3 workers, but the run has 2 (processes x threads)\n"),
        "{}",
        run.stderr
    );
}
