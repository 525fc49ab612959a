//! `cargo xtask fuzz [TARGET] [--seconds N]`: runs cargo-fuzz (installing it
//! if missing) on the stable toolchain, and keeps any crashing input where
//! `cargo test` replays it.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::{cargo, say, workspace_root};

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut seconds = 60_u64;
    let mut only = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args.next().context("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .with_context(|| format!("--seconds: not a number: {value}"))?;
            }
            target if !target.starts_with('-') => only = Some(target.to_owned()),
            other => bail!("unknown option {other}"),
        }
    }
    let fuzz_dir = workspace_root().join("fuzz");
    let targets = targets(&fuzz_dir)?;
    let chosen: Vec<&String> = match &only {
        Some(name) => {
            let found: Vec<&String> = targets.iter().filter(|t| *t == name).collect();
            if found.is_empty() {
                bail!(
                    "no fuzz target {name}; the targets are {}",
                    targets.join(", ")
                );
            }
            found
        }
        None => targets.iter().collect(),
    };
    ensure_cargo_fuzz()?;
    let mut failed = Vec::new();
    for target in chosen {
        let seeds = seed_dir(target)?;
        let corpus = fuzz_dir.join("corpus").join(target);
        fs::create_dir_all(&corpus)?;
        say(&format!(
            "== fuzz {target} for {seconds} s (seeds: {})",
            seeds.display()
        ));
        let before = artifacts(&fuzz_dir, target);
        let status = cargo()
            .args(["fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .args([
                "--",
                &format!("-max_total_time={seconds}"),
                "-print_final_stats=1",
            ])
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(&fuzz_dir)
            .status()
            .context("could not start cargo fuzz")?;
        // Keep every new crashing input beside the seeds, so that `cargo test`
        // replays it from now on.
        for artifact in artifacts(&fuzz_dir, target)
            .into_iter()
            .filter(|a| !before.contains(a))
        {
            let kept = seeds.join(artifact.file_name().expect("artifacts are files"));
            fs::copy(&artifact, &kept)?;
            say(&format!("   crash kept as {}", kept.display()));
        }
        if !status.success() {
            failed.push(target.clone());
        }
    }
    if !failed.is_empty() {
        bail!("fuzz targets failed: {}", failed.join(", "));
    }
    Ok(())
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`.
fn targets(fuzz_dir: &Path) -> anyhow::Result<Vec<String>> {
    let manifest =
        fs::read_to_string(fuzz_dir.join("Cargo.toml")).context("reading fuzz/Cargo.toml")?;
    let mut in_bin = false;
    let mut names = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(name) = line.strip_prefix("name = ") {
            names.push(name.trim_matches('"').to_owned());
        }
    }
    Ok(names)
}

/// Where a target's kept inputs live: `<crate>/tests/data/fuzz/<target>/`,
/// the crate named by the target's prefix (`core_` is `graph-core`).
fn seed_dir(target: &str) -> anyhow::Result<PathBuf> {
    let prefix = target.split('_').next().unwrap_or(target);
    let dir = workspace_root()
        .join(format!("graph-{prefix}"))
        .join("tests/data/fuzz")
        .join(target);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

fn artifacts(fuzz_dir: &Path, target: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(fuzz_dir.join("artifacts").join(target)) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    found.sort();
    found
}

fn ensure_cargo_fuzz() -> anyhow::Result<()> {
    let installed = cargo()
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if installed {
        return Ok(());
    }
    say("== installing cargo-fuzz");
    let status = cargo()
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .context("could not run cargo install")?;
    if !status.success() {
        bail!("cargo install cargo-fuzz failed ({status})");
    }
    Ok(())
}
