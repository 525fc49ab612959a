//! `--collapse`: a large graph drawn as its groups of tasks. Tasks are
//! grouped by key name, as dask's distributed scheduler groups them into task
//! groups: the first element of a tuple key (`('overlap-getitem-<hash>', 3,
//! 4)` is in `overlap-getitem-<hash>`), and a string key without its trailing
//! `-<hash>` and index (dask's `key_split`). Each group is one node with its
//! task count and its mean and range of order positions; an edge between two
//! groups stands for all the task edges between them.

use std::borrow::Cow;
use std::collections::HashMap;

use graph_core::{Dag, Grouped, Key, TaskGraph};
use serde_json::json;

use crate::colour::{Rgb, Scale, category_colour};
use crate::figures::{Figures, Stages, check_len};
use crate::legend::{Legend, number, thousands};
use crate::picture::{Edge, Node, Picture};
use crate::{Colour, Error};

/// At most this many edges between groups carry their count as a label (the
/// heaviest ones); the others show it only by their width.
pub(crate) const MAX_EDGE_LABELS: usize = 40;

/// A graph's tasks grouped by key name.
#[derive(Debug)]
pub(crate) struct Groups {
    /// Each group's full name (with its hash), in order of first task.
    pub(crate) names: Vec<String>,
    /// Each group's label: its name without the hash (dask's `key_split`),
    /// made unique where two groups share it.
    pub(crate) labels: Vec<String>,
    /// The tasks of each group.
    pub(crate) members: Grouped,
    /// The edges between groups: dependency group, dependent group, and the
    /// number of task edges, ordered by dependency group, then first seen.
    pub(crate) edges: Vec<(u32, u32, u64)>,
    /// The number of task edges inside each group.
    pub(crate) internal: Vec<u64>,
    /// What the tasks are grouped by, for the legend (`key name`).
    pub(crate) by: &'static str,
}

impl Groups {
    /// The number of groups.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The tasks of group `group`.
    pub(crate) fn members(&self, group: usize) -> &[u32] {
        self.members.group(group)
    }
}

/// The group name of a key: the first element of a tuple key as it is, a
/// string key without its trailing `-<hash>` and index, `Other` for numbers.
fn group_name(key: &Key) -> Cow<'_, str> {
    match key {
        Key::Tuple(parts) => match parts.first() {
            Some(Key::Str(name)) => Cow::Borrowed(name),
            Some(first @ Key::Tuple(_)) => group_name(first),
            _ => Cow::Borrowed("Other"),
        },
        Key::Str(_) => Cow::Owned(graph_optimize::key_split(key)),
        Key::Int(_) | Key::Float(_) => Cow::Borrowed("Other"),
    }
}

/// Groups the tasks of `graph` by key name, and counts the task edges between
/// and inside groups.
///
/// # Complexity
///
/// O(V + E) time and O(V + G) auxiliary space for G groups: one hash lookup
/// per task (none where a task's name is its predecessor's), and the edges
/// between groups gathered with a dense marker per group, never a hash.
pub(crate) fn groups(graph: &TaskGraph) -> Result<Groups, Error> {
    let topology = graph.topology()?;
    let n = topology.node_count();
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<Cow<'_, str>, u32> = HashMap::new();
    let mut of_task = Vec::with_capacity(n);
    let mut last: Option<(Cow<'_, str>, u32)> = None;
    for node in topology.node_ids() {
        let name = group_name(graph.key(node));
        let group = match &last {
            Some((previous, group)) if *previous == name => *group,
            _ => {
                let next = names.len() as u32;
                let group = *index.entry(name.clone()).or_insert_with(|| {
                    names.push(name.clone().into_owned());
                    next
                });
                last = Some((name, group));
                group
            }
        };
        of_task.push(group);
    }
    let mut groups = group_by(topology, names, &of_task, "key name");
    groups.labels = unique_labels(graph, &groups.names, &groups.members);
    Ok(groups)
}

/// The tasks of `graph` grouped by stage: group `s` is stage `s`.
///
/// Complexity: O(V + E).
pub(crate) fn stage_groups(graph: &TaskGraph, stages: &Stages) -> Result<Groups, Error> {
    // Every task's stage is below the plan's count; the largest stage is
    // counted too, so that no task can fall outside the groups.
    let count = stages
        .stage
        .iter()
        .map(|&s| s.saturating_add(1))
        .fold(stages.count, u32::max);
    let names: Vec<String> = (0..count).map(|s| format!("stage {s}")).collect();
    let mut groups = group_by(graph.topology()?, names, &stages.stage, "stage");
    groups.labels = groups.names.clone();
    Ok(groups)
}

/// The groups `names`, task `t` in group `of_task[t]`, with the edges
/// between and inside them; the labels are the names.
fn group_by(
    topology: &graph_core::Topology,
    names: Vec<String>,
    of_task: &[u32],
    by: &'static str,
) -> Groups {
    let n_groups = names.len();
    let members = Grouped::new(of_task, n_groups);
    // Edges between groups: for each group, a marker per target group says
    // where its running count is, so that no edge needs a hash lookup.
    let mut seen_by = vec![u32::MAX; n_groups];
    let mut slot = vec![0_usize; n_groups];
    let mut edges: Vec<(u32, u32, u64)> = Vec::new();
    let mut internal = vec![0_u64; n_groups];
    for (g, inside) in internal.iter_mut().enumerate() {
        for &task in members.group(g) {
            for &dependent in topology.dependents(graph_core::NodeId::new(task as usize)) {
                let h = of_task[dependent.index()] as usize;
                if h == g {
                    *inside += 1;
                    continue;
                }
                if seen_by[h] != g as u32 {
                    seen_by[h] = g as u32;
                    slot[h] = edges.len();
                    edges.push((g as u32, h as u32, 0));
                }
                edges[slot[h]].2 += 1;
            }
        }
    }
    Groups {
        labels: names.clone(),
        names,
        members,
        edges,
        internal,
        by,
    }
}

/// Each group's `key_split` name; where two groups share one, each gets the
/// start of its hash (`add-3f2a1c`), and a number if that is not enough.
fn unique_labels(graph: &TaskGraph, names: &[String], members: &Grouped) -> Vec<String> {
    let plain: Vec<String> = (0..names.len())
        .map(|g| {
            let first = graph_core::NodeId::new(members.group(g)[0] as usize);
            graph_optimize::key_split(graph.key(first))
        })
        .collect();
    let mut uses: HashMap<&str, u32> = HashMap::new();
    for label in &plain {
        *uses.entry(label).or_default() += 1;
    }
    let mut labels: Vec<String> = plain
        .iter()
        .zip(names)
        .map(|(label, name)| {
            if uses.get(label.as_str()) == Some(&1) {
                return label.clone();
            }
            match name.strip_prefix(label.as_str()) {
                Some(rest) if rest.len() > 1 => {
                    let short: String = rest.chars().take(7).collect();
                    format!("{label}{short}")
                }
                _ => label.clone(),
            }
        })
        .collect();
    let mut taken: HashMap<String, u32> = HashMap::new();
    for label in &mut labels {
        let count = taken.entry(label.clone()).or_default();
        *count += 1;
        if *count > 1 {
            *label = format!("{label} ({count})");
        }
    }
    labels
}

/// One group's figures.
#[derive(Debug, Default)]
struct GroupFigures {
    order_min: u32,
    order_max: u32,
    order_mean: f64,
    /// The mean and largest of the coloured figure.
    figure_mean: Option<f64>,
    figure_max: Option<u64>,
    /// The workers of its tasks, most tasks first: (worker, tasks).
    workers: Vec<(u32, u32)>,
}

/// The figures of each group.
fn group_figures(groups: &Groups, figures: &Figures) -> Vec<GroupFigures> {
    let mut tally = vec![0_u32; figures.n_workers as usize];
    (0..groups.len())
        .map(|g| {
            let members = groups.members(g);
            let mut out = GroupFigures {
                order_min: u32::MAX,
                ..GroupFigures::default()
            };
            let (mut order_sum, mut figure_sum, mut figure_max) = (0_u64, 0_u64, None::<u64>);
            for &task in members {
                let task = task as usize;
                let order = figures.order[task];
                out.order_min = out.order_min.min(order);
                out.order_max = out.order_max.max(order);
                order_sum += u64::from(order);
                if let Some(value) = figures.value(task) {
                    figure_sum = figure_sum.saturating_add(value);
                    figure_max = Some(figure_max.map_or(value, |max| max.max(value)));
                }
                let worker = figures.workers.as_ref().map(|w| w[task] as usize);
                if let Some(count) = worker.and_then(|w| tally.get_mut(w)) {
                    *count += 1;
                }
            }
            let count = members.len().max(1) as f64;
            out.order_mean = order_sum as f64 / count;
            out.figure_mean = figure_max.map(|_| figure_sum as f64 / count);
            out.figure_max = figure_max;
            if figures.workers.is_some() {
                for (worker, count) in tally.iter_mut().enumerate() {
                    if *count > 0 {
                        out.workers.push((worker as u32, *count));
                        *count = 0;
                    }
                }
                out.workers
                    .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            }
            out
        })
        .collect()
}

/// The picture of `graph` collapsed to its groups.
///
/// Complexity: O(V + E + G·K) for G groups and K workers.
pub(crate) fn picture(
    graph: &TaskGraph,
    groups: &Groups,
    figures: &Figures,
) -> Result<Picture, Error> {
    check_len(graph, figures)?;
    let colour = figures.colour;
    let stats = group_figures(groups, figures);
    let scale = colour.ramp().map(|ramp| {
        let top = match colour {
            Colour::Order => figures.len().saturating_sub(1) as f64,
            // The largest mean: the legend is of means, and one task's
            // outlier would wash every group out.
            _ => stats
                .iter()
                .filter_map(|s| s.figure_mean)
                .fold(0.0, f64::max),
        };
        Scale::up_to(ramp, top)
    });
    let word = colour.word();
    let mut incoming: Vec<Vec<(u32, u64)>> = vec![Vec::new(); groups.len()];
    let mut outgoing: Vec<Vec<(u32, u64)>> = vec![Vec::new(); groups.len()];
    for &(from, to, count) in &groups.edges {
        incoming[to as usize].push((from, count));
        outgoing[from as usize].push((to, count));
    }
    let mut nodes = Vec::with_capacity(groups.len());
    let mut cards = Vec::with_capacity(groups.len());
    for (g, s) in stats.iter().enumerate() {
        let count = groups.members(g).len();
        let fill = match (colour, &scale) {
            (Colour::Worker, _) => s
                .workers
                .first()
                .map_or(Rgb::WHITE, |&(w, _)| category_colour(w)),
            // The stage of most of the group's tasks, near enough: the mean.
            (Colour::Stage, _) => s
                .figure_mean
                .map_or(Rgb::WHITE, |m| category_colour(m.round() as u32)),
            (Colour::Order, Some(scale)) => scale.colour(s.order_mean),
            (_, Some(scale)) => scale.colour(s.figure_mean.unwrap_or(0.0)),
            _ => Rgb::WHITE,
        };
        let mut lines = vec![
            groups.labels[g].clone(),
            format!(
                "{} task{}",
                thousands(count as u64),
                if count == 1 { "" } else { "s" }
            ),
            order_line(s),
        ];
        match (colour, word) {
            (Colour::Worker, _) => {
                if let Some(&(worker, tasks)) = s.workers.first() {
                    let share = 100.0 * f64::from(tasks) / count.max(1) as f64;
                    lines.push(format!("worker {worker} ({share:.0}%)"));
                }
            }
            (Colour::Stage, _) if groups.by == "stage" => {}
            (_, Some(word)) => lines.push(format!(
                "{word} mean {}, max {}",
                number(s.figure_mean.unwrap_or(0.0), false),
                thousands(s.figure_max.unwrap_or(0))
            )),
            _ => {}
        }
        nodes.push(Node {
            tooltip: vec![groups.names[g].clone(), lines[1..].join(" · ")],
            lines,
            fill,
        });
        let deps: Vec<serde_json::Value> = incoming[g]
            .iter()
            .map(|&(from, count)| json!([from, count]))
            .collect();
        let dependents: Vec<serde_json::Value> = outgoing[g]
            .iter()
            .map(|&(to, count)| json!([to, count]))
            .collect();
        cards.push(json!({
            "key": groups.names[g],
            "label": groups.labels[g],
            "tasks": count,
            "order_min": s.order_min,
            "order_max": s.order_max,
            "order_mean": s.order_mean,
            "figure_mean": s.figure_mean,
            "figure_max": s.figure_max,
            "workers": s.workers,
            "internal_edges": groups.internal[g],
            "deps": deps,
            "dependents": dependents,
        }));
    }
    // The heaviest edges carry their count as a label.
    let mut by_weight: Vec<usize> = (0..groups.edges.len()).collect();
    by_weight.sort_by(|&a, &b| groups.edges[b].2.cmp(&groups.edges[a].2).then(a.cmp(&b)));
    let mut labelled = vec![false; groups.edges.len()];
    for &e in by_weight.iter().take(MAX_EDGE_LABELS) {
        labelled[e] = true;
    }
    let edges = groups
        .edges
        .iter()
        .zip(labelled)
        .map(|(&(from, to, count), labelled)| Edge {
            from,
            to,
            // Spaces keep the number clear of a thick line.
            label: labelled.then(|| format!("  {}", thousands(count))),
            width: (1.0 + 1.25 * (count as f64).log10()).min(6.0),
            dashed: false,
        })
        .collect();
    let swatches = match (colour, &scale) {
        (Colour::Worker, _) => Legend::categories(figures.n_workers),
        (Colour::Stage, _) => Legend::categories(figures.stages.as_ref().map_or(0, |s| s.count)),
        (_, Some(scale)) => Legend::scale(scale, false),
        _ => Vec::new(),
    };
    let meaning = match colour {
        Colour::None => "no colouring".to_owned(),
        Colour::Worker => "the worker most of a group's tasks are placed on".to_owned(),
        Colour::Stage => "the stage of a group's tasks (their mean, when they differ)".to_owned(),
        _ => format!("mean per group of the {}", figures.meaning()),
    };
    let mut notes = vec![
        format!(
            "{} groups of {} tasks, by {} · #a–b: range of order positions ({}), mean m",
            groups.len(),
            thousands(figures.len() as u64),
            groups.by,
            figures.strategy
        ),
        format!(
            "edge width and label: task edges between groups{}",
            if groups.edges.len() > MAX_EDGE_LABELS {
                format!(" (the {MAX_EDGE_LABELS} heaviest labelled)")
            } else {
                String::new()
            }
        ),
    ];
    notes.push(format!("at most {}", figures.held()));
    Ok(Picture {
        title: format!(
            "{} tasks in {} groups coloured by {}",
            figures.len(),
            groups.len(),
            colour.name()
        ),
        nodes,
        edges,
        legend: Legend {
            title: format!("{} (collapsed)", colour.name()),
            meaning,
            swatches,
            notes,
        },
        cards: json!({
            "kind": "groups",
            "colour": colour.name(),
            "word": word.unwrap_or("order"),
            "nodes": cards,
        }),
    })
}

/// `#0–24,648 · mean 12,324`: a group's order positions.
fn order_line(s: &GroupFigures) -> String {
    if s.order_min == s.order_max {
        format!("#{}", thousands(u64::from(s.order_min)))
    } else {
        format!(
            "#{}–{} · mean {}",
            thousands(u64::from(s.order_min)),
            thousands(u64::from(s.order_max)),
            thousands(s.order_mean.round() as u64)
        )
    }
}
