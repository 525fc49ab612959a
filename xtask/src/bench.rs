//! `cargo xtask bench [--crate NAME] [--compare]`: runs each crate's divan
//! benchmarks and writes their figures into `BENCHMARKS.md`, each crate in a
//! section of its own between markers, so that hand-written text around them
//! stays.

use std::fmt::Write as _;
use std::fs;
use std::process::Command;

use anyhow::{Context, bail};

use crate::{cargo, say, workspace_root};

/// The crates with benchmarks, in the order their sections appear.
const CRATES: [&str; 6] = [
    "graph-core",
    "graph-order",
    "graph-optimize",
    "graph-rewrite",
    "graph-exec",
    "graph-assign",
];

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut only = None;
    let mut compare = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--crate" => only = Some(args.next().context("--crate needs a crate name")?.clone()),
            "--compare" => compare = true,
            other => bail!("unknown option {other}"),
        }
    }
    let root = workspace_root();
    let crates: Vec<&str> = CRATES
        .iter()
        .copied()
        .filter(|name| only.as_deref().is_none_or(|only| only == *name))
        .filter(|name| root.join(name).join("benches").is_dir())
        .collect();
    if crates.is_empty() {
        bail!(
            "no crate with benchmarks matches {only:?}; they are {}",
            CRATES.join(", ")
        );
    }
    let machine = machine();
    let date = today();
    for name in crates {
        say(&format!("== cargo bench -p {name}"));
        let output = cargo()
            .args(["bench", "-p", name])
            .current_dir(&root)
            .output()
            .context("running cargo bench")?;
        if !output.status.success() {
            bail!(
                "cargo bench -p {name} failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let rows = parse_divan(&String::from_utf8_lossy(&output.stdout));
        let mut section = format!(
            "Measured {date} on {machine} with `cargo xtask bench --crate {name}` (divan; median of its samples).\n\n\
             | benchmark | median | throughput |\n|---|---:|---:|\n"
        );
        for row in &rows {
            let _ = writeln!(
                section,
                "| `{}` | {} | {} |",
                row.path,
                row.median,
                row.throughput.join(", ")
            );
        }
        write_section(&format!("bench:{name}"), &section)?;
        say(&format!(
            "   {} figures written to BENCHMARKS.md",
            rows.len()
        ));
    }
    if compare {
        compare_with_dask(&date, &machine)?;
    }
    Ok(())
}

/// One measured benchmark: its path in divan's tree, its median time, and the
/// median of each counter (items/s, bytes/s).
#[derive(Debug, PartialEq)]
struct Row {
    path: String,
    median: String,
    throughput: Vec<String>,
}

/// Reads divan's tree table: a node line holds `├─ name` or `╰─ name` (its
/// depth is where the marker stands); a leaf's line continues with `fastest │
/// slowest │ median │ mean │ samples │ iters`, and the lines under it hold the
/// counters' figures in the same columns.
fn parse_divan(text: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut bench_name = String::new();
    let mut last_was_leaf = false;
    for line in text.lines() {
        if line.contains("fastest") && line.contains("median") {
            bench_name = line
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
            path.clear();
            last_was_leaf = false;
            continue;
        }
        let marker = line.find("├─ ").or_else(|| line.find("╰─ "));
        let columns: Vec<&str> = line.split('│').map(str::trim).collect();
        match marker {
            Some(at) => {
                let depth = line[..at].chars().count() / 3;
                let after = &line[at + "├─ ".len()..];
                let (head, _) = after.split_once('│').unwrap_or((after, ""));
                let mut words = head.split_whitespace();
                let name = words.next().unwrap_or_default().to_owned();
                let fastest: Vec<&str> = words.collect();
                path.truncate(depth);
                path.push(name);
                // A leaf has figures: `fastest` beside the name, then three more columns.
                last_was_leaf = !fastest.is_empty();
                if last_was_leaf {
                    let tail: Vec<&str> = after.split('│').map(str::trim).collect();
                    let median = tail.get(2).copied().unwrap_or_default().to_owned();
                    rows.push(Row {
                        path: format!("{bench_name}/{}", path.join("/")),
                        median,
                        throughput: Vec::new(),
                    });
                }
            }
            None if last_was_leaf => {
                // A counter line under a leaf: its median is the third figure.
                let figures: Vec<&str> =
                    columns.iter().copied().filter(|c| !c.is_empty()).collect();
                let is_rate = figures.first().is_some_and(|f| f.ends_with("/s"));
                if is_rate {
                    if let (Some(row), Some(median)) = (rows.last_mut(), figures.get(2)) {
                        row.throughput.push((*median).to_owned());
                    }
                } else {
                    last_was_leaf = false;
                }
            }
            None => {}
        }
    }
    rows
}

/// Replaces (or appends) the text between `<!-- KEY:start -->` and
/// `<!-- KEY:end -->` in BENCHMARKS.md.
fn write_section(key: &str, body: &str) -> anyhow::Result<()> {
    let path = workspace_root().join("BENCHMARKS.md");
    let text = fs::read_to_string(&path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    let (start, end) = (
        format!("<!-- {key}:start -->"),
        format!("<!-- {key}:end -->"),
    );
    let block = format!("{start}\n{body}{end}");
    let updated = match (text.find(&start), text.find(&end)) {
        (Some(a), Some(b)) if a < b => format!("{}{block}{}", &text[..a], &text[b + end.len()..]),
        _ => format!("{}\n{block}\n", text.trim_end()),
    };
    fs::write(&path, updated).with_context(|| format!("writing {}", path.display()))
}

/// Makes the Python venv under `target/` (once), runs the dask comparison on
/// the same generated graphs, and writes its table.
fn compare_with_dask(date: &str, machine: &str) -> anyhow::Result<()> {
    let root = workspace_root();
    let venv = root.join("target/venv-dask");
    let python = venv.join("bin/python");
    if !python.exists() {
        say("== making the Python venv target/venv-dask with dask, distributed and pymetis");
        let made = Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status();
        if !made.is_ok_and(|s| s.success()) {
            say("   python3 -m venv failed: no dask comparison (our own figures are written)");
            return Ok(());
        }
        let pip = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "dask", "distributed", "pymetis"])
            .status();
        if !pip.is_ok_and(|s| s.success()) {
            say("   pip install failed: no dask comparison (our own figures are written)");
            return Ok(());
        }
    }
    say("== cargo build --release -p graph-cli");
    let built = cargo()
        .args(["build", "--release", "-p", "graph-cli"])
        .current_dir(&root)
        .status()?;
    if !built.success() {
        bail!("building taskgraph failed");
    }
    say("== scripts/dask_compare.py");
    let output = Command::new(&python)
        .arg(root.join("scripts/dask_compare.py"))
        .arg("--taskgraph")
        .arg(root.join("target/release/taskgraph"))
        .current_dir(&root)
        .output()
        .context("running scripts/dask_compare.py")?;
    if !output.status.success() {
        say(&format!(
            "   the comparison failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
        return Ok(());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let table: String = stdout
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    let body = format!(
        "Measured {date} on {machine} with `cargo xtask bench --compare` (dask from PyPI in target/venv-dask, \
         on graphs written by `taskgraph generate`).\n\n{table}"
    );
    write_section("compare:dask", &body)
}

/// The machine, for the record: cores and CPU model.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "an unknown CPU".to_owned());
    format!("{cores} cores ({model})")
}

fn today() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "today".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_divan_tables() {
        let text = "\
Timer precision: 20 ns
json           fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ read                      │               │               │               │         │
│  ├─ 10000    25.75 ms      │ 34.32 ms      │ 26.46 ms      │ 28.05 ms      │ 5       │ 5
│  │           46.64 MB/s    │ 35 MB/s       │ 45.4 MB/s     │ 42.82 MB/s    │         │
│  │           388.2 Kitem/s │ 291.3 Kitem/s │ 377.8 Kitem/s │ 356.4 Kitem/s │         │
│  │           max alloc:    │               │               │               │         │
│  │             2           │ 2             │ 2             │ 2             │         │
│  ╰─ 100000   247.9 ms      │ 413.8 ms      │ 323.9 ms      │ 317.6 ms      │ 5       │ 5
╰─ write                     │               │               │               │         │
   ╰─ 10000    2.9 ms        │ 3.1 ms        │ 3 ms          │ 3 ms          │ 5       │ 5
                3.395 Mitem/s │ 3.238 Mitem/s │ 3.363 Mitem/s │ 3.344 Mitem/s │         │
";
        let rows = parse_divan(text);
        assert_eq!(
            rows,
            [
                Row {
                    path: "json/read/10000".into(),
                    median: "26.46 ms".into(),
                    throughput: vec!["45.4 MB/s".into(), "377.8 Kitem/s".into()]
                },
                Row {
                    path: "json/read/100000".into(),
                    median: "323.9 ms".into(),
                    throughput: vec![]
                },
                Row {
                    path: "json/write/10000".into(),
                    median: "3 ms".into(),
                    throughput: vec!["3.363 Mitem/s".into()]
                },
            ]
        );
    }
}
