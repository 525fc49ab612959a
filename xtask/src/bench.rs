//! `cargo xtask bench [--crate NAME] [--compare] [--sizes N,..] [--shapes S,..]
//! [--no-divan]`: runs each crate's divan benchmarks and writes their figures
//! into `BENCHMARKS.md`, each crate in a section of its own between markers,
//! so that hand-written text around them stays; with `--compare`, also times
//! dask, dask.rewrite and METIS against us on the same graphs ([`compare`]).

mod compare;

use std::fmt::Write as _;
use std::fs;
use std::process::Command;

use anyhow::{Context, bail};

use crate::{cargo, say, workspace_root};

/// The crates with benchmarks, in the order their sections appear.
const CRATES: [&str; 7] = [
    "graph-core",
    "graph-order",
    "graph-optimize",
    "graph-rewrite",
    "graph-exec",
    "graph-assign",
    "graph-distributed",
];

const USAGE: &str = "usage: cargo xtask bench [--crate NAME] [--compare] [--sizes N,N] [--shapes S,S] [--no-divan]

  --crate NAME     only this crate's benchmarks (and, with --compare, its comparisons)
  --compare        also time dask, dask.rewrite and METIS on the same generated graphs
                   (a Python venv in target/venv-bench with dask, distributed and pymetis from PyPI)
  --sizes N,N      the graph sizes of the comparisons (default 10000,100000)
  --shapes S,S     the shapes of the comparisons (default: all that `taskgraph generate` makes but diamonds)
  --no-divan       skip the divan benchmarks (with --compare: only the comparisons)";

/// What `cargo xtask bench` was asked to do.
#[derive(Debug, PartialEq)]
struct Options {
    only: Option<String>,
    compare: bool,
    divan: bool,
    sizes: String,
    shapes: String,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Options> {
        let mut options = Options {
            only: None,
            compare: false,
            divan: true,
            sizes: "10000,100000".to_owned(),
            shapes: "chain,tree,random,array-sum-transpose,array-overlap,array-cumsum,shuffle"
                .to_owned(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |what: &str| {
                args.next()
                    .cloned()
                    .with_context(|| format!("{arg} needs {what}\n\n{USAGE}"))
            };
            match arg.as_str() {
                "--crate" => options.only = Some(value("a crate name")?),
                "--compare" => options.compare = true,
                "--no-divan" => options.divan = false,
                "--sizes" => options.sizes = value("sizes such as 10000,100000")?,
                "--shapes" => options.shapes = value("shapes such as chain,tree")?,
                other => bail!("unknown option {other}\n\n{USAGE}"),
            }
        }
        let bad_size = options
            .sizes
            .split(',')
            .find(|size| size.parse::<u64>().map_or(true, |n| n == 0));
        if let Some(size) = bad_size {
            bail!("--sizes: {size:?} is not a positive number of tasks");
        }
        if options.shapes.split(',').any(str::is_empty) {
            bail!("--shapes: an empty shape in {:?}", options.shapes);
        }
        Ok(options)
    }
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if args.iter().any(|arg| arg == "-h" || arg == "--help") {
        #[allow(clippy::print_stdout)]
        {
            println!("{USAGE}");
        }
        return Ok(());
    }
    let options = Options::parse(args)?;
    let root = workspace_root();
    let crates: Vec<&str> = CRATES
        .iter()
        .copied()
        .filter(|name| options.only.as_deref().is_none_or(|only| only == *name))
        .filter(|name| root.join(name).join("benches").is_dir())
        .collect();
    if crates.is_empty() {
        bail!(
            "no crate with benchmarks matches {:?}; they are {}",
            options.only,
            CRATES.join(", ")
        );
    }
    let machine = machine();
    let date = today();
    for name in crates.iter().filter(|_| options.divan) {
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
        let section = format!(
            "Measured {date} on {machine} with `cargo xtask bench --crate {name}` (divan; median of its samples).\n\n{}",
            divan_table(&rows)
        );
        write_section(&format!("bench:{name}"), &section)?;
        say(&format!(
            "   {} figures written to BENCHMARKS.md",
            rows.len()
        ));
    }
    if options.compare {
        let command = format!("cargo xtask bench {}", args.join(" "));
        let stamp = format!("Measured {date} on {machine} with `{command}`");
        let parts = compare::Part::for_crate(options.only.as_deref());
        compare::run(&options, &parts, &stamp)?;
    }
    Ok(())
}

/// The divan figures as a Markdown table: benchmark, median, throughput.
fn divan_table(rows: &[Row]) -> String {
    let mut table = String::from("| benchmark | median | throughput |\n|---|---:|---:|\n");
    for row in rows {
        let _ = writeln!(
            table,
            "| `{}` | {} | {} |",
            row.path,
            row.median,
            row.throughput.join(", ")
        );
    }
    table
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

/// `text` with the part between `<!-- KEY:start -->` and `<!-- KEY:end -->`
/// replaced by `body`, or with the block appended when the markers are not
/// there (or out of order).
fn replace_section(text: &str, key: &str, body: &str) -> String {
    let (start, end) = markers(key);
    let block = format!("{start}\n{body}{end}");
    match (text.find(&start), text.find(&end)) {
        (Some(a), Some(b)) if a < b => format!("{}{block}{}", &text[..a], &text[b + end.len()..]),
        _ => format!("{}\n\n{block}\n", text.trim_end()),
    }
}

/// The part of `text` between the markers of `key`, if both are there.
fn section<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let (start, end) = markers(key);
    let from = text.find(&start)? + start.len();
    let to = from + text[from..].find(&end)?;
    Some(&text[from..to])
}

fn markers(key: &str) -> (String, String) {
    (
        format!("<!-- {key}:start -->"),
        format!("<!-- {key}:end -->"),
    )
}

/// Replaces (or appends) the section `key` of BENCHMARKS.md.
fn write_section(key: &str, body: &str) -> anyhow::Result<()> {
    let path = workspace_root().join("BENCHMARKS.md");
    let text = fs::read_to_string(&path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    fs::write(&path, replace_section(&text, key, body))
        .with_context(|| format!("writing {}", path.display()))
}

/// The section `key` of BENCHMARKS.md as it stands.
fn read_section(key: &str) -> Option<String> {
    let text = fs::read_to_string(workspace_root().join("BENCHMARKS.md")).ok()?;
    section(&text, key).map(str::to_owned)
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
    fn replaces_a_section_and_keeps_the_prose() {
        let text =
            "# B\n\nprose before\n<!-- bench:a:start -->\nold\n<!-- bench:a:end -->\nprose after\n";
        let updated = replace_section(text, "bench:a", "new\n");
        assert_eq!(
            updated,
            "# B\n\nprose before\n<!-- bench:a:start -->\nnew\n<!-- bench:a:end -->\nprose after\n"
        );
        assert_eq!(section(&updated, "bench:a"), Some("\nnew\n"));
        assert_eq!(section(&updated, "bench:b"), None);
        let appended = replace_section(&updated, "compare:x", "table\n");
        assert!(appended.starts_with(&updated));
        assert!(
            appended.ends_with(
                "prose after\n\n<!-- compare:x:start -->\ntable\n<!-- compare:x:end -->\n"
            )
        );
        // Markers out of order are not a section: the block is appended.
        let odd = "<!-- k:end -->\n<!-- k:start -->\n";
        assert!(
            replace_section(odd, "k", "b\n").ends_with("<!-- k:start -->\nb\n<!-- k:end -->\n")
        );
    }

    #[test]
    fn parses_options() {
        let args = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let options = Options::parse(&args(&[
            "--compare",
            "--crate",
            "graph-rewrite",
            "--sizes",
            "10000",
        ]))
        .unwrap();
        assert_eq!(options.only.as_deref(), Some("graph-rewrite"));
        assert!(options.compare && options.divan);
        assert_eq!(options.sizes, "10000");
        let options = Options::parse(&args(&["--no-divan", "--shapes", "chain"])).unwrap();
        assert_eq!((options.divan, options.shapes.as_str()), (false, "chain"));
        for (bad, message) in [
            (
                &["--sizes", "10k"][..],
                "--sizes: \"10k\" is not a positive number of tasks",
            ),
            (
                &["--sizes", "0"][..],
                "--sizes: \"0\" is not a positive number of tasks",
            ),
            (
                &["--shapes", "chain,"][..],
                "--shapes: an empty shape in \"chain,\"",
            ),
        ] {
            assert_eq!(Options::parse(&args(bad)).unwrap_err().to_string(), message);
        }
        let err = Options::parse(&args(&["--crate"])).unwrap_err().to_string();
        assert!(err.starts_with("--crate needs a crate name"), "{err}");
        let err = Options::parse(&args(&["--fast"])).unwrap_err().to_string();
        assert!(err.starts_with("unknown option --fast"), "{err}");
    }

    #[test]
    fn formats_divan_rows() {
        let rows = [Row {
            path: "json/read/10000".into(),
            median: "26.46 ms".into(),
            throughput: vec!["45.4 MB/s".into(), "377.8 Kitem/s".into()],
        }];
        assert_eq!(
            divan_table(&rows),
            "| benchmark | median | throughput |\n|---|---:|---:|\n| `json/read/10000` | 26.46 ms | 45.4 MB/s, 377.8 Kitem/s |\n"
        );
    }

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
