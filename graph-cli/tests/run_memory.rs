//! `taskgraph run --memory-limit SIZE`: the same results as without a limit,
//! locally and across processes, within the limit, spilling what does not
//! fit; a result larger than the limit is an error naming its task; and
//! `taskgraph generate --value-bytes` makes the graphs to try it on.

mod common;

use common::{scratch, taskgraph};
use graph_core::generate::Shape;

/// Runs `taskgraph run FILE --json ARGS...` and returns its report.
fn run_json(file: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", file, "--json"];
    all.extend_from_slice(args);
    let run = taskgraph(&all, b"");
    assert_eq!(run.code, Some(0), "{all:?}: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn a_limit_keeps_the_results_locally_and_across_processes() {
    let dir = scratch("memory-limit");
    for shape in [Shape::ArrayCumsum, Shape::Shuffle, Shape::Random] {
        let file = dir.join(format!("{}.json", shape.name()));
        let file = file.to_str().unwrap();
        let made = taskgraph(
            &[
                "generate",
                shape.name(),
                "--tasks",
                "600",
                "--value-bytes",
                "20KB",
                "-o",
                file,
            ],
            b"",
        );
        assert_eq!(made.code, Some(0), "{}", made.stderr);
        let free = run_json(file, &["--threads", "2"]);
        let peak = free["peak_bytes"].as_u64().unwrap();
        assert_eq!(free["spilled_bytes"], 0);
        let limit = (peak / 2).max(400_000);
        let limit_text = limit.to_string();
        for args in [
            vec!["--threads", "2", "--memory-limit", &limit_text],
            vec!["--processes", "2", "--memory-limit", &limit_text],
        ] {
            let limited = run_json(file, &args);
            assert_eq!(
                limited["results"],
                free["results"],
                "{} {args:?}",
                shape.name()
            );
            // peak_bytes counts each result as it comes, before anything
            // spills: across processes, a small result (under 64 KiB, sent
            // whole and unannounced) may arrive while the limit is full.
            let slack = if args[0] == "--processes" {
                64 * 1024
            } else {
                0
            };
            assert!(
                limited["peak_bytes"].as_u64().unwrap() <= limit + slack,
                "{} {args:?}: {limited}",
                shape.name()
            );
        }
        let limited = run_json(file, &["--threads", "2", "--memory-limit", &limit_text]);
        if peak > limit + 200_000 {
            assert!(
                limited["spilled_bytes"].as_u64().unwrap() > 0,
                "{}",
                shape.name()
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn generated_values_have_their_size() {
    let run = taskgraph(
        &[
            "generate",
            "chain",
            "--tasks",
            "3",
            "--value-bytes",
            "1KiB",
            "-o",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(r#"{"key":["chain",1],"task":{"call":"blob","args":[1024,1,{"ref":["chain",0]}]},"size":1024}"#),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(r#""call":"checksum""#),
        "{}",
        run.stdout
    );
}

#[test]
fn a_result_larger_than_the_limit_is_an_error_naming_it() {
    let graph = r#"{"format": "taskgraph-json/1", "tasks": [
        {"key": "seed", "task": 1},
        {"key": ["big", 0], "task": {"call": "blob", "args": [5000000, {"ref": "seed"}]}},
        {"key": "out", "task": {"call": "checksum", "args": [{"ref": ["big", 0]}]}}]}"#;
    let run = taskgraph(&["run", "-", "--memory-limit", "1MB"], graph.as_bytes());
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    // The op itself refuses, before it allocates.
    assert_eq!(
        run.stderr,
        "error: task ('big', 0) failed in op `blob`: blob(): the result would take 5000000 bytes, \
         more than the limit of 1000000 bytes for one value\n"
    );
}

#[test]
fn bad_sizes_are_usage_errors() {
    for bad in ["0", "-5", "NaN", "12XB", "inf"] {
        let flag = format!("--memory-limit={bad}");
        let run = taskgraph(&["run", "-", &flag], b"");
        assert_eq!(run.code, Some(2), "{bad}");
        assert!(
            run.stderr.contains("--memory-limit"),
            "{bad}: {}",
            run.stderr
        );
    }
}

/// The environment of the running process `pid` once it holds `name`, or
/// what it holds after ten seconds (or when the process is gone).
#[cfg(target_os = "linux")]
fn environment_with(pid: u32, name: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let vars: Vec<String> = environ
            .split(|&b| b == 0)
            .map(|var| String::from_utf8_lossy(var).into_owned())
            .collect();
        let prefix = format!("{name}=");
        if vars.iter().any(|var| var.starts_with(&prefix)) || std::time::Instant::now() > deadline {
            return vars;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// mimalloc keeps freed memory for a second by default, which put runs
/// across processes 100 MB over their limit: `taskgraph` runs with it given
/// back after 10 ms, unless the user says otherwise.
#[cfg(target_os = "linux")]
#[test]
fn freed_memory_goes_back_to_the_system_within_milliseconds() {
    let dir = scratch("purge-delay");
    let file = dir.join("sleep.json");
    let task = r#"{"key": "nap", "task": {"call": "sleep", "args": [1, 30.0]}}"#;
    std::fs::write(&file, common::document(&[task.to_string()])).unwrap();
    for (given, expected) in [(None, "10"), (Some("250"), "250")] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_taskgraph"));
        command
            .args(["run", file.to_str().unwrap()])
            .env_remove("MIMALLOC_PURGE_DELAY")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(value) = given {
            command.env("MIMALLOC_PURGE_DELAY", value);
        }
        let mut child = command.spawn().unwrap();
        let vars = environment_with(child.id(), "MIMALLOC_PURGE_DELAY");
        child.kill().unwrap();
        child.wait().unwrap();
        let setting = format!("MIMALLOC_PURGE_DELAY={expected}");
        assert_eq!(
            vars.iter()
                .filter(|var| var.starts_with("MIMALLOC_PURGE_DELAY="))
                .collect::<Vec<_>>(),
            [&setting],
            "given {given:?}"
        );
    }
}
