//! `cargo xtask bench --compare`: the Python venv with dask, distributed and
//! pymetis, the driver `scripts/bench_compare.py` that times them against the
//! `taskgraph` binary on the same generated graphs, and the tables its
//! measurements become in `BENCHMARKS.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use super::{Options, read_section, write_section};
use crate::{cargo, say, workspace_root};

/// Where the venv lives, under the workspace's `target/`.
const VENV: &str = "target/venv-bench";

/// The Python packages the comparisons need, from PyPI.
const PACKAGES: [&str; 3] = ["dask", "distributed", "pymetis"];

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

/// The venv's Python, with the packages installed: made with `python3 -m
/// venv` and pip the first time, reused afterwards. The error says why there
/// is none. A package pip could not install is reported by the driver, which
/// then skips the comparisons that need it.
fn venv(root: &Path) -> Result<PathBuf, String> {
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
        let pip = Command::new(&python)
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
            .args(PACKAGES)
            .status();
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
fn build_taskgraph(root: &Path) -> anyhow::Result<PathBuf> {
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

/// One line of the driver: a flat JSON object.
type Record = BTreeMap<String, Value>;

/// A JSON scalar.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    Num(f64),
    /// `true`, `false` or `null`, which no table uses.
    Other,
}

impl Value {
    fn num(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn get_str<'a>(record: &'a Record, field: &str) -> Option<&'a str> {
    record.get(field).and_then(Value::str)
}

fn get_num(record: &Record, field: &str) -> Option<f64> {
    record.get(field).and_then(Value::num)
}

fn kind_is(record: &Record, kind: &str) -> bool {
    get_str(record, "kind") == Some(kind)
}

/// Parses a flat JSON object (string, number, `true`, `false` and `null`
/// values), as the driver prints them; `None` for anything else.
fn parse_record(line: &str) -> Option<Record> {
    let mut p = Parser {
        chars: line.trim().chars().collect(),
        pos: 0,
    };
    let mut record = Record::new();
    p.expect('{')?;
    if p.eat('}') {
        return p.at_end().then_some(record);
    }
    loop {
        let key = p.string()?;
        p.expect(':')?;
        let value = p.value()?;
        record.insert(key, value);
        if p.eat(',') {
            continue;
        }
        p.expect('}')?;
        return p.at_end().then_some(record);
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn skip_space(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, want: char) -> bool {
        self.skip_space();
        if self.chars.get(self.pos) == Some(&want) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, want: char) -> Option<()> {
        self.eat(want).then_some(())
    }

    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos == self.chars.len()
    }

    fn string(&mut self) -> Option<String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let c = *self.chars.get(self.pos)?;
            self.pos += 1;
            match c {
                '"' => return Some(out),
                '\\' => {
                    let escaped = *self.chars.get(self.pos)?;
                    self.pos += 1;
                    out.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'u' => {
                            let hex: String =
                                self.chars.get(self.pos..self.pos + 4)?.iter().collect();
                            self.pos += 4;
                            char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
                                .unwrap_or('\u{fffd}')
                        }
                        other => other,
                    });
                }
                c => out.push(c),
            }
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.skip_space();
        match *self.chars.get(self.pos)? {
            '"' => self.string().map(Value::Str),
            c if c == '-' || c.is_ascii_digit() => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse().ok().map(Value::Num)
            }
            _ => {
                for word in ["true", "false", "null"] {
                    let end = self.pos + word.len();
                    if self
                        .chars
                        .get(self.pos..end)?
                        .iter()
                        .copied()
                        .eq(word.chars())
                    {
                        self.pos = end;
                        return Some(Value::Other);
                    }
                }
                None
            }
        }
    }
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

/// A duration for a table: three or four significant figures, in s, ms or µs.
fn fmt_seconds(seconds: f64) -> String {
    match seconds {
        s if s >= 10.0 => format!("{s:.1} s"),
        s if s >= 1.0 => format!("{s:.2} s"),
        s if s >= 0.1 => format!("{:.0} ms", s * 1e3),
        s if s >= 0.01 => format!("{:.1} ms", s * 1e3),
        s if s >= 0.001 => format!("{:.2} ms", s * 1e3),
        s => format!("{:.0} µs", s * 1e6),
    }
}

/// A duration known only to `resolution` seconds (a figure printed as
/// `0.016 s` is known to the millisecond): `16 ms`, not `16.0 ms`. Without a
/// resolution, as [`fmt_seconds`].
fn fmt_coarse(seconds: f64, resolution: f64) -> String {
    let (scale, unit) = match resolution {
        r if r <= 0.0 => return fmt_seconds(seconds),
        r if r >= 1.0 => (1.0, "s"),
        r if r >= 1e-4 => (1e3, "ms"),
        _ => (1e6, "µs"),
    };
    let decimals = (-(resolution * scale).log10()).round().max(0.0) as usize;
    format!("{:.decimals$} {unit}", seconds * scale)
}

/// How many times faster ours is: `1200x`, `35x`, `2.4x`, `0.61x`.
fn fmt_ratio(ratio: f64) -> String {
    match ratio {
        r if !r.is_finite() => "-".to_owned(),
        r if r >= 10.0 => format!("{r:.0}x"),
        r if r >= 1.0 => format!("{r:.1}x"),
        r => format!("{r:.2}x"),
    }
}

/// A count beside a time: `1 234` is written `1234` as the tables do.
fn fmt_count(value: f64) -> String {
    format!("{value:.0}")
}

/// Groups by `(shape, tasks)` in the order the records first show them.
fn groups<'a>(records: &'a [&'a Record]) -> Vec<((String, u64), Vec<&'a Record>)> {
    let mut out: Vec<((String, u64), Vec<&Record>)> = Vec::new();
    for &record in records {
        let key = (
            get_str(record, "shape").unwrap_or_default().to_owned(),
            get_num(record, "tasks").unwrap_or_default() as u64,
        );
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(record),
            None => out.push((key, vec![record])),
        }
    }
    out
}

/// The dask table: for each graph and each pair the driver names (dask's
/// operation, ours), both times, the speed-up and the memory figures.
fn dask_table(records: &[Record]) -> Option<String> {
    let pairs: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| kind_is(r, "dask_pair"))
        .filter_map(|r| Some((get_str(r, "dask")?, get_str(r, "ours")?)))
        .collect();
    let rows: Vec<&Record> = records.iter().filter(|r| kind_is(r, "dask")).collect();
    let mut table = String::from(
        "| shape | tasks | dask | taskgraph | dask time | taskgraph time | speed-up | max pressure dask / ours |\n\
         |---|---:|---|---|---:|---:|---:|---:|\n",
    );
    let mut any = false;
    for ((shape, tasks), members) in groups(&rows) {
        let find = |system: &str, op: &str| {
            members
                .iter()
                .find(|r| get_str(r, "system") == Some(system) && get_str(r, "op") == Some(op))
        };
        for &(theirs, ours) in &pairs {
            let (Some(d), Some(t)) = (find("dask", theirs), find("taskgraph", ours)) else {
                continue;
            };
            let (Some(d_secs), Some(t_secs)) = (get_num(d, "seconds"), get_num(t, "seconds"))
            else {
                continue;
            };
            let ours_memory = get_num(t, "max_pressure").or_else(|| get_num(t, "peak_held"));
            let memory = match (get_num(d, "max_pressure"), ours_memory) {
                (Some(d_mem), t_mem) => {
                    format!(
                        "{} / {}",
                        fmt_count(d_mem),
                        t_mem.map(fmt_count).unwrap_or_default()
                    )
                }
                (None, Some(_)) if get_num(t, "peak_held").is_some() => {
                    format!("- / {}", ours_memory.map(fmt_count).unwrap_or_default())
                }
                _ => String::new(),
            };
            let _ = writeln!(
                table,
                "| {shape} | {tasks} | {theirs} | {ours} | {} | {} | {} | {memory} |",
                fmt_seconds(d_secs),
                fmt_seconds(t_secs),
                fmt_ratio(d_secs / t_secs),
            );
            any = true;
        }
    }
    any.then_some(table)
}

/// The rewrite tables: dask.rewrite against `taskgraph rewrite` on each
/// graph, then dask.rewrite on the `terms_vs_rules` workload beside divan's
/// medians for it (`divan`: rule count to seconds).
fn rewrite_table(records: &[Record], divan: &BTreeMap<u64, f64>) -> Option<String> {
    let rules: Vec<String> = records
        .iter()
        .filter(|r| kind_is(r, "rewrite_rule"))
        .filter_map(|r| get_str(r, "text").map(|text| format!("`{text}`")))
        .collect();
    let rows: Vec<&Record> = records.iter().filter(|r| kind_is(r, "rewrite")).collect();
    let mut out = String::new();
    let mut any = false;
    if !rows.is_empty() {
        let _ = write!(
            out,
            "Every task rewritten bottom-up with {} rules: {}. dask.rewrite runs on one core as \
             `valmap(rs.rewrite, dsk)`; `taskgraph rewrite` on all cores, its own timer (reading \
             and writing the file excluded).\n\n\
             | shape | tasks | dask.rewrite | `taskgraph rewrite` | speed-up | tasks changed dask / ours |\n\
             |---|---:|---:|---:|---:|---:|\n",
            rules.len(),
            rules.join(", ")
        );
        for ((shape, tasks), members) in groups(&rows) {
            let find = |system: &str| {
                members
                    .iter()
                    .find(|r| get_str(r, "system") == Some(system))
            };
            let (Some(d), Some(t)) = (find("dask"), find("taskgraph")) else {
                continue;
            };
            let (Some(d_secs), Some(t_secs)) = (get_num(d, "seconds"), get_num(t, "seconds"))
            else {
                continue;
            };
            let resolution = get_num(t, "resolution").unwrap_or(0.0);
            let (ours, speedup) = if t_secs < resolution {
                (
                    format!("< {}", fmt_coarse(resolution, resolution)),
                    format!("> {}", fmt_ratio(d_secs / resolution)),
                )
            } else {
                (fmt_coarse(t_secs, resolution), fmt_ratio(d_secs / t_secs))
            };
            let changed = |r: &Record| get_num(r, "changed").map(fmt_count).unwrap_or_default();
            let _ = writeln!(
                out,
                "| {shape} | {tasks} | {} | {ours} | {speedup} | {} / {} |",
                fmt_seconds(d_secs),
                changed(d),
                changed(t),
            );
            any = true;
        }
    }
    let matching: Vec<&Record> = records.iter().filter(|r| kind_is(r, "rules")).collect();
    if !matching.is_empty() {
        if any {
            out.push('\n');
        }
        let terms = matching
            .first()
            .and_then(|r| get_num(r, "terms"))
            .map(fmt_count)
            .unwrap_or_default();
        let _ = write!(
            out,
            "Matching {terms} terms against more and more rules (the `terms_vs_rules` workload; \
             ours is divan's median from the graph-rewrite table).\n\n\
             | rules | dask.rewrite | `rewrite/terms_vs_rules` | speed-up |\n|---:|---:|---:|---:|\n"
        );
        for record in matching {
            let (Some(n_rules), Some(d_secs)) =
                (get_num(record, "rules"), get_num(record, "seconds"))
            else {
                continue;
            };
            let ours = divan.get(&(n_rules as u64)).copied();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                fmt_count(n_rules),
                fmt_seconds(d_secs),
                ours.map(fmt_seconds).unwrap_or_else(|| "-".to_owned()),
                ours.map(|t| fmt_ratio(d_secs / t))
                    .unwrap_or_else(|| "-".to_owned()),
            );
            any = true;
        }
    }
    any.then_some(out)
}

/// The medians of `rewrite/terms_vs_rules/N` in a divan table of
/// `BENCHMARKS.md`, by N.
fn divan_medians(section: &str) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(name), Some(median)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(n) = name
            .trim_matches('`')
            .strip_prefix("rewrite/terms_vs_rules/")
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        if let Some(seconds) = parse_duration(median) {
            out.insert(n, seconds);
        }
    }
    out
}

/// Seconds from a divan figure: `3.052 ms`, `208.5 µs`, `1.26 s`, `35 ns`.
fn parse_duration(text: &str) -> Option<f64> {
    let (value, unit) = text.trim().split_once(' ')?;
    let scale = match unit.trim() {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" | "us" => 1e-6,
        "ns" => 1e-9,
        "ps" => 1e-12,
        _ => return None,
    };
    value.parse::<f64>().ok().map(|v| v * scale)
}

/// The METIS table: for each graph and k, the edge cut and imbalance of
/// METIS, ours and Mars' assignment, the ratios to METIS' cut and the times;
/// then a summary of ours against METIS.
fn metis_table(records: &[Record]) -> Option<String> {
    let rows: Vec<&Record> = records.iter().filter(|r| kind_is(r, "metis")).collect();
    let mut table = String::from(
        "Each cell is the edge cut (imbalance: the largest part over the average); the ratio is to METIS' cut.\n\n\
         | shape | tasks | k | METIS | ours | ours/METIS | Mars | Mars/METIS | METIS time | our time |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut ratios = Vec::new();
    let mut worst_imbalance: f64 = 0.0;
    for ((shape, tasks), members) in groups(&rows) {
        let mut ks: Vec<u64> = members
            .iter()
            .filter_map(|r| get_num(r, "k").map(|k| k as u64))
            .collect();
        ks.dedup();
        for k in ks {
            let find = |system: &str| {
                members.iter().find(|r| {
                    get_str(r, "system") == Some(system) && get_num(r, "k") == Some(k as f64)
                })
            };
            let (Some(metis), Some(ours)) = (find("metis"), find("taskgraph")) else {
                continue;
            };
            let mars = find("mars");
            let cut = |r: &Record| get_num(r, "edge_cut").unwrap_or(f64::NAN);
            let cell = |r: &Record| {
                format!(
                    "{} ({:.3})",
                    fmt_count(cut(r)),
                    get_num(r, "imbalance").unwrap_or(f64::NAN)
                )
            };
            let ratio = |r: &Record| match (cut(r), cut(metis)) {
                (a, b) if a == b => 1.0,
                (a, b) => a / b,
            };
            let ours_ratio = ratio(ours);
            if ours_ratio.is_finite() {
                ratios.push(ours_ratio);
            }
            worst_imbalance = worst_imbalance.max(get_num(ours, "imbalance").unwrap_or(0.0));
            let secs = |r: &Record| get_num(r, "seconds").map(fmt_seconds).unwrap_or_default();
            let _ = writeln!(
                table,
                "| {shape} | {tasks} | {k} | {} | {} | {} | {} | {} | {} | {} |",
                cell(metis),
                cell(ours),
                fmt_cut_ratio(ours_ratio),
                mars.map(|r| cell(r)).unwrap_or_default(),
                mars.map(|r| fmt_cut_ratio(ratio(r))).unwrap_or_default(),
                secs(metis),
                secs(ours),
            );
        }
    }
    if ratios.is_empty() {
        return None;
    }
    let within = ratios.iter().filter(|&&r| r <= 1.2).count();
    let geomean =
        (ratios.iter().map(|r| r.max(1e-9).ln()).sum::<f64>() / ratios.len() as f64).exp();
    let _ = write!(
        table,
        "\nOurs against METIS over {} cases: geometric mean {geomean:.2}, {within} within 1.2x, \
         largest imbalance {worst_imbalance:.3}.\n",
        ratios.len()
    );
    Some(table)
}

/// A cut over METIS' cut: `1.08`, or `-` when METIS cut nothing and we did.
fn fmt_cut_ratio(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}")
    } else {
        "-".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<Record> {
        text.lines().filter_map(parse_record).collect()
    }

    #[test]
    fn parses_flat_json_objects() {
        let record = parse_record(
            r#"{"kind": "dask", "op": "order (auto)", "seconds": 1.5e-05, "n": -3, "ok": true, "s": "a\"b\u00e9"}"#,
        )
        .unwrap();
        assert_eq!(get_str(&record, "op"), Some("order (auto)"));
        assert_eq!(get_num(&record, "seconds"), Some(1.5e-5));
        assert_eq!(get_num(&record, "n"), Some(-3.0));
        assert_eq!(record.get("ok"), Some(&Value::Other));
        assert_eq!(get_str(&record, "s"), Some("a\"bé"));
        assert_eq!(parse_record("{}"), Some(Record::new()));
        for bad in [
            "",
            "== progress",
            r#"{"a": [1]}"#,
            r#"{"a": 1"#,
            r#"{"a": 1} x"#,
            r#"{"a": tru}"#,
        ] {
            assert_eq!(parse_record(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_times_and_ratios() {
        let times: Vec<String> = [12.34, 2.3456, 0.2668, 0.04412, 0.0031, 0.000_045_6]
            .into_iter()
            .map(fmt_seconds)
            .collect();
        assert_eq!(
            times,
            ["12.3 s", "2.35 s", "267 ms", "44.1 ms", "3.10 ms", "46 µs"]
        );
        let ratios: Vec<String> = [1234.4, 12.6, 2.44, 0.612, f64::INFINITY]
            .into_iter()
            .map(fmt_ratio)
            .collect();
        assert_eq!(ratios, ["1234x", "13x", "2.4x", "0.61x", "-"]);
        assert_eq!(fmt_coarse(0.016, 0.001), "16 ms");
        assert_eq!(fmt_coarse(1.234, 0.001), "1234 ms");
        assert_eq!(fmt_coarse(0.0163, 0.0001), "16.3 ms");
        assert_eq!(fmt_coarse(2.0, 1.0), "2 s");
        assert_eq!(fmt_coarse(0.0163, 0.0), "16.3 ms");
    }

    #[test]
    fn reads_divan_medians_from_a_table() {
        let section = "Measured today.\n\n| benchmark | median | throughput |\n|---|---:|---:|\n\
                       | `rewrite/graph_par/10000` | 9.242 ms | 1.082 Mitem/s |\n\
                       | `rewrite/terms_vs_rules/1` | 3.052 ms | 3.276 Mitem/s |\n\
                       | `rewrite/terms_vs_rules/1000` | 850 µs | 3.165 Mitem/s |\n";
        let medians = divan_medians(section);
        assert_eq!(medians.len(), 2);
        assert!((medians[&1] - 3.052e-3).abs() < 1e-12);
        assert!((medians[&1000] - 850e-6).abs() < 1e-12);
        assert_eq!(parse_duration("1.26 s"), Some(1.26));
        assert_eq!(parse_duration("fast"), None);
    }

    #[test]
    fn dask_table_pairs_operations() {
        let records = records(
            r#"{"kind": "dask_pair", "dask": "order", "ours": "order (auto)"}
{"kind": "dask_pair", "dask": "get", "ours": "run (1 thread)"}
{"kind": "dask_pair", "dask": "fuse", "ours": "fuse"}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "order", "system": "dask", "seconds": 0.2668, "max_pressure": 1}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "get", "system": "dask", "seconds": 0.5974}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "order (auto)", "system": "taskgraph", "seconds": 0.0083, "max_pressure": 1}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "run (1 thread)", "system": "taskgraph", "seconds": 0.0031, "peak_held": 1}
{"kind": "dask", "shape": "tree", "tasks": 10003, "op": "fuse", "system": "dask", "seconds": 0.0281}
{"kind": "dask", "shape": "tree", "tasks": 10003, "op": "fuse", "system": "taskgraph", "seconds": 0.0005, "tasks_after": 7}"#,
        );
        let table = dask_table(&records).unwrap();
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            rows,
            [
                "| chain | 10000 | order | order (auto) | 267 ms | 8.30 ms | 32x | 1 / 1 |",
                "| chain | 10000 | get | run (1 thread) | 597 ms | 3.10 ms | 193x | - / 1 |",
                "| tree | 10003 | fuse | fuse | 28.1 ms | 500 µs | 56x |  |",
            ]
        );
        assert_eq!(dask_table(&[]), None);
    }

    #[test]
    fn rewrite_table_shows_both_sides() {
        let records = records(
            r#"{"kind": "rewrite_rule", "text": "add(x, 0) -> x"}
{"kind": "rewrite", "shape": "random", "tasks": 10000, "system": "dask", "seconds": 0.6, "changed": 2190}
{"kind": "rewrite", "shape": "random", "tasks": 10000, "system": "taskgraph", "seconds": 0.004, "resolution": 0.001, "changed": 2190}
{"kind": "rewrite", "shape": "chain", "tasks": 10000, "system": "dask", "seconds": 0.2, "changed": 0}
{"kind": "rewrite", "shape": "chain", "tasks": 10000, "system": "taskgraph", "seconds": 0.0, "resolution": 0.001, "changed": 0}
{"kind": "rules", "rules": 1, "terms": 10000, "seconds": 0.6}
{"kind": "rules", "rules": 10, "terms": 10000, "seconds": 0.65}"#,
        );
        let divan = BTreeMap::from([(1, 0.003)]);
        let table = rewrite_table(&records, &divan).unwrap();
        assert!(
            table.starts_with("Every task rewritten bottom-up with 1 rules: `add(x, 0) -> x`.")
        );
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| {
                l.starts_with("| ") && !l.starts_with("| shape |") && !l.starts_with("| rules |")
            })
            .collect();
        assert_eq!(
            rows,
            [
                "| random | 10000 | 600 ms | 4 ms | 150x | 2190 / 2190 |",
                "| chain | 10000 | 200 ms | < 1 ms | > 200x | 0 / 0 |",
                "| 1 | 600 ms | 3.00 ms | 200x |",
                "| 10 | 650 ms | - | - |",
            ]
        );
    }

    #[test]
    fn metis_table_sums_up_the_ratios() {
        let records = records(
            r#"{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "metis", "edge_cut": 13, "imbalance": 1.0, "seconds": 0.004}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "taskgraph", "edge_cut": 11, "imbalance": 1.02, "seconds": 0.002}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "mars", "edge_cut": 31, "imbalance": 1.5, "seconds": 0.0001}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 8, "system": "metis", "edge_cut": 10, "imbalance": 1.0, "seconds": 0.004}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 8, "system": "taskgraph", "edge_cut": 14, "imbalance": 1.03, "seconds": 0.002}"#,
        );
        let table = metis_table(&records).unwrap();
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| tree")).collect();
        assert_eq!(
            rows,
            [
                "| tree | 10003 | 4 | 13 (1.000) | 11 (1.020) | 0.85 | 31 (1.500) | 2.38 | 4.00 ms | 2.00 ms |",
                "| tree | 10003 | 8 | 10 (1.000) | 14 (1.030) | 1.40 |  |  | 4.00 ms | 2.00 ms |",
            ]
        );
        assert!(
            table.ends_with(
                "Ours against METIS over 2 cases: geometric mean 1.09, 1 within 1.2x, largest imbalance 1.030.\n"
            ),
            "{table}"
        );
    }

    #[test]
    fn problems_name_the_missing_package() {
        let records = records(
            r#"{"kind": "missing", "part": "metis", "package": "pymetis"}
{"kind": "error", "part": "rules", "message": "ValueError: boom"}"#,
        );
        assert_eq!(
            problems(&records, Part::Metis),
            [
                "the Python package pymetis is missing from target/venv-bench, so `metis` could not run"
            ]
        );
        assert_eq!(
            problems(&records, Part::Rewrite),
            ["`rules` failed: ValueError: boom"]
        );
        assert!(problems(&records, Part::Dask).is_empty());
    }

    #[test]
    fn names_the_python_side() {
        let records = records(
            r#"{"kind": "env", "python": "3.11.7", "dask": "2026.8.0", "pymetis": "2025.2.2"}"#,
        );
        assert_eq!(
            environment(&records, Part::Metis),
            "pymetis 2025.2.2 on CPython 3.11.7 in target/venv-bench"
        );
        assert_eq!(
            environment(&records, Part::Rewrite),
            "dask 2026.8.0 on CPython 3.11.7 in target/venv-bench"
        );
        assert_eq!(
            environment(&[], Part::Dask),
            "dask ? on CPython ? in target/venv-bench"
        );
    }

    #[test]
    fn crates_choose_their_comparisons() {
        assert_eq!(Part::for_crate(None), Part::ALL);
        assert_eq!(Part::for_crate(Some("graph-rewrite")), [Part::Rewrite]);
        assert_eq!(Part::for_crate(Some("graph-exec")), [Part::Dask]);
        assert_eq!(Part::for_crate(Some("graph-assign")), [Part::Metis]);
        assert!(Part::for_crate(Some("graph-core")).is_empty());
    }
}
