//! Line charts written as SVG by hand, so that each shows the physics:
//! logarithmic axes wherever the data span more than two decades, ticks in
//! the data's own units (IEC bytes, integers), a band for each point's
//! spread, vertical markers (cache sizes, TLB reach, knees), shaded spans
//! (a plateau, only when one exists), and the legend outside the data, in a
//! column of its own. The plot area and the legend box are recorded as
//! `data-` attributes, so a browser test can check that they never overlap.

use crate::error::{Error, Result};

/// One line, with an optional spread (low, high) per point.
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Same length as `points` when present: the interval drawn as a band.
    pub band: Option<Vec<(f64, f64)>>,
    /// Drawn dashed (the second run of a comparison).
    pub dashed: bool,
    /// Palette index, when not the line's position (a comparison gives a
    /// run's line the colour of the same line of the other run).
    pub color: Option<usize>,
    /// A place on a blue-to-red ramp (0 to 1) instead of the palette, where
    /// the colour encodes a quantity (curves' write share).
    pub shade: Option<f64>,
}

/// The colour of line `i`: its shade on the ramp, else its palette entry.
pub fn line_color(l: &Line, i: usize) -> String {
    match l.shade {
        Some(t) => {
            let t = t.clamp(0.0, 1.0);
            // From the palette's blue (#1f77b4) to its red (#d62728).
            let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
            format!("#{:02x}{:02x}{:02x}", mix(31.0, 214.0), mix(119.0, 39.0), mix(180.0, 40.0))
        }
        None => COLORS[l.color.unwrap_or(i) % COLORS.len()].to_string(),
    }
}

/// How an axis labels its ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticks {
    /// Plain numbers (1-2-5 steps, or powers of ten on a log axis).
    Number,
    /// Whole numbers only.
    Integer,
    /// Bytes in IEC units at powers of two (4 KiB … 1 GiB).
    Bytes,
}

#[derive(Debug, Clone)]
pub struct Axis {
    /// The title, with its unit.
    pub label: String,
    pub ticks: Ticks,
    pub scale: AxisScale,
}

/// How an axis maps its values. A log axis needs every value positive;
/// where one is not, every choice is linear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisScale {
    /// Log where the data span more than two decades, else linear.
    Auto,
    /// Linear even across more than two decades.
    Linear,
    /// Log even across under two decades (latency from L1 to DRAM, whose
    /// near levels a linear axis flattens onto zero on a machine whose
    /// memory answers in 150 ns).
    Log,
}

impl Axis {
    pub fn new(label: impl Into<String>, ticks: Ticks) -> Axis {
        Axis { label: label.into(), ticks, scale: AxisScale::Auto }
    }
}

/// A labelled vertical line (a cache size, a knee).
#[derive(Debug, Clone)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// A horizontal reference line, with an optional band.
#[derive(Debug, Clone)]
pub struct Reference {
    pub name: String,
    pub y: f64,
    pub band: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub lines: Vec<Line>,
    pub references: Vec<Reference>,
    pub markers: Vec<Marker>,
    /// Shaded x ranges: (from, to, label).
    pub spans: Vec<(f64, f64, String)>,
}

const W: f64 = 900.0;
const H: f64 = 500.0;
/// The least left margin: the y axis's title, rotated, at x = 18, then
/// tick labels of up to five characters.
const LEFT_MIN: f64 = 78.0;
/// Where the rotated y title's glyphs end, right of its baseline at x = 18
/// (its descent at 13 px), and the gap kept between it and a tick label.
const TITLE_RIGHT: f64 = 22.0;
const TITLE_GAP: f64 = 6.0;
const TOP: f64 = 46.0;
const BOTTOM: f64 = 56.0;
const LEGEND_W: f64 = 230.0;
const RIGHT: f64 = W - LEGEND_W - 16.0;
pub const COLORS: [&str; 10] =
    ["#1f77b4", "#d95f02", "#2ca02c", "#d62728", "#7b4fa8", "#8c564b", "#c2418f", "#5f6b6d", "#8f8f00", "#0f8f9f"];

/// A mapping from data to pixels along one axis.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    px0: f64,
    px1: f64,
}

impl Scale {
    fn new(values: &[f64], axis: &Axis, px: (f64, f64), zero: bool) -> Scale {
        let (mut lo, mut hi) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, &v| (a.0.min(v), a.1.max(v)));
        let positive = values.iter().all(|v| *v > 0.0 && v.is_finite());
        let log = positive
            && match axis.scale {
                AxisScale::Auto => hi / lo > 100.0,
                AxisScale::Linear => false,
                AxisScale::Log => hi > lo,
            };
        if log && axis.ticks == Ticks::Bytes {
            lo = 2f64.powf(lo.log2().floor());
            hi = 2f64.powf(hi.log2().ceil());
        } else if log {
            // The nearest 1-2-5 values around the data, so the axis starts
            // near it (data from 8 start at 5, not at 1).
            (lo, hi) = (nice(lo, false), nice(hi, true));
        } else {
            if zero {
                lo = lo.min(0.0);
            }
            let span = (hi - lo).max(hi.abs() * 0.1).max(1e-12);
            hi += span * 0.06;
            if lo < 0.0 || !zero {
                lo -= span * 0.04;
            }
            if axis.ticks == Ticks::Integer && !zero {
                lo = lo.floor();
            }
        }
        Scale { lo, hi, log, px0: px.0, px1: px.1 }
    }

    fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo * 1e-3).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.px0 + f * (self.px1 - self.px0)
    }

    fn contains(&self, v: f64) -> bool {
        v >= self.lo.min(self.hi) && v <= self.hi.max(self.lo)
    }

    /// Tick values: at most ~9.
    fn ticks(&self, kind: Ticks) -> Vec<f64> {
        ticks(self.lo, self.hi, self.log, kind)
    }
}

/// The 1-2-5 value next to `v`: at or above it (`up`), else at or below.
fn nice(v: f64, up: bool) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0].map(|m| m * decade);
    if up {
        steps.into_iter().find(|s| *s >= v * (1.0 - 1e-9)).unwrap_or(10.0 * decade)
    } else {
        steps.into_iter().rev().find(|s| *s <= v * (1.0 + 1e-9)).unwrap_or(decade)
    }
}

/// Tick values between `lo` and `hi`: powers of ten (of two for bytes) on
/// a log axis (with 2 and 5 between them where the axis spans few
/// decades), 1-2-5 steps on a linear one; about 4 to 10 of them.
pub fn ticks(lo: f64, hi: f64, log: bool, kind: Ticks) -> Vec<f64> {
    if log && kind != Ticks::Bytes {
        let inside = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let decades: Vec<f64> = (a..=b).map(|e| 10f64.powi(e)).filter(inside).collect();
        if decades.len() >= 4 {
            return decades;
        }
        return (a..=b).flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e))).filter(inside).collect();
    }
    if log {
        let base: f64 = 2.0;
        let (a, b) = (lo.log(base).round() as i32, hi.log(base).round() as i32);
        // Exponents on a common multiple, so IEC units come out whole
        // (1KiB, 1MiB, 1GiB lie on multiples of 10, 2 and 5 as well).
        let every = [1, 2, 5, 10, 20].into_iter().find(|k| (a..=b).filter(|e| e % k == 0).count() <= 10).unwrap_or(20);
        return (a..=b).filter(|e| e % every == 0).map(|e| base.powi(e)).collect();
    }
    let raw = (hi - lo) / 7.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let step = if kind == Ticks::Integer { step.max(1.0).round() } else { step };
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// A tick label in the axis's units.
pub fn tick_label(v: f64, kind: Ticks) -> String {
    match kind {
        Ticks::Bytes => crate::units::Bytes(v.round() as u64).to_string(),
        Ticks::Integer => grouped(v.round()),
        Ticks::Number => {
            if v == 0.0 {
                "0".into()
            } else if v.abs() >= 1e3 && (v - v.round()).abs() < 1e-9 {
                grouped(v)
            } else if v.abs() < 1e-2 {
                format!("{v:.0e}")
            } else if (v - v.round()).abs() < 1e-9 {
                format!("{}", v.round() as i64)
            } else {
                let s = format!("{v:.2}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
    }
}

/// A whole number in digits, thousands grouped (one notation on every
/// axis: 1,000 and 10,000, never 1e4).
fn grouped(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{}", crate::units::group_thousands(v.abs().round() as u64))
}

/// Escapes text for SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Renders the chart.
pub fn render(c: &LineChart) -> Result<String> {
    let xs: Vec<f64> = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
    if xs.is_empty() {
        return Err(Error::usage(format!("plot '{}' has no points", c.title)));
    }
    let mut ys: Vec<f64> = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).collect();
    ys.extend(c.lines.iter().flat_map(|l| l.band.iter().flatten().flat_map(|b| [b.0, b.1])));
    ys.extend(c.references.iter().flat_map(|r| [Some(r.y), r.band.map(|b| b.0), r.band.map(|b| b.1)]).flatten());
    let sy = Scale::new(&ys, &c.y, (H - BOTTOM, TOP), true);
    let left = left_margin(&sy, c.y.ticks);
    let sx = Scale::new(&xs, &c.x, (left, RIGHT), false);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="system-ui, sans-serif" data-plot-area="{left} {TOP} {} {}" data-log-x="{}" data-log-y="{}">"#,
        RIGHT - left,
        H - BOTTOM - TOP,
        sx.log,
        sy.log
    );
    svg.push_str(&format!(r##"<rect width="{W}" height="{H}" fill="#ffffff"/>"##));
    svg.push_str(&format!(
        r##"<text x="{}" y="26" text-anchor="middle" font-size="17" fill="#1d2430">{}</text>"##,
        (left + RIGHT) / 2.0,
        esc(&c.title)
    ));
    svg.push_str(&spans(c, &sx));
    svg.push_str(&axes(c, &sx, &sy, left));
    svg.push_str(&markers(c, &sx));
    svg.push_str(&data(c, &sx, &sy, left));
    svg.push_str(&legend(c));
    svg.push_str("</svg>\n");
    Ok(svg)
}

fn spans(c: &LineChart, sx: &Scale) -> String {
    let mut out = String::new();
    for (a, b, label) in &c.spans {
        let (x0, x1) = (sx.at(*a), sx.at(*b));
        let w = (x1 - x0).max(3.0);
        out.push_str(&format!(
            r##"<rect class="span" x="{:.1}" y="{TOP}" width="{w:.1}" height="{}" fill="#2ca02c" fill-opacity="0.12"><title>{}</title></rect>"##,
            x0 - if x1 - x0 < 3.0 { 1.5 } else { 0.0 },
            H - BOTTOM - TOP,
            esc(label)
        ));
    }
    out
}

/// The left margin that keeps the widest y tick label clear of the
/// rotated y title: at least [`LEFT_MIN`].
fn left_margin(sy: &Scale, kind: Ticks) -> f64 {
    let widest = sy
        .ticks(kind)
        .into_iter()
        .filter(|t| sy.contains(*t))
        .map(|t| tick_width(&tick_label(t, kind)))
        .fold(0.0, f64::max);
    (TITLE_RIGHT + TITLE_GAP + widest + TICK_GAP).max(LEFT_MIN).ceil()
}

/// Between a y tick label's end and the axis.
const TICK_GAP: f64 = 6.0;

/// A tick label's width at the axes' 12.5 px font, taken wide: a digit or
/// letter as 0.65 em (wider than a digit of the common sans fonts), a
/// comma, point or space as 0.35 em.
fn tick_width(label: &str) -> f64 {
    label.chars().map(|ch| if matches!(ch, ',' | '.' | ' ') { 0.35 } else { 0.65 }).sum::<f64>() * 12.5
}

fn axes(c: &LineChart, sx: &Scale, sy: &Scale, left: f64) -> String {
    let mut out = String::from(r##"<g class="axes" font-size="12.5" fill="#333">"##);
    for t in sx.ticks(c.x.ticks).into_iter().filter(|t| sx.contains(*t)) {
        let x = sx.at(t);
        out.push_str(&format!(
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#e3e6eb"/><text class="tick x" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 19.0,
            esc(&tick_label(t, c.x.ticks))
        ));
    }
    for t in sy.ticks(c.y.ticks).into_iter().filter(|t| sy.contains(*t)) {
        let y = sy.at(t);
        out.push_str(&format!(
            r##"<line x1="{left}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}" stroke="#e3e6eb"/><text class="tick y" x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - TICK_GAP,
            y + 4.0,
            esc(&tick_label(t, c.y.ticks))
        ));
    }
    out.push_str(&format!(r##"<path d="M{left} {TOP} V{} H{RIGHT}" fill="none" stroke="#333"/>"##, H - BOTTOM));
    let scale = |log: bool| if log { ", log scale" } else { "" };
    out.push_str(&format!(
        r##"<text class="axis-label x" x="{}" y="{}" text-anchor="middle" font-size="13">{}{}</text>"##,
        (left + RIGHT) / 2.0,
        H - 14.0,
        esc(&c.x.label),
        scale(sx.log)
    ));
    out.push_str(&format!(
        r##"<text class="axis-label y" transform="translate(18 {}) rotate(-90)" text-anchor="middle" font-size="13">{}{}</text>"##,
        (TOP + H - BOTTOM) / 2.0,
        esc(&c.y.label),
        scale(sy.log)
    ));
    out.push_str("</g>");
    out
}

/// `text` in lines of at most `max` characters, broken between words (a
/// word longer than a line stands alone on its own).
pub fn wrap_words(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= max => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// A legend entry's text at (x, y), wrapped into lines of `max`
/// characters that follow one another 15 px apart.
pub fn legend_text(x: f64, y: f64, lines: &[String]) -> String {
    let spans: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!(r#"<tspan x="{x}" dy="{}">{}</tspan>"#, if i == 0 { 0.0 } else { 15.0 }, esc(l)))
        .collect();
    format!(r##"<text x="{x}" y="{y}" font-size="12.5" fill="#1d2430">{}</text>"##, spans.concat())
}

/// Width of a marker label at its 12.5 px font (about 7 px a character).
fn label_width(label: &str) -> f64 {
    7.0 * label.chars().count() as f64
}

/// Vertical markers, their labels in rows along the top of the plot: each
/// label right of its line, or left of it where it would run past the plot,
/// in the first row where it meets no other label.
fn markers(c: &LineChart, sx: &Scale) -> String {
    let mut shown: Vec<(f64, &Marker)> =
        c.markers.iter().filter(|m| sx.contains(m.x)).map(|m| (sx.at(m.x), m)).collect();
    shown.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rows = (((H - BOTTOM - TOP) / 2.0) / 15.0).floor().max(1.0) as usize;
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); rows];
    let mut out = String::new();
    for (x, m) in shown {
        let w = label_width(&m.label);
        let (from, to, anchor) =
            if x + 3.0 + w <= RIGHT { (x + 3.0, x + 3.0 + w, "start") } else { (x - 3.0 - w, x - 3.0, "end") };
        let free = |row: &Vec<(f64, f64)>| row.iter().all(|&(a, b)| to + 4.0 < a || b + 4.0 < from);
        let row = taken.iter().position(free).unwrap_or(rows - 1);
        taken[row].push((from, to));
        let y = TOP + 13.0 + 15.0 * row as f64;
        let tx = if anchor == "start" { x + 3.0 } else { x - 3.0 };
        out.push_str(&format!(
            r##"<g class="marker"><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#5f6b6d" stroke-dasharray="4 3"/><text x="{tx:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="12.5" fill="#3c4650">{}</text></g>"##,
            H - BOTTOM,
            esc(&m.label)
        ));
    }
    out
}

fn data(c: &LineChart, sx: &Scale, sy: &Scale, left: f64) -> String {
    let mut out = String::new();
    for r in &c.references {
        if let Some((lo, hi)) = r.band {
            out.push_str(&format!(
                r##"<rect class="band" x="{left}" y="{:.1}" width="{}" height="{:.1}" fill="#000000" fill-opacity="0.08"/>"##,
                sy.at(hi),
                RIGHT - left,
                (sy.at(lo) - sy.at(hi)).max(0.5)
            ));
        }
        out.push_str(&format!(
            r##"<line class="reference" x1="{left}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}" stroke="#000000" stroke-opacity="0.65" stroke-dasharray="6 4"/>"##,
            y = sy.at(r.y)
        ));
    }
    for (i, l) in c.lines.iter().enumerate() {
        let color = line_color(l, i);
        if let Some(band) = &l.band {
            let upper: Vec<String> =
                l.points.iter().zip(band).map(|(p, b)| format!("{:.1},{:.1}", sx.at(p.0), sy.at(b.1))).collect();
            let lower: Vec<String> =
                l.points.iter().zip(band).rev().map(|(p, b)| format!("{:.1},{:.1}", sx.at(p.0), sy.at(b.0))).collect();
            out.push_str(&format!(
                r#"<polygon class="band" points="{} {}" fill="{color}" fill-opacity="0.15"/>"#,
                upper.join(" "),
                lower.join(" ")
            ));
        }
        let pts: Vec<String> = l.points.iter().map(|p| format!("{:.1},{:.1}", sx.at(p.0), sy.at(p.1))).collect();
        let dash = if l.dashed { r#" stroke-dasharray="7 4""# } else { "" };
        out.push_str(&format!(
            r#"<polyline class="series" points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
            pts.join(" ")
        ));
        for p in &l.points {
            out.push_str(&format!(r#"<circle cx="{:.1}" cy="{:.1}" r="2.8" fill="{color}"/>"#, sx.at(p.0), sy.at(p.1)));
        }
    }
    out
}

/// The legend, in its own column right of the plot area.
fn legend(c: &LineChart) -> String {
    let x = RIGHT + 16.0;
    let entries: Vec<LegendEntry> = c
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.clone(), line_color(l, i), l.dashed))
        .chain(c.references.iter().map(|r| (r.name.clone(), "#000000".to_string(), true)))
        .map(|(name, color, dashed)| {
            let dash = if dashed { r#" stroke-dasharray="6 4""# } else { "" };
            let swatch = move |y: f64| {
                format!(
                    r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/>"##,
                    x + 8.0,
                    x + 30.0
                )
            };
            (name, Box::new(swatch) as Swatch)
        })
        .collect();
    legend_box(x, LEGEND_W - 8.0, 36.0, LEGEND_CHARS, &entries)
}

/// A legend entry's swatch, drawn at the entry's middle `y`.
pub type Swatch = Box<dyn Fn(f64) -> String>;

/// A legend entry: its name and its swatch.
pub type LegendEntry = (String, Swatch);

/// A legend box at `x` (of `width`, from the plot's top): each entry's
/// swatch and its name wrapped to `chars` characters, the text `text_dx`
/// in from the box's edge; a wrapped name pushes the entries below it down.
pub fn legend_box(x: f64, width: f64, text_dx: f64, chars: usize, entries: &[LegendEntry]) -> String {
    let wrapped: Vec<(Vec<String>, &Swatch)> = entries.iter().map(|(n, sw)| (wrap_words(n, chars), sw)).collect();
    let lines: usize = wrapped.iter().map(|e| e.0.len()).sum();
    let h = 14.0 + 18.0 * wrapped.len() as f64 + 15.0 * (lines - wrapped.len()) as f64;
    let mut out = format!(
        r##"<g class="legend" data-box="{x} {TOP} {width} {h}"><rect x="{x}" y="{TOP}" width="{width}" height="{h}" fill="#ffffff" stroke="#c9ced6"/>"##
    );
    let mut y = TOP + 16.0;
    for (name, swatch) in &wrapped {
        out.push_str(&swatch(y));
        out.push_str(&legend_text(x + text_dx, y + 4.0, name));
        y += 18.0 + 15.0 * name.len().saturating_sub(1) as f64;
    }
    out.push_str("</g>");
    out
}

/// Characters of a legend line (what fits beside the swatch at 12.5 px).
const LEGEND_CHARS: usize = 25;

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(points: Vec<(f64, f64)>, x: Ticks) -> LineChart {
        LineChart {
            title: "t <&> t".into(),
            x: Axis::new("working set (bytes)", x),
            y: Axis::new("ns per load", Ticks::Number),
            lines: vec![Line { name: "4k random".into(), points, ..Line::default() }],
            references: vec![],
            markers: vec![Marker { x: 49152.0, label: "L1d 48KiB".into() }],
            spans: vec![],
        }
    }

    #[test]
    fn wide_data_get_log_axes_with_iec_ticks() {
        let svg = render(&chart(vec![(4096.0, 1.1), ((1u64 << 30) as f64, 250.0)], Ticks::Bytes)).unwrap();
        assert!(svg.contains(r#"data-log-x="true""#) && svg.contains(r#"data-log-y="true""#), "{svg}");
        for t in ["4KiB", "1MiB", "1GiB"] {
            assert!(svg.contains(&format!(">{t}</text>")), "tick {t} missing");
        }
        assert!(svg.contains("working set (bytes), log scale"));
        assert!(svg.contains("L1d 48KiB"), "markers are drawn");
        assert!(svg.contains("t &lt;&amp;&gt; t"), "text is escaped");
    }

    #[test]
    fn narrow_data_stay_linear_with_integer_ticks() {
        let svg = render(&chart(vec![(0.0, 30.0), (1024.0, 33.0)], Ticks::Integer)).unwrap();
        assert!(svg.contains(r#"data-log-x="false""#) && svg.contains(r#"data-log-y="false""#));
        assert!(!svg.contains(".0</text>"), "integer ticks only: {svg}");
    }

    #[test]
    fn the_legend_lies_outside_the_plot_area() {
        let svg = render(&chart(vec![(1.0, 1.0), (2.0, 2.0)], Ticks::Number)).unwrap();
        let attr = |name: &str| -> Vec<f64> {
            let at = svg.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            svg[at..].split('"').next().unwrap().split(' ').map(|v| v.parse().unwrap()).collect()
        };
        let (plot, legend) = (attr("data-plot-area"), attr("data-box"));
        assert!(legend[0] >= plot[0] + plot[2], "legend {legend:?} starts right of the plot {plot:?}");
    }

    /// A y axis that reaches 100,000 (a sample the host disturbed, on a
    /// log axis) moves the plot right, so its widest tick label, at 0.6 em
    /// a digit, ends its own gap left of the axis and starts clear of the
    /// rotated title; narrow labels keep the least margin.
    #[test]
    fn wide_y_tick_labels_move_the_plot_clear_of_the_y_title() {
        let plot_left = |svg: &str| -> f64 {
            let at = svg.find("data-plot-area=\"").unwrap() + "data-plot-area=\"".len();
            svg[at..].split(' ').next().unwrap().parse().unwrap()
        };
        let narrow = render(&chart(vec![(1.0, 20.0), (2.0, 80.0)], Ticks::Number)).unwrap();
        assert_eq!(plot_left(&narrow), LEFT_MIN);
        let wide = render(&chart(vec![(1.0, 20.0), (2.0, 99_000.0)], Ticks::Number)).unwrap();
        assert!(wide.contains(">100,000</text>"), "{wide}");
        let left = plot_left(&wide);
        let label_start = left - TICK_GAP - 0.6 * 12.5 * "100,000".len() as f64;
        assert!(label_start >= TITLE_RIGHT + TITLE_GAP, "the label starts at {label_start}, the plot at {left}");
        assert!(wide.contains(&format!(r#"<path d="M{left} {TOP} V"#)), "the axis follows the margin");
    }

    /// An axis asked for log is log across under two decades (latency from
    /// 1.9 to 152 ns), and one not asked stays
    /// linear there.
    #[test]
    fn an_axis_asked_for_log_is_log_across_under_two_decades() {
        let mut c = chart(vec![(4096.0, 1.9), (1e9, 152.0)], Ticks::Bytes);
        assert!(render(&c).unwrap().contains(r#"data-log-y="false""#));
        c.y.scale = AxisScale::Log;
        let svg = render(&c).unwrap();
        assert!(svg.contains(r#"data-log-y="true""#), "{svg}");
        assert!(svg.contains(">100</text>") && svg.contains(">2</text>"), "1-2-5 ticks: {svg}");
    }

    /// A log axis starts and ends at the 1-2-5 values around its data, and
    /// one spanning few decades gets its 2s and 5s as ticks.
    #[test]
    fn log_axes_start_near_the_data() {
        let axis = Axis::new("pages", Ticks::Integer);
        let s = Scale::new(&[8.0, 65536.0], &axis, (0.0, 1.0), false);
        assert!(s.log && s.lo == 5.0 && s.hi == 100000.0, "{} {}", s.lo, s.hi);
        assert_eq!(s.ticks(Ticks::Integer), vec![10.0, 100.0, 1000.0, 10000.0, 100000.0]);
        let ns = Scale::new(&[1.1, 280.0], &Axis::new("ns", Ticks::Number), (0.0, 1.0), false);
        assert_eq!((ns.lo, ns.hi), (1.0, 500.0));
        assert_eq!(ns.ticks(Ticks::Number), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]);
    }

    #[test]
    fn ticks_read_as_their_units() {
        assert_eq!(tick_label(4096.0, Ticks::Bytes), "4KiB");
        assert_eq!(tick_label(1024.0, Ticks::Integer), "1,024");
        assert_eq!(tick_label(2.5, Ticks::Number), "2.5");
        // One notation on an axis: 1,000 and 100,000, never 1e5.
        assert_eq!(tick_label(1000.0, Ticks::Number), "1,000");
        assert_eq!(tick_label(100000.0, Ticks::Number), "100,000");
        assert_eq!(tick_label(0.001, Ticks::Number), "1e-3");
        assert!(render(&chart(vec![], Ticks::Number)).is_err());
    }
}
