//! The picture of a graph task by task: a box per task labelled with its key,
//! its order position and the coloured figure, filled on the colouring's
//! scale.

use graph_core::{Dag, TaskGraph};
use serde_json::json;

use crate::colour::{Rgb, Scale, category_colour};
use crate::figures::{Figures, check_len};
use crate::legend::{Legend, thousands};
use crate::picture::{Edge, Node, Picture};
use crate::short_label;
use crate::{Colour, Error};

/// The picture of every task of `graph`, coloured by `figures`.
///
/// Complexity: O(V + E) time and space.
pub(crate) fn picture(graph: &TaskGraph, figures: &Figures) -> Result<Picture, Error> {
    check_len(graph, figures)?;
    let topology = graph.topology()?;
    let colour = figures.colour;
    let max = (0..figures.len())
        .filter_map(|i| figures.value(i))
        .max()
        .unwrap_or(0);
    let scale = colour.ramp().map(|ramp| {
        let top = match colour {
            // Positions run from 0 to n - 1: the last task is the last colour.
            Colour::Order => figures.len().saturating_sub(1) as f64,
            _ => max as f64,
        };
        Scale::up_to(ramp, top)
    });
    let word = colour.word();
    let mut nodes = Vec::with_capacity(figures.len());
    let mut cards = Vec::with_capacity(figures.len());
    for node in topology.node_ids() {
        let i = node.index();
        let key = graph.key(node);
        let card = figures.card(i);
        let value = figures.value(i);
        let fill = match (colour, value, &scale) {
            (Colour::Worker | Colour::Stage, Some(category), _) => category_colour(category as u32),
            (_, Some(value), Some(scale)) => scale.colour(value as f64),
            _ => Rgb::WHITE,
        };
        let mut second = format!("#{}", thousands(u64::from(card.order)));
        if let (Some(word), Some(value)) = (word, value) {
            second.push_str(&format!(" · {word} {}", thousands(value)));
        }
        let mut tooltip = vec![
            key.to_string(),
            format!(
                "order #{} · age {} · freed {} · held {} when run, {} when released",
                card.order, card.age, card.freed, card.held_when_run, card.held_when_released
            ),
        ];
        if let Some(worker) = card.worker {
            tooltip.push(format!("worker {worker}"));
        }
        nodes.push(Node {
            lines: vec![short_label(key), second],
            fill,
            tooltip,
        });
        let index = |nodes: &[graph_core::NodeId]| -> Vec<u32> {
            nodes.iter().map(|n| n.index() as u32).collect()
        };
        cards.push(json!({
            "key": key.to_string(),
            "figure": value,
            "figures": card.to_json(),
            "deps": index(topology.dependencies(node)),
            "dependents": index(topology.dependents(node)),
        }));
    }
    let mut edges = Vec::with_capacity(topology.edge_count());
    for node in topology.node_ids() {
        for &dep in topology.dependencies(node) {
            let dashed = matches!(&figures.workers, Some(w) if colour == Colour::Worker
                && w[dep.index()] != w[node.index()]);
            let (from, to) = (dep.index() as u32, node.index() as u32);
            let wide = matches!(&figures.stages, Some(s) if colour == Colour::Stage
                && s.is_wide(from, to));
            edges.push(Edge {
                from,
                to,
                label: None,
                width: if wide { 3.0 } else { 1.0 },
                dashed,
            });
        }
    }
    let swatches = match (colour, &scale) {
        (Colour::Worker, _) => Legend::categories(figures.n_workers),
        (Colour::Stage, _) => Legend::categories(figures.stages.as_ref().map_or(0, |s| s.count)),
        (_, Some(scale)) => Legend::scale(scale, true),
        _ => Vec::new(),
    };
    let mut notes = vec![format!(
        "#n: position in the order ({}) · {} tasks · at most {}",
        figures.strategy,
        thousands(figures.len() as u64),
        figures.held()
    )];
    if colour == Colour::Worker {
        notes.push("dashed edges cross between workers".to_owned());
    }
    if let (Colour::Stage, Some(stages)) = (colour, &figures.stages) {
        notes.push(format!(
            "{} stage{} · thick edges are wide ({})",
            stages.count,
            if stages.count == 1 { "" } else { "s" },
            thousands(stages.wide.len() as u64)
        ));
    }
    let legend = Legend {
        title: colour.name().to_owned(),
        meaning: figures.meaning().to_owned(),
        swatches,
        notes,
    };
    Ok(Picture {
        title: format!("{} tasks coloured by {}", figures.len(), colour.name()),
        nodes,
        edges,
        legend,
        cards: json!({
            "kind": "tasks",
            "colour": colour.name(),
            "word": word.unwrap_or("order"),
            "nodes": cards,
        }),
    })
}
