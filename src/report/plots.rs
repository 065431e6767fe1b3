//! The plots of a document, each rendered from the document alone by its
//! outcome's renderer, and the overlay of two documents' line charts.

pub use super::plot::{Figure, Plot};

use super::linechart::{render, Line, Reference};
use crate::model::document::Document;

/// The line charts both documents draw, each with A's lines solid and B's
/// dashed on the same axes (bar charts and plots of one side only are left
/// out: the comparison table covers them).
pub fn overlaid(a: &[Plot], b: &[Plot]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for pa in a {
        let Some(pb) = b.iter().find(|p| p.file_name == pa.file_name) else { continue };
        let (Figure::Line(ca), Figure::Line(cb)) = (&pa.figure, &pb.figure) else { continue };
        let mut c = ca.clone();
        c.title = format!("{} — A solid, B dashed", ca.title);
        c.lines = ca
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| Line { name: format!("A · {}", l.name), color: Some(i), ..l.clone() })
            .collect();
        c.lines.extend(cb.lines.iter().enumerate().map(|(i, l)| {
            let same = ca.lines.iter().position(|x| x.name == l.name).unwrap_or(ca.lines.len() + i);
            Line { name: format!("B · {}", l.name), dashed: true, color: Some(same), ..l.clone() }
        }));
        c.references =
            ca.references.iter().map(|r| Reference { name: format!("A · {}", r.name), ..r.clone() }).collect();
        c.references.extend(cb.references.iter().map(|r| Reference { name: format!("B · {}", r.name), ..r.clone() }));
        c.spans.clear();
        if let Ok(svg) = render(&c) {
            out.push((c.title, svg));
        }
    }
    out
}

/// Every plot the document's experiments call for, and a line for each
/// plot that could not be drawn (a figure that cannot be drawn is a
/// missing picture, not a failed measurement: it never changes the exit
/// status).
pub fn all(doc: &Document) -> (Vec<Plot>, Vec<String>) {
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for o in super::outcome::outcomes(doc) {
        match super::outcome::of(o).plots(doc) {
            Ok(p) => out.extend(p),
            Err(e) => failed.push(e.message),
        }
    }
    (out, failed)
}
