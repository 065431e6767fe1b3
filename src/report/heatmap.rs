//! A heat map as SVG: rows (a program's mappings) against time, each cell
//! shaded by a value on a log scale (bytes referenced in that interval),
//! with a title on every cell that says its figures.

use super::linechart::esc;
use crate::units::Bytes;

/// One row: its label and a value per column (`None`: not present then).
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub values: Vec<Option<u64>>,
    /// What each cell's title adds after its value (e.g. the resident size).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    /// Each column's time span, in seconds.
    pub columns: Vec<(f64, f64)>,
    pub rows: Vec<Row>,
}

const W: f64 = 900.0;
const LEFT: f64 = 300.0;
const RIGHT: f64 = 860.0;
const TOP: f64 = 48.0;
const ROW_H: f64 = 20.0;
const LABEL_CHARS: usize = 42;

/// The shade of `v` between 1 byte-page and `max`: white to dark blue by
/// log2 of the value (0 and absent are drawn empty).
fn shade(v: u64, max: u64) -> String {
    let f = if max <= 4096 {
        1.0
    } else {
        ((v.max(4096) as f64 / 4096.0).log2() / (max as f64 / 4096.0).log2()).clamp(0.0, 1.0)
    };
    let mix = |light: f64, dark: f64| (light + (dark - light) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(232.0, 8.0), mix(240.0, 48.0), mix(250.0, 107.0))
}

/// A label cut in the middle to fit the left margin, keeping its start
/// (whose process) and its end (a path's file name).
fn fit(label: &str) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= LABEL_CHARS {
        return label.to_string();
    }
    let head = 14;
    let tail = LABEL_CHARS - head - 1;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}…{end}")
}

pub fn render(h: &HeatMap) -> String {
    let height = TOP + ROW_H * h.rows.len() as f64 + 70.0;
    let t0 = h.columns.first().map_or(0.0, |c| c.0);
    let t1 = h.columns.last().map_or(1.0, |c| c.1).max(t0 + 1e-9);
    let x = |t: f64| LEFT + (RIGHT - LEFT) * (t - t0) / (t1 - t0);
    let max = h.rows.iter().flat_map(|r| r.values.iter().flatten()).copied().max().unwrap_or(0);
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" font-family="system-ui, sans-serif"><rect width="{W}" height="{height}" fill="#ffffff"/><text x="{}" y="26" text-anchor="middle" font-size="17" fill="#1d2430">{}</text>"##,
        W / 2.0,
        esc(&h.title)
    );
    for (r, row) in h.rows.iter().enumerate() {
        let y = TOP + ROW_H * r as f64;
        svg.push_str(&format!(
            r##"<text class="row-label" x="{}" y="{:.1}" text-anchor="end" font-size="12.5" fill="#333">{}<title>{}</title></text>"##,
            LEFT - 6.0,
            y + ROW_H * 0.7,
            esc(&fit(&row.label)),
            esc(&row.label)
        ));
        for (c, (&(a, b), v)) in h.columns.iter().zip(&row.values).enumerate() {
            let Some(v) = *v else { continue };
            let note = row.notes.get(c).filter(|n| !n.is_empty()).map(|n| format!(", {n}")).unwrap_or_default();
            svg.push_str(&format!(
                r##"<rect class="cell" x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {:.2}–{:.2} s, {} referenced{}</title></rect>"##,
                x(a),
                (x(b) - x(a)).max(1.0),
                ROW_H - 2.0,
                if v == 0 { "#f7f8fa".to_string() } else { shade(v, max) },
                esc(&row.label),
                a,
                b,
                Bytes(v),
                esc(&note)
            ));
        }
    }
    let bottom = TOP + ROW_H * h.rows.len() as f64;
    svg.push_str(&format!(
        r##"<g font-size="12.5" fill="#333"><path d="M{LEFT} {bottom} H{RIGHT}" stroke="#333"/><text x="{LEFT}" y="{:.1}">{t0:.1}</text><text x="{RIGHT}" y="{:.1}" text-anchor="end">{t1:.1}</text><text class="axis-label x" x="{}" y="{:.1}" text-anchor="middle" font-size="13">{}</text></g>"##,
        bottom + 16.0,
        bottom + 16.0,
        (LEFT + RIGHT) / 2.0,
        bottom + 34.0,
        esc(&h.x_label)
    ));
    svg.push_str(&legend(bottom + 46.0, max));
    svg.push_str("</svg>\n");
    svg
}

/// The shade scale: from one 4 KiB page to the largest cell.
fn legend(y: f64, max: u64) -> String {
    let steps = 10;
    let mut out = String::from(r##"<g class="legend" font-size="12.5" fill="#333">"##);
    for i in 0..steps {
        let v = (4096.0 * ((max.max(4096) as f64 / 4096.0).powf(i as f64 / (steps - 1) as f64))) as u64;
        out.push_str(&format!(
            r##"<rect x="{:.1}" y="{y:.1}" width="20" height="10" fill="{}"/>"##,
            LEFT + 20.0 * i as f64,
            shade(v, max)
        ));
    }
    out.push_str(&format!(
        r##"<text x="{:.1}" y="{:.1}">4KiB … {} referenced in an interval (log scale)</text></g>"##,
        LEFT + 20.0 * steps as f64 + 8.0,
        y + 9.0,
        Bytes(max.max(4096))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell per present value, titled with its figures; absent ones are
    /// not drawn; the hottest cell is darkest; labels are escaped and cut
    /// from the front.
    #[test]
    fn cells_say_their_figures_and_shade_by_value() {
        let long = format!("/usr/lib/{}/libc<x>.so", "a".repeat(60));
        assert_eq!(fit(&long).chars().count(), LABEL_CHARS);
        let h = HeatMap {
            title: "Hot set by mapping".into(),
            x_label: "seconds".into(),
            columns: vec![(0.0, 1.0), (1.0, 2.0)],
            rows: vec![
                Row { label: "anonymous".into(), values: vec![Some(256 << 20), Some(4096)], notes: vec![] },
                Row {
                    label: long.clone(),
                    values: vec![None, Some(0)],
                    notes: vec![String::new(), "2MiB resident".into()],
                },
            ],
        };
        let svg = render(&h);
        assert_eq!(svg.matches(r#"class="cell""#).count(), 3);
        assert!(svg.contains("anonymous: 0.00–1.00 s, 256MiB referenced</title>"), "{svg}");
        assert!(svg.contains("1.00–2.00 s, 0B referenced, 2MiB resident</title>"), "{svg}");
        assert!(svg.contains(&format!("fill=\"{}\"", shade(256 << 20, 256 << 20))));
        assert_eq!(shade(256 << 20, 256 << 20), "#08306b");
        assert_eq!(shade(4096, 256 << 20), "#e8f0fa");
        assert!(svg.contains(">/usr/lib/aaaaa…aaaa"), "the label keeps its start: {svg}");
        assert!(svg.contains("aaaa/libc&lt;x&gt;.so<title>"), "and its end: {svg}");
        assert!(!svg.contains("<x>"), "text is escaped");
    }
}
