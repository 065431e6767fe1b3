//! A plot as renderers make it: what it draws (kept beside its SVG so that
//! `compare` can draw two runs on the same axes), and the helpers the
//! renderers share to build one.

use super::barchart::BarChart;
use super::linechart::{Line, LineChart, Marker};

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

/// Where the measured far level (memory) starts, as a marker.
pub(crate) fn far_level_marker(m: &crate::machine::Fingerprint) -> Vec<Marker> {
    let far = m.measured_levels.as_ref().and_then(|l| l.found.far_from);
    far.map(|far| Marker { x: far.0 as f64, label: format!("memory from {far} (measured)") }).into_iter().collect()
}
