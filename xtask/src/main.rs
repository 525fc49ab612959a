//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo
//! does. `cargo xtask ci` runs exactly what CI runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci    run every check CI runs: fmt, clippy, tests, docs";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
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
    let root = workspace_root();
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
        eprintln_step(name, args);
        let status = Command::new(cargo())
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(&root)
            .status()
            .with_context(|| format!("could not start cargo for the {name} step"))?;
        if !status.success() {
            bail!("the {name} step failed ({status})");
        }
    }
    Ok(())
}

#[allow(clippy::print_stderr)]
fn eprintln_step(name: &str, args: &[&str]) {
    eprintln!("== {name}: cargo {}", args.join(" "));
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}
