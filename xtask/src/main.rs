//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo
//! does. `cargo xtask ci` runs exactly what CI runs.

mod bench;
mod fuzz;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci                                  run every check CI runs: fmt, clippy, tests, docs, the Python package
  bench [--crate NAME] [--compare]     run the divan benchmarks (and the comparisons) into BENCHMARKS.md
  fuzz [TARGET] [--seconds N]         run the fuzz targets (all, or one) for N seconds each";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::run(rest),
        Some("fuzz") => fuzz::run(rest),
        Some("-h" | "--help") | None => {
            #[allow(clippy::print_stdout)]
            {
                println!("{USAGE}");
            }
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

/// A CI step: its name, cargo's arguments, and extra environment variables.
type Step = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// The checks of CI, in order, stopping at the first that fails.
fn ci() -> anyhow::Result<()> {
    let steps: [Step; 4] = [
        ("formatting", &["fmt", "--all", "--check"], &[]),
        (
            "lints",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        ),
        ("tests", &["test", "--workspace"], &[]),
        (
            "docs",
            &["doc", "--workspace", "--no-deps"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        ),
    ];
    for (name, args, envs) in steps {
        say(&format!("== {name}: cargo {}", args.join(" ")));
        let status = cargo()
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(workspace_root())
            .status()
            .with_context(|| format!("could not start cargo for the {name} step"))?;
        if !status.success() {
            bail!("the {name} step failed ({status})");
        }
    }
    python_package()
}

/// The Python package `taskgraph` (python/, its extension built from
/// graph-python by maturin) and its tests against real dask and distributed
/// from PyPI, in a venv under `target/`, with the `taskgraph` binary for the
/// tests that round-trip through the command.
fn python_package() -> anyhow::Result<()> {
    let root = workspace_root();
    let venv = root.join("target/venv-ci");
    let python = venv.join("bin/python");
    say(
        "== python package: venv target/venv-ci, pip install ./python[test] (builds the extension), pytest",
    );
    if !python.exists() {
        run(
            Command::new("python3").arg("-m").arg("venv").arg(&venv),
            "python3 -m venv",
        )?;
    }
    let package = format!("{}[test]", root.join("python").display());
    // PyPI may fail a download now and then: pip retries each request, and
    // the whole install is tried again before giving up.
    // pip builds a local directory afresh each time, so the extension is
    // always this tree's.
    let pip = || {
        let mut command = pip_install(&python);
        command
            .arg(&package)
            // The extension's fault-injection hooks, for the tests only.
            .env("MATURIN_PEP517_ARGS", "--features test-hooks")
            .current_dir(&root);
        command
    };
    let mut attempt = 1;
    while let Err(err) = run(&mut pip(), "pip install ./python[test]") {
        if attempt == 3 {
            return Err(err);
        }
        attempt += 1;
        say(&format!("{err}; trying again ({attempt} of 3)"));
    }
    let target = target_dir()?;
    run(
        cargo()
            .args(["build", "--quiet", "-p", "graph-cli"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&root),
        "cargo build -p graph-cli",
    )?;
    let mut pytest = Command::new(&python);
    pytest
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .env(
            "TASKGRAPH",
            target
                .join("debug")
                .join(format!("taskgraph{}", std::env::consts::EXE_SUFFIX)),
        )
        .current_dir(&root);
    // CI installs Chromium (.ci/run): there the browser test must run, not
    // skip; a developer's machine may lack it.
    if std::env::var_os("CI").is_some() {
        pytest.env("TASKGRAPH_BROWSER_TEST", "require");
    }
    // Built above with them: the tests that inject faults must not skip.
    pytest.env("TASKGRAPH_TEST_HOOKS", "require");
    run(&mut pytest, "pytest python/tests")
}

fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command
        .status()
        .with_context(|| format!("could not start {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// `python -m pip install --quiet`, to which the caller adds what to
/// install: pip retries a failed request to PyPI up to 5 times and gives up
/// on a connection silent for 60 seconds.
fn pip_install(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--retries",
        "5",
        "--timeout",
        "60",
    ]);
    command
}

/// Prints a progress line on standard error.
#[allow(clippy::print_stderr)]
fn say(line: &str) {
    eprintln!("{line}");
}

/// A `cargo` command: the one running this xtask.
fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to where the
/// xtask runs, as cargo reads it) or the workspace's `target/`.
fn target_dir() -> anyhow::Result<PathBuf> {
    Ok(match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => std::env::current_dir()?.join(dir),
        None => workspace_root().join("target"),
    })
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}
