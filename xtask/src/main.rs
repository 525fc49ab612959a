//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo
//! does. `cargo xtask ci` runs exactly what CI runs.

mod bench;
mod fuzz;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci                                  run every check CI runs: fmt, clippy, tests, docs, the dask exporter
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
    python_exporter()
}

/// The dask exporter's tests against real dask from PyPI, in a venv under
/// `target/`, with the `taskgraph` binary the tests just built.
fn python_exporter() -> anyhow::Result<()> {
    let root = workspace_root();
    let venv = root.join("target/venv-ci");
    let python = venv.join("bin/python");
    say("== python exporter: venv target/venv-ci, pip install ./python[test], pytest");
    if !python.exists() {
        run(
            Command::new("python3").arg("-m").arg("venv").arg(&venv),
            "python3 -m venv",
        )?;
    }
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--retries",
                "5",
                "--timeout",
                "60",
            ])
            .arg(format!("{}[test]", root.join("python").display())),
        "pip install ./python[test]",
    )?;
    run(
        cargo()
            .args(["build", "--quiet", "-p", "graph-cli"])
            .current_dir(&root),
        "cargo build -p graph-cli",
    )?;
    run(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "python/tests"])
            .env("TASKGRAPH", root.join("target/debug/taskgraph"))
            .current_dir(&root),
        "pytest python/tests",
    )
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

/// Prints a progress line on standard error.
#[allow(clippy::print_stderr)]
fn say(line: &str) {
    eprintln!("{line}");
}

/// A `cargo` command: the one running this xtask.
fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}
