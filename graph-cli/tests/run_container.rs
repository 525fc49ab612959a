//! Under a container's limits the defaults follow them: with an
//! address-space limit (`ulimit -v`, set in a child shell), the cap on one
//! value comes from it rather than from the machine's memory, and a run
//! that makes a value too large is exit 2 with an error naming its task,
//! never an abort. Where no temporary directory can be made for spilling,
//! the run ends the same way, naming the directory. A small gzip file
//! holding a huge string is read under such a limit without an abort: an
//! ignored field is skipped without holding it, and a key past its length
//! is an error naming the line.

mod common;

use std::process::Command;

use common::scratch;

/// A string doubled thirty times from 1 KiB: `s30` would be 1 TiB.
fn string_bomb() -> String {
    let mut tasks = vec![format!(
        r#"{{"key": "s0", "task": "{}"}}"#,
        "x".repeat(1024)
    )];
    for i in 1..=30 {
        tasks.push(format!(
            r#"{{"key": "s{i}", "task": {{"call": "add", "args": [{{"ref": "s{p}"}}, {{"ref": "s{p}"}}]}}}}"#,
            p = i - 1
        ));
    }
    tasks.push(r#"{"key": "n", "task": {"call": "len", "args": [{"ref": "s30"}]}}"#.to_owned());
    common::document(&tasks)
}

#[test]
fn a_string_bomb_under_an_address_space_limit_is_an_error_naming_its_task() {
    let dir = scratch("container");
    let file = dir.join("bomb_str.json");
    std::fs::write(&file, string_bomb()).unwrap();
    // 1.5 GB of address space: one value may take half of it, 768 MB, so
    // doubling stops at s20 (1 GiB), or earlier where memory runs out.
    let run = Command::new("sh")
        .args([
            "-c",
            r#"ulimit -v 1500000 && exec "$0" run "$1" --threads 1"#,
            env!("CARGO_BIN_EXE_taskgraph"),
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{:?}: {stderr}", run.status);
    assert!(stderr.starts_with("error:"), "{stderr}");
    let named = (1..=20).any(|i| stderr.contains(&format!("s{i}")));
    assert!(named, "the error names the task: {stderr}");
    assert!(
        stderr.contains("more than the limit") || stderr.contains("not enough memory"),
        "{stderr}"
    );
}

#[test]
fn a_temporary_directory_that_cannot_be_made_is_an_error_naming_it() {
    // A run that must spill, with TMPDIR where nothing can be made: exit 2
    // naming the directory, with three threads too (a worker's failure
    // ended the run with a panic, and the other workers spun for ever).
    let dir = scratch("no-tmpdir");
    let file = common::spilling_graph(&dir);
    let missing = dir.join("missing").join("tmp");
    for threads in ["1", "3"] {
        let run = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
            .args(["run", file.to_str().unwrap(), "--memory-limit", "700KB"])
            .args(["--threads", threads])
            .env("TMPDIR", &missing)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{threads} threads: {stderr}");
        assert!(stderr.starts_with("error: task"), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "cannot make a private directory in {}",
                missing.display()
            )),
            "{stderr}"
        );
    }
}

#[test]
fn an_ignored_field_of_gigabytes_is_skipped_without_holding_it() {
    // A 1 MB .json.gz whose ignored field holds 1.2 GB of string, read under
    // 1 GB of address space: the reader passes over the string a window at
    // a time, and reserves room from the file's size only where it can. The
    // file is gzip members one after another, the same 1 MiB member of `a`s
    // repeated.
    use std::io::Write;
    let gz = |bytes: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    };
    let dir = scratch("ignored-field");
    let path = dir.join("junk.json.gz");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    file.write_all(&gz(br#"{"format": "taskgraph-json/1", "junk": ""#))
        .unwrap();
    let piece = gz(&vec![b'a'; 1 << 20]);
    for i in 0..1_200 {
        file.write_all(&piece).unwrap();
        if i == 600 {
            // An escape, and a character of two bytes cut between members.
            file.write_all(&gz(b"\\n\\u00e9\xc3")).unwrap();
            file.write_all(&gz(b"\xa9")).unwrap();
        }
    }
    file.write_all(&gz(br#"", "tasks": [{"key": "x", "task": 1}]}"#))
        .unwrap();
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() < 4 << 20);
    for command in ["stats", "order"] {
        let out = Command::new("sh")
            .args([
                "-c",
                r#"ulimit -v 1000000 && exec "$0" "$1" "$2""#,
                env!("CARGO_BIN_EXE_taskgraph"),
                command,
                path.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {:?}: {stderr}",
            out.status
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("tasks"),
            "{command}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `text` compressed as one gzip member.
fn gzip(text: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_huge_key_in_a_small_gzip_is_refused_within_an_address_space_limit() {
    // 3 GiB of key in a 3 MB file (gzip members one after another read as
    // one text), under 1.5 GB of address space: the key is refused once
    // past its 64 KiB, naming the line (holding it whole aborted).
    let dir = scratch("long-key");
    let file = dir.join("long-key.json.gz");
    let mut bytes = gzip(b"{\"format\": \"taskgraph-json/1\", \"tasks\": [\n{\"key\": \"");
    let mebibyte = gzip(&vec![b'k'; 1 << 20]);
    for _ in 0..3 << 10 {
        bytes.extend_from_slice(&mebibyte);
    }
    bytes.extend_from_slice(&gzip(b"\", \"task\": 1}]}"));
    std::fs::write(&file, bytes).unwrap();
    for command in ["stats", "run"] {
        let run = Command::new("sh")
            .args([
                "-c",
                r#"ulimit -v 1500000 && exec "$0" "$1" "$2""#,
                env!("CARGO_BIN_EXE_taskgraph"),
                command,
                file.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(
            run.status.code(),
            Some(2),
            "{command}: {:?}: {stderr}",
            run.status
        );
        assert!(
            stderr.contains(
                "long-key.json.gz: line 2, column 10: tasks[0]: a string in a key longer than \
                 65536 bytes"
            ),
            "{command}: {stderr}"
        );
    }
}

/// A memory cgroup (v1) limited to some bytes, with a child group that has
/// no limit of its own, made under this process's group and removed when
/// dropped: `None` where such groups cannot be made here (no v1 memory
/// controller, or not allowed to).
struct LimitedParent {
    parent: std::path::PathBuf,
    child: std::path::PathBuf,
}

impl LimitedParent {
    fn new(name: &str, bytes: u64) -> Option<LimitedParent> {
        let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let group = membership.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, group) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == "memory")
                .then_some(group)
        })?;
        let base =
            std::path::Path::new("/sys/fs/cgroup/memory").join(group.trim_start_matches('/'));
        let parent = base.join(format!("taskgraph-{name}-{}", std::process::id()));
        std::fs::create_dir(&parent).ok()?;
        let made = LimitedParent {
            child: parent.join("run"),
            parent,
        };
        std::fs::write(made.parent.join("memory.limit_in_bytes"), bytes.to_string()).ok()?;
        std::fs::create_dir(&made.child).ok()?;
        Some(made)
    }

    /// `taskgraph ARGS`, run in the child group.
    fn taskgraph(&self, args: &[&str]) -> std::process::Output {
        let procs = self.child.join("cgroup.procs");
        Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(procs)
            .arg(env!("CARGO_BIN_EXE_taskgraph"))
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for LimitedParent {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.child);
        let _ = std::fs::remove_dir(&self.parent);
    }
}

/// A graph of `count` results of `mb` MB (the built-in `blob`), all read
/// by one last task.
fn blobs(dir: &std::path::Path, count: usize, mb: u64) -> std::path::PathBuf {
    let mut tasks: Vec<String> = (0..count)
        .map(|i| {
            format!(
                r#"{{"key": "b{i}", "task": {{"call": "blob", "args": [{}, {i}]}}}}"#,
                mb * 1_000_000
            )
        })
        .collect();
    let refs: Vec<String> = (0..count)
        .map(|i| format!(r#"{{"ref": "b{i}"}}"#))
        .collect();
    tasks.push(format!(
        r#"{{"key": "all", "task": {{"call": "checksum", "args": [{}]}}}}"#,
        refs.join(", ")
    ));
    let file = dir.join(format!("blobs-{count}x{mb}.json"));
    std::fs::write(&file, common::document(&tasks)).unwrap();
    file
}

#[test]
#[cfg(target_os = "linux")]
fn worker_processes_share_the_tightest_cgroup_limit_on_their_path() {
    let Some(groups) = LimitedParent::new("share", 400_000_000) else {
        eprintln!("skipped: no v1 memory cgroup can be made here");
        return;
    };
    let dir = scratch("container-cgroup-share");
    // A task of 60 MB that reads two of 60 MB: 180 MB, more than a share
    // of three quarters of the parent's 400 MB between two processes. Its
    // limit used to go unread (the child has none of its own), and no
    // results limit held across processes: the run made all three.
    let tasks = [
        r#"{"key": "a", "task": {"call": "blob", "args": [60000000, 0]}}"#.to_owned(),
        r#"{"key": "b", "task": {"call": "blob", "args": [60000000, 1]}}"#.to_owned(),
        r#"{"key": "c", "task": {"call": "blob", "args": [60000000, 2, {"ref": "a"}, {"ref": "b"}]}}"#
            .to_owned(),
    ];
    let file = dir.join("three.json");
    std::fs::write(&file, common::document(&tasks)).unwrap();
    let run = groups.taskgraph(&["run", file.to_str().unwrap(), "--processes", "2"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("task 'c'"), "{stderr}");
    let limit: u64 = stderr
        .split("the worker's memory limit of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|bytes| bytes.parse().ok())
        .unwrap_or_else(|| panic!("no limit named: {stderr}"));
    assert!(limit <= 400_000_000 / 4 * 3 / 2, "{limit}: {stderr}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_worker_process_the_oom_killer_ends_is_named_as_such() {
    let Some(groups) = LimitedParent::new("oom", 150_000_000) else {
        eprintln!("skipped: no v1 memory cgroup can be made here");
        return;
    };
    let dir = scratch("container-cgroup-oom");
    // Six results of 60 MB held at once, under a limit given far above the
    // cgroup's.
    let file = blobs(&dir, 6, 60);
    let run = groups.taskgraph(&[
        "run",
        file.to_str().unwrap(),
        "--processes",
        "2",
        "--memory-limit",
        "2GB",
        "--retries",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("was killed by the kernel's out-of-memory killer (signal 9)")
            && stderr.contains("the run was abandoned"),
        "{stderr}"
    );
}

/// `taskgraph ARGS` under `ulimit -v KIB`.
fn under_address_space_limit(kib: u64, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!(r#"ulimit -v {kib} && exec "$0" "$@""#))
        .arg(env!("CARGO_BIN_EXE_taskgraph"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn under_ulimit_v_a_run_spills_to_fit_or_says_it_cannot_start() {
    let dir = scratch("container-ulimit");
    let file = dir.join("random.json");
    let made = common::taskgraph(
        &[
            "generate",
            "random",
            "--tasks",
            "40",
            "--value-bytes",
            "10MB",
            "-o",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let file = file.to_str().unwrap();
    // 400 MB of results, 140 MB of them held at once, in 300 MB of address
    // space: the allocators reserve little, and the default limit counts
    // what the process and its threads take, so results spill (it used to
    // abort, or run out: `blob(): not enough memory`).
    let run = under_address_space_limit(300 * 1024, &["run", file, "--threads", "2", "--json"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{:?}: {stderr}", run.status);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(report["spilled_bytes"].as_u64().unwrap() > 0, "{report}");
    // With a limit given that fits in 400 MB (it used to run out the same
    // way: the allocators had reserved the rest).
    let run = under_address_space_limit(
        400 * 1024,
        &["run", file, "--threads", "2", "--memory-limit", "100MB"],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Too small for the threads: an error that says so, never an abort.
    let run = under_address_space_limit(100 * 1024, &["run", file, "--threads", "2"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{:?}: {stderr}", run.status);
    assert!(
        stderr.contains("the address-space limit (ulimit -v) of 104857600 bytes is too small")
            && stderr.contains("give fewer --threads"),
        "{stderr}"
    );
}
