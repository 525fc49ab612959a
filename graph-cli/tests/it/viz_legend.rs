//! Every picture of `taskgraph viz` carries a legend: in the SVG, a group
//! whose id and class are `legend`, holding the colouring's name, its scale's
//! numbers (or the workers), for every colouring, task by task or collapsed.

use crate::common::{scratch, taskgraph};
use crate::viz_common::has_dot;
use graph_core::{generate, json};

const COLOURS: [&str; 8] = [
    "order",
    "ages",
    "freed",
    "memoryincreases",
    "memorydecreases",
    "memorypressure",
    "worker",
    "none",
];

/// The text of the SVG group with id `legend`, tags dropped.
fn legend_text(svg: &str) -> String {
    let start = svg
        .find("<g id=\"legend\" class=\"node legend\">")
        .unwrap_or_else(|| panic!("no legend group in {svg}"));
    let end = start + svg[start..].find("\n</g>").unwrap();
    let mut text = String::new();
    let mut in_tag = false;
    for c in svg[start..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_dot_of_every_colouring_has_a_legend() {
    let text = json::to_string(&generate::array_overlap(3, 3)).unwrap();
    for colour in COLOURS {
        for collapse in [false, true] {
            let mut args = vec!["viz", "-", "--color", colour];
            if collapse {
                args.push("--collapse");
            }
            let run = taskgraph(&args, text.as_bytes());
            assert_eq!(run.code, Some(0), "{colour}: {}", run.stderr);
            assert!(
                run.stdout
                    .contains("  legend [id=\"legend\", class=\"legend\""),
                "{colour}: {}",
                run.stdout
            );
            assert!(run.stdout.contains(&format!("<B>{colour}")), "{colour}");
        }
    }
}

#[test]
fn every_svg_has_a_legend_group_with_its_numbers() {
    let dir = scratch("viz-legend");
    let text = json::to_string(&generate::array_overlap(3, 3)).unwrap();
    if !has_dot() {
        let run = taskgraph(
            &["viz", "-", "-o", dir.join("x.svg").to_str().unwrap()],
            text.as_bytes(),
        );
        assert!(run.stderr.contains("install Graphviz"), "{}", run.stderr);
        return;
    }
    for colour in COLOURS {
        for collapse in [false, true] {
            let out = dir.join(format!("{colour}-{collapse}.svg"));
            let mut args = vec![
                "viz",
                "-",
                "--color",
                colour,
                "--strategy",
                "dask",
                "-o",
                out.to_str().unwrap(),
            ];
            if collapse {
                args.push("--collapse");
            }
            let run = taskgraph(&args, text.as_bytes());
            assert_eq!(run.code, Some(0), "{colour}: {}", run.stderr);
            let legend = legend_text(&std::fs::read_to_string(&out).unwrap());
            // The title (the node name), then the colouring in bold.
            assert!(
                legend.starts_with(&format!("legend {colour}")),
                "{colour}: {legend}"
            );
            // The numbers of the scale: 37 tasks in order run from 0 to 36;
            // workers are numbered; the diagnostics start at 0.
            match colour {
                "order" => assert!(legend.contains(" 0 5 9 14 18 23 27 32 36 "), "{legend}"),
                "worker" => assert!(legend.contains(" 0 1 2 3 "), "{legend}"),
                "none" => assert!(legend.contains("no colouring"), "{legend}"),
                _ => assert!(legend.contains(" 0 "), "{legend}"),
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
