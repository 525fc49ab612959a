//! The legend every picture carries: what the colours mean, the scale with
//! its numbers (or the worker colours), and notes on how to read the labels.
//! It is drawn as a Graphviz node with an HTML-like table, whose SVG group
//! has the id and class `legend`.

use std::fmt::Write as _;

use crate::colour::{Rgb, Scale, category_colour};

/// A legend: a title, what it means, swatches and notes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Legend {
    /// The colouring's name, in bold (`memorypressure`).
    pub(crate) title: String,
    /// What the colours mean; `\n` breaks a line.
    pub(crate) meaning: String,
    /// The colours with their numbers, in order.
    pub(crate) swatches: Vec<Swatch>,
    /// Smaller lines under the swatches.
    pub(crate) notes: Vec<String>,
}

/// One colour of a legend and the number or name it stands for.
#[derive(Clone, Debug)]
pub(crate) struct Swatch {
    /// The fill.
    pub(crate) fill: Rgb,
    /// The number or name written on it.
    pub(crate) label: String,
}

/// At most this many workers or stages get a swatch of their own.
const MAX_CATEGORY_SWATCHES: u32 = 24;

impl Legend {
    /// The swatches of `scale`: one per integer when the figures are whole
    /// numbers no larger than 8 (so a legend colour is exactly a node
    /// colour), else nine evenly spaced values from 0 to the top.
    pub(crate) fn scale(scale: &Scale, integral: bool) -> Vec<Swatch> {
        let top = scale.top;
        let values: Vec<f64> = if integral && top <= 8.0 {
            (0..=top as u32).map(f64::from).collect()
        } else {
            (0..=8).map(|i| top * f64::from(i) / 8.0).collect()
        };
        values
            .into_iter()
            .map(|value| {
                let value = if integral { value.round() } else { value };
                Swatch {
                    fill: scale.colour(value),
                    label: number(value, integral || top >= 20.0),
                }
            })
            .collect()
    }

    /// One swatch per category (worker, stage), `0..count` (the first few
    /// when there are many).
    pub(crate) fn categories(count: u32) -> Vec<Swatch> {
        let mut swatches: Vec<Swatch> = (0..count.min(MAX_CATEGORY_SWATCHES))
            .map(|worker| Swatch {
                fill: category_colour(worker),
                label: worker.to_string(),
            })
            .collect();
        if count > MAX_CATEGORY_SWATCHES {
            swatches.push(Swatch {
                fill: Rgb::WHITE,
                label: format!("… {}", count - 1),
            });
        }
        swatches
    }

    /// The legend as a Graphviz node statement named `legend`, with the id
    /// and class `legend` that its SVG group carries.
    pub(crate) fn to_dot(&self) -> String {
        // The swatches are a table of their own, so that a long title does
        // not stretch them unevenly.
        let mut table = String::from(
            "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\">\
             <TR><TD ALIGN=\"LEFT\" BALIGN=\"LEFT\">",
        );
        let _ = write!(table, "<B>{}</B>", html_escape(&self.title));
        // The title on a line of its own: a bold run followed by a plain run
        // on one line drifts apart where a browser's font is not Graphviz's.
        for line in self.meaning.lines() {
            let _ = write!(table, "<BR/>{}", html_escape(line));
        }
        table.push_str("</TD></TR>");
        if !self.swatches.is_empty() {
            table.push_str(
                "<TR><TD ALIGN=\"LEFT\"><TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" \
                 CELLPADDING=\"4\" COLOR=\"#333333\"><TR>",
            );
            for swatch in &self.swatches {
                let _ = write!(
                    table,
                    "<TD BGCOLOR=\"{}\" WIDTH=\"34\"><FONT COLOR=\"{}\">{}</FONT></TD>",
                    swatch.fill,
                    swatch.fill.text(),
                    html_escape(&swatch.label)
                );
            }
            table.push_str("</TR></TABLE></TD></TR>");
        }
        for note in &self.notes {
            let _ = write!(
                table,
                "<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"10\" COLOR=\"#444444\">{}</FONT></TD></TR>",
                html_escape(note)
            );
        }
        table.push_str("</TABLE>");
        format!(
            "  legend [id=\"legend\", class=\"legend\", shape=plaintext, margin=0, \
             style=\"\", fillcolor=\"none\", label=<{table}>];\n"
        )
    }
}

/// A figure as a legend or label writes it: whole with thousands separators
/// (`12,345`) when `whole`, from 1,000 on, or when its one decimal is 0;
/// else with one decimal (`2.5`).
pub(crate) fn number(value: f64, whole: bool) -> String {
    let tenths = format!("{value:.1}");
    match tenths.strip_suffix(".0") {
        Some(_) => thousands(value.round() as u64),
        None if whole || value >= 1_000.0 => thousands(value.round() as u64),
        None => tenths,
    }
}

/// `12345` as `12,345`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    // Digits left before the next separator.
    let mut left = match digits.len() % 3 {
        0 => 3,
        head => head,
    };
    for c in digits.chars() {
        if left == 0 {
            out.push(',');
            left = 3;
        }
        out.push(c);
        left -= 1;
    }
    out
}

/// Escapes text for a Graphviz HTML-like label.
pub(crate) fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
