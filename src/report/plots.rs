//! The plots of a document, each rendered from the document alone.

use super::barchart::BarChart;
use super::linechart::{render, Line, LineChart, Marker, Reference};
use crate::model::document::Document;

/// One line per distinct key of `points`, in key order, each sorted by x,
/// with the band `spread` gives each point.
pub(crate) fn lines_by<P, K: Ord + Clone>(
    points: &[P],
    key: impl Fn(&P) -> K,
    name: impl Fn(&K) -> String,
    xy: impl Fn(&P) -> (f64, f64),
    spread: impl Fn(&P) -> (f64, f64),
) -> Vec<Line> {
    let mut keys: Vec<K> = points.iter().map(&key).collect();
    keys.sort();
    keys.dedup();
    keys.iter()
        .map(|k| {
            let mut pts: Vec<(f64, f64, (f64, f64))> = points
                .iter()
                .filter(|p| key(p) == *k)
                .map(|p| (xy(p), spread(p)))
                .map(|((x, y), b)| (x, y, b))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                name: name(k),
                points: pts.iter().map(|p| (p.0, p.1)).collect(),
                band: Some(pts.iter().map(|p| p.2).collect()),
                ..Line::default()
            }
        })
        .collect()
}

/// What a plot draws, kept beside its SVG so that `compare` can draw two
/// runs on the same axes.
#[derive(Debug, Clone)]
pub enum Figure {
    Line(LineChart),
    Bars(BarChart),
    Heat(super::heatmap::HeatMap),
}

/// A rendered plot and the file name it is saved under.
pub struct Plot {
    pub file_name: String,
    pub title: String,
    pub experiment: String,
    pub svg: String,
    pub figure: Figure,
}

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

/// Where the measured far level (memory) starts, as a marker.
pub(crate) fn far_level_marker(m: &crate::machine::Fingerprint) -> Vec<Marker> {
    let far = m.measured_levels.as_ref().and_then(|l| l.found.far_from);
    far.map(|far| Marker { x: far.0 as f64, label: format!("memory from {far} (measured)") }).into_iter().collect()
}
