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
use run_distributed_common::{
    alive, assignment_with, children_of, eventually, failing_chain, finish, has_connected,
    hostfile, leftovers, path, signal, start, write_graph,
};

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
    write_graph(&dir.join(format!("{shape}.json")), &tasks)
}

/// When the victim is killed.
#[derive(Clone, Copy, Debug)]
enum When {
    /// As soon as every worker process has started, while they connect.
    Started,
    /// As soon as every process is connected, before much has run.
    Connected,
    /// This long after every process is connected.
    After(Duration),
    /// Once the first victim has bytes on their way to another process,
    /// this long after it first had: in the middle of sending a result.
    Sending(Duration),
}

/// The bytes process `pid` has sent on TCP that are not yet taken by the
/// other end, over all its sockets (Linux).
fn in_flight(pid: u32) -> u64 {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let target = std::fs::read_link(e.path()).ok()?;
                    let target = target.to_string_lossy();
                    Some(
                        target
                            .strip_prefix("socket:[")?
                            .strip_suffix(']')?
                            .to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let inode = fields.get(9)?;
            let (tx, _rx) = fields.get(4)?.split_once(':')?;
            inodes
                .iter()
                .any(|i| i == inode)
                .then(|| u64::from_str_radix(tx, 16).ok())?
        })
        .sum()
}

/// Waits until `condition` holds, looking every millisecond, at most
/// `limit`; whether it did.
fn poll(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// A graph whose results cross between the two processes of
/// [`transfer_assignment`]: `seeds` sleeping tasks on process 1, each read
/// by a blob of `bytes` bytes there, each blob's checksum taken on process
/// 0, and a checksum of those.
fn transfer_graph(dir: &Path, seeds: usize, bytes: u64) -> PathBuf {
    let mut tasks = Vec::new();
    for i in 0..seeds {
        tasks.push(sleepy(&format!("seed-{i}"), i.to_string(), 0.1));
        tasks.push(format!(
            r#"{{"key":"big-{i}","task":{{"call":"blob","args":[{bytes},{}]}}}}"#,
            reference(&format!("seed-{i}"))
        ));
        tasks.push(format!(
            r#"{{"key":"sum-{i}","task":{{"call":"checksum","args":[{}]}}}}"#,
            reference(&format!("big-{i}"))
        ));
    }
    let sums: Vec<String> = (0..seeds).map(|i| reference(&format!("sum-{i}"))).collect();
    tasks.push(format!(
        r#"{{"key":"total","task":{{"call":"checksum","args":[{}]}}}}"#,
        sums.join(",")
    ));
    let file = write_graph(&dir.join(format!("transfer-{seeds}.json")), &tasks);
    let pairs: Vec<String> = (0..seeds)
        .flat_map(|i| {
            [
                format!(r#"["seed-{i}",1]"#),
                format!(r#"["big-{i}",1]"#),
                format!(r#"["sum-{i}",0]"#),
            ]
        })
        .chain([r#"["total",0]"#.to_string()])
        .collect();
    std::fs::write(
        dir.join(format!("transfer-{seeds}.assignment.json")),
        format!(r#"{{"workers":2,"assignment":[{}]}}"#, pairs.join(",")),
    )
    .unwrap();
    file
}

struct Ended {
    code: Option<i32>,
    report: serde_json::Value,
    stderr: String,
    /// From the signal to the supervisor's end.
    after_signal: Duration,
}

/// What else a run of [`run_signalling_with`] does: `then`, a signal sent
/// to the victims this long after the first (`-CONT` after `-STOP`), and
/// `tmp`, the run's `TMPDIR`.
#[derive(Default)]
struct Also<'a> {
    then: Option<(&'a str, Duration)>,
    tmp: Option<&'a Path>,
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
    run_signalling(file, processes, victims, "-9", when, args)
}

/// As [`run_killing`], sending the victims `how` (`-9`, `-STOP`).
fn run_signalling(
    file: &Path,
    processes: usize,
    victims: &[usize],
    how: &str,
    when: When,
    args: &[&str],
) -> Ended {
    run_signalling_with(file, processes, victims, how, when, args, Also::default())
}

/// As [`run_signalling`], doing `also`.
fn run_signalling_with(
    file: &Path,
    processes: usize,
    victims: &[usize],
    how: &str,
    when: When,
    args: &[&str],
    also: Also<'_>,
) -> Ended {
    let n = processes.to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_taskgraph"));
    command
        .args(["run", path(file), "--json", "--processes", &n])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(tmp) = also.tmp {
        command.env("TMPDIR", tmp);
    }
    let mut supervisor = command.spawn().unwrap();
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
    if let When::Started = when {
        for &victim in victims {
            signal(workers[victim], how);
        }
    }
    for &pid in workers.iter().filter(|_| !matches!(when, When::Started)) {
        assert!(
            eventually(Duration::from_secs(30), || has_connected(pid, processes)),
            "worker {pid} connects"
        );
    }
    match when {
        When::Started | When::Connected => {}
        When::After(wait) => std::thread::sleep(wait),
        When::Sending(after) => {
            // Until it sends, or the run has ended without the kill (on a
            // loaded machine): the caller sees which.
            let victim = workers[victims[0]];
            let sending = || in_flight(victim) >= 64 << 10 || !alive(victim);
            assert!(
                poll(Duration::from_secs(60), sending),
                "worker {victim} sends its result"
            );
            if !after.is_zero() {
                std::thread::sleep(after);
                poll(Duration::from_secs(60), sending);
            }
        }
    }
    // Children are listed in the order they were started: by number.
    match when {
        When::Started => {}
        // It may have ended meanwhile.
        When::Sending(_) => {
            for &victim in victims {
                let _ = Command::new("kill")
                    .args([how, &workers[victim].to_string()])
                    .status();
            }
        }
        _ => {
            for &victim in victims {
                signal(workers[victim], how);
            }
        }
    }
    let signalled = Instant::now();
    let then = also.then.map(|(how, after)| {
        let victims: Vec<u32> = victims.iter().map(|&v| workers[v]).collect();
        let how = how.to_owned();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            for victim in victims {
                // It may have been stopped for good meanwhile.
                let _ = Command::new("kill")
                    .args([how.as_str(), &victim.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
        })
    });
    let (status, stderr) = finish(&mut supervisor, Duration::from_secs(120));
    let after_signal = signalled.elapsed();
    if let Some(then) = then {
        then.join().unwrap();
    }
    let mut stdout = String::new();
    if let Some(pipe) = supervisor.stdout.as_mut() {
        std::io::Read::read_to_string(pipe, &mut stdout).unwrap();
    }
    Ended {
        code: status.code(),
        report: serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null),
        stderr,
        after_signal,
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
fn a_process_lost_while_it_sends_its_results_is_recovered() {
    let dir = scratch("recovery-transfer");
    // After its last task, as its one result (100 MB) is on its way; then
    // in the middle of sending a later one of four (50 MB each).
    for (seeds, bytes, after) in [(1, 100_000_000, 0), (4, 50_000_000, 150)] {
        let kill_at = Duration::from_millis(after);
        let file = transfer_graph(&dir, seeds, bytes);
        let assignment = dir.join(format!("transfer-{seeds}.assignment.json"));
        let expected = local_results(&file);
        let case = format!("{seeds} results sent, killed {after} ms into sending");
        // On a loaded machine the kill may come once the last bytes are
        // in the kernel's buffers, which still deliver them: then nothing
        // is lost, and the case is tried again.
        let mut lost_in_flight = false;
        for _ in 0..4 {
            let ended = run_killing(
                &file,
                2,
                &[1],
                When::Sending(kill_at),
                &["--assignment", path(&assignment)],
            );
            assert_eq!(
                ended.report["results"], expected,
                "{case}: {}",
                ended.stderr
            );
            let recomputed = ended.report["recomputed_tasks"].as_u64().unwrap_or(0);
            if ended.report["attempts"] == 2 && recomputed >= 1 {
                check_recovered(&ended, &expected, &[1], &case);
                // No more than the lost results not yet received and their
                // seeds, which no survivor held.
                assert!(
                    recomputed <= 2 * seeds as u64,
                    "{case}: {recomputed} recomputed"
                );
                lost_in_flight = true;
                break;
            }
        }
        assert!(
            lost_in_flight,
            "{case}: no kill landed while a blob was on its way"
        );
    }
}

#[test]
fn a_process_lost_while_the_processes_connect_is_recovered() {
    let dir = scratch("recovery-connecting");
    let file = graph(&dir, "tree");
    let expected = local_results(&file);
    for (processes, victim) in [(3, 1), (3, 0), (4, 3)] {
        let started = Instant::now();
        let ended = run_killing(
            &file,
            processes,
            &[victim],
            When::Started,
            &["--connect-timeout", "120"],
        );
        let case = format!("process {victim} of {processes} lost while connecting");
        check_recovered(&ended, &expected, &[victim], &case);
        // The others stop waiting for it at once, not at the connect
        // timeout.
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{case}: {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_frozen_worker_process_is_left_behind_after_the_heartbeat_timeout() {
    let dir = scratch("recovery-frozen");
    let file = graph(&dir, "tree");
    let expected = local_results(&file);
    let ended = run_signalling(
        &file,
        3,
        &[1],
        "-STOP",
        When::After(Duration::from_millis(300)),
        &["--heartbeat-timeout", "1"],
    );
    check_recovered(&ended, &expected, &[1], "frozen");
}

#[test]
fn a_worker_process_paused_past_the_heartbeat_is_stopped_and_its_work_recovered() {
    // Paused longer than --heartbeat-timeout, then resumed: the others lost
    // it first, so it is stopped and the run goes on without it (it used to
    // say they had lost it, and the run was abandoned, 7 times of 7).
    let dir = scratch("recovery-paused");
    let file = graph(&dir, "tree");
    let expected = local_results(&file);
    for (processes, pause) in [(3, 2500), (2, 4000)] {
        let ended = run_signalling_with(
            &file,
            processes,
            &[1],
            "-STOP",
            When::After(Duration::from_millis(300)),
            &["--heartbeat-timeout", "1", "--retries", "2"],
            Also {
                then: Some(("-CONT", Duration::from_millis(pause))),
                ..Also::default()
            },
        );
        let case = format!("paused {pause} ms of {processes}");
        check_recovered(&ended, &expected, &[1], &case);
        assert!(
            ended
                .stderr
                .contains("was silent for longer than --heartbeat-timeout"),
            "{case}: {}",
            ended.stderr
        );
    }
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
    assert!(
        !ended.stderr.contains("processes 1 were"),
        "{}",
        ended.stderr
    );
}

#[test]
fn a_run_that_cannot_go_on_ends_at_its_loss_not_a_grace_period_later() {
    // The survivors are stopped at once; they used to wait, idle, for the
    // 10 s the supervisor gives processes to stop on their own.
    let dir = scratch("recovery-abandoned");
    let file = graph(&dir, "tree");
    for (victims, retries) in [(&[1][..], "0"), (&[1, 2][..], "1")] {
        let ended = run_killing(
            &file,
            3,
            victims,
            When::After(Duration::from_millis(300)),
            &["--retries", retries],
        );
        let case = format!("--retries {retries}");
        assert_eq!(ended.code, Some(2), "{case}: {}", ended.stderr);
        assert!(
            ended.stderr.contains("was killed by signal 9")
                && ended.stderr.contains("the run was abandoned"),
            "{case}: {}",
            ended.stderr
        );
        assert!(
            !ended.stderr.contains("was interrupted"),
            "{case}: {}",
            ended.stderr
        );
        assert!(
            ended.after_signal < Duration::from_secs(6),
            "{case}: ended {:?} after the loss",
            ended.after_signal
        );
    }
}

/// A tree like [`graph`]'s `"tree"`, of 200 KB results (the built-in
/// `blob`): under `--memory-limit 1MB` every process spills.
fn spilling_tree(dir: &Path) -> PathBuf {
    let blob = |seed: String, inputs: &[String]| {
        let mut args = vec!["200000".to_owned(), seed];
        args.extend(inputs.iter().map(|key| reference(key)));
        format!(r#"{{"call":"blob","args":[{}]}}"#, args.join(","))
    };
    let mut tasks = Vec::new();
    let leaves = 64;
    for l in 0..leaves {
        tasks.push(sleepy(&format!("n-0-{l}"), blob(l.to_string(), &[]), 0.02));
    }
    let (mut level, mut width) = (0, leaves);
    while width > 1 {
        for j in 0..width / 2 {
            let inputs = [
                format!("n-{level}-{}", 2 * j),
                format!("n-{level}-{}", 2 * j + 1),
            ];
            tasks.push(sleepy(
                &format!("n-{}-{j}", level + 1),
                blob(j.to_string(), &inputs),
                0.02,
            ));
        }
        level += 1;
        width /= 2;
    }
    tasks.push(format!(
        r#"{{"key":"root","task":{{"call":"checksum","args":[{}]}}}}"#,
        reference(&format!("n-{level}-0"))
    ));
    write_graph(&dir.join("spilling-tree.json"), &tasks)
}

#[test]
fn a_killed_worker_leaves_no_spill_directory_behind() {
    // A worker killed cannot remove its own spill directory; it is inside
    // the supervisor's, which goes however the run ends: recovered, or
    // abandoned with --retries 0.
    let dir = scratch("recovery-spill-dir");
    let file = spilling_tree(&dir);
    let expected = local_results(&file);
    for retries in ["2", "0"] {
        let tmp = dir.join(format!("tmp-{retries}"));
        std::fs::create_dir_all(&tmp).unwrap();
        let ended = run_signalling_with(
            &file,
            3,
            &[1],
            "-9",
            When::After(Duration::from_millis(400)),
            &["--memory-limit", "1MB", "--retries", retries],
            Also {
                tmp: Some(&tmp),
                ..Also::default()
            },
        );
        if retries == "0" {
            assert_eq!(ended.code, Some(2), "{}", ended.stderr);
        } else {
            check_recovered(&ended, &expected, &[1], "spilling");
        }
        assert_eq!(leftovers(&tmp), Vec::<String>::new(), "--retries {retries}");
    }
}

/// The shared secret of the hostfile runs.
const SECRET: &str = "a secret of the recovery tests";

/// Every process of `taskgraph run FILE --json --hostfile H --process I
/// ARGS`, killing processes `victims` `wait` after all have connected;
/// how each ended, by process.
fn run_hostfile_killing(
    file: &Path,
    processes: usize,
    victims: &[usize],
    wait: Duration,
    args: &[&str],
) -> Vec<Ended> {
    run_hostfile_signalling(file, processes, victims, "-9", wait, args)
}

/// As [`run_hostfile_killing`], sending the victims `how` (`-9`, or
/// `-STOP`: frozen, then killed once the others have ended).
fn run_hostfile_signalling(
    file: &Path,
    processes: usize,
    victims: &[usize],
    how: &str,
    wait: Duration,
    args: &[&str],
) -> Vec<Ended> {
    let dir = file.parent().unwrap();
    let (hosts, _) = hostfile(dir, processes);
    let mut children: Vec<_> = (0..processes)
        .map(|process| {
            let process = process.to_string();
            let mut command = vec![
                "run",
                path(file),
                "--json",
                "--hostfile",
                path(&hosts),
                "--process",
                &process,
            ];
            command.extend(args);
            start(&command, &[("TASKGRAPH_SECRET", SECRET)])
        })
        .collect();
    for child in &children {
        assert!(
            eventually(Duration::from_secs(30), || has_connected(
                child.id(),
                processes
            )),
            "process {} connects",
            child.id()
        );
    }
    std::thread::sleep(wait);
    for &victim in victims {
        signal(children[victim].id(), how);
    }
    let signalled = Instant::now();
    let order: Vec<usize> = (0..processes)
        .filter(|p| !victims.contains(p))
        .chain(victims.iter().copied())
        .collect();
    let mut ended: Vec<(usize, Ended)> = order
        .into_iter()
        .map(|process| {
            let child = &mut children[process];
            if victims.contains(&process) && how != "-9" {
                signal(child.id(), "-9");
            }
            let (status, stderr) = finish(child, Duration::from_secs(120));
            let mut stdout = String::new();
            if let Some(pipe) = child.stdout.as_mut() {
                std::io::Read::read_to_string(pipe, &mut stdout).unwrap();
            }
            let end = Ended {
                code: status.code(),
                report: serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null),
                stderr,
                after_signal: signalled.elapsed(),
            };
            (process, end)
        })
        .collect();
    ended.sort_by_key(|(process, _)| *process);
    ended.into_iter().map(|(_, end)| end).collect()
}

#[test]
fn hostfile_runs_that_allow_shrinking_go_on_without_a_lost_process() {
    let dir = scratch("recovery-hostfile");
    for shape in ["random", "shuffle", "tree"] {
        let file = graph(&dir, shape);
        let expected = local_results(&file);
        // Process 0 prints the results; when it is lost, the lowest
        // survivor does.
        for (processes, victim, printer) in [(3, 1, 0), (3, 0, 1), (2, 1, 0), (4, 2, 0)] {
            let case = format!("{shape} over {processes}, process {victim} lost");
            let ended = run_hostfile_killing(
                &file,
                processes,
                &[victim],
                Duration::from_millis(300),
                &["--allow-shrink", "--heartbeat-timeout", "5"],
            );
            for (process, end) in ended.iter().enumerate() {
                if process == victim {
                    assert_eq!(end.code, None, "{case}: killed");
                    continue;
                }
                assert_eq!(
                    end.code,
                    Some(0),
                    "{case}, process {process}: {}",
                    end.stderr
                );
                assert!(
                    end.stderr
                        .contains("regrouping with the processes still alive"),
                    "{case}, process {process}: {}",
                    end.stderr
                );
                if process == printer {
                    assert_eq!(end.report["results"], expected, "{case}");
                    // The survivors heard what the lost process had run
                    // (it ran for 300 ms), and count what runs again.
                    let heard: u64 = end
                        .stderr
                        .split_once(" had run ")
                        .and_then(|(_, rest)| rest.split_once(" tasks")?.0.parse().ok())
                        .unwrap_or_else(|| panic!("{case}: {}", end.stderr));
                    assert!(heard > 0, "{case}: {}", end.stderr);
                    let recomputed = end.report["recomputed_tasks"].as_u64().unwrap();
                    let ran = end.report["tasks_run"].as_u64().unwrap();
                    assert!(recomputed <= ran, "{case}: {recomputed} > {ran}");
                    assert_eq!(end.report["attempts"], 2, "{case}");
                    assert_eq!(end.report["lost_processes"], serde_json::json!([victim]));
                    assert_eq!(end.report["processes"], processes - 1, "{case}");
                    assert!(
                        end.stderr.contains(&format!(
                            "attempt 2 goes on with processes {} of the hostfile, without process {victim} (this one is now process 0); it had run ",
                            (0..processes)
                                .filter(|&p| p != victim)
                                .map(|p| p.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                        "{case}: {}",
                        end.stderr
                    );
                } else {
                    assert_eq!(
                        end.report,
                        serde_json::Value::Null,
                        "{case}: only one prints"
                    );
                }
            }
        }
    }
}

#[test]
fn hostfile_runs_stop_at_a_loss_without_allow_shrink_or_a_majority() {
    let dir = scratch("recovery-hostfile-stop");
    let file = graph(&dir, "random");
    // Without --allow-shrink, as before: the survivors name the lost one.
    let ended = run_hostfile_killing(&file, 3, &[1], Duration::from_millis(300), &[]);
    for process in [0, 2] {
        assert_eq!(ended[process].code, Some(2), "{}", ended[process].stderr);
        assert!(
            ended[process].stderr.contains("process 1 ("),
            "{}",
            ended[process].stderr
        );
    }
    // One of two, without process 0, cannot tell a dead peer from a cut
    // network: it stops.
    let ended = run_hostfile_killing(
        &file,
        2,
        &[0],
        Duration::from_millis(300),
        &["--allow-shrink"],
    );
    assert_eq!(ended[1].code, Some(2), "{}", ended[1].stderr);
    assert!(
        ended[1]
            .stderr
            .contains("only process 1 of 2 are still in touch: not a majority"),
        "{}",
        ended[1].stderr
    );
    // More losses than --retries.
    let ended = run_hostfile_killing(
        &file,
        4,
        &[3],
        Duration::from_millis(300),
        &["--allow-shrink", "--retries", "0"],
    );
    for end in &ended[..3] {
        assert_eq!(end.code, Some(2), "{}", end.stderr);
        assert!(
            end.stderr.contains("more losses than --retries 0 allows"),
            "{}",
            end.stderr
        );
    }
}

#[test]
fn a_failing_task_ends_a_hostfile_run_that_allows_shrinking() {
    let dir = scratch("recovery-hostfile-failure");
    let file = failing_chain(&dir, "failing.json", 10, 0.02, 5);
    let assignment = assignment_with(&dir, 10, 3, 5, 1);
    let ended = run_hostfile_killing(
        &file,
        3,
        &[],
        Duration::ZERO,
        &["--allow-shrink", "--assignment", path(&assignment)],
    );
    // The task fails again wherever it runs: the others do not go on
    // without the process it failed in, and every process names it.
    for (process, end) in ended.iter().enumerate() {
        assert_eq!(end.code, Some(2), "process {process}: {}", end.stderr);
        assert!(
            end.stderr.contains("task 'x-5' failed"),
            "process {process}: {}",
            end.stderr
        );
        assert!(
            !end.stderr.contains("regrouping"),
            "process {process}: {}",
            end.stderr
        );
    }
}

#[test]
fn a_frozen_process_of_a_hostfile_run_is_left_behind_after_the_heartbeat_timeout() {
    let dir = scratch("recovery-hostfile-frozen");
    let file = graph(&dir, "tree");
    let expected = local_results(&file);
    let ended = run_hostfile_signalling(
        &file,
        3,
        &[2],
        "-STOP",
        Duration::from_millis(300),
        &["--allow-shrink", "--heartbeat-timeout", "1"],
    );
    assert_eq!(ended[0].code, Some(0), "{}", ended[0].stderr);
    assert_eq!(ended[1].code, Some(0), "{}", ended[1].stderr);
    assert_eq!(ended[0].report["results"], expected);
    assert_eq!(ended[0].report["lost_processes"], serde_json::json!([2]));
    assert!(
        ended[0]
            .stderr
            .contains("goes on with processes 0, 1 of the hostfile, without process 2"),
        "{}",
        ended[0].stderr
    );
}
