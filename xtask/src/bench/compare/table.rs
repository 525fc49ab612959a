//! The tables of `BENCHMARKS.md`'s comparison sections, made from the
//! driver's records, and the figures in their cells.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::record::{Record, get_num, get_str, kind_is};

/// A duration for a table: three or four significant figures, in s, ms or µs.
pub(super) fn fmt_seconds(seconds: f64) -> String {
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
pub(super) fn fmt_coarse(seconds: f64, resolution: f64) -> String {
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
pub(super) fn fmt_ratio(ratio: f64) -> String {
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
pub(super) fn dask_table(records: &[Record]) -> Option<String> {
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
pub(super) fn rewrite_table(records: &[Record], divan: &BTreeMap<u64, f64>) -> Option<String> {
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
pub(super) fn divan_medians(section: &str) -> BTreeMap<u64, f64> {
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
pub(super) fn parse_duration(text: &str) -> Option<f64> {
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
pub(super) fn metis_table(records: &[Record]) -> Option<String> {
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
