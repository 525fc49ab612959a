//! The Python side of the comparisons and our own: the venv under `target/`
//! with dask, distributed and pymetis from PyPI, and the `taskgraph` binary
//! built in release mode.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::{cargo, pip_install, say};

/// Where the venv lives, under the workspace's `target/`.
pub(super) const VENV: &str = "target/venv-bench";

/// The Python packages the comparisons need, from PyPI.
const PACKAGES: [&str; 3] = ["dask", "distributed", "pymetis"];

/// The venv's Python, with the packages installed: made with `python3 -m
/// venv` and pip the first time, reused afterwards. The error says why there
/// is none. A package pip could not install is reported by the driver, which
/// then skips the comparisons that need it.
pub(super) fn venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join(VENV);
    let python = if cfg!(windows) {
        venv.join("Scripts/python.exe")
    } else {
        venv.join("bin/python")
    };
    if !python.exists() {
        say(&format!("== python3 -m venv {VENV}"));
        let made = Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status();
        match made {
            Ok(status) if status.success() => {}
            Ok(status) => return Err(format!("`python3 -m venv {VENV}` failed ({status})")),
            Err(err) => return Err(format!("python3 could not be started ({err})")),
        }
    }
    let imports = format!("import {}", PACKAGES.join(", "));
    let has_all = Command::new(&python)
        .args(["-c", &imports])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !has_all {
        say(&format!(
            "== {VENV}: pip install {} (from PyPI, once)",
            PACKAGES.join(" ")
        ));
        let pip = pip_install(&python).args(PACKAGES).status();
        if !pip.is_ok_and(|status| status.success()) {
            say(&format!(
                "!! pip install {} failed: the comparisons that need a missing package are skipped",
                PACKAGES.join(" ")
            ));
        }
    }
    Ok(python)
}

/// Builds the `taskgraph` binary in release mode; returns its path.
pub(super) fn build_taskgraph(root: &Path) -> anyhow::Result<PathBuf> {
    let target_dir = crate::target_dir()?;
    say("== cargo build --release -p graph-cli");
    let built = cargo()
        .args(["build", "--release", "-p", "graph-cli"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !built.success() {
        bail!("building taskgraph failed ({built})");
    }
    Ok(target_dir
        .join("release")
        .join(format!("taskgraph{}", std::env::consts::EXE_SUFFIX)))
}
