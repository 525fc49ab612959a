//! `cargo xtask bench --compare`: the Python venv with dask, distributed and
//! pymetis ([`setup`]), the driver `scripts/bench_compare.py` that times them
//! against the `taskgraph` binary on the same generated graphs and prints one
//! JSON object a line ([`record`]), and the tables its measurements become in
//! `BENCHMARKS.md` ([`table`]).

mod record;
mod setup;
mod table;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use super::{Options, read_section, write_section};
use crate::{say, workspace_root};
use record::{Record, get_str, kind_is, parse_record};
use setup::{VENV, build_taskgraph, venv};
use table::{dask_table, divan_medians, metis_table, rewrite_table};

/// A comparison: its name for the driver's `--parts` and the section key of
/// `BENCHMARKS.md` it fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// dask's order, cull, inline, inline_functions, fuse, get and
    /// threaded.get against ours: `compare:dask`.
    Dask,
    /// dask.rewrite against `taskgraph rewrite`, and against the divan
    /// `terms_vs_rules` figures: `compare:rewrite`.
    Rewrite,
    /// pymetis against `taskgraph assign`: `compare:metis`.
    Metis,
    /// dask.distributed's `LocalCluster` against `taskgraph run
    /// --processes 2` (`scripts/distributed_compare.py`):
    /// `compare:distributed`.
    Distributed,
}

impl Part {
    const ALL: [Part; 4] = [Part::Dask, Part::Rewrite, Part::Metis, Part::Distributed];

    /// The section key in `BENCHMARKS.md`.
    fn section(self) -> &'static str {
        match self {
            Part::Dask => "compare:dask",
            Part::Rewrite => "compare:rewrite",
            Part::Metis => "compare:metis",
            Part::Distributed => "compare:distributed",
        }
    }

    /// The driver's parts that feed this section.
    fn driver_parts(self) -> &'static [&'static str] {
        match self {
            Part::Dask => &["dask"],
            Part::Rewrite => &["rewrite", "rules"],
            Part::Metis => &["metis"],
            // Its own script: a cluster of worker processes per run.
            Part::Distributed => &[],
        }
    }

    /// The comparisons that concern the crates benchmarked: all of them
    /// without `--crate`.
    pub(super) fn for_crate(only: Option<&str>) -> Vec<Part> {
        Part::ALL
            .into_iter()
            .filter(|part| {
                matches!(
                    (only, part),
                    (None, _)
                        | (
                            Some("graph-order" | "graph-optimize" | "graph-exec"),
                            Part::Dask
                        )
                        | (Some("graph-rewrite"), Part::Rewrite)
                        | (Some("graph-assign"), Part::Metis)
                        | (Some("graph-distributed"), Part::Distributed)
                )
            })
            .collect()
    }
}

/// Makes the venv (once), builds `taskgraph`, runs the driver for `parts`,
/// and writes a section for each part that measured without error. Without
/// Python, says so and writes nothing; without a package, says which
/// comparisons it stops and writes the others.
///
/// # Errors
///
/// When `taskgraph` does not build or the driver fails.
pub(super) fn run(options: &Options, parts: &[Part], stamp: &str) -> anyhow::Result<()> {
    if parts.is_empty() {
        say("== no comparison concerns this crate");
        return Ok(());
    }
    let root = workspace_root();
    let python = match venv(&root) {
        Ok(python) => python,
        Err(why) => {
            say(&format!(
                "!! no comparison with dask or METIS: {why}.\n   BENCHMARKS.md keeps our own figures only; \
                 its comparison sections are left as they were."
            ));
            return Ok(());
        }
    };
    let taskgraph = build_taskgraph(&root)?;
    let driver_parts: Vec<&str> = parts
        .iter()
        .flat_map(|part| part.driver_parts().iter().copied())
        .collect();
    if parts.contains(&Part::Distributed) {
        distributed(&python, &taskgraph, stamp)?;
    }
    if driver_parts.is_empty() {
        return Ok(());
    }
    say(&format!(
        "== scripts/bench_compare.py --parts {} --sizes {} --shapes {}",
        driver_parts.join(","),
        options.sizes,
        options.shapes
    ));
    let output = Command::new(&python)
        .arg(root.join("scripts/bench_compare.py"))
        .arg("--taskgraph")
        .arg(&taskgraph)
        .args(["--parts", &driver_parts.join(",")])
        .args(["--sizes", &options.sizes, "--shapes", &options.shapes])
        .arg("--out")
        .arg(root.join("target/bench-compare"))
        .current_dir(&root)
        .stderr(Stdio::inherit())
        .output()
        .context("running scripts/bench_compare.py")?;
    let records: Vec<Record> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(parse_record)
        .collect();
    if !output.status.success() {
        bail!(
            "scripts/bench_compare.py failed ({}); BENCHMARKS.md's comparison sections are left as they were",
            output.status
        );
    }
    for &part in parts.iter().filter(|&&p| p != Part::Distributed) {
        let problems = problems(&records, part);
        if !problems.is_empty() {
            say(&format!(
                "!! {} not written: {}",
                part.section(),
                problems.join("; ")
            ));
            continue;
        }
        let table = match part {
            Part::Dask => dask_table(&records),
            Part::Rewrite => {
                let divan = read_section("bench:graph-rewrite").unwrap_or_default();
                rewrite_table(&records, &divan_medians(&divan))
            }
            Part::Metis => metis_table(&records),
            Part::Distributed => None,
        };
        let Some(table) = table else {
            say(&format!(
                "!! {} not written: the driver measured nothing for it",
                part.section()
            ));
            continue;
        };
        let env = environment(&records, part);
        let body = format!(
            "{stamp}: {env}, on graphs written by `taskgraph generate` ({} tasks).\n\n{table}",
            options.sizes.replace(',', ", ")
        );
        write_section(part.section(), &body)?;
        say(&format!("   {} written to BENCHMARKS.md", part.section()));
    }
    Ok(())
}

/// Runs `scripts/distributed_compare.py` (dask.distributed against
/// `taskgraph run --processes 2`, 10^3 and 10^4 tasks: dask takes
/// milliseconds per task) and writes its table as `compare:distributed`.
fn distributed(python: &Path, taskgraph: &Path, stamp: &str) -> anyhow::Result<()> {
    let root = workspace_root();
    say("== scripts/distributed_compare.py --sizes 1000,10000");
    let output = Command::new(python)
        .arg(root.join("scripts/distributed_compare.py"))
        .arg("--taskgraph")
        .arg(taskgraph)
        .args(["--sizes", "1000,10000", "--repeat", "2", "--out"])
        .arg(root.join("target/bench-compare"))
        .current_dir(&root)
        .stderr(Stdio::inherit())
        .output()
        .context("running scripts/distributed_compare.py")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        say(&format!(
            "!! compare:distributed not written: scripts/distributed_compare.py failed ({})",
            output.status
        ));
        return Ok(());
    }
    let table: String = stdout
        .lines()
        .filter(|line| line.starts_with('|'))
        .map(|line| format!("{line}\n"))
        .collect();
    let version = stdout
        .lines()
        .filter_map(parse_record)
        .find_map(|r| get_str(&r, "dask_version").map(str::to_string))
        .unwrap_or_else(|| "?".to_string());
    let body = format!(
        "{stamp}: dask.distributed {version}, a `LocalCluster` of 2 worker processes with 1 thread \
         each, against `taskgraph run --processes 2`, on graphs written by `taskgraph generate`.\n\n{table}"
    );
    write_section(Part::Distributed.section(), &body)?;
    say("   compare:distributed written to BENCHMARKS.md");
    Ok(())
}

/// Why a part's section cannot be written: packages the driver found
/// missing, errors it reported.
fn problems(records: &[Record], part: Part) -> Vec<String> {
    let mut out = Vec::new();
    for record in records {
        let concerns = get_str(record, "part").is_some_and(|p| part.driver_parts().contains(&p));
        if !concerns {
            continue;
        }
        let part_name = get_str(record, "part").unwrap_or_default();
        if kind_is(record, "missing") {
            let package = get_str(record, "package").unwrap_or("a package");
            out.push(format!(
                "the Python package {package} is missing from {VENV}, so `{part_name}` could not run"
            ));
        } else if kind_is(record, "error") {
            let message = get_str(record, "message").unwrap_or("no message");
            out.push(format!("`{part_name}` failed: {message}"));
        }
    }
    out
}

/// The Python side of `part`: `pymetis 2025.2.2 on CPython 3.11.7 in
/// target/venv-bench`.
fn environment(records: &[Record], part: Part) -> String {
    let package = match part {
        Part::Dask | Part::Rewrite => "dask",
        Part::Metis => "pymetis",
        Part::Distributed => "distributed",
    };
    let env = records.iter().find(|r| kind_is(r, "env"));
    let version = env.and_then(|env| get_str(env, package)).unwrap_or("?");
    let python = env.and_then(|env| get_str(env, "python")).unwrap_or("?");
    format!("{package} {version} on CPython {python} in {VENV}")
}
