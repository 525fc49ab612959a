//! `-o page.html`: one self-contained page (script and styles inline, no
//! external URL) with the picture's SVG, pan and zoom, and a hover card per
//! node showing its key, order position, the coloured figure, and its
//! dependencies and dependents.

use std::path::Path;

use crate::Error;
use crate::legend::html_escape;
use crate::picture::{Picture, Target};

/// The page's styles.
const CSS: &str = include_str!("page.css");
/// The page's script: pan, zoom and hover cards, in plain JavaScript.
const JS: &str = include_str!("page.js");

impl Picture {
    /// The picture as one self-contained HTML page (script and styles
    /// inline, no external URL): the SVG Graphviz draws, with pan, zoom and
    /// a hover card per box, as [`draw`](crate::draw()) writes `.html`.
    ///
    /// # Errors
    ///
    /// Those of [`render`](crate::render()): Graphviz missing or failing.
    pub fn to_html(&self) -> Result<String, Error> {
        self.page(None)
    }

    /// [`Picture::to_html`], for the file `path` (named in errors).
    pub(crate) fn page(&self, path: Option<&Path>) -> Result<String, Error> {
        let svg = crate::render::render_for(&self.dot_for(Target::Page), "svg", path)?;
        page(self, &String::from_utf8_lossy(&svg))
    }
}

/// The HTML page of `picture`, around `svg` (Graphviz's rendering of it).
///
/// # Errors
///
/// [`Error::NotSvg`] for an SVG without a complete `<svg` tag.
fn page(picture: &Picture, svg: &str) -> Result<String, Error> {
    let svg = inline_svg(svg)?;
    let cards = script_json(&picture.cards);
    let title = html_escape(&format!("taskgraph viz: {}", picture.title));
    let hint = "drag to pan · wheel or + − to zoom · 0 to fit · hover a box for its card";
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" href=\"data:,\">\n<title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <div id=\"bar\"><h1>{title}</h1>\
         <button id=\"zoom-in\" type=\"button\" title=\"zoom in (+)\">+</button>\
         <button id=\"zoom-out\" type=\"button\" title=\"zoom out (−)\">−</button>\
         <button id=\"fit\" type=\"button\" title=\"fit the picture (0)\">fit</button>\
         <span class=\"hint\">{hint}</span></div>\n\
         <div id=\"view\">\n{svg}</div>\n<div id=\"card\" hidden></div>\n\
         <script type=\"application/json\" id=\"cards\">{cards}</script>\n\
         <script>\n{JS}</script>\n</body>\n</html>\n"
    ))
}

/// Graphviz's SVG made fit to sit inside HTML: no XML prolog, doctype or
/// comments, no namespace declarations (the HTML parser puts `<svg>` in its
/// namespace itself, and the declarations are URLs), and no fixed size (the
/// page's styles size it).
fn inline_svg(svg: &str) -> Result<String, Error> {
    let start = svg.find("<svg").ok_or(Error::NotSvg)?;
    let body = &svg[start..];
    let tag_end = body.find('>').ok_or(Error::NotSvg)?;
    let mut tag = body[..tag_end].to_owned();
    for attr in ["xmlns", "xmlns:xlink", "width", "height"] {
        tag = remove_attribute(&tag, attr);
    }
    let mut out = String::with_capacity(body.len());
    out.push_str(&tag);
    let mut rest = &body[tag_end..];
    // Comments hold node names, which say nothing to a reader of the page.
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        match rest[open..].find("-->") {
            Some(close) => rest = &rest[open + close + 3..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// `tag` without ` name="..."`.
fn remove_attribute(tag: &str, name: &str) -> String {
    let needle = format!(" {name}=\"");
    match tag.find(&needle) {
        Some(at) => {
            let value = at + needle.len();
            match tag[value..].find('"') {
                Some(end) => format!("{}{}", &tag[..at], &tag[value + end + 1..]),
                None => tag.to_owned(),
            }
        }
        None => tag.to_owned(),
    }
}

/// JSON that is safe inside `<script>`: `<`, `>` and `&` as `\u` escapes (they
/// only occur inside strings), so that no key can close the element.
fn script_json(value: &serde_json::Value) -> String {
    // A `Value` always serializes: its map keys are strings.
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
