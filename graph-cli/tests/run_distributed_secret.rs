//! Runs across hosts (`--hostfile F --process I`) take only processes that
//! know the run's secret (`TASKGRAPH_SECRET` or `--secret-file`) and run the
//! same graph: no secret is refused unless `--insecure`, a stranger with
//! another secret is dropped while the run goes on with the real process,
//! and processes whose task bodies differ both say so.

mod common;
mod run_distributed_common;

use std::time::Duration;

use common::scratch;
use run_distributed_common::{SECRET, finish, hostfile, path, slow_chain, start};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn a_run_across_hosts_needs_a_secret_or_insecure() {
    let dir = scratch("distributed-no-secret");
    let file = slow_chain(&dir, "chain.json", 5, 0, 0.0);
    let (hosts, _) = hostfile(&dir, 2);
    let mut child = start(
        &[
            "run",
            path(&file),
            "--hostfile",
            path(&hosts),
            "--process",
            "0",
        ],
        &[],
    );
    let (status, stderr) = finish(&mut child, LIMIT);
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        "error: a run across hosts needs a shared secret, the same for every process: set \
         TASKGRAPH_SECRET or give --secret-file FILE (at least 16 bytes; for example, \
         `openssl rand -hex 32`), or pass --insecure to run without one on a trusted network\n"
    );
    let mut child = start(
        &[
            "run",
            path(&file),
            "--hostfile",
            path(&hosts),
            "--process",
            "0",
        ],
        &[("TASKGRAPH_SECRET", "hunter2")],
    );
    let (status, stderr) = finish(&mut child, LIMIT);
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        "error: the secret in TASKGRAPH_SECRET has 7 bytes, too few to keep strangers out: \
         use at least 16 (for example, `openssl rand -hex 32`)\n"
    );
    // --insecure and the secret flags belong to runs across hosts.
    for flag in [&["--insecure"][..], &["--secret-file", "s"]] {
        let mut args = vec!["run", path(&file), "--processes", "2"];
        args.extend_from_slice(flag);
        let (status, stderr) = finish(&mut start(&args, &[]), LIMIT);
        assert_eq!(status.code(), Some(2), "{flag:?}");
        assert!(stderr.contains("cannot be used with"), "{flag:?}: {stderr}");
    }
}

#[test]
fn processes_with_the_same_secret_run_from_the_environment_a_file_or_insecure() {
    let dir = scratch("distributed-secret");
    let file = slow_chain(&dir, "chain.json", 5, 0, 0.0);
    let secret_file = dir.join("secret");
    // A trailing newline, as `echo` writes, is not part of the secret.
    std::fs::write(&secret_file, format!("{SECRET}\n")).unwrap();
    type Way<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let ways: [Way<'_>; 3] = [
        (&[], &[("TASKGRAPH_SECRET", SECRET)]),
        (&["--secret-file", path(&secret_file)], &[]),
        (&["--insecure"], &[]),
    ];
    for (flags, env) in ways {
        let (hosts, _) = hostfile(&dir, 2);
        let mut children: Vec<_> = ["0", "1"]
            .into_iter()
            .map(|process| {
                let mut args = vec![
                    "run",
                    path(&file),
                    "--hostfile",
                    path(&hosts),
                    "--process",
                    process,
                    "--connect-timeout",
                    "20",
                ];
                args.extend_from_slice(flags);
                start(&args, env)
            })
            .collect();
        for child in &mut children {
            let (status, stderr) = finish(child, LIMIT);
            assert_eq!(status.code(), Some(0), "{flags:?}: {stderr}");
        }
        let mut stdout = String::new();
        std::io::Read::read_to_string(children[0].stdout.as_mut().unwrap(), &mut stdout).unwrap();
        assert!(stdout.starts_with("'x-4' = 4\n"), "{flags:?}: {stdout}");
    }
    // The secret of the file and that of the environment are the same one.
    let (hosts, _) = hostfile(&dir, 2);
    let mut first = start(
        &[
            "run",
            path(&file),
            "--hostfile",
            path(&hosts),
            "--process",
            "0",
        ],
        &[("TASKGRAPH_SECRET", SECRET)],
    );
    let mut second = start(
        &[
            "run",
            path(&file),
            "--hostfile",
            path(&hosts),
            "--process",
            "1",
            "--secret-file",
            path(&secret_file),
        ],
        &[],
    );
    assert_eq!(finish(&mut first, LIMIT).0.code(), Some(0));
    assert_eq!(finish(&mut second, LIMIT).0.code(), Some(0));
}

#[test]
fn a_stranger_is_refused_and_the_run_goes_on_with_the_real_process() {
    let dir = scratch("distributed-stranger");
    let file = slow_chain(&dir, "chain.json", 5, 0, 0.0);
    // The same shape, other values.
    let strange = slow_chain(&dir, "strange.json", 5, 1000, 0.0);
    let (hosts, addresses) = hostfile(&dir, 2);
    let process = |file: &std::path::Path, process: &str, secret: &str| {
        start(
            &[
                "run",
                path(file),
                "--hostfile",
                path(&hosts),
                "--process",
                process,
                "--connect-timeout",
                "30",
            ],
            &[("TASKGRAPH_SECRET", secret)],
        )
    };
    let mut first = process(&file, "0", SECRET);
    let mut stranger = process(&strange, "1", "a stranger's guess at the secret");
    let (status, stderr) = finish(&mut stranger, LIMIT);
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: handshake with process 0 ({}) failed: it does not know this run's secret \
             (is the secret the same for every process?)\n",
            addresses[0]
        )
    );
    let mut second = process(&file, "1", SECRET);
    let (status, stderr) = finish(&mut second, LIMIT);
    assert_eq!(status.code(), Some(0), "{stderr}");
    let (status, stderr) = finish(&mut first, LIMIT);
    assert_eq!(status.code(), Some(0), "{stderr}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(first.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(stdout.starts_with("'x-4' = 4\n"), "{stdout}");
}

#[test]
fn processes_with_other_task_bodies_both_refuse() {
    let dir = scratch("distributed-other-bodies");
    let file = slow_chain(&dir, "chain.json", 5, 0, 0.0);
    let other = slow_chain(&dir, "other.json", 5, 7, 0.0);
    let (hosts, _) = hostfile(&dir, 2);
    let mut children: Vec<_> = [(&file, "0"), (&other, "1")]
        .into_iter()
        .map(|(file, process)| {
            start(
                &[
                    "run",
                    path(file),
                    "--hostfile",
                    path(&hosts),
                    "--process",
                    process,
                ],
                &[("TASKGRAPH_SECRET", SECRET)],
            )
        })
        .collect();
    for (process, child) in children.iter_mut().enumerate() {
        let (status, stderr) = finish(child, LIMIT);
        assert_eq!(status.code(), Some(2), "process {process}");
        assert!(
            stderr.contains("runs a different job: its graph (task keys or bodies), requested keys, placement or priorities differ"),
            "process {process}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn a_secret_file_is_bounded_and_kept_private() {
    let dir = scratch("secret-file-edges");
    let file = slow_chain(&dir, "graph", 2, 0, 0.0);
    let (hosts, _) = hostfile(&dir, 1);
    let run_with = |secret_file: &str, env: &[(&str, &str)]| {
        let mut child = start(
            &[
                "run",
                path(&file),
                "--hostfile",
                path(&hosts),
                "--process",
                "0",
                "--secret-file",
                secret_file,
            ],
            env,
        );
        finish(&mut child, LIMIT)
    };
    // A file without end is refused, not read until memory runs out.
    let (status, stderr) = run_with("/dev/zero", &[]);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the secret file /dev/zero is longer than 64 KiB"),
        "{stderr}"
    );
    // A file others may read is used, with a warning, as ssh gives.
    let secret_file = dir.join("secret");
    std::fs::write(&secret_file, format!("  {SECRET}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (status, stderr) = run_with(path(&secret_file), &[]);
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("can be read by other users (mode 0644)"),
            "{stderr}"
        );
        std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (status, stderr) = run_with(path(&secret_file), &[]);
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
    }
}
